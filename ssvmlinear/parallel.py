"""Threads for the solvers' parallel phases: the kernels' Team (_kernels/team.pyx), the one
parallel primitive (SDM's oracle blocks, the cutting plane's chunks, Pegasos' mini-batches and
objective, prediction), and the fixed shards of examples it shares.

A phase such as the cutting plane's oracle pass takes tens of milliseconds and repeats hundreds of
times (Pegasos' mini-batches: microseconds, thousands of times), so its threads must not be
started per phase: KernelTeam starts the team's n_threads - 1 helpers once per fit, through
joblib (`require="sharedmem"`, so a thread backend configured with `joblib.parallel_config` is
used as configured; process and cluster backends are replaced by threads, which the shared
buffers need). Between jobs the helpers spin briefly, then sleep in the kernel; a job never takes
the GIL. Work is split into fixed shards whose results are combined in shard order, so results
do not depend on the number of threads.
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
    lambda = 0; examples shared by a kernel team of n_jobs threads, or by the workers of a Dask
    cluster when joblib's dask backend is active)."""
    from joblib import effective_n_jobs
    from ._kernels.team import Team
    from .distributed import active_client, predict_on_cluster
    client = active_client()
    if client is not None:      # the examples' shards on a Dask cluster
        return predict_on_cluster(client, structure, w)
    offsets = np.asarray(structure.label_offsets(), dtype=np.int64)
    out = np.zeros(int(offsets[-1]), dtype=np.int32)
    with KernelTeam(Team(max(1, min(effective_n_jobs(n_jobs), structure.n_examples)))) as team:
        structure.predict(np.ascontiguousarray(w, dtype=np.float64), out, offsets, team)
    return out


# ---------------------------------------------------------------------------- shards
# The unit of work that leaves the process: a fixed range of examples with its own structure (the
# CSR rows and labels of those examples, copied when pickled) and the state a solver keeps for
# them between passes. Threads share a pass through the kernel Team above; process and cluster
# backends (joblib's loky, a Dask worker) receive pickled shards, run them, and send them back.


class Shard:
    """Examples [lo, hi) of a compiled structure as a self-contained, picklable unit of work."""

    def __init__(self, structure, lo, hi):
        self.lo, self.hi = int(lo), int(hi)
        self.structure = structure.subset(self.lo, self.hi)


class PredictShard(Shard):
    """Prediction of the shard's examples: run(w) -> their flat label indices."""

    def run(self, w):
        return predict_structure(self.structure, w, n_jobs=1)


class CuttingPlaneShard(Shard):
    """The shard's part of the one-slack cutting plane's most violated constraint, with the
    shard's label caches (margin: a ring of recent oracle answers; LSE: the violator sets).

    run(w, use_oracle, rebuild) -> (a, b, hsum, oracle calls): the shard's running accumulator
    (C_i dphi_i summed over its examples' choices), its loss sum and violation; adding the shards'
    outputs in shard order gives exactly the constraint of an in-process OneSlackOracle whose
    chunks are the shards. Pickling carries the caches and the running constraint."""

    def __init__(self, structure, lo, hi, Cs, lse=False, cache_size=10, exact_violators=False):
        super().__init__(structure, lo, hi)
        self.params = (np.ascontiguousarray(np.asarray(Cs, dtype=np.float64)[self.lo:self.hi]), bool(lse),
                       int(cache_size), bool(exact_violators))
        self._start()

    def _start(self):
        from ._kernels.cuttingplane import OneSlackOracle
        self._oracle = OneSlackOracle(self.structure, *self.params)

    def run(self, w, use_oracle=True, rebuild=False):
        self._oracle.run_pass(np.ascontiguousarray(w, dtype=np.float64), use_oracle, rebuild)
        a = np.zeros(self.structure.n_weights)
        b, hsum, calls = self._oracle.collect(a)
        return a, b, hsum, calls

    def cache_sizes(self):
        return self._oracle.cache_sizes()

    def __getstate__(self):
        return dict(lo=self.lo, hi=self.hi, structure=self.structure, params=self.params,
                    oracle=self._oracle.get_state())

    def __setstate__(self, state):
        self.lo, self.hi, self.structure, self.params = state["lo"], state["hi"], state["structure"], state["params"]
        self._start()
        self._oracle.set_state(state["oracle"])


def _run_shard(shard, args):
    return shard, shard.run(*args)


def run_shards(shards, *args, n_jobs=None):
    """shard.run(*args) for every shard through joblib's active backend (threads, processes or
    a cluster); returns the outputs in shard order. Shards that ran elsewhere come back with
    their state and replace the entries of `shards` (a list)."""
    from joblib import Parallel, delayed
    done = Parallel(n_jobs=n_jobs)(delayed(_run_shard)(s, args) for s in shards)
    for k, (shard, _) in enumerate(done):
        shards[k] = shard
    return [out for _, out in done]


def reduce_in_order(outputs):
    """Sum the shards' (a, b, hsum, calls) in shard order (the reduction collect() does over
    chunks, so results equal the in-process constraint bit for bit)."""
    a = np.zeros_like(outputs[0][0])
    b = hsum = 0.0
    calls = 0
    for out in outputs:
        a += out[0]
        b += out[1]
        hsum += out[2]
        calls += out[3]
    return a, b, hsum, calls
