"""Binary data sets: an svmlight file parsed once into a folder of .npy arrays that later runs
(and workers) read by memory map, so repeated runs skip parsing and training can use data larger
than RAM (the operating system pages the arrays in as the passes read them).

A `.ssvmdata` folder holds meta.json ({"format": 1, "kind", "shape", ...}), X as data.npy
(float64), indices.npy (int32), indptr.npy (int32, or int64 past 2^31 nonzeros), and the labels:
y.npy (multiclass, sequence), lengths.npy (sequence), or y_indices.npy / y_indptr.npy and
"n_labels" (multi-label: column j of the indicator is label value j, as load_svmlight_file gives).
Written to a temporary folder and renamed. Read-only memory maps; the sizes in meta.json are
checked against the arrays' own headers before anything is used.

    ssvm-convert data.svm data.ssvmdata      # then: ssvm-train ... data.ssvmdata model
"""
import json
import os
import shutil
import sys

import numpy as np
import scipy.sparse as sp

from .utils import UsageError, remove_stale_temporaries, run_command

FORMAT = 1
SUFFIX = ".ssvmdata"
FINITE_CHUNK = 1 << 22    # values checked at a time: a bounded temporary on data larger than memory


def is_ssvmdata(path):
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "meta.json"))


def save_ssvmdata(path, X, y, lengths=None):
    """Write X (CSR) and its labels (as load_svmlight_file returns them) to the folder `path`."""
    X = sp.csr_matrix(X)
    X.sort_indices()
    meta = {"format": FORMAT, "shape": [int(X.shape[0]), int(X.shape[1])], "nnz": int(X.nnz)}
    arrays = {"data": X.data.astype(np.float64, copy=False), "indices": X.indices.astype(np.int32, copy=False),
              "indptr": X.indptr.astype(np.int32 if X.nnz < 2**31 else np.int64, copy=False)}
    if sp.issparse(y):
        Y = sp.csr_matrix(y)
        meta.update(kind="multilabel", n_labels=int(Y.shape[1]))
        arrays.update(y_indices=Y.indices.astype(np.int64), y_indptr=Y.indptr.astype(np.int64))
    else:
        arrays["y"] = np.asarray(y, dtype=np.float64)
        meta["kind"] = "sequence" if lengths is not None else "multiclass"
        if lengths is not None:
            arrays["lengths"] = np.asarray(lengths, dtype=np.int64)
    parent, base = os.path.split(os.path.abspath(path))
    remove_stale_temporaries(parent, base)
    tmp = os.path.join(parent, f".{base}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        os.makedirs(tmp)
    except OSError as e:
        raise OSError(f"{path}: cannot write there ({e.strerror})") from None
    try:
        for name, a in arrays.items():
            np.save(os.path.join(tmp, name + ".npy"), a)
        with open(os.path.join(tmp, "meta.json"), "w") as fh:
            json.dump(meta, fh)
        if os.path.isdir(path):
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError):
            raise OSError(f"{path}: cannot write ({e.strerror or e})") from None
        raise


