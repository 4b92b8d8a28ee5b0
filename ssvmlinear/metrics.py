"""Multi-label evaluation measures on 0/1 indicator matrices (dense arrays or scipy sparse).

Rows are examples, columns labels; any nonzero entry counts as 1. Sparse input stays sparse
(only per-row and per-column counts are formed), so large label spaces are cheap.

- ``subset_accuracy``: fraction of examples whose predicted label set is exactly right.
- ``hamming_loss``: fraction of wrong (example, label) entries.
- ``micro_f1``: F1 of all (example, label) decisions pooled: 2 TP / (2 TP + FP + FN).
- ``macro_f1``: mean over labels of each label's F1.
- ``example_accuracy``: the multi-label papers' "Acc" (Jaccard index averaged over examples):
  mean of |y ∩ ŷ| / |y ∪ ŷ|, counted as 1 when both sets are empty.

Where a ratio is 0/0 (F1 of a label that is neither present nor predicted, micro-F1 of all-empty
matrices), ``zero_division`` is returned, 0.0 by default as in scikit-learn.
"""
import numpy as np
import scipy.sparse as sp

__all__ = ["subset_accuracy", "hamming_loss", "micro_f1", "macro_f1", "example_accuracy"]


def _indicator(M, name):
    if sp.issparse(M):
        M = sp.csr_matrix(M, copy=True)
        M.sum_duplicates()
        M.eliminate_zeros()
    else:
        M = np.asarray(M)
        if M.ndim != 2:
            raise ValueError(f"{name} must be a 2-D indicator matrix; got shape {M.shape}")
        M = sp.csr_matrix(M != 0)
    M = sp.csr_matrix((np.ones(M.nnz, dtype=np.int64), M.indices, M.indptr), shape=M.shape)
    return M


def _counts(y_true, y_pred):
    """Per-example |y|, |ŷ|, |y ∩ ŷ| and the two CSR indicators."""
    Y, P = _indicator(y_true, "y_true"), _indicator(y_pred, "y_pred")
    if Y.shape != P.shape:
        raise ValueError(f"y_true has shape {Y.shape} but y_pred has shape {P.shape}")
    inter = np.asarray(Y.multiply(P).sum(axis=1)).ravel()
    return np.diff(Y.indptr), np.diff(P.indptr), inter, Y, P


def _weights(sample_weight, n):
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.shape != (n,):
        raise ValueError(f"sample_weight has shape {sw.shape}; expected ({n},)")
    return sw


def _mean(values, sample_weight):
    if values.shape[0] == 0:
        return 0.0
    return float(np.average(values, weights=_weights(sample_weight, values.shape[0])))


def subset_accuracy(y_true, y_pred, sample_weight=None):
    """Compute the fraction of examples whose predicted label set is exactly right.

    The exact match ratio: an example counts only when every one of its labels is right.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The true 0/1 indicator matrix (any nonzero entry counts as 1).
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The predicted indicator matrix, of the same shape.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Weights of the examples in the mean.

    Returns
    -------
    float
        The (weighted) fraction, between 0 and 1; 0.0 for no example.

    Raises
    ------
    ValueError
        When y_true and y_pred differ in shape or are not 2-D.

    See Also
    --------
    hamming_loss : The fraction of wrong (example, label) entries.
    example_accuracy : Partial credit for partly right label sets.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import subset_accuracy
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    >>> P = np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    >>> subset_accuracy(Y, P)
    0.3333333333333333
    """
    ny, npred, inter, _, _ = _counts(y_true, y_pred)
    return _mean(((ny == inter) & (npred == inter)).astype(np.float64), sample_weight)


def hamming_loss(y_true, y_pred, sample_weight=None):
    """Compute the fraction of wrong (example, label) entries.

    The mean over examples of the fraction of labels predicted wrongly.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The true 0/1 indicator matrix (any nonzero entry counts as 1).
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The predicted indicator matrix, of the same shape.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Weights of the examples in the mean.

    Returns
    -------
    float
        The loss, between 0 and 1; 0.0 for no example or no label.

    Raises
    ------
    ValueError
        When y_true and y_pred differ in shape or are not 2-D.

    See Also
    --------
    subset_accuracy : The fraction of exactly right label sets.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import hamming_loss
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    >>> P = np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    >>> hamming_loss(Y, P)   # 3 of the 9 entries differ
    0.3333333333333333
    """
    ny, npred, inter, Y, _ = _counts(y_true, y_pred)
    K = Y.shape[1]
    if K == 0:
        return 0.0
    return _mean((ny + npred - 2 * inter) / K, sample_weight)


