"""CoCoA+ (Ma et al. 2015; adding, sigma' = the number of shards) around a dual solver whose
examples are cut into shards on the workers of a Dask cluster (distributed.ClusterShards).

A round: every shard runs the solver's local step (Solver.local_round) on its subproblem from the
round's w, its Gram matrix and updates of w scaled by sigma', and sends back its local iterate;
w += the changes in shard order (results do not depend on arrival). A solver runs here when it
offers the hooks local_kernel, local_round, local_slack, local_calls, local_working_set and
rule_of_rounds (SDM, LSE-SDCD, GDMM).
"""
import os

import numpy as np

from ..distributed import ClusterShards, ShardedStructure, n_workers
from ..parallel import shard_bounds
from .loop import GAP_CHECK_EVERY, Run, Step, gap_too_large

# w travels to the shards in chunks of this many weights: a worker receives each into its
# solver's weights, so it never holds a second vector of the weight dimension
WEIGHTS_CHUNK = 1 << 21


class DualShard:
    """A shard's dual variables and the solver's local kernel on them, on a worker."""

    def __init__(self, solver, structure, Cs, seed, sigma, exact_violators=False):
        self.solver = solver
        self.kernel = solver.local_kernel(structure, Cs, seed, exact_violators)
        self.kernel.sigma = float(sigma)
        # GDMM takes w through set_weights (it derives its factor tables from it)
        self.buffered = getattr(solver, "local_weights_buffered", False)
        self.w_in, self.w_fresh = None, False

    def put_weights(self, start, chunk):
        """Write a chunk of the round's w into the kernel's own weights (buffered: into a buffer it
        takes at the next evaluate or round): w arrives in chunks (send_weights), so a worker holds
        one vector of the weight dimension and a chunk, not a second vector."""
        if self.buffered:
            if self.w_in is None:
                self.w_in = np.empty(self.kernel.coef.shape[0])
            self.w_in[start:start + chunk.shape[0]] = chunk
            self.w_fresh = True
        else:
            self.kernel.coef[start:start + chunk.shape[0]] = chunk

    def _linear_term(self):
        """The dual's linear term at the weights sent (buffered kernels take them now), and the
        solver's correction of w towards a dual point (local_dual_correction; None: none)."""
        if not self.buffered:
            return self.kernel.ws.linear_term(), None
        if self.w_fresh:
            self.kernel.set_weights(self.w_in)
            self.w_fresh = False
        return (self.kernel.dual() + 0.5 * float(np.dot(self.w_in, self.w_in)),
                self.solver.local_dual_correction(self.kernel))

    def evaluate(self):
        """The shard's gap terms at the weights sent: (slack sum, (the dual's linear term, its
        correction of w)) -- one oracle per example."""
        lin = self._linear_term()
        ww = 0.5 * float(np.dot(self.w_in, self.w_in)) if self.buffered else 0.0
        return self.solver.local_slack(self.kernel, ww), lin

    def round(self, tol, client_pid):
        """One local solve from the weights sent (w) against u = w + sigma' (shard's change).
        Returns (u, (the dual's linear term at w, its correction), rule value, passes, oracle
        calls); the client
        takes the change (u - w) / sigma' (local_change), so the worker need not keep w beside u
        -- and a copy of u when the worker runs in the client's process (client_pid), which then
        shares no array with the client."""
        lin = self._linear_term()
        calls = self.solver.local_calls(self.kernel)
        rule, passes = self.solver.local_round(self.kernel, tol)
        u = self.kernel.coef
        shared = os.getpid() == client_pid
        return u.copy() if shared else u, lin, rule, passes, self.solver.local_calls(self.kernel) - calls

    def working_set_size(self):
        return self.solver.local_working_set(self.kernel)


def send_weights(shards, w):
    """w to every shard (DualShard.put_weights), chunk by chunk."""
    for start in range(0, w.shape[0], WEIGHTS_CHUNK):
        shards.call("put_weights", start, w[start:start + WEIGHTS_CHUNK])


def dual_at(w, terms):
    """The dual from the shards' (linear term, correction of w or None) at the round's w: the
    linear terms' sum - 1/2 |w + the corrections' sum|^2 (GDMM's consistent point)."""
    lin = sum(t[0] for t in terms)
    corrections = [t[1] for t in terms if t[1] is not None]
    if not corrections:
        return lin - 0.5 * float(w @ w)
    index = np.concatenate([c[0] for c in corrections])
    value = np.concatenate([c[1] for c in corrections])
    keys, where = np.unique(index, return_inverse=True)
    delta = np.zeros(keys.shape[0])
    np.add.at(delta, where, value)
    return lin - 0.5 * (float(w @ w) + 2.0 * float(w[keys] @ delta) + float(delta @ delta))


