"""LSE-SDCD: sequential dual coordinate descent for the linear summed error (LSE) problem
(_kernels/solvers/sdcd.pyx; Balamurugan et al., Alg. 2)."""

import numpy as np

from .loop import GAP_CHECK_EVERY, Run, Step
from ..params import Param
from .solver import Solver


class SDCD(Solver):
    """Sequential dual coordinate descent on the LSE problem, with Alg. 2's loop schedule.

    A step is a pass: type-I passes (oracle) until pass kappa1, then type-II passes (working sets
    only) with a type-I pass every kappa2 passes. The rule (the paper's, scaled with C): a type-I
    pass in which no example's sum of squared dual changes divided by C_i exceeds tol
    (deltathresh, 1e-4 in the paper, where C = 1). At large C (C R^2 above
    catalyst.CATALYST_SCALE) it runs inside Catalyst, whose centres are a type-I pass and
    kappa2 - 1 type-II passes each; there an explicit tol also stops the fit at a centre whose
    relative duality gap is at most catalyst.implied_gap(tol, default_tol) (the default fit's gap
    rule, scaled down for a tol below the default: a looser tol never takes more passes than the
    default fit), and the rule itself is measured by a type-I pass at centres within
    catalyst.KKT_CHECK_GAP. On a Dask cluster it runs inside CoCoA+.

    {parameters}

    Attributes
    ----------
    name : str
        The estimators' name of this solver: ``solver="sdcd"`` selects it with its default
        parameters.
    default_tol : float
        The tolerance of its stopping rule when the estimator's tol is None (1e-4).

    See Also
    --------
    SDM : The sequential dual method for margin rescaling.
    CuttingPlane : Also trains the LSE problem (loss="lse").

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import MulticlassSSVM
    >>> from ssvmlinear.solvers import SDCD
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [-1.0, -1.0], [-0.9, -1.1]])
    >>> y = np.array([0, 0, 1, 1, 2, 2])
    >>> clf = MulticlassSSVM(C=10.0, loss="lse", solver=SDCD(kappa1=5)).fit(X, y)
    >>> clf.predict(X)
    array([0, 0, 1, 1, 2, 2])
    >>> clf.solver
    SDCD(kappa1=5)
    """
    name = "sdcd"
    cli_rule = ("stop after an oracle pass in which no example's sum of squared dual changes, divided by C, "
                "exceeds eps (Balamurugan et al.'s rule)")
    warm_starts = True
    title = "LSE-SDCD"
    default_tol = 1e-4
    distributed = "cocoa"
    params = (
        Param("exact_violators", "bool", False, "Type-I passes add every violating label (the k-best "
              "search) instead of the most violating one, so the fixed point is the full LSE problem's "
              "optimum instead of the optimum over the final working sets (multiclass always does)."),
        Param("kappa1", "int", 10, "Type-I passes before the schedule starts.", low=1),
        Param("kappa2", "int", 5, "Then one type-I pass every kappa2 passes.", low=1),
    )

    def __init__(self, exact_violators=False, kappa1=10, kappa2=5):
        self.exact_violators = exact_violators
        self.kappa1 = kappa1
        self.kappa2 = kappa2

    def accepts(self, loss, search=None):
        return None if loss == "lse" else "not available"

    def start_local(self, problem):
        from .catalyst import CatalystRun, catalyst_kappa, implied_gap
        run = SDCDRun(self, problem)
        kappa = catalyst_kappa(problem.structure, problem.Cs)
        if kappa <= 0:
            return run
        implied = None
        if problem.gap_tol is None:
            # an explicit tol: the default fit's relative gap rule, scaled down below default_tol,
            # stops it too (as SDM's). Catalyst measures the rule by one type-I pass at v, where
            # some example's dual change stays above a loose tol long after the default fit's
            # gap has ended it: a looser tol then never takes more passes than the default fit.
            implied = implied_gap(problem.tol, self.default_tol)
        return CatalystRun(run, kappa, problem.gap_tol, implied_gap=implied, state=problem.state)

    # CoCoA+ (cocoa.py)
    def local_kernel(self, structure, Cs, seed, exact_violators):
        from .._kernels.sdcd import SDCDSolver
        return SDCDSolver(structure, Cs, seed, bool(exact_violators or self.exact_violators))

    def local_round(self, kernel, tol):
        """A type-I pass and kappa2 - 1 type-II passes; (examples changed by more than tol, passes)."""
        rule = kernel.run_pass(True, tol)[0]
        for _ in range(self.kappa2 - 1):
            kernel.run_pass(False, tol)
        return rule, self.kappa2

    def local_slack(self, kernel, half_ww):
        return kernel.restricted_slack_sum()

    @staticmethod
    def rule_of_rounds(rules, tol, dual):
        return sum(rules) == 0


