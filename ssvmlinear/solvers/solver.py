"""The solver objects' base: parameters as in scikit-learn (get_params/set_params, clone,
`solver__name` in a grid search) without importing it, and their checks."""
import abc

from ..params import Params, fill_docstring


class Solver(Params, abc.ABC):
    """Base class of the solvers: a training method and its own parameters.

    A solver object holds its parameters as scikit-learn's estimators do (get_params,
    set_params, clone), so that an estimator takes it as ``solver=`` and a grid search reaches
    its parameters as ``solver__<name>``. Subclasses set `name`, `title`, `default_tol` and
    `params` (the parameters' descriptions, ssvmlinear.params.Param: their checks and the
    "{parameters}" of their docstring come from them) and implement start_local(problem),
    which returns a run of the solver (ssvmlinear.solvers.loop.Run).

    Attributes
    ----------
    name : str
        The estimators' name of the solver (``solver="sdm"``).
    title : str
        The solver's name in warnings and messages.
    default_tol : float
        The tolerance of its stopping rule when the estimator's tol is None.
    params : tuple of Param
        The descriptions of its parameters.
    distributed : str or None
        How it runs on a Dask cluster: "cocoa" (inside CoCoA+), "one-slack" (its run's own) or
        None (it does not).

    See Also
    --------
    SDM, SDCD, CuttingPlane, BCFW, GDMM, Pegasos : The solvers.

    Examples
    --------
    >>> from ssvmlinear.solvers import SDM, Solver
    >>> solver = SDM(oracle_batch=4)
    >>> isinstance(solver, Solver), solver.name, solver.default_tol
    (True, 'sdm', 0.1)
    >>> solver.get_params()
    {'oracle_batch': 4, 'shards': 1}
    """
    name = None
    title = None
    params = ()

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.__doc__:
            cls.__doc__ = fill_docstring(cls.__doc__, cls.params)

    def check_params(self):
        """ValueError naming the solver, the parameter and what it accepts, for a bad value."""
        for param in self.params:
            param.check(getattr(self, param.name), type(self).__name__)

    @classmethod
    def param(cls, name):
        """The description of one parameter."""
        return next(p for p in cls.params if p.name == name)

    def accepts(self, loss, search=None):
        """An error message when this solver does not train `loss`, else None (registry.check)."""
        return None if loss == "margin" else "not available"

    distributed = None      # how it runs on a Dask cluster: "cocoa", "one-slack" (its run's own) or None
    warm_starts = False     # a warm_start fit resumes from the previous fit's state (else starts cold)
    cli_rule = None         # ssvm-train -e: its stopping rule in the usage text's words

    def start(self, problem):
        """A loop.Run of this solver on `problem` (loop.Problem): inside CoCoA+ where its examples
        are on a cluster and it runs there (distributed == "cocoa"), else start_local's."""
        self.check_params()
        if self.distributed == "cocoa":
            from ..distributed import cluster_of
            client = cluster_of(problem.structure)
            if client is not None:
                from .cocoa import CoCoARun
                return CoCoARun(self, client, problem)
        return self.start_local(problem)

    @abc.abstractmethod
    def start_local(self, problem):
        """A loop.Run of this solver in this process."""

    # CoCoA+ hooks shared by the dual solvers whose kernels keep label-store working sets
    def local_calls(self, kernel):
        return kernel.n_oracle_calls

    def local_working_set(self, kernel):
        return int(kernel.working_set_sizes().sum())

    def local_dual_correction(self, kernel):
        """CoCoA+: a change of w (indices, values) that makes the shard's dual variables a dual
        point, or None when they are one."""
        return None
