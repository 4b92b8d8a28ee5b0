"""Python drivers of the compiled solvers: the outer loops, diagnostics, stopping and warnings.

The kernels do whole passes without the GIL; the loops here run between passes, so `verbose`
output, callbacks and Ctrl-C (which keeps the current model) work from Python.
"""
import logging
import sys
import time
import warnings

import numpy as np

from .exceptions import ConvergenceWarning
from .distributed import cluster_of
from .parallel import KernelTeam, shard_bounds
from ._kernels.sdm import SDMSolver
from ._kernels.sdcd import SDCDSolver

# Type-II passes (working sets only) allowed between two type-I (oracle) passes.
MAX_TYPE2_PASSES = 10
# A type-II pass is followed by another only if it raised the dual by at least TYPE2_GAIN times
# what the type-I pass did: their gains fall fast while each costs a fixed fraction of a type-I pass
# (benchmarks/planted_vs_liblinear.py, benchmarks/ocr_chain.py). A gain, not a time: results stay
# deterministic.
TYPE2_GAIN = 0.2
# SDM on a memory-mapped data set (ssvm-convert's cache): passes visit shuffled blocks of this many
# consecutive examples, shuffled within each block, and read the next block ahead while visiting
# one, so a pass reads the file in long runs instead of a page per example
# (benchmarks/cluster.py --mmap-limit-mb).
MMAP_VISIT_BLOCK = 4096


LOGGER = logging.getLogger("ssvmlinear")


class _StderrHandler(logging.StreamHandler):
    """Progress on stderr when nothing else is configured; a closed stream (`| head`) never
    stops training."""

    @property
    def stream(self):   # sys.stderr at emit time (so redirections and pytest's capture see it)
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass

    def handleError(self, record):
        pass


_STDERR = _StderrHandler()
_STDERR.setFormatter(logging.Formatter("%(message)s"))


def log_progress(line):
    """One progress line of a solver (verbose > 0), at INFO on the logger "ssvmlinear": captured by
    the user's logging set-up when there is one, else written to stderr."""
    if LOGGER.hasHandlers():
        LOGGER.info(line)
    else:
        _STDERR.handle(logging.LogRecord("ssvmlinear", logging.INFO, __file__, 0, line, None, None))


def warn_if_unfinished(solver_name, interrupted, hit_max_iter, max_iter, rule):
    """The ConvergenceWarning every driver gives when it stops at max_iter before its rule (none
    when interrupted: the estimator re-raises the KeyboardInterrupt)."""
    if hit_max_iter and not interrupted:
        warnings.warn(f"{solver_name} reached max_iter={max_iter} before {rule}; increase max_iter or tol",
                      ConvergenceWarning)


# A fit whose duality gap exceeds this fraction of its primal objective is far from its optimum.
GAP_WARN = 0.05
# Default fits (tol=None) stop only when, besides their own rule at its default tolerance, the
# relative duality gap (primal - dual) / primal is at most this: a rule stated per example or in
# absolute terms (LSE-SDCD's dual changes at small C, the cutting plane's eps * sum_i C_i at
# large n) can otherwise fire far from the optimum.
GAP_TOL = 0.01


# Once the gap check has failed, it is repeated every this many oracle passes too (a tightened rule
# may need many more passes than the gap does, as SDM's at large C).
GAP_CHECK_EVERY = 10


def gap_too_large(primal, dual, gap_tol):
    """Whether a default fit whose own rule fired must go on: relative gap above gap_tol."""
    return gap_tol is not None and primal - dual > gap_tol * max(abs(primal), 1e-300)


def warn_if_gap_large(solver_name, primal, dual):
    """The ConvergenceWarning of a fit that stopped (by its rule or max_iter) far from its optimum."""
    gap = primal - dual
    if np.isfinite(gap) and gap > GAP_WARN * max(abs(primal), 1e-300):
        warnings.warn(f"{solver_name} stopped with a relative duality gap of {gap / abs(primal):.3g} (primal "
                      f"{primal:.6g}, dual {dual:.6g}); lower tol or raise max_iter", ConvergenceWarning)


class FitResult:
    """What a solver run reports: weights, objectives and curves."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


# Accelerated SDM (Catalyst: Lin, Mairal & Harchaoui 2015, the strongly convex case with mu = 1)
# at large C: SDM's passes are block-coordinate steps whose progress shrinks as C R^2 grows (R^2:
# an example's squared feature norm). Catalyst runs SDM on the better conditioned problems
#     min_w 1/2 |w|^2 + kappa/2 |w - c_k|^2 + sum_i C_i max_y [...],
# i.e. SDM's dual with its Gram matrix and its updates of w scaled by 1 / (1 + kappa) (the
# kernels' sigma) and w = (v + kappa c_k) / (1 + kappa), v = sum alpha dphi, warm-started from the
# previous alpha; the centres follow Nesterov's extrapolation c_k+1 = w_k + beta (w_k - w_k-1),
# beta = (1 - sqrt(q)) / (1 + sqrt(q)), q = 1 / (1 + kappa). Every alpha is feasible for the
# original dual, so the dual at v and the primal at w_k bound the optimum after each centre: the
# fit stops on their relative gap. kappa makes C R^2 / (1 + kappa) = CATALYST_SCALE (below it,
# kappa = 0: plain SDM); tuned on OCR chains at large C (benchmarks/large_c.py).
CATALYST_SCALE = 100.0
CATALYST_INNER = 0.5      # a centre's inner gap target, relative to the last centre's gap
CATALYST_CYCLES = 4       # inner SDM outer iterations before SDM's inner tolerance is cut by 10


def catalyst_kappa(structure, Cs):
    """The proximal weight of accelerated SDM for this problem: max(0, mean C_i R^2 / CATALYST_SCALE
    - 1), R^2 = the squared norm of the data rows per example (bias included), C_i > 0."""
    X = getattr(structure, "X", None)
    Cs = np.asarray(Cs, dtype=np.float64)
    if X is None or structure.n_examples == 0 or not np.any(Cs > 0):
        return 0.0
    r2 = float(np.sum(X.sqnorms)) / structure.n_examples
    return max(0.0, float(np.mean(Cs[Cs > 0])) * r2 / CATALYST_SCALE - 1.0)


def ascent_objective(solver):
    """The objective a dual solver's passes raise: its dual, minus (1/sigma - 1)/2 |w|^2
    when it solves a scaled subproblem (sigma < 1: Catalyst's inner problems, CoCoA+'s local
    ones; up to a constant)."""
    w = solver.coef
    return solver.ws.linear_term() - 0.5 / solver.sigma * float(np.dot(w, w))


def run_type2_passes(solver, tol, inner_tol, before_type1, limit, after_pass=None):
    """SDM's type-II passes (working sets only, SMO steps to inner_tol) after a type-I pass that
    started at ascent_objective = before_type1: at most min(MAX_TYPE2_PASSES, limit), and each only
    while the last one's KKT violation was above tol and its gain at least TYPE2_GAIN times the
    type-I pass's. after_pass(objective) runs after each. Returns the number of passes run."""
    last = ascent_objective(solver)
    type1_gain = last - before_type1
    count = max(0, min(MAX_TYPE2_PASSES, limit))
    for k in range(count):
        viol = solver.run_pass(False, inner_tol)
        now = ascent_objective(solver)
        if after_pass is not None:
            after_pass(now)
        if viol <= tol or now - last < TYPE2_GAIN * type1_gain:
            return k + 1
        last = now
    return count