class SDCDRun(Run):
    """problem.primal: the LSE primal objective at w (the multiclass estimator sums over all
    classes); without it the primal of the problem restricted to the working sets V_i (OP5, whose
    dual is the solver's), which is what chains and multi-label report."""
    tag = "sdcd"
    title = "LSE-SDCD"
    w_tracks_v = True       # (Catalyst: w moves by sigma times each alpha change's dphi)

    def __init__(self, solver, problem):
        from .._kernels.sdcd import SDCDSolver
        self.kernel = SDCDSolver(problem.structure, problem.Cs, problem.seed,
                                 bool(problem.exact_violators or solver.exact_violators))
        if problem.state is not None:
            self.kernel.set_state(problem.state, problem.Cs)
        self.full_primal = problem.primal
        self.working_set_primal = problem.primal is None     # (Catalyst: its gaps are over V_i)
        self.kappa1, self.kappa2 = int(solver.kappa1), int(solver.kappa2)
        self.tol = problem.tol
        self.inner_tol = problem.tol
        self.keep_state = problem.keep_state
        self.passes = self.type1 = 0
        self.get_max_y = True

    def close(self):
        self.kernel.release()      # the fitted estimator keeps the weights, not the working sets

    def step(self, limit):
        type1 = self.get_max_y
        changed, vmax = self.kernel.run_pass(type1, self.tol)
        if type1:
            self.type1 += 1
            if self.passes >= self.kappa1:
                self.get_max_y = False
        elif (self.passes - self.kappa1) % self.kappa2 == 0:
            self.get_max_y = True
        self.passes += 1
        return Step(1, self.kernel.dual(), rule=type1 and changed == 0,
                    periodic=type1 and self.type1 % GAP_CHECK_EVERY == 0,
                    text=f"{'type-I ' if type1 else 'type-II'} changed {changed:7d} max change {vmax:.3e}")

    def primal(self):
        if self.full_primal is not None:
            return self.full_primal(self.kernel.coef)
        return self.kernel.restricted_primal()

    def slack_sum(self):
        """Catalyst's hook: the primal's loss part at the kernel's w."""
        if self.full_primal is not None:
            w = self.kernel.coef
            return self.full_primal(w) - 0.5 * float(np.dot(w, w))
        return self.kernel.restricted_slack_sum()

    def outer_iteration(self, inner_tol, limit):
        """Catalyst's hook: a type-I pass and then type-II passes, kappa2 in all (fewer when the
        limit says so); returns passes."""
        self.kernel.run_pass(True, inner_tol)
        passes = 1
        while passes < min(self.kappa2, limit):
            self.kernel.run_pass(False, inner_tol)
            passes += 1
        return passes

    def kkt_pass(self):
        """Catalyst's hook with an explicit tol: a type-I pass of the original problem; returns
        its largest dual change (the rule holds when it is at most tol)."""
        return self.kernel.run_pass(True, self.tol)[1]

    def result(self):
        k = self.kernel
        return dict(n_oracle_calls=k.n_oracle_calls, working_set_size=int(k.working_set_sizes().sum()),
                    state=k.get_state() if self.keep_state else None)
