"""Multi-label structural SVM: the scikit-learn estimator (independent labels, or labels coupled
by pairwise factors)."""
from sklearn.base import ClassifierMixin, MultiOutputMixin, _fit_context

from .base import StructuredSSVM, constraints_of
from .models.multilabel import MultiLabelModel


class MultiLabelSSVM(MultiOutputMixin, ClassifierMixin, StructuredSSVM, MultiLabelModel):
    """Linear multi-label structural SVM: independent labels, or labels coupled by pairwise factors.

    A label of an example is a subset y of K labels (a 0/1 vector). The score of y is
    ``f(y) = sum_{k in y} (w_k . x + b_k)``, plus ``sum_e P_e[y_a, y_b]`` over the label pairs
    e = (a, b) of `edges` when given; predict maximises it (with independent labels: label k is
    predicted iff its score is > 0). The task loss is the Hamming loss (divided by K with
    normalize_loss). Training minimises ``1/2 ||W||^2 + sum_i C_i max_y [Delta(y, y_i) + f(y) -
    f(y_i)]`` (margin rescaling), or another surrogate given by `loss`.

    {parameters}

    Attributes
    ----------
    coef_ : ndarray of shape (n_labels, n_features)
        The weights of every label (one row after a fit on a 1-D binary y).
    intercept_ : ndarray of shape (n_labels,)
        The bias of every label (zeros when fit_intercept is False).
    classes_ : ndarray of shape (n_labels,)
        The labels, in column order: arange(K) for an indicator matrix Y, the sorted labels seen
        for label collections, the two classes for a 1-D binary y.
    edges_ : ndarray of shape (n_edges, 2)
        The label pairs of the pairwise factors, as positions in classes_ (no rows for
        independent labels).
    pairwise_ : ndarray of shape (n_edges, 2, 2)
        The pairwise tables, indexed [edge, state of its first label, state of its second].
    n_fractional_predictions_ : int
        Set by predict with edges: the rows whose LP relaxation was fractional and were solved
        again as an integer program (0 on a forest of pairs).
    {fit_attributes}

    See Also
    --------
    MulticlassSSVM : Exactly one class per example.
    HierarchicalSSVM : Labels that are the leaves of a hierarchy (label sets too).
    ssvmlinear.metrics : Multi-label measures (Hamming loss, F1, subset accuracy).

    Notes
    -----
    Because the loss and the score of independent labels decompose over labels, the margin
    problem's loss-augmented inference flips each label independently; the labels are coupled
    only through the shared slack of an example. With edges, the pairs form a graph on the labels:
    on a forest (the Chow-Liu tree, or pairs given that form no cycle) every oracle is exact
    max-product, so every solver, surrogate and search trains it; on any other graph ('full', or
    pairs with cycles) training and prediction use the LP relaxation over the local polytope,
    and predict solves the integer program for rows whose relaxation is fractional. 'chow-liu'
    takes the maximum spanning tree of the labels' pairwise mutual information on the training Y
    (pairs of zero information are left out, so it may be a forest).

    Stopping rules: see MulticlassSSVM. The surrogates' search is the
    solver's (Pegasos(search=...), CuttingPlane(search=...)). The LSE primal is a sum over all
    2^K labels and is not computed (objective_ is NaN for loss="lse").

    Targets: Y is a 0/1 indicator matrix (scipy sparse, a 2-D array, or equal-length lists of
    numbers) of shape (n_samples, K), or a list of label collections (one iterable of hashable
    labels per example, as scikit-learn's MultiLabelBinarizer takes). predict returns an
    indicator matrix: CSR int32 when fit got a sparse matrix or label collections, else a dense
    array of Y's dtype. A 1-D y of two classes is the problem with one label, "y is
    classes_[1]" (a binary L1-loss SVM): coef_ has one row, predict returns classes,
    decision_function has shape (n_samples,) and score is the mean accuracy. A 1-D y of more
    classes is refused (use MulticlassSSVM).

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import MultiLabelSSVM
    >>> X = np.array([[1.0, 0.0, 0.0], [0.9, 0.0, 0.1], [0.0, 1.0, 0.0],
    ...               [0.0, 0.9, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    >>> Y = np.array([[1, 0, 1], [1, 0, 1], [0, 1, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
    >>> clf = MultiLabelSSVM(C=10.0).fit(X, Y)
    >>> clf.predict(X[:3])
    array([[1, 0, 1],
           [1, 0, 1],
           [0, 1, 0]])
    >>> clf.coef_.shape
    (3, 3)

    Labels coupled by pairwise tables on the pairs (0, 1) and (1, 2):

    >>> coupled = MultiLabelSSVM(C=10.0, edges=[[0, 1], [1, 2]]).fit(X, Y)
    >>> coupled.pairwise_.shape
    (2, 2, 2)
    >>> coupled.score(X, Y)
    1.0
    """

    _parameter_constraints = constraints_of(MultiLabelModel.params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True  # 2-D 0/1 indicator targets
        tags.classifier_tags.multi_class = False  # a 1-D y is one binary label; fit rejects more classes
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Fit the model to examples and their label sets.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or ShardedData
            The examples; sparse input is converted to CSR, never densified. X may also be the
            ShardedData of ``ssvmlinear.distributed.load_svmlight_shards(..., kind="multilabel")``
            (labels included): training then runs where its shards live, over the label values
            that occur in the file (classes_), as ssvm-train trains.
        y : {array-like, sparse matrix} of shape (n_samples, n_labels), list or array-like of shape (n_samples,)
            A 0/1 indicator matrix, a list of label collections (one per example), or a 1-D
            binary y (the one-label problem). None only with ShardedData.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the examples: they multiply C; not all zero.

        Returns
        -------
        MultiLabelSSVM
            The fitted estimator.

        Raises
        ------
        ValueError
            For invalid parameters or targets (values other than 0 and 1, a 1-D y of more than
            two classes, edges that are not label pairs).

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import MultiLabelSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
        >>> clf = MultiLabelSSVM(C=10.0).fit(X, [["news"], ["sport"], ["news", "sport"], []])
        >>> clf.classes_
        array(['news', 'sport'], dtype='<U5')
        >>> clf.predict_labels(X)
        [('news',), ('sport',), ('news', 'sport'), ()]
        """
        return MultiLabelModel.fit(self, X, y, sample_weight)

    score = MultiLabelModel.score      # Acc (before ClassifierMixin's in the MRO)
