"""Input validation and file writing shared by the estimators, I/O and the CLI."""
import numbers
import os
import re
import shutil

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array
from sklearn.utils.validation import validate_data


def check_csr(X, estimator=None, y="no_validation", reset=True):
    """X as the kernels' CSR: float64 data, int32 indices, sorted, no duplicates.

    Validated by scikit-learn (2-D, real, finite, at least one sample and one feature); with an
    estimator, through validate_data: n_features_in_ is set (reset=True, in fit) or checked
    (reset=False: predict refuses another number of columns), and a given y is checked with X
    (check_X_y: same length, a column vector warns). Returns X, or (X, y) when y is given.
    Dense input becomes CSR; sparse input is copied at most once, and only when its dtype,
    format or index order differs. X is never densified.
    """
    kw = dict(accept_sparse="csr", dtype=np.float64)
    with_y = not (isinstance(y, str) and y == "no_validation")
    if estimator is None:
        out = check_array(X, **kw)
    else:
        out = validate_data(estimator, X, y, reset=reset, **kw)
    X, y = out if with_y else (out, None)
    if not sp.issparse(X):
        X = sp.csr_matrix(X)
    if X.shape[1] >= 2**31 - 1:
        raise ValueError(f"X has {X.shape[1]} columns; at most 2**31 - 2 are supported")
    if X.indices.dtype != np.int32:
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr), shape=X.shape)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()  # also sorts indices
    return (X, y) if with_y else X


def check_class_labels(y):
    """scikit-learn's check_classification_targets, float labels first checked here: a value that
    is not an integer below 2**53 in magnitude (2.5, 1e300) is refused in one line naming it
    (scikit-learn's own check casts such values to int64, warning on overflow)."""
    from sklearn.utils.multiclass import check_classification_targets
    y = np.asarray(y)
    if y.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(y) & (np.abs(y) < 2.0**53) & (y == np.round(y))
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"Unknown label type: continuous (y[{i}] = {float(y[i])!r}): class labels must be "
                             "integers below 2**53 in magnitude, or strings")
    check_classification_targets(y)


def match_columns(X, n_features):
    """LIBLINEAR's convention for test files, whose width is their largest feature index: columns
    beyond the model's n_features are dropped (features never seen in training have zero weight),
    missing ones are zero. The estimators themselves refuse another width, as scikit-learn's do."""
    X = sp.csr_matrix(X) if not sp.issparse(X) else X.tocsr()
    if X.shape[1] > n_features:
        return X[:, :n_features]
    if X.shape[1] < n_features:
        return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    return X


def class_weight_vector(class_weight, classes, y_idx):
    """Per-class weights as scikit-learn defines them ("balanced": n / (K * count))."""
    K = len(classes)
    if class_weight is None:
        return np.ones(K)
    if class_weight == "balanced":  # the parameter's type is checked by the estimator's constraints
        counts = np.bincount(y_idx, minlength=K)
        return len(y_idx) / (K * np.maximum(counts, 1))
    weights = np.ones(K)
    index = {c: k for k, c in enumerate(classes.tolist())}
    for c, wgt in class_weight.items():
        if c not in index:
            raise ValueError(f"class_weight names class {c!r}, which is not in the training labels")
        if not np.isfinite(wgt) or wgt < 0:
            raise ValueError(f"class_weight for class {c!r} must be finite and >= 0; got {wgt!r}")
        weights[index[c]] = float(wgt)
    return weights


def check_random_seed(random_state):
    """A 64-bit seed for the kernels' per-call RNG from None, an int or a numpy Generator/RandomState."""
    if random_state is None:
        return 0
    if isinstance(random_state, numbers.Integral):
        return int(random_state) % 2**64
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    raise ValueError(f"random_state must be None, an int or a numpy random generator; got {random_state!r}")


def write_atomic(path, payload):
    """Write bytes, text or an iterable of text chunks to `path` through a temporary file in the
    same folder and a rename, so that a reader never sees a half-written file (and an existing file
    survives a failure). OSError names `path`, never the temporary; temporaries that killed writers
    of the same path left behind are removed first."""
    if isinstance(payload, (str, bytes)):
        payload = [payload]
    directory, base = os.path.split(os.path.abspath(path))
    remove_stale_temporaries(directory, base)
    tmp = os.path.join(directory, f".{base}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as e:
        raise OSError(f"{path}: cannot write there ({e.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in payload:
                fh.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OSError(f"{path}: cannot write ({e.strerror or e})") from None
        raise


def remove_stale_temporaries(directory, base):
    """Remove the temporaries ".{base}.{pid}[.{hex}].tmp" (write_atomic's files, save_ssvmdata's
    folders) in `directory` whose writer process no longer exists (it was killed mid-write)."""
    pattern = re.compile(re.escape(f".{base}.") + r"([0-9]+)(?:\.[0-9a-f]+)?\.tmp")
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return
    for name in names:
        m = pattern.fullmatch(name)
        if m is None or int(m.group(1)) == os.getpid() or _process_exists(int(m.group(1))):
            continue
        target = os.path.join(directory, name)
        try:
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target, ignore_errors=True)
            else:
                os.unlink(target)
        except OSError:
            pass


def _process_exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True      # another user's process (or undecidable): leave its file alone
    return True


def available_memory():
    """Bytes this process may still allocate: MemAvailable (Linux) or the free physical pages,
    capped by RLIMIT_AS when one is set; None when unknown."""
    avail = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            pass
    try:
        import resource
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit != resource.RLIM_INFINITY:
            avail = limit if avail is None else min(avail, limit)
    except (ImportError, ValueError, OSError):
        pass
    return avail


def check_memory(nbytes, what):
    """Fail in one line, before allocating, when `what` needs more memory than is available."""
    avail = available_memory()
    if avail is not None and nbytes > avail:
        raise ValueError(f"{what} needs {nbytes / 2**30:.3g} GiB; {avail / 2**30:.3g} GiB are available")
