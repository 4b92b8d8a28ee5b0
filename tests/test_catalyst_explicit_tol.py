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
