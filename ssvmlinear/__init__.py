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
    from .io import load_svmlight_file, dump_svmlight_file, load_crfsuite_file
    from .model_io import save_model, load_model
    from .hierarchy import Hierarchy, read_hierarchy
    from . import metrics
    from .metrics import subset_accuracy, hamming_loss, micro_f1, macro_f1, example_accuracy

    # The estimators (and scikit-learn under them) load on first use: `import ssvmlinear` and the
    # command lines stay quick.
    _ESTIMATORS = {"MulticlassSSVM": ".multiclass", "ChainSSVM": ".chain", "MultiLabelSSVM": ".multilabel",
                   "HierarchicalSSVM": ".hierarchical"}

    def __getattr__(name):
        if name in _ESTIMATORS:
            import importlib
            return getattr(importlib.import_module(_ESTIMATORS[name], __name__), name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def __dir__():
        return sorted(list(globals()) + list(_ESTIMATORS))

    from ._version import __version__
    __all__ = ["MulticlassSSVM", "ChainSSVM", "MultiLabelSSVM", "HierarchicalSSVM", "Hierarchy", "read_hierarchy",
               "load_svmlight_file", "dump_svmlight_file", "load_crfsuite_file",
               "save_model", "load_model", "ConvergenceWarning", "metrics", "subset_accuracy", "hamming_loss",
               "micro_f1", "macro_f1", "example_accuracy", "__version__"]
