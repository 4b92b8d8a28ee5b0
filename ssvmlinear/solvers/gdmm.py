"""GDMM (Yen et al. 2016, Alg. 1): greedy direction method of multipliers with factorwise
maximisation oracles (_kernels/solvers/gdmm.pyx)."""
import math

import numpy as np

from .bcfw import BCFWRun, GapRuleRun
from .catalyst import KKT_CHECK_GAP, CatalystRun, catalyst_kappa, implied_gap
from .loop import GAP_CHECK_EVERY, Step, gap_too_large
from ..params import Param
from .solver import Solver


# fmo_subsets="auto": blocks of at most AUTO_BLOCK tags (labels) per oracle call, from domains of
# AUTO_MIN_DOMAIN on: from two full blocks on the sublinear oracles' passes are cheaper both first
# and once the active sets have settled; at one block and a little more, only the first ones
# (benchmarks/gdmm_auto.py, first and later passes).
AUTO_BLOCK = 64
AUTO_MIN_DOMAIN = 2 * AUTO_BLOCK


ON_CLUSTER = ("GDMM runs on a cluster for chains, multiclass and pairwise multi-label models; on a hierarchy "
              "use solver='sdm' or 'sdcd' there")


# eta="auto": the multiplier step for domains of at most AUTO_BLOCK tags (labels), and above. On
# OCR chains (26 tags) the larger step reaches the consistency rule in fewer passes; on planted
# chains of 100 to 1,000 tags it left the fit stalled several percent above BCFW's objective,
# where the smaller one (within the paper's eta < rho / 4) converges (benchmarks/gdmm.py,
# benchmarks/vs_previous.py's chain-gdmm).
SMALL_DOMAIN_ETA = 0.5
ETA = 0.2


def auto_eta(K):
    """eta="auto"'s multiplier step for a domain of K tags or labels."""
    return SMALL_DOMAIN_ETA if K <= AUTO_BLOCK else ETA


def auto_subsets(K):
    """fmo_subsets="auto"'s block count for a domain of K tags or labels."""
    return math.ceil(K / AUTO_BLOCK) if K >= AUTO_MIN_DOMAIN else 1


