"""SDM: the sequential dual method for margin rescaling (_kernels/solvers/sdm.pyx)."""
import math

import numpy as np

from .._kernels.sdm import SDMSolver
from .loop import GAP_CHECK_EVERY, Run, Step
from ..params import Param
from .solver import Solver

# Type-II passes (working sets only) allowed between two type-I (oracle) passes.
MAX_TYPE2_PASSES = 10
# A type-II pass is followed by another only if it raised the dual by at least TYPE2_GAIN times
# what the type-I pass did: their gains fall fast while each costs a fixed fraction of a type-I pass
# (benchmarks/planted_vs_liblinear.py, benchmarks/ocr_chain.py). A gain, not a time: results stay
# deterministic.
TYPE2_GAIN = 0.2
# Visits stop their SMO steps -- or, where the structure solves the sub-problem exactly, are
# skipped -- once the example's KKT violation is at most INNER_TOL times the rule's tol: near-exact
# sub-problems make each pass count (LIBLINEAR -s 4 solves its own exactly), and the cheap ones
# cost little (benchmarks/multiclass_vs_liblinear.py --split sector, benchmarks/vs_previous.py).
INNER_TOL = 0.001
# Inside Catalyst (large C) the passes' own tolerance is this fraction instead: its centres move
# every few passes, so exact sub-problems of a centre's problem buy little (benchmarks/ocr_chain.py).
CATALYST_INNER_TOL = 0.1
# Type-I visits on structures that ask for every violating label (multiclass) add up to this many
# violating runners-up of the oracle's answer (not those tying with it, as every class does at
# w = 0): the exact sub-problem then spreads each visit's step over them as LIBLINEAR -s 4's does
# over all classes, and those it leaves at zero leave the working set at once
# (benchmarks/multiclass_vs_liblinear.py --split sector, benchmarks/vs_previous.py planted-sdm).
EXACT_RUNNERS_UP = 16
# ... and at least this many, 2 K / (examples per class) between the two for K classes: with few
# examples per class each visit must spread over many classes (Sector: fewer took many more
# passes), with many the extra labels only cost (planted-sdm, mc-sdm: 4 was fastest).
MIN_RUNNERS_UP = 4
# ... but the first type-I pass of a cold start adds at most this many: near w = 0 nearly every class
# violates about as much as the oracle's answer, and the exact steps would spread each example over
# many of them (benchmarks/vs_previous.py planted-sdm).
RUNNERS_UP_FIRST_PASS = 1
# SDM on a memory-mapped data set (ssvm-convert's cache): passes visit shuffled blocks of this many
# consecutive examples, shuffled within each block, and read the next block ahead while visiting
# one, so a pass reads the file in long runs instead of a page per example
# (benchmarks/cluster.py --mmap-limit-mb).
MMAP_VISIT_BLOCK = 4096


def ascent_objective(kernel):
    """The objective a dual kernel's passes raise: its dual, minus (1/sigma - 1)/2 |w|^2
    when it solves a scaled subproblem (sigma < 1: Catalyst's inner problems, CoCoA+'s local
    ones; up to a constant)."""
    w = kernel.coef
    return kernel.ws.linear_term() - 0.5 / kernel.sigma * float(np.dot(w, w))


def runners_up(structure, exact_violators):
    """SDMSolver's n_runners for a problem (the kernel's default unless the structure asks for
    every violating label; then 2 K^2 / n within [MIN_RUNNERS_UP, EXACT_RUNNERS_UP] on K classes)."""
    if not exact_violators:
        return {}
    K, n = getattr(structure, "n_classes", 0), structure.n_examples
    if K <= 0 or n <= 0:
        return dict(n_runners=EXACT_RUNNERS_UP)
    return dict(n_runners=int(min(EXACT_RUNNERS_UP, max(MIN_RUNNERS_UP, math.ceil(2.0 * K * K / n)))))


