"""The solver objects' base: parameters as in scikit-learn (get_params/set_params, clone,
`solver__name` in a grid search) without importing it, and their checks."""
import inspect
import numbers

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


class Solver:
    """A training method and its own parameters.

    Subclasses set `name` (the registry's), `title` (warnings), `_kinds` (parameter -> kind) and
    implement start(problem) -> loop.Run. Estimators take a Solver as `solver=`; its parameters
    are reached as `solver__<name>` by get_params/set_params (GridSearchCV) and copied by clone.
    """
    name = None
    title = None
    _kinds = {}

    @classmethod
    def _param_names(cls):
        if cls.__init__ is object.__init__:       # (a solver without parameters)
            return []
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))

    def get_params(self, deep=True):
        """The solver's parameters (a dict), as scikit-learn's estimators give theirs."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Sets parameters by name; returns self."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for solver {type(self).__name__}; valid: "
                                 + ", ".join(valid))
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {} if type(self).__init__ is object.__init__ else {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = [f"{k}={v!r}" for k, v in self.get_params().items() if repr(v) != repr(defaults.get(k))]
        return f"{type(self).__name__}({', '.join(changed)})"

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