def fit_sdm(structure, Cs, tol, max_iter, seed, verbose=0, callback=None, estimator=None,
            state=None, keep_state=False, monitor_primal=False, n_jobs=None, oracle_batch=1,
            gap_tol=None, shards=1):
    """Sequential dual method (see _kernels/solvers/sdm.pyx).

    Stopping rule: a type-I pass (loss-augmented oracle on every example) in which the maximal
    KKT violation max_y H_i(y) - min_{alpha_i(y)>0} H_i(y) over all examples is <= tol (LIBLINEAR
    -s 4's rule). Every type-I pass is followed by type-II passes (working sets only) while they
    pay (run_type2_passes). With gap_tol (the estimators' default fit), the relative duality gap must also be
    <= gap_tol, checked with one oracle pass when the rule fires; while it is not, tol is divided
    by 10 and the gap is checked again when that rule fires or every GAP_CHECK_EVERY outer
    iterations. max_iter bounds the number of passes (type-I and type-II). The primal objective
    curve costs one oracle pass, so it is recorded after each type-I pass when verbose >= 2, a
    callback or monitor_primal asks for it (NaN otherwise); the dual curve after every pass.

    Large C: a default fit (gap_tol set) whose catalyst_kappa is > 0 runs accelerated SDM
    (Catalyst, see CATALYST_SCALE and _sdm_catalyst): SDM outer iterations per centre until the
    inner problem's gap is CATALYST_INNER of the last centre's, the true duality gap (dual at
    alpha, primal at the iterate) after each centre, and the
    fit stops on the relative gap <= gap_tol alone (the inner problems' KKT violations are not the
    original problem's); objective_curve_ and dual_curve_ hold one entry per centre. It keeps two
    more vectors of the weight dimension. An explicit tol runs the plain method and its KKT rule.

    oracle_batch B > 1: type-I passes take the shuffled examples in blocks of B whose oracles are
    all asked at the block's starting weights -- shared by the fitting thread and n_jobs - 1
    joblib helper threads (nogil) -- before the block's visits, which run sequentially in block
    order. Results depend on B (B = 1 is the plain sequential method, its oracles inline) but not
    on n_jobs; the optimum does not depend on either. Type-II passes (no oracle) are sequential.
    The primal evaluations (one oracle per example) are shared for any B, with the same value as
    in one thread. oracle_seconds: wall-clock seconds of the type-I passes' oracle phase.

    Memory-mapped data (structure.X.memory_mapped: ssvm-convert's cache): passes visit shuffled
    blocks of MMAP_VISIT_BLOCK consecutive examples and read the next block ahead, so the file is
    read in long runs (another visiting order than in memory: the same optimum, another path).

    shards S > 1 (instead of oracle blocks): every pass, type-I and type-II, runs in rounds whose
    examples are cut into S shards visited concurrently (n_jobs threads), each against its own copy
    of w, then combined by an exact line search along the sum of their changes (_kernels/solvers/sdm.pyx).
    Results depend on S but not on n_jobs; the optimum and the stopping rules are the plain
    method's. It pays where visits are costly and the shards' changes add up (OCR chains,
    benchmarks/sdm_threads.py); where the shards' changes overlap, as on sparse multiclass
    problems, the passes multiply and oracle blocks are the better use of threads
    (benchmarks/planted_threads.py). oracle_seconds then sums the shards' oracle time.
    """
    from joblib import effective_n_jobs

    client = cluster_of(structure)
    if client is not None:      # shards on a Dask cluster: CoCoA+ over SDM (distributed.py)
        from .distributed import fit_cocoa
        return fit_cocoa(client, structure, Cs, "sdm", tol, max_iter, seed, verbose, gap_tol,
                         callback=callback, estimator=estimator)
    batch = max(1, int(oracle_batch))
    shards = max(1, int(shards))
    if shards > 1 and batch > 1:
        raise ValueError(f"oracle_batch={batch} and shards={shards}: SDM's threads share either oracle "
                         f"blocks or shards, not both (set one of them to 1)")
    n = structure.n_examples
    batch = min(batch, max(n, 1))   # a block of all examples at most: its buffers grow with it
    threads = max(1, min(effective_n_jobs(n_jobs), max(n, 1)))
    solver = SDMSolver(structure, Cs, seed, batch=batch, n_threads=threads,
                       n_shards=min(shards, max(n, 1)),
                       visit_block=MMAP_VISIT_BLOCK if structure.X.memory_mapped else 0)
    if state is not None:
        solver.set_state(state, Cs)
    inner_tol = 0.1 * tol
    monitor_primal = monitor_primal or verbose >= 2 or callback is not None
    # threads - 1 helpers run for the whole fit, sleeping in the kernel between shared oracle
    # blocks (parallel.KernelTeam: one joblib call per fit).
    helpers = KernelTeam(solver.team)
    helpers.__enter__()

    primal_curve, dual_curve, timestamps = [], [], []
    passes = outer = 0
    converged = interrupted = stopped_by_user = False
    primal = np.nan
    gap_checks = 0
    kappa = catalyst_kappa(structure, Cs) if gap_tol is not None else 0.0
    t0 = time.perf_counter()

    def record_type2(dual):
        dual_curve.append(dual)
        primal_curve.append(np.nan)
        timestamps.append(time.perf_counter() - t0)

    try:
        try:
            if kappa > 0:
                passes, outer, primal, converged, stopped_by_user, interrupted = _sdm_catalyst(
                    solver, kappa, inner_tol, batch, max_iter, gap_tol, primal_curve, dual_curve, timestamps, t0,
                    verbose, callback, estimator, structure)
                if interrupted:
                    raise KeyboardInterrupt
            while passes < max_iter and not (converged or stopped_by_user):
                primal = np.nan
                dual_before = dual_curve[-1] if dual_curve else solver.dual()
                viol = solver.run_pass(True, inner_tol, batch)
                passes += 1
                outer += 1
                dual = solver.dual()
                dual_curve.append(dual)
                primal_curve.append(solver.primal() if monitor_primal else np.nan)
                timestamps.append(time.perf_counter() - t0)
                if verbose:
                    primal_txt = f" primal {primal_curve[-1]:.10g}" if monitor_primal else ""
                    log_progress(f"[sdm] iter {outer:4d} passes {passes:5d} violation {viol:.3e}{primal_txt} "
                                 f"dual {dual:.10g} time {timestamps[-1]:.2f}s")
                if viol <= tol or (gap_checks and (monitor_primal or outer % GAP_CHECK_EVERY == 0)):
                    primal = primal_curve[-1] if monitor_primal else solver.primal()
                    gap_checks += 1
                    if not gap_too_large(primal, dual, gap_tol):
                        converged = True
                        break
                    if viol <= tol:
                        tol, inner_tol = 0.1 * tol, 0.1 * inner_tol
                    if verbose:
                        log_progress(f"[sdm] relative gap {(primal - dual) / primal:.3g} > {gap_tol}: tol {tol:.3g}")
                structure.check_implemented("SDM")
                if callback is not None and callback(estimator) is False:
                    stopped_by_user = True
                    break
                passes += run_type2_passes(solver, tol, inner_tol, dual_before, max_iter - passes, record_type2)
        except KeyboardInterrupt:
            interrupted = True
        accelerated = kappa > 0 and not interrupted     # (its last centre's bounds are known)
        if not (converged or accelerated):   # (a converged fit has just evaluated it)
            primal = solver.primal()
    finally:
        helpers.__exit__(None, None, None)
    warn_if_unfinished("SDM", interrupted, not converged and passes >= max_iter, max_iter,
                       f"the relative duality gap fell to {gap_tol:.3g}" if kappa > 0 else
                       f"the KKT violation fell to tol={tol:.3g}")
    dual = dual_curve[-1] if accelerated else solver.dual()
    if not (interrupted or stopped_by_user):
        warn_if_gap_large("SDM", primal, dual)
    result = FitResult(interrupted=interrupted, w=solver.coef, primal=primal, dual=dual, gap=primal - dual, n_iter=passes,
                       n_outer=outer, converged=converged, n_oracle_calls=solver.n_oracle_calls,
                       oracle_seconds=solver.oracle_seconds,
                       working_set_size=int(solver.working_set_sizes().sum()),
                       objective_curve=np.array(primal_curve), dual_curve=np.array(dual_curve),
                       timestamps=np.array(timestamps),
                       state=solver.get_state() if keep_state else None)
    solver.release()   # the fitted estimator keeps the weights, not the working sets
    return result


