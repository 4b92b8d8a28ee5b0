"""The public docstrings: numpydoc sections that match the objects, and Examples that run.

Public API: what `ssvmlinear` exports (the estimators, which it loads lazily, the file readers
and writers, the model files, the hierarchy, the metrics, ConvergenceWarning), the solver
classes of `ssvmlinear.solvers`, `ssvmlinear.distributed.load_svmlight_shards`, and the public
methods the estimators define (fit, predict, score, decision_function, predict_labels, ...).

1. Every estimator's and every solver's Parameters section lists exactly its parameters:
   get_params' keys, no more, no fewer, in the order of the constructor's signature (get_params
   itself sorts the names, as scikit-learn's does; numpydoc's PR03 asks for signature order).
2. numpydoc's validation, a chosen set of checks (below), passes on every public object.
3. The fitted attributes (public names ending in "_" that fit sets) are exactly those the
   Attributes section documents.
4. The Examples run as doctests (ELLIPSIS | NORMALIZE_WHITESPACE), each in a fresh namespace.
"""
import doctest
import importlib
import inspect
import warnings

import numpy as np
import pytest

numpydoc = pytest.importorskip("numpydoc")
from numpydoc.docscrape import ClassDoc  # noqa: E402
from numpydoc.validate import validate  # noqa: E402

import ssvmlinear  # noqa: E402
from ssvmlinear.exceptions import ConvergenceWarning  # noqa: E402


ESTIMATORS = {
    "MulticlassSSVM": "ssvmlinear.multiclass",
    "ChainSSVM": "ssvmlinear.chain",
    "MultiLabelSSVM": "ssvmlinear.multilabel",
    "HierarchicalSSVM": "ssvmlinear.hierarchical",
}
# the methods each estimator must document (public methods it defines beyond these are found below)
ESTIMATOR_METHODS = {
    "MulticlassSSVM": ("fit", "predict", "decision_function", "score"),
    "ChainSSVM": ("fit", "predict", "score", "sequence_accuracy"),
    "MultiLabelSSVM": ("fit", "predict", "decision_function", "predict_labels", "score"),
    "HierarchicalSSVM": ("fit", "predict", "decision_function", "predict_labels", "score", "tree_induced_error"),
}
SOLVERS = ("SDM", "SDCD", "CuttingPlane", "BCFW", "GDMM", "Pegasos")
FUNCTIONS = (
    "ssvmlinear.io.load_svmlight_file",
    "ssvmlinear.io.dump_svmlight_file",
    "ssvmlinear.io.load_crfsuite_file",
    "ssvmlinear.model_io.save_model",
    "ssvmlinear.model_io.load_model",
    "ssvmlinear.hierarchy.read_hierarchy",
    "ssvmlinear.metrics.subset_accuracy",
    "ssvmlinear.metrics.hamming_loss",
    "ssvmlinear.metrics.micro_f1",
    "ssvmlinear.metrics.macro_f1",
    "ssvmlinear.metrics.example_accuracy",
    "ssvmlinear.metrics.entity_scores",
    "ssvmlinear.metrics.entity_spans",
    "ssvmlinear.distributed.load_svmlight_shards",
    "ssvmlinear.datasets.make_entity_sentences",
    "ssvmlinear.datasets.word_features",
)
OTHER_CLASSES = (
    "ssvmlinear.hierarchy.Hierarchy",
    "ssvmlinear.exceptions.ConvergenceWarning",
    "ssvmlinear.solvers.solver.Solver",
    "ssvmlinear.feature_extraction.SequenceVectorizer",
)


def _split(path):
    """(module, attribute names) of a dotted path: the longest importable prefix, then the rest."""
    parts = path.split(".")
    for k in range(len(parts) - 1, 0, -1):
        try:
            return importlib.import_module(".".join(parts[:k])), parts[k:]
        except ImportError:
            continue
    raise ImportError(path)


def _load(path):
    obj, names = _split(path)
    for name in names:
        obj = getattr(obj, name)
    return obj


def _own_public_methods(cls):
    """Public functions and properties of `cls` (inherited ones too) defined in ssvmlinear, not in
    scikit-learn (get_params, set_fit_request, ... are scikit-learn's)."""
    out = []
    for name in dir(cls):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(cls, name)
        func = attr.fget if isinstance(attr, property) else getattr(attr, "__func__", attr)
        if inspect.isfunction(func) and func.__module__.startswith("ssvmlinear"):
            out.append(name)
    return out


