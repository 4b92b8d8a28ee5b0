"""The one outer loop every solver runs in: curves, progress lines, callbacks, max_iter, the
stopping rules and the duality-gap rule, warnings, Ctrl-C and the result.

A solver object (solver.Solver) starts a *run* on a problem; a run does one step at a time (a
pass, an iteration, a Catalyst centre, a CoCoA+ round) and reports it as a Step. The kernels do
whole passes without the GIL; this loop runs between steps, so progress output, callbacks and
Ctrl-C (which keeps the model of the last completed step) work from Python.
"""
import abc
import logging
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..exceptions import ConvergenceWarning

# A fit whose duality gap exceeds this fraction of its primal objective is far from its optimum.
GAP_WARN = 0.05
# Default fits (tol=None) stop only when, besides their own rule at its default tolerance, the
# relative duality gap (primal - dual) / primal is at most this: a rule stated per example or in
# absolute terms (LSE-SDCD's dual changes at small C, the cutting plane's eps * sum_i C_i at
# large n) can otherwise fire far from the optimum.
GAP_TOL = 0.01
# Once the gap check has failed, runs that offer periodic checks repeat it every this many steps
# (a tightened rule may need many more passes than the gap does, as SDM's at large C).
GAP_CHECK_EVERY = 10

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


def gap_too_large(primal, dual, gap_tol):
    """Whether a default fit whose own rule fired must go on: relative gap above gap_tol."""
    return gap_tol is not None and primal - dual > gap_tol * max(abs(primal), 1e-300)


class FitResult:
    """What a solver run reports: weights, objectives, curves and the solver's own counts."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


@dataclass
class Problem:
    """What a run is asked to solve, besides the solver's own parameters.

    structure: a compiled structure (or distributed.ShardedStructure); Cs: per-example C_i (None
    on sharded data); loss: "margin", "lse" or a surrogate; tol: the solver's rule tolerance;
    seed: an int; n_jobs: joblib's; state: a warm start (a previous run's `state`) or None;
    keep_state: return the dual state; gap_tol: the relative duality gap the default rule adds
    (None with an explicit tol); primal: callable(w) -> the estimator's exact primal objective, or
    None; monitor: measure the primal at every step where a run can (a callback or verbose >= 2
    watches); exact_violators: the structure asks for all violating labels (multiclass)."""
    structure: object
    Cs: object
    loss: str = "margin"
    tol: float = 0.1
    seed: int = 0
    n_jobs: object = None
    state: object = None
    keep_state: bool = False
    gap_tol: object = None
    primal: object = None
    monitor: bool = False
    exact_violators: bool = False


@dataclass
class Step:
    """One step of a run. passes: the passes it took (max_iter counts these); dual: the dual
    objective after it (NaN: none); primal: the primal objective where the step measured it
    (NaN elsewhere); rule: the solver's stopping rule fired; periodic: a repeated gap check is due
    now (once a check has failed); text: the progress line's solver-specific part."""
    passes: int
    dual: float = np.nan
    primal: float = np.nan
    rule: bool = False
    periodic: bool = False
    text: str = ""


class Run(abc.ABC):
    """A solver's state on one problem (what Solver.start returns). Subclasses implement step();
    the defaults below fit dual solvers whose kernel object is `self.kernel` (coef, primal(),
    dual()).

    tag: the progress lines' prefix; title: the solver in warnings; rule_is_final: the rule
    already includes the gap test (the loop then stops on it alone)."""
    tag = "solver"
    title = "the solver"
    rule_is_final = False
    measures_on_demand = True
    kernel = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Releases threads and cluster actors (called once, after the last step)."""

    @abc.abstractmethod
    def step(self, limit):
        """One step using at most `limit` passes where it can (>= 1 is always allowed)."""

    def after_step(self, limit):
        """Passes after the step's checks and callback (SDM's type-II passes), at most `limit`;
        returns the dual after each (a list)."""
        return []

    def tighten(self):
        """The rule fired but the gap is too large: tighten the rule (tol / 10)."""
        self.tol *= 0.1

    def rule_text(self):
        return f"its stopping rule (tol={self.tol:.3g})"

    def weights(self):
        """The current model (a view; the loop copies it for callbacks)."""
        return self.kernel.coef

    def model(self):
        """The weights the fit returns (an array the caller may keep after close)."""
        return self.weights()

    def primal(self):
        return self.kernel.primal()

    def dual(self):
        return self.kernel.dual()

    def on_interrupt(self):
        """Ctrl-C arrived during a step: leave a consistent model."""

    def final(self, converged, last_primal):
        """(primal, dual) of the model returned; last_primal: the primal measured at the current
        weights in the last step (NaN when not)."""
        primal = last_primal if np.isfinite(last_primal) else self.primal()
        return primal, self.dual()

    def result(self):
        """The solver's own counts and state for the FitResult (a dict)."""
        return {}


