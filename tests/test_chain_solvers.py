"""SDM and LSE-SDCD on tiny chains: optima vs an independent QP over all enumerated labellings."""
import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.chain import ChainStructure
from ssvmlinear.solvers import SDCD, SDM, solve

from test_chain_oracles import random_chain_problem, phi


def enumerate_dphi(st, D, y, lengths, K, start_end=False, bias=-1.0):
    """Per example: the matrix of dphi_i(y) over all labellings and their Hamming losses."""
    starts = np.concatenate([[0], np.cumsum(lengths)])
    out = []
    for i in range(len(lengths)):
        Di, yi = D[starts[i]:starts[i + 1]], y[starts[i]:starts[i + 1]]
        labels = [np.array(c, dtype=np.int32) for c in itertools.product(range(K), repeat=len(yi))]
        p_true = phi(Di, yi, K, start_end, bias)
        F = np.array([p_true - phi(Di, lab, K, start_end, bias) for lab in labels])
        loss = np.array([st.py_loss(i, lab) for lab in labels])
        out.append((F, loss))
    return out


def lse_reference(blocks, C):
    """OP3: min 1/2 ||sum alpha dphi||^2 - sum alpha l, 0 <= alpha <= C, by L-BFGS-B (a box QP)."""
    F = np.vstack([b[0] for b in blocks])
    l = np.concatenate([b[1] for b in blocks])

    def fun(a):
        w = F.T @ a
        return 0.5 * w @ w - l @ a, F @ w - l
    res = minimize(fun, np.zeros(len(l)), jac=True, method="L-BFGS-B", bounds=[(0, C)] * len(l),
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20000, "maxfun": 50000})
    w = F.T @ res.x
    return -res.fun, w


def lse_primal(w, blocks, C):
    return 0.5 * w @ w + C * sum(np.maximum(0.0, l - F @ w).sum() for F, l in blocks)


def lme_primal(w, blocks, C):
    return 0.5 * w @ w + C * sum(np.max(l - F @ w) for F, l in blocks)


def lme_reference(blocks, C):
    """OP1-Dual: min 1/2||sum alpha dphi||^2 - sum alpha l over simplices sum_y alpha_i(y) = C (SLSQP)."""
    F = np.vstack([b[0] for b in blocks])
    l = np.concatenate([b[1] for b in blocks])
    sizes = [len(b[1]) for b in blocks]
    offs = np.concatenate([[0], np.cumsum(sizes)])
    cons = [{"type": "eq", "fun": (lambda a, s=s, e=e: a[s:e].sum() - C),
             "jac": (lambda a, s=s, e=e: np.r_[np.zeros(s), np.ones(e - s), np.zeros(len(l) - e)])}
            for s, e in zip(offs[:-1], offs[1:])]
    a0 = np.concatenate([np.full(n, C / n) for n in sizes])
    res = minimize(lambda a: 0.5 * (F.T @ a) @ (F.T @ a) - l @ a, a0, jac=lambda a: F @ (F.T @ a) - l,
                   bounds=[(0, C)] * len(l), constraints=cons, method="SLSQP",
                   options={"ftol": 1e-14, "maxiter": 5000})
    return -res.fun, F.T @ res.x


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("C", [0.1, 1.0])
def test_lse_sdcd_reaches_the_op3_optimum(seed, C):
    K = 2 if seed % 2 else 3
    st, D, y, lengths, _ = random_chain_problem(seed, n_seq=4, max_T=3, K=K)
    blocks = enumerate_dphi(st, D, y, lengths, K)
    ref_dual, ref_w = lse_reference(blocks, C)
    res = solve(SDCD(exact_violators=True), st, np.full(len(lengths), C), 1e-14, 100000, seed, loss="lse")
    assert res.converged
    assert res.dual == pytest.approx(ref_dual, rel=1e-6)
    # duality gap of the LSE problem over all labellings
    assert lse_primal(res.w, blocks, C) == pytest.approx(res.dual, rel=1e-6)
    np.testing.assert_allclose(res.w, ref_w, atol=1e-4)


def test_paper_variant_without_exact_violators_can_stop_short():
    """Alg. 2 as printed (argmax only) solves the reduced OP5: its dual is never above OP3's."""
    gaps = []
    for seed in range(5):
        st, D, y, lengths, _ = random_chain_problem(seed, n_seq=4, max_T=3, K=3)
        blocks = enumerate_dphi(st, D, y, lengths, 3)
        ref_dual, _ = lse_reference(blocks, 1.0)
        res = solve(SDCD(exact_violators=False), st, np.full(len(lengths), 1.0), 1e-14, 100000, seed, loss="lse")
        assert res.dual <= ref_dual * (1 + 1e-9)
        gaps.append((ref_dual - res.dual) / ref_dual)
    assert max(gaps) > 0.01  # and on these seeds it stops more than 1% short of OP3


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("C", [0.1, 1.0])
def test_sdm_on_chains_reaches_the_op1_optimum(seed, C):
    K = 2 if seed % 2 else 3
    st, D, y, lengths, _ = random_chain_problem(seed, n_seq=4, max_T=3, K=K)
    blocks = enumerate_dphi(st, D, y, lengths, K)
    ref_dual, ref_w = lme_reference(blocks, C)
    res = solve(SDM(), st, np.full(len(lengths), C), 1e-10, 100000, seed)
    assert res.converged
    assert res.dual == pytest.approx(ref_dual, rel=1e-6)
    assert res.primal == pytest.approx(lme_primal(res.w, blocks, C), rel=1e-10)
    assert res.gap <= 1e-6 * abs(res.primal)


