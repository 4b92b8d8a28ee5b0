"""Parameters as scikit-learn's estimators hold them (constructor arguments kept as attributes,
get_params/set_params, a repr of what differs from the defaults), without importing scikit-learn:
the base of the solver objects and of the core models."""
import inspect


class Params:
    """Constructor arguments as parameters: get_params, set_params and repr as in scikit-learn (so
    `clone` and `GridSearchCV`'s nested `solver__name` work on them)."""

    @classmethod
    def _param_names(cls):
        if cls.__init__ is object.__init__:       # (no parameters)
            return []
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))

    def get_params(self, deep=True):
        """The parameters (a dict), as scikit-learn's estimators give theirs."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Sets parameters by name; returns self."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; valid: "
                                 + ", ".join(valid))
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {} if type(self).__init__ is object.__init__ else {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = [f"{k}={v!r}" for k, v in self.get_params().items() if repr(v) != repr(defaults.get(k))]
        return f"{type(self).__name__}({', '.join(changed)})"
