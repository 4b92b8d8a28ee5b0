"""The multiclass model (Crammer-Singer formulation), numpy and scipy only."""

import numpy as np

from .base import Model, common_params
from ..params import Param
from ..utils import class_weight_vector
from .._kernels.dataset import CSRDataset
from .._kernels.multiclass import MulticlassStructure


# Rows per block of the LSE primal: blocks of 2^22 scores, so that its memory stays bounded (never an
# n x K array).
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


class MulticlassModel(Model):
    """The multiclass model's core (MulticlassSSVM without scikit-learn): see MulticlassSSVM."""
    params = common_params() + (
        Param("class_weight", "options", None, "Multiplies C per class: {label: weight}, or 'balanced' (n / (K "
              "count of the class)).", options=("balanced",), none=True, also=("dict",),
              type_text="dict, 'balanced' or None"),
    )

    # LSE-SDCD on multiclass: every class can be a violator, as in the paper's multiclass runs
    # (all classes in V_i); the k-best search over K classes is cheap.
    _exact_violators = True


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

    def fit(self, X, y=None, sample_weight=None):
        """Fit the model to labelled examples (see MulticlassSSVM.fit).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or ShardedData
            The examples, or the ShardedData of ssvmlinear.distributed.load_svmlight_shards
            (labels included; solver 'sdm', 'sdcd' or 'cutting-plane').
        y : array-like of shape (n_samples,)
            One class label per row; None only with ShardedData.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the examples: they multiply C; not all zero.

        Returns
        -------
        MulticlassModel
            The fitted model.
        """
        self._check_parameters()
        from ..distributed import ShardedData
        if isinstance(X, ShardedData):
            return self._fit_sharded(X, sample_weight)
        X, y = self._checks.check_csr(X, self, y)
        self._checks.check_class_labels(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes in y; got {classes.shape[0]} class")
        y_idx = y_idx.astype(np.int32)     # the structure's dtype: it keeps this array, not a copy
        sample_weight = self._checks.check_sample_weight(sample_weight, X.shape[0])
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

    def _shard_problem(self, data):
        classes = data.classes
        if classes.shape[0] < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes in y; got {classes.shape[0]} class")
        K = classes.shape[0]
        class_C = self.C * class_weight_vector(self.class_weight, classes, np.repeat(np.arange(K), data.class_counts)
                                               if self.class_weight == "balanced" else np.arange(K))
        bias = float(self.intercept_scaling) if self.fit_intercept else -1.0
        return (data.map(_shard_structure, classes, data.n_features, bias), data.map(_shard_Cs, classes, class_C),
                classes, bias, (data.n_features + (1 if bias > 0 else 0)) * K)

    def _set_weights(self, w, n_features, classes, bias):
        # w: flat, or a feature-major 2-D view (a loaded model), K columns (1 for a binary MultiLabelSSVM)
        W = w.reshape(n_features + (1 if bias > 0 else 0), -1)
        K = W.shape[1]
        self.classes_ = classes
        self.n_features_in_ = n_features
        self._bias = bias
        self.coef_ = W[:n_features].T     # a view: a transposing copy of K x d weights costs a pass
        self.intercept_ = bias * W[n_features].copy() if bias > 0 else np.zeros(K)

    def _scores(self, X):
        """Scores w_k . x + b_k of every class, shape (n_samples, n_classes) (X checked as in predict)."""
        self._check_fitted()
        X = self._checks.check_csr(X, self, reset=False)
        W = self.coef_
        if W.shape[1] > X.nnz:   # few rows, many features: never copy all of coef_ (scipy would)
            used = np.unique(X.indices)
            X, W = X[:, used], W[:, used]
        return np.asarray(X @ W.T) + self.intercept_

    def decision_function(self, X):
        """Compute the score of every class for every row.

        The score of class k is w_k . x + b_k; predict picks the class of highest score. For two
        classes the result has one column fewer, as every scikit-learn classifier's: s_1 - s_0,
        positive for classes_[1].

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The examples, with the training number of columns.

        Returns
        -------
        ndarray of shape (n_samples, n_classes) or (n_samples,)
            The scores, columns in the order of classes_; shape (n_samples,) for two classes.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import MulticlassSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
        >>> clf = MulticlassSSVM(C=10.0).fit(X, [0, 1, 2])
        >>> scores = clf.decision_function(X)
        >>> scores.shape
        (3, 3)
        >>> scores.argmax(axis=1)
        array([0, 1, 2])
        >>> MulticlassSSVM().fit(X, [0, 1, 1]).decision_function(X).shape
        (3,)
        """
        S = self._scores(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict(self, X):
        """Predict the class of every row: the class of highest score.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or ShardedData
            The examples, with the training number of columns; a ShardedData is predicted shard
            by shard where its shards live.

        Returns
        -------
        ndarray of shape (n_samples,)
            One label of classes_ per row (ties: the first of classes_).

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import MulticlassSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
        >>> clf = MulticlassSSVM(C=10.0).fit(X, ["cat", "dog", "eel"])
        >>> clf.predict([[2.0, 0.5], [-0.5, -2.0]])
        array(['cat', 'eel'], dtype='<U3')
        """
        from ..distributed import ShardedData
        if isinstance(X, ShardedData):       # each shard's labels computed where it lives
            self._check_fitted()
            W, b = (X.client.scatter(a, broadcast=True) for a in (self.coef_, self.intercept_))
            idx = X.client.gather(X.map(_shard_predict, W, b))
            return self.classes_[np.concatenate(idx)]
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]   # ties: lowest class index, as the oracle


# ShardedData: per-shard work on the worker that holds the shard
def _shard_structure(part, classes, n_features, bias):
    from ..distributed import widened
    y_idx = np.searchsorted(classes, part["y"]).astype(np.int32)
    return MulticlassStructure(CSRDataset(widened(part["X"], n_features), bias), y_idx, classes.shape[0])


def _shard_Cs(part, classes, class_C):
    return np.ascontiguousarray(class_C[np.searchsorted(classes, part["y"])], dtype=np.float64)


def _shard_predict(part, W, b):
    from ..distributed import widened
    X = widened(part["X"], W.shape[1])
    return np.argmax(np.asarray(X @ W.T) + b, axis=1)
