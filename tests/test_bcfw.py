"""BCFW (solver='bcfw', -s 5): its optimum equals SDM's and an explicit QP's on every structure;
its dual never decreases; warm starts continue; the CLI trains it."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from ssvmlinear import ChainSSVM, HierarchicalSSVM, MulticlassSSVM, MultiLabelSSVM
from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.bcfw import BCFWSolver
from ssvmlinear._kernels.multiclass import MulticlassStructure
from ssvmlinear.solvers import BCFW, SDM, solve

from test_multilabel import random_multilabel
from test_multilabel_pairwise import EDGES, feature_rows, qp_reference, primal
from test_hierarchy import synthetic


def test_bcfw_equals_the_qp_on_pairwise_multilabel():
    X, Y = random_multilabel(n=12, d=3, K=3, seed=0)
    # Frank-Wolfe converges as O(1/t): a relative tolerance of 1e-5 on the block gaps
    est = MultiLabelSSVM(C=0.5, edges=EDGES, solver="bcfw", tol=1e-5, max_iter=100000, fit_intercept=False,
                         random_state=0).fit(X, Y)
    rows = feature_rows(X, Y, EDGES, -1.0)
    ref, w = qp_reference(rows, np.full(12, 0.5), lse=False)
    assert est.converged_ and primal(est, rows, np.full(12, 0.5), False) == pytest.approx(ref, rel=1e-4)
    assert est.dual_objective_ <= ref * (1 + 1e-9) and est.dual_objective_ == pytest.approx(ref, rel=1e-4)
    assert est.objective_ >= ref * (1 - 1e-9)


@pytest.mark.parametrize("away_steps", [False, True])
def test_bcfw_moves_an_example_without_features(away_steps):
    """An all-zero row has no curvature along any step: the dual rises linearly towards the
    oracle's label and the whole step is taken (it once took none, leaving its gap C_i open)."""
    rng = np.random.default_rng(4)
    X = sp.random(60, 8, density=0.4, format="csr", random_state=4).tolil()
    X[7, :] = 0.0
    X = X.tocsr()
    y = rng.integers(0, 4, 60)
    st = MulticlassStructure(CSRDataset(X, -1.0), y.astype(np.int32), 4)
    ref = MulticlassSSVM(C=1.0, tol=1e-7, max_iter=20000, fit_intercept=False).fit(X, y)
    k = BCFWSolver(st, np.full(60, 1.0), 0)
    k.away_steps = away_steps
    for _ in range(3000):
        gaps = k.run_pass()
    assert k.dual() == pytest.approx(ref.dual_objective_, rel=1e-4)
    assert gaps < 1e-3 * k.dual()


@pytest.mark.parametrize("make", ["multiclass", "chain", "hierarchy"])
def test_bcfw_reaches_sdms_optimum(make):
    rng = np.random.default_rng(1)
    if make == "multiclass":
        X = sp.random(200, 20, density=0.3, format="csr", random_state=1)
        y = rng.integers(0, 5, 200)
        a = MulticlassSSVM(C=0.3, solver="bcfw", tol=1e-5, max_iter=50000).fit(X, y)
        b = MulticlassSSVM(C=0.3, tol=1e-7, max_iter=20000).fit(X, y)
    elif make == "chain":
        lengths = rng.integers(2, 6, 40)
        X = sp.random(int(lengths.sum()), 10, density=0.4, format="csr", random_state=2)
        y = rng.integers(0, 4, int(lengths.sum()))
        a = ChainSSVM(C=0.3, solver="bcfw", tol=1e-5, max_iter=50000).fit(X, y, lengths)
        b = ChainSSVM(C=0.3, tol=1e-7, max_iter=20000).fit(X, y, lengths)
    else:
        h, X, y = synthetic(3, n=150)
        a = HierarchicalSSVM(h, model="nhsvm", C=0.3, solver="bcfw", tol=1e-5, max_iter=50000).fit(X, y)
        b = HierarchicalSSVM(h, model="nhsvm", C=0.3, tol=1e-7, max_iter=20000).fit(X, y)
    assert a.converged_ and b.converged_
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-4)
    assert a.gap_ <= 1e-4 * abs(a.objective_)
    assert np.all(np.diff(a.dual_curve_) >= -1e-9 * abs(a.dual_curve_[-1]))      # exact line search