def test_start_end_and_normalized_loss_chains():
    st, D, y, lengths, _ = random_chain_problem(7, n_seq=3, max_T=3, K=2, start_end=True, normalize=True)
    blocks = enumerate_dphi(st, D, y, lengths, 2, start_end=True)
    ref_dual, _ = lse_reference(blocks, 0.5)
    res = solve(SDCD(exact_violators=True), st, np.full(len(lengths), 0.5), 1e-14, 100000, 0, loss="lse")
    assert res.dual == pytest.approx(ref_dual, rel=1e-6)
    ref_dual, _ = lme_reference(blocks, 0.5)
    res = solve(SDM(), st, np.full(len(lengths), 0.5), 1e-10, 100000, 0)
    assert res.dual == pytest.approx(ref_dual, rel=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_accelerated_sdm_at_large_C_reaches_the_op1_optimum(seed):
    """Default fits at large C run SDM inside Catalyst (prox centres, Nesterov extrapolation): the
    reported objectives are the true primal of the returned w (over all labellings) and a dual
    bound, and a tight gap tolerance reaches the SLSQP optimum."""
    from ssvmlinear.solvers.catalyst import CATALYST_SCALE, catalyst_kappa
    K = 2 if seed % 2 else 3
    st, D, y, lengths, _ = random_chain_problem(seed, n_seq=4, max_T=3, K=K)
    blocks = enumerate_dphi(st, D, y, lengths, K)
    C = 10 * CATALYST_SCALE / (np.sum(st.X.sqnorms) / len(lengths))     # C R^2 = 10 CATALYST_SCALE
    Cs = np.full(len(lengths), C)
    assert catalyst_kappa(st, Cs) == pytest.approx(9.0)
    ref_dual, ref_w = lme_reference(blocks, C)
    res = solve(SDM(), st, Cs, 0.1, 100000, seed, gap_tol=0.01)
    assert res.converged and res.gap <= 0.01 * res.primal
    assert res.primal == pytest.approx(lme_primal(res.w, blocks, C), rel=1e-10)
    assert res.dual <= ref_dual * (1 + 1e-9) and res.primal >= ref_dual * (1 - 1e-9)
    tight = solve(SDM(), st, Cs, 0.1, 100000, seed, gap_tol=1e-7)
    assert tight.converged
    assert tight.dual == pytest.approx(ref_dual, rel=1e-6)
    assert tight.primal == pytest.approx(lme_primal(tight.w, blocks, C), rel=1e-10)
    np.testing.assert_allclose(tight.w, ref_w, atol=1e-3 * np.linalg.norm(ref_w))
    plain = solve(SDM(), st, Cs, 1e-10, 100000, seed)         # an explicit tol: the plain method
    assert plain.dual == pytest.approx(ref_dual, rel=1e-6)


def test_sdm_warm_start_scales_w_by_the_dual_line_search_when_C_grows_and_by_C_when_it_shrinks():
    """A larger C scales the alphas by the best s in [1, min C_new / C_old] for the new dual and
    puts the rest of the mass on alpha_i(y_i) (dphi = 0): w = s w_old; a smaller C scales the
    alphas (w scales); sum_y alpha_i(y) = C_i either way."""
    from ssvmlinear._kernels.sdm import SDMSolver
    st, D, y, lengths, _ = random_chain_problem(3, n_seq=6, max_T=4, K=3)
    n = len(lengths)
    res = solve(SDM(), st, np.full(n, 1.0), 1e-6, 10000, 0, keep_state=True)
    state = res.state
    up = np.linspace(2.0, 5.0, n)
    s = SDMSolver(st, up, 0)
    s.set_state(state, up)
    L, ww = float(state["alpha"] @ state["loss"]), float(res.w @ res.w)
    best = min(max(L / ww, 1.0), 2.0)                   # the cap: the smallest ratio, 2.0 / 1.0
    np.testing.assert_allclose(s.coef, best * res.w, rtol=0, atol=1e-12)
    assert s.dual() == pytest.approx(best * L - 0.5 * best ** 2 * ww, rel=1e-12)
    sizes = s.working_set_sizes()
    sums = np.add.reduceat(s.get_state()["alpha"], np.r_[0, np.cumsum(sizes)[:-1]])
    np.testing.assert_allclose(sums, up, rtol=1e-12)
    s = SDMSolver(st, np.full(n, 0.25), 0)
    s.set_state(state, np.full(n, 0.25))
    np.testing.assert_allclose(s.coef, 0.25 * res.w, rtol=1e-12, atol=1e-12)
    # and the warm fit at the larger C reaches the cold optimum
    warm = solve(SDM(), st, up, 1e-8, 100000, 0, state=state)
    cold = solve(SDM(), st, up, 1e-8, 100000, 0)
    assert warm.dual == pytest.approx(cold.dual, rel=1e-6)
