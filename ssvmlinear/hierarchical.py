"""Hierarchical classification (HSVM, NHSVM, Shared SVM): the scikit-learn estimator."""
from sklearn.base import ClassifierMixin, _fit_context

from .base import StructuredSSVM, constraints_of
from .models.hierarchical import HierarchicalModel


class HierarchicalSSVM(ClassifierMixin, StructuredSSVM, HierarchicalModel):
    """Linear structural SVM for classification into the leaves of a label hierarchy.

    The classes are the leaves of a tree or a DAG of labels. A label l stands for the set A(l) of
    the leaf and its ancestors; each node n has a weight row W_n and the score of l is
    ``sum_{n in A(l)} c_n W_n . x``, so related classes share the weights of their common
    ancestors. Training minimises ``1/2 ||W||^2 + sum_i C_i max_l [Delta(l, y_i) + f(l) - f(y_i)]``
    (or the LSE problem, or another surrogate given by `loss`). The node weights c_n come from
    `model` and `alpha`; Delta from `task_loss`. y may also hold label sets (several leaves per
    example).

    {parameters}

    Attributes
    ----------
    coef_ : ndarray of shape (n_nodes, n_features)
        The weights of every node of the hierarchy (before the node weights c_n), rows in the
        order of nodes_.
    intercept_ : ndarray of shape (n_nodes,)
        The bias of every node (zeros when fit_intercept is False).
    classes_ : ndarray of shape (n_leaves,)
        The leaf ids, sorted: the labels.
    nodes_ : ndarray of shape (n_nodes,)
        The node id of every row of coef_ (parents before children; -1 is an implicit root
        above several roots).
    alpha_ : ndarray of shape (n_nodes,)
        The node weights alpha (c_n = sqrt(alpha_n), except for model='hsvm' where c_n = 1);
        learned with the weights for model='shared'.
    hierarchy_ : Hierarchy
        The hierarchy the model was fitted on.
    alternation_objectives_ : ndarray of shape (n_alternations,)
        model='shared' only: the objective after every alternation of the weights' fit and
        the update of alpha.
    {fit_attributes}

    See Also
    --------
    ssvmlinear.Hierarchy : A label hierarchy built from its edges.
    ssvmlinear.read_hierarchy : A label hierarchy read from a file.
    MulticlassSSVM : The flat multiclass model.

    Notes
    -----
    The models:

    - model="hsvm": c_n = 1 (the hierarchical structured SVM);
    - model="nhsvm": c_n = sqrt(alpha_n), alpha summing to 1 along every root-to-leaf path (the
      normalised hierarchical SVM); alpha="rho2" minimises sum alpha^2 (closed form on trees),
      "directional" maximises min alpha with alpha_child >= alpha_parent (a linear program),
      or an array gives it; on a DAG the path sums may lie in [1, T];
    - model="flat": alpha = 1 on the leaves, 0 elsewhere (the flat multiclass model);
    - model="shared": Shared SVM (trees only): alpha is learned with the weights, alternating
      a fit of the weights at fixed alpha and the optimal alpha for those weights, from
      alpha="rho2" (or the alpha given), until the objective decreases by at most shared_tol
      relative, or after max_alternations. The task loss must not depend on alpha: the default
      is "zero-one"; "hamming", or "normalized" with the node weights of the initial alpha.

    The task losses: "hamming" (the number of nodes in exactly one of the two ancestor sets),
    "normalized" (the square root of the sum of c_n^2 over those nodes), "normalized-margin"
    (the margin divided by that norm, loss 1) or "zero-one"; the default is hamming for hsvm,
    normalized for nhsvm and flat, zero-one for shared.

    Labels y are leaf ids of the hierarchy. With label sets (a list of leaf-id collections or an
    indicator matrix whose column j is leaf id j), the model predicts a set of leaves per
    example (the decomposed leaf loss; task_loss must be None), predict returns a CSR indicator
    over classes_ and score is the example-based accuracy.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import HierarchicalSSVM, Hierarchy
    >>> h = Hierarchy(parents=[0, 0, 1, 1], children=[1, 2, 3, 4])   # leaves 2, 3 and 4
    >>> X = np.array([[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.0, 1.0, 0.0],
    ...               [0.1, 0.9, 0.0], [0.0, 0.0, 1.0], [0.0, 0.1, 0.9]])
    >>> y = np.array([3, 3, 4, 4, 2, 2])
    >>> clf = HierarchicalSSVM(hierarchy=h, C=10.0).fit(X, y)
    >>> clf.predict(X)
    array([3, 3, 4, 4, 2, 2])
    >>> clf.classes_, clf.nodes_
    (array([2, 3, 4]), array([0, 1, 2, 3, 4]))
    >>> clf.coef_.shape
    (5, 3)
    """

    _parameter_constraints = constraints_of(HierarchicalModel.params)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model to examples labelled with leaves of the hierarchy.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The examples; sparse input is converted to CSR, never densified.
        y : array-like of shape (n_samples,), list or {array-like, sparse matrix} of shape (n_samples, n_ids)
            The leaf id of every row; or label sets: a list of leaf-id collections, or an
            indicator matrix whose column j is the leaf id j.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the examples: they multiply C; not all zero.

        Returns
        -------
        HierarchicalSSVM
            The fitted estimator.

        Raises
        ------
        ValueError
            Without a hierarchy, for a label that is not a leaf of it, or for invalid
            parameters (model='shared' on a DAG).

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import HierarchicalSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
        >>> clf = HierarchicalSSVM(hierarchy=([0, 0, 1, 1], [1, 2, 3, 4]), model="hsvm")
        >>> clf.fit(X, [3, 4, 2]).hierarchy_.n_leaves
        3
        """
        return HierarchicalModel.fit(self, X, y, sample_weight)

    score = HierarchicalModel.score    # (before ClassifierMixin's in the MRO)