def _sdm_catalyst(solver, kappa, inner_tol, batch, max_iter, gap_tol, primal_curve, dual_curve, timestamps, t0,
                  verbose, callback, estimator, structure):
    """fit_sdm's accelerated loop (see CATALYST_SCALE); returns (passes, centres, primal,
    converged, stopped_by_user, interrupted) and leaves the last centre's iterate w_k in the solver
    (primal and dual_curve[-1] its bounds); interrupted (KeyboardInterrupt) leaves w = v (a
    primal-dual pair).

    Each centre's inner problem runs SDM outer iterations (a type-I pass and its type-II passes)
    until its own duality gap is at most CATALYST_INNER times the last centre's gap (Catalyst's
    relative accuracy; one oracle pass each, which also gives the primal at w_k); when that takes
    more than CATALYST_CYCLES iterations, SDM's inner tolerance (SMO and type-II stopping) is cut
    by 10. A centre whose primal is above the previous one restarts the extrapolation (beta = 0)."""
    w = solver.coef                        # the solver's weights (a view)
    sigma = 1.0 / (1.0 + kappa)
    root = np.sqrt(sigma)
    beta = (1.0 - root) / (1.0 + root)
    solver.sigma = sigma
    # w = v = sum alpha dphi here (a cold start: 0); the first centre is the start itself
    last = w.copy()                        # w_k-1
    center = w.copy()
    passes = centres = 0
    primal = solver.primal()
    gap = primal - solver.dual()
    try:
        while passes < max_iter:
            np.multiply(w, sigma, out=w)       # w = (v + kappa c) / (1 + kappa)
            w += (kappa * sigma) * center
            cycles = 0
            while passes < max_iter:
                before = ascent_objective(solver)
                solver.run_pass(True, inner_tol, batch)
                passes += 1
                passes += run_type2_passes(solver, inner_tol, inner_tol, before, max_iter - passes)
                cycles += 1
                ww = float(np.dot(w, w))
                slack = solver.slack_sum()
                # inner primal 1/2|w|^2 + kappa/2 |w - c|^2 + slack minus the inner dual
                # L - (1 + kappa)/2 |w|^2 + kappa/2 |c|^2, L = solver.dual() + 1/2 |w|^2
                # (no temporary of the weight dimension)
                inner_gap = (0.5 + kappa) * ww - kappa * float(np.dot(w, center)) + slack - solver.dual()
                if inner_gap <= CATALYST_INNER * gap:
                    break
                if cycles >= CATALYST_CYCLES:
                    inner_tol *= 0.1
                    cycles = 0
            centres += 1
            new_primal = 0.5 * ww + slack      # at w_k
            b = beta if new_primal <= primal else 0.0
            primal = new_primal
            np.subtract(w, last, out=center)   # c_k+1 = w_k + beta (w_k - w_k-1)
            center *= b
            center += w
            last[:] = w
            solver.recompute_w()               # v: the dual of the original problem
            dual = solver.dual()
            gap = primal - dual
            primal_curve.append(primal)
            dual_curve.append(dual)
            timestamps.append(time.perf_counter() - t0)
            if verbose:
                log_progress(f"[sdm] centre {centres:4d} passes {passes:5d} kappa {kappa:.3g} primal {primal:.10g} "
                             f"dual {dual:.10g} time {timestamps[-1]:.2f}s")
            structure.check_implemented("SDM")
            if not gap_too_large(primal, dual, gap_tol):
                w[:] = last
                return passes, centres, primal, True, False, False
            if callback is not None:
                w[:] = last
                if callback(estimator) is False:
                    return passes, centres, primal, False, True, False
                solver.recompute_w()
    except KeyboardInterrupt:
        solver.recompute_w()                   # w = v: fit_sdm evaluates the pair
        return passes, centres, primal, False, False, True
    w[:] = last
    return passes, centres, primal, False, False, False


