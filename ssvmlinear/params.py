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
        """Get the parameters of this object.

        Parameters
        ----------
        deep : bool, default=True
            Accepted for scikit-learn compatibility; these objects hold no nested estimators.

        Returns
        -------
        dict
            Parameter names (sorted, as scikit-learn gives them) mapped to their values.

        Examples
        --------
        >>> from ssvmlinear.solvers import SDM
        >>> SDM(shards=2).get_params()
        {'oracle_batch': 1, 'shards': 2}
        """
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set parameters by name.

        Parameters
        ----------
        **params : dict
            New values of parameters, by name.

        Returns
        -------
        object
            This object, with the new values.

        Raises
        ------
        ValueError
            For a name that is not a parameter of this object.

        Examples
        --------
        >>> from ssvmlinear.solvers import SDM
        >>> SDM().set_params(oracle_batch=4)
        SDM(oracle_batch=4)
        """
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


class Param:
    """One parameter's description: name, kind, range, default and a one-line doc. It is the one
    source of the models' and solvers' checks (check), of scikit-learn's parameter validation
    (sklearn_constraints), of ssvm-train's checks of its flag (cli_problem) and of the numpydoc
    Parameters sections (numpydoc).

    kind: "int", "real" (with low/high/closed: "left", "right", "both" or "neither"), "bool",
    "options" (strings), "seed" (an int, None, or a numpy Generator/RandomState), "verbose", "callable",
    "solver" (an instance of one of `types`, or a registered solver's name), "any" (checked by the
    model itself); none: None is allowed too; also: scikit-learn constraint names accepted besides
    ("array-like", "dict", "solver"); flag: the ssvm-train option, metavar its value's name in the
    usage text and cli that text's description of it (ssvm-train -h is generated from these)."""

    def __init__(self, name, kind, default, doc, low=None, high=None, closed="left", options=(), none=False,
                 also=(), flag=None, type_text=None, types=(), metavar=None, cli=None):
        self.name, self.kind, self.default, self.doc = name, kind, default, doc
        self.types = tuple(types)
        self.low, self.high, self.closed = low, high, closed
        self.options, self.none, self.also, self.flag = tuple(options), none, tuple(also), flag
        self.type_text = type_text
        self.metavar, self.cli = metavar, cli

    def with_default(self, default):
        """The same description with another default (a structure's own)."""
        import copy
        other = copy.copy(self)
        other.default = default
        return other

    # ------------------------------------------------------------------ in words
    def _range_text(self):
        lo_in, hi_in = self.closed in ("left", "both"), self.closed in ("right", "both")
        parts = []
        if self.low is not None:
            parts.append(f"{'>=' if lo_in else '>'} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'<=' if hi_in else '<'} {self.high:g}")
        return " and ".join(parts)

    def describe(self, none=True, named=True):
        """What the parameter accepts, in words ("an integer >= 1"); none=False leaves out "or None",
        named=False the named choices beside numbers (a command-line flag typed as a number)."""
        if self.kind in ("int", "real"):
            what = "an integer" if self.kind == "int" else "a finite number"
            rng = self._range_text()
            text = f"{what} {rng}" if rng else what
        elif self.kind == "bool":
            text = "True or False"
        elif self.kind == "options":
            text = "one of " + ", ".join(repr(o) for o in self.options)
        elif self.kind == "seed":
            text = "an integer in [0, 2**32), a numpy Generator or RandomState"
        elif self.kind == "verbose":
            text = "an integer >= 0"
        elif self.kind == "callable":
            text = "a callable"
        elif self.kind == "str":
            text = "a string"
        elif self.kind == "solver":
            from .registry import SOLVERS
            text = "a solver object (ssvmlinear.solvers) or one of " + ", ".join(repr(s) for s in SOLVERS)
        else:
            text = "a value"
        if self.kind != "options" and self.options and named:
            text += " or " + " or ".join(repr(o) for o in self.options)
        return text + (" or None" if self.none and none else "")

    def numpydoc(self):
        """Its entry of a numpydoc Parameters section."""
        type_text = self.type_text or {
            "int": "int", "real": "float", "bool": "bool",
            "seed": "int, numpy.random.Generator, numpy.random.RandomState",
            "verbose": "int", "callable": "callable", "options": "{" + ", ".join(repr(o) for o in self.options) + "}",
            "str": "str", "solver": "str or Solver",
        }.get(self.kind, "object")
        if self.kind in ("int", "real") and self._range_text():
            type_text += " " + self._range_text()
        if self.kind != "options" and self.options:
            type_text += " or " + " or ".join(repr(o) for o in self.options)
        if self.none and "None" not in type_text:
            type_text += " or None"
        import textwrap
        return f"{self.name} : {type_text}, default={self.default!r}\n" + textwrap.fill(
            self.doc, width=92, initial_indent="    ", subsequent_indent="    ")

    # ------------------------------------------------------------------ checks
    def accepts(self, value):
        import numbers
        if self.kind == "any":      # (checked by its user)
            return True
        if self.kind != "options" and isinstance(value, str) and value in self.options:
            return True             # (a number or a named choice: fmo_subsets="auto")
        if value is None:
            return self.none
        kind = self.kind
        if kind == "verbose":           # (scikit-learn's: an integer >= 0 or a bool)
            return isinstance(value, numbers.Integral) and value >= 0
        # (numbers as scikit-learn takes them: a bool is an int)
        if kind == "int":
            return isinstance(value, numbers.Integral) and self._in_range(value)
        if kind == "real":
            import math
            return isinstance(value, numbers.Real) and math.isfinite(value) and self._in_range(value)
        if kind == "bool":
            return isinstance(value, bool) or type(value).__name__ == "bool_"
        if kind == "options":
            return isinstance(value, str) and value in self.options or bool(self.also)
        if kind == "seed":
            import numpy as np
            return (isinstance(value, numbers.Integral) and 0 <= value < 2**32) or isinstance(
                value, (np.random.Generator, np.random.RandomState))
        if kind == "callable":
            return callable(value)
        if kind == "str":
            return isinstance(value, str)
        if kind == "solver":
            from .registry import SOLVERS
            return isinstance(value, self.types) or isinstance(value, str) and value in SOLVERS
        return True

    def _in_range(self, v):
        lo_in, hi_in = self.closed in ("left", "both"), self.closed in ("right", "both")
        if self.low is not None and not (v >= self.low if lo_in else v > self.low):
            return False
        return self.high is None or (v <= self.high if hi_in else v < self.high)

    def check(self, value, owner):
        """ValueError naming the owner, the parameter and what it accepts."""
        if not self.accepts(value):
            raise ValueError(f"{owner}: {self.name} must be {self.describe()}; got {value!r}")

    def cli_accepts(self):
        """What the flag takes, in the CLI's words (a number, not None or a Python object)."""
        return "an integer in [0, 2**32)" if self.kind == "seed" else self.describe(none=False, named=False)

    def cli_problem(self, value):
        """The ssvm-train error for `value` given to the flag, in the CLI's words (None: fine)."""
        if self.accepts(value):
            return None
        shown = f"{value:g}" if isinstance(value, (int, float)) else value
        return f"-{self.flag} must be {self.cli_accepts()}, got {shown}"

    def sklearn_constraints(self):
        """The parameter in scikit-learn's constraint language (imports scikit-learn)."""
        import numbers
        from sklearn.utils._param_validation import Interval, StrOptions
        out = [None] if self.none else []
        if self.kind in ("int", "real"):
            number = numbers.Integral if self.kind == "int" else numbers.Real
            if self.low is None and self.high is None:
                out.append(number)
            else:
                out.append(Interval(number, self.low, self.high, closed=self.closed))
        elif self.kind == "bool":
            out.append("boolean")
        elif self.kind == "options":
            out.append(StrOptions(set(self.options)))
        elif self.kind == "seed":
            import numpy as np
            out += ["random_state", np.random.Generator]
        elif self.kind == "verbose":
            out.append("verbose")
        elif self.kind == "callable":
            out.append(callable)
        elif self.kind == "str":
            out.append(str)
        elif self.kind == "solver":
            from .registry import SOLVERS
            out += [StrOptions(set(SOLVERS)), *self.types]
        elif self.kind == "any":
            out = "no_validation"
        if self.kind != "options" and self.options:
            out.append(StrOptions(set(self.options)))
        for extra in self.also:
            if extra == "dict":
                out.append(dict)
            elif extra == "str":
                out.append(str)
            else:
                out.append(extra)
        return out


