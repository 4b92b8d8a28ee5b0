"""The one-slack cutting plane (Joachims, Finley & Yu 2009, with constraint caching) for margin
rescaling and convex bi-criteria surrogates, and Balamurugan et al.'s Alg. 1 for the LSE problem."""
import time

import numpy as np

from .loop import Run, Step
from ..params import Param
from .pegasos import SEARCHES
from .solver import Solver

# The cutting plane splits every pass into this many fixed chunks of examples, whatever n_jobs is,
# and adds their parts in chunk order: results do not depend on n_jobs.
CP_CHUNKS = 32
# Every this many oracle passes the running constraint accumulators are recomputed from scratch.
REBUILD_EVERY = 50
# At most this many type-II (cache) iterations in a row: the paper's kappa2 = 5, its two-loop
# schedule of Alg. 2 (a type-I pass every kappa2 passes).
CP_MAX_TYPE2 = 5
# The restricted QP's tolerance (OneSlackQP).
QP_TOL = 1e-10


def surrogate_problem(loss, convex_only, search):
    """An error message when `loss` is not a surrogate the search-based solvers train with
    `search`, else None."""
    from ..surrogates import parse_surrogate
    if loss == "lse":
        return "loss='lse' is trained by solver='sdcd' or 'cutting-plane'"
    try:
        sur = parse_surrogate(loss)
    except ValueError as e:
        return str(e)
    if convex_only and sur.name == "probloss":
        return ("the cutting plane needs a surrogate convex in the margin; 'probloss' is not (use "
                "'probloss-convex' or solver='pegasos')")
    if sur.name == "microf1" and search not in ("exact", "hull"):
        return (f"loss='microf1' is searched with search='hull' or 'exact' (its g = -(|y| + |y_i|) is "
                f"negative); got search={search!r}")
    return None


class CuttingPlane(Solver):
    """One-slack cutting plane with label caches; the LSE problem with loss="lse".

    A step is an iteration: the most violated constraint is built from the per-example label
    caches (a type-II pass, no oracle; for LSE the caches are Alg. 1's violator sets V_i); when
    that one is not violated by more than the tolerance, or after `max_type2` type-II iterations
    in a row, the loss-augmented oracles are called (a type-I pass; their answers join the
    caches). Passes run in threads over CP_CHUNKS fixed chunks whose parts are summed in chunk
    order, so results do not depend on n_jobs. The restricted dual QP over the working set of
    constraints (_kernels/core/qp.pyx) is solved by an active-set method polished by SMO,
    warm-started; constraints whose dual weight stayed zero for `inactive_after` iterations are
    dropped. Constraints are dense vectors of n_weights doubles.

    Bi-criteria surrogates convex in h (slack rescaling, beta/generalized scaling, logloss,
    probloss-convex, microf1): each example's most violated label comes from the search and the
    constraint is psi's linearisation there; these run the search on every iteration.

    The rule (svm_struct's epsilon): the most violated constraint, found with the oracle, is
    violated by at most tol * sum_i C_i; with the default rule also by at most gap_tol times the
    primal objective, which bounds the relative duality gap. For LSE the primal reported is that
    of the problem restricted to the final caches. On a Dask cluster the chunks live on the
    workers and the model equals the single-process one bit for bit.

    {parameters}

    Attributes
    ----------
    name : str
        The estimators' name of this solver: ``solver="cutting-plane"`` selects it with its
        default parameters.
    default_tol : float
        The tolerance of its stopping rule when the estimator's tol is None (0.1).

    See Also
    --------
    SDM : The default solver of margin rescaling.
    Pegasos : Stochastic subgradient descent, any surrogate.
    ssvmlinear.search : The surrogates' searches.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import MulticlassSSVM
    >>> from ssvmlinear.solvers import CuttingPlane
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [-1.0, -1.0], [-0.9, -1.1]])
    >>> y = np.array([0, 0, 1, 1, 2, 2])
    >>> clf = MulticlassSSVM(C=10.0, solver=CuttingPlane(cache_size=5)).fit(X, y)
    >>> clf.predict(X)
    array([0, 0, 1, 1, 2, 2])
    >>> slack = MulticlassSSVM(C=10.0, loss="slack", solver=CuttingPlane(search="exact")).fit(X, y)
    >>> slack.predict(X)
    array([0, 0, 1, 1, 2, 2])
    """
    name = "cutting-plane"
    title = "the cutting plane"
    default_tol = 0.1
    distributed = "one-slack"
    max_calls = 50      # a search's oracle calls at most
    params = (
        Param("search", "options", "hull", "The surrogates' search (ssvmlinear.search); unused by margin "
              "rescaling and LSE.", options=SEARCHES, flag="S"),
        Param("exact_violators", "bool", False, "LSE: type-I passes add every violating label (multiclass "
              "always does)."),
        Param("cache_size", "int", 10, "Labels kept per example (a ring).", low=1),
        Param("inactive_after", "int", 50, "Iterations after which a constraint of zero dual weight is dropped.",
              low=1),
        Param("max_type2", "int", CP_MAX_TYPE2, "Type-II iterations in a row at most (0: no limit, svm_struct's "
              "caching).", low=0),
        Param("init_caches", "any", None, "Seeds the label caches (sizes/labels/loss: a dual solver's state or "
              "a run's `caches`).", type_text="dict or None"),
        Param("oracle", "bool", True, "False: the oracle is never called, so the problem restricted to the "
              "seeded caches is solved (for LSE: the paper's OP5 over those working sets)."),
    )

    def __init__(self, search="hull", exact_violators=False, cache_size=10, inactive_after=50,
                 max_type2=CP_MAX_TYPE2, init_caches=None, oracle=True):
        self.search = search
        self.exact_violators = exact_violators
        self.cache_size = cache_size
        self.inactive_after = inactive_after
        self.max_type2 = max_type2
        self.init_caches = init_caches
        self.oracle = oracle

    def accepts(self, loss, search=None):
        if loss == "lse":
            return None
        return surrogate_problem(loss, True, self.search)

    def start_local(self, problem):
        return CuttingPlaneRun(self, problem)


