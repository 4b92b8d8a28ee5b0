"""Multi-label structural SVM (independent labels, Hamming loss) estimator."""

import numpy as np
import scipy.sparse as sp

from .base import StructuredSSVM, SOLVERS, COMMON_CONSTRAINTS
from .multiclass import MulticlassSSVM
from .metrics import example_accuracy
from .utils import check_csr, check_sample_weight
from ._kernels.dataset import CSRDataset
from ._kernels.multilabel import MultiLabelStructure


class MultiLabelSSVM(StructuredSSVM):
    """Linear multi-label structural SVM with independent labels.

    A label is a subset y of K labels (a 0/1 vector); phi(x, y) = sum_k y_k x (x) e_k, so the score
    of y is sum_{k in y} (w_k . x + b_k) and a label k is predicted iff its score is > 0. The task
    loss is the Hamming loss Delta(y, y_i) = #{k : y_k != y_ik} (divided by K with
    normalize_loss). Problems (per-example weight C_i = C * sample_weight_i):
      loss="margin" (solver "sdm"):  1/2||W||^2 + sum_i C_i max_y [Delta(y, y_i) + f(y) - f(y_i)]
      loss="lse"    (solver "sdcd"): 1/2||W||^2 + sum_i C_i sum_y max(0, Delta(y, y_i) + f(y) - f(y_i))
    Because the loss and the score decompose over labels, the margin problem's loss-augmented
    inference flips each label independently (O(K) after the scores); the coupling between labels
    is only through the shared slack of an example.

    Parameters as ChainSSVM (C, solver, loss, tol, max_iter, fit_intercept, intercept_scaling,
    normalize_loss, exact_violators, n_jobs, random_state, verbose, warm_start, callback, search,
    batch_size, average, projection, oracle_batch) with the same meanings and stopping rules; solver=None picks
    "sdcd" for loss="lse", "sdm" for loss="margin" and Pegasos for the other surrogates
    (ssvmlinear.surrogates, e.g. "slack", "beta:0.5"), and "cutting-plane" trains the margin or
    LSE problem with the one-slack method. fit_intercept defaults to
    True (a regularised bias feature of value intercept_scaling, as LIBLINEAR -B): with
    independent labels the bias carries each label's base rate.

    fit(X, Y, sample_weight=None): Y is a 0/1 indicator matrix (scipy sparse, or a 2-D numpy
    array) of shape (n_samples, K) -- then classes_ = arange(K) -- or a list of label collections
    (one iterable of hashable labels per example, as scikit-learn's MultiLabelBinarizer takes) --
    then classes_ is the sorted set of labels seen. predict returns an indicator matrix: CSR when
    fit got a sparse matrix or label lists, a dense int32 array when fit got a dense array.

    Attributes: coef_ (K, n_features), intercept_ (K,), classes_, n_features_in_, and the solver
    diagnostics of MulticlassSSVM (n_iter_, objective_, dual_objective_, gap_, objective_curve_,
    dual_curve_, timestamps_, n_oracle_calls_, working_set_size_, converged_). The LSE primal is a
    sum over all 2^K labels and is not computed (objective_ is NaN for loss="lse").
    """

    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "solver": [None, frozenset(SOLVERS)],
        "normalize_loss": ["boolean"],
        "exact_violators": ["boolean"],
    }

    def __init__(self, C=1.0, solver=None, loss="margin", tol=None, max_iter=1000, fit_intercept=True,
                 intercept_scaling=1.0, normalize_loss=False, exact_violators=False, n_jobs=None,
                 random_state=None, verbose=0, warm_start=False, callback=None, search="hull", batch_size=1,
                 average=True, projection=False, oracle_batch=1):
        self.C = C
        self.solver = solver
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.normalize_loss = normalize_loss
        self.exact_violators = exact_violators
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.callback = callback
        self.search = search
        self.batch_size = batch_size
        self.average = average
        self.projection = projection
        self.oracle_batch = oracle_batch

    @property
    def _solver_name(self):
        if self.solver is not None:
            return self.solver
        return {"lse": "sdcd", "margin": "sdm"}.get(self.loss, "pegasos")

    def fit(self, X, Y, sample_weight=None):
        """Y: indicator matrix (n_samples, K) or a list of label collections; sample_weight: one
        weight per example (multiplies C)."""
        self._validate_params()
        X = check_csr(X)
        Yind, classes, sparse_output = _encode_fit(Y, X.shape[0])
        Cs = self.C * check_sample_weight(sample_weight, X.shape[0])
        bias = float(self.intercept_scaling) if self.fit_intercept else -1.0
        structure = MultiLabelStructure(CSRDataset(X, bias), Yind, bool(self.normalize_loss))
        key = ("multilabel", self._solver_name, self.loss, bool(self.exact_violators), X.shape, bias,
               tuple(classes.tolist()), bool(self.normalize_loss))
        w = self._solve(structure, Cs, key)
        self._set_weights(w, X.shape[1], classes, bias)
        self._sparse_output = sparse_output
        return self

    def _set_weights(self, w, n_features, classes, bias):
        # the same feature-major n_cols x K layout as the multiclass model
        MulticlassSSVM._set_weights(self, w, n_features, classes, bias)
        self._sparse_output = True

    def decision_function(self, X):
        """Scores w_k . x + b_k of every label, shape (n_samples, n_labels); label k is predicted
        where its score is > 0."""
        return MulticlassSSVM.decision_function(self, X)

    def predict(self, X):
        """Predicted indicator matrix (n_samples, n_labels), columns in the order of classes_:
        CSR int32 when fit got a sparse matrix or label lists, else a dense int32 array."""
        P = (self.decision_function(X) > 0).astype(np.int32)
        return sp.csr_matrix(P) if getattr(self, "_sparse_output", True) else P

    def predict_labels(self, X):
        """Predicted label sets as a list of tuples of classes_ (MultiLabelBinarizer's
        inverse_transform)."""
        P = sp.csr_matrix(self.predict(X))
        return [tuple(self.classes_[P.indices[P.indptr[r]:P.indptr[r + 1]]].tolist()) for r in range(P.shape[0])]

    def score(self, X, Y, sample_weight=None):
        """Example-based accuracy ("Acc"): mean over examples of |y ∩ ŷ| / |y ∪ ŷ| (1 when both
        are empty). Y as in fit; labels unknown to the model count as missed."""
        self._check_fitted()
        Ytrue, extra = _encode_like(Y, self.classes_, X.shape[0])
        P = sp.csr_matrix(self.predict(X))
        if extra:
            P = sp.csr_matrix((P.data, P.indices, P.indptr), shape=(P.shape[0], P.shape[1] + extra))
        return example_accuracy(Ytrue, P, sample_weight=sample_weight)


