"""The kernels' thread team (_kernels/core/team.pyx, started by ssvmlinear.parallel.KernelTeam)."""
import joblib
import numpy as np
import pytest
import scipy.sparse as sp

from ssvmlinear._kernels.chain import ChainStructure
from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.team import Team
from ssvmlinear.parallel import KernelTeam, shard_bounds


def chain_structure(seed=0, n_seq=300, K=4):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 9, n_seq)
    X = sp.random(int(lengths.sum()), 12, density=0.5, random_state=seed, format="csr")
    y = rng.integers(0, K, int(lengths.sum())).astype(np.int32)
    st = ChainStructure(CSRDataset(X, 1.0), y, lengths, K, False, False)
    return st, rng.standard_normal(st.n_weights)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_every_example_is_computed_once_whatever_the_threads(n_threads):
    """Prediction through the team equals one Viterbi per example in this thread."""
    st, w = chain_structure()
    offsets = np.asarray(st.label_offsets(), dtype=np.int64)
    ref = np.concatenate([st.py_oracle(w, i, 0.0)[0] for i in range(st.n_examples)])
    team = Team(n_threads)
    with KernelTeam(team):
        for _ in range(5):                      # the same team, job after job
            out = np.full(int(offsets[-1]), -1, dtype=np.int32)
            st.predict(w, out, offsets, team)
            np.testing.assert_array_equal(out, ref)
    assert team.n_helpers == 0                  # every helper returned


def test_helpers_take_part():
    st, w = chain_structure(n_seq=3000)
    offsets = np.asarray(st.label_offsets(), dtype=np.int64)
    out = np.zeros(int(offsets[-1]), dtype=np.int32)
    team = Team(2)
    with KernelTeam(team):
        for _ in range(50):
            st.predict(w, out, offsets, team)
    assert team.n_helper_ranges > 0


def test_a_thread_backend_set_by_the_caller_is_used():
    used = []

    from joblib._parallel_backends import ThreadingBackend

    class Recording(ThreadingBackend):
        def submit(self, func, callback=None):
            used.append(1)
            return super().submit(func, callback)

    joblib.register_parallel_backend("recording_threads", Recording)
    st, w = chain_structure(n_seq=20)
    offsets = np.asarray(st.label_offsets(), dtype=np.int64)
    with joblib.parallel_config(backend="recording_threads"):
        with KernelTeam(Team(2)) as team:
            st.predict(w, np.zeros(int(offsets[-1]), dtype=np.int32), offsets, team)
    assert used


def test_shards_are_fixed_and_cover_the_examples():
    for n, k in ((0, 4), (3, 8), (100, 32), (101, 7)):
        b = shard_bounds(n, k)
        assert b[0] == 0 and b[-1] == n and np.all(np.diff(b) >= 0) and len(b) - 1 == min(k, max(n, 1))


def test_the_cutting_plane_is_identical_for_one_and_two_threads_through_the_team():
    from ssvmlinear import ChainSSVM
    rng = np.random.default_rng(0)
    lengths = rng.integers(2, 6, 40)
    X = rng.standard_normal((lengths.sum(), 5))
    y = rng.integers(0, 3, lengths.sum())
    fits = [ChainSSVM(C=1.0, solver="cutting-plane", loss=loss, n_jobs=j).fit(X, y, lengths)
            for loss in ("margin", "lse", "slack") for j in (1, 2)]
    for a, b in (fits[0:2], fits[2:4], fits[4:6]):
        np.testing.assert_array_equal(a.coef_, b.coef_)
        assert a.n_iter_ == b.n_iter_