def parameters_section(params, order=None):
    """Build a numpydoc Parameters section from parameter descriptions.

    Parameters
    ----------
    params : sequence of Param
        The descriptions, one per parameter.
    order : sequence of str or None, default=None
        The parameter names in the order to list them (a constructor's signature order); every
        name must have a description and every description is listed. None: the order of
        `params`.

    Returns
    -------
    str
        The section, heading included, not indented.

    Raises
    ------
    ValueError
        When `order` and `params` do not name the same parameters.

    Examples
    --------
    >>> from ssvmlinear.params import Param, parameters_section
    >>> print(parameters_section([Param("max_iter", "int", 1000, "The most passes.", low=1)]))
    Parameters
    ----------
    max_iter : int >= 1, default=1000
        The most passes.
    """
    if order is not None:
        by_name = {p.name: p for p in params}
        order = list(order)
        if sorted(order) != sorted(by_name):
            raise ValueError(f"the parameters {sorted(order)} and their descriptions {sorted(by_name)} differ")
        params = [by_name[name] for name in order]
    body = "\n".join(p.numpydoc() for p in params)
    return "Parameters\n----------\n" + body


def signature_order(cls):
    """The names of the parameters of ``cls.__init__``, in signature order (self and ``*args`` /
    ``**kwargs`` left out): the order in which a class docstring lists them."""
    if cls.__init__ is object.__init__:
        return []
    return [p.name for p in inspect.signature(cls.__init__).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def fill_docstring(doc, params, order=None, fit_attributes=None):
    """A class docstring with its "{parameters}" (the numpydoc Parameters section of `params`,
    listed in `order`) and "{fit_attributes}" (the given Attributes entries) filled in, indented
    as the docstring's sections are (4 spaces)."""
    if "{parameters}" in doc:
        doc = doc.replace("{parameters}", parameters_section(params, order).replace("\n", "\n    "))
    if fit_attributes is not None and "{fit_attributes}" in doc:
        doc = doc.replace("{fit_attributes}", fit_attributes.replace("\n", "\n    "))
    return doc
