"""ssvmlinear: fast linear structural SVMs on large sparse data, in the LIBLINEAR style."""
import importlib.machinery as _machinery
import os as _os
import sys as _sys


def _has_kernels(package_dir):
    """Whether the compiled kernels sit in `package_dir`/_kernels (an installed copy, or a source
    tree built in place by `pip install -e .`)."""
    try:
        names = _os.listdir(_os.path.join(package_dir, "_kernels"))
    except OSError:
        return False
    return any(name.endswith(tuple(_machinery.EXTENSION_SUFFIXES)) for name in names)


def _installed_copy(here):
    """Imported from the repository root after `pip install .`, Python finds the source tree first;
    its kernels are not compiled there. Return the folder of the installed copy on sys.path."""
    for entry in _sys.path:
        candidate = _os.path.join(_os.path.abspath(entry or _os.curdir), "ssvmlinear")
        if (_os.path.realpath(candidate) != _os.path.realpath(here)
                and _os.path.isfile(_os.path.join(candidate, "__init__.py")) and _has_kernels(candidate)):
            return candidate
    return None


_here = _os.path.dirname(_os.path.abspath(__file__))
_installed = None if _has_kernels(_here) else _installed_copy(_here)
if _installed is not None:
    # Defer to the installed copy, Python layer and kernels together (so they always match).
    import importlib.util as _util
    _spec = _util.spec_from_file_location(__name__, _os.path.join(_installed, "__init__.py"),
                                          submodule_search_locations=[_installed])
    _module = _util.module_from_spec(_spec)
    _sys.modules[__name__] = _module
    _spec.loader.exec_module(_module)
elif not _has_kernels(_here):
    raise ImportError(f"ssvmlinear: the compiled kernels are missing from {_here} (a source tree that was "
                      "not built) and no installed copy is on sys.path; run `pip install .` or `pip install -e .`")
else:
    from .exceptions import ConvergenceWarning

    # Everything else loads on first use: the data readers and model files bring numpy and
    # scipy.sparse, the estimators scikit-learn, and `import ssvmlinear` and the command lines
    # stay quick. Each public name maps to the module that defines it.
    _LAZY = {"MulticlassSSVM": ".multiclass", "ChainSSVM": ".chain", "MultiLabelSSVM": ".multilabel",
             "HierarchicalSSVM": ".hierarchical",
             "load_svmlight_file": ".io", "dump_svmlight_file": ".io", "load_crfsuite_file": ".io",
             "save_model": ".model_io", "load_model": ".model_io",
             "Hierarchy": ".hierarchy", "read_hierarchy": ".hierarchy",
             "subset_accuracy": ".metrics", "hamming_loss": ".metrics", "micro_f1": ".metrics",
             "macro_f1": ".metrics", "example_accuracy": ".metrics"}

    def __getattr__(name):
        import importlib
        if name in _LAZY:
            value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        elif name == "metrics":
            value = importlib.import_module(".metrics", __name__)
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value          # (later look-ups skip this function)
        return value

    def __dir__():
        return sorted(set(globals()) | set(_LAZY) | {"metrics"})

    from ._version import __version__
    __all__ = ["MulticlassSSVM", "ChainSSVM", "MultiLabelSSVM", "HierarchicalSSVM", "Hierarchy", "read_hierarchy",
               "load_svmlight_file", "dump_svmlight_file", "load_crfsuite_file",
               "save_model", "load_model", "ConvergenceWarning", "metrics", "subset_accuracy", "hamming_loss",
               "micro_f1", "macro_f1", "example_accuracy", "__version__"]
