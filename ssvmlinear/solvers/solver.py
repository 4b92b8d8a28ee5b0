"""The solver objects' base: parameters as in scikit-learn (get_params/set_params, clone,
`solver__name` in a grid search) without importing it, and their checks."""
import numbers

from ..params import Params

# The kinds of a solver parameter (Solver._kinds): what check_params accepts.
AT_LEAST_ONE = "an integer >= 1"
POSITIVE = "a real number > 0"
BOOLEAN = "True or False"


def _valid(kind, value):
    if kind == AT_LEAST_ONE:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1
    if kind == POSITIVE:
        return (isinstance(value, numbers.Real) and not isinstance(value, bool)
                and 0 < float(value) < float("inf"))
    if kind == BOOLEAN:
        return isinstance(value, (bool,)) or type(value).__name__ == "bool_"
    if isinstance(kind, tuple):           # one of these values
        return any(value == option and type(value) is type(option) for option in kind)
    raise AssertionError(kind)


def describe(kind):
    """A kind in words (error messages, the CLI's checks)."""
    if isinstance(kind, tuple):
        return "one of " + ", ".join(repr(o) for o in kind)
    return kind


class Solver(Params):
    """A training method and its own parameters.

    Subclasses set `name` (the registry's), `title` (warnings), `_kinds` (parameter -> kind) and
    implement start(problem) -> loop.Run. Estimators take a Solver as `solver=`; its parameters
    are reached as `solver__<name>` by get_params/set_params (GridSearchCV) and copied by clone.
    """
    name = None
    title = None
    _kinds = {}

    def check_params(self):
        """ValueError naming the solver, the parameter and what it accepts, for a bad value."""
        for name, kind in self._kinds.items():
            value = getattr(self, name)
            if not _valid(kind, value):
                raise ValueError(f"{type(self).__name__}: {name} must be {describe(kind)}; got {value!r}")

    def accepts(self, loss, search=None):
        """An error message when this solver does not train `loss`, else None (registry.check)."""
        return None if loss == "margin" else "not available"

    def start(self, problem):
        """A loop.Run of this solver on `problem` (loop.Problem)."""
        raise NotImplementedError
