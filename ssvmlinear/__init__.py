"""ssvmlinear: fast linear structural SVMs on large sparse data, in the LIBLINEAR style."""
from .exceptions import ConvergenceWarning
from .io import load_svmlight_file, dump_svmlight_file
from .model_io import save_model, load_model
from .multiclass import MulticlassSSVM
from .chain import ChainSSVM
from .multilabel import MultiLabelSSVM
from . import metrics
from .metrics import subset_accuracy, hamming_loss, micro_f1, macro_f1, example_accuracy

__version__ = "0.1.0"
__all__ = ["MulticlassSSVM", "ChainSSVM", "MultiLabelSSVM", "load_svmlight_file", "dump_svmlight_file",
           "save_model", "load_model", "ConvergenceWarning", "metrics", "subset_accuracy", "hamming_loss",
           "micro_f1", "macro_f1", "example_accuracy", "__version__"]
