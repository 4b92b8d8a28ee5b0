"""The core of every model: parameters, the solver run and the fitted diagnostics, model-file
hooks -- numpy and scipy only (ssvm-train and ssvm-predict run the core models; the scikit-learn
estimators are these models with scikit-learn's validation and mixins)."""
import numpy as np

from .. import checks
from ..params import Param, Params
from ..registry import check_solver_loss, make_solver
from ..solvers.solver import Solver

# Problems whose bound on the dual's weights, |w| <= 2 max_i C_i sum_r (|x_r| + 1) (rows r, the +1
# for unit features such as a chain's transitions), squares past this are refused before training:
# the objective and the solvers' sums would overflow float64; the factor 1e8 below float64's largest
# value is headroom for task losses and sums over passes (tests/test_extreme_values.py).
OBJECTIVE_LIMIT = 1e300

def check_objective_range(structure, Cs, C):
    """ValueError when the features (bias included), or C with them, let the training objective
    overflow float64 (see OBJECTIVE_LIMIT); names the first row whose squared norm overflows."""
    from .._kernels.dataset import CSRDataset
    X = getattr(structure, "X", None)
    if not isinstance(X, CSRDataset):      # sharded data: the weights are checked after the fit
        return
    sq = X.sqnorms
    if not sq.shape[0]:
        return
    bad = np.flatnonzero(~np.isfinite(sq))
    if bad.size:
        r = int(bad[0])
        col, value = X.largest_entry(r)
        if X.bias > 0 and (col < 0 or abs(X.bias) >= abs(value)):
            raise ValueError(f"the bias feature {X.bias:g} (intercept_scaling, -B) is too large: the squared "
                             "norm of the examples overflows float64")
        raise ValueError(f"row {r}, column {col}: value {value:g} is too large: the row's squared norm "
                         "overflows float64 (scale the features)")
    c = float(np.max(Cs)) if Cs is not None and np.size(Cs) else float(C)
    bound = 2.0 * c * (float(np.sum(np.sqrt(sq))) + sq.shape[0])
    if not bound * bound <= OBJECTIVE_LIMIT:
        raise ValueError(f"C = {c:g} with these features lets the training objective overflow float64 "
                         f"(the weights' norm may reach {bound:.3g}); lower C or scale the features")


# The parameters every model shares (each adds its structure's): their checks, scikit-learn's
# constraints, ssvm-train's checks of the flags and the Parameters sections come from these.
COMMON_PARAMS = (
    Param("C", "real", 1.0, "Regularisation: the objective is 1/2 |w|^2 + sum_i C_i loss_i with C_i = C "
          "(times sample_weight_i); LIBLINEAR's scaling.", low=0, closed="neither", flag="c", metavar="cost",
          cli="set the parameter C (default 1); objective 1/2||w||^2 + C sum_i loss_i"),
    Param("solver", "solver", None, "The training method: a name (its default parameters) or a solver object "
          "of ssvmlinear.solvers holding its own; None: 'sdm' for loss='margin', 'sdcd' for 'lse', 'pegasos' "
          "for the other surrogates.", none=True, types=(Solver,)),
    Param("loss", "str", "margin", "The surrogate: 'margin' (margin rescaling), 'lse' (linear summed error) or "
          "a bi-criteria surrogate of ssvmlinear.surrogates ('slack', 'beta:B', ...)."),
    Param("tol", "real", None, "The solver's own stopping rule at this tolerance; None: its default tolerance "
          "and a relative duality gap <= 1% (the papers' rules alone can stop far from the optimum).",
          low=0, closed="neither", none=True, flag="e", metavar="epsilon",
          cli="set tolerance of termination criterion"),
    Param("max_iter", "int", 1000, "The most passes over the data.", low=1, flag="m", metavar="max_iter",
          cli="maximal number of passes over the data (default 1000)"),
    Param("fit_intercept", "bool", True, "Add a bias feature of value intercept_scaling (regularised, as "
          "LIBLINEAR -B)."),
    Param("intercept_scaling", "real", 1.0, "The bias feature's value.", low=0, closed="neither"),
    Param("n_jobs", "int", None, "Threads for the solvers' parallel phases, prediction and cross-validation; "
          "results do not depend on it.", none=True, flag="n", metavar="jobs",
          cli="threads for the cutting plane's oracle phase, SDM's oracle blocks (-b) and primal objective, "
              "Pegasos mini-batches (-b) and cross-validation folds (default 1)"),
    Param("random_state", "seed", None, "The order of the passes and, on a cluster, which examples each "
          "shard holds (None: seed 0).", none=True, flag="r", metavar="seed", cli="random seed (default 1)"),
    Param("verbose", "verbose", 0, "Progress lines on the logger 'ssvmlinear' (>= 2: the primal after every "
          "step too)."),
    Param("warm_start", "bool", False, "Start from the previous fit's dual solution on the same data, kept "
          "feasible for a new C."),
    Param("callback", "callable", None, "Called as callback(model) after every solver step, with "
          "model.current_weights_ set; a return value of False stops the fit.", none=True),
)


