"""No fit returns non-finite weights: extreme feature values (1e+-300, denormals), huge bias and
huge or tiny C either train to finite weights or are refused in one line (ValueError)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, HealthCheck, strategies as st

from ssvmlinear import MulticlassSSVM, ChainSSVM, MultiLabelSSVM, HierarchicalSSVM
from ssvmlinear.exceptions import ConvergenceWarning

VALUES = [1e300, -1e300, 1e200, 1e150, -1e100, 1e-300, 5e-324, -1e-310, 1e-155, 3.0, -1.0]
SOLVERS = [("sdm", "margin"), ("sdcd", "lse"), ("cutting-plane", "margin"), ("cutting-plane", "lse"),
           ("pegasos", "margin"), ("pegasos", "slack"), ("bcfw", "margin")]


def _data(values, n, d, seed):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.6, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    X.data[: len(values)] = values[: X.nnz]
    y = np.arange(n) % 3
    return X, y


def _assert_finite_or_refused(est, fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            fit()
        except ValueError as e:
            assert "\n" not in str(e)
            return
    assert np.all(np.isfinite(est.coef_)), "non-finite coef_"
    assert np.all(np.isfinite(np.atleast_1d(est.intercept_))), "non-finite intercept_"
    for name in ("transition_", "start_", "end_", "pairwise_"):
        if hasattr(est, name):
            assert np.all(np.isfinite(getattr(est, name))), f"non-finite {name}"


common = dict(max_iter=15)
extreme = dict(values=st.lists(st.sampled_from(VALUES), min_size=1, max_size=4),
               bias=st.sampled_from([None, 1.0, 1e100, 1e160, 1e200]),
               C=st.sampled_from([1e-300, 1e-5, 1.0, 1e80, 1e150, 1e300]), seed=st.integers(0, 3))


@pytest.mark.parametrize("solver, loss", SOLVERS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**extreme)
def test_multiclass_weights_finite_or_refused(solver, loss, values, bias, C, seed):
    X, y = _data(values, 12, 5, seed)
    est = MulticlassSSVM(C=C, solver=solver, loss=loss, fit_intercept=bias is not None,
                         intercept_scaling=bias or 1.0, random_state=seed, **common)
    _assert_finite_or_refused(est, lambda: est.fit(X, y))


@pytest.mark.parametrize("solver", ["sdm", "bcfw", "gdmm", "pegasos", "cutting-plane"])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**extreme)
def test_chain_weights_finite_or_refused(solver, values, bias, C, seed):
    X, y = _data(values, 12, 5, seed)
    est = ChainSSVM(C=C, solver=solver, fit_intercept=bias is not None, intercept_scaling=bias or 1.0,
                    random_state=seed, **common)
    _assert_finite_or_refused(est, lambda: est.fit(X, y, [4, 3, 5]))


@pytest.mark.parametrize("edges", [None, "chow-liu"])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**extreme)
def test_multilabel_weights_finite_or_refused(edges, values, bias, C, seed):
    X, y = _data(values, 12, 5, seed)
    Y = np.stack([y == 0, y != 1, np.arange(12) % 2 == 0], axis=1).astype(int)
    est = MultiLabelSSVM(C=C, edges=edges, fit_intercept=bias is not None, intercept_scaling=bias or 1.0,
                         random_state=seed, **common)
    _assert_finite_or_refused(est, lambda: est.fit(X, Y))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**extreme)
def test_hierarchy_weights_finite_or_refused(values, bias, C, seed):
    X, y = _data(values, 12, 5, seed)
    est = HierarchicalSSVM(hierarchy=([0, 0, 1, 1], [1, 2, 3, 4]), C=C, fit_intercept=bias is not None,
                           intercept_scaling=bias or 1.0, random_state=seed, **common)
    _assert_finite_or_refused(est, lambda: est.fit(X, np.array([2, 3, 4])[y]))


def test_overflowing_values_are_refused_naming_row_and_column():
    X = sp.csr_matrix(np.array([[1e300, 1.0, 0.0], [-1e300, 0.0, 1.0], [0.0, 1e300, 0.0], [1.0, 0.0, 0.0]]))
    y = np.array([1, 2, 3, 1])
    with pytest.raises(ValueError, match=r"row 0, column 0: value 1e\+300 is too large"):
        MulticlassSSVM(fit_intercept=False).fit(X, y)


def test_huge_bias_and_huge_C_are_refused():
    X = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [-1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]))
    y = np.array([1, 2, 3, 1])
    with pytest.raises(ValueError, match=r"the bias feature 1e\+200 \(intercept_scaling, -B\) is too large"):
        MulticlassSSVM(intercept_scaling=1e200).fit(X, y)
    with pytest.raises(ValueError, match=r"C = 1e\+300 with these features lets the training objective overflow"):
        MulticlassSSVM(C=1e300).fit(X, y)


def test_denormal_rows_train_to_finite_weights():
    # every value of the first rows underflows when squared: a zero Gram diagonal for a non-zero row
    X = sp.csr_matrix(np.array([[5e-324, 0.0], [0.0, -1e-310], [1.0, 0.0], [0.0, 1.0]]))
    y = np.array([0, 1, 0, 1])
    for solver, loss in SOLVERS:
        est = MulticlassSSVM(solver=solver, loss=loss, max_iter=20)
        _assert_finite_or_refused(est, lambda: est.fit(X, y))
        assert np.all(np.isfinite(est.coef_))