def test_bcfw_warm_start_and_cli(tmp_path, capsys):
    from ssvmlinear import dump_svmlight_file
    from ssvmlinear.cli import train_main
    rng = np.random.default_rng(4)
    X = sp.random(150, 15, density=0.3, format="csr", random_state=4)
    y = rng.integers(0, 4, 150)
    est = MulticlassSSVM(C=0.2, solver="bcfw", warm_start=True, tol=1e-5, max_iter=50000).fit(X, y)
    first = est.n_iter_
    est.set_params(C=0.4).fit(X, y)
    cold = MulticlassSSVM(C=0.4, solver="bcfw", tol=1e-5, max_iter=50000).fit(X, y)
    assert est.objective_ == pytest.approx(cold.objective_, rel=1e-4) and first > 0
    f = tmp_path / "d.svm"
    dump_svmlight_file(X, y, f)
    assert train_main(["-s", "5", "-t", "multiclass", "-c", "0.2", str(f), str(tmp_path / "m")]) == 0
    assert "passes" in capsys.readouterr().out


@pytest.mark.parametrize("make", ["multilabel", "multiclass", "chain"])
@pytest.mark.parametrize("loss, search", [("slack", "angular"), ("slack", "exact"), ("beta:0.5", "exact"),
                                          ("generalized:0.5,1", "angular")])
def test_bcfw_with_surrogates_reaches_the_cutting_planes_optimum(make, loss, search):
    """BCFW over the surrogate's corners (BCFW-SR for slack rescaling): its dual bounds the
    optimum of the same surrogate found by the cutting plane with the exact search from below,
    its primal (measured with the exact search) from above, and both are within 0.1 % of it;
    its dual never decreases."""
    from ssvmlinear.solvers import CuttingPlane
    rng = np.random.default_rng(3)
    if make == "multilabel":
        X, Y = random_multilabel(n=60, d=6, K=4, seed=1)
        args, Est = (X, Y), MultiLabelSSVM
    elif make == "multiclass":
        X = sp.random(80, 8, density=0.5, format="csr", random_state=2)
        args, Est = (X, rng.integers(0, 4, 80)), MulticlassSSVM
    else:
        from test_convergence_large_c import random_chains
        X, y, lengths = random_chains(n_seq=25, max_T=4, K=3, d=6, seed=3)
        args, Est = (X, y, lengths), ChainSSVM
    ref = Est(C=1.0, loss=loss, solver=CuttingPlane(search="exact"), tol=1e-6, max_iter=5000).fit(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Est(C=1.0, loss=loss, solver=BCFW(search=search), tol=1e-5, max_iter=3000).fit(*args)
    optimum = ref.dual_objective_
    assert ref.objective_ - optimum <= 1e-6 * optimum
    assert est.dual_objective_ <= ref.objective_ * (1 + 1e-9)
    assert est.objective_ >= optimum * (1 - 1e-9)
    assert est.dual_objective_ >= optimum * (1 - 1e-3) and est.objective_ <= optimum * (1 + 1e-3)
    assert np.all(np.diff(est.dual_curve_) >= -1e-9 * abs(optimum))


def test_bcfw_refuses_surrogates_it_cannot_train():
    X, y = np.eye(3), np.arange(3)
    for loss, solver, match in [("logloss", BCFW(), "linear in the margin"),
                                ("probloss-convex", BCFW(), "linear in the margin"),
                                ("slack", BCFW(search="hull"), "search")]:
        with pytest.raises(ValueError, match=match):
            MulticlassSSVM(loss=loss, solver=solver).fit(X, y)
