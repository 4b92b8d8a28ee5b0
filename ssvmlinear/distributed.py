"""Training past one machine: fixed shards of examples kept on the workers of a Dask cluster.

With a `distributed.Client` connected and `joblib.parallel_config(backend="dask")` active, `fit`
runs its solver's passes on the cluster (`active_client()`; without one nothing changes). Each
shard (parallel.shard_bounds) is one Dask actor holding its data and solver state for the length
of a fit; afterwards only weight vectors travel. The one-slack cutting plane sums the shards'
chunks in order, so its model equals the single-process one bit for bit; SDM, LSE-SDCD and GDMM
run CoCoA+ (solvers/cocoa.py) with the single-process stopping rules; prediction sends the shards and w once. load_svmlight_shards parses (or maps)
the data on the workers into ShardedData, which the estimators' fit and predict take. Warm starts
are not kept on the cluster.
"""
import os

import numpy as np

from .parallel import predict_structure, shard_bounds


# ---------------------------------------------------------------------------- the switch

def active_client():
    """The dask.distributed Client of an active joblib "dask" backend, else None (also inside a
    task on a worker, where joblib keeps the backend active for nested calls)."""
    try:
        from joblib.parallel import get_active_backend
    except ImportError:      # pragma: no cover
        return None
    backend, _ = get_active_backend()
    if type(backend).__name__ != "DaskDistributedBackend":
        return None
    from distributed import get_worker
    try:
        get_worker()
        return None     # a task on a worker (a cross-validation fold): it trains where it runs
    except ValueError:
        return getattr(backend, "client", None)


def n_workers(client):
    return max(1, len(client.scheduler_info()["workers"]))


class ClusterShards:
    """One actor per shard, on the cluster's workers in turn (or on `workers[k]`), for the length
    of a fit.

    `make(*args)` builds a shard's actor on its worker; args_list holds each shard's arguments
    (large ones -- its data -- are scattered straight to the worker first; futures of data
    already there are passed as they are). call(method, *args)
    runs the method on every shard concurrently and returns the results in shard order.
    bytes_sent / bytes_received count the numpy arrays that travel in calls (not the data)."""

    def __init__(self, client, make, args_list, workers=None):
        from distributed import Future
        self.client = client
        if workers is None:
            available = sorted(client.scheduler_info()["workers"])
            workers = [available[k % len(available)] for k in range(len(args_list))]
        futures = []
        for k, args in enumerate(args_list):
            where = [workers[k]]
            args = [client.scatter(a, workers=where, direct=True) if _is_large(a) and not isinstance(a, Future)
                    else a for a in args]
            futures.append(client.submit(make, *args, actor=True, workers=where, pure=False,
                                         allow_other_workers=False))
        self.actors = [f.result() for f in futures]
        self._futures = futures
        self.bytes_sent = self.bytes_received = 0

    def __len__(self):
        return len(self.actors)

    def call(self, method, *args):
        self.bytes_sent += len(self.actors) * _nbytes(args)
        pending = [getattr(a, method)(*args) for a in self.actors]
        out = [p.result() for p in pending]
        self.bytes_received += sum(_nbytes(o) for o in out)
        return out

    def call_one(self, k, method, *args):
        self.bytes_sent += _nbytes(args)
        out = getattr(self.actors[k], method)(*args).result()
        self.bytes_received += _nbytes(out)
        return out

    def close(self):
        self.actors = []
        for f in self._futures:
            f.release()
        self._futures = []


def _is_large(obj):
    """Data to scatter before a shard's actor is built (small arguments travel with the task; a
    solver object too: scattered, equal solvers would share a content-hashed key that one fit's
    release can cancel under the next fit)."""
    small = isinstance(obj, (int, float, str, bool, type(None), tuple)) or hasattr(obj, "get_params")
    return not small and not (isinstance(obj, np.ndarray) and obj.nbytes < 1 << 16)


def _nbytes(obj):
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(o) for o in obj)
    return 0


# ---------------------------------------------------------------------------- cutting plane

