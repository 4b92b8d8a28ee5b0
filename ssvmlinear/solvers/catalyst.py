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

A run can be wrapped when its kernel offers `sigma`, `coef`, `recompute_w()` and `dual()` (the
dual its passes raise), and the run `dual()` (a bound of the original problem at w = v),
`primal()`, `slack_sum()` (at the kernel's w), `outer_iteration(inner_tol, limit)`, `kkt_pass()`
and `inner_tol`: SDM's, LSE-SDCD's and GDMM's (on a hierarchy, BCFW with away steps; on chains
and multiclass models, the factor kernel, whose run's dual is the consistent one). A kernel
that offers `weights_changed()` is told after Catalyst changed its weights in place (GDMM's
sublinear oracles index the transition table). A run that also offers `slack_estimate()` (the
slack its last oracle pass saw, each example at the weights of its visit: free, but not a bound)
lets the centres steer by it and pay for the exact slack (an oracle pass) only where a stopping
decision needs it.
A run whose `w_tracks_v` is true (SDM, LSE-SDCD: every change of alpha moves w by sigma times
its dphi) gets v back from w_k in O(dim): v = (w_k - kappa sigma c_k) / sigma; every
RECOMPUTE_EVERY centres, and for the others at every centre, v is summed from the alphas.
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
# With a slack estimate, a centre measures the exact primal (an oracle pass) only when its
# predicted relative gap is at most this many times the gap its stopping decision needs: the
# estimate runs a little above the exact slack near the optimum, and a missed stop costs a whole
# centre while a check costs one oracle pass (benchmarks/convergence.py, benchmarks/ocr_chain.py).
CHECK_MARGIN = 2.0
# A run whose w tracks v sums v from its alphas (a pass over the working sets) at one centre in
# this many, so that rounding in v = (w_k - kappa sigma c_k) / sigma, which grows with kappa, cannot
# accumulate (benchmarks/oracle_floor.py measures the passes saved).
RECOMPUTE_EVERY = 8


def implied_gap(tol, default_tol):
    """The relative duality gap at which an explicit tol's fit inside Catalyst stops too: the
    default fit's GAP_TOL from default_tol on (a looser tol never runs past the default fit's stop),
    shrinking with the square of tol / default_tol below it (a relative gap g bounds the weights'
    distance to the optimum only by sqrt(2 g P), so a tight tol -- 1e-10, a fit to the optimum's
    precision -- leaves the stop to the solver's own rule)."""
    from .loop import GAP_TOL
    scale = min(1.0, tol / default_tol)
    return GAP_TOL * scale * scale


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
    at w_k -- or, in a default fit of a run with slack_estimate(), a prediction of it, measured
    only near the stop); after CATALYST_CYCLES of them the inner tolerance is cut by 10. A centre
    whose (predicted) primal is above the previous one restarts the extrapolation (beta = 0). The
    rule of a default fit (gap_tol): the relative gap of (primal at w_k, dual at v) <= gap_tol.
    With an explicit tol the solver's own rule keeps its meaning: after each centre whose gap is below
    KKT_CHECK_GAP, one pass of the original problem (the inner run's kkt_pass) measures it; when
    it holds, the model is v, or w_k if v's own gap is above KKT_CHECK_GAP (a loose tol can hold
    at a v far from the optimum). A run started with implied_gap (SDM's explicit tol: the relative
    gap that its tol implies, see sdm.SDM) stops too at a centre whose relative gap is at most
    implied_gap (its centres measure the exact primal: the slack estimate's steering can stall where
    they converge), and tries the KKT pass only at centres that rule did not stop. Ctrl-C leaves
    w = v (a primal-dual pair)."""
    rule_is_final = True

    def __init__(self, inner, kappa, gap_tol, implied_gap=None, state=None):
        self.inner = inner
        self.kernel = k = inner.kernel
        self.tag, self.title = inner.tag, inner.title
        self.kappa, self.gap_tol = kappa, gap_tol
        # the relative gap that stops the fit: a default fit's gap_tol, or an explicit tol's
        # implied_gap (None: the solver's own rule alone, measured by kkt_pass)
        self.rule_gap = gap_tol if gap_tol is not None else implied_gap
        self.tol = inner.tol
        self.inner_tol = inner.inner_tol
        sigma = 1.0 / (1.0 + kappa)
        root = np.sqrt(sigma)
        self.beta = (1.0 - root) / (1.0 + root)
        k.sigma = sigma
        # w = v = sum alpha dphi here (a cold start: 0); the first centre is the start itself, whose
        # primal is not measured: the first centre ends after one outer iteration and never restarts
        self.last = k.coef.copy()            # w_k-1, then w_k
        self.center = k.coef.copy()
        self.primal_k = np.inf
        # the best dual seen (a warm start's included): every alpha a run visits is feasible for the
        # original dual, so its value bounds the optimum from below, while v's own dual falls as the
        # first centres pull v away from a warm start
        self.dual_k = inner.dual()
        self.gap = np.inf
        self.interrupted = False
        self.restricted = getattr(inner, "working_set_primal", False)
        self.on_v = False              # the model is v (after a kkt_pass), not w_k
        # a default fit's centres steer by the estimated slack times the ratio exact / estimate of
        # the last exact measurement, unless every primal is watched (a callback, verbose >= 2); an
        # explicit tol's centres measure theirs (its KKT passes and implied gap need measured gaps)
        watched = getattr(inner, "monitor", False) or gap_tol is None
        self.estimate = None if watched else getattr(inner, "slack_estimate", None)
        self.ratio = 1.0
        self.exact = False             # primal_k was measured, not predicted
        self.swap = None               # w_k's exact slack is measured while the kernel holds v
        self.tracks_v = getattr(inner, "w_tracks_v", False)
        # a kernel that indexes its weights (GDMM's sublinear multimaps) hears of the in-place mix
        self.weights_changed = getattr(k, "weights_changed", None)
        self.centres = 0
        # a run whose exact slack costs an oracle pass worth several of its own passes (GDMM's
        # factor passes beside a Viterbi pass) measures a centre's inner gap first after as many
        # outer iterations as the last centre needed, less one (so the count can fall), then
        # after each
        self.defer_checks = self.estimate is None and getattr(inner, "slack_costs_passes", False)
        self.cycles_needed = 1
        # a warm start: the first centre is the previous fit's model (its state's "centre"; v
        # when that fit ran without Catalyst), whose primal is worth one oracle pass: its gap
        # sets the first centre's inner target (else one outer iteration at large kappa throws
        # the start away) and may already stop the fit. The alphas keep v: a Catalyst fit's v has
        # the better dual, its w_k the better primal.
        self.start_pass = state is not None
        if self.start_pass:
            centre = state.get("centre")
            if centre is not None and np.shape(centre) == self.last.shape:
                self.last[:] = centre
                self.center[:] = centre
            self.primal_k = 0.5 * float(np.dot(self.last, self.last)) + self.exact_slack_at_last()
            self.gap = self.primal_k - self.dual_k
            self.exact = True

    def close(self):
        self.inner.close()

    def kkt_check(self, passes, measured, text):
        """One pass of the original problem at the centre (w = v, sigma = 1): (its largest KKT
        violation, the Step that ends this centre unconverged when it exceeds tol -- w is the
        inner problem's again -- else None)."""
        k, sigma = self.kernel, self.kernel.sigma
        k.sigma = 1.0
        viol = self.inner.kkt_pass()
        k.sigma = sigma
        self.dual_k = max(self.dual_k, self.inner.dual())
        if viol > self.tol:
            k.recompute_w()
            return viol, Step(passes + 1, self.dual_k, measured, rule=False, text=f"{text}  violation {viol:.3e}")
        return viol, None

    def step(self, limit):
        k = self.kernel
        start = int(self.start_pass)         # the start's oracle pass counts with the first centre
        if self.start_pass:
            self.start_pass = False
            if self.rule_gap is not None and not gap_too_large(self.primal_k, self.dual_k, self.rule_gap):
                return Step(1, self.dual_k, self.primal_k, rule=True, text=f"kappa {self.kappa:.3g} (the start)")
        w = k.coef                           # v after the last centre (recompute_w)
        sigma, kappa = k.sigma, self.kappa
        np.multiply(w, sigma, out=w)         # w = (v + kappa c) / (1 + kappa)
        w += (kappa * sigma) * self.center
        if self.weights_changed is not None:
            self.weights_changed()
        passes, cycles, in_centre = start, 0, 0
        target = CATALYST_INNER * self.gap
        while True:
            passes += self.inner.outer_iteration(self.pass_tol(target), limit - passes)
            cycles += 1
            in_centre += 1
            if in_centre < self.cycles_needed and passes < limit:
                continue          # (a run whose slack costs many passes: see __init__)
            ww = float(np.dot(w, w))
            slack = self.ratio * self.estimate() if self.estimate else self.inner.slack_sum()
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
        if self.defer_checks:
            self.cycles_needed = max(1, in_centre - 1)
        primal = 0.5 * ww + slack            # at w_k (predicted when estimated)
        b = self.beta if primal <= self.primal_k else 0.0
        if self.swap is None:
            self.swap = np.empty_like(w)
        nxt = self.swap                      # c_k+1 = w_k + beta (w_k - w_k-1)
        np.subtract(w, self.last, out=nxt)
        nxt *= b
        nxt += w
        self.last[:] = w
        self.centres += 1
        if self.tracks_v and self.centres % RECOMPUTE_EVERY:
            self.center *= kappa * sigma     # v = (w_k - kappa sigma c_k) / sigma
            w -= self.center
            w *= 1.0 / sigma
        else:
            k.recompute_w()                  # v: the dual of the original problem
        self.center, self.swap = nxt, self.center
        dual_v = self.inner.dual()
        dual = max(self.dual_k, dual_v)
        self.exact = self.estimate is None
        if not self.exact and (passes >= limit or not gap_too_large(primal, dual, CHECK_MARGIN * self.rule_gap)):
            estimated = self.estimate()
            slack = self.exact_slack_at_last()
            self.ratio = slack / estimated if slack > 0.0 and estimated > 0.0 else 1.0
            primal = 0.5 * ww + slack
            self.exact = True
        self.primal_k = primal
        # the next centre's inner target follows v's own gap (its progress), the stopping rules
        # the best bound
        self.gap, self.dual_k = primal - dual_v, dual
        measured = primal if self.exact else np.nan
        if self.rule_gap is not None and self.exact and not gap_too_large(primal, dual, self.rule_gap):
            return Step(passes, dual, measured, rule=True, text=f"kappa {kappa:.3g}")
        if self.gap_tol is not None or gap_too_large(primal, dual, KKT_CHECK_GAP) or passes >= limit:
            return Step(passes, dual, measured, rule=False, text=f"kappa {kappa:.3g}")
        viol, failed = self.kkt_check(passes, measured, f"kappa {kappa:.3g}")
        if failed is not None:
            return failed
        primal_v = self.inner.primal()
        if not gap_too_large(primal_v, self.dual_k, KKT_CHECK_GAP):   # (else w_k, whose gap was checked)
            self.on_v, self.primal_k, self.exact = True, primal_v, True
        return Step(passes + 1, self.dual_k, self.primal_k if self.exact else np.nan, rule=True,
                    text=f"kappa {kappa:.3g}  violation {viol:.3e}")

    def pass_tol(self, target):
        """The inner passes' tolerance: inner_tol, and no looser than what lets them reach the
        target gap where the inner run can say (a fixed tolerance would bound the gap from below:
        each example's violation adds up to C_i times it)."""
        tol_for_gap = getattr(self.inner, "tol_for_gap", None)
        if tol_for_gap is None or not np.isfinite(target):
            return self.inner_tol
        return min(self.inner_tol, tol_for_gap(target))

    def exact_slack_at_last(self):
        """The exact slack at w_k (self.last) while the kernel holds v: w_k in, one oracle pass,
        v back."""
        w = self.kernel.coef
        if self.swap is None:
            self.swap = np.empty_like(w)
        self.swap[:] = w
        w[:] = self.last
        try:
            return self.inner.slack_sum()
        finally:
            w[:] = self.swap

    def rule_text(self):
        if self.gap_tol is not None:
            return f"the relative duality gap fell to {self.gap_tol:.3g}"
        if self.rule_gap is not None:
            return f"{self.inner.rule_text()} or the relative duality gap to {self.rule_gap:.3g}"
        return self.inner.rule_text()

    def weights(self):
        return self.kernel.coef if self.interrupted or self.on_v else self.last

    def on_interrupt(self):
        self.interrupted = True
        self.kernel.recompute_w()            # w = v: the loop evaluates the pair

    def final(self, converged, last_primal):
        if self.interrupted:
            return self.inner.primal(), self.inner.dual()
        if not self.exact:
            self.primal_k = 0.5 * float(np.dot(self.last, self.last)) + self.exact_slack_at_last()
            self.exact = True
        return self.primal_k, self.dual_k

    def result(self):
        res = self.inner.result()
        if res.get("state") is not None:       # the next warm start's first centre
            res["state"]["centre"] = self.weights().copy()
        return res
