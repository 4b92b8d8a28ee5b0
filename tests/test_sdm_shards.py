"""SDM's sharded passes (shards): shards visited concurrently against their own copies of w and
combined by a line search on the dual -- the same result for any n_jobs, the plain method's optimum."""
import numpy as np
import pytest

from ssvmlinear import ChainSSVM, MulticlassSSVM
from ssvmlinear._kernels.sdm import SDMSolver
from ssvmlinear.solvers import SDM, solve

from conftest import random_multiclass
from test_chain_oracles import random_chain_problem
from test_sdm_parallel import chain_data, check_multiclass_and_multilabel_identical_for_any_n_jobs, same_fit


@pytest.mark.parametrize("shards", [2, 3])
def test_results_identical_for_any_n_jobs(shards):
    X, y, lengths = chain_data(seed=1)
    fits = [ChainSSVM(C=0.5, tol=1e-3, solver=SDM(shards=shards), n_jobs=j, random_state=1).fit(X, y, lengths)
            for j in (1, 2, 3)]
    assert fits[0].converged_
    assert same_fit(fits[0], fits[1]) and same_fit(fits[0], fits[2])
    assert np.array_equal(fits[0].transition_, fits[2].transition_)
    check_multiclass_and_multilabel_identical_for_any_n_jobs(shards=shards)


@pytest.mark.parametrize("C", [0.1, 5.0])
def test_shards_reach_the_plain_optimum_on_chains(C):
    st, _, _, lengths, _ = random_chain_problem(3, n_seq=40, max_T=5, K=3)
    Cs = np.full(len(lengths), C)
    ref = solve(SDM(), st, Cs, 1e-9, 100000, 0)
    assert ref.converged
    for shards in (2, 3, 40):          # 40: one example per shard
        for jobs in (1, 2):
            res = solve(SDM(shards=shards), st, Cs, 1e-9, 100000, 0, n_jobs=jobs)
            assert res.converged
            assert res.dual == pytest.approx(ref.dual, rel=1e-8, abs=1e-9)
            assert 0 <= res.gap <= 1e-6 * max(1.0, abs(res.dual))
            np.testing.assert_allclose(res.w, ref.w, atol=1e-4 * max(1.0, np.abs(ref.w).max()))


@pytest.mark.parametrize("C", [0.1, 2.0])
def test_shards_reach_the_plain_multiclass_optimum(C):
    X, y = random_multiclass(n=200, d=8, K=4, seed=7)
    ref = MulticlassSSVM(C=C, tol=1e-8, max_iter=100000).fit(X, y)
    est = MulticlassSSVM(C=C, tol=1e-8, max_iter=100000, solver=SDM(shards=2), n_jobs=2).fit(X, y)
    assert est.converged_
    assert est.dual_objective_ == pytest.approx(ref.dual_objective_, rel=1e-8)
    assert est.objective_ == pytest.approx(ref.objective_, rel=1e-6)
    assert est.gap_ <= 1e-6 * est.objective_


def test_default_rule_and_catalyst_with_shards():
    """At large C the default rule runs accelerated SDM (Catalyst, solver.sigma < 1): the shards'
    line search works on its inner problems too, and the fit meets the 1 % relative gap."""
    X, y, lengths = chain_data(seed=3, n_seq=60)
    tight = ChainSSVM(C=20.0, tol=1e-6, max_iter=100000).fit(X, y, lengths)
    est = ChainSSVM(C=20.0, solver=SDM(shards=2), n_jobs=2).fit(X, y, lengths)
    assert est.converged_
    assert est.gap_ <= 0.01 * est.objective_
    assert tight.objective_ <= est.objective_ <= tight.objective_ * 1.01


def _check_state(solver, Cs):
    """Every example's alphas are >= 0 and sum to C_i, and w is sum alpha dphi."""
    state = solver.get_state()
    sizes, alpha = state["sizes"], state["alpha"]
    assert np.all(alpha >= 0)
    sums = np.add.reduceat(alpha, np.r_[0, np.cumsum(sizes)[:-1]])
    np.testing.assert_allclose(sums, Cs, rtol=1e-12, atol=1e-12)
    w = solver.coef.copy()
    solver.recompute_w()
    np.testing.assert_allclose(solver.coef, w, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("block", [0, 2])
def test_line_search_steps_keep_the_dual_feasible_and_increasing(block):
    """Many shards on a small problem overlap strongly: the combination takes steps < 1, which
    scale every alpha's change (shrinking deferred to members that end at 0) -- alpha stays
    feasible, w consistent with it, and the dual never decreases; in one round per pass (the
    default block is larger than the problem) or in rounds of 6 x 2 examples; and the passes
    reach the plain method's optimum."""
    st, _, _, lengths, _ = random_chain_problem(5, n_seq=30, max_T=5, K=3)
    Cs = np.full(len(lengths), 2.0)
    solver = SDMSolver(st, Cs, 0, n_shards=6, shard_block=block)
    assert solver.shard_block == (block or 256)
    last = solver.dual()
    steps = []
    for p in range(30):
        solver.run_pass(p % 3 == 0, 1e-6)
        steps.append(solver.last_step)
        dual = solver.dual()
        assert dual >= last - 1e-9 * max(1.0, abs(last))
        last = dual
        _check_state(solver, Cs)
    assert min(steps) < 0.99, "no step < 1: the scaled path was not exercised"
    for p in range(3000):
        if solver.run_pass(True, 1e-10) <= 1e-9:
            break
        for _ in range(100):
            if solver.run_pass(False, 1e-10) <= 1e-9:
                break
    ref = solve(SDM(), st, Cs, 1e-9, 100000, 0)
    assert solver.dual() == pytest.approx(ref.dual, rel=1e-8)


def test_parameter_validation():
    X, y = random_multiclass(n=60, d=5, K=3, seed=1)
    assert MulticlassSSVM(solver=SDM(shards=2)).fit(X, y).get_params()["solver__shards"] == 2
    for bad in (0, -1, 1.5, "2"):
        with pytest.raises(ValueError, match="shards"):
            MulticlassSSVM(solver=SDM(shards=bad)).fit(X, y)
    with pytest.raises(ValueError, match="oracle_batch=4 and shards=2"):
        MulticlassSSVM(solver=SDM(shards=2, oracle_batch=4)).fit(X, y)
    with pytest.raises(ValueError, match="n_shards"):
        SDMSolver(random_chain_problem(0)[0], np.ones(3), 0, n_shards=0)