class OneSlackShard:
    """A shard's part of the one-slack cutting plane, on a worker: the in-process oracle's chunks
    that fall in [lo, hi), with their label caches (or the surrogate pass's chunks)."""

    def __init__(self, structure, Cs, chunk_bounds, lse, cache_size, exact_violators, surrogate=None):
        from ._kernels.cuttingplane import OneSlackOracle, SurrogatePass
        self.n_weights = structure.n_weights
        self.n = structure.n_examples
        self.label_lengths = np.diff(np.asarray(structure.label_offsets(), dtype=np.int64))
        self.surrogate = surrogate is not None
        if self.surrogate:
            self.orc = SurrogatePass(structure, Cs, chunk_bounds, *surrogate)
        else:
            self.orc = OneSlackOracle(structure, Cs, lse, cache_size, exact_violators, chunk_bounds)

    def run_pass(self, w, use_oracle, rebuild):
        if self.surrogate:
            self.orc.run_pass(w)
        else:
            self.orc.run_pass(w, use_oracle, rebuild)

    def add_chunks(self, a, b, hsum, calls):
        """The running sum continued over this shard's chunks (a None: start from zeros)."""
        if a is None:
            a = np.zeros(self.n_weights)
        b, hsum, calls = self.orc.add_chunks(a, b, hsum, calls)
        return a, b, hsum, calls

    def line_pass(self, w, d, t_max):
        self.orc.line_pass(w, d, t_max)

    def lines(self):
        return self.orc.lines()

    def set_caches(self, state):
        self.orc.set_caches(state)

    def get_caches(self):
        if self.surrogate:
            return dict(sizes=np.zeros(0, dtype=np.int64), labels=np.zeros(0, dtype=np.int32), loss=np.zeros(0))
        return self.orc.get_caches()

    def cache_sizes(self):
        return np.zeros(self.n, dtype=np.int64) if self.surrogate else self.orc.cache_sizes()

    def get_label_lengths(self):
        return self.label_lengths


class ClusterOneSlackOracle:
    """OneSlackOracle's interface (run_pass, collect, cache_pass, caches) over shards on a cluster;
    the chunks are the in-process oracle's (`bounds`), a shard holds consecutive chunks."""

    def __init__(self, client, structure, Cs, lse, cache_size, exact_violators, bounds, surrogate=None,
                 n_shards=None):
        n_chunks = len(bounds) - 1
        self.n_weights = structure.n_weights
        self.n = structure.n_examples
        if isinstance(structure, ShardedStructure):
            # the shards are where the data was parsed; each cuts its rows into its share of chunks
            self.ranges = structure.shard_ranges()
            per = -(-n_chunks // len(self.ranges))
            args = [(st, c, shard_bounds(hi - lo, per), lse, cache_size, exact_violators, surrogate)
                    for st, c, (lo, hi) in zip(structure.structures, structure.Cs, self.ranges)]
            self.shards = ClusterShards(client, OneSlackShard, args, structure.workers)
            self._label_len = np.concatenate(self.shards.call("get_label_lengths"))
            return
        k = min(n_shards or n_workers(client), n_chunks)
        cuts = np.linspace(0, n_chunks, k + 1).astype(np.int64)     # chunk index of each shard's start
        self.ranges = [(int(bounds[cuts[s]]), int(bounds[cuts[s + 1]])) for s in range(k)]
        args = []
        for s, (lo, hi) in enumerate(self.ranges):
            local = np.asarray(bounds[cuts[s]:cuts[s + 1] + 1], dtype=np.int64) - lo
            args.append((structure.subset(lo, hi), np.ascontiguousarray(Cs[lo:hi]), local, lse, cache_size,
                         exact_violators, surrogate))
        self.shards = ClusterShards(client, OneSlackShard, args)
        self._label_len = np.diff(np.asarray(structure.label_offsets(), dtype=np.int64))

    def run_pass(self, w, use_oracle, rebuild=False):
        self.shards.call("run_pass", w, use_oracle, rebuild)

    def collect(self, a):
        """The shards' chunks summed in order with one running sum (shard 0 starts it from 0)."""
        run = (None, 0.0, 0.0, 0)
        for s in range(len(self.shards)):
            run = self.shards.call_one(s, "add_chunks", *run)
        a[:] = run[0]
        return run[1], run[2], run[3]

    def cache_pass(self, w, a):
        self.run_pass(w, False, False)
        return self.collect(a)

    def line_pass(self, w, d, t_max):
        self.shards.call("line_pass", w, d, t_max)

    def lines(self):
        """The shards' lines() joined in shard order: the in-process arrays."""
        parts = self.shards.call("lines")
        return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))

    def run(self, w, a):
        """The surrogate pass's interface (SurrogatePass.run)."""
        self.run_pass(w, True, False)
        return self.collect(a)

    def set_caches(self, state):
        sizes = np.asarray(state["sizes"], dtype=np.int64)
        label_len = self._label_len
        starts = np.concatenate([[0], np.cumsum(sizes * label_len)])
        loss_starts = np.concatenate([[0], np.cumsum(sizes)])
        parts = [dict(sizes=sizes[lo:hi], labels=np.asarray(state["labels"])[starts[lo]:starts[hi]],
                      loss=np.asarray(state["loss"])[loss_starts[lo]:loss_starts[hi]])
                 for lo, hi in self.ranges]
        for s, part in enumerate(parts):
            self.shards.call_one(s, "set_caches", part)

    def get_caches(self):
        parts = self.shards.call("get_caches")
        return dict(sizes=np.concatenate([p["sizes"] for p in parts]),
                    labels=np.concatenate([p["labels"] for p in parts]),
                    loss=np.concatenate([p["loss"] for p in parts]))

    def cache_sizes(self):
        return np.concatenate(self.shards.call("cache_sizes"))

    def close(self):
        self.shards.close()


