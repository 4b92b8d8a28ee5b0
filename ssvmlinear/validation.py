"""The estimators' input validation, in scikit-learn's terms (the scikit-learn side of the
package: the CLI, model files and I/O do not import it)."""
import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data


def check_csr(X, estimator=None, y="no_validation", reset=True):
    """X as the kernels' CSR: float64 data, int32 indices, sorted, no duplicates.

    Validated by scikit-learn (2-D, real, finite, at least one sample and one feature); with an
    estimator, through validate_data: n_features_in_ is set (reset=True, in fit) or checked
    (reset=False: predict refuses another number of columns), and a given y is checked with X
    (check_X_y: same length, a column vector warns). Returns X, or (X, y) when y is given.
    Dense input becomes CSR; sparse input is copied at most once, and only when its dtype,
    format or index order differs. X is never densified.
    """
    kw = dict(accept_sparse="csr", dtype=np.float64)
    with_y = not (isinstance(y, str) and y == "no_validation")
    if estimator is None:
        out = check_array(X, **kw)
    else:
        out = validate_data(estimator, X, y, reset=reset, **kw)
    X, y = out if with_y else (out, None)
    if not sp.issparse(X):
        X = sp.csr_matrix(X)
    if X.shape[1] >= 2**31 - 1:
        raise ValueError(f"X has {X.shape[1]} columns; at most 2**31 - 2 are supported")
    if X.indices.dtype != np.int32:
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr), shape=X.shape)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()  # also sorts indices
    return (X, y) if with_y else X


def check_class_labels(y):
    """scikit-learn's check_classification_targets, float labels first checked here: a value that
    is not an integer below 2**53 in magnitude (2.5, 1e300) is refused in one line naming it
    (scikit-learn's own check casts such values to int64, warning on overflow)."""
    y = np.asarray(y)
    if y.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(y) & (np.abs(y) < 2.0**53) & (y == np.round(y))
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"Unknown label type: continuous (y[{i}] = {float(y[i])!r}): class labels must be "
                             "integers below 2**53 in magnitude, or strings")
    check_classification_targets(y)
