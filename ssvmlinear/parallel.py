"""A team of threads for the short, frequent parallel phases of the solvers.

A solver phase such as the cutting plane's oracle pass is a list of independent tasks (calls into
nogil kernels) that takes tens of milliseconds and repeats hundreds of times. One joblib call per
phase would cost more than it saves: joblib polls for finished tasks every 10 ms and the calling
thread only waits. Instead the team starts its n_threads - 1 helper threads through joblib once
(`require="sharedmem"`, so a thread backend configured with `joblib.parallel_config` is used as
configured; process and cluster backends are replaced by threads, which the shared buffers need),
and each `run` hands tasks to whichever thread is free -- the calling thread included -- with
condition-variable wake-ups instead of polling. Tasks write to disjoint buffers, so results do not
depend on the number of threads.
"""
import threading
from functools import partial

import numpy as np


class ThreadTeam:
    """Use as a context manager: `with ThreadTeam(n) as team: team.run(tasks)`."""

    def __init__(self, n_threads):
        self.n_threads = max(1, int(n_threads))
        self._cond = threading.Condition()
        self._tasks = []
        self._next = 0        # index of the next task to hand out
        self._unfinished = 0  # tasks handed out or waiting, not yet finished
        self._results = []
        self._errors = []
        self._stop = False
        self._helpers = None

    def __enter__(self):
        self._stop = False
        if self.n_threads > 1:
            from joblib import Parallel, delayed
            caller = threading.get_ident()

            def helper(_):
                if threading.get_ident() != caller:   # a backend running it inline would deadlock
                    self._serve()

            self._helpers = Parallel(n_jobs=self.n_threads, require="sharedmem", return_as="generator")(
                delayed(helper)(k) for k in range(1, self.n_threads))
        return self

    def __exit__(self, *exc):
        if self._helpers is not None:
            with self._cond:
                self._stop = True
                self._cond.notify_all()
            for _ in self._helpers:   # joins the helpers
                pass
            self._helpers = None
        return False

    def run(self, tasks):
        """Call every task (no arguments) once, in any thread; return their results in task order.
        The first exception raised by a task is raised here after all tasks have finished."""
        tasks = list(tasks)
        if self._helpers is None:
            return [task() for task in tasks]
        with self._cond:
            self._tasks, self._next, self._unfinished = tasks, 0, len(tasks)
            self._results = [None] * len(tasks)
            self._errors = []
            self._cond.notify_all()
        self._work(until_empty=True)
        with self._cond:
            while self._unfinished:
                self._cond.wait()
            if self._errors:
                raise self._errors[0]
            return self._results

    def _serve(self):
        while self._work(until_empty=False):
            pass

    def _work(self, until_empty):
        """Take and run tasks; returns False when the team stops. A helper (until_empty False)
        sleeps while there is nothing to do; the caller returns once no task is left to take."""
        while True:
            with self._cond:
                while self._stop or self._next >= len(self._tasks):
                    if self._stop:   # also after an interrupted run: leave its remaining tasks
                        return False
                    if until_empty:
                        return True
                    self._cond.wait()
                k = self._next
                self._next += 1
                task = self._tasks[k]
            try:
                result, error = task(), None
            except BaseException as e:  # noqa: B902 -- surfaced in run()
                result, error = None, e
            with self._cond:
                self._results[k] = result
                if error is not None:
                    self._errors.append(error)
                self._unfinished -= 1
                if not self._unfinished:
                    self._cond.notify_all()


def shard_bounds(n, n_shards):
    """Fixed contiguous shards of the examples [0, n): shard k is bounds[k] .. bounds[k+1]-1 (at
    most n shards, at least one). They depend on n and n_shards only, never on the thread count."""
    return np.linspace(0, n, min(int(n_shards), max(n, 1)) + 1).astype(np.int64)


def run_shards(fn, bounds, n_jobs):
    """Call fn(k, lo, hi) for every shard k of `bounds` on a team of n_jobs threads (joblib's
    n_jobs convention); returns the results in shard order, so that a reduction in that order
    does not depend on n_jobs."""
    from joblib import effective_n_jobs
    n_shards = len(bounds) - 1
    with ThreadTeam(max(1, min(effective_n_jobs(n_jobs), n_shards))) as team:
        return team.run([partial(fn, k, int(bounds[k]), int(bounds[k + 1])) for k in range(n_shards)])


class KernelTeam:
    """Runs the n_threads - 1 helper threads of a kernel Team (_kernels/team.pyx) for the length
    of a `with` block: one joblib call (`require="sharedmem"`: a thread backend configured with
    joblib.parallel_config is used as configured, process and cluster backends are replaced by
    threads, which the shared buffers need); the helpers sleep in the kernel between jobs."""

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