# ---------------------------------------------------------------------------- prediction

def _predict_part(structure, w):
    return predict_structure(structure, w, n_jobs=1)


def decode_all(structure, w, n_jobs=None):
    """Flat predicted label indices of every example of a compiled structure: on the workers of the
    active Dask cluster when there is one (joblib's dask backend), else by n_jobs threads here."""
    client = active_client()
    if client is not None:
        return predict_on_cluster(client, structure, w)
    return predict_structure(structure, w, n_jobs)


def predict_on_cluster(client, structure, w, n_shards=None):
    """predict_structure's labels with the shards' oracles on the cluster (w broadcast once)."""
    n = structure.n_examples
    bounds = shard_bounds(n, n_shards or n_workers(client))
    w_f = client.scatter(np.ascontiguousarray(w, dtype=np.float64), broadcast=True)
    futures = [client.submit(_predict_part, client.scatter(structure.subset(int(bounds[k]), int(bounds[k + 1]))),
                             w_f, pure=False) for k in range(len(bounds) - 1)]
    return np.concatenate([f.result() for f in futures]) if futures else np.zeros(0, dtype=np.int32)


# ---------------------------------------------------------------------------- data on the workers
# (the byte-range and block parsing is io.py's: _shard_start, _parse_range)

def _parse_shard(path, k, n_shards, kind, zero_based):
    """On a worker: parse shard k's lines of the (uncompressed) svmlight file `path`."""
    import mmap
    from .io import _parse_range, _shard_start
    with open(path, "rb") as fh:
        head = fh.read(3)
        if head[:2] == b"\x1f\x8b" or head == b"BZh":
            raise ValueError(f"{path}: compressed; load_svmlight_shards parses byte ranges of an "
                             f"uncompressed file (decompress it, or use ssvm-convert's .ssvmdata)")
        if os.fstat(fh.fileno()).st_size == 0:
            raise ValueError(f"{path}: empty file")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            sequence = kind == "sequence"
            s = _shard_start(buf, k, n_shards, sequence)
            e = _shard_start(buf, k + 1, n_shards, sequence)
            fd = fh.fileno()
            parts = _parse_range(buf, s, e, kind, zero_based, path, read=lambda at, size: os.pread(fd, size, at))
    return dict(X=parts[0], y=parts[1], lengths=parts[2] if len(parts) == 3 else None, byte_range=(s, e))


def _cache_shard(path, k, n_shards, kind):
    """On a worker: shard k of the .ssvmdata folder `path`, memory-mapped."""
    from .datacache import load_ssvmdata
    import scipy.sparse as sp
    parts = load_ssvmdata(path, part=(k, n_shards), by_sequence=kind == "sequence")
    if (kind == "multilabel") != sp.issparse(parts[1]):
        raise ValueError(f"{path}: holds {'multi-label' if sp.issparse(parts[1]) else 'single-label'} data; "
                         f"load_svmlight_shards was asked for kind={kind!r}")
    return dict(X=parts[0], y=parts[1], lengths=parts[2] if len(parts) == 3 else None, byte_range=None)


