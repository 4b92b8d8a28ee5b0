"""Input validation and file writing shared by the estimators, I/O and the CLI."""
import numbers
import os

import numpy as np
import scipy.sparse as sp


def check_csr(X, name="X"):
    """Return X as a CSR matrix with float64 data, int32 indices, sorted, no duplicates.

    Dense input is converted (the only densify-free path for dense data); sparse input is copied
    at most once, and only when its dtype, format or index order differs. X is never densified.
    """
    if sp.issparse(X):
        X = X.tocsr()
    else:
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {X.shape}")
        if not np.issubdtype(X.dtype, np.number) and X.dtype != bool:
            raise ValueError(f"{name} must be numeric; got dtype {X.dtype}")
        X = sp.csr_matrix(X.astype(np.float64, copy=False))
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    if X.shape[1] >= 2**31 - 1:
        raise ValueError(f"{name} has {X.shape[1]} columns; at most 2**31 - 2 are supported")
    if X.indices.dtype != np.int32:
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr), shape=X.shape)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()  # also sorts indices
    if X.nnz and not np.all(np.isfinite(X.data)):
        raise ValueError(f"{name} contains NaN or infinity")
    return X


def check_sample_weight(sample_weight, n):
    if sample_weight is None:
        return np.ones(n)
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.ndim == 0:
        return np.full(n, float(sw))
    if sw.shape != (n,):
        raise ValueError(f"sample_weight has shape {sw.shape}; expected ({n},)")
    if np.any(sw < 0) or not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight must be finite and non-negative")
    return sw


def class_weight_vector(class_weight, classes, y_idx):
    """Per-class weights as scikit-learn defines them ("balanced": n / (K * count))."""
    K = len(classes)
    if class_weight is None:
        return np.ones(K)
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(f"class_weight must be None, 'balanced' or a dict; got {class_weight!r}")
        counts = np.bincount(y_idx, minlength=K)
        return len(y_idx) / (K * np.maximum(counts, 1))
    if not isinstance(class_weight, dict):
        raise ValueError(f"class_weight must be None, 'balanced' or a dict; got {class_weight!r}")
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
    """Write bytes or text to `path` through a temporary file in the same folder and a rename, so
    that a reader never sees a half-written file (and an existing file survives a failure)."""
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    directory, base = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{base}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