def fit_sdcd(structure, Cs, tol, max_iter, seed, verbose=0, callback=None, estimator=None,
             state=None, keep_state=False, kappa1=10, kappa2=5, exact_violators=False,
             gap_tol=None, primal=None):
    """LSE-SDCD (_kernels/solvers/sdcd.pyx), with the loop schedule of Alg. 2: type-I passes (oracle) until
    pass kappa1, then type-II passes (working sets only) with a type-I pass every kappa2 passes.

    Stopping rule (the paper's, scaled with C): a type-I pass in which no example's sum of squared
    dual changes divided by C_i exceeds tol (deltathresh, 1e-4 in the paper, where C = 1). With
    gap_tol (the estimators' default fit), the relative duality gap must also be <= gap_tol when
    the rule fires; while it is not, tol is divided by 10 and the gap is checked again when that
    rule fires or every GAP_CHECK_EVERY type-I passes (at C_i <= tol the rule alone fires after
    the first pass, whatever the gap). max_iter bounds the number of passes.

    primal: callable(w) -> the LSE primal objective at w (the multiclass estimator sums over all
    classes); default the primal of the problem restricted to the working sets V_i (OP5, whose
    dual is the solver's), which is what chains and multi-label report.
    """
    client = cluster_of(structure)
    if client is not None:      # shards on a Dask cluster: CoCoA+ over LSE-SDCD (distributed.py)
        from .distributed import fit_cocoa
        return fit_cocoa(client, structure, Cs, "sdcd", tol, max_iter, seed, verbose, gap_tol,
                         exact_violators=exact_violators, kappa2=kappa2, callback=callback, estimator=estimator)
    solver = SDCDSolver(structure, Cs, seed, exact_violators)
    if state is not None:
        solver.set_state(state, Cs)
    primal_of = (lambda: primal(solver.coef)) if primal is not None else solver.restricted_primal
    dual_curve, timestamps = [], []
    passes = 0
    get_max_y = True
    converged = interrupted = stopped_by_user = False
    P = np.nan
    type1 = gap_checks = 0
    t0 = time.perf_counter()
    try:
        while passes < max_iter:
            P = np.nan
            changed, vmax = solver.run_pass(get_max_y, tol)
            dual_curve.append(solver.dual())
            timestamps.append(time.perf_counter() - t0)
            if verbose:
                log_progress(f"[sdcd] pass {passes:5d} {'type-I ' if get_max_y else 'type-II'} changed {changed:7d} "
                             f"max change {vmax:.3e} dual {dual_curve[-1]:.10g} time {timestamps[-1]:.2f}s")
            if get_max_y:
                type1 += 1
                if changed == 0 or (gap_checks and type1 % GAP_CHECK_EVERY == 0):
                    P = primal_of()
                    gap_checks += 1
                    if not gap_too_large(P, dual_curve[-1], gap_tol):
                        converged = True
                        passes += 1
                        break
                    if changed == 0:
                        tol *= 0.1
                    if verbose:
                        log_progress(f"[sdcd] relative gap {(P - dual_curve[-1]) / P:.3g} > {gap_tol}: tol {tol:.3g}")
                if passes >= kappa1:
                    get_max_y = False
            elif (passes - kappa1) % kappa2 == 0:
                get_max_y = True
            passes += 1
            structure.check_implemented("LSE-SDCD")
            if callback is not None and callback(estimator) is False:
                stopped_by_user = True
                break
    except KeyboardInterrupt:
        interrupted = True
    warn_if_unfinished("LSE-SDCD", interrupted, not converged and passes >= max_iter, max_iter,
                       f"its stopping rule (tol={tol:.3g})")
    dual = solver.dual()
    if not converged:   # (a converged fit has just evaluated it)
        P = primal_of()
    if not (interrupted or stopped_by_user):
        warn_if_gap_large("LSE-SDCD", P, dual)
    result = FitResult(interrupted=interrupted, w=solver.coef, primal=P, dual=dual, gap=P - dual, n_iter=passes,
                       n_outer=passes, converged=converged, n_oracle_calls=solver.n_oracle_calls,
                       objective_curve=np.full(len(dual_curve), np.nan), dual_curve=np.array(dual_curve),
                       timestamps=np.array(timestamps), working_set_size=int(solver.working_set_sizes().sum()),
                       state=solver.get_state() if keep_state else None)
    solver.release()   # the fitted estimator keeps the weights, not the working sets
    return result