def _summary(part):
    """What the client learns of a shard: sizes, width, labels (multi-label: the label columns)
    and their counts."""
    import scipy.sparse as sp
    X, y = part["X"], part["y"]
    if sp.issparse(y):
        classes, counts = np.arange(y.shape[1]), np.asarray(y.sum(axis=0)).ravel().astype(np.int64)
    else:
        classes, counts = np.unique(y, return_counts=True)
    return dict(n=int(X.shape[0]), n_examples=int(X.shape[0] if part["lengths"] is None else part["lengths"].shape[0]),
                width=int(X.shape[1]), classes=classes, counts=counts,
                bytes=X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)


class ShardedData:
    """Training data held on the workers of a Dask cluster (load_svmlight_shards): one future per
    shard (its CSR rows and labels, on the worker that parsed them) and what the client needs to
    know of them: rows per shard, n_features, the classes and their counts. Estimators' fit and
    predict take it in place of (X, y)."""

    def __init__(self, client, futures, workers, summaries, n_features=None, kind="multiclass"):
        self.client = client
        self.kind = kind
        self.futures = futures
        self.workers = workers
        self.n_rows = [s["n"] for s in summaries]
        self.n_samples = int(sum(self.n_rows))
        self.n_examples = [s["n_examples"] for s in summaries]      # (sequences: per shard)
        width = max(s["width"] for s in summaries)
        if n_features is not None and width > n_features:
            raise ValueError(f"the shards have {width} columns, beyond n_features = {n_features}")
        self.n_features = int(n_features if n_features is not None else width)
        self.classes = np.unique(np.concatenate([s["classes"] for s in summaries]))
        counts = np.zeros(self.classes.shape[0], dtype=np.int64)
        for s in summaries:
            counts[np.searchsorted(self.classes, s["classes"])] += s["counts"]
        self.class_counts = counts
        self.csr_bytes = int(sum(s["bytes"] for s in summaries))

    def map(self, func, *args):
        """func(part, *args) on every shard where it lives; the futures, in shard order."""
        return [self.client.submit(func, f, *args, workers=[w], allow_other_workers=False, pure=False)
                for f, w in zip(self.futures, self.workers)]

    def labels(self):
        """The training labels, gathered (n values; multi-label: the indicator rows)."""
        import scipy.sparse as sp
        parts = self.client.gather(self.map(_labels_of))
        if sp.issparse(parts[0]):
            width = max(p.shape[1] for p in parts)
            return sp.vstack([sp.csr_matrix((p.data, p.indices, p.indptr), shape=(p.shape[0], width))
                              for p in parts]).tocsr()
        return np.concatenate(parts)


def _labels_of(part):
    return part["y"]