def run_type2_passes(kernel, tol, inner_tol, before_type1, limit, after_pass=None):
    """SDM's type-II passes (working sets only, SMO steps to inner_tol) after a type-I pass that
    started at ascent_objective = before_type1: at most min(MAX_TYPE2_PASSES, limit), and each only
    while the last one's KKT violation was above tol and its gain at least TYPE2_GAIN times the
    type-I pass's. after_pass(objective) runs after each. Returns the number of passes run."""
    last = ascent_objective(kernel)
    type1_gain = last - before_type1
    count = max(0, min(MAX_TYPE2_PASSES, limit))
    for k in range(count):
        viol = kernel.run_pass(False, inner_tol)
        now = ascent_objective(kernel)
        if after_pass is not None:
            after_pass(now)
        if viol <= tol or now - last < TYPE2_GAIN * type1_gain:
            return k + 1
        last = now
    return count


class SDM(Solver):
    """Sequential dual method (Balamurugan et al. 2011) for margin rescaling.

    A step is a type-I pass: the loss-augmented oracle on every example, each followed by SMO
    steps on its working set; type-II passes (working sets only) follow while they pay. The rule
    (LIBLINEAR -s 4's): a type-I pass whose largest KKT violation is <= tol. At large C (C R^2
    above catalyst.CATALYST_SCALE), SDM runs inside Catalyst, whose default fit stops on a
    relative duality gap <= GAP_TOL (1 %); an explicit tol stops there at the first centre whose
    relative gap is <= GAP_TOL * min(1, tol / default_tol)^2 -- what the default rule asks, and
    quadratically less below default_tol (the weights' distance to the optimum goes as the gap's
    square root) -- or, at a centre whose gap is below
    catalyst.KKT_CHECK_GAP, on a pass of the original problem whose largest KKT violation is
    <= tol. A looser tol therefore never runs past a tighter one's stop, and from default_tol on
    it stops where the default rule does. On a Dask cluster SDM runs inside CoCoA+.

    {parameters}

    Attributes
    ----------
    name : str
        The estimators' name of this solver: ``solver="sdm"`` selects it with its default
        parameters.
    default_tol : float
        The tolerance of its stopping rule when the estimator's tol is None (0.1).

    See Also
    --------
    SDCD : The dual coordinate method for the LSE problem.
    CuttingPlane : The one-slack cutting plane (margin rescaling, LSE and surrogates).
    BCFW : Block-coordinate Frank-Wolfe on the same dual.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import MulticlassSSVM
    >>> from ssvmlinear.solvers import SDM
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [-1.0, -1.0], [-0.9, -1.1]])
    >>> y = np.array([0, 0, 1, 1, 2, 2])
    >>> clf = MulticlassSSVM(C=10.0, solver=SDM(oracle_batch=2), n_jobs=2).fit(X, y)
    >>> clf.predict(X)
    array([0, 0, 1, 1, 2, 2])
    >>> clf.get_params()["solver__oracle_batch"]   # a grid search reaches it so
    2

    Shards visited concurrently, on sequences:

    >>> from ssvmlinear import ChainSSVM
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    >>> y = np.array([0, 1, 0, 1, 1, 0, 1])
    >>> lengths = np.array([4, 3])          # two sequences, of 4 and 3 tokens
    >>> ChainSSVM(C=10.0, solver=SDM(shards=2), n_jobs=2).fit(X, y, lengths).predict(X, lengths)
    array([0, 1, 0, 1, 1, 0, 1])
    """
    name = "sdm"
    # ssvm-train -e: the stopping rule in the usage's words (its default tolerance follows)
    cli_rule = ("stop after a pass over all examples in which every example's KKT violation "
                "max_y H_i(y) - min_{y: alpha_i(y) > 0} H_i(y) <= eps, H_i(y) = Delta(y, y_i) + f(y) - f(y_i) "
                "(LIBLINEAR -s 4's rule); at large C (accelerated, C R^2 > 10) also at a relative duality gap "
                "<= 1% * min(1, eps / 0.1)")
    warm_starts = True
    title = "SDM"
    default_tol = 0.1
    distributed = "cocoa"
    params = (
        Param("oracle_batch", "int", 1, "Type-I passes take the shuffled examples in blocks of this many, whose "
              "oracles are asked at the block's starting weights by n_jobs threads (1: the sequential method; "
              "results depend on it, not on n_jobs).", low=1, flag="b", metavar="size",
              cli="SDM oracle block (default 1): the loss-augmented inferences of a block of examples are made at "
                  "the block's starting weights in -n threads, then its examples are updated in turn (1 = the "
                  "sequential method; results depend on -b, not on -n)"),
        Param("shards", "int", 1, "Passes run in rounds cut into this many shards visited concurrently against "
              "their own copies of w, combined by an exact line search (chains; not with oracle_batch > 1).",
              low=1, flag="P", metavar="shards",
              cli="SDM's passes run in rounds cut into `shards` shards, visited concurrently in -n threads "
                  "against their own copies of w and combined by an exact line search on the dual (default 1 = "
                  "the sequential method; results depend on -P, not on -n; instead of -b > 1; pays for chains: "
                  "-P 2 -n 2)"),
    )

    def __init__(self, oracle_batch=1, shards=1):
        self.oracle_batch = oracle_batch
        self.shards = shards

    def start_local(self, problem):
        from .catalyst import CatalystRun, catalyst_kappa, implied_gap
        run = SDMRun(self, problem)
        kappa = catalyst_kappa(problem.structure, problem.Cs)
        if kappa <= 0:
            return run
        implied = None
        # Catalyst's passes: CATALYST_INNER_TOL times the default fit's tol; with an explicit tol,
        # the default fit's relative gap rule, scaled down below default_tol, stops it too, and its
        # passes take the default fit's inner tolerance scaled alike (a looser tol then takes the
        # default fit's very passes: never more of them)
        run.inner_tol = CATALYST_INNER_TOL * min(problem.tol, self.default_tol)
        if problem.gap_tol is None:
            implied = implied_gap(problem.tol, self.default_tol)
        return CatalystRun(run, kappa, problem.gap_tol, implied_gap=implied, state=problem.state)

    # CoCoA+ (cocoa.py): the local solver on a shard and its rounds
    cocoa_gap_only = True          # its measured gap is the true one: a default fit stops on it

    def local_kernel(self, structure, Cs, seed, exact_violators):
        return SDMSolver(structure, Cs, seed, visit_block=MMAP_VISIT_BLOCK if structure.X.memory_mapped else 0,
                         **runners_up(structure, exact_violators))

    def local_round(self, kernel, tol):
        """A type-I pass and its type-II passes; (rule value, passes)."""
        before = ascent_objective(kernel)
        rule = kernel.run_pass(True, INNER_TOL * tol)
        return rule, 1 + run_type2_passes(kernel, tol, INNER_TOL * tol, before, MAX_TYPE2_PASSES)

    def local_slack(self, kernel, half_ww):
        return kernel.slack_sum()

    @staticmethod
    def rule_of_rounds(rules, tol, dual):
        return max(rules) <= tol


