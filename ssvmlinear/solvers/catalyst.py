"""Catalyst (Lin, Mairal & Harchaoui 2015, the strongly convex case with mu = 1) around a dual
solver, for large C.

A dual solver's passes are block-coordinate steps whose progress shrinks as C R^2 grows (R^2: an
example's squared feature norm). Catalyst runs the solver on the better conditioned problems
    min_w 1/2 |w|^2 + kappa/2 |w - c_k|^2 + sum_i C_i max_y [...],
i.e. its dual with the Gram matrix and the updates of w scaled by sigma = 1 / (1 + kappa) and
w = (v + kappa c_k) / (1 + kappa), v = sum alpha dphi, warm-started from the previous alpha; the
centres follow Nesterov's extrapolation c_k+1 = w_k + beta (w_k - w_k-1),
beta = (1 - sqrt(q)) / (1 + sqrt(q)), q = 1 / (1 + kappa). Every alpha is feasible for the
original dual, so the dual at v and the primal at w_k bound the optimum after each centre: a default fit
stops on their relative gap.

A run can be wrapped when its kernel offers `sigma`, `coef`, `recompute_w()` and `dual()`, and
the run `primal()`, `slack_sum()` (at the kernel's w), `outer_iteration(inner_tol, limit)`,
`kkt_pass()` and `inner_tol` (SDM's, LSE-SDCD's and GDMM's on a structure of one factor per
example, which is BCFW with away steps).
"""
import numpy as np

from .loop import Run, Step, gap_too_large

# kappa makes C R^2 / (1 + kappa) = CATALYST_SCALE (below it, kappa = 0: no acceleration). 10, not
# 100: SDM and LSE-SDCD then need far fewer passes on OCR letters, scene and OCR chains from C = 1
# on, and no more on chains at C = 10 (benchmarks/convergence.py, benchmarks/large_c.py).
CATALYST_SCALE = 10.0
CATALYST_INNER = 0.5      # a centre's inner gap target, relative to the last centre's gap
CATALYST_CYCLES = 4       # inner outer iterations before the inner tolerance is cut by 10
# With an explicit tol, centres whose relative gap is above this skip the pass that measures the
# solver's own rule (far from the optimum it cannot hold; the pass would cost a centre's share).
KKT_CHECK_GAP = 0.01


def catalyst_kappa(structure, Cs):
    """The proximal weight for this problem: max(0, mean C_i R^2 / CATALYST_SCALE - 1), R^2 = the
    squared norm of the data rows per example (bias included), C_i > 0."""
    X = getattr(structure, "X", None)
    Cs = np.asarray(Cs, dtype=np.float64)
    if X is None or structure.n_examples == 0 or not np.any(Cs > 0):
        return 0.0
    r2 = float(np.sum(X.sqnorms)) / structure.n_examples
    return max(0.0, float(np.mean(Cs[Cs > 0])) * r2 / CATALYST_SCALE - 1.0)