def micro_f1(y_true, y_pred, zero_division=0.0):
    """Compute the micro-averaged F1 of all (example, label) decisions.

    2 TP / (2 TP + FP + FN), the true and false positives and the false negatives counted over
    all entries pooled.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The true 0/1 indicator matrix (any nonzero entry counts as 1).
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The predicted indicator matrix, of the same shape.
    zero_division : float, default=0.0
        The value returned where the ratio is 0/0.

    Returns
    -------
    float
        The F1, between 0 and 1 (zero_division when both matrices are empty).

    Raises
    ------
    ValueError
        When y_true and y_pred differ in shape or are not 2-D.

    See Also
    --------
    macro_f1 : The mean of the per-label F1.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import micro_f1
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    >>> P = np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    >>> micro_f1(Y, P)   # 3 true positives, 1 false positive, 2 false negatives
    0.6666666666666666
    """
    ny, npred, inter, _, _ = _counts(y_true, y_pred)
    den = float(ny.sum() + npred.sum())
    return 2.0 * float(inter.sum()) / den if den > 0 else float(zero_division)


def macro_f1(y_true, y_pred, zero_division=0.0):
    """Compute the macro-averaged F1: the unweighted mean of the per-label F1.

    The F1 of label k is 2 TP_k / (|true_k| + |pred_k|); a label that is neither present nor
    predicted has F1 = zero_division.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The true 0/1 indicator matrix (any nonzero entry counts as 1).
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The predicted indicator matrix, of the same shape.
    zero_division : float, default=0.0
        The value returned where the ratio is 0/0.

    Returns
    -------
    float
        The mean F1, between 0 and 1 (zero_division when there is no label).

    Raises
    ------
    ValueError
        When y_true and y_pred differ in shape or are not 2-D.

    See Also
    --------
    micro_f1 : The F1 of all decisions pooled.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import macro_f1
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    >>> P = np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    >>> round(macro_f1(Y, P), 4)   # the labels' F1: 1, 0 and 2/3
    0.5556
    """
    _, _, _, Y, P = _counts(y_true, y_pred)
    K = Y.shape[1]
    if K == 0:
        return float(zero_division)
    tp = np.asarray(Y.multiply(P).sum(axis=0), dtype=np.float64).ravel()
    den = (np.bincount(Y.indices, minlength=K) + np.bincount(P.indices, minlength=K)).astype(np.float64)
    f = np.divide(2.0 * tp, den, out=np.full(K, float(zero_division)), where=den > 0)
    return float(f.mean())


def example_accuracy(y_true, y_pred, sample_weight=None):
    """Compute the example-based accuracy (the Jaccard index averaged over examples).

    The multi-label papers' "Acc": the mean over examples of |y ∩ ŷ| / |y ∪ ŷ|, counted as 1
    when both sets are empty.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The true 0/1 indicator matrix (any nonzero entry counts as 1).
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The predicted indicator matrix, of the same shape.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Weights of the examples in the mean.

    Returns
    -------
    float
        The accuracy, between 0 and 1; 0.0 for no example.

    Raises
    ------
    ValueError
        When y_true and y_pred differ in shape or are not 2-D.

    See Also
    --------
    subset_accuracy : The fraction of exactly right label sets.
    MultiLabelSSVM.score : This measure on a fitted model's predictions.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import example_accuracy
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    >>> P = np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    >>> round(example_accuracy(Y, P), 4)   # 1, 0 and 1/3
    0.4444
    """
    ny, npred, inter, _, _ = _counts(y_true, y_pred)
    union = ny + npred - inter
    acc = np.divide(inter, union, out=np.ones(union.shape[0]), where=union > 0)
    return _mean(acc, sample_weight)