class SDMRun(Run):
    tag = "sdm"
    title = "SDM"
    w_tracks_v = True       # (Catalyst: w moves by sigma times each alpha change's dphi)

    def __init__(self, solver, problem):
        from joblib import effective_n_jobs
        from ..parallel import KernelTeam
        structure, n = problem.structure, problem.structure.n_examples
        batch, shards = int(solver.oracle_batch), int(solver.shards)
        if shards > 1 and batch > 1:
            raise ValueError(f"SDM: oracle_batch={batch} and shards={shards}: SDM's threads share either oracle "
                             f"blocks or shards, not both (set one of them to 1)")
        self.batch = min(batch, max(n, 1))     # a block of all examples at most: its buffers grow with it
        threads = max(1, min(effective_n_jobs(problem.n_jobs), max(n, 1)))
        self.kernel = SDMSolver(structure, problem.Cs, problem.seed, batch=self.batch, n_threads=threads,
                                n_shards=min(shards, max(n, 1)),
                                visit_block=MMAP_VISIT_BLOCK if structure.X.memory_mapped else 0,
                                **runners_up(structure, problem.exact_violators))
        self.cold = problem.state is None
        if problem.state is not None:
            self.kernel.set_state(problem.state, problem.Cs)
        self.keep_state = problem.keep_state
        self.tol = problem.tol
        self.inner_tol = INNER_TOL * problem.tol
        self.c_sum = max(float(np.sum(problem.Cs)), 1e-300)
        self.monitor = problem.monitor
        self.outer = 0
        self.last_dual = None
        self.dual_before = None
        # threads - 1 helpers run for the whole fit, sleeping in the kernel between shared oracle
        # blocks (parallel.KernelTeam: one joblib call per fit)
        self.helpers = KernelTeam(self.kernel.team)
        self.helpers.__enter__()

    def close(self):
        self.helpers.__exit__(None, None, None)
        self.kernel.release()      # the fitted estimator keeps the weights, not the working sets

    def step(self, limit):
        k = self.kernel
        self.dual_before = self.last_dual if self.last_dual is not None else k.dual()
        if self.outer == 0 and self.cold and k.n_runners > RUNNERS_UP_FIRST_PASS:
            k.active_runners = RUNNERS_UP_FIRST_PASS
        viol = k.run_pass(True, self.inner_tol, self.batch)
        k.active_runners = k.n_runners
        self.outer += 1
        self.last_dual = k.dual()
        return Step(1, self.last_dual, k.primal() if self.monitor else np.nan, rule=viol <= self.tol,
                    periodic=self.monitor or self.outer % GAP_CHECK_EVERY == 0, text=f"violation {viol:.3e}")

    def after_step(self, limit):
        duals = []      # the dual after each (sigma = 1: the ascent objective)
        run_type2_passes(self.kernel, self.tol, self.inner_tol, self.dual_before, limit, duals.append)
        if duals:
            self.last_dual = duals[-1]
        return duals

    def tighten(self):
        self.tol *= 0.1
        self.inner_tol *= 0.1

    def rule_text(self):
        return f"the KKT violation fell to tol={self.tol:.3g}"

    def slack_sum(self):
        """Catalyst's hook: sum_i C_i max_y H_i(y) at the kernel's w (an oracle pass)."""
        return self.kernel.slack_sum()

    def tol_for_gap(self, gap):
        """Catalyst's hook: the KKT tolerance of passes whose examples' violations, each adding
        at most C_i times itself to the duality gap, add at most `gap` in all."""
        return gap / self.c_sum

    def slack_estimate(self):
        """Catalyst's hook: the slack the last type-I pass saw (each example at the w of its oracle
        call)."""
        return self.kernel.pass_slack

    def kkt_pass(self):
        """Catalyst's hook with an explicit tol: a type-I pass of the original problem (sigma = 1,
        w = v); returns its largest KKT violation (the plain rule's measure)."""
        return self.kernel.run_pass(True, self.inner_tol, self.batch)

    def outer_iteration(self, inner_tol, limit):
        """Catalyst's hook: a type-I pass and its type-II passes at inner_tol; returns passes."""
        k = self.kernel
        before = ascent_objective(k)
        k.run_pass(True, inner_tol, self.batch)
        return 1 + run_type2_passes(k, inner_tol, inner_tol, before, limit - 1)

    def result(self):
        k = self.kernel
        return dict(n_oracle_calls=k.n_oracle_calls, oracle_seconds=k.oracle_seconds,
                    working_set_size=int(k.working_set_sizes().sum()),
                    state=k.get_state() if self.keep_state else None)
