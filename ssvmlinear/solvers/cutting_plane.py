"""The one-slack cutting plane (Joachims, Finley & Yu 2009, with constraint caching and OCAS's line
search, Franc & Sonnenburg 2009) for margin rescaling and convex bi-criteria surrogates, and
Balamurugan et al.'s Alg. 1 for the LSE problem."""
import time

import numpy as np

from .loop import Run, Step
from ..params import Param
from ..search import MAX_CALLS, METHODS, SearchSetup, surrogate_problem
from .solver import Solver

# The cutting plane splits every pass into this many fixed chunks of examples, whatever n_jobs is,
# and adds their parts in chunk order: results do not depend on n_jobs.
CP_CHUNKS = 32
# Every this many oracle passes the running constraint accumulators are recomputed from scratch.
REBUILD_EVERY = 50
# OCAS's cutting point (Franc & Sonnenburg 2009): the oracle is called this fraction of the way
# from the best point to the restricted QP's minimiser. Their 0.1 takes several times the
# iterations on OCR letters and chains from C = 1 on (benchmarks/convergence.py).
CUT_POINT = 0.01
# The line search from the best point looks this many times as far as the QP's minimiser: the
# model's minimiser is rarely overshot by more, and each breakpoint further out costs a sort entry.
LINE_T_MAX = 2.0
# The restricted QP's pair-gap tolerance relative to the constraints' largest b (OneSlackQP): far
# below any stopping rule's, and above the rounding of the QP's gradients at large C.
QP_TOL = 1e-9
# LSE: after an OCAS iteration (type-I: line search and oracle pass), at most this many type-II
# iterations in a row, Balamurugan et al.'s inner loop over the label caches (their V_i): the
# caches' most violated constraint at the QP's minimiser, built without oracle calls, joins the QP
# while it is violated by more than the rule's threshold (Alg. 2's kappa2 = 5 schedule).
MAX_TYPE2 = 5
# LSE: type-II iterations only once the caches have nearly stopped growing (the last oracle pass
# added at most GROWTH_TYPE2 * n labels: while the oracles keep finding new labels, re-optimising
# over the caches is wasted on a problem far from the full one); without exact violators (a pass
# adds one label per example) also only while the gap is over FAR_TYPE2 times the rule's threshold
# (near it, OCAS iterations close the gap in less time); with them (the caches hold every violator)
# at any gap, as the paper's Alg. 2 (benchmarks/vs_previous.py, cp3-eps cases).
GROWTH_TYPE2 = 0.1
FAR_TYPE2 = 100.0


def line_minimum(wd, dd, slope0, t, jump, t_max):
    """argmin over s in [0, t_max] of 1/2 ||w + s d||^2 + R(s), R convex piecewise linear with
    right slope `slope0` at 0 that rises by jump[j] at t[j] (OneSlackOracle.lines); wd = w . d,
    dd = d . d. Exact: the derivative wd + s dd + R'(s) is swept over the sorted breakpoints."""
    if dd <= 0.0 or wd + slope0 >= 0.0:
        return 0.0
    order = np.argsort(t, kind="stable")
    ts = t[order]
    after = slope0 + np.cumsum(jump[order])           # R' just after each breakpoint
    before = np.concatenate(([slope0], after[:-1]))   # and just before it
    base = wd + ts * dd
    hit = np.flatnonzero((base + before >= 0.0) | (base + after >= 0.0))
    if hit.size == 0:                                 # the root lies past the last breakpoint
        last = after[-1] if after.size else slope0
        return float(min(t_max, -(wd + last) / dd))
    j = hit[0]
    if base[j] + before[j] >= 0.0:                    # between breakpoints j-1 and j
        return float(min(ts[j], max(ts[j - 1] if j else 0.0, -(wd + before[j]) / dd)))
    return float(ts[j])                               # at the kink


