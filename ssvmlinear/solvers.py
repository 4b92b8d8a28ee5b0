"""Python drivers of the compiled solvers: the outer loops, diagnostics, stopping and warnings.

The kernels do whole passes without the GIL; the loops here run between passes, so `verbose`
output, callbacks and Ctrl-C (which keeps the current model) work from Python.
"""
import time
import warnings

import numpy as np

from .exceptions import ConvergenceWarning
from ._kernels.sdm import SDMSolver
from ._kernels.sdcd import SDCDSolver

# Type-II passes (working sets only) allowed between two type-I (oracle) passes.
MAX_TYPE2_PASSES = 10
# Type-II passes stop once the violation falls below max(tol, TYPE2_RATIO * last type-I violation).
TYPE2_RATIO = 0.0


class FitResult:
    """What a solver run reports: weights, objectives and curves."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def fit_sdm(structure, Cs, tol, max_iter, seed, verbose=0, callback=None, estimator=None,
            state=None, keep_state=False, monitor_primal=False):
    """Sequential dual method (see _kernels/sdm.pyx).

    Stopping rule: a type-I pass (loss-augmented oracle on every example) in which the maximal
    KKT violation max_y H_i(y) - min_{alpha_i(y)>0} H_i(y) over all examples is <= tol (LIBLINEAR
    -s 4's rule). max_iter bounds the number of passes (type-I and type-II). The primal objective
    curve costs one oracle pass, so it is recorded after each type-I pass when verbose >= 2, a
    callback or monitor_primal asks for it (NaN otherwise); the dual curve after every pass.
    """
    solver = SDMSolver(structure, Cs, seed)
    if state is not None:
        solver.set_state(state, Cs)
    inner_tol = 0.1 * tol
    monitor_primal = monitor_primal or verbose >= 2 or callback is not None
    primal_curve, dual_curve, timestamps = [], [], []
    passes = outer = 0
    converged = interrupted = False
    t0 = time.perf_counter()
    try:
        while passes < max_iter:
            viol = solver.run_pass(True, inner_tol)
            passes += 1
            outer += 1
            dual = solver.dual()
            dual_curve.append(dual)
            primal_curve.append(solver.primal() if monitor_primal else np.nan)
            timestamps.append(time.perf_counter() - t0)
            if verbose:
                primal_txt = f" primal {primal_curve[-1]:.10g}" if monitor_primal else ""
                print(f"[sdm] iter {outer:4d} passes {passes:5d} violation {viol:.3e}{primal_txt} "
                      f"dual {dual:.10g} time {timestamps[-1]:.2f}s", flush=True)
            if viol <= tol:
                converged = True
                break
            if callback is not None and callback(estimator) is False:
                break
            for _ in range(MAX_TYPE2_PASSES):
                if passes >= max_iter:
                    break
                viol2 = solver.run_pass(False, inner_tol)
                passes += 1
                dual_curve.append(solver.dual())
                primal_curve.append(np.nan)
                timestamps.append(time.perf_counter() - t0)
                if viol2 <= max(tol, TYPE2_RATIO * viol):
                    break
    except KeyboardInterrupt:
        interrupted = True
        warnings.warn("training interrupted; the model of the last completed pass is kept", ConvergenceWarning)
    if not converged and not interrupted and passes >= max_iter:
        warnings.warn(f"SDM reached max_iter={max_iter} passes before the KKT violation fell to tol={tol}; "
                      "increase max_iter or tol", ConvergenceWarning)
    primal, dual = solver.primal(), solver.dual()
    return FitResult(w=solver.coef.copy(), primal=primal, dual=dual, gap=primal - dual, n_iter=passes,
                     n_outer=outer, converged=converged, n_oracle_calls=solver.n_oracle_calls,
                     working_set_size=int(solver.working_set_sizes().sum()),
                     objective_curve=np.array(primal_curve), dual_curve=np.array(dual_curve),
                     timestamps=np.array(timestamps),
                     state=solver.get_state() if keep_state else None)


def fit_sdcd(structure, Cs, tol, max_iter, seed, verbose=0, callback=None, estimator=None,
             state=None, keep_state=False, kappa1=10, kappa2=5, exact_violators=False):
    """LSE-SDCD (_kernels/sdcd.pyx), with the loop schedule of Alg. 2: type-I passes (oracle) until
    pass kappa1, then type-II passes (working sets only) with a type-I pass every kappa2 passes.

    Stopping rule (the paper's, scaled with C): a type-I pass in which no example's sum of squared
    dual changes divided by C_i exceeds tol (deltathresh, 1e-4 in the paper, where C = 1).
    max_iter bounds the number of passes.
    """
    solver = SDCDSolver(structure, Cs, seed, exact_violators)
    if state is not None:
        solver.set_state(state, Cs)
    dual_curve, timestamps = [], []
    passes = 0
    get_max_y = True
    converged = interrupted = False
    t0 = time.perf_counter()
    try:
        while passes < max_iter:
            changed, vmax = solver.run_pass(get_max_y, tol)
            dual_curve.append(solver.dual())
            timestamps.append(time.perf_counter() - t0)
            if verbose:
                print(f"[sdcd] pass {passes:5d} {'type-I ' if get_max_y else 'type-II'} changed {changed:7d} "
                      f"max change {vmax:.3e} dual {dual_curve[-1]:.10g} time {timestamps[-1]:.2f}s", flush=True)
            if get_max_y:
                if changed == 0:
                    converged = True
                    passes += 1
                    break
                if passes >= kappa1:
                    get_max_y = False
            elif (passes - kappa1) % kappa2 == 0:
                get_max_y = True
            passes += 1
            if callback is not None and callback(estimator) is False:
                break
    except KeyboardInterrupt:
        interrupted = True
        warnings.warn("training interrupted; the model of the last completed pass is kept", ConvergenceWarning)
    if not converged and not interrupted and passes >= max_iter:
        warnings.warn(f"LSE-SDCD reached max_iter={max_iter} passes before its stopping rule (tol={tol}); "
                      "increase max_iter or tol", ConvergenceWarning)
    dual = solver.dual()
    return FitResult(w=solver.coef.copy(), primal=np.nan, dual=dual, gap=np.nan, n_iter=passes,
                     n_outer=passes, converged=converged, n_oracle_calls=solver.n_oracle_calls,
                     objective_curve=np.full(len(dual_curve), np.nan), dual_curve=np.array(dual_curve),
                     timestamps=np.array(timestamps), working_set_size=int(solver.working_set_sizes().sum()),
                     state=solver.get_state() if keep_state else None)
