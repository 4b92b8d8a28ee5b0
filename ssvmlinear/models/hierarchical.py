"""The hierarchical classification model (HSVM, NHSVM, Shared SVM on a tree or DAG of labels; the
equation numbers in comments are those of choi-thesis ch. 6), numpy and scipy only."""
import numpy as np

from .base import Model, common_params
from ..params import Param
from ..hierarchy import Hierarchy, as_hierarchy, hierarchy_structure, multilabel_hierarchy_structure, node_alpha
from ..io import parse_int64_pairs, parse_finite_floats
from .._kernels.dataset import CSRDataset

MODELS = ("nhsvm", "hsvm", "flat", "shared")
TASK_LOSSES = ("hamming", "normalized", "normalized-margin", "zero-one")


def _empty_rows(n):
    import scipy.sparse as sp
    return sp.csr_matrix((n, 1))
# Shared SVM keeps the margins unnormalised ((6.17)): its loss must not depend on alpha
DEFAULT_TASK_LOSS = {"hsvm": "hamming", "nhsvm": "normalized", "flat": "normalized", "shared": "zero-one"}


class HierarchicalModel(Model):
    """The hierarchical model's core (HierarchicalSSVM without scikit-learn): see HierarchicalSSVM."""
    params = (
        Param("hierarchy", "any", None, "The label hierarchy (required): a Hierarchy, the path of a file of "
              "'parent child' lines or a (parents, children) pair of node id arrays.",
              type_text="Hierarchy, str, path-like or (parents, children)", flag="H", metavar="file",
              cli="a label hierarchy, one \"parent child\" pair of integer node ids per line (# comments); "
                  "training labels are its leaves (selects -t hierarchy)"),
        Param("model", "options", "nhsvm", "The model: 'nhsvm' (normalised, node weights sqrt(alpha)), 'hsvm', "
              "'flat' or 'shared' (alpha learned; trees).", options=MODELS, flag="M", metavar="model",
              cli="with -H: nhsvm (normalised hierarchical SVM, node weights sqrt(alpha), the default), hsvm (the "
                  "hierarchical structured SVM), shared (Shared SVM: alpha learned; trees) or flat"),
        Param("alpha", "options", "rho2", "The node weights of nhsvm: 'rho2', 'directional' or an array.",
              options=("rho2", "directional"), also=("array-like",), type_text="'rho2', 'directional' or array-like"),
        Param("task_loss", "options", None, "The task loss Delta; None: the model's default (hamming for hsvm, "
              "normalized for nhsvm and flat, zero-one for shared).", options=TASK_LOSSES, none=True),
        Param("T", "real", 1.5, "On a DAG, the path sums of alpha may lie in [1, T].", low=1),
    ) + common_params() + (
        Param("max_alternations", "int", 20, "Shared SVM: alternations of the weights' fit and alpha at most.",
              low=1),
        Param("shared_tol", "real", 1e-4, "Shared SVM: stop when the objective decreases by at most this, "
              "relative.", low=0),
    )


    def __init__(self, hierarchy=None, model="nhsvm", alpha="rho2", task_loss=None, T=1.5, C=1.0, solver=None,
                 loss="margin", tol=None, max_iter=1000, fit_intercept=True, intercept_scaling=1.0, n_jobs=None,
                 random_state=None, verbose=0, warm_start=False, callback=None, max_alternations=20, shared_tol=1e-4):
        self.hierarchy = hierarchy
        self.max_alternations = max_alternations
        self.shared_tol = shared_tol
        self.model = model
        self.alpha = alpha
        self.task_loss = task_loss
        self.T = T
        self.C = C
        self.solver = solver
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.callback = callback

    def _coefficients(self, h):
        alpha = node_alpha(h, "leaves" if self.model == "flat" else self.alpha, self.T)
        coef = np.ones(h.n_nodes) if self.model == "hsvm" else np.sqrt(alpha)
        return alpha, coef

    @property
    def _task_loss(self):
        return self.task_loss if self.task_loss is not None else DEFAULT_TASK_LOSS[self.model]

    def _structure(self, X, leaves):
        """leaves: leaf numbers (single-label) or an (n, n_leaves) leaf indicator (multi-label)."""
        if self._multilabel:
            return multilabel_hierarchy_structure(CSRDataset(X, self._bias), leaves, self.hierarchy_, self._coef_n)
        return hierarchy_structure(CSRDataset(X, self._bias), leaves, self.hierarchy_, self._coef_n,
                                   self._task_loss, getattr(self, "_loss_coef", None))

    # ssvm-train passes label-set files' Y with a column per label value (the leaf ids), not
    # compacted; ssvm-predict reports label-set measures when the fit was multi-label
    _label_columns_are_values = True

    @property
    def _exact_violators(self):
        # LSE on single-label hierarchies: every leaf can be a violator, as for multiclass's classes
        # (the k-best scan over the leaves is cheap), so LSE-SDCD and the LSE cutting plane both
        # solve the full LSE problem and agree
        return getattr(self, "_multilabel", None) is False     # (set by fit; a sharded fit: the oracle's)

    @property
    def _predicts_label_sets(self):
        return bool(getattr(self, "_multilabel", False))

    def _leaf_sets(self, h, Y, what="Y"):
        """An (n, n_leaves) CSR leaf indicator of label sets: a list of leaf-id collections, or a
        sparse / 2-D indicator whose column j is the label (leaf id) j."""
        import scipy.sparse as sp
        if sp.issparse(Y) or (isinstance(Y, np.ndarray) and Y.ndim == 2):
            Y = sp.csr_matrix(Y)
            rows = np.repeat(np.arange(Y.shape[0]), np.diff(Y.indptr))
            ids = Y.indices[Y.data != 0]
            rows = rows[Y.data != 0]
        else:
            rows = np.concatenate([[i] * len(s) for i, s in enumerate(Y)]).astype(np.int64) if len(Y) else \
                np.zeros(0, np.int64)
            ids = np.array([v for s in Y for v in s], dtype=np.int64)
        n = Y.shape[0] if hasattr(Y, "shape") else len(Y)
        cols = h.leaf_index(ids, what)
        return sp.csr_matrix((np.ones(len(cols), dtype=np.int32), (rows, cols)), shape=(n, h.n_leaves))

    def fit(self, X, y, sample_weight=None):
        """Fit the model to examples labelled with leaves (see HierarchicalSSVM.fit).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The examples.
        y : array-like of shape (n_samples,), list or {array-like, sparse matrix} of shape (n_samples, n_ids)
            The leaf id of every row, or label sets.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the examples: they multiply C.

        Returns
        -------
        HierarchicalModel
            The fitted model.
        """
        if self.hierarchy is None:
            raise ValueError("HierarchicalSSVM needs a hierarchy (a Hierarchy, a file path or (parents, children))")
        self._check_parameters()
        from ..distributed import ShardedData
        if isinstance(X, ShardedData):
            return self._fit_sharded(X, sample_weight)
        X = self._checks.check_csr(X, self)
        h = as_hierarchy(self.hierarchy)
        if h.n_leaves < 2:
            raise ValueError(f"the hierarchy has {h.n_leaves} leaf; at least 2 are needed")
        import scipy.sparse as sp
        self._multilabel = bool(sp.issparse(y) or (isinstance(y, np.ndarray) and y.ndim == 2)
                                or (not isinstance(y, np.ndarray) and len(y) and not np.isscalar(y[0])))
        if self._multilabel:
            if self.task_loss is not None:
                raise ValueError("multi-label hierarchies train with the decomposed leaf loss of 6.7.1; leave "
                                 "task_loss=None")
            leaves = self._leaf_sets(h, y, "y")
        else:
            leaves = h.leaf_index(np.asarray(y).astype(np.int64) if np.asarray(y).dtype.kind == "f" else y, "y")
        sample_weight = self._checks.check_sample_weight(sample_weight, X.shape[0])
        Cs = self.C * sample_weight
        self.hierarchy_ = h
        self.alpha_, self._coef_n = self._coefficients(h)
        self._bias = float(self.intercept_scaling) if self.fit_intercept else -1.0
        self.n_features_in_ = X.shape[1]
        if self.model == "shared":
            w = self._fit_shared(X, leaves, Cs)
        else:
            w = self._solve(self._structure(X, leaves), Cs, self._warm_key_of(X))
        self._set_weights(w, X.shape[1], h.ids[h.leaves], self._bias)
        self.nodes_ = h.ids
        return self._finish_fit()

    def _warm_key_of(self, X):
        return ("hierarchy", self._solver_name, self.loss, self.model, self._task_loss, X.shape, self._bias,
                self.hierarchy_.n_nodes, tuple(self._coef_n.tolist()))

    def _fit_shared(self, X, leaves, Cs):
        """Shared SVM: alternate fits of V at fixed alpha and Algorithm 5 (see the class doc)."""
        from ..hierarchy import alpha_shared
        h = self.hierarchy_
        if not h.is_tree:
            raise ValueError("model='shared' needs a tree hierarchy (Algorithm 5); this one is a DAG")
        if self._task_loss == "normalized-margin":
            raise ValueError("model='shared' keeps the margins unnormalised: task_loss 'normalized-margin' "
                             "rescales them with alpha; use 'zero-one' (the default), 'hamming' or 'normalized'")
        # a normalised loss stays that of the initial alpha while alpha is learned
        self._loss_coef = np.sqrt(self.alpha_) if self._task_loss == "normalized" else None
        curve = []
        for k in range(int(self.max_alternations)):
            self._coef_n = np.sqrt(self.alpha_)
            w = self._solve(self._structure(X, leaves), Cs, self._warm_key_of(X))
            curve.append(self.objective_)         # 1/2 ||V||^2 + C sum loss at this alpha
            # the objective never increases (alpha is optimal for U, then V is refitted): stop
            # when it no longer decreases by shared_tol relative; the last (V, alpha) is returned
            if k and curve[-2] - curve[-1] <= self.shared_tol * abs(curve[-1]):
                break
            if k + 1 == int(self.max_alternations) or self._interrupted:
                break
            W = w.reshape(-1, h.n_nodes)
            U2 = np.einsum("ij,ij->j", W, W) * self.alpha_     # ||U_n||^2, U_n = c_n V_n (no temporary of W's size)
            W = None
            w = None                              # one weight vector alive during the next fit
            self.alpha_, _ = alpha_shared(h, U2)
        self._coef_n = np.sqrt(self.alpha_)
        self.alternation_objectives_ = np.array(curve)
        return w

    def _set_weights(self, w, n_features, classes, bias):
        # w: flat feature-major (n_features (+1 bias row)) x n_nodes; coef_ is a transposed view
        W = w.reshape(n_features + (1 if bias > 0 else 0), -1)
        self.classes_ = np.asarray(classes)
        self.n_features_in_ = n_features
        self._bias = bias
        self._w = W
        self.coef_ = W[:n_features].T
        self.intercept_ = bias * W[n_features].copy() if bias > 0 else np.zeros(W.shape[1])

    def predict(self, X):
        """Predict the leaf (or, after a fit on label sets, the set of leaves) of every row.

        Single-label: the leaf of highest score (ties: the lowest leaf id). Label sets: the set of
        leaves of highest score, by a dynamic program on a tree; on a DAG by the LP relaxation,
        then the integer program for rows whose relaxation is fractional.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The examples, with the training number of columns.

        Returns
        -------
        ndarray of shape (n_samples,) or sparse matrix of shape (n_samples, n_leaves)
            The leaf id of every row; after a fit on label sets, the CSR 0/1 indicator of the
            predicted leaves, columns in the order of classes_.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import HierarchicalSSVM, Hierarchy
        >>> h = Hierarchy(parents=[0, 0, 1, 1], children=[1, 2, 3, 4])
        >>> X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        >>> clf = HierarchicalSSVM(hierarchy=h, C=10.0).fit(X, [3, 4, 2])
        >>> clf.predict([[2.0, 0.0, 0.0], [0.0, 0.0, 0.5]])
        array([3, 2])
        """
        from ..distributed import decode_all
        import scipy.sparse as sp
        self._check_fitted()
        X = self._checks.check_csr(X, self, reset=False)
        if self._multilabel:
            dummy = sp.csr_matrix((np.ones(X.shape[0], dtype=np.int32), (np.arange(X.shape[0]),
                                   np.zeros(X.shape[0], dtype=np.int64))), shape=(X.shape[0], self.hierarchy_.n_leaves))
            st = self._structure(X, dummy)
            Z = decode_all(st, self._w.ravel(), self.n_jobs).reshape(X.shape[0], -1)
            # node marginals in MARGINAL_ONE units; a fractional answer (the LP on a DAG) is
            # solved again as the integer program (6.22)
            from .._kernels.factor import MARGINAL_ONE_VALUE
            from ..hierarchy import DagLP
            frac = np.flatnonzero(np.any((Z != 0) & (Z != MARGINAL_ONE_VALUE), axis=1))
            Z = (Z >= MARGINAL_ONE_VALUE // 2).astype(np.int32)
            if frac.size:
                lp = DagLP(self.hierarchy_)
                S = (np.asarray(X[frac] @ self.coef_.T) + self.intercept_) * self._coef_n
                for k, row in enumerate(frac):
                    Z[row] = lp.integer(S[k]).astype(np.int32)
            return sp.csr_matrix(Z[:, self.hierarchy_.leaves])
        st = self._structure(X, np.zeros(X.shape[0], dtype=np.int32))
        return self.classes_[decode_all(st, self._w.ravel(), self.n_jobs)]

    def predict_labels(self, X):
        """Predict the set of leaves of every row as a tuple of leaf ids.

        After a fit on label sets: the leaf ids predict's indicator holds for each row; after a
        single-label fit: one-element tuples.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The examples, with the training number of columns.

        Returns
        -------
        list of tuple
            One tuple of leaf ids (increasing) per row.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import HierarchicalSSVM, Hierarchy
        >>> h = Hierarchy(parents=[0, 0, 1, 1], children=[1, 2, 3, 4])
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
        >>> clf = HierarchicalSSVM(hierarchy=h, C=10.0).fit(X, [[3], [4], [3, 4], [2]])
        >>> clf.predict_labels(X)
        [(3,), (4,), (3, 4), (2,)]
        """
        P = self.predict(X)
        if not self._multilabel:
            return [(p,) for p in P.tolist()]
        return [tuple(self.classes_[P.indices[P.indptr[r]:P.indptr[r + 1]]].tolist()) for r in range(P.shape[0])]

    def score(self, X, y, sample_weight=None):
        """Return the accuracy on the given examples.

        Single-label: the fraction of rows whose leaf is predicted. After a fit on label sets: the
        example-based accuracy, the mean of |y & y'| / |y | y'| (LSHTC's measure).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The examples.
        y : array-like of shape (n_samples,), list or {array-like, sparse matrix} of shape (n_samples, n_ids)
            Their true leaf ids (or label sets), as fit takes them.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the examples in the mean.

        Returns
        -------
        float
            The accuracy, between 0 and 1.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import HierarchicalSSVM, Hierarchy
        >>> h = Hierarchy(parents=[0, 0, 1, 1], children=[1, 2, 3, 4])
        >>> X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        >>> clf = HierarchicalSSVM(hierarchy=h, C=10.0).fit(X, [3, 4, 2])
        >>> clf.score(X, [3, 4, 4])
        0.6666666666666666
        """
        if not getattr(self, "_multilabel", False):
            return float(np.average(self.predict(X) == np.asarray(y), weights=sample_weight))
        from ..metrics import example_accuracy
        return example_accuracy(self._leaf_sets(self.hierarchy_, y), self.predict(X), sample_weight=sample_weight)

    def decision_function(self, X):
        """Compute the score f(l) of every leaf label for every row.

        The score of leaf l is the sum over the nodes n of A(l) (the leaf and its ancestors) of
        c_n (W_n . x + b_n); single-label predict picks the leaf of highest score.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The examples, with the training number of columns.

        Returns
        -------
        ndarray of shape (n_samples, n_leaves)
            The scores, columns in the order of classes_.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import HierarchicalSSVM, Hierarchy
        >>> h = Hierarchy(parents=[0, 0, 1, 1], children=[1, 2, 3, 4])
        >>> X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        >>> clf = HierarchicalSSVM(hierarchy=h, C=10.0).fit(X, [3, 4, 2])
        >>> scores = clf.decision_function(X)
        >>> scores.shape
        (3, 3)
        >>> clf.classes_[scores.argmax(axis=1)]
        array([3, 4, 2])
        """
        from ..hierarchy import _leaf_incidence
        self._check_fitted()
        X = self._checks.check_csr(X, self, reset=False)
        S = (np.asarray(X @ self.coef_.T) + self.intercept_) * self._coef_n
        return np.asarray(_leaf_incidence(self.hierarchy_) @ S.T).T

    def tree_induced_error(self, y_true, y_pred):
        """Return the mean tree-induced error of predicted leaves.

        The mean over examples of the number of nodes in exactly one of A(y) and A(y'), the
        ancestor sets of the true and the predicted leaf: on a tree, the number of edges on the
        path between the two leaves (Dekel et al.'s tree-induced error).

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            The true leaf ids.
        y_pred : array-like of shape (n_samples,)
            The predicted leaf ids.

        Returns
        -------
        float
            The mean error (0 for no example).

        Raises
        ------
        ValueError
            For an id that is not a leaf of the fitted hierarchy.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import HierarchicalSSVM, Hierarchy
        >>> h = Hierarchy(parents=[0, 0, 1, 1], children=[1, 2, 3, 4])
        >>> X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        >>> clf = HierarchicalSSVM(hierarchy=h, C=10.0).fit(X, [3, 4, 2])
        >>> clf.tree_induced_error([3, 4, 2], [3, 2, 4])   # paths 4-1-0-2 and 2-0-1-4
        2.0
        """
        h = self.hierarchy_
        t, p = h.leaf_index(y_true, "y_true"), h.leaf_index(y_pred, "y_pred")
        st = hierarchy_structure(CSRDataset(_empty_rows(len(t)), -1.0), t, h, np.ones(h.n_nodes), "hamming")
        return float(np.mean([st.py_loss(i, p[i:i + 1]) for i in range(len(t))])) if len(t) else 0.0

    def _report_lines(self, y_true, y_pred):
        """ssvm-predict's lines beyond the accuracy."""
        if getattr(self, "_multilabel", False):
            # y_true, y_pred: indicator matrices whose first n_leaves columns are classes_; the
            # set form of the error: nodes in exactly one of the two ancestor closures
            from ..hierarchy import _leaf_incidence
            import scipy.sparse as sp
            A = _leaf_incidence(self.hierarchy_)
            L = A.shape[0]
            Zt = (sp.csr_matrix(y_true)[:, :L] @ A) > 0
            Zp = (sp.csr_matrix(y_pred)[:, :L] @ A) > 0
            tie = float((Zt != Zp).sum()) / max(Zt.shape[0], 1)
            return [f"Tree-induced error = {tie:g} (mean number of nodes in exactly one of the true and the "
                    "predicted label's ancestor closures)"]
        known = np.isin(np.asarray(y_true).astype(np.int64), self.classes_)
        tie = self.tree_induced_error(np.asarray(y_true)[known].astype(np.int64), np.asarray(y_pred)[known])
        return [f"Tree-induced error = {tie:g} (over {int(known.sum())} examples with a leaf label)"]

    # model files: the hierarchy, the model, the task loss and alpha travel in the header
    def _model_header(self):
        p, c = self.hierarchy_.edges()
        return [("model", self.model), ("task_loss", self._task_loss),
                ("output", "multilabel" if self._multilabel else "single"),
                ("hierarchy", " ".join(f"{a}:{b}" for a, b in zip(p.tolist(), c.tolist()))),
                ("alpha", " ".join("%.17g" % a for a in self.alpha_))]

    @classmethod
    def _model_layout(cls, header, n_classes, fail):
        for key in ("model", "task_loss", "hierarchy", "alpha"):
            if key not in header:
                fail(f"a hierarchy model needs a '{key}' header line")
        line, text = header["hierarchy"]
        try:
            pairs = parse_int64_pairs(text)
            if not pairs.shape[0]:
                raise ValueError("no edge")
            h = Hierarchy.from_edges(pairs[:, 0], pairs[:, 1])
        except ValueError as e:
            fail(f"hierarchy: {e}", line)
        if h.n_leaves != n_classes:
            fail(f"the hierarchy has {h.n_leaves} leaves but nr_class is {n_classes}", header["nr_class"][0])
        model = header["model"][1]
        if model not in MODELS:
            fail(f"unknown model {model!r}", header["model"][0])
        line, task_loss = header["task_loss"]
        if task_loss not in TASK_LOSSES:
            fail(f"unknown task_loss {task_loss[:40]!r} (expected one of {', '.join(TASK_LOSSES)})", line)
        line, output = header.get("output", (0, "single"))
        if output not in ("single", "multilabel"):
            fail(f"unknown output {output[:40]!r} (expected single or multilabel)", line)
        line, text = header["alpha"]
        try:
            alpha = parse_finite_floats(text)
        except ValueError as e:
            fail(f"alpha: expected finite numbers ({e})", line)
        if alpha.shape[0] != h.n_nodes or np.any(alpha < 0):
            fail(f"alpha: expected {h.n_nodes} non-negative weights, got {alpha.shape[0]}", line)

        def restore(est):
            est.hierarchy_ = h
            est.alpha_ = alpha
            est._coef_n = np.ones(h.n_nodes) if model == "hsvm" else np.sqrt(alpha)
            est.nodes_ = h.ids
            est._multilabel = header.get("output", (0, "single"))[1] == "multilabel"
        multilabel = header.get("output", (0, "single"))[1] == "multilabel"
        params = dict(hierarchy=h, model=model, task_loss=None if multilabel else header["task_loss"][1], alpha=alpha)
        return h.n_nodes, restore, params