# The one-slack cutting plane splits every pass into this many fixed chunks of examples, whatever
# n_jobs is, and adds their parts in chunk order: results do not depend on n_jobs.
CP_CHUNKS = 32
# Every this many oracle passes the running constraint accumulators are recomputed from scratch.
REBUILD_EVERY = 50
# At most this many type-II (cache) iterations of the cutting plane in a row: the paper's kappa2 =
# 5, its two-loop schedule of Alg. 2 (a type-I pass every kappa2 passes).
CP_MAX_TYPE2 = 5


def fit_cutting_plane(structure, Cs, tol, max_iter, seed=0, verbose=0, callback=None, estimator=None,
                      state=None, keep_state=False, lse=False, n_jobs=None, cache_size=10,
                      inactive_after=50, qp_tol=1e-10, exact_violators=False, loss="margin",
                      search="hull", max_calls=50, init_caches=None, oracle=True, max_type2=None,
                      gap_tol=None):
    """One-slack cutting plane (Joachims, Finley & Yu 2009, with constraint caching) for margin
    rescaling, or Balamurugan et al.'s Alg. 1 for the LSE problem (lse=True).

    Each iteration first builds the most violated constraint from the per-example label caches
    (a type-II pass: no oracle calls; for LSE the caches are Alg. 1's violator sets V_i); when
    that one is not violated by more than the tolerance, or after `max_type2` type-II iterations
    in a row (default CP_MAX_TYPE2 = 5, the two-loop schedule of Balamurugan et al., whose Alg. 2
    runs a type-I pass every kappa2 = 5 passes; 0 = no limit, svm_struct's caching), the
    loss-augmented oracles are called (a type-I pass; their answers join the caches). Both passes
    run in parallel threads over fixed chunks of examples and update running per-chunk
    accumulators of the constraint (only labels entering or leaving it are applied), summed in
    chunk order, so results do not depend on n_jobs. The restricted dual QP
    over the working set of constraints (_kernels/core/qp.pyx: OneSlackQP) is solved by an active-set
    method on the simplex polished by SMO, warm-started; constraints whose dual weight stayed
    zero for `inactive_after` iterations are dropped. Constraints are dense vectors of n_weights doubles
    (memory: n_weights x working-set size, plus CP_CHUNKS running accumulators).

    `init_caches` seeds the label caches (a dict sizes/labels/loss, e.g. LSE-SDCD's or SDM's
    get_state(), or the `caches` of an earlier run); with oracle=False the loss-augmented oracle
    is never called, so the problem restricted to the seeded caches is solved (for LSE: the
    paper's OP5 over those working sets).

    Bi-criteria surrogates convex in h (slack rescaling, beta/generalized scaling, logloss,
    probloss-convex, microf1): each example's most violated label comes from the search and
    the constraint is psi's linearisation there (for slack rescaling Joachims et al.'s 1-slack
    slack-rescaling constraint); these run the search on every iteration (no label caches yet).

    Stopping rule (svm_struct's epsilon): the most violated constraint, found with the oracle, is
    violated by at most tol * sum_i C_i, i.e. the average slack of an example by at most tol; the
    primal objective is then within tol * sum_i C_i of the optimum (for LSE: of the optimum over
    the final caches V_i, which is what `primal` reports for LSE). That bound grows with n; with
    gap_tol (the estimators' default fit) the violation must also be at most gap_tol times the
    primal objective 1/2 |w|^2 + (the constraint's value), which bounds the relative duality gap
    of the restricted QP's solution. max_iter bounds iterations.
    """
    from joblib import effective_n_jobs
    from ._kernels.cuttingplane import OneSlackOracle, SurrogatePass
    from ._kernels.qp import OneSlackQP
    from ._kernels.team import Team

    n_weights = structure.n_weights
    client = cluster_of(structure)
    if Cs is None:      # (a ShardedStructure: the C_i live with the data on the workers)
        budget = structure.Cs_sum
    else:
        Cs = np.ascontiguousarray(Cs, dtype=np.float64)
        budget = float(Cs.sum())
    n = structure.n_examples
    if max_type2 is None:
        max_type2 = CP_MAX_TYPE2
    bounds = shard_bounds(n, CP_CHUNKS)
    n_chunks = len(bounds) - 1
    surrogate = sur_args = None
    if not lse and loss != "margin":
        from .search import METHODS
        from .surrogates import parse_surrogate
        surrogate = parse_surrogate(loss)
        sur_args = (surrogate.kind, surrogate.alpha, surrogate.beta, METHODS[search],
                    0.999 if search == "angular" else 1.0, max_calls, surrogate.name == "microf1")
    if client is not None:
        # the chunks live on the cluster's workers, in shards of consecutive chunks (distributed.py)
        from .distributed import ClusterOneSlackOracle
        team = Team(1)
        orc = ClusterOneSlackOracle(client, structure, Cs, lse, cache_size, exact_violators, bounds, sur_args)
        surrogate_pass = orc
    else:
        # the chunks of every pass are shared by one kernel team (its helpers started once, below)
        team = Team(max(1, min(effective_n_jobs(n_jobs), n_chunks)))
        orc = OneSlackOracle(structure, Cs, lse, cache_size, exact_violators, bounds, team)
        if surrogate is not None:
            surrogate_pass = SurrogatePass(structure, Cs, bounds, *sur_args, team)
    if init_caches is not None:
        orc.set_caches(init_caches)
    stats = dict(oracle_calls=0, oracle_seconds=0.0, cache_passes=0, oracle_passes=0)

    a = np.zeros(n_weights)

    def cache_pass(w):
        """Type-II pass (no oracle): the most violated constraint over the caches into `a`."""
        return orc.cache_pass(w, a)

    def oracle_pass(w):
        """Type-I pass: the most violated constraint of the full problem into `a`; (b, hsum)."""
        t = time.perf_counter()
        if surrogate is not None:
            b, hsum, calls = surrogate_pass.run(w, a)
        elif not oracle:
            b, hsum, calls = cache_pass(w)
        else:
            # the running accumulators are rebuilt from scratch now and then (rounding)
            orc.run_pass(w, True, stats["oracle_passes"] % REBUILD_EVERY == 0)
            b, hsum, calls = orc.collect(a)
        stats["oracle_calls"] += calls
        stats["oracle_seconds"] += time.perf_counter() - t
        stats["oracle_passes"] += 1
        return b, hsum

    qp = OneSlackQP(n_weights, inactive_after, qp_tol)
    w = qp.w
    xi = 0.0
    primal_curve, dual_curve, timestamps = [], [], []
    best_primal = np.inf
    hsum = np.nan
    since_oracle = 0
    threshold = tol * budget    # the violation at which the iterations stop (see gap_tol)
    converged = interrupted = stopped_by_user = False
    it = 0
    t0 = time.perf_counter()
    helpers = KernelTeam(team)
    try:
        helpers.__enter__()
        while it < max_iter:
            it += 1
            cached = surrogate is None and it > 1 and not (max_type2 and since_oracle >= max_type2)
            since_oracle += 1
            if cached:
                # type-II: hsum = b - w . a, the constraint's value at w (chunks on the team)
                b, hs = cache_pass(w)[:2]
                stats["cache_passes"] += 1
            if not cached or hs - xi <= threshold:
                b, hsum = oracle_pass(w)
                since_oracle = 0
                if not lse:
                    best_primal = min(best_primal, 0.5 * float(w @ w) + hsum)
                if gap_tol is not None:
                    threshold = min(tol * budget, gap_tol * (0.5 * float(w @ w) + hsum))
                if hsum - xi <= threshold:
                    converged = True
                    break
            xi, dual = qp.add(a, b)
            dual_curve.append(dual)
            primal_curve.append(best_primal if np.isfinite(best_primal) else np.nan)
            timestamps.append(time.perf_counter() - t0)
            if verbose:
                primal_txt = f" primal {best_primal:.10g} gap {best_primal - dual:.3g}" if np.isfinite(best_primal) else ""
                log_progress(f"[cp{'-lse' if lse else ''}] iter {it:4d} constraints {qp.n_constraints:4d} xi {xi:.6g}"
                             f"{primal_txt} dual {dual:.10g} oracle passes {stats['oracle_passes']} "
                             f"time {timestamps[-1]:.2f}s")
            structure.check_implemented("the cutting plane")
            if callback is not None:
                if estimator is not None:      # the callback may look at the current weights
                    estimator.current_weights_ = w.copy()
                if callback(estimator) is False:
                    stopped_by_user = True
                    break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        helpers.__exit__(None, None, None)
    warn_if_unfinished("the cutting plane", interrupted, not converged and it >= max_iter, max_iter,
                       f"the most violated constraint fell to tol={tol:.3g}")
    w = w.copy()
    dual = qp.dual
    if not converged:
        hsum = oracle_pass(w)[1]
    bytes_per_iteration = None
    if client is not None:    # (w and the running sums; the data travelled once)
        bytes_per_iteration = (orc.shards.bytes_sent + orc.shards.bytes_received) / max(
            stats["oracle_passes"] + stats["cache_passes"], 1)
    caches = orc.get_caches() if surrogate is None else None
    ws_size, n_changes = int(orc.cache_sizes().sum()), orc.n_changes
    if client is not None:
        orc.close()
    # margin: the primal objective; LSE: the primal of the problem restricted to the final caches
    primal = 0.5 * float(w @ w) + hsum
    if not (interrupted or stopped_by_user):
        warn_if_gap_large("the cutting plane", primal, dual)
    return FitResult(interrupted=interrupted, w=w, primal=primal, dual=dual, gap=primal - dual, n_iter=it, n_outer=it,
                     converged=converged, n_oracle_calls=stats["oracle_calls"],
                     oracle_seconds=stats["oracle_seconds"], n_oracle_passes=stats["oracle_passes"],
                     n_cache_passes=stats["cache_passes"], n_constraints=qp.n_constraints,
                     qp_steps=qp.qp_steps, n_changes=n_changes,
                     objective_curve=np.array(primal_curve), dual_curve=np.array(dual_curve),
                     timestamps=np.array(timestamps), working_set_size=ws_size, caches=caches, state=None,
                     bytes_per_iteration=bytes_per_iteration)


