"""Input checks of the core models (numpy and scipy only: what ssvm-train and ssvm-predict run).

The scikit-learn estimators use ssvmlinear.validation instead, which has the same functions in
scikit-learn's terms; a model picks its module through its `_checks` attribute.
"""
import numpy as np
import scipy.sparse as sp


def canonical_csr(X):
    """A CSR matrix (float64) as the kernels take it: int32 indices, sorted, no duplicates; copies
    only what differs."""
    if X.shape[1] >= 2**31 - 1:
        raise ValueError(f"X has {X.shape[1]} columns; at most 2**31 - 2 are supported")
    if X.indices.dtype != np.int32:
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr), shape=X.shape)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()  # also sorts indices
    return X


def check_csr(X, model=None, y="no_validation", reset=True):
    """X as the kernels' CSR (2-D, real, finite, at least one sample and one feature); with a
    model, n_features_in_ is set (reset=True) or checked (reset=False). Returns X, or (X, y) when
    y is given (one label per row; a column vector is taken as 1-D)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        values = X.data
    else:
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"Expected a 2D array, got a {X.ndim}D array instead")
        if X.dtype.kind not in "biuf":
            raise ValueError(f"X must hold real numbers; got dtype {X.dtype}")
        values = X = X.astype(np.float64, copy=False)
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"Found array with shape {X.shape}: at least one sample and one feature are required")
    if not np.all(np.isfinite(values)):
        raise ValueError("Input X contains NaN or infinity")
    if model is not None:
        if reset:
            model.n_features_in_ = X.shape[1]
        elif X.shape[1] != model.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(model).__name__} is expecting "
                             f"{model.n_features_in_} features as input")
    X = canonical_csr(X if sp.issparse(X) else sp.csr_matrix(X))
    if isinstance(y, str) and y == "no_validation":
        return X
    if y is None:
        raise ValueError("y is required")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y has shape {y.shape}; expected one label per row of X ({X.shape[0]},)")
    return X, y


def check_label_values(y):
    """Float labels must be integers below 2**53 in magnitude (2.5, 1e300 are refused in one line
    naming the first)."""
    y = np.asarray(y)
    if y.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(y) & (np.abs(y) < 2.0**53) & (y == np.round(y))
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"Unknown label type: continuous (y[{i}] = {float(y[i])!r}): class labels must be "
                             "integers below 2**53 in magnitude, or strings")


def check_class_labels(y):
    """Class labels: check_label_values (any other dtype is taken as discrete labels)."""
    check_label_values(y)


def check_sample_weight(sample_weight, n):
    """One finite weight >= 0 per example as float64 (None: ones; a number: that for all)."""
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(f"sample_weight.shape == {w.shape}, expected ({n},)")
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity")
    if np.any(w < 0):
        raise ValueError("Negative values in data passed to `sample_weight`")
    return w


def target_1d(y):
    """(y as 1-D, "binary" or "multiclass") for a 1-D target of class labels."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead")
    check_label_values(y)
    return y, "binary" if np.unique(y).shape[0] <= 2 else "multiclass"


def check_fitted(model):
    """ValueError unless the model was fitted (or loaded)."""
    if not hasattr(model, "coef_"):
        raise ValueError(f"This {type(model).__name__} instance is not fitted yet. Call 'fit' with appropriate "
                         "arguments before using this model.")


def check_indicator_targets(Y):
    """An indicator matrix's values: checked as 0/1 by the multi-label model itself."""
