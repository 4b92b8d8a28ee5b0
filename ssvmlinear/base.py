"""Estimator plumbing: scikit-learn parameters, their validation and the shared solver driver."""
import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

# CLI solver numbers -> (solver, loss); the Python API names them directly.
SOLVER_TYPES = {
    0: ("sdm", "margin"),
    1: ("sdcd", "lse"),
    2: ("cutting-plane", "margin"),
    3: ("cutting-plane", "lse"),
    4: ("pegasos", "margin"),
    5: ("gdmm", "margin"),
    6: ("nhsvm", "margin"),
}
SOLVERS = ("sdm", "sdcd", "cutting-plane", "pegasos", "gdmm", "nhsvm")
# (solver, loss) pairs that this version trains; the others are rejected with a clear message.
# Pegasos ("pegasos") trains every bi-criteria surrogate (ssvmlinear.surrogates) with any search,
# the cutting plane every surrogate convex in the margin (all but "probloss").
AVAILABLE = {("sdm", "margin"), ("sdcd", "lse"), ("cutting-plane", "margin"), ("cutting-plane", "lse")}
# Default stopping tolerance per solver (see each driver in solvers.py for its rule).
DEFAULT_TOL = {"sdm": 0.1, "sdcd": 1e-4, "cutting-plane": 0.1, "pegasos": 1e-3}
SEARCHES = ("none", "exact", "binary", "bisecting", "angular", "hull", "hull-integral")



# Parameters of the Pegasos solver, shared by every estimator.
PEGASOS_CONSTRAINTS = {
    "search": [StrOptions(set(SEARCHES))],
    "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
    "average": ["boolean"],
    "projection": ["boolean"],
}
# Parameters of the SDM solver, shared by every estimator.
SDM_CONSTRAINTS = {
    "oracle_batch": [Interval(numbers.Integral, 1, None, closed="left")],
}
# Parameters every estimator shares (each adds its own "solver" and structure options), in
# scikit-learn's constraint language (checked by sklearn's _fit_context before every fit).
COMMON_CONSTRAINTS = {
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
    **PEGASOS_CONSTRAINTS,
    **SDM_CONSTRAINTS,
}
PEGASOS_DOC = """search : {"hull", "hull-integral", "angular", "exact", "binary", "bisecting", "none"}, default
        "hull". Loss-augmented inference of non-additive surrogates (solver="pegasos"); see
        ssvmlinear.search. Margin rescaling always uses its exact lambda = 1 oracle.
    batch_size : int, default 1. Pegasos mini-batch (its searches run in n_jobs threads).
    average : bool, default True. Pegasos returns the average of its iterates.
    projection : bool, default False. Pegasos projects onto the ball of radius sqrt(n C)."""


