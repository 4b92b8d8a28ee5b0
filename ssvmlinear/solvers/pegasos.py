"""Pegasos SGD (_kernels/solvers/pegasos.pyx) on 1/2 |w|^2 + sum_i C_i psi_i(w) for any surrogate."""
import time

import numpy as np

from .loop import Run, Step
from ..params import Param
from ..search import MAX_CALLS, METHODS, SearchSetup, surrogate_problem
from .solver import Solver


class Pegasos(Solver):
    """Pegasos stochastic subgradient descent, any surrogate and search.

    A step is an epoch over a random permutation in mini-batches of `batch_size`; the primal
    objective is evaluated after every epoch with the search that is exact for the problem
    trained (ssvmlinear.search.SearchSetup): the exact search where the structure has a
    loss-indexed oracle, the hull search on an LP relaxation, and with search="hull" the
    surrogate over the convex hull of the labels' (m, Delta) points, the problem that search
    trains. The rule: an epoch whose primal
    objective changed by at most tol relative to the previous epoch's. There is no dual: no
    duality gap. With n_jobs > 1 the searches of each mini-batch are shared by threads; updates
    are applied in batch order, so results do not depend on n_jobs.

    {parameters}

    Attributes
    ----------
    name : str
        The estimators' name of this solver: ``solver="pegasos"`` selects it with its default
        parameters.
    default_tol : float
        The tolerance of its stopping rule when the estimator's tol is None (1e-3).

    See Also
    --------
    CuttingPlane : The one-slack cutting plane, for surrogates convex in the margin.
    ssvmlinear.search : The surrogates' searches.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import MulticlassSSVM
    >>> from ssvmlinear.solvers import Pegasos
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [-1.0, -1.0], [-0.9, -1.1]])
    >>> y = np.array([0, 0, 1, 1, 2, 2])
    >>> clf = MulticlassSSVM(C=10.0, loss="slack", solver=Pegasos(search="exact", batch_size=2))
    >>> clf.fit(X, y).predict(X)
    array([0, 0, 1, 1, 2, 2])
    """
    name = "pegasos"
    cli_rule = "stop after an epoch whose primal objective changed by at most eps relative; -m counts epochs"
    title = "Pegasos"
    default_tol = 1e-3
    max_calls = MAX_CALLS
    params = (
        Param("search", "options", "hull", "How the surrogates' most violating label is searched "
              "(ssvmlinear.search; 'none' for margin rescaling).", options=tuple(METHODS), flag="S", metavar="search",
              cli="the search of -l's most violating label (default hull)"),
        Param("batch_size", "int", 1, "Examples per mini-batch (their searches run in n_jobs threads).",
              low=1, flag="b", metavar="size", cli="Pegasos mini-batch (default 1), whose searches run in -n "
                                                        "threads"),
        Param("average", "bool", True, "Return the average of all iterates (else the last one)."),
        Param("projection", "bool", False, "Project the iterate onto the ball of radius sqrt(sum_i C_i max "
              "loss), as in the paper."),
    )

    def __init__(self, search="hull", batch_size=1, average=True, projection=False):
        self.search = search
        self.batch_size = batch_size
        self.average = average
        self.projection = projection


    def accepts(self, loss, search=None):
        return surrogate_problem(loss, self.search)

    def start_local(self, problem):
        return PegasosRun(self, problem)


class PegasosRun(Run):
    tag = "pegasos"
    title = "Pegasos"
    rule_is_final = True

    def __init__(self, solver, problem):
        from joblib import effective_n_jobs
        from .._kernels.pegasos import PegasosSolver
        from ..parallel import KernelTeam
        structure = problem.structure
        setup = SearchSetup.of(problem.loss, solver.search, solver.max_calls)
        n = self.n = structure.n_examples
        n_threads = max(1, min(effective_n_jobs(problem.n_jobs), max(n, 1)))   # batches and the objective's searches
        self.batch_size = max(1, min(int(solver.batch_size), n))   # its buffers grow with it
        self.average = bool(solver.average)
        kind, alpha, beta, method, ratio, max_calls = setup.kernel_args
        self.kernel = PegasosSolver(structure, kind, alpha, beta, method,
                                    np.ascontiguousarray(problem.Cs, dtype=np.float64), ratio, max_calls,
                                    bool(solver.projection), self.average, self.batch_size, n_threads)
        if problem.state is not None:
            self.kernel.set_weights(np.ascontiguousarray(problem.state, dtype=np.float64))
        self.rng = np.random.default_rng(problem.seed)
        self.Cs = np.asarray(problem.Cs, dtype=np.float64)
        # the objective: every example's loss by the search that finds it exactly (its threads')
        self.eval_method, self.eval_ratio = setup.measure_method(structure)
        self.tol = problem.tol
        self.keep_state = problem.keep_state
        self.last = None
        self.train_seconds = 0.0
        # one team for the whole fit, its helpers sleeping in the kernel between mini-batches (a
        # joblib call per mini-batch would pay joblib's result polling every time)
        self.helpers = KernelTeam(self.kernel.team)
        self.helpers.__enter__()

    def close(self):
        self.helpers.__exit__(None, None, None)

    def primal(self):
        w = self.weights()
        losses = np.zeros(self.n)
        self.kernel.losses(w, losses, self.eval_method, self.eval_ratio)
        self.check_searches()
        return 0.5 * float(w @ w) + float(self.Cs @ losses)

    def dual(self):
        return np.nan

    def check_searches(self):
        if self.kernel.failed_example >= 0:
            raise RuntimeError(f"Pegasos: the search failed on example {self.kernel.failed_example}")

    def weights(self):
        return self.kernel.weights(self.average)

    def step(self, limit):
        order = self.rng.permutation(self.n).astype(np.intp)
        t = time.perf_counter()
        self.kernel.epoch(order, self.batch_size)
        self.check_searches()
        self.train_seconds += time.perf_counter() - t
        primal, previous = self.primal(), self.last
        self.last = primal
        rule = previous is not None and abs(previous - primal) <= self.tol * abs(primal)
        return Step(1, np.nan, primal, rule=rule, text=f"oracle calls {self.kernel.n_calls_total}")

    def final(self, converged, last_primal):
        return (self.last if self.last is not None else np.nan), np.nan

    def result(self):
        w = self.weights()
        return dict(n_oracle_calls=int(self.kernel.n_calls_total), working_set_size=0,
                    train_seconds=self.train_seconds, state=w.copy() if self.keep_state else None)
