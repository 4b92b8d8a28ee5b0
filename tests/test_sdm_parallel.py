"""SDM's batched oracle passes (oracle_batch) and their helper threads (n_jobs)."""
import threading

import numpy as np
import pytest

from ssvmlinear import ChainSSVM, MulticlassSSVM, MultiLabelSSVM
from ssvmlinear.solvers import SDM, solve

from conftest import random_multiclass
from test_chain_oracles import random_chain_problem


def chain_data(seed=0, n_seq=40, K=4, d=6):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 7, n_seq)
    n = int(lengths.sum())
    X = rng.standard_normal((n, d))
    y = np.argmax(X[:, :K] + 0.7 * rng.standard_normal((n, K)), axis=1)
    return X, y, lengths


def same_fit(a, b):
    return (np.array_equal(a.coef_, b.coef_) and a.n_iter_ == b.n_iter_
            and a.n_oracle_calls_ == b.n_oracle_calls_ and a.dual_objective_ == b.dual_objective_
            and a.objective_ == b.objective_)


@pytest.mark.parametrize("batch", [1, 5, 64])
def test_chain_results_identical_for_any_n_jobs(batch):
    X, y, lengths = chain_data()
    fits = [ChainSSVM(C=0.5, tol=1e-3, solver=SDM(oracle_batch=batch), n_jobs=j, random_state=1).fit(X, y, lengths)
            for j in (1, 2, 3)]
    assert same_fit(fits[0], fits[1]) and same_fit(fits[0], fits[2])
    assert np.array_equal(fits[0].transition_, fits[1].transition_)


def check_multiclass_and_multilabel_identical_for_any_n_jobs(**params):
    """SDM(**params) (oracle_batch, shards) fits the same multiclass and multi-label models with
    n_jobs = 1 and 2."""
    X, y = random_multiclass(n=300, d=10, K=5, seed=2)
    a, b = (MulticlassSSVM(C=1.0, tol=1e-2, n_jobs=j, solver=SDM(**params)).fit(X, y) for j in (1, 2))
    assert a.converged_ and same_fit(a, b)
    Y = np.zeros((300, 5), dtype=int)
    Y[np.arange(300), y] = 1
    Y[::3, 0] = 1
    a, b = (MultiLabelSSVM(C=1.0, tol=1e-2, n_jobs=j, solver=SDM(**params)).fit(X, Y) for j in (1, 2))
    assert a.converged_ and same_fit(a, b)


@pytest.mark.parametrize("batch", [1, 16])
def test_multiclass_and_multilabel_identical_for_any_n_jobs(batch):
    check_multiclass_and_multilabel_identical_for_any_n_jobs(oracle_batch=batch)


def test_batches_change_the_path_not_the_optimum_on_chains():
    st, _, _, lengths, _ = random_chain_problem(3, n_seq=30, max_T=5, K=3)
    Cs = np.full(len(lengths), 0.5)
    ref = solve(SDM(), st, Cs, 1e-9, 100000, 0)
    assert ref.converged
    for batch in (4, 30, 1000):           # 1000 > n: the whole pass is one block
        for jobs in (1, 2):
            res = solve(SDM(oracle_batch=batch), st, Cs, 1e-9, 100000, 0, n_jobs=jobs)
            assert res.converged
            assert res.dual == pytest.approx(ref.dual, rel=1e-9, abs=1e-9)
            assert 0 <= res.gap <= 1e-6 * max(1.0, abs(res.dual))
    # blocks do change the path: another number of oracle calls than the sequential method
    res = solve(SDM(oracle_batch=30), st, Cs, 1e-9, 100000, 0)
    assert (res.n_oracle_calls, res.n_iter) != (ref.n_oracle_calls, ref.n_iter)


@pytest.mark.parametrize("C", [0.1, 2.0])
def test_batches_reach_the_same_multiclass_optimum(C):
    X, y = random_multiclass(n=200, d=8, K=4, seed=7)
    ref = MulticlassSSVM(C=C, tol=1e-8, max_iter=100000).fit(X, y)
    for batch in (8, 200):
        est = MulticlassSSVM(C=C, tol=1e-8, max_iter=100000, solver=SDM(oracle_batch=batch), n_jobs=2).fit(X, y)
        assert est.converged_
        assert est.dual_objective_ == pytest.approx(ref.dual_objective_, rel=1e-9)
        assert est.objective_ == pytest.approx(ref.objective_, rel=1e-6)
        assert est.gap_ <= 1e-6 * est.objective_


def test_parallel_config_thread_backend_is_used():
    """A thread backend configured by the caller runs the helpers; a process backend cannot share
    the solver's buffers, so threads are used instead -- with the same result in every case."""
    from joblib import parallel_config, register_parallel_backend
    from joblib._parallel_backends import ThreadingBackend

    used = []

    class CountingBackend(ThreadingBackend):
        def submit(self, func, callback=None):
            used.append(threading.get_ident())
            return super().submit(func, callback)

    register_parallel_backend("ssvm-test-counting", CountingBackend)
    X, y, lengths = chain_data(seed=4)
    ref = ChainSSVM(C=0.3, tol=1e-3, solver=SDM(oracle_batch=8), n_jobs=1).fit(X, y, lengths)
    with parallel_config(backend="ssvm-test-counting"):
        other = ChainSSVM(C=0.3, tol=1e-3, solver=SDM(oracle_batch=8), n_jobs=2).fit(X, y, lengths)
    assert used, "the configured backend was not used"
    assert same_fit(ref, other)
    with parallel_config(backend="loky", n_jobs=2):
        other = ChainSSVM(C=0.3, tol=1e-3, solver=SDM(oracle_batch=8), n_jobs=2).fit(X, y, lengths)
    assert same_fit(ref, other)