def common_params(**defaults):
    """COMMON_PARAMS with other defaults (a structure's own, e.g. fit_intercept=False)."""
    out = []
    for p in COMMON_PARAMS:
        if p.name in defaults:
            p = p.with_default(defaults[p.name])
        out.append(p)
    return tuple(out)


class Model(Params):
    """The shared core of the models: runs the solver given by (solver, loss) on a compiled
    structure and keeps the diagnostics every model exposes. Input checks go through `_checks`
    (ssvmlinear.checks here; the estimators' scikit-learn validation there)."""

    _checks = checks
    params = COMMON_PARAMS

    # the structure asks LSE solvers for every violating label (multiclass: its k-best is cheap)
    _exact_violators = False

    def _solver(self):
        """The solver object: `solver` itself, a name's default object, or (None) the loss's
        default solver."""
        return make_solver(self.solver, self.loss)

    @property
    def _solver_name(self):
        return self._solver().name

    def _check_parameters(self):
        """ValueError for a parameter its description refuses, a solver parameter, or a (solver,
        loss) pair this version does not train."""
        for param in self.params:
            param.check(getattr(self, param.name), type(self).__name__)
        solver = self._solver()
        solver.check_params()
        check_solver_loss(solver, self.loss, type(self).__name__)

    def _tol(self):
        return float(self.tol) if self.tol is not None else self._solver().default_tol

    def _solve(self, structure, Cs, warm_key, primal=None):
        """Runs the solver; primal: callable(w) -> the primal objective over all labels, where the
        estimator can evaluate it (LSE-SDCD checks its gap with it; it is the objective_ reported)."""
        from ..search import structure_problem
        from ..solvers import GAP_TOL, solve
        from ..utils import check_random_seed, check_memory
        # the solvers keep dense vectors of the weight dimension (weights, dual sums; the cutting
        # plane's constraints): refuse before allocating what the machine cannot hold
        check_memory(2 * 8 * structure.n_weights, f"training: {structure.n_weights} weights "
                     f"(n_features_in_ = {self.n_features_in_} features x labels)")
        check_objective_range(structure, Cs, self.C)
        solver = self._solver()
        problem = structure_problem(structure, self.loss, getattr(solver, "search", None),
                                    self._exact_violators or getattr(solver, "exact_violators", False))
        if problem:
            raise ValueError(f"{type(self).__name__}: {problem}")
        prev = getattr(self, "_dual_state", None)
        # a start given for this one fit (CPathCV's refit: the folds' states merged), else the
        # previous fit's with warm_start
        state = self.__dict__.pop("_start_state", None)
        if state is None and self.warm_start and prev is not None and getattr(self, "_warm_key", None) == warm_key:
            state = prev
        # tol=None: the solver's rule at its default tolerance and a relative duality gap <= 1%
        res = solve(solver, structure, Cs, self._tol(), int(self.max_iter), check_random_seed(self.random_state),
                    verbose=self.verbose, callback=self.callback, estimator=self, state=state,
                    keep_state=bool(self.warm_start), gap_tol=GAP_TOL if self.tol is None else None,
                    primal=primal, loss=self.loss, n_jobs=self.n_jobs, exact_violators=self._exact_violators)
        if primal is not None:     # the estimator's exact objective, over all labels (solvers may
            res.primal = primal(res.w)   # report theirs over the labels they saw)
            res.gap = res.primal - res.dual
        self.n_oracle_passes_ = getattr(res, "n_oracle_passes", None)
        self.oracle_seconds_ = getattr(res, "oracle_seconds", None)
        self.train_seconds_ = getattr(res, "train_seconds", None)
        self.n_constraints_ = getattr(res, "n_constraints", None)
        # GDMM: the factors' consistency violation after every pass (None for the other solvers)
        self.consistency_violation_curve_ = getattr(res, "infeasibility", None)
        if not np.all(np.isfinite(res.w)):    # never reached by data check_objective_range accepts
            raise ValueError(f"{solver.title}: the weights became non-finite during training; "
                             "scale the features or lower C")
        self._dual_state = res.state
        self._warm_key = warm_key
        self._interrupted = bool(getattr(res, "interrupted", False))
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

    def _fit_sharded(self, data, sample_weight):
        """The fit on ShardedData (every model's): the shards' structures are built where each
        shard lives by the model's _shard_problem; the solver must run on a cluster. No warm start
        across sharded fits."""
        from ..distributed import ShardedStructure, check_sharded_fit
        from ..registry import structure_of
        if self._shard_problem is None:
            raise ValueError(f"{type(self).__name__} does not train on sharded data")
        check_sharded_fit(self, data, structure_of(self).file_kind, sample_weight)
        structures, Cs, classes, bias, n_weights = self._shard_problem(data)
        self.n_features_in_ = data.n_features
        if n_weights is None:
            n_weights = data.client.submit(_n_weights, structures[0]).result()
        w = self._solve(ShardedStructure(data, structures, Cs, n_weights), None, None)
        self._set_weights(w, data.n_features, classes, bias)
        return self._finish_fit()

    # A model that trains on a cluster defines _shard_problem(data): the training problem on
    # ShardedData -- (structures, Cs), one future per shard of its compiled structure and its C_i,
    # computed on the worker that holds it (data.map) --, the classes, the bias and the weight
    # dimension (None: the first shard's structure's). The others (hierarchies) keep None.
    _shard_problem = None

    def _finish_fit(self):
        """The end of every fit: self, or -- when Ctrl-C stopped the solver -- the KeyboardInterrupt
        again, now that the estimator holds the model of the last completed pass (an interactive
        user keeps it; scripts and meta-estimators stop)."""
        if getattr(self, "_interrupted", False):
            self._interrupted = False
            raise KeyboardInterrupt
        return self

    def _report_lines(self, y_true, y_pred):
        """What ssvm-predict (and ssvm-train -v) print beyond the accuracy lines (default: nothing)."""
        return []

    # Model files (model_io): fitted state beyond the weights and the structure's parameters.
    def _model_header(self):
        """Extra (key, value) header lines of a fitted estimator (default: none)."""
        return []

    def _block_params(self):
        """Fitted values that size the structure's weight blocks (as _model_layout reads them)."""
        return {}

    @classmethod
    def _model_layout(cls, header, n_classes, fail):
        """From a model header ({key: (line, value)}): the number of weight columns, a callable
        that restores the fitted state _model_header wrote (or None), and estimator parameters
        the header holds (they size the structure's blocks)."""
        return n_classes, None, {}

    def _check_fitted(self):
        self._checks.check_fitted(self)


def _n_weights(structure):      # (on a worker)
    return structure.n_weights