def fit_pegasos(structure, Cs, tol, max_iter, seed, verbose=0, callback=None, estimator=None,
                state=None, keep_state=False, loss="margin", search="hull", batch_size=1,
                average=True, projection=False, n_jobs=None, max_calls=50):
    """Pegasos SGD (_kernels/solvers/pegasos.pyx) on 1/2 |w|^2 + sum_i C_i psi_i(w) for any surrogate.

    One iteration is one epoch over a random permutation in mini-batches of `batch_size`; the
    returned weights are the average of all iterates (`average`) or the last one. The primal
    objective is evaluated after every epoch with the exact search where the structure has a
    loss-indexed oracle (else with the training search); `timestamps` count training time only
    (not these evaluations). Stopping rule: after an epoch whose primal objective changed by at
    most tol relative to the previous epoch's, or after max_iter epochs. With n_jobs > 1 the searches
    of each mini-batch are shared by the solver's kernel Team (nogil); updates are applied in batch order, so the
    result does not depend on n_jobs.
    """
    from joblib import effective_n_jobs

    from ._kernels.pegasos import PegasosSolver
    from .search import METHODS
    from .surrogates import parse_surrogate

    sur = parse_surrogate(loss)
    method = METHODS[search]
    n = structure.n_examples
    n_threads = max(1, min(effective_n_jobs(n_jobs), max(n, 1)))   # batches and the objective's searches
    batch_size = max(1, min(int(batch_size), n))   # a batch of all examples at most: its buffers grow with it
    ratio = 0.999 if search == "angular" else 1.0      # the paper's stop for the angular search
    solver = PegasosSolver(structure, sur.kind, sur.alpha, sur.beta, method,
                           np.ascontiguousarray(Cs, dtype=np.float64), ratio, max_calls,
                           bool(projection), bool(average), int(batch_size), n_threads)
    if state is not None:
        solver.set_weights(np.ascontiguousarray(state, dtype=np.float64))
    rng = np.random.default_rng(seed)
    Cs = np.asarray(Cs, dtype=np.float64)
    eval_method = METHODS["exact"] if (structure.supports_loss_indexed() or sur.name == "microf1") \
        else method

    def objective(w):
        losses = np.zeros(n)
        solver.losses(w, losses, eval_method)
        return 0.5 * float(w @ w) + float(Cs @ losses)

    primal_curve, timestamps = [], []
    epochs = 0
    converged = interrupted = False
    train_seconds = 0.0
    # One team for the whole fit, its helpers sleeping in the kernel between mini-batches (a
    # joblib call per mini-batch would pay joblib's result polling every time).
    helpers = KernelTeam(solver.team)
    try:
        helpers.__enter__()
        while epochs < max_iter:
            order = rng.permutation(n).astype(np.intp)
            te = time.perf_counter()
            solver.epoch(order, int(batch_size))
            train_seconds += time.perf_counter() - te
            epochs += 1
            w = solver.weights(bool(average))
            primal_curve.append(objective(w))
            timestamps.append(train_seconds)
            if verbose:
                log_progress(f"[pegasos] epoch {epochs:4d} primal {primal_curve[-1]:.10g} oracle calls "
                             f"{solver.n_calls_total} time {timestamps[-1]:.2f}s")
            structure.check_implemented("Pegasos")
            if callback is not None and callback(estimator) is False:
                break
            if len(primal_curve) >= 2 and abs(primal_curve[-2] - primal_curve[-1]) <= tol * abs(primal_curve[-1]):
                converged = True
                break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        helpers.__exit__(None, None, None)
    warn_if_unfinished("Pegasos", interrupted, not converged and epochs >= max_iter, max_iter,
                       f"its stopping rule (tol={tol:.3g})")
    w = solver.weights(bool(average))
    return FitResult(interrupted=interrupted, w=w, primal=primal_curve[-1] if primal_curve else np.nan, dual=np.nan, gap=np.nan,
                     n_iter=epochs, n_outer=epochs, converged=converged,
                     n_oracle_calls=int(solver.n_calls_total), objective_curve=np.array(primal_curve),
                     dual_curve=np.full(len(primal_curve), np.nan), timestamps=np.array(timestamps),
                     working_set_size=0, train_seconds=train_seconds,
                     state=w.copy() if keep_state else None)