class StructuredSSVM(BaseEstimator):
    """Shared fitting plumbing: runs the solver named by (solver, loss) on a compiled structure and
    stores the diagnostics every estimator exposes. get_params/set_params/repr/clone and the
    parameter validation are scikit-learn's (BaseEstimator, _parameter_constraints)."""

    _parameter_constraints = {}

    @property
    def _solver_name(self):
        return self.solver

    def _check_solver_loss(self):
        """The (solver, loss, search) combinations this version trains (each parameter alone is
        checked by scikit-learn's parameter validation)."""
        name = type(self).__name__
        pair = (self._solver_name, self.loss)
        if self._solver_name == "cutting-plane" and self.loss not in ("margin", "lse"):
            from .surrogates import parse_surrogate
            try:
                sur = parse_surrogate(self.loss)
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
            if sur.name == "probloss":
                raise ValueError(f"{name}: the cutting plane needs a surrogate convex in the margin; "
                                 "'probloss' is not (use 'probloss-convex' or solver='pegasos')")
            if sur.name == "microf1" and self.search not in ("exact", "hull"):
                raise ValueError(f"{name}: loss='microf1' is searched with search='hull' or 'exact'")
        elif self._solver_name == "pegasos":
            from .surrogates import parse_surrogate
            if self.loss == "lse":
                raise ValueError(f"{name}: loss='lse' is trained by solver='sdcd' or 'cutting-plane', not pegasos.")
            try:
                sur = parse_surrogate(self.loss)
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
            if sur.name == "microf1" and self.search not in ("exact", "hull"):
                raise ValueError(f"{name}: loss='microf1' is searched with search='hull' or 'exact' "
                                 f"(its g = -(|y| + |y_i|) is negative); got search={self.search!r}")
        elif pair not in AVAILABLE:
            avail = ", ".join(f"solver={s!r} with loss={lo!r}" for s, lo in sorted(AVAILABLE))
            avail += ", solver='pegasos' with any surrogate (ssvmlinear.surrogates)"
            raise ValueError(f"{name}: solver={self._solver_name!r} with loss={self.loss!r} is not available in this "
                             f"version of ssvmlinear; available: {avail}.")

    def _tol(self):
        return float(self.tol) if self.tol is not None else DEFAULT_TOL[self._solver_name]

    def _solve(self, structure, Cs, warm_key, primal=None):
        """Runs the solver; primal: callable(w) -> the LSE primal objective over all labels, where
        the estimator can evaluate it (LSE-SDCD checks its gap with it)."""
        from .solvers import fit_sdm, fit_sdcd, fit_cutting_plane, fit_pegasos, GAP_TOL
        from .utils import check_random_seed, check_memory
        # the solvers keep dense vectors of the weight dimension (weights, dual sums; the cutting
        # plane's constraints): refuse before allocating what the machine cannot hold
        check_memory(2 * 8 * structure.n_weights, f"training: {structure.n_weights} weights "
                     f"(n_features_in_ = {self.n_features_in_} features x labels)")
        prev = getattr(self, "_dual_state", None)
        state = None
        if self.warm_start and prev is not None and getattr(self, "_warm_key", None) == warm_key:
            state = prev
        args = (structure, Cs, self._tol(), int(self.max_iter), check_random_seed(self.random_state))
        kw = dict(verbose=self.verbose, callback=self.callback, estimator=self, state=state,
                  keep_state=bool(self.warm_start))
        # tol=None: the solver's rule at its default tolerance and a relative duality gap <= 1%
        gap_tol = GAP_TOL if self.tol is None else None
        exact = bool(getattr(self, "exact_violators", False))
        if self._solver_name == "sdm":
            res = fit_sdm(*args, n_jobs=self.n_jobs, oracle_batch=int(self.oracle_batch), gap_tol=gap_tol, **kw)
        elif self._solver_name == "sdcd":
            res = fit_sdcd(*args, exact_violators=exact, gap_tol=gap_tol, primal=primal, **kw)
        elif self._solver_name == "pegasos":
            res = fit_pegasos(*args, loss=self.loss, search=self.search, batch_size=int(self.batch_size),
                              average=bool(self.average), projection=bool(self.projection),
                              n_jobs=self.n_jobs, **kw)
        else:
            res = fit_cutting_plane(*args, lse=self.loss == "lse", n_jobs=self.n_jobs, exact_violators=exact,
                                    loss=self.loss if self.loss != "lse" else "margin",
                                    search=getattr(self, "search", "hull"), gap_tol=gap_tol, **kw)
        self.n_oracle_passes_ = getattr(res, "n_oracle_passes", None)
        self.oracle_seconds_ = getattr(res, "oracle_seconds", None)
        self.train_seconds_ = getattr(res, "train_seconds", None)
        self.n_constraints_ = getattr(res, "n_constraints", None)
        self._dual_state = res.state
        self._warm_key = warm_key
        self.n_iter_ = res.n_iter
        self.objective_ = res.primal
        self.dual_objective_ = res.dual
        self.gap_ = res.gap
        self.objective_curve_ = res.objective_curve
        self.dual_curve_ = res.dual_curve
        self.timestamps_ = res.timestamps
        self.n_oracle_calls_ = res.n_oracle_calls
        self.working_set_size_ = res.working_set_size
        self.converged_ = res.converged
        return res.w

    def _check_fitted(self):
        check_is_fitted(self)  # NotFittedError (a ValueError) in scikit-learn's words

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # X may be scipy sparse (CSR is the kernels' format; other formats are converted, never densified).
        tags.input_tags.sparse = True
        return tags
