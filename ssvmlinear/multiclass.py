"""Multiclass structural SVM (Crammer-Singer formulation): the scikit-learn estimator."""
from sklearn.base import ClassifierMixin, _fit_context
from sklearn.utils._param_validation import StrOptions

from .base import COMMON_CONSTRAINTS, StructuredSSVM
from .models.multiclass import MulticlassModel


class MulticlassSSVM(ClassifierMixin, StructuredSSVM, MulticlassModel):
    """Linear multiclass structural SVM (Crammer & Singer; LIBLINEAR ``-s 4``'s problem).

    Minimises  1/2 ||W||^2 + sum_i C_i max_y [Delta(y, y_i) + w_y . x_i - w_{y_i} . x_i]
    with the 0/1 loss Delta, C_i = C * sample_weight_i * class_weight[y_i].

    Parameters
    ----------
    C : float > 0, regularisation trade-off (LIBLINEAR's scaling).
    solver, loss : solver None (default) takes the loss's default solver, as in every estimator:
        "sdm" for "margin", "sdcd" for "lse", "pegasos" for the other surrogates. A name ("sdm",
        "sdcd", "cutting-plane", "bcfw", "gdmm", "pegasos") takes that solver with its default
        parameters; a solver object (ssvmlinear.solvers: SDM, SDCD, CuttingPlane, BCFW, GDMM,
        Pegasos) brings its own, e.g. solver=SDM(oracle_batch=8) (GridSearchCV reaches them as
        solver__oracle_batch).
        ("sdm", "margin") the sequential dual method on the margin-rescaling problem above; ("sdcd", "lse") LSE-SDCD on the linear-summed-error problem
        1/2 ||W||^2 + sum_i C_i sum_y max(0, Delta(y, y_i) + f(y) - f(y_i)) (the paper's multiclass
        setting of Balamurugan et al.).
    tol : float > 0 or None. Each solver's own rule: SDM stops after a pass over all examples in
        which every example's KKT violation (max_y H_i(y) - min over labels with positive dual
        weight of H_i) is <= tol, H_i(y) = Delta(y, y_i) + f(y) - f(y_i) (LIBLINEAR's; 0.1).
        LSE-SDCD stops after an oracle pass in which no example's sum of squared dual changes,
        divided by C_i, exceeds tol (the paper's; 1e-4). The cutting plane stops when the most
        violated one-slack constraint is violated by at most tol * sum_i C_i (svm_struct's; 0.1).
        Pegasos stops after an epoch that changed the primal objective by at most tol relative
        (1e-3). None (default): the rule at its default tol *and* a relative duality gap
        (objective_ - dual_objective_) / objective_ <= 1% (solvers.GAP_TOL), at any n and C: these
        rules alone can stop far from the optimum (LSE-SDCD at C <= tol after one pass; the cutting
        plane when tol * sum_i C_i exceeds the objective). Pegasos has no dual: its rule only.
        A fit that stops with a relative gap above 5% warns (ConvergenceWarning).
    max_iter : int, maximal number of passes over the data.
    fit_intercept : bool, default True. Adds a bias feature of value ``intercept_scaling``
        (regularised, as in LIBLINEAR ``-B`` and scikit-learn's LinearSVC). The default follows
        scikit-learn; ssvm-train follows LIBLINEAR (no bias unless ``-B 1``), so the two defaults
        train different models.
    intercept_scaling : float > 0.
    class_weight : None, "balanced" or {label: weight}; multiplies C per class.
    n_jobs : int or None. Threads for prediction, cross-validation, the cutting plane's oracle
        phases, SDM's (with SDM(oracle_batch > 1) its oracle blocks, with SDM(shards > 1) its shards, and its
        primal objective) and Pegasos' mini-batches; results do not depend on it.
    random_state : int, numpy Generator/RandomState or None (seed 0): the order of the passes.
    verbose : int. Progress lines from Python; with verbose >= 2 the primal objective of every outer
        iteration is computed too (objective_curve_; NaN entries otherwise).
    warm_start : bool. Reuse the dual solution of the previous fit on the same data, kept
        feasible for a new C (cheap C paths): SDM puts a larger C's extra mass on the true labels,
        so w starts at the previous optimum, and scales the dual for a smaller C; the other dual
        solvers scale it.
    callback : callable(estimator) -> bool or None, called after every outer iteration; returning
        False stops training. ``estimator.coef_`` is not updated during training.

    Memory: the CSR data (never densified), a few vectors of the weight dimension
    (n_features x n_classes doubles), and the dual working sets: per member 28 bytes (label, dual
    variable, loss and one solver value), by doubling capacity; multiclass working sets keep no
    Gram matrix (its entries cost O(1)). SDM's sets stay small (margin rescaling); LSE-SDCD's hold
    every class that violates, up to all K classes at small C (28 n K bytes). The LSE objective
    is evaluated in blocks of rows (32 MB of scores), never as an n x K array.

    Attributes
    ----------
    coef_ (n_classes, n_features), intercept_ (n_classes,) -- one row per class also for two classes
    (the Crammer-Singer model has a weight vector per class) --, classes_, n_features_in_, n_iter_ (passes),
    objective_ (primal), dual_objective_, gap_, objective_curve_, dual_curve_,
    timestamps_, n_oracle_calls_, working_set_size_ (sum_i |V_i|), converged_, oracle_seconds_
    (SDM and the cutting plane: wall-clock seconds of the oracle phase).

    A scikit-learn classifier (ClassifierMixin: score is the mean accuracy). Its one tag of its own,
    input_tags.sparse (from StructuredSSVM): X may be scipy sparse and stays sparse. X must have
    the training number of columns in predict and decision_function (ssvmlinear.utils.match_columns
    applies LIBLINEAR's convention for test files that are wider or narrower).
    """

    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "class_weight": [None, StrOptions({"balanced"}), dict],
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """X: (n_samples, n_features), sparse or dense; y: one label per row (a column vector warns);
        sample_weight: one weight per row (multiplies C; not all zero). X may also be the
        ShardedData of ssvmlinear.distributed.load_svmlight_shards (labels included): training
        then runs where its shards live."""
        return MulticlassModel.fit(self, X, y, sample_weight)