def test_helpers_stop_when_the_fit_raises():
    X, y, lengths = chain_data(seed=5)
    before = threading.active_count()

    def boom(est):
        raise RuntimeError("stop here")
    with pytest.raises(RuntimeError, match="stop here"):
        ChainSSVM(C=0.3, solver=SDM(oracle_batch=8), n_jobs=2, callback=boom).fit(X, y, lengths)
    for _ in range(200):                    # joblib's pool threads wind down asynchronously
        if threading.active_count() <= before:
            break
        threading.Event().wait(0.01)
    assert threading.active_count() <= before
    est = ChainSSVM(C=0.3, solver=SDM(oracle_batch=8), n_jobs=2).fit(X, y, lengths)
    assert est.converged_


def test_oracle_seconds_and_parameter_validation():
    X, y = random_multiclass(n=100, d=6, K=3, seed=1)
    est = MulticlassSSVM(solver=SDM(oracle_batch=10)).fit(X, y)
    assert est.oracle_seconds_ > 0
    assert est.get_params()["solver__oracle_batch"] == 10
    for bad in (0, -3, 2.5, "8"):
        with pytest.raises(ValueError, match="oracle_batch"):
            MulticlassSSVM(solver=SDM(oracle_batch=bad)).fit(X, y)


def test_kernel_checks_its_block_buffers():
    from ssvmlinear._kernels.sdm import SDMSolver
    st, _, _, lengths, _ = random_chain_problem(0, n_seq=5)
    solver = SDMSolver(st, np.ones(len(lengths)), 0, batch=4, n_threads=2)
    with pytest.raises(ValueError, match="exceeds"):
        solver.run_pass(True, 1e-3, 5)
    with pytest.raises(ValueError, match="tid"):
        solver.team.helper(0)
    solver.team.stop_helpers()
    helper = threading.Thread(target=solver.team.helper, args=(1,))   # returns at once after stop_helpers
    helper.start()
    helper.join(10.0)
    assert not helper.is_alive()


def test_inside_threaded_cross_validation():
    """SDM with helpers inside joblib threads (cross-validation folds, as ssvm-train -v -n does):
    no deadlock whatever joblib gives the nested call, and the same predictions."""
    from ssvmlinear.model_selection import cross_val_predict
    X, y, lengths = chain_data(seed=6)
    est = ChainSSVM(C=0.3, tol=1e-2, solver=SDM(oracle_batch=8), n_jobs=2)
    a = cross_val_predict(est.set_params(n_jobs=1), X, y, 3, seed=0, n_jobs=1, lengths=lengths)
    b = cross_val_predict(est.set_params(n_jobs=2), X, y, 3, seed=0, n_jobs=2, lengths=lengths)
    assert np.array_equal(a, b)


def test_primal_sums_blocks_of_examples_the_same_for_any_n_jobs():
    """The primal's slack terms are summed per block of examples, then the blocks, in order (several
    blocks and a partial last one here): the same bits for any n_jobs, and the Crammer-Singer
    primal of the fitted weights (sample weights, some zero, included)."""
    X, y = random_multiclass(n=1000, d=8, K=4, seed=3)
    sw = np.random.default_rng(3).uniform(0, 2, X.shape[0])
    sw[::7] = 0.0
    fits = [MulticlassSSVM(C=0.3, tol=0.05, fit_intercept=False, n_jobs=j, solver=SDM(oracle_batch=8))
            .fit(X, y, sample_weight=sw)
            for j in (1, 2, 3)]
    assert fits[0].objective_ == fits[1].objective_ == fits[2].objective_
    W = fits[0].coef_
    S = X @ W.T
    rows = np.arange(X.shape[0])
    hinge = np.max(S + (np.arange(4)[None, :] != y[:, None]), axis=1) - S[rows, y]
    reference = 0.5 * np.sum(W * W) + 0.3 * np.sum(sw * hinge)
    assert fits[0].objective_ == pytest.approx(reference, rel=1e-12)


@pytest.mark.parametrize("params", [dict(), dict(batch=8, n_threads=2), dict(n_shards=3, n_threads=2)])
def test_cache_hints_change_nothing(params):
    """The cache hints a visit gives for the visits ahead (rows, and in oracle passes the weights
    they read; by default only for a w larger than a core's cache) are hints: for any distance --
    none, 1, 2, past the end of a pass -- the passes give the same bits (multiclass: its own weight
    hints; chains: the default rows-only hint)."""
    from ssvmlinear._kernels.dataset import CSRDataset
    from ssvmlinear._kernels.multiclass import MulticlassStructure
    from ssvmlinear._kernels.sdm import SDMSolver
    X, y = random_multiclass(n=200, d=30, K=6, density=0.2, seed=4)
    problems = [MulticlassStructure(CSRDataset(X, 1.0), y, 6), random_chain_problem(2, n_seq=25)[0]]
    for st in problems:
        runs = []
        for ahead in (0, 1, 2, 1000):
            solver = SDMSolver(st, np.full(st.n_examples, 0.7), 5, **params)
            solver.cache_ahead = ahead
            solver.hint_weights = True      # (w is small here: off by default)
            for p in range(6):
                solver.run_pass(p % 2 == 0, 1e-4, params.get("batch", 1))
            runs.append((solver.coef.copy(), solver.primal(), solver.dual()))
        assert np.abs(runs[0][0]).max() > 0.0
        for w, primal, dual in runs[1:]:
            assert np.array_equal(w, runs[0][0]) and primal == runs[0][1] and dual == runs[0][2]
