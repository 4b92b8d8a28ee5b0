"""BCFW: block-coordinate Frank-Wolfe (Lacoste-Julien et al. 2013) on the margin-rescaling dual
(_kernels/solvers/bcfw.pyx)."""
import abc

import numpy as np

from .loop import Run, Step
from ..params import Param
from ..search import LABEL_SEARCHES, MAX_CALLS, SearchSetup, surrogate_problem
from .solver import Solver


class BCFW(Solver):
    """Block-coordinate Frank-Wolfe with exact line search on the structural SVM dual.

    A step is a pass over the examples in random order, each a Frank-Wolfe step on its block
    towards its loss-augmented label. The rule: a pass whose sum of block Frank-Wolfe gaps (each
    measured at its step) is at most tol times the dual objective (relative, at any n and C).
    Besides margin rescaling it trains the surrogates linear in the margin, slack rescaling
    (the thesis's BCFW-SR), beta and generalized scaling: each label is a corner with its
    margin scaled, found by the surrogate's search. Their objective is measured with the search
    exact for the problem (ssvmlinear.search.SearchSetup).

    {parameters}

    Attributes
    ----------
    name : str
        The estimators' name of this solver: ``solver="bcfw"`` selects it with its default
        parameters.
    default_tol : float
        The tolerance of its stopping rule when the estimator's tol is None (1e-3).

    See Also
    --------
    GDMM : Block Frank-Wolfe on the factors of chains and coupled labels.
    SDM : The default solver of margin rescaling.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import MulticlassSSVM
    >>> from ssvmlinear.solvers import BCFW
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [-1.0, -1.0], [-0.9, -1.1]])
    >>> y = np.array([0, 0, 1, 1, 2, 2])
    >>> clf = MulticlassSSVM(C=10.0, solver=BCFW()).fit(X, y)
    >>> clf.predict(X)
    array([0, 0, 1, 1, 2, 2])
    >>> BCFW().get_params()
    {'search': 'angular'}
    """
    name = "bcfw"
    cli_rule = "stop after a pass whose block Frank-Wolfe gaps sum to at most eps times the dual"
    warm_starts = True
    title = "BCFW"
    default_tol = 1e-3
    max_calls = MAX_CALLS
    params = (
        Param("search", "options", "angular", "The surrogates' search (ssvmlinear.search; one that returns "
              "a label, so not 'hull'); unused by margin rescaling.", options=LABEL_SEARCHES, flag="S",
              metavar="search", cli="the search of -l's most violating label (default angular)"),
    )

    def __init__(self, search="angular"):
        self.search = search

    def accepts(self, loss, search=None):
        return surrogate_problem(loss, self.search, convex=True, linear=True)

    def start_local(self, problem):
        return BCFWRun(problem, self)


class GapRuleRun(Run):
    """Runs whose rule is BCFW's (block gaps <= tol |dual|, and a violation <= tol for GDMM), with
    Catalyst's hooks (catalyst.py): a centre's inner iteration is one pass."""

    def rule(self, gaps, violation, dual):
        return gaps <= self.tol * max(abs(dual), 1e-300) and violation <= self.tol

    @abc.abstractmethod
    def run_pass(self):
        """One pass: (sum of the block gaps, consistency violation)."""

    @property
    def inner_tol(self):             # (Catalyst reads it; a pass has no tolerance of its own)
        return self.tol

    def slack_sum(self):
        """Catalyst's hook: the primal's loss part at the kernel's w (an oracle pass)."""
        w = self.kernel.coef
        return self.primal() - 0.5 * float(np.dot(w, w))

    def outer_iteration(self, inner_tol, limit):
        """Catalyst's hook: one pass; returns 1."""
        self.run_pass()
        return 1

    def kkt_pass(self):
        """Catalyst's hook with an explicit tol: one pass of the original problem; returns the rule's
        measure (block gaps / |dual|, or the consistency violation if larger)."""
        gaps, violation = self.run_pass()
        return max(gaps / max(abs(self.kernel.dual()), 1e-300), violation)


class BCFWRun(GapRuleRun):
    tag = "bcfw"
    title = "BCFW"

    def __init__(self, problem, solver=None):
        from .._kernels.bcfw import BCFWSolver
        self.loss = None
        if problem.loss == "margin":
            self.kernel = BCFWSolver(problem.structure, problem.Cs, problem.seed)
        else:
            setup = SearchSetup.of(problem.loss, solver.search, solver.max_calls)
            self.kernel = BCFWSolver(problem.structure, problem.Cs, problem.seed, *setup.kernel_args)
            # the primal: every example's loss by the search that finds it exactly
            self.loss = setup.measure(problem.structure, problem.Cs)
        if problem.state is not None:
            self.kernel.set_state(problem.state, problem.Cs)
            self.kernel.recompute_q()
        self.tol = problem.tol
        self.keep_state = problem.keep_state

    def close(self):
        self.kernel.release()      # the fitted estimator keeps the weights, not the working sets

    def primal(self):
        if self.loss is None:
            return self.kernel.primal()
        w = self.kernel.coef
        return 0.5 * float(w @ w) + self.loss(w)

    def run_pass(self):
        return self.kernel.run_pass(), 0.0

    def step(self, limit):
        gaps, _ = self.run_pass()
        dual = self.kernel.dual()
        return Step(1, dual, rule=self.rule(gaps, 0.0, dual), text=f"block gaps {gaps:.4g}")

    def rule_text(self):
        return f"the block gaps fell to tol={self.tol:.3g} of the dual"

    def result(self):
        k = self.kernel
        return dict(n_oracle_calls=k.n_oracle_calls, working_set_size=int(k.working_set_sizes().sum()),
                    state=k.get_state() if self.keep_state else None)