def load_svmlight_shards(client, path, n_shards=None, kind="multiclass", zero_based=False, n_features=None):
    """Load an svmlight file onto the workers of a Dask cluster, in shards that stay there.

    Shard k (k/n_shards of the bytes, moved to a line start, and for kind="sequence" to a change
    of qid) is parsed on worker k mod (number of workers) and kept there; only its size and
    labels' summary reach the client. The estimators' fit and predict take the result in place
    of (X, y): MulticlassSSVM's, ChainSSVM's (kind="sequence") and MultiLabelSSVM's
    (kind="multilabel"); training then runs where the shards live.

    Parameters
    ----------
    client : distributed.Client
        The client of the cluster.
    path : str or path-like
        An uncompressed svmlight file every worker can read, or a ``.ssvmdata`` folder written
        by ssvm-convert on a file system every worker sees: then shard k is the k-th of
        n_shards equal row ranges (kind="sequence": of the sequences), which its worker maps
        from the folder without parsing.
    n_shards : int or None, default=None
        The number of shards; None: the number of workers.
    kind : {'multiclass', 'sequence', 'multilabel'}, default='multiclass'
        The file's label kind (as load_svmlight_file's).
    zero_based : bool, default=False
        Whether feature indices in the file are 0-based.
    n_features : int or None, default=None
        The number of features; None: the largest index of the shards + 1.

    Returns
    -------
    ShardedData
        The shards (futures on the workers) with their sizes (n_samples, n_features), the
        classes and their counts.

    Raises
    ------
    ValueError
        For an unknown kind, or a malformed file (naming the file and its line).
    FileNotFoundError
        When path is neither a file nor a ``.ssvmdata`` folder.

    See Also
    --------
    ssvmlinear.load_svmlight_file : Load a file into this process.

    Examples
    --------
    >>> import os
    >>> import tempfile
    >>> import numpy as np
    >>> from distributed import Client
    >>> from ssvmlinear import MulticlassSSVM, dump_svmlight_file
    >>> from ssvmlinear.distributed import load_svmlight_shards
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [-1.0, -1.0], [-0.9, -1.1]])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "train.svm")
    ...     dump_svmlight_file(X, np.array([0, 0, 1, 1, 2, 2]), path)
    ...     with Client(processes=False, n_workers=1, dashboard_address=None) as client:
    ...         data = load_svmlight_shards(client, path, n_shards=2)
    ...         clf = MulticlassSSVM(C=10.0).fit(data)
    ...         predicted = clf.predict(data)
    >>> data.n_samples, data.n_features, data.classes
    (6, 2, array([0., 1., 2.]))
    >>> predicted
    array([0., 0., 1., 1., 2., 2.])
    """
    from .datacache import is_ssvmdata
    if kind not in ("multiclass", "sequence", "multilabel"):
        raise ValueError(f"kind must be 'multiclass', 'sequence' or 'multilabel'; got {kind!r}")
    path = os.path.abspath(os.fspath(path))
    cached = is_ssvmdata(path)
    if not (cached or os.path.isfile(path)):
        raise FileNotFoundError(path)
    workers = sorted(client.scheduler_info()["workers"])
    k = int(n_shards or len(workers))
    placed = [workers[s % len(workers)] for s in range(k)]
    futures = [client.submit(*((_cache_shard, path, s, k, kind) if cached else
                               (_parse_shard, path, s, k, kind, zero_based)),
                             workers=[placed[s]], allow_other_workers=False, pure=False) for s in range(k)]
    summaries = client.gather([client.submit(_summary, f, workers=[w], pure=False) for f, w in zip(futures, placed)])
    keep = [s for s in range(k) if summaries[s]["n"] > 0]     # (a tiny file: empty shards)
    return ShardedData(client, [futures[s] for s in keep], [placed[s] for s in keep],
                       [summaries[s] for s in keep], n_features, kind)


def check_sharded_fit(est, data, kind, sample_weight):
    """What a fit on sharded data needs: the shards' kind, a solver that runs on a cluster (its
    `distributed`: one-slack shards or CoCoA+)."""
    if data.kind != kind:
        raise ValueError(f"{type(est).__name__} trains on {kind} data; the shards were loaded with kind={data.kind!r}")
    if sample_weight is not None:
        raise ValueError("sample_weight with sharded data: not supported (MulticlassSSVM's class_weight is)")
    solver = est._solver()
    if solver.distributed is None:
        from .registry import SOLVERS
        able = [name for name, spec in SOLVERS.items() if spec.solver_class().distributed is not None]
        raise ValueError(f"solver={solver.name!r} does not run on sharded data; use "
                         + ", ".join(repr(s) for s in able))


class ShardedStructure:
    """The solvers' view of a structure whose examples live on the workers: per shard a future of
    its compiled structure and of its C_i (built where the shard lives)."""

    def __init__(self, data, structures, Cs, n_weights):
        self.client = data.client
        self.workers = data.workers
        self.structures = structures
        self.Cs = Cs
        self.n_examples = int(sum(data.n_examples))
        self.n_weights = int(n_weights)
        self.shard_examples = data.n_examples
        self.Cs_sum = float(sum(self.client.gather([self.client.submit(np.sum, c, workers=[w])
                                                    for c, w in zip(Cs, self.workers)])))

    def check_implemented(self, name):
        pass

    def shard_ranges(self):
        ends = np.cumsum([0] + list(self.shard_examples))
        return [(int(ends[k]), int(ends[k + 1])) for k in range(len(self.shard_examples))]


def cluster_of(structure):
    """The client a solver's passes run on: a ShardedStructure's, or the active joblib dask
    backend's; None: in this process."""
    return structure.client if isinstance(structure, ShardedStructure) else active_client()


def widened(X, n_features):
    """A shard's CSR with n_features columns (its own width is its largest index)."""
    import scipy.sparse as sp
    if X.shape[1] == n_features:
        return X
    if X.shape[1] > n_features:     # a test shard wider than the model: LIBLINEAR drops the extra features
        X = X[:, :n_features]
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