def fit_bcfw(structure, Cs, tol, max_iter, seed, verbose=0, callback=None, estimator=None,
             state=None, keep_state=False, gap_tol=None):
    """Block-coordinate Frank-Wolfe with exact line search (_kernels/solvers/bcfw.pyx; Lacoste-Julien et
    al. 2013) on the margin-rescaling dual.

    Stopping rule: a pass whose sum of block Frank-Wolfe gaps (each measured at its step) is at
    most tol times the dual objective (relative, at any n and C). With gap_tol (the estimators'
    default), the relative duality gap computed with one oracle pass must also be <= gap_tol when
    the rule fires; while it is not, tol is divided by 10. max_iter bounds the passes."""
    from ._kernels.bcfw import BCFWSolver
    solver = BCFWSolver(structure, Cs, seed)
    if state is not None:
        solver.set_state(state, Cs)
        solver.recompute_q()

    def one_pass():
        gaps = solver.run_pass()
        structure.check_implemented("BCFW")
        return gaps, 0.0, f"block gaps {gaps:.4g}"

    r = _run_gap_rule(solver, one_pass, "bcfw", tol, max_iter, gap_tol, verbose, callback, estimator)
    warn_if_unfinished("BCFW", r.interrupted, not r.converged and r.passes >= max_iter, max_iter,
                       f"the block gaps fell to tol={r.tol:.3g} of the dual")
    if not (r.interrupted or r.stopped_by_user):
        warn_if_gap_large("BCFW", r.primal, r.dual)
    result = FitResult(interrupted=r.interrupted, w=solver.coef, primal=r.primal, dual=r.dual, gap=r.primal - r.dual, n_iter=r.passes,
                       n_outer=r.passes, converged=r.converged, n_oracle_calls=solver.n_oracle_calls,
                       working_set_size=int(solver.working_set_sizes().sum()),
                       objective_curve=np.array(r.primal_curve), dual_curve=np.array(r.dual_curve),
                       timestamps=np.array(r.timestamps), state=solver.get_state() if keep_state else None)
    solver.release()   # the fitted estimator keeps the weights, not the working sets
    return result