class GDMM(Solver):
    """Greedy direction method of multipliers (GDMM) on the factor duals of a structure.

    A structure whose examples decompose into factors provides the decomposition (its
    factor_graph()) and trains with the one factor kernel over it. On a chain: factor duals per
    token and per pair of tokens, an augmented Lagrangian on their consistency, block steps
    driven by factorwise maximisation oracles (a token: the exact minimiser over its active
    tags; a pair: Frank-Wolfe with away steps), the multiplier step after each pass. Multiclass:
    one variable over the classes per example, no pair factors (rho and eta do not apply), each
    visit the exact minimiser over its active classes and the oracle's. Multi-label (any graph
    of pairs, or none; on a cyclic one the LP-relaxed problem): block-greedy coordinate descent
    (Alg. 3) over per-example active labels and their pairs, an activation search over the
    other labels, exact block steps. A hierarchy is one factor per example: GDMM is block
    Frank-Wolfe with away steps whose factorwise oracle is the structure's loss-augmented oracle
    (rho, eta and fmo_subsets do not apply).

    A step is a pass; it reports the sum of the blocks' Frank-Wolfe gaps and the consistency
    violation (sum_i C_i ||M q_pair - q_token||_1 / sum_i C_i T_i; multi-label: / sum_i C_i).
    The dual reported is the structural dual at the consistent point nearest the factor duals
    (the kernel's consistent_dual(): a lower bound at every pass; the factors' own dual -G(q)
    can exceed the optimum while they disagree). The rule: gaps <= tol times the dual and
    violation <= tol; a default fit also stops, checked every GAP_CHECK_EVERY passes, when
    violation <= tol and the relative duality gap is at most gap_tol. Inside Catalyst from large
    C on, on chains, multiclass models and hierarchies (not on binary variables: multi-label);
    there an explicit tol's rule is measured by a pass of the original problem at
    centres whose relative duality gap is at most max(catalyst.KKT_CHECK_GAP, tol) (the block
    gaps bound the duality gap: the rule cannot hold far above tol), and a centre whose relative
    gap is at most catalyst.implied_gap(tol, default_tol) also ends the fit (the default fit's gap
    rule, scaled down for a tol below the default: a looser tol never runs past the default
    fit's stop). No warm start; one thread. On a Dask cluster: inside CoCoA+.

    {parameters}

    Attributes
    ----------
    name : str
        The estimators' name of this solver: ``solver="gdmm"`` selects it with its default
        parameters.
    default_tol : float
        The tolerance of its stopping rule when the estimator's tol is None (0.01).

    See Also
    --------
    BCFW : Block-coordinate Frank-Wolfe on whole examples.
    SDM : The default solver of margin rescaling.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import ChainSSVM
    >>> from ssvmlinear.solvers import GDMM
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    >>> y = np.array([0, 1, 0, 1, 1, 0, 1])
    >>> lengths = np.array([4, 3])          # two sequences, of 4 and 3 tokens
    >>> clf = ChainSSVM(C=10.0, solver=GDMM(fmo_subsets=2)).fit(X, y, lengths)
    >>> clf.predict(X, lengths)
    array([0, 1, 0, 1, 1, 0, 1])
    >>> clf.consistency_violation_curve_.shape == (clf.n_iter_,)   # one per pass
    True
    """
    name = "gdmm"
    cli_rule = ("stop after a pass whose block gaps sum to at most eps times the dual and whose factors' "
                "consistency violation is at most eps")
    title = "GDMM"
    default_tol = 0.01
    distributed = "cocoa"
    params = (
        Param("rho", "real", 1.0, "The augmented Lagrangian's weight, relative to the mean squared token norm.",
              low=0, closed="neither"),
        Param("eta", "real", "auto", "The multiplier step (scaled multipliers: 1 is the method of multipliers; "
              "the paper's analysis needs eta < rho / 4, and less as the factors' domains grow); 'auto': 0.5 "
              "for domains of at most 64 tags or labels, 0.2 above.", low=0, closed="neither",
              options=("auto",)),
        Param("fmo_subsets", "int", "auto", "1: exact factorwise oracles; nu > 1: the sublinear ones (a token "
              "searches one of nu blocks of tags, a tag pair the transition table's ordered multimaps; "
              "multiclass: one of nu blocks of classes; multi-label: one block of labels per activation "
              "search); 'auto': ceil(K / 64) blocks when the K tags, classes or labels are at least 128, "
              "exact oracles below.", low=1,
              options=("auto",), flag="F", metavar="subsets",
              cli="sublinear factorwise oracles, each token searching one of `subsets` blocks of tags, tag pairs "
                  "searched in ordered multimaps; 1: exact oracles (default: ceil(K / 64) blocks from 128 tags, "
                  "classes or labels on, exact oracles below)"),
    )

    def __init__(self, rho=1.0, eta="auto", fmo_subsets="auto"):
        self.rho = rho
        self.eta = eta
        self.fmo_subsets = fmo_subsets

    def start(self, problem):
        from ..distributed import ShardedStructure, cluster_of
        structure = problem.structure
        if (not isinstance(structure, ShardedStructure) and cluster_of(structure) is not None
                and self._factor_graph(structure) is None):
            raise ValueError(ON_CLUSTER)      # (here, not on a worker)
        return super().start(problem)

    def start_local(self, problem):
        """GDMM's run, inside Catalyst from C R^2 = catalyst.CATALYST_SCALE on. On a factor graph
        of domain variables (chains) the augmented Lagrangian's weight is scaled by sqrt(sigma),
        the geometric mean of the inner problems' curvature and the original's: rho itself
        (sigma^0) left the consistency penalty dominating the inner steps, rho sigma left the
        factors inconsistent; sqrt(sigma) took the fewest passes at C = 10, and fewer than the
        plain method from C = 1 on (benchmarks/convergence.py on OCR chains). Binary variables
        (multi-label) run the plain method: their kernel does not recompute w."""
        kernel = self.factor_kernel(problem.structure, problem.Cs, problem.seed)
        kappa = catalyst_kappa(problem.structure, problem.Cs)
        if kernel is None:
            run = OneFactorGDMMRun(problem)
        else:
            run = GDMMRun(kernel, problem)
            if kernel.binary:
                kappa = 0.0
        if kappa <= 0:
            return run
        implied = None
        if problem.gap_tol is None:
            # an explicit tol: the default fit's relative gap rule, scaled down below default_tol,
            # stops it too (as SDM's): the rule, measured by a pass at sigma = 1 from a centre,
            # can stay above tol at large C long after the default fit has stopped
            implied = implied_gap(problem.tol, self.default_tol)
        accelerated = GDMMCatalystRun(run, kappa, problem.gap_tol, implied_gap=implied)   # (sets sigma)
        if kernel is not None:
            kernel.rho *= math.sqrt(kernel.sigma)
        return accelerated

    @staticmethod
    def _factor_graph(structure):
        """The structure's per-example factor decomposition (its factor_graph(): factor.pxd's
        FactorGraph): chains (tokens and tag pairs), multiclass (one variable over the classes),
        multi-label (labels and their pairs, if any); None for a hierarchy, one factor per
        example whose factorwise oracle is its loss-augmented one."""
        provide = getattr(structure, "factor_graph", None)
        return provide() if provide is not None else None

    def factor_kernel(self, structure, Cs, seed):
        """The GDMM kernel over a structure's factor graph (_factor_graph), else None."""
        from .._kernels.gdmm import FactorGDMM
        graph = self._factor_graph(structure)
        if graph is None:
            return None
        nu = auto_subsets(graph.K) if self.fmo_subsets == "auto" else int(self.fmo_subsets)
        eta = auto_eta(graph.K) if self.eta == "auto" else float(self.eta)
        return FactorGDMM(graph, Cs, rho=float(self.rho), eta=eta, fmo_subsets=nu,
                          sublinear=nu > 1, seed=seed)

    def local_kernel(self, structure, Cs, seed, exact_violators):
        kernel = self.factor_kernel(structure, Cs, seed)
        if kernel is None:
            raise ValueError(ON_CLUSTER)
        return kernel

    # CoCoA+ (cocoa.py): GDMM's augmented Lagrangian terms are per example, so local
    local_weights_buffered = True

    def local_round(self, kernel, tol):
        """One pass of factor steps and the multiplier step; ((block gaps, violation), 1)."""
        return kernel.run_pass(), 1

    def local_slack(self, kernel, half_ww):
        return kernel.primal() - half_ww

    def local_calls(self, kernel):
        return kernel.n_fmo_calls

    def local_working_set(self, kernel):
        return int(round(sum(kernel.active_set_sizes())))

    def local_dual_correction(self, kernel):
        """The pair tables' change to the consistent point nearest the shard's factor duals."""
        return kernel.consistent_correction()

    @staticmethod
    def rule_of_rounds(rules, tol, dual):
        return sum(r[0] for r in rules) <= tol * max(abs(dual), 1e-300) and max(r[1] for r in rules) <= tol


