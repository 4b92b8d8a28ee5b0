"""The estimators' input checks, in scikit-learn's terms (the scikit-learn side of the package).

The same functions as ssvmlinear.checks (the core models' checks, which ssvm-train and
ssvm-predict run without scikit-learn); an estimator picks this module through its `_checks`.
"""
import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, column_or_1d, validate_data

from .checks import canonical_csr, check_label_values


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
    X = canonical_csr(X if sp.issparse(X) else sp.csr_matrix(X))
    return (X, y) if with_y else X


def check_class_labels(y):
    """scikit-learn's check_classification_targets, float labels first checked by
    checks.check_label_values (scikit-learn's own check casts 2.5 or 1e300 to int64, warning on
    overflow)."""
    check_label_values(y)
    check_classification_targets(y)


def check_sample_weight(sample_weight, n):
    """scikit-learn's sample weights: one finite weight >= 0 per example, float64."""
    return _check_sample_weight(sample_weight, np.empty((n, 0)), dtype=np.float64, ensure_non_negative=True)


def target_1d(y):
    """(y as 1-D, scikit-learn's type of target) for a 1-D target of class labels."""
    y = column_or_1d(y)
    check_class_labels(y)
    return y, type_of_target(y, input_name="y")


def check_indicator_targets(Y):
    """An indicator matrix's values are class labels ("Unknown label type" for continuous ones)."""
    check_classification_targets(Y)


def check_fitted(estimator):
    check_is_fitted(estimator)  # NotFittedError (a ValueError) in scikit-learn's words
