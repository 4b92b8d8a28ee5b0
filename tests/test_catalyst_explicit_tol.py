"""An explicit tol at large C: SDM runs inside Catalyst too, and its KKT rule keeps its meaning
(measured by a pass of the original problem, the model then being that pass's weights)."""
import warnings

import numpy as np

from ssvmlinear import ChainSSVM, ConvergenceWarning, MulticlassSSVM, load_svmlight_file
from ssvmlinear.solvers import catalyst

from conftest import DATA, random_multiclass


def test_explicit_tol_at_large_c_gets_near_the_optimum(monkeypatch):
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters_test.svm.gz", n_features=128)
    default = ChainSSVM(C=10.0).fit(X, y, lengths)          # Catalyst, relative gap <= 1 %
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        accelerated = ChainSSVM(C=10.0, tol=0.1, max_iter=300).fit(X, y, lengths)
        monkeypatch.setattr(catalyst, "CATALYST_SCALE", float("inf"))     # the plain method
        plain = ChainSSVM(C=10.0, tol=0.1, max_iter=300).fit(X, y, lengths)
    assert accelerated.objective_ <= 1.1 * default.objective_
    assert plain.objective_ > 1.5 * default.objective_


def test_the_kkt_rule_ends_an_accelerated_fit_on_a_primal_dual_pair():
    X, y = random_multiclass(n=300, d=30, K=5, density=0.3, seed=4)
    assert 100.0 * X.multiply(X).sum(axis=1).mean() > catalyst.CATALYST_SCALE   # Catalyst runs
    # (tol = 0.1 at C = 100 asks for a relative gap near 1e-4 here: thousands of passes)
    est = MulticlassSSVM(C=100.0, tol=0.1, fit_intercept=False, max_iter=20000).fit(X, y)
    assert est.converged_
    # objective_ is the primal of the returned weights (the KKT pass's v, not Catalyst's w_k)
    W = est.coef_
    margins = X @ W.T
    loss = np.maximum(0.0, (1.0 - np.eye(5)[np.searchsorted(est.classes_, y)]) + margins
                      - margins[np.arange(len(y)), np.searchsorted(est.classes_, y)][:, None]).max(axis=1)
    primal = 0.5 * float(np.sum(W * W)) + 100.0 * float(loss.sum())
    np.testing.assert_allclose(est.objective_, primal, rtol=1e-9)
    assert est.dual_objective_ <= est.objective_


def test_a_loose_explicit_tol_at_large_c_still_reaches_the_optimum():
    """Each centre's passes run at a tolerance that lets them reach its gap target (a fixed one,
    0.1 tol, once stalled the centres at a gap of the order of tol times sum C_i); when the KKT
    rule holds at a v whose own gap is wide, the model is the centre's w_k."""
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters_test.svm.gz", n_features=128)
    default = ChainSSVM(C=10.0).fit(X, y, lengths)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        loose = ChainSSVM(C=10.0, tol=4.0, max_iter=1000).fit(X, y, lengths)
    assert loose.converged_
    assert loose.objective_ <= 1.01 * default.objective_
    assert 0.0 <= loose.objective_ - loose.dual_objective_ <= 0.01 * loose.objective_


def small_chains(seed=2, n_seq=60):
    """Random chains of 3 tags whose C R^2 puts SDM inside Catalyst at C = 50."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 7, n_seq)
    n = int(lengths.sum())
    X = rng.standard_normal((n, 6))
    y = np.argmax(X[:, :3] + 0.8 * rng.standard_normal((n, 3)), axis=1)
    return X, y, lengths


TOLS = (0.1, 0.5, 2.0, 1000.0)


def test_an_explicit_tol_at_large_c_stops_where_the_default_rule_does_and_no_later_when_looser():
    """A tol at or above SDM's default_tol stops on the default fit's relative gap rule too (within
    max_iter wherever the default fit stops), and a looser tol never takes more passes."""
    X, y, lengths = small_chains()
    C = 50.0
    default = ChainSSVM(C=C, max_iter=3000).fit(X, y, lengths)
    assert default.converged_
    passes = []
    for tol in TOLS:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            est = ChainSSVM(C=C, tol=tol, max_iter=3000).fit(X, y, lengths)
        assert est.converged_
        assert est.objective_ - est.dual_objective_ <= 0.01 * est.objective_
        passes.append(est.n_iter_)
    assert passes == sorted(passes, reverse=True)


def test_a_looser_explicit_tol_never_takes_more_passes_multiclass():
    X, y = random_multiclass(n=300, d=30, K=5, density=0.3, seed=4)
    passes = []
    for tol in (0.02, 0.05, 0.1, 1.0, 10.0):
        est = MulticlassSSVM(C=100.0, tol=tol, fit_intercept=False, max_iter=20000).fit(X, y)
        assert est.converged_
        passes.append(est.n_iter_)
    assert passes == sorted(passes, reverse=True)
    assert passes[0] > passes[-1]        # a tight tol still asks for more