def load_ssvmdata(path, part=None, by_sequence=False):
    """(X, y) or (X, y, lengths) as load_svmlight_file returns them, X's arrays memory-mapped
    read-only; ValueError naming the folder and the file on anything inconsistent.

    The folder is untrusted input: meta.json's values and every array (dtype, shape, index
    pointers rising from 0 to their array's length, column and label indices in range, lengths
    splitting the rows, finite labels) are checked before anything is built on them.

    part=(k, n_parts): only part k of n_parts equal row ranges (by_sequence: of the sequences),
    checked and mapped alone -- a Dask worker's shard (load_svmlight_shards), read without parsing
    and without touching the other parts' pages."""
    def fail(what):
        raise ValueError(f"{path}: {what}")
    try:
        with open(os.path.join(path, "meta.json"), "rb") as fh:
            meta = json.loads(fh.read(1 << 20).decode("utf-8"))
    except OSError as e:
        raise OSError(f"{path}: meta.json unreadable ({e.strerror or e})") from None
    except (ValueError, RecursionError) as e:    # JSONDecodeError and UnicodeDecodeError are ValueErrors
        fail(f"meta.json is not valid JSON ({type(e).__name__})")
    if not isinstance(meta, dict):
        fail(f"meta.json holds a {type(meta).__name__}, not an object")
    if meta.get("format") != FORMAT or isinstance(meta.get("format"), bool):
        fail(f"meta.json: unsupported format {str(meta.get('format'))[:40]} (this version reads {FORMAT})")

    def count(key, value, limit=2**62):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < limit:
            fail(f"meta.json: {key} must be an integer in 0..{limit - 1}, not {str(value)[:40]!r}")
        return value
    shape = meta.get("shape")
    if not isinstance(shape, list) or len(shape) != 2:
        fail(f"meta.json: shape must be a list [rows, columns], not {str(shape)[:40]!r}")
    n = count("shape[0]", shape[0])
    d = count("shape[1]", shape[1], 2**31 - 1)
    nnz = count("nnz", meta.get("nnz"))
    kind = meta.get("kind")
    if kind not in ("multiclass", "multilabel", "sequence"):
        fail(f"meta.json: unknown kind {str(kind)[:40]!r}")
    if by_sequence and kind != "sequence":
        fail(f"holds {kind} data, not sequences")

    def arr(name, length, dtypes):
        """The array of name.npy, memory-mapped; length None: any 1-D length."""
        f = os.path.join(path, name + ".npy")
        try:
            a = np.load(f, mmap_mode="r", allow_pickle=False)
        except OSError as e:
            raise OSError(f"{path}: {name}.npy unreadable ({e.strerror or e})") from None
        except Exception as e:   # a damaged header: ValueError, SyntaxError, tokenize errors, ...
            fail(f"{name}.npy is not a readable .npy array ({type(e).__name__})")
        if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype not in [np.dtype(t) for t in dtypes] \
                or (length is not None and a.shape[0] != length):
            fail(f"{name}.npy holds {getattr(a, 'shape', '?')} {getattr(a, 'dtype', '?')}, meta.json implies "
                 f"({'any' if length is None else length},) {'/'.join(map(str, dtypes))}")
        return a

    def pointers(name, a, total):
        if a[0] != 0 or a[-1] != total or (a.shape[0] > 1 and np.any(a[1:] < a[:-1])):
            fail(f"{name}.npy does not rise from 0 to {total}")

    def in_range(name, a, limit, what):
        if a.shape[0] and (a.min() < 0 or a.max() >= limit):
            fail(f"{name}.npy holds {what} outside 0..{limit - 1}")

    data = arr("data", nnz, ["float64"])
    indices = arr("indices", nnz, ["int32"])
    indptr = arr("indptr", n + 1, ["int32", "int64"])
    pointers("indptr", indptr, nnz)
    lengths = None
    if kind == "sequence":
        lengths = np.array(arr("lengths", None, ["int64"]))
        # (bounded first, so that the sum cannot wrap around)
        if lengths.shape[0] > n or np.any(lengths < 1) or np.any(lengths > n) \
                or lengths.sum(dtype=np.float64) != n or int(lengths.sum()) != n:
            fail("lengths.npy does not split the rows into sequences")
    a, b = 0, n
    if part is not None:
        k, parts = part
        if not 0 <= k < parts:
            raise ValueError(f"part {k} of {parts}: need 0 <= k < n_parts")
        if by_sequence:
            s0, s1 = k * lengths.shape[0] // parts, (k + 1) * lengths.shape[0] // parts
            a, b = int(lengths[:s0].sum()), int(lengths[:s1].sum())
            lengths = np.array(lengths[s0:s1])
        else:
            a, b = k * n // parts, (k + 1) * n // parts
            lengths = None
        s, e = int(indptr[a]), int(indptr[b])
        data, indices = data[s:e], indices[s:e]
        indptr = np.asarray(indptr[a:b + 1]) - indptr.dtype.type(s)
    in_range("indices", indices, d, "a column")
    with np.errstate(all="ignore"):     # inf - inf, or large values overflowing the sum: look closer
        suspect = data.shape[0] and not np.isfinite(data.sum())
    if suspect:
        for s in range(0, data.shape[0], FINITE_CHUNK):
            bad = np.flatnonzero(~np.isfinite(data[s:s + FINITE_CHUNK]))
            if bad.size:
                fail(f"data.npy holds a non-finite value (entry {s + int(bad[0])})")
    X = sp.csr_matrix((data, indices, indptr), shape=(b - a, d), copy=False)
    if kind == "multilabel":
        L = count("n_labels", meta.get("n_labels"), 2**31 - 1)
        yi = arr("y_indptr", n + 1, ["int64"])
        yind = arr("y_indices", None, ["int64"])
        pointers("y_indptr", yi, yind.shape[0])
        yind = yind[yi[a]:yi[b]]
        yi = np.asarray(yi[a:b + 1]) - yi[a]
        in_range("y_indices", yind, L, "a label")
        Y = sp.csr_matrix((np.ones(yind.shape[0], dtype=np.int32), np.asarray(yind), yi), shape=(b - a, L))
        return X, Y
    y = np.asarray(arr("y", n, ["float64"])[a:b])
    if not np.all(np.isfinite(y)):
        fail(f"y.npy holds a non-finite label at row {a + int(np.flatnonzero(~np.isfinite(y))[0])}")
    return (X, y) if lengths is None else (X, y, lengths)