def solve(solver, structure, Cs, tol, max_iter, seed=0, verbose=0, callback=None, estimator=None,
          state=None, keep_state=False, gap_tol=None, primal=None, loss="margin", n_jobs=None,
          exact_violators=False):
    """Runs `solver` (a Solver object) on a structure with per-example Cs: the loop.

    Every step appends one entry to each curve: the dual after it, the primal where it was
    measured (NaN elsewhere) and the seconds since the start. After a step whose rule fired (or a
    periodic check, once one has failed), the primal is measured and, with gap_tol (the
    estimators' default fit), the relative duality gap must be <= gap_tol too; while it is not,
    the run tightens its rule. callback(estimator) runs after every step, with
    estimator.current_weights_ set (False stops the fit). max_iter bounds the passes. A
    ConvergenceWarning says when max_iter stopped the fit before its rule, or when the fit
    stopped far from its optimum. Ctrl-C ends the loop, keeps the model of the last completed
    step and sets `interrupted` (the estimator re-raises it)."""
    problem = Problem(structure, Cs, loss=loss, tol=float(tol), seed=seed, n_jobs=n_jobs, state=state,
                      keep_state=keep_state, gap_tol=gap_tol, primal=primal,
                      monitor=verbose >= 2 or callback is not None, exact_violators=exact_violators)
    run = solver.start(problem)
    primal_curve, dual_curve, timestamps = [], [], []
    passes = steps = gap_checks = 0
    converged = interrupted = stopped_by_user = False
    last_primal = np.nan
    t0 = time.perf_counter()
    with run:
        try:
            while passes < max_iter:
                step = run.step(max_iter - passes)
                if problem.monitor and run.measures_on_demand and not np.isfinite(step.primal):
                    step.primal = run.primal()
                passes += step.passes
                steps += 1
                last_primal = step.primal
                primal_curve.append(step.primal)
                dual_curve.append(step.dual)
                timestamps.append(time.perf_counter() - t0)
                if verbose:
                    measured = f" primal {step.primal:.10g}" if np.isfinite(step.primal) else ""
                    log_progress(f"[{run.tag}] iter {steps:4d} passes {passes:5d} {step.text}{measured} "
                                 f"dual {step.dual:.10g} time {timestamps[-1]:.2f}s")
                if run.rule_is_final:
                    if step.rule:
                        converged = True
                        break
                elif step.rule or (gap_checks and step.periodic):
                    gap_checks += 1
                    if not np.isfinite(step.primal):
                        last_primal = primal_curve[-1] = run.primal()
                    if not gap_too_large(last_primal, step.dual, gap_tol):
                        converged = True
                        break
                    if step.rule:
                        run.tighten()
                    if verbose:
                        relative = (last_primal - step.dual) / max(abs(last_primal), 1e-300)
                        log_progress(f"[{run.tag}] relative gap {relative:.3g} > {gap_tol}: tol {run.tol:.3g}")
                structure.check_implemented(run.title)
                if callback is not None:
                    if estimator is not None:
                        estimator.current_weights_ = run.weights().copy()
                    if callback(estimator) is False:
                        stopped_by_user = True
                        break
                for dual in run.after_step(max_iter - passes):
                    passes += 1
                    last_primal = np.nan
                    primal_curve.append(np.nan)
                    dual_curve.append(dual)
                    timestamps.append(time.perf_counter() - t0)
        except KeyboardInterrupt:
            interrupted = True
            last_primal = np.nan
            run.on_interrupt()
        primal_value, dual_value = run.final(converged, last_primal)
        result = FitResult(state=None)
        result.__dict__.update(run.result())
        result.__dict__.update(interrupted=interrupted, primal=primal_value, dual=dual_value,
                               gap=primal_value - dual_value, n_iter=passes, n_outer=steps, converged=converged,
                               objective_curve=np.array(primal_curve, dtype=np.float64),
                               dual_curve=np.array(dual_curve, dtype=np.float64),
                               timestamps=np.array(timestamps, dtype=np.float64))
        result.w = run.model()
    if not (interrupted or stopped_by_user):     # one warning per fit that did not converge
        gap = result.primal - result.dual
        wide = np.isfinite(gap) and gap > GAP_WARN * max(abs(result.primal), 1e-300)
        gap_text = (f"relative duality gap {gap / abs(result.primal):.3g} (primal {result.primal:.6g}, dual "
                    f"{result.dual:.6g})") if wide else ""
        if passes >= max_iter and not converged:
            warnings.warn(f"{run.title} reached max_iter={max_iter} before {run.rule_text()}"
                          + (f"; {gap_text}" if wide else "") + "; increase max_iter or tol", ConvergenceWarning)
        elif wide:
            warnings.warn(f"{run.title} stopped with a {gap_text}; lower tol or raise max_iter", ConvergenceWarning)
    return result
