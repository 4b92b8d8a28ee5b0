"""ThreadTeam: the thread team of the solvers' short parallel phases (ssvmlinear/parallel.py)."""
import threading
import time

import joblib
import numpy as np
import pytest

from ssvmlinear.parallel import ThreadTeam


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_results_come_back_in_task_order_and_every_task_runs_once(n_threads):
    calls = []
    with ThreadTeam(n_threads) as team:
        for rep in range(20):
            tasks = [lambda k=k: (calls.append(k), k * k)[1] for k in range(17)]
            assert team.run(tasks) == [k * k for k in range(17)]
    assert sorted(calls) == sorted(list(range(17)) * 20)


def test_tasks_run_on_two_threads_at_once():
    seen, barrier = set(), threading.Barrier(2, timeout=10)

    def task():
        seen.add(threading.get_ident())
        barrier.wait()   # both threads must be inside a task at the same time

    with ThreadTeam(2) as team:
        team.run([task, task])
    assert len(seen) == 2


def test_an_exception_surfaces_after_the_other_tasks_finish():
    done = []

    def bad():
        raise ValueError("boom")

    def slow():
        time.sleep(0.05)
        done.append(1)

    with ThreadTeam(2) as team:
        with pytest.raises(ValueError, match="boom"):
            team.run([bad, slow, slow])
        assert len(done) == 2
        assert team.run([lambda: 1]) == [1]   # the team still works


def test_a_thread_backend_set_by_the_caller_is_used():
    used = []

    from joblib._parallel_backends import ThreadingBackend

    class Recording(ThreadingBackend):
        def submit(self, func, callback=None):
            used.append(1)
            return super().submit(func, callback)

    joblib.register_parallel_backend("recording_threads", Recording)
    with joblib.parallel_config(backend="recording_threads"):
        with ThreadTeam(2) as team:
            assert team.run([lambda: 1, lambda: 2]) == [1, 2]
    assert used


def test_the_cutting_plane_is_identical_for_one_and_two_threads_through_the_team():
    from ssvmlinear import ChainSSVM
    rng = np.random.default_rng(0)
    lengths = rng.integers(2, 6, 40)
    X = rng.standard_normal((lengths.sum(), 5))
    y = rng.integers(0, 3, lengths.sum())
    fits = [ChainSSVM(C=1.0, solver="cutting-plane", loss=loss, n_jobs=j).fit(X, y, lengths)
            for loss in ("margin", "lse") for j in (1, 2)]
    for a, b in (fits[:2], fits[2:]):
        np.testing.assert_array_equal(a.coef_, b.coef_)
        assert a.n_iter_ == b.n_iter_