def load_data(path, **kw):
    """A .ssvmdata folder (memory-mapped) or an svmlight file (load_svmlight_file's kw)."""
    if is_ssvmdata(path):
        out = load_ssvmdata(path)
        kind = kw.get("kind", "auto")
        if kind == "multiclass" and len(out) == 3:
            return out[0], out[1]
        if kind not in ("auto", _kind_of(out)) and not (kind == "multiclass" and len(out) == 2):
            raise ValueError(f"{path}: holds {_kind_of(out)} data, expected {kind}")
        n_features = kw.get("n_features")
        if n_features is not None and out[0].shape[1] > n_features:
            raise ValueError(f"{path}: {out[0].shape[1]} columns, beyond n_features={n_features}")
        return out
    from .io import load_svmlight_file
    return load_svmlight_file(path, **kw)


def _kind_of(out):
    return "sequence" if len(out) == 3 else ("multilabel" if sp.issparse(out[1]) else "multiclass")


USAGE = """\
Usage: ssvm-convert [options] svmlight_file output.ssvmdata
options:
-t kind : auto (default: qid: -> sequence, l1,l2 -> multilabel), multiclass, multilabel, sequence
-q : quiet mode
-h, --help : print this text; --version : print the version
Parses the file once into a folder of .npy arrays that ssvm-train, ssvm-predict and
ssvmlinear.datacache.load_ssvmdata read by memory map (no parsing; data larger than memory).
Feature indices are 1-based in the input.
"""


def convert_main(argv=None):
    """ssvm-convert; returns the exit status (0, 1 on an error, 130 when interrupted)."""
    return run_command("ssvm-convert", _convert, argv, USAGE)


def _convert(argv):
    from .io import load_svmlight_file
    kind, quiet, rest = "auto", False, []
    i = 0
    while i < len(argv):
        if argv[i] == "-t":
            if i + 1 == len(argv):
                raise UsageError("option -t needs a value")
            kind, i = argv[i + 1], i + 2
            if kind not in ("auto", "multiclass", "multilabel", "sequence"):
                raise UsageError(f"unknown kind -t {kind}; expected auto, multiclass, multilabel or sequence")
        elif argv[i] == "-q":
            quiet, i = True, i + 1
        elif argv[i].startswith("-") and len(argv[i]) > 1 and not rest:
            raise UsageError(f"unknown option: {argv[i]}")
        else:
            rest.append(argv[i])
            i += 1
    if len(rest) != 2:
        raise UsageError("expected svmlight_file output.ssvmdata")
    try:
        out = load_svmlight_file(rest[0], zero_based=False, kind=kind)
        save_ssvmdata(rest[1], *out)
    except (ValueError, OSError) as e:
        sys.stderr.write(f"ssvm-convert: error: {e}\n")
        return 1
    if not quiet:
        print(f"{rest[1]}: {out[0].shape[0]} rows, {out[0].shape[1]} columns, {out[0].nnz} nonzeros ({_kind_of(out)})")
    return 0
