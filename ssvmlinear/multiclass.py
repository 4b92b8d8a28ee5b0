"""Multiclass structural SVM (Crammer-Singer formulation): the scikit-learn estimator."""
from sklearn.base import ClassifierMixin, _fit_context

from .base import StructuredSSVM, constraints_of
from .models.multiclass import MulticlassModel


class MulticlassSSVM(ClassifierMixin, StructuredSSVM, MulticlassModel):
    """Linear multiclass structural SVM (Crammer and Singer's formulation).

    One weight vector per class; a row is assigned the class of highest score w_k . x + b_k.
    Training minimises ``1/2 ||W||^2 + sum_i C_i max_y [Delta(y, y_i) + w_y . x_i - w_{y_i} . x_i]``
    with the 0/1 loss Delta and ``C_i = C * sample_weight_i * class_weight[y_i]`` (LIBLINEAR
    ``-s 4``'s problem with margin rescaling), or the linear summed error problem with
    ``loss="lse"``. X may be dense or scipy sparse; sparse input is never densified.

    {parameters}

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes, n_features)
        The weights of every class (one row per class also for two classes: the model has a
        weight vector per class).
    intercept_ : ndarray of shape (n_classes,)
        The bias of every class (intercept_scaling times the bias feature's weight; zeros when
        fit_intercept is False).
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    {fit_attributes}

    See Also
    --------
    MultiLabelSSVM : Several binary labels per example, optionally coupled.
    HierarchicalSSVM : Classes that are the leaves of a label hierarchy.
    ChainSSVM : One label per token of a sequence.
    ssvmlinear.solvers : The training methods and their own parameters.

    Notes
    -----
    Stopping rules (tol): SDM stops after a pass in which every example's KKT violation is <= tol
    (LIBLINEAR's; default 0.1); LSE-SDCD after an oracle pass in which no example's sum of squared
    dual changes, divided by C_i, exceeds tol (the paper's; 1e-4); the cutting plane when the most
    violated one-slack constraint is violated by at most tol * sum_i C_i (svm_struct's; 0.1);
    BCFW and GDMM when the block gaps are <= tol times the dual (1e-3, 0.01); Pegasos after an
    epoch that changed the primal by at most tol relative (1e-3). tol=None adds a relative
    duality gap <= 1% to the rule at its default tolerance (Pegasos has no dual: its rule only).
    A fit that stops with a relative gap above 5% warns (ConvergenceWarning). fit_intercept
    follows scikit-learn (True); ssvm-train follows LIBLINEAR (no bias unless -B 1).

    Memory: the CSR data (never densified), a few vectors of the weight dimension
    (n_features x n_classes doubles), and the dual working sets: per member 28 bytes (label, dual
    variable, loss and one solver value); multiclass working sets keep no Gram matrix. SDM's sets
    stay small (margin rescaling); LSE-SDCD's hold every class that violates, up to all K classes
    at small C (28 n K bytes). The LSE objective is evaluated in blocks of rows, never as an
    n x K array.

    A scikit-learn classifier: score is the mean accuracy, and the estimator works in pipelines,
    grid searches and cross-validation. X must have the training number of columns in predict
    and decision_function (ssvmlinear.utils.match_columns applies LIBLINEAR's convention for
    test files that are wider or narrower).

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import MulticlassSSVM
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [-1.0, -1.0], [-0.9, -1.1]])
    >>> y = np.array([0, 0, 1, 1, 2, 2])
    >>> clf = MulticlassSSVM(C=10.0).fit(X, y)
    >>> clf.predict([[0.8, 0.0], [-1.0, -0.8]])
    array([0, 2])
    >>> clf.coef_.shape, clf.intercept_.shape
    ((3, 2), (3,))
    >>> clf.classes_
    array([0, 1, 2])
    >>> bool(clf.converged_)
    True
    """

    _parameter_constraints = constraints_of(MulticlassModel.params)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Fit the model to labelled examples.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or ShardedData
            The examples; sparse input is converted to CSR, never densified. X may also be the
            ShardedData of ssvmlinear.distributed.load_svmlight_shards (labels included):
            training then runs where its shards live, with solver 'sdm', 'sdcd' or
            'cutting-plane'.
        y : array-like of shape (n_samples,)
            One class label per row, at least two classes (a column vector warns). None only
            with ShardedData.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the examples: they multiply C (C_i = C * sample_weight_i); not all zero.

        Returns
        -------
        MulticlassSSVM
            The fitted estimator.

        Raises
        ------
        ValueError
            For invalid parameters or input, fewer than two classes, or features so large that
            the training objective would overflow.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import MulticlassSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
        >>> clf = MulticlassSSVM().fit(X, ["a", "b", "c"], sample_weight=[1.0, 1.0, 2.0])
        >>> clf.classes_
        array(['a', 'b', 'c'], dtype='<U1')
        """
        return MulticlassModel.fit(self, X, y, sample_weight)

    def score(self, X, y, sample_weight=None):
        """Return the mean accuracy on the given examples.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The examples.
        y : array-like of shape (n_samples,)
            Their true class labels.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the examples in the mean.

        Returns
        -------
        float
            The fraction of examples predicted correctly (weighted by sample_weight).

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import MulticlassSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
        >>> clf = MulticlassSSVM().fit(X, [0, 1, 2])
        >>> clf.score(X, [0, 1, 1])
        0.6666666666666666
        """
        return ClassifierMixin.score(self, X, y, sample_weight=sample_weight)