class GDMMRun(GapRuleRun):
    tag = "gdmm"
    title = "GDMM"
    slack_costs_passes = True      # (Catalyst: the exact slack is a Viterbi pass; see CatalystRun)

    def __init__(self, kernel, problem):
        self.kernel = kernel
        self.tol = problem.tol
        self.gap_tol = problem.gap_tol
        self.violations = []
        self.next_confirmation = 0      # (sampled oracles: the pass from which the rule is confirmed again)

    def rule(self, gaps, violation, dual):
        """GDMM's rule. With the sampled oracles (fmo_subsets > 1) the block gaps are those of the
        states searched, a lower bound of the true ones: the rule then also needs the exact
        relative duality gap (an exact oracle pass) at most tol: the sampled gaps alone stopped
        far above the optimum on many classes (benchmarks/extreme_multiclass.py). After a
        failed confirmation the next one waits GAP_CHECK_EVERY passes (each costs an oracle pass)."""
        if not super().rule(gaps, violation, dual):
            return False
        if self.kernel.nu == 1:
            return True
        if len(self.violations) < self.next_confirmation:
            return False
        primal = self.kernel.primal()
        if not gap_too_large(primal, dual, self.tol):
            return True
        self.next_confirmation = len(self.violations) + GAP_CHECK_EVERY
        return False

    def kkt_pass(self):
        """Catalyst's check of an explicit tol (GapRuleRun.kkt_pass): with the sampled oracles the
        measure is the exact relative duality gap after the pass, or the violation if larger."""
        if self.kernel.nu == 1:
            return super().kkt_pass()
        _, violation = self.run_pass()
        primal, dual = self.kernel.primal(), self.dual()
        return max((primal - dual) / max(abs(primal), 1e-300), violation)

    def run_pass(self):
        gaps, violation = self.kernel.run_pass()
        self.violations.append(violation)
        return gaps, violation

    def dual(self):
        """The structural dual at the consistent point nearest the factor duals (a lower bound at
        any iterate; the kernel's dual() is one only at consistency)."""
        return self.kernel.consistent_dual()

    def step(self, limit):
        gaps, violation = self.run_pass()
        dual = self.dual()
        rule = self.rule(gaps, violation, dual)
        primal = np.nan
        if (not rule and self.gap_tol is not None and violation <= self.tol
                and len(self.violations) % GAP_CHECK_EVERY == 0):
            # a default fit: at consistency the duality gap itself may end the fit, long before
            # the augmented Lagrangian's block gaps fall to tol at large C
            primal = self.kernel.primal()
            rule = not gap_too_large(primal, dual, self.gap_tol)
        return Step(1, dual, primal, rule=rule, text=f"block gaps {gaps:.4g} violation {violation:.3g}")

    def rule_text(self):
        return f"the block gaps and the consistency violation fell to tol={self.tol:.3g}"

    def result(self):
        k = self.kernel
        return dict(n_oracle_calls=k.n_fmo_calls, working_set_size=int(round(sum(k.active_set_sizes()))),
                    infeasibility=np.array(self.violations))


