"""Threads for the solvers' parallel phases: the kernels' Team (_kernels/core/team.pyx), the one
parallel primitive (SDM's oracle blocks, the cutting plane's chunks, Pegasos' mini-batches and
objective, prediction), and the fixed shards of examples it shares (and the cluster's workers
hold: distributed.py).

The phases are short and repeat many times (the cutting plane's oracle passes; Pegasos'
mini-batches most of all), so their threads must not be started per phase: KernelTeam starts the
team's n_threads - 1 helpers once per fit, through joblib (`require="sharedmem"`, so a thread
backend configured with `joblib.parallel_config` is used as configured; process and cluster
backends are replaced by threads, which the shared buffers need). Between jobs the helpers spin
briefly, then sleep in the kernel; a job never takes the GIL. Work is split into fixed shards
whose results are combined in shard order, so results do not depend on the number of threads.
"""
import threading

import numpy as np


def shard_bounds(n, n_shards):
    """Fixed contiguous shards of the examples [0, n): shard k is bounds[k] .. bounds[k+1]-1 (at
    most n shards, at least one). They depend on n and n_shards only, never on the thread count."""
    return np.linspace(0, n, min(int(n_shards), max(n, 1)) + 1).astype(np.int64)


class KernelTeam:
    """Runs the n_threads - 1 helper threads of a kernel Team for the length of a `with` block
    (one joblib call); `with KernelTeam(team) as t` gives the team back."""

    def __init__(self, team):
        self.team = team
        self._helpers = None

    def __enter__(self):
        if self.team.n_threads > 1:
            from joblib import Parallel, delayed
            caller = threading.get_ident()

            def helper(k):
                if threading.get_ident() != caller:   # a backend running it inline would deadlock
                    self.team.helper(k)
            self.team.restart()
            self._helpers = Parallel(n_jobs=self.team.n_threads, require="sharedmem", return_as="generator")(
                delayed(helper)(k) for k in range(1, self.team.n_threads))
        return self.team

    def __exit__(self, *exc):
        if self._helpers is not None:
            self.team.stop_helpers()
            for _ in self._helpers:    # joins them
                pass
            self._helpers = None
        return False


def predict_structure(structure, w, n_jobs=None):
    """Flat predicted label indices of every example of a compiled structure (its oracle at
    lambda = 0), the examples shared by a kernel team of n_jobs threads in this process
    (distributed.decode_all also uses a cluster's workers)."""
    from joblib import effective_n_jobs
    from ._kernels.team import Team
    offsets = np.asarray(structure.label_offsets(), dtype=np.int64)
    out = np.zeros(int(offsets[-1]), dtype=np.int32)
    with KernelTeam(Team(max(1, min(effective_n_jobs(n_jobs), structure.n_examples)))) as team:
        structure.predict(np.ascontiguousarray(w, dtype=np.float64), out, offsets, team)
    return out