def local_change(u, w, sigma):
    """A shard's change of the dual's w from its local iterate u = w + sigma' (change), in u's own
    buffer when it is writable (u is the client's: DualShard.round)."""
    if not u.flags.writeable:
        u = u.copy()
    np.subtract(u, w, out=u)
    u /= sigma
    return u


class CoCoARun(Run):
    """A step is a round. The rule: the solver's own over the round's shards (rule_of_rounds),
    the model being the next round's w, and with gap_tol a relative duality gap <= gap_tol there
    (while it is not, tol is divided by 10, as in one process). The gap costs an oracle per
    example (DualShard.evaluate), so it is measured after a round whose rule fired, every
    GAP_CHECK_EVERY rounds, after every round when a callback or verbose >= 2 watches, and after
    the last; a solver whose measured gap is the true one (SDM: cocoa_gap_only) stops on the gap
    alone in a default fit. Warm starts are not kept on the cluster (a warm-started estimator
    starts from zero there)."""

    def __init__(self, solver, client, problem):
        structure = problem.structure
        self.solver = solver
        self.tag, self.title = "cocoa+" + solver.name, "CoCoA+ " + solver.title
        self.tol, self.gap_tol, self.monitor = problem.tol, problem.gap_tol, problem.monitor
        self.rule_is_final = getattr(solver, "cocoa_gap_only", False) and problem.gap_tol is not None
        seed, ev = problem.seed, problem.exact_violators
        if isinstance(structure, ShardedStructure):     # the data already on the workers
            K = len(structure.structures)
            args = [(solver, st, c, seed + k, K, ev) for k, (st, c) in enumerate(zip(structure.structures, structure.Cs))]
            self.shards = ClusterShards(client, DualShard, args, structure.workers)
        else:
            # the shards draw their examples at random (seeded): adding the changes of shards
            # that differ in distribution (a file in some order: OCR's folds, one after the other)
            # converges far more slowly than the theory's exchangeable shards
            # (benchmarks/cocoa_gdmm.py --contiguous)
            bounds = shard_bounds(structure.n_examples, n_workers(client))
            order = np.random.default_rng(seed).permutation(structure.n_examples)
            K = len(bounds) - 1
            args = [(solver, structure.subset(int(bounds[k]), int(bounds[k + 1]), order),
                     np.ascontiguousarray(problem.Cs[order[bounds[k]:bounds[k + 1]]]), seed + k, K, ev)
                    for k in range(K)]
            self.shards = ClusterShards(client, DualShard, args)
        self.K = K
        self.w = np.zeros(structure.n_weights)
        self.rounds = self.calls = 0
        self.measured = False          # the gap measured at the current w
        self.pid = os.getpid()

    def close(self):
        self.shards.close()

    def measure(self):
        ww = 0.5 * float(self.w @ self.w)
        send_weights(self.shards, self.w)
        outs = self.shards.call("evaluate")
        self.measured = True
        self.pair = (ww + sum(o[0] for o in outs), dual_at(self.w, [o[1] for o in outs]))
        return self.pair

    def step(self, limit):
        w = self.w
        if not self.measured:        # (a measurement sent it)
            send_weights(self.shards, w)
        outs = self.shards.call("round", self.tol, self.pid)
        dual = dual_at(w, [o[1] for o in outs])                  # at the round's w
        rule_fired = self.solver.rule_of_rounds([o[2] for o in outs], self.tol, dual)
        passes = max(o[3] for o in outs)
        self.calls += sum(o[4] for o in outs)
        changes = [local_change(o[0], w, self.K) for o in outs]
        del outs
        for dw in changes:           # in shard order: the result does not depend on arrival
            w += dw
        del changes
        self.rounds += 1
        self.measured = False
        if not (rule_fired or self.monitor or passes >= limit or
                (self.gap_tol is not None and self.rounds % GAP_CHECK_EVERY == GAP_CHECK_EVERY - 1)):
            return Step(passes, dual, text=f"round {self.rounds}")
        primal, dual = self.measure()
        rule = rule_fired
        if self.rule_is_final:
            rule = not gap_too_large(primal, dual, self.gap_tol)
            if rule_fired and not rule:
                self.tol *= 0.1
        return Step(passes, dual, primal, rule=rule, text=f"round {self.rounds}")

    def weights(self):
        return self.w

    def final(self, converged, last_primal):
        try:                # the model's primal: w moved since the last measurement
            return self.pair if self.measured else self.measure()
        except KeyboardInterrupt:
            return np.nan, np.nan

    def result(self):
        sent, received = self.shards.bytes_sent, self.shards.bytes_received
        return dict(n_oracle_calls=self.calls, working_set_size=sum(self.shards.call("working_set_size")),
                    n_shards=self.K, bytes_per_round=(sent + received) / max(self.rounds, 1))
