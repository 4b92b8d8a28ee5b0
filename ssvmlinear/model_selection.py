"""Cross-validation for the structured estimators (folds trained in parallel with joblib)."""
import numpy as np
from joblib import Parallel, delayed


def kfold_indices(n, n_folds, seed=0):
    """Random fold id per example (LIBLINEAR -v: a random permutation split into n_folds parts)."""
    if n_folds < 2:
        raise ValueError(f"n-fold cross validation needs n >= 2; got {n_folds}")
    if n_folds > n:
        raise ValueError(f"n-fold cross validation: {n_folds} folds for {n} examples")
    perm = np.random.default_rng(seed).permutation(n)
    fold = np.empty(n, dtype=np.int64)
    fold[perm] = np.arange(n) % n_folds
    return fold


def cross_val_predict(estimator, X, y, n_folds=5, seed=0, n_jobs=None, lengths=None, return_estimators=False):
    """Out-of-fold predictions of a clone of `estimator` trained on the other folds.

    With `lengths` (sequences), whole sequences are assigned to folds. A 2-D (dense or sparse)
    multi-label indicator y gives predictions in the same format. return_estimators: also the
    fitted clones, one per fold: (predictions, estimators)."""
    import scipy.sparse as sp
    multilabel = sp.issparse(y) or np.ndim(y) == 2
    if sp.issparse(y):
        y = sp.csr_matrix(y)
    else:
        y = np.asarray(y)
    if lengths is None:
        fold = kfold_indices(X.shape[0], n_folds, seed)
    else:
        lengths = np.asarray(lengths)
        seq_fold = kfold_indices(lengths.shape[0], n_folds, seed)
        fold = np.repeat(seq_fold, lengths)

    def run(k):
        test = np.flatnonzero(fold == k)
        train = np.flatnonzero(fold != k)
        est = type(estimator)(**estimator.get_params(deep=False)).set_params(verbose=0)   # (a fresh copy)
        if lengths is None:
            est.fit(X[train], y[train])
            return test, est.predict(X[test]), est
        est.fit(X[train], y[train], lengths[seq_fold != k])
        return test, est.predict(X[test], lengths[seq_fold == k]), est

    # Threads: the solver kernels release the GIL, and nothing is pickled.
    results = Parallel(n_jobs=n_jobs, prefer="threads")(delayed(run)(k) for k in range(n_folds))
    fitted = [est for _, _, est in results]
    if multilabel:
        order = np.concatenate([test for test, _, _ in results])
        parts = [p for _, p, _ in results]
        stacked = sp.vstack([sp.csr_matrix(p) for p in parts]).tocsr() if sp.issparse(parts[0]) \
            else np.vstack(parts)
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.shape[0])
        pred = stacked[inverse]
    else:
        pred = np.empty(X.shape[0], dtype=np.asarray(y).dtype)
        for test, p, _ in results:
            pred[test] = p
    return (pred, fitted) if return_estimators else pred
