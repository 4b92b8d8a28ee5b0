"""Pegasos SGD: reaches the optimum of the exact solvers; every surrogate and search trains."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from ssvmlinear import ChainSSVM, MulticlassSSVM
from ssvmlinear.exceptions import ConvergenceWarning
from ssvmlinear.solvers import Pegasos


def chain_data(seed=0, n_seq=40, K=3, d=6):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 6, n_seq)
    n = int(lengths.sum())
    y = rng.integers(0, K, n)
    X = sp.random(n, d, density=0.5, random_state=seed, format="csr", data_rvs=rng.standard_normal)
    X = sp.csr_matrix(X.toarray() + np.eye(K, d)[y] * 1.5)
    return X, y, lengths


def test_pegasos_margin_reaches_sdm_objective():
    X, y, lengths = chain_data()
    sdm = ChainSSVM(C=0.1, solver="sdm", tol=1e-6, max_iter=5000).fit(X, y, lengths)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        peg = ChainSSVM(C=0.1, solver="pegasos", loss="margin", max_iter=300, tol=1e-12,
                        random_state=0).fit(X, y, lengths)
    assert peg.objective_ >= sdm.objective_ - 1e-6 * abs(sdm.objective_)   # SDM is optimal
    assert peg.objective_ <= sdm.objective_ * 1.02


@pytest.mark.parametrize("loss", ["slack", "beta:0.5", "probloss", "logloss"])
def test_pegasos_searches_reach_exact_search_objective(loss):
    X, y, lengths = chain_data(1)
    objs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for search in ("exact", "angular", "hull-integral", "hull"):
            m = ChainSSVM(C=0.1, solver=Pegasos(search=search), loss=loss, max_iter=60,
                          tol=1e-12, random_state=0).fit(X, y, lengths)
            objs[search] = m.objective_
            assert m.score(X, y, lengths) > 0.5
    # angular stops within 0.1 % of the argmax (the paper's rule): nearly the same trajectory
    assert objs["angular"] == pytest.approx(objs["exact"], rel=0.01)
    # integral hull answers train to nearly the same objective; the relaxed hull optimum is an
    # upper bound of each example's loss (the maximum over the labels' convex hull)
    assert objs["hull-integral"] == pytest.approx(objs["exact"], rel=0.05)
    assert objs["exact"] * 0.98 <= objs["hull"] <= objs["exact"] * 1.15


def test_pegasos_n_jobs_and_batches_deterministic():
    X, y, lengths = chain_data(2)
    kw = dict(C=0.1, solver=Pegasos(search="hull", batch_size=16), loss="slack", max_iter=5, tol=1e-12,
              random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = ChainSSVM(n_jobs=1, **kw).fit(X, y, lengths)
        b = ChainSSVM(n_jobs=2, **kw).fit(X, y, lengths)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.transition_, b.transition_)


def test_pegasos_multiclass_and_options():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5))
    y = np.argmax(X[:, :3], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sdm = MulticlassSSVM(C=1.0, tol=1e-6).fit(X, y)
        for avg, proj in ((True, False), (False, True)):
            m = MulticlassSSVM(C=1.0, solver=Pegasos(average=avg, projection=proj), max_iter=200, tol=1e-12,
                               random_state=0).fit(X, y)
            assert m.objective_ <= sdm.objective_ * 1.1
        m = MulticlassSSVM(C=1.0, solver=Pegasos(search="angular"), loss="slack", max_iter=20).fit(X, y)
        assert m.score(X, y) > 0.9
    with pytest.raises(ValueError, match="loss"):
        MulticlassSSVM(solver="pegasos", loss="beta:3").fit(X, y)
    with pytest.raises(ValueError, match="search"):
        MulticlassSSVM(solver=Pegasos(search="golden")).fit(X, y)
    with pytest.raises(ValueError, match="not available"):
        MulticlassSSVM(solver="sdm", loss="slack").fit(X, y)


def test_pegasos_projection_with_averaging_stays_finite():
    """Projection shrinks the scale of w = scale * v every step; the averaged iterate must stay
    well conditioned (regression: the running sum once overflowed)."""
    X, y, lengths = chain_data(4)
    sdm = ChainSSVM(C=0.02, solver="sdm", tol=1e-6, max_iter=5000).fit(X, y, lengths)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        peg = ChainSSVM(C=0.02, solver=Pegasos(projection=True, average=True), max_iter=200,
                        tol=1e-12, random_state=0).fit(X, y, lengths)
    assert np.all(np.isfinite(peg.coef_))
    assert sdm.objective_ - 1e-6 <= peg.objective_ <= sdm.objective_ * 1.05