def _estimator_paths():
    out = []
    for est, module in ESTIMATORS.items():
        out.append(f"{module}.{est}")
        methods = set(ESTIMATOR_METHODS[est]) | set(_own_public_methods(_load(f"{module}.{est}")))
        out += [f"{module}.{est}.{m}" for m in sorted(methods)]
    return out


def _solver_paths():
    import ssvmlinear.solvers as solvers
    out = []
    for name in SOLVERS:
        cls = getattr(solvers, name)
        out.append(f"{cls.__module__}.{name}")
        out += [f"{cls.__module__}.{name}.{m}" for m in ("get_params", "set_params")]
    return out


def _other_paths():
    out = list(FUNCTIONS)
    for path in OTHER_CLASSES:
        out.append(path)
        if path.endswith("Hierarchy"):
            out += [f"{path}.{m}" for m in _own_public_methods(_load(path))]
    return out


PUBLIC = _estimator_paths() + _solver_paths() + _other_paths()


def test_public_list_covers_the_exports():
    """Every name ssvmlinear and ssvmlinear.solvers export as public API is in PUBLIC."""
    import ssvmlinear.solvers as solvers
    covered = {path.rsplit(".", 1)[-1] for path in PUBLIC}
    exported = set(ssvmlinear.__all__) - {"metrics", "__version__"}
    assert exported <= covered, exported - covered
    classes = {n for n in solvers.__all__ if inspect.isclass(getattr(solvers, n))} - {"FitResult"}
    assert classes <= covered, classes - covered


# ------------------------------------------------------------------------- 1. Parameters sections