class CuttingPlaneRun(Run):
    rule_is_final = True      # (the rule bounds the relative gap with gap_tol)
    measures_on_demand = False   # (an oracle pass grows the caches: it measures on its own passes)

    def __init__(self, solver, problem):
        from joblib import effective_n_jobs
        from .._kernels.cuttingplane import OneSlackOracle, SurrogatePass
        from .._kernels.qp import OneSlackQP
        from .._kernels.team import Team
        from ..distributed import cluster_of
        from ..parallel import KernelTeam, shard_bounds
        structure, Cs = problem.structure, problem.Cs
        self.lse = lse = problem.loss == "lse"
        self.tag = "cp-lse" if lse else "cp"
        self.title = "the cutting plane"
        self.client = client = cluster_of(structure)
        if Cs is None:      # (a ShardedStructure: the C_i live with the data on the workers)
            self.budget = structure.Cs_sum
        else:
            Cs = np.ascontiguousarray(Cs, dtype=np.float64)
            self.budget = float(Cs.sum())
        bounds = shard_bounds(structure.n_examples, CP_CHUNKS)
        n_chunks = len(bounds) - 1
        self.surrogate = sur_args = None
        if not lse and problem.loss != "margin":
            from ..search import METHODS
            from ..surrogates import parse_surrogate
            self.surrogate = parse_surrogate(problem.loss)
            sur_args = (self.surrogate.kind, self.surrogate.alpha, self.surrogate.beta, METHODS[solver.search],
                        0.999 if solver.search == "angular" else 1.0, solver.max_calls,
                        self.surrogate.name == "microf1")
        exact = bool(problem.exact_violators or solver.exact_violators)
        if client is not None:
            # the chunks live on the cluster's workers, in shards of consecutive chunks (distributed.py)
            from ..distributed import ClusterOneSlackOracle
            team = Team(1)
            self.orc = ClusterOneSlackOracle(client, structure, Cs, lse, solver.cache_size, exact, bounds, sur_args)
            self.surrogate_pass = self.orc
        else:
            # the chunks of every pass are shared by one kernel team (its helpers started once, below)
            team = Team(max(1, min(effective_n_jobs(problem.n_jobs), n_chunks)))
            self.orc = OneSlackOracle(structure, Cs, lse, solver.cache_size, exact, bounds, team)
            if self.surrogate is not None:
                self.surrogate_pass = SurrogatePass(structure, Cs, bounds, *sur_args, team)
        if solver.init_caches is not None:
            self.orc.set_caches(solver.init_caches)
        self.use_oracle = bool(solver.oracle)
        self.max_type2 = int(solver.max_type2)
        self.stats = dict(oracle_calls=0, oracle_seconds=0.0, cache_passes=0, oracle_passes=0)
        self.a = np.zeros(structure.n_weights)
        self.qp = OneSlackQP(structure.n_weights, solver.inactive_after, QP_TOL)
        self.xi = 0.0
        self.hsum = np.nan
        self.since_oracle = 0
        self.iterations = 0
        self.tol, self.gap_tol = problem.tol, problem.gap_tol
        self.threshold = problem.tol * self.budget     # the violation at which the iterations stop
        self.converged = False
        self.helpers = KernelTeam(team)
        self.helpers.__enter__()

    def close(self):
        self.helpers.__exit__(None, None, None)
        if self.client is not None:
            self.orc.close()

    def cache_pass(self, w):
        """Type-II pass (no oracle): the most violated constraint over the caches into `a`."""
        return self.orc.cache_pass(w, self.a)

    def oracle_pass(self, w):
        """Type-I pass: the most violated constraint of the full problem into `a`; (b, hsum)."""
        t = time.perf_counter()
        stats = self.stats
        if self.surrogate is not None:
            b, hsum, calls = self.surrogate_pass.run(w, self.a)
        elif not self.use_oracle:
            b, hsum, calls = self.cache_pass(w)
        else:
            # the running accumulators are rebuilt from scratch now and then (rounding)
            self.orc.run_pass(w, True, stats["oracle_passes"] % REBUILD_EVERY == 0)
            b, hsum, calls = self.orc.collect(self.a)
        stats["oracle_calls"] += calls
        stats["oracle_seconds"] += time.perf_counter() - t
        stats["oracle_passes"] += 1
        return b, hsum

    def step(self, limit):
        w, qp = self.qp.w, self.qp
        self.iterations += 1
        cached = (self.surrogate is None and self.iterations > 1
                  and not (self.max_type2 and self.since_oracle >= self.max_type2))
        self.since_oracle += 1
        primal = np.nan
        if cached:
            # type-II: hs = b - w . a, the constraint's value at w (chunks on the team)
            b, hs = self.cache_pass(w)[:2]
            self.stats["cache_passes"] += 1
        if not cached or hs - self.xi <= self.threshold:
            b, self.hsum = self.oracle_pass(w)
            self.since_oracle = 0
            # the primal at w (LSE: of the problem over the caches, as the final objective)
            primal = 0.5 * float(w @ w) + self.hsum
            if self.gap_tol is not None:
                self.threshold = min(self.tol * self.budget, self.gap_tol * primal)
            if self.hsum - self.xi <= self.threshold:
                self.converged = True
                return Step(1, qp.dual, primal, rule=True, text=f"constraints {qp.n_constraints:4d}")
        self.xi, dual = qp.add(self.a, b)
        self.hsum = np.nan           # (w moved)
        return Step(1, dual, primal, text=f"constraints {qp.n_constraints:4d} xi {self.xi:.6g} oracle passes "
                                          f"{self.stats['oracle_passes']}")

    def rule_text(self):
        return f"the most violated constraint fell to tol={self.tol:.3g}"

    def weights(self):
        return self.qp.w

    def model(self):
        return np.array(self.qp.w)     # (not a view: the QP and its constraints are released)

    def final(self, converged, last_primal):
        w = self.qp.w
        if not (self.converged and np.isfinite(self.hsum)):
            self.hsum = self.oracle_pass(w)[1]
        # margin: the primal objective; LSE: the primal of the problem restricted to the final caches
        return 0.5 * float(w @ w) + self.hsum, self.qp.dual

    def result(self):
        stats, qp = self.stats, self.qp
        bytes_per_iteration = None
        if self.client is not None:    # (w and the running sums; the data travelled once)
            bytes_per_iteration = (self.orc.shards.bytes_sent + self.orc.shards.bytes_received) / max(
                stats["oracle_passes"] + stats["cache_passes"], 1)
        return dict(n_oracle_calls=stats["oracle_calls"], oracle_seconds=stats["oracle_seconds"],
                    n_oracle_passes=stats["oracle_passes"], n_cache_passes=stats["cache_passes"],
                    n_constraints=qp.n_constraints, qp_steps=qp.qp_steps, n_changes=self.orc.n_changes,
                    working_set_size=int(self.orc.cache_sizes().sum()), bytes_per_iteration=bytes_per_iteration,
                    caches=self.orc.get_caches() if self.surrogate is None else None)