class OneFactorGDMMRun(BCFWRun):
    """GDMM on a structure of one factor per example (a hierarchy): no consistency constraints link factors, so
    the augmented Lagrangian and the multiplier step vanish and the method is block Frank-Wolfe
    with away steps, the factorwise oracle being the structure's loss-augmented oracle (the BCFW
    kernel with away_steps). Its rule is GDMM's (block gaps <= tol times the dual; violation 0)."""
    tag = "gdmm"
    title = "GDMM"

    def __init__(self, problem):
        super().__init__(problem)
        self.kernel.away_steps = True
        self.violations = []

    def run_pass(self):
        self.violations.append(0.0)
        return super().run_pass()

    def rule_text(self):
        return f"the block gaps fell to tol={self.tol:.3g} of the dual"

    def result(self):
        return dict(super().result(), infeasibility=np.array(self.violations))


class GDMMCatalystRun(CatalystRun):
    """Catalyst around GDMM. With an explicit tol, GDMM's own rule (block gaps <= tol times the
    dual, violation <= tol) is measured by a pass of the original problem at centres whose
    relative duality gap is at most max(KKT_CHECK_GAP, tol), not only below KKT_CHECK_GAP: the sum
    of the block Frank-Wolfe gaps is at least the duality gap, so the rule can hold once the
    relative gap is about tol, and a loose tol left to Catalyst's fixed threshold ran to a smaller
    gap, with more passes, than its rule asks for. Above KKT_CHECK_GAP a check that fails puts
    the next one where the gap has fallen by tol / (its measure): the measure is taken to fall in
    proportion with the gap (at large C it can stay far above tol at every such centre, and each
    check costs a pass)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.check_below = np.inf        # the relative gap at which the next such check is due

    def step(self, limit):
        step = super().step(limit)
        if (step.rule or self.gap_tol is not None or not self.exact or step.passes >= limit
                or not gap_too_large(self.primal_k, self.dual_k, KKT_CHECK_GAP)):
            return step           # (a default fit, a stop, or a centre the base class has checked)
        relative = (self.primal_k - self.dual_k) / max(abs(self.primal_k), 1e-300)
        if relative > min(self.tol, self.check_below):
            return step
        # the base class's check, at this centre
        viol, failed = self.kkt_check(step.passes, step.primal, step.text)
        if failed is not None:
            self.check_below = relative * self.tol / viol
            return failed
        primal_v = self.inner.primal()
        if primal_v <= self.primal_k:      # the model: v or w_k, whichever has the lower primal
            self.on_v, self.primal_k = True, primal_v
        return Step(step.passes + 1, self.dual_k, self.primal_k, rule=True, text=f"{step.text}  violation {viol:.3e}")