class CuttingPlane(Solver):
    """One-slack cutting plane with label caches and OCAS's line search; the LSE problem with loss="lse".

    A step is an iteration (Franc & Sonnenburg's OCAS over Joachims, Finley & Yu's one-slack
    problem): the loss restricted to the per-example label caches is minimised exactly on the
    segment from the best point towards the restricted QP's minimiser (its slopes are swept over
    the sorted breakpoints), the best point moves there, and the loss-augmented oracles are
    called at the cutting point CUT_POINT of the way on from it to the QP's minimiser; their answers
    join the caches (for LSE the caches are Alg. 1's violator sets V_i) and give the most violated
    constraint, which the QP gains, and the primal there, which may become the best point's.
    Kelley's plain cutting plane converges in a number of iterations that grows with C, OCAS's
    far less. Passes run in threads over CP_CHUNKS fixed chunks whose parts are summed in chunk
    order, so results do not depend on n_jobs. The restricted dual QP over the working set of
    constraints (_kernels/core/qp.pyx) is solved by an active-set method polished by SMO,
    warm-started; constraints whose dual weight stayed zero for `inactive_after` iterations are
    dropped. Constraints are dense vectors of n_weights doubles.

    Bi-criteria surrogates convex in h (slack rescaling, beta/generalized scaling, logloss,
    probloss-convex, microf1): each example's most violated label comes from the search and the
    constraint is psi's linearisation there; without caches there is no line search, so the
    oracle is called at the QP's minimiser (Kelley's method) and the best point seen is kept. A
    search that may miss the best label (binary, bisecting, sarawagi, angular, none) measures the
    primal of its own answers: the fit's objective is measured again with the search exact for
    the problem (ssvmlinear.search.SearchSetup), so the gap reported (and warned about) is the
    true one. search="hull" trains the surrogate over the convex hull of the labels' (m, Delta)
    points (on an LP relaxation that is the relaxation's own problem).

    The rule: the best primal found exceeds the QP's dual (a lower bound on the optimum) by at
    most tol * sum_i C_i (svm_struct's epsilon bounds the same gap); with the default rule also
    by at most gap_tol times the primal. The model is the best point. For LSE the primal is that
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
    cli_rule = ("stop when the most violated one-slack constraint (found by the oracles) is violated by at "
                "most eps * sum_i C_i, i.e. eps per example (svm_struct's -e)")
    title = "the cutting plane"
    default_tol = 0.1
    distributed = "one-slack"
    max_calls = MAX_CALLS
    params = (
        Param("search", "options", "hull", "The surrogates' search (ssvmlinear.search); unused by margin "
              "rescaling and LSE.", options=tuple(METHODS), flag="S", metavar="search",
              cli="the search of -l's most violating label (default hull)"),
        Param("exact_violators", "bool", False, "LSE: type-I passes add every violating label (multiclass "
              "always does)."),
        Param("cache_size", "int", 10, "Labels kept per example (a ring).", low=1),
        Param("inactive_after", "int", 50, "Iterations after which a constraint of zero dual weight is dropped.",
              low=1),
        Param("init_caches", "any", None, "Seeds the label caches (sizes/labels/loss: a dual solver's state or "
              "a run's `caches`).", type_text="dict or None"),
        Param("oracle", "bool", True, "False: the oracle is never called, so the problem restricted to the "
              "seeded caches is solved (for LSE: the paper's OP5 over those working sets)."),
    )

    def __init__(self, search="hull", exact_violators=False, cache_size=10, inactive_after=50,
                 init_caches=None, oracle=True):
        self.search = search
        self.exact_violators = exact_violators
        self.cache_size = cache_size
        self.inactive_after = inactive_after
        self.init_caches = init_caches
        self.oracle = oracle

    def accepts(self, loss, search=None):
        if loss == "lse":
            return None
        return surrogate_problem(loss, self.search, convex=True)

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
        # the model's objective with the search that measures it exactly (final), where the
        # training search may miss
        self.exact_final = None
        if not lse and problem.loss != "margin":
            setup = SearchSetup.of(problem.loss, solver.search, solver.max_calls)
            self.surrogate = setup.surrogate
            sur_args = setup.kernel_args + (setup.microf1,)
            if client is None and not setup.measures_exactly(structure):
                self.exact_final = setup.measure(structure, Cs)
        self.exact = exact = bool(problem.exact_violators or solver.exact_violators)
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
        self.stats = dict(oracle_calls=0, oracle_seconds=0.0, line_passes=0, oracle_passes=0, cache_passes=0)
        self.type2 = 0              # LSE: type-II iterations since the last type-I one
        self.cached_labels = 0      # LSE: labels in the caches after the last oracle pass
        self.n_examples = structure.n_examples
        self.new_labels = structure.n_examples   # LSE: labels the last oracle pass added
        self.a = np.zeros(structure.n_weights)
        self.qp = OneSlackQP(structure.n_weights, solver.inactive_after, QP_TOL)
        self.w_base = np.zeros(structure.n_weights)      # OCAS's best point (the line searches')
        self.w_best = np.zeros(structure.n_weights)      # the best primal's point: the model
        self.best = np.inf
        self.best_pass = 0          # LSE: the oracle pass whose caches measured `best`
        self.iterations = 0
        self.tol, self.gap_tol = problem.tol, problem.gap_tol
        self.converged = False
        self.helpers = KernelTeam(team)
        self.helpers.__enter__()

    def close(self):
        self.helpers.__exit__(None, None, None)
        if self.client is not None:
            self.orc.close()

    def oracle_pass(self, w):
        """The most violated constraint at w into `a` (the oracles' answers join the caches);
        (b, hsum): hsum = sum_i C_i loss_i(w), the primal's loss part (LSE: over the caches)."""
        t = time.perf_counter()
        stats = self.stats
        if self.surrogate is not None:
            b, hsum, calls = self.surrogate_pass.run(w, self.a)
        else:
            # the running accumulators are rebuilt from scratch now and then (rounding)
            self.orc.run_pass(w, self.use_oracle, stats["oracle_passes"] % REBUILD_EVERY == 0)
            b, hsum, calls = self.orc.collect(self.a)
        if self.lse:
            size = int(self.orc.cache_sizes().sum())
            self.new_labels, self.cached_labels = size - self.cached_labels, size
        stats["oracle_calls"] += calls
        stats["oracle_seconds"] += time.perf_counter() - t
        stats["oracle_passes"] += 1
        return b, hsum

    def cutting_point(self):
        """OCAS: move the best point to the minimum of the caches' primal on the segment towards
        the QP's minimiser (and a little past it), then cut CUT_POINT of the way on."""
        w_qp, w_base = self.qp.w, self.w_base
        if self.surrogate is not None:
            return np.array(w_qp)
        if self.iterations > 1:
            d = w_qp - w_base
            self.orc.line_pass(w_base, d, LINE_T_MAX)
            self.stats["line_passes"] += 1
            slope0, t, jump = self.orc.lines()
            w_base += line_minimum(float(w_base @ d), float(d @ d), float(slope0.sum()), t, jump, LINE_T_MAX) * d
        return w_base + CUT_POINT * (w_qp - w_base)

    def loss_over_caches(self, w):
        """sum_i C_i loss_i(w) over the current caches (LSE's primal at w, without the oracle)."""
        return self.orc.cache_pass(w, np.zeros_like(self.a))[1]

    def threshold(self, primal):
        """The rule's bound on the gap (tol * sum_i C_i, and gap_tol times the primal)."""
        threshold = self.tol * self.budget
        if self.gap_tol is not None:
            threshold = min(threshold, self.gap_tol * primal)
        return threshold

    def cache_step(self):
        """Alg. 1's type-II iteration: the caches' most violated constraint at the QP's minimiser
        (no oracle calls) joins the QP when it is violated by more than the rule's threshold; its
        loss over the caches is LSE's primal there (the caches did not change since the last
        oracle pass), which may become the best point's. None when it is not violated enough (a
        type-I iteration follows)."""
        qp = self.qp
        w = np.array(qp.w)
        b, hsum = self.orc.cache_pass(w, self.a)[:2]
        self.stats["cache_passes"] += 1
        primal = 0.5 * float(w @ w) + hsum
        if hsum - qp.xi <= self.threshold(primal):
            return None
        if primal < self.best:
            self.best, self.best_pass = primal, self.stats["oracle_passes"]
            self.w_best[:] = w
        self.type2 += 1
        dual = qp.add(self.a, b)[1]
        return Step(1, dual, primal, text=f"constraints {qp.n_constraints:4d} best {self.best:.10g} (caches)")

    def step(self, limit):
        qp = self.qp
        self.iterations += 1
        if (self.lse and self.iterations > 1 and self.type2 < MAX_TYPE2
                and self.new_labels <= GROWTH_TYPE2 * self.n_examples
                and (self.exact or self.best - qp.dual > FAR_TYPE2 * self.threshold(self.best))):
            done = self.cache_step()
            if done is not None:
                return done
        self.type2 = 0
        w = self.cutting_point()
        b, hsum = self.oracle_pass(w)
        primal = 0.5 * float(w @ w) + hsum
        if primal < self.best:
            self.best, self.best_pass = primal, self.stats["oracle_passes"]
            self.w_best[:] = w
        if self.converge_test():
            self.converged = True
            return Step(1, qp.dual, primal, rule=True, text=f"constraints {qp.n_constraints:4d}")
        dual = qp.add(self.a, b)[1]
        return Step(1, dual, primal, text=f"constraints {qp.n_constraints:4d} best {self.best:.10g}")

    def converge_test(self):
        """The rule: best primal - the QP's dual <= tol * sum_i C_i (and gap_tol * primal)."""
        def holds():
            return self.best - self.qp.dual <= self.threshold(self.best)
        if not holds():
            return False
        if self.lse and self.best_pass != self.stats["oracle_passes"]:
            # the caches grew since `best` was measured: measure it over the current ones
            self.best = 0.5 * float(self.w_best @ self.w_best) + self.loss_over_caches(self.w_best)
            self.best_pass = self.stats["oracle_passes"]
            return holds()
        return True

    def rule_text(self):
        return f"the duality gap fell to tol={self.tol:.3g} times sum_i C_i"

    def weights(self):
        return self.w_best

    def model(self):
        return self.w_best.copy()

    def final(self, converged, last_primal):
        if not np.isfinite(self.best):          # (Ctrl-C before the first iteration ended: w = 0)
            self.best = self.oracle_pass(self.w_best)[1]
        elif self.lse and self.best_pass != self.stats["oracle_passes"]:
            self.best = 0.5 * float(self.w_best @ self.w_best) + self.loss_over_caches(self.w_best)
        if self.exact_final is not None:
            self.best = 0.5 * float(self.w_best @ self.w_best) + self.exact_final(self.w_best)
        return self.best, self.qp.dual

    def result(self):
        stats, qp = self.stats, self.qp
        bytes_per_iteration = None
        if self.client is not None:    # (w and the running sums; the data travelled once)
            bytes_per_iteration = (self.orc.shards.bytes_sent + self.orc.shards.bytes_received) / max(
                stats["oracle_passes"], 1)
        return dict(n_oracle_calls=stats["oracle_calls"], oracle_seconds=stats["oracle_seconds"],
                    n_oracle_passes=stats["oracle_passes"], n_line_passes=stats["line_passes"],
                    n_cache_passes=stats["cache_passes"],
                    n_constraints=qp.n_constraints, qp_steps=qp.qp_steps,
                    working_set_size=int(self.orc.cache_sizes().sum()), bytes_per_iteration=bytes_per_iteration,
                    caches=self.orc.get_caches() if self.surrogate is None else None)