class CatalystRun(Run):
    """A step is one centre: inner outer iterations until the inner problem's gap is at most
    CATALYST_INNER times the last centre's gap (one oracle pass each, which also gives the primal
    at w_k); after CATALYST_CYCLES of them the inner tolerance is cut by 10. A centre whose primal
    is above the previous one restarts the extrapolation (beta = 0). The rule of a default fit
    (gap_tol): the relative gap of (primal at w_k, dual at v) <= gap_tol. With an explicit tol
    the solver's own rule keeps its meaning: after each centre whose gap is below
    KKT_CHECK_GAP, one pass of the original problem (the inner run's kkt_pass) measures it, and
    the model is then v. Ctrl-C leaves w = v (a primal-dual pair)."""
    rule_is_final = True

    def __init__(self, inner, kappa, gap_tol):
        self.inner = inner
        self.kernel = k = inner.kernel
        self.tag, self.title = inner.tag, inner.title
        self.kappa, self.gap_tol = kappa, gap_tol
        self.tol = inner.tol
        self.inner_tol = inner.inner_tol
        sigma = 1.0 / (1.0 + kappa)
        root = np.sqrt(sigma)
        self.beta = (1.0 - root) / (1.0 + root)
        k.sigma = sigma
        # w = v = sum alpha dphi here (a cold start: 0); the first centre is the start itself
        self.last = k.coef.copy()            # w_k-1, then w_k
        self.center = k.coef.copy()
        self.primal_k = inner.primal()
        self.dual_k = k.dual()
        # (a restricted primal, as LSE-SDCD's over working sets holding y_i alone, may measure no gap
        # at the start: the first centre then ends after one outer iteration)
        self.gap = self.primal_k - self.dual_k if self.primal_k > self.dual_k else np.inf
        self.interrupted = False
        self.restricted = getattr(inner, "working_set_primal", False)
        self.on_v = False              # the model is v (after a kkt_pass), not w_k

    def close(self):
        self.inner.close()

    def step(self, limit):
        k = self.kernel
        w = k.coef                           # v after the last centre (recompute_w)
        sigma, kappa = k.sigma, self.kappa
        np.multiply(w, sigma, out=w)         # w = (v + kappa c) / (1 + kappa)
        w += (kappa * sigma) * self.center
        passes = cycles = 0
        target = CATALYST_INNER * self.gap
        while True:
            passes += self.inner.outer_iteration(self.inner_tol, limit - passes)
            cycles += 1
            ww = float(np.dot(w, w))
            slack = self.inner.slack_sum()
            # inner primal 1/2|w|^2 + kappa/2 |w - c|^2 + slack minus the inner dual
            # L - (1 + kappa)/2 |w|^2 + kappa/2 |c|^2, L = dual() + 1/2 |w|^2
            # (no temporary of the weight dimension)
            inner_gap = (0.5 + kappa) * ww - kappa * float(np.dot(w, self.center)) + slack - k.dual()
            if cycles == 1 and self.restricted:
                # gaps over working sets that grew since the last centre are not comparable with
                # its gap: the target is relative to this centre's first one as well
                target = CATALYST_INNER * max(self.gap, inner_gap)
            if inner_gap <= target or passes >= limit:
                break
            if cycles >= CATALYST_CYCLES:
                self.inner_tol *= 0.1
                cycles = 0
        primal = 0.5 * ww + slack            # at w_k
        b = self.beta if primal <= self.primal_k else 0.0
        self.primal_k = primal
        np.subtract(w, self.last, out=self.center)   # c_k+1 = w_k + beta (w_k - w_k-1)
        self.center *= b
        self.center += w
        self.last[:] = w
        k.recompute_w()                      # v: the dual of the original problem
        dual = k.dual()
        self.gap, self.dual_k = primal - dual, dual
        if self.gap_tol is not None:
            return Step(passes, dual, primal, rule=not gap_too_large(primal, dual, self.gap_tol),
                        text=f"kappa {kappa:.3g}")
        if gap_too_large(primal, dual, KKT_CHECK_GAP) or passes >= limit:
            return Step(passes, dual, primal, rule=False, text=f"kappa {kappa:.3g}")
        k.sigma = 1.0                        # one pass of the original problem at w = v
        viol = self.inner.kkt_pass()
        k.sigma = sigma
        self.dual_k = k.dual()
        if viol > self.tol:
            k.recompute_w()
            return Step(passes + 1, self.dual_k, primal, rule=False,
                        text=f"kappa {kappa:.3g}  violation {viol:.3e}")
        self.on_v = True
        self.primal_k = self.inner.primal()
        return Step(passes + 1, self.dual_k, self.primal_k, rule=True, text=f"kappa {kappa:.3g}  violation {viol:.3e}")

    def rule_text(self):
        if self.gap_tol is None:
            return self.inner.rule_text()
        return f"the relative duality gap fell to {self.gap_tol:.3g}"

    def weights(self):
        return self.kernel.coef if self.interrupted or self.on_v else self.last

    def on_interrupt(self):
        self.interrupted = True
        self.kernel.recompute_w()            # w = v: the loop evaluates the pair

    def final(self, converged, last_primal):
        if self.interrupted:
            return self.inner.primal(), self.kernel.dual()
        return self.primal_k, self.dual_k

    def result(self):
        return self.inner.result()