def _signature_names(cls):
    return [p.name for p in inspect.signature(cls.__init__).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _documented_parameters(cls):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # (ClassDoc on members it cannot document)
        return [p.name for p in ClassDoc(cls)["Parameters"]]


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_estimator_parameters_section(name):
    cls = _load(f"{ESTIMATORS[name]}.{name}")
    documented = _documented_parameters(cls)
    keys = list(cls().get_params(deep=False))
    assert sorted(documented) == keys, "the Parameters section must list exactly get_params' keys"
    assert len(set(documented)) == len(documented)
    assert documented == _signature_names(cls), "listed in the constructor's order"


@pytest.mark.parametrize("name", SOLVERS)
def test_solver_parameters_section(name):
    import ssvmlinear.solvers as solvers
    cls = getattr(solvers, name)
    documented = _documented_parameters(cls)
    keys = list(cls().get_params())
    assert sorted(documented) == sorted(keys) and len(documented) == len(keys)
    assert documented == _signature_names(cls) if keys else documented == []
    assert keys == [p.name for p in sorted(cls.params, key=lambda p: p.name)]   # the descriptions


# ------------------------------------------------------------------------- 2. numpydoc validation

# Checks that every public docstring passes: GL02/GL03 layout, GL06/GL07 known sections in
# numpydoc's order, GL08 present, SS01-SS03/SS06 a one-line capitalised summary ending with a
# period, PR01-PR10 Parameters that match the signature (names, order, types, descriptions),
# RT01-RT05 a described Returns section, SA02-SA04 described See Also entries, EX01 Examples.
CHECKS = {"GL02", "GL03", "GL06", "GL07", "GL08", "SS01", "SS02", "SS03", "SS04", "SS06",
          "PR01", "PR02", "PR03", "PR04", "PR05", "PR06", "PR07", "PR08", "PR09", "PR10",
          "RT01", "RT02", "RT03", "RT04", "RT05", "SA02", "SA03", "SA04", "EX01"}
# classes and module-level functions also need an extended summary
TOP_LEVEL_CHECKS = CHECKS | {"ES01"}


def _is_top_level(path):
    """A class or a module-level function (not a method)."""
    return len(_split(path)[1]) == 1


@pytest.mark.parametrize("path", PUBLIC)
def test_numpydoc_validation(path):
    checks = TOP_LEVEL_CHECKS if _is_top_level(path) else CHECKS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errors = [(code, msg) for code, msg in validate(path)["errors"] if code in checks]
    assert not errors, "\n".join(f"{code}: {msg}" for code, msg in errors)


@pytest.mark.parametrize("path", [p for p in PUBLIC if _is_top_level(p)])
def test_parameters_returns_examples_not_empty(path):
    """The sections numpydoc validation requires are there and have content."""
    from numpydoc.docscrape import FunctionDoc
    obj = _load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = ClassDoc(obj) if inspect.isclass(obj) else FunctionDoc(obj)
    assert "".join(doc["Examples"]).strip()
    if not inspect.isclass(obj):
        assert doc["Returns"] and all(p.desc for p in doc["Returns"])
    if inspect.isclass(obj):
        own_init = obj.__init__ is not object.__init__ and not issubclass(obj, BaseException)
        takes = _signature_names(obj) if own_init else []
    else:
        takes = list(inspect.signature(obj).parameters)
    if takes:
        assert doc["Parameters"] and all(p.desc for p in doc["Parameters"])


# ------------------------------------------------------------------------- 3. Attributes sections

def _tiny_data():
    X = np.array([[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.0, 1.0, 0.0], [0.1, 0.9, 0.0],
                  [0.0, 0.0, 1.0], [0.0, 0.1, 0.9], [0.8, 0.0, 0.2], [0.0, 0.2, 0.8]])
    y = np.array([0, 0, 1, 1, 2, 2, 0, 2])
    return X, y


def _fits(name):
    """Fitted estimators of `name` whose attributes, together, are every one fit can set; each
    with its predict call (predict may set attributes too)."""
    from ssvmlinear import Hierarchy
    cls = _load(f"{ESTIMATORS[name]}.{name}")
    X, y = _tiny_data()
    frame = None
    try:
        import pandas as pd
        frame = pd.DataFrame(X, columns=["a", "b", "c"])
    except ImportError:
        pass
    runs = []   # (kwargs, fit args, fit kwargs, predict args, predict kwargs)
    if name == "MulticlassSSVM":
        runs += [({}, (X, y), {}, (X,), {})]
        runs += [({"solver": s, "callback": lambda m: None}, (X, y), {}, (X,), {})
                 for s in ("cutting-plane", "gdmm", "pegasos")]
    elif name == "ChainSSVM":
        lengths = np.array([4, 4])
        runs += [({}, (X, y, lengths), {}, (X, lengths), {}),
                 ({"start_end": True, "callback": lambda m: None, "solver": "gdmm"}, (X, y),
                  {"sequence_ids": np.repeat([1, 2], 4)}, (X,), {"sequence_ids": np.repeat([1, 2], 4)})]
    elif name == "MultiLabelSSVM":
        Y = np.array([[1, 0, 1], [1, 0, 1], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 1, 1], [1, 0, 0], [0, 1, 1]])
        runs += [({}, (X, Y), {}, (X,), {}),
                 ({"edges": "full", "callback": lambda m: None}, (X, Y), {}, (X,), {})]
    elif name == "HierarchicalSSVM":
        h = Hierarchy([0, 0, 1, 1], [1, 2, 3, 4])
        yh = np.array([3, 3, 4, 4, 2, 2, 3, 2])
        runs += [({"hierarchy": h}, (X, yh), {}, (X,), {}),
                 ({"hierarchy": h, "model": "shared", "callback": lambda m: None}, (X, yh), {}, (X,), {})]
    if frame is not None:
        kwargs, args, fit_kw, pargs, pkw = runs[0]
        runs.append((kwargs, (frame,) + args[1:], fit_kw, (frame,) + pargs[1:], pkw))
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for kwargs, args, fit_kw, pargs, pkw in runs:
            est = cls(**kwargs).fit(*args, **fit_kw)
            est.predict(*pargs, **pkw)
            out.append(est)
    return out


def _fitted_attributes(est):
    return {a for a in vars(est) if a.endswith("_") and not a.startswith("_") and not a.endswith("__")}


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_attributes_section(name):
    cls = _load(f"{ESTIMATORS[name]}.{name}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        documented = [p.name for p in ClassDoc(cls)["Attributes"]]
    assert len(set(documented)) == len(documented)
    seen = set()
    for est in _fits(name):
        attrs = _fitted_attributes(est)
        assert attrs <= set(documented), f"undocumented fitted attributes: {sorted(attrs - set(documented))}"
        seen |= attrs
    try:
        import pandas  # noqa: F401
    except ImportError:
        seen.add("feature_names_in_")
    assert set(documented) <= seen, f"documented but never set: {sorted(set(documented) - seen)}"


# ------------------------------------------------------------------------- 4. Examples

def _doctests(path):
    obj = _load(path)
    finder = doctest.DocTestFinder(recurse=False, exclude_empty=True)
    return finder.find(obj, path, globs={})


@pytest.mark.parametrize("path", PUBLIC)
def test_examples_run(path):
    if path.endswith("load_svmlight_shards"):
        pytest.importorskip("distributed")
    tests = _doctests(path)
    assert tests and tests[0].examples, f"{path} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)    # examples converge
        for test in tests:
            runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)
