"""At the largest C of the convergence benchmark (C = 10) every dual solver's default fit
converges on a small problem: its rule fires before max_iter and the relative duality gap of the
problem it solves is at most 1 % (benchmarks/convergence.py measures the same on OCR and scene)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from ssvmlinear import ChainSSVM, ConvergenceWarning, MulticlassSSVM, MultiLabelSSVM

from conftest import random_multiclass

SOLVERS = [("sdm", "margin"), ("sdcd", "lse"), ("cutting-plane", "margin"), ("cutting-plane", "lse"),
           ("gdmm", "margin")]


def random_chains(n_seq=40, max_T=6, K=4, d=12, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, max_T + 1, n_seq)
    n = int(lengths.sum())
    X = sp.random(n, d, density=0.5, random_state=seed, format="csr", data_rvs=rng.standard_normal)
    y = np.argmax(X @ rng.standard_normal((d, K)) + 0.7 * rng.standard_normal((n, K)), axis=1)
    return X, y, lengths


def random_multilabel(n=80, d=10, L=5, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.5, random_state=seed, format="csr", data_rvs=rng.standard_normal)
    Y = (X @ rng.standard_normal((d, L)) + 0.5 * rng.standard_normal((n, L)) > 0.3).astype(int)
    return X, Y


def converged_fit(est, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(*args)
    gap = (est.objective_ - est.dual_objective_) / abs(est.objective_)
    assert est.converged_ and est.n_iter_ < est.max_iter
    assert -1e-9 <= gap <= 0.01
    return est


@pytest.mark.parametrize("solver, loss", SOLVERS)
def test_chains_at_large_c(solver, loss):
    X, y, lengths = random_chains()
    converged_fit(ChainSSVM(C=10.0, solver=solver, loss=loss), X, y, lengths)


@pytest.mark.parametrize("solver, loss", SOLVERS)
def test_multiclass_at_large_c(solver, loss):
    X, y = random_multiclass(n=150, d=10, K=5, seed=3)
    converged_fit(MulticlassSSVM(C=10.0, solver=solver, loss=loss, fit_intercept=False), X, y)


@pytest.mark.parametrize("solver, loss", SOLVERS)
def test_multilabel_at_large_c(solver, loss):
    X, Y = random_multilabel()
    converged_fit(MultiLabelSSVM(C=10.0, solver=solver, loss=loss), X, Y)


def test_lse_sdcd_with_an_explicit_tol_at_large_c_runs_accelerated_and_keeps_its_rule():
    """At C R^2 above Catalyst's scale LSE-SDCD runs inside Catalyst; an explicit tol still means
    its own rule (a type-I pass whose dual changes are all at most tol), measured on the original
    problem, and the fit ends on a primal-dual pair of the problem over its working sets. (The
    rule bounds no gap: at tol = 1e-6 the plain method stops at a similar one.)"""
    from ssvmlinear.solvers import catalyst
    X, y, lengths = random_chains()
    est = ChainSSVM(C=10.0, solver="sdcd", loss="lse", tol=1e-6, max_iter=5000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(X, y, lengths)
    assert est.converged_
    assert 0.0 <= est.objective_ - est.dual_objective_ <= 0.01 * est.objective_
    assert catalyst.catalyst_kappa(*_structure_and_cs(est, X, y, lengths)) > 0


def _structure_and_cs(est, X, y, lengths):
    from ssvmlinear._kernels.chain import ChainStructure
    from ssvmlinear._kernels.dataset import CSRDataset
    st = ChainStructure(CSRDataset(sp.csr_matrix(X), -1.0), np.asarray(y, dtype=np.int32), lengths, 4, False, False)
    return st, np.full(len(lengths), est.C)


def test_accelerated_lse_sdcd_and_gdmm_reach_independent_optima_at_large_c():
    """At C = 10, LSE-SDCD inside Catalyst (exact violators, tight tol) reaches the full LSE
    optimum the LSE cutting plane reaches, and GDMM's default fit, stopped by its gap check, is
    within 1 % of SDM's margin-rescaling optimum."""
    from ssvmlinear.solvers import GDMM, SDCD, CuttingPlane
    X, y, lengths = random_chains(n_seq=12, max_T=4, K=3, d=8, seed=5)
    sdcd = ChainSSVM(C=10.0, loss="lse", solver=SDCD(exact_violators=True), tol=1e-12, max_iter=100000)
    cp = ChainSSVM(C=10.0, loss="lse", solver=CuttingPlane(exact_violators=True), tol=1e-7, max_iter=10000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sdcd.fit(X, y, lengths)
        cp.fit(X, y, lengths)
    assert cp.converged_
    assert sdcd.dual_objective_ == pytest.approx(cp.dual_objective_, rel=1e-4)
    sdm = ChainSSVM(C=10.0, tol=1e-8, max_iter=100000).fit(X, y, lengths)
    gdmm = converged_fit(ChainSSVM(C=10.0, solver=GDMM()), X, y, lengths)
    assert sdm.dual_objective_ - 1e-9 <= gdmm.objective_ <= 1.01 * sdm.objective_


def test_gdmm_on_chains_at_large_c_converges_inside_catalyst():
    """GDMM's chain kernel runs inside Catalyst at large C (its augmented Lagrangian's weight
    scaled by sqrt(sigma)); the plain method stops at max_iter here with a relative gap of
    about 8 %. The reported dual stays a bound (below the optimum)."""
    X, y, lengths = random_chains(n_seq=200, max_T=8, K=6, d=30)
    ref = ChainSSVM(C=10.0, tol=1e-8, max_iter=50000).fit(X, y, lengths)
    est = converged_fit(ChainSSVM(C=10.0, solver="gdmm", max_iter=1000), X, y, lengths)
    assert ref.objective_ <= est.objective_ <= 1.01 * ref.objective_
    assert np.all(np.asarray(est.dual_curve_) <= ref.objective_ * (1 + 1e-9))
