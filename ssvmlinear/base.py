"""The scikit-learn side of every estimator: parameter constraints (checked by scikit-learn
before every fit), its validation of the inputs, tags. The estimators are the core models
(ssvmlinear.models) with these."""
from sklearn.base import BaseEstimator

from . import validation
from .params import fill_docstring, signature_order

# The fitted attributes every estimator's fit sets besides its structure's own (the weights, the
# classes): "{fit_attributes}" in an estimator's Attributes section. Model._solve sets the solver
# diagnostics; scikit-learn's validate_data sets n_features_in_ and feature_names_in_.
FIT_ATTRIBUTES = """\
n_features_in_ : int
    Number of features (columns of X) seen during fit.
feature_names_in_ : ndarray of shape (n_features_in_,)
    Names of the features seen during fit. Defined only when X has feature names that are all
    strings (a pandas DataFrame).
n_iter_ : int
    Passes over the data the solver made (what max_iter bounds).
converged_ : bool
    Whether the solver met its stopping rule (with tol=None, also a relative duality gap
    <= 1%) before max_iter.
objective_ : float
    The primal objective of the fitted weights.
dual_objective_ : float
    The best dual objective the fit reached, a lower bound of the optimum (NaN for Pegasos,
    which has no dual). At large C, inside Catalyst, it can be an earlier iterate's or a warm
    start's.
gap_ : float
    The duality gap, objective_ - dual_objective_.
objective_curve_ : ndarray of shape (n_steps,)
    The primal objective after every solver step, NaN where it was not measured.
dual_curve_ : ndarray of shape (n_steps,)
    The dual objective after every solver step.
timestamps_ : ndarray of shape (n_steps,)
    Seconds from the start of the solve to the end of every step.
n_oracle_calls_ : int
    Calls of the loss-augmented inference oracle.
working_set_size_ : int
    Labels held in the dual working sets (or label caches) at the end of the fit, summed over
    the examples; 0 for Pegasos.
n_oracle_passes_ : int or None
    The cutting plane: passes that called the oracle; None for the other solvers.
n_constraints_ : int or None
    The cutting plane: constraints in its final working set; None for the other solvers.
oracle_seconds_ : float or None
    SDM and the cutting plane: seconds spent in the loss-augmented oracle calls (every pass
    that calls it, the primal's measurements included); None where the solver does not
    measure it (the other solvers, SDM on a cluster).
train_seconds_ : float or None
    Pegasos: seconds spent in its epochs; None for the other solvers.
consistency_violation_curve_ : ndarray of shape (n_iter_,) or None
    GDMM: the factors' consistency violation after every pass; None for the other solvers.
current_weights_ : ndarray
    Set only while a callback is given: a copy of the flat weight vector at the last step."""


def constraints_of(params):
    """scikit-learn's _parameter_constraints from the parameters' descriptions (params.Param)."""
    return {p.name: p.sklearn_constraints() for p in params}


class StructuredSSVM(BaseEstimator):
    """scikit-learn's BaseEstimator (get_params/set_params/repr/clone, parameter validation from
    _parameter_constraints) over a core model, whose inputs it checks in scikit-learn's terms.

    A subclass docstring's "{parameters}" becomes the numpydoc Parameters section of its `params`
    in the order of its constructor's signature, and "{fit_attributes}" the attributes every fit
    sets (FIT_ATTRIBUTES)."""

    _parameter_constraints = {}
    _checks = validation

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.__doc__:      # the Parameters section from the descriptions
            cls.__doc__ = fill_docstring(cls.__doc__, cls.params, signature_order(cls), FIT_ATTRIBUTES)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # X may be scipy sparse (CSR is the kernels' format; other formats are converted, never densified).
        tags.input_tags.sparse = True
        return tags
