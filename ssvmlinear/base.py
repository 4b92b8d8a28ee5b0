"""The scikit-learn side of every estimator: parameter constraints (checked by scikit-learn
before every fit), its validation of the inputs, tags. The estimators are the core models
(ssvmlinear.models) with these."""
import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions

from . import validation
from .registry import SOLVERS
from .solvers.solver import Solver

# Parameters every estimator shares (each adds its structure's options), in scikit-learn's
# constraint language (checked by sklearn's _fit_context before every fit); a solver object checks
# its own parameters (Solver.check_params).
COMMON_CONSTRAINTS = {
    "solver": [None, StrOptions(set(SOLVERS)), Solver],
    "C": [Interval(numbers.Real, 0, None, closed="neither")],
    "loss": [str],  # a surrogate name; the (solver, loss) pair is checked by _check_solver_loss
    "tol": [None, Interval(numbers.Real, 0, None, closed="neither")],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [Interval(numbers.Real, 0, None, closed="neither")],
    "n_jobs": [None, numbers.Integral],
    "random_state": ["random_state", np.random.Generator],
    "verbose": ["verbose"],
    "warm_start": ["boolean"],
    "callback": [None, callable],
}


class StructuredSSVM(BaseEstimator):
    """scikit-learn's BaseEstimator (get_params/set_params/repr/clone, parameter validation from
    _parameter_constraints) over a core model, whose inputs it checks in scikit-learn's terms."""

    _parameter_constraints = {}
    _checks = validation

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # X may be scipy sparse (CSR is the kernels' format; other formats are converted, never densified).
        tags.input_tags.sparse = True
        return tags
