"""SDM's schedule of type-II passes (solvers.sdm.run_type2_passes) and the objective it measures gains
on (solvers.sdm.ascent_objective), including the scaled subproblems of Catalyst and CoCoA+."""
import numpy as np
import pytest
import scipy.sparse as sp

from ssvmlinear.solvers import sdm
from ssvmlinear._kernels.sdm import SDMSolver
from ssvmlinear.solvers.sdm import ascent_objective, run_type2_passes

from test_chain_oracles import random_chain_problem


class ScriptedSolver:
    """Type-II passes with given (violation, dual after the pass); w = 0, so the dual is the
    linear term."""

    class Store:
        def __init__(self, owner):
            self.owner = owner

        def linear_term(self):
            return self.owner.dual

    def __init__(self, script, dual=0.0):
        self.script = list(script)
        self.dual = dual
        self.sigma = 1.0
        self.coef = np.zeros(3)
        self.ws = self.Store(self)
        self.passes = 0

    def run_pass(self, use_oracle, inner_tol):
        assert not use_oracle
        viol, self.dual = self.script[self.passes]
        self.passes += 1
        return viol


def test_type2_passes_stop_when_their_gain_falls_below_a_fraction_of_the_type1_gain():
    g = sdm.TYPE2_GAIN
    assert 0 < g < 1
    gains = [0.9, 0.5, 1.1 * g, 0.9 * g, 0.8, 0.7]       # of a type-I gain of 100
    duals = 1000 + 100 * np.cumsum(gains)
    seen = []
    s = ScriptedSolver([(1.0, d) for d in duals], dual=1000.0)
    assert run_type2_passes(s, 1e-3, 1e-4, 900.0, 10, seen.append) == 4      # stops after 0.9 g
    assert seen == pytest.approx(duals[:4])
    # the violation rule still stops first; limit and MAX_TYPE2_PASSES cap the passes
    s = ScriptedSolver([(1.0, duals[0]), (1e-3, duals[1])] + [(1.0, d) for d in duals[2:]], dual=1000.0)
    assert run_type2_passes(s, 1e-3, 1e-4, 900.0, 10) == 2
    s = ScriptedSolver([(1.0, 1000.0 + 100 * k) for k in range(1, 30)], dual=1000.0)
    assert run_type2_passes(s, 1e-3, 1e-4, 900.0, 3) == 3
    assert run_type2_passes(s, 1e-3, 1e-4, 900.0, 0) == 0
    s = ScriptedSolver([(1.0, 1000.0 + 100 * k) for k in range(1, 30)], dual=1000.0)
    assert run_type2_passes(s, 1e-3, 1e-4, 900.0, 100) == sdm.MAX_TYPE2_PASSES


@pytest.mark.parametrize("sigma", [1.0, 0.5, 0.1])
def test_ascent_objective_is_the_scaled_subproblem_that_sdm_passes_raise(sigma):
    """With sigma < 1 the solver keeps w = sigma A alpha and its passes ascend
    L(alpha) - sigma/2 |A alpha|^2 = L - |w|^2 / (2 sigma): never down, pass after pass, and equal
    to that expression with A alpha recomputed from the working sets."""
    st, _, _, lengths, _ = random_chain_problem(5, n_seq=30, max_T=5, K=3)
    solver = SDMSolver(st, np.full(len(lengths), 2.0), 3)
    solver.sigma = sigma
    last = ascent_objective(solver)
    assert last == 0.0
    for k in range(12):
        solver.run_pass(k % 3 == 0, 1e-6)
        now = ascent_objective(solver)
        assert now >= last - 1e-9 * abs(now)
        last = now
    assert last > 0
    linear = solver.ws.linear_term()
    solver.recompute_w()                 # A alpha, unscaled
    solver.sigma = 1.0
    Aalpha = solver.coef
    assert last == pytest.approx(linear - 0.5 * sigma * float(Aalpha @ Aalpha), rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1])
def test_pass_slack_is_the_slack_at_the_weights_each_oracle_saw(seed):
    """pass_slack sums C_i max(0, max_y H_i(y)) over a type-I pass's oracle answers: with every
    oracle of the pass asked at the pass's starting weights (one block of all examples) it is
    exactly slack_sum() there."""
    st, _, _, _, _ = random_chain_problem(seed, n_seq=12, max_T=5, K=3, d=4)
    n = st.n_examples
    Cs = np.linspace(0.5, 2.0, n)
    k = SDMSolver(st, Cs, seed, batch=n)
    k.run_pass(True, 1e-3, n)            # w moves away from 0
    k.run_pass(False, 1e-3)
    before = k.slack_sum()
    k.run_pass(True, 1e-3, n)
    assert k.pass_slack == pytest.approx(before, rel=1e-12)
    assert k.pass_slack > 0.0
    k.run_pass(False, 1e-3)              # type-II passes keep the last type-I pass's value
    assert k.pass_slack == pytest.approx(before, rel=1e-12)


def test_the_slack_measurements_count_as_oracle_calls():
    """slack_sum() is an oracle pass over the examples with C_i > 0: its calls and time are the
    fit's oracle calls and time too (oracle_seconds_, n_oracle_calls_)."""
    st, _, _, _, _ = random_chain_problem(0, n_seq=12, max_T=5, K=3, d=4)
    n = st.n_examples
    Cs = np.linspace(0.5, 2.0, n)
    Cs[3] = 0.0
    k = SDMSolver(st, Cs, 0)
    k.run_pass(True, 1e-3)
    calls, seconds = k.n_oracle_calls, k.oracle_seconds
    k.slack_sum()
    assert k.n_oracle_calls == calls + n - 1
    assert k.oracle_seconds > seconds


def test_multiclass_runners_up_grow_with_classes_per_example():
    """SDM's runners-up per multiclass visit: 2 K^2 / n between MIN_RUNNERS_UP and
    EXACT_RUNNERS_UP (few examples per class: many; many: few); none asked, the kernel's default."""
    from ssvmlinear._kernels.dataset import CSRDataset
    from ssvmlinear._kernels.multiclass import MulticlassStructure
    from ssvmlinear.solvers.sdm import EXACT_RUNNERS_UP, MIN_RUNNERS_UP, runners_up

    def structure(n, K):
        X = CSRDataset(sp.random(n, 5, density=0.5, format="csr", random_state=0))
        return MulticlassStructure(X, np.arange(n, dtype=np.int32) % K, K)
    assert runners_up(structure(100, 100), True) == dict(n_runners=EXACT_RUNNERS_UP)
    assert runners_up(structure(4000, 10), True) == dict(n_runners=MIN_RUNNERS_UP)
    assert runners_up(structure(400, 30), True) == dict(n_runners=5)
    assert runners_up(structure(400, 30), False) == {}
