"""Helpers shared by the estimators, I/O and the CLI (numpy and scipy only): column matching,
class weights, seeds, atomic file writing, memory checks."""
import numbers
import os
import re
import shutil

import numpy as np
import scipy.sparse as sp


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


INTERRUPTED = 130     # the shell's exit status for a process stopped by SIGINT


class UsageError(Exception):
    """A command line the command cannot run: one line, then the hint to its -h."""


def run_command(name, main, argv, usage):
    """A command line's exit status, with the conventions every command shares: no arguments
    print the usage on stdout (1, as LIBLINEAR's train); -h / --help print it and --version the
    version (0); a UsageError is one line and a hint on stderr (1); Ctrl-C is one line
    "{name}: interrupted" on stderr and INTERRUPTED. Otherwise main(argv) (sys.argv[1:] when argv
    is None)."""
    import sys
    argv = sys.argv[1:] if argv is None else list(argv)
    text = usage if isinstance(usage, str) else None      # (usage: a text, or a function making it)
    if not argv:
        sys.stdout.write(text or usage())
        return 1
    if "-h" in argv or "--help" in argv:
        sys.stdout.write(text or usage())
        return 0
    if "--version" in argv:
        from . import __version__
        sys.stdout.write(f"{name} (ssvmlinear) {__version__}\n")
        return 0
    try:
        return main(argv)
    except UsageError as e:
        sys.stderr.write(f"{name}: {e}\nTry '{name} -h' for more information.\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{name}: interrupted\n")
        return INTERRUPTED
