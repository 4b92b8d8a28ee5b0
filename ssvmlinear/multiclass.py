"""Multiclass structural SVM (Crammer-Singer formulation) estimator."""

import numpy as np
from sklearn.base import ClassifierMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import _check_sample_weight

from .base import StructuredSSVM, COMMON_CONSTRAINTS
from .utils import class_weight_vector
from .validation import check_csr, check_class_labels
from ._kernels.dataset import CSRDataset
from ._kernels.multiclass import MulticlassStructure


# Rows per block of the LSE primal: blocks of 2^22 scores (32 MB), never an n x K array.
SCORE_BLOCK = 1 << 22


def lse_primal(X, y_idx, Cs, w, bias):
    """1/2 |w|^2 + sum_i C_i sum_{k != y_i} max(0, 1 + s_ik - s_iy_i), s = x W (+ bias row): the
    multiclass LSE primal at the flat weights w (n_features (+1) rows of K), in blocks of rows."""
    n, d = X.shape
    W = w.reshape(d + (1 if bias > 0 else 0), -1)
    Wx, K = np.ascontiguousarray(W[:d]), W.shape[1]
    b = bias * W[d] if bias > 0 else np.zeros(K)
    rows = max(1, SCORE_BLOCK // K)
    total = 0.0
    for s in range(0, n, rows):
        e = min(n, s + rows)
        S = np.asarray(X[s:e] @ Wx)
        S += b
        own = S[np.arange(e - s), y_idx[s:e]].copy()
        S += 1.0 - own[:, None]
        np.maximum(S, 0.0, out=S)
        total += float(Cs[s:e] @ S.sum(axis=1)) - float(Cs[s:e].sum())   # the own class adds 1 each
    return 0.5 * float(np.dot(w, w)) + total


class MulticlassSSVM(ClassifierMixin, StructuredSSVM):
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

    # LSE-SDCD on multiclass: every class can be a violator, as in the paper's multiclass runs
    # (all classes in V_i); the k-best search over K classes is cheap.
    _exact_violators = True

    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "class_weight": [None, StrOptions({"balanced"}), dict],
    }

    def __init__(self, C=1.0, solver=None, loss="margin", tol=None, max_iter=1000, fit_intercept=True,
                 intercept_scaling=1.0, class_weight=None, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, callback=None):
        self.C = C
        self.solver = solver
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.callback = callback

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """X: (n_samples, n_features), sparse or dense; y: one label per row (a column vector warns);
        sample_weight: one weight per row (multiplies C; not all zero). X may also be the
        ShardedData of ssvmlinear.distributed.load_svmlight_shards (labels included): training
        then runs where its shards live (solver sdm, sdcd or cutting-plane)."""
        self._check_solver_loss()
        from .distributed import ShardedData
        if isinstance(X, ShardedData):
            return self._fit_sharded(X, sample_weight)
        X, y = check_csr(X, self, y)
        check_class_labels(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(f"MulticlassSSVM needs at least 2 classes in y; got {classes.shape[0]} class")
        y_idx = y_idx.astype(np.int32)     # the structure's dtype: it keeps this array, not a copy
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        Cs = self.C * sample_weight
        Cs *= class_weight_vector(self.class_weight, classes, y_idx)[y_idx]
        del sample_weight                  # per-example arrays alive during the solve: y_idx, Cs
        bias = float(self.intercept_scaling) if self.fit_intercept else -1.0
        structure = MulticlassStructure(CSRDataset(X, bias), y_idx, classes.shape[0])
        # the LSE primal sums over all K classes (the solvers' own primal covers their working sets)
        primal = (lambda w: lse_primal(X, y_idx, Cs, w, bias)) if self.loss == "lse" else None
        w = self._solve(structure, Cs, ("multiclass", self._solver_name, self.loss, X.shape, bias, tuple(classes.tolist())),
                        primal=primal)
        self._set_weights(w, X.shape[1], classes, bias)
        return self._finish_fit()

    def _fit_sharded(self, data, sample_weight):
        from .distributed import ShardedStructure, check_sharded_fit
        check_sharded_fit(self, data, "multiclass", sample_weight)
        classes = data.classes
        if classes.shape[0] < 2:
            raise ValueError(f"MulticlassSSVM needs at least 2 classes in y; got {classes.shape[0]} class")
        K = classes.shape[0]
        class_C = self.C * class_weight_vector(self.class_weight, classes, np.repeat(np.arange(K), data.class_counts)
                                               if self.class_weight == "balanced" else np.arange(K))
        bias = float(self.intercept_scaling) if self.fit_intercept else -1.0
        self.n_features_in_ = data.n_features
        structure = ShardedStructure(data, data.map(_shard_structure, classes, data.n_features, bias),
                                     data.map(_shard_Cs, classes, class_C),
                                     (data.n_features + (1 if bias > 0 else 0)) * K)
        # no warm start across sharded fits (warm_key None)
        w = self._solve(structure, None, None)
        self._set_weights(w, data.n_features, classes, bias)
        return self._finish_fit()

    def _set_weights(self, w, n_features, classes, bias):
        # w: flat, or a feature-major 2-D view (a loaded model), K columns (1 for a binary MultiLabelSSVM)
        W = w.reshape(n_features + (1 if bias > 0 else 0), -1)
        K = W.shape[1]
        self.classes_ = classes
        self.n_features_in_ = n_features
        self._bias = bias
        self.coef_ = np.ascontiguousarray(W[:n_features].T)
        self.intercept_ = bias * W[n_features].copy() if bias > 0 else np.zeros(K)

    def _scores(self, X):
        """Scores w_k . x + b_k of every class, shape (n_samples, n_classes) (X checked as in predict)."""
        self._check_fitted()
        X = check_csr(X, self, reset=False)
        W = self.coef_
        if W.shape[1] > X.nnz:   # few rows, many features: never copy all of coef_ (scipy would)
            used = np.unique(X.indices)
            X, W = X[:, used], W[:, used]
        return np.asarray(X @ W.T) + self.intercept_

    def decision_function(self, X):
        """Scores w_k . x + b_k, shape (n_samples, n_classes); for two classes, as every
        scikit-learn classifier, shape (n_samples,): s_1 - s_0, positive for classes_[1]."""
        S = self._scores(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict(self, X):
        from .distributed import ShardedData
        if isinstance(X, ShardedData):       # each shard's labels computed where it lives
            self._check_fitted()
            W, b = (X.client.scatter(a, broadcast=True) for a in (self.coef_, self.intercept_))
            idx = X.client.gather(X.map(_shard_predict, W, b))
            return self.classes_[np.concatenate(idx)]
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]   # ties: lowest class index, as the oracle


# ShardedData: per-shard work on the worker that holds the shard
def _shard_structure(part, classes, n_features, bias):
    from .distributed import widened
    y_idx = np.searchsorted(classes, part["y"]).astype(np.int32)
    return MulticlassStructure(CSRDataset(widened(part["X"], n_features), bias), y_idx, classes.shape[0])


def _shard_Cs(part, classes, class_C):
    return np.ascontiguousarray(class_C[np.searchsorted(classes, part["y"])], dtype=np.float64)


def _shard_predict(part, W, b):
    from .distributed import widened
    X = widened(part["X"], W.shape[1])
    return np.argmax(np.asarray(X @ W.T) + b, axis=1)