def _is_indicator(Y):
    return sp.issparse(Y) or (isinstance(Y, np.ndarray) and Y.ndim == 2 and Y.dtype != object)


def _check_indicator(Y, n):
    """A CSR int32 0/1 copy of an indicator matrix with n rows."""
    Y = sp.csr_matrix(Y)
    if Y.ndim != 2 or Y.shape[0] != n:
        raise ValueError(f"Y must have one row per row of X ({n}); got shape {Y.shape}")
    Y = Y.copy()
    Y.sum_duplicates()
    Y.eliminate_zeros()
    if Y.nnz and not np.all(Y.data == 1):
        raise ValueError("an indicator matrix Y must hold only 0 and 1")
    return sp.csr_matrix((np.ones(Y.nnz, dtype=np.int32), Y.indices, Y.indptr), shape=Y.shape)


def _label_lists(Y, n):
    if isinstance(Y, (str, bytes)) or not hasattr(Y, "__len__"):
        raise ValueError("Y must be an indicator matrix or a list of label collections")
    if len(Y) != n:
        raise ValueError(f"Y has {len(Y)} label sets but X has {n} rows")
    out = []
    for r, labels in enumerate(Y):
        if isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__"):
            raise ValueError(f"Y[{r}] = {labels!r} is not a collection of labels (use [label] for a "
                             "single label, or pass an indicator matrix)")
        out.append(set(labels))
    return out


def _binarize(sets, index, K):
    indptr = np.zeros(len(sets) + 1, dtype=np.int64)
    cols = []
    for r, s in enumerate(sets):
        c = sorted(index[v] for v in s)
        cols.extend(c)
        indptr[r + 1] = indptr[r] + len(c)
    return sp.csr_matrix((np.ones(len(cols), dtype=np.int32), np.asarray(cols, dtype=np.int64), indptr),
                         shape=(len(sets), K))


def _encode_fit(Y, n):
    """(indicator CSR, classes_, sparse_output) from the Y given to fit."""
    if _is_indicator(Y):
        Yc = _check_indicator(Y, n)
        if Yc.shape[1] < 1:
            raise ValueError("Y has no label columns")
        return Yc, np.arange(Yc.shape[1]), sp.issparse(Y)
    sets = _label_lists(Y, n)
    labels = set().union(*sets) if sets else set()
    if not labels:
        raise ValueError("MultiLabelSSVM needs at least one label in Y")
    try:
        classes = np.array(sorted(labels))
    except TypeError:
        raise ValueError("labels in Y must be mutually comparable (e.g. all ints or all strings)") from None
    index = {c: k for k, c in enumerate(classes.tolist())}
    return _binarize(sets, index, len(classes)), classes, True


def _encode_like(Y, classes, n):
    """Y (as fit takes it) as an indicator over classes_ plus one column per unknown label;
    returns (CSR, number of extra columns)."""
    K = len(classes)
    if _is_indicator(Y):
        Yc = _check_indicator(Y, n)
        if Yc.shape[1] != K:
            raise ValueError(f"Y has {Yc.shape[1]} label columns but the model has {K}")
        return Yc, 0
    sets = _label_lists(Y, n)
    index = {c: k for k, c in enumerate(classes.tolist())}
    unknown = sorted({v for s in sets for v in s if v not in index}, key=repr)
    for v in unknown:
        index[v] = len(index)
    return _binarize(sets, index, len(index)), len(unknown)
