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
    """Fraction of examples with exactly the true label set (exact match ratio)."""
    ny, npred, inter, _, _ = _counts(y_true, y_pred)
    return _mean(((ny == inter) & (npred == inter)).astype(np.float64), sample_weight)


def hamming_loss(y_true, y_pred, sample_weight=None):
    """Mean over examples of the fraction of labels predicted wrongly."""
    ny, npred, inter, Y, _ = _counts(y_true, y_pred)
    K = Y.shape[1]
    if K == 0:
        return 0.0
    return _mean((ny + npred - 2 * inter) / K, sample_weight)


def micro_f1(y_true, y_pred, zero_division=0.0):
    """2 TP / (2 TP + FP + FN) over all (example, label) pairs."""
    ny, npred, inter, _, _ = _counts(y_true, y_pred)
    den = float(ny.sum() + npred.sum())
    return 2.0 * float(inter.sum()) / den if den > 0 else float(zero_division)


def macro_f1(y_true, y_pred, zero_division=0.0):
    """Unweighted mean over labels of the per-label F1 = 2 TP_k / (|true_k| + |pred_k|)."""
    _, _, _, Y, P = _counts(y_true, y_pred)
    K = Y.shape[1]
    if K == 0:
        return float(zero_division)
    tp = np.asarray(Y.multiply(P).sum(axis=0), dtype=np.float64).ravel()
    den = (np.bincount(Y.indices, minlength=K) + np.bincount(P.indices, minlength=K)).astype(np.float64)
    f = np.divide(2.0 * tp, den, out=np.full(K, float(zero_division)), where=den > 0)
    return float(f.mean())


def example_accuracy(y_true, y_pred, sample_weight=None):
    """The papers' "Acc": mean over examples of |y ∩ ŷ| / |y ∪ ŷ| (1 when both are empty)."""
    ny, npred, inter, _, _ = _counts(y_true, y_pred)
    union = ny + npred - inter
    acc = np.divide(inter, union, out=np.ones(union.shape[0]), where=union > 0)
    return _mean(acc, sample_weight)