def _run_gap_rule(solver, one_pass, tag, tol, max_iter, gap_tol, verbose, callback, estimator):
    """The outer loop of BCFW and GDMM. one_pass() -> (sum of block gaps, constraint violation,
    progress text); the rule fires after a pass whose gaps are <= tol |dual| and whose violation
    is <= tol; then the primal objective is computed (one oracle pass), and with gap_tol the
    relative duality gap must be <= gap_tol too, else tol is divided by 10. Ctrl-C keeps the
    model of the last pass; the callback may stop the loop."""
    r = FitResult(primal_curve=[], dual_curve=[], timestamps=[], passes=0, converged=False, interrupted=False,
                  stopped_by_user=False, primal=np.nan, tol=tol)
    t0 = time.perf_counter()
    try:
        while r.passes < max_iter:
            gaps, violation, text = one_pass()
            r.passes += 1
            dual = solver.dual()
            r.dual_curve.append(dual)
            r.primal_curve.append(np.nan)
            r.timestamps.append(time.perf_counter() - t0)
            if verbose:
                log_progress(f"[{tag}] pass {r.passes:5d} {text} dual {dual:.10g} time {r.timestamps[-1]:.2f}s")
            if gaps <= r.tol * max(abs(dual), 1e-300) and violation <= r.tol:
                r.primal = solver.primal()
                r.primal_curve[-1] = r.primal
                if not gap_too_large(r.primal, dual, gap_tol):
                    r.converged = True
                    break
                r.tol *= 0.1
            if callback is not None and callback(estimator) is False:
                r.stopped_by_user = True
                break
    except KeyboardInterrupt:
        r.interrupted = True
    if not r.converged:
        r.primal = solver.primal()
    r.dual = solver.dual()
    return r


def fit_gdmm(structure, Cs, tol, max_iter, seed, verbose=0, callback=None, estimator=None,
             state=None, keep_state=False, gap_tol=None, rho=1.0, eta=0.5, fmo_subsets=1):
    """GDMM (Yen et al. 2016, Alg. 1; _kernels/solvers/gdmm.pyx). On a chain: factor duals per token and per
    pair of tokens, an augmented Lagrangian on their consistency, block Frank-Wolfe with away steps
    per factor driven by factorwise maximisation oracles, the multiplier step (13) after each pass.
    On pairwise multi-label (any graph; on a cyclic one the LP-relaxed problem): block-greedy coordinate
    descent (Alg. 3) over per-example active labels and their pairs, an activation search over
    the other labels (fmo_subsets blocks, one per call), exact block steps; the primal objective
    is evaluated with the LP oracle.

    rho: the augmented Lagrangian's weight, relative to the mean squared token norm; eta: the
    multiplier step (scaled multipliers: 1 is the method of multipliers; the paper's analysis needs
    eta < rho / 4, and 0.5 with rho = 1 converged on every problem we tried). fmo_subsets = nu:
    1 = exact FMOs (all K tags of a token, all K^2 pairs of a bigram; all labels in the activation
    search); nu > 1 = the sublinear FMOs: a token searches one of nu blocks of tags (+ its active
    labels), a pair searches the ordered multimaps of the transition table (exact,
    O(|A_t||A_t+1|) instead of O(K^2)); multi-label: one block of labels per activation search.

    Each pass reports the sum of the blocks' Frank-Wolfe gaps (at the first step of each block) and
    the consistency violation (sum_i C_i ||M q_pair - q_token||_1 / sum_i C_i T_i; multi-label:
    / sum_i C_i). Stopping rule:
    a pass in which the gaps are at most tol times the dual objective and the violation at most
    tol; then the primal objective of w (one Viterbi pass) is computed, and with gap_tol (the
    estimators' default) the relative gap (primal - dual) / primal must be <= gap_tol too (the
    dual -G(q) is the structural dual only at consistency, so the violation bound comes first);
    while it is not, tol is divided by 10. No warm start: a refit starts from alpha = 0. One
    thread (n_jobs is not used). With joblib's dask backend active (or on ShardedData): CoCoA+
    over GDMM on the cluster (distributed.fit_cocoa)."""
    client = cluster_of(structure)
    if client is not None:      # on a Dask cluster: CoCoA+ over GDMM (distributed.py)
        from .distributed import fit_cocoa
        return fit_cocoa(client, structure, Cs, "gdmm", tol, max_iter, seed, verbose, gap_tol, callback=callback,
                         estimator=estimator, gdmm=(rho, eta, fmo_subsets))
    from ._kernels.chain import ChainStructure
    from ._kernels.gdmm import ChainGDMM, PairwiseGDMM
    from ._kernels.pairwise_multilabel import PairwiseMultiLabelStructure
    solver = None
    if isinstance(structure, ChainStructure):
        solver = ChainGDMM(structure, Cs, rho=rho, eta=eta, fmo_subsets=fmo_subsets, sublinear=fmo_subsets > 1,
                           seed=seed)
    elif isinstance(structure, PairwiseMultiLabelStructure):
        solver = PairwiseGDMM(structure, Cs, rho=rho, eta=eta, fmo_subsets=fmo_subsets, seed=seed)
    if solver is None:
        raise ValueError("solver='gdmm' trains chains (ChainSSVM) and pairwise multi-label models "
                         "(MultiLabelSSVM with edges) in this version; other structures train with "
                         "'sdm', 'bcfw', 'cutting-plane' or 'pegasos'")
    infeasibility = []

    def one_pass():
        gaps, violation = solver.run_pass()
        infeasibility.append(violation)
        return gaps, violation, f"block gaps {gaps:.4g} violation {violation:.3g}"

    r = _run_gap_rule(solver, one_pass, "gdmm", tol, max_iter, gap_tol, verbose, callback, estimator)
    warn_if_unfinished("GDMM", r.interrupted, not r.converged and r.passes >= max_iter, max_iter,
                       f"the block gaps and the consistency violation fell to tol={r.tol:.3g}")
    if not (r.interrupted or r.stopped_by_user):
        warn_if_gap_large("GDMM", r.primal, r.dual)
    return FitResult(interrupted=r.interrupted, w=solver.coef, primal=r.primal, dual=r.dual, gap=r.primal - r.dual, n_iter=r.passes,
                     n_outer=r.passes, converged=r.converged, n_oracle_calls=solver.n_fmo_calls,
                     working_set_size=int(round(sum(solver.active_set_sizes()))),
                     objective_curve=np.array(r.primal_curve), dual_curve=np.array(r.dual_curve),
                     timestamps=np.array(r.timestamps), infeasibility=np.array(infeasibility), state=None)
