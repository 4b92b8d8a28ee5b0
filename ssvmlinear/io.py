"""Reading and writing svmlight / libsvm files for the three structured label kinds.

Line format (1-based feature indices by default, ``#`` starts a comment)::

    multiclass   label f:v f:v ...             label: 3, -1, 2.5
    multilabel   l1,l2,... f:v ...             empty label set: the line starts with a feature
    sequence     tag qid:N f:v ...             one token per line; a sequence = a run of equal qid

Parsing is done by the compiled kernel ``ssvmlinear._kernels.svmlight`` in one nogil pass over the
whole (decompressed) file; this module turns its raw arrays into scipy CSR matrices and label
arrays and writes the error messages (``"{file}:{line}: {problem}"``, always ``ValueError``).
"""
import bz2
import gzip
import io
import os
import re
import stat
import zlib

import numpy as np
import scipy.sparse as sp

from .utils import write_atomic

from ._kernels import svmlight as _svmlight

__all__ = ["load_svmlight_file", "dump_svmlight_file"]

_KINDS = {"auto": 0, "multiclass": 1, "multilabel": 2, "sequence": 3}
_INT32_MAX = np.iinfo(np.int32).max
_MAX_LABEL = 2**31 - 2

# kernel error codes -> message templates ({tok} = offending token, {aux} = extra number)
_MESSAGES = {
    2: "bad label {tok}",
    3: "non-finite label {tok}",
    4: "missing label (line starts with {tok})",
    5: "expected a single label, got {tok}",
    6: "bad token {tok} (expected index:value)",
    7: "bad feature index in {tok}",
    8: "negative feature index in {tok}",
    9: "feature index 0 in {tok} but indices are one-based",
    10: "feature index too large in {tok} (at most {aux})",
    11: "feature indices must be strictly increasing: {tok} after index {aux}",
    12: "bad feature value in {tok}",
    13: "non-finite feature value in {tok}",
    14: "bad qid in {tok} (expected qid:<integer>)",
    15: "qid {tok} must directly follow the label",
    16: "missing qid (sequence files need qid:N on every line)",
}


# --------------------------------------------------------------------------------------- reading

class _BlocksDisagree(Exception):
    """The blocks of a kind="auto" parse saw different kinds (the whole-file parse decides)."""


def _line_start(buf, b):
    """The first byte of the line holding byte b - 1's successor: b itself when b starts a line."""
    if b <= 0:
        return 0
    k = buf.find(b"\n", b - 1)
    return len(buf) if k < 0 else k + 1


def _qid_of(buf, s):
    """The qid token of the line starting at s (None without one)."""
    e = buf.find(b"\n", s)
    fields = buf[s:e if e >= 0 else len(buf)].split()
    return fields[1] if len(fields) > 1 and fields[1].startswith(b"qid:") else None


def _shard_start(buf, k, n_shards, sequence, lo=0, hi=None):
    """Byte where part k of buf[lo:hi] starts: k/n_shards of it moved to the next line start, and
    for a sequence file on to the next change of qid (a sequence is never split). Part k's end is
    part k+1's start, computed the same way, so the parts cover every line once."""
    hi = len(buf) if hi is None else hi
    if k <= 0:
        return lo
    if k >= n_shards:
        return hi
    s = max(_line_start(buf, lo + (hi - lo) * k // n_shards), lo)
    if sequence:
        while s < hi:
            p = buf.rfind(b"\n", 0, s - 1) + 1            # the previous line's start
            if _qid_of(buf, p) != _qid_of(buf, s):
                break
            s = _line_start(buf, s + 1)
    return min(s, hi)


# Bytes of text parsed at once on a worker: the shard's CSR is filled block by block, so a
# worker holds its CSR plus one block's text and arrays, never the whole range's text.
PARSE_BLOCK = 1 << 25


def _scan(read, lo, hi):
    """(colons, newlines, whether b"qid:" occurs) in bytes lo..hi-1, read in blocks through
    read(offset, size): no page of the range stays mapped, no temporary of its size."""
    colons = newlines = 0
    has_qid = False
    for s in range(lo, hi, PARSE_BLOCK):
        chunk = read(s, min(hi, s + PARSE_BLOCK + 3) - s)        # 3 bytes of overlap for "qid:"
        body = chunk[:min(hi, s + PARSE_BLOCK) - s]
        colons += body.count(b":")
        newlines += body.count(b"\n")
        has_qid = has_qid or b"qid:" in chunk
    return colons, newlines, has_qid


def _parse_range(buf, lo, hi, kind, zero_based, path, n_features=None, dtype=np.float64, n_labels=None,
                 read=None):
    """buf[lo:hi] (whole lines) parsed in blocks of about PARSE_BLOCK bytes straight into CSR
    arrays sized by an upper bound (one colon per nonzero, one newline per row) and trimmed in
    place: the text is never held whole, nor the arrays twice. buf (bytes or an mmap) is only
    searched near block boundaries; the blocks are read through read(offset, size) (default
    slices of buf; a file: os.pread, so that no page stays mapped). Returns load_svmlight_file's
    tuple (kind "auto": the blocks' kinds, which must agree; a qid anywhere: _BlocksDisagree).
    Errors name `path` and the file's line."""
    if read is None:
        def read(s, size):
            return buf[s:s + size]
    sequence = kind == "sequence"
    n_blocks = max(1, -(-(hi - lo) // PARSE_BLOCK))
    cuts = [_shard_start(buf, j, n_blocks, sequence, lo, hi) for j in range(n_blocks + 1)]
    nnz_ub, rows_ub, has_qid = _scan(read, lo, hi)
    if kind == "auto" and has_qid:
        raise _BlocksDisagree()       # (a sequence file: whether a qid reappears is file-wide)
    rows_ub += 1
    data = np.empty(nnz_ub, dtype=dtype)
    indices = np.empty(nnz_ub, dtype=np.int32 if nnz_ub < 2**31 else np.int64)
    indptr = np.zeros(rows_ub + 1, dtype=np.int64)
    ys, Ys, lengths, kinds = [], [], [], set()
    n = nnz = width = 0
    for j in range(n_blocks):
        bs, be = cuts[j], cuts[j + 1]
        if bs == be:
            continue
        try:
            parts = load_svmlight_file(io.BytesIO(read(bs, be - bs)), n_features, zero_based, kind, dtype, n_labels)
        except ValueError as err:
            msg = str(err)
            if msg.startswith("<file>:"):
                line, rest = msg[len("<file>:"):].split(":", 1)
                msg = f"{path}:{int(line) + _scan(read, 0, bs)[1]}:{rest}"
            raise ValueError(msg) from None
        kinds.add("sequence" if len(parts) == 3 else "multilabel" if sp.issparse(parts[1]) else "multiclass")
        if len(kinds) > 1:
            raise _BlocksDisagree()
        Xb = parts[0]
        m, z = Xb.shape[0], Xb.nnz
        data[nnz:nnz + z] = Xb.data
        indices[nnz:nnz + z] = Xb.indices
        indptr[n + 1:n + m + 1] = Xb.indptr[1:] + nnz
        n, nnz, width = n + m, nnz + z, max(width, Xb.shape[1])
        (Ys if sp.issparse(parts[1]) else ys).append(parts[1])
        if len(parts) == 3:
            lengths.append(parts[2])
        del parts, Xb
    data.resize(nnz, refcheck=False)          # shrinking: in place
    indices.resize(nnz, refcheck=False)
    indptr.resize(n + 1, refcheck=False)
    if nnz < 2**31:
        indptr = indptr.astype(np.int32)
    X = sp.csr_matrix((data, indices, indptr), shape=(n, width if n_features is None else n_features))
    X.has_sorted_indices = True
    if Ys:
        cols = n_labels if n_labels is not None else max(Y.shape[1] for Y in Ys)
        return X, sp.vstack([sp.csr_matrix((Y.data, Y.indices, Y.indptr), shape=(Y.shape[0], cols))
                             for Y in Ys]).tocsr()
    y = np.concatenate(ys)
    return (X, y, np.concatenate(lengths)) if lengths else (X, y)


def _source_name(f):
    if isinstance(f, (str, bytes, os.PathLike)):
        name = os.fsdecode(os.fspath(f))
    else:
        name = getattr(f, "name", None)
        if isinstance(name, bytes):
            name = os.fsdecode(name)
        if not isinstance(name, str):
            name = "<file>"
    return name


def _read_bytes(f, name):
    if isinstance(f, (str, bytes, os.PathLike)):
        with open(f, "rb") as fh:
            raw = fh.read()
    else:
        raw = f.read()
        if isinstance(raw, str):                                   # text-mode file object
            raw = raw.encode("utf-8")
        elif not isinstance(raw, bytes):
            raw = bytes(raw)
    try:
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        elif raw[:3] == b"BZh":
            raw = bz2.decompress(raw)
    except (OSError, EOFError, zlib.error, ValueError) as exc:
        raise ValueError(f"{name}:1: cannot decompress ({exc})") from None
    return raw


def _err(name, line, problem):
    return ValueError(f"{name}:{int(line)}: {problem}")


def _kernel_error(name, code, info):
    line, tok, aux = info
    tok = repr(tok.decode("utf-8", "backslashreplace"))
    return _err(name, line, _MESSAGES.get(code, f"parse error {code}").format(tok=tok, aux=aux))


def _check_zero_based(zero_based):
    if isinstance(zero_based, str):
        if zero_based != "auto":
            raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
        return "auto"
    return bool(zero_based)


def load_svmlight_file(f, n_features=None, zero_based="auto", kind="auto", dtype=np.float64,
                       n_labels=None, qid="ignore", label_format="csr"):
    r"""Load an svmlight/libsvm file with a multiclass, multi-label or sequence label.

    The three label kinds share the line format ``label f:v f:v ...`` (1-based feature indices
    by default, ``#`` starts a comment): a multiclass line has one number as its label, a
    multi-label line a comma-separated list of label values (or none), a sequence line is one
    token ``tag qid:N f:v ...``, a sequence being a run of lines with equal qid. gzip and bzip2
    contents are decompressed transparently.

    Parameters
    ----------
    f : str, path-like or binary file object
        The file; gzip (magic bytes ``1f 8b``) and bzip2 (``BZh``) contents are decompressed.
    n_features : int or None, default=None
        Number of columns of X; an index beyond it is an error. None: the largest index + 1.
    zero_based : bool or 'auto', default='auto'
        Whether feature indices in the file are 0-based. 'auto' (as scikit-learn): zero-based
        iff some index is 0. With False an index 0 is an error.
    kind : {'auto', 'multiclass', 'multilabel', 'sequence'}, default='auto'
        The label kind. 'auto': any ``qid:`` token means 'sequence'; else any label field with
        a comma, or any line without a label, means 'multilabel'; else 'multiclass'. A
        multi-label file whose lines all hold exactly one label is detected as multiclass: pass
        ``kind="multilabel"``. With a forced 'multiclass' or 'multilabel', qid tokens are ignored.
    dtype : numpy floating dtype, default=numpy.float64
        The dtype of X's values (parsed as float64, then cast).
    n_labels : int or None, default=None
        Multi-label only: the number of label columns of Y. None: the largest label + 1.
    qid : {'ignore', 'error'}, default='ignore'
        With a forced 'multiclass' or 'multilabel' kind: ignore qid tokens, or refuse a file
        that has them (a sequence file given to a model that is not a chain).
    label_format : {'csr', 'dense'}, default='csr'
        Multi-label only: Y as a CSR matrix, or as a dense int8 array (what scikit-learn's
        cross_val_score and GridSearchCV take as y; n_samples x n_labels bytes).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        The examples (one row per line; sorted indices).
    y : ndarray of shape (n_samples,) or scipy.sparse.csr_matrix of shape (n_samples, n_labels)
        Multiclass and sequence files: one float64 label (tag) per row. Multi-label files: the
        int8 0/1 indicator matrix Y, whose column j is the label value j (labels must be
        non-negative integers), so that a training and a test file agree on columns; values
        that never occur give empty columns. ``Y[:, np.unique(Y.indices)]`` keeps the labels
        that occur, as ssvm-train does.
    lengths : ndarray of shape (n_sequences,)
        Sequence files only (a third value): the int64 length of every sequence, in file order.
        A qid may not reappear after another.

    Raises
    ------
    ValueError
        On any malformed input, with the message ``"{file}:{line}: {problem}"``.

    See Also
    --------
    dump_svmlight_file : Write a file that this function reads back exactly.

    Notes
    -----
    A path to an uncompressed multiclass or multi-label file is parsed in 32 MB blocks straight
    into the final arrays (peak memory: the arrays and one block); otherwise the whole text is
    held while it is parsed.

    Examples
    --------
    >>> import io
    >>> from ssvmlinear import load_svmlight_file
    >>> X, y = load_svmlight_file(io.BytesIO(b"1 1:0.5 3:2\n2 2:1\n1 1:1.5\n"))
    >>> X.shape, y
    ((3, 3), array([1., 2., 1.]))
    >>> X.toarray()
    array([[0.5, 0. , 2. ],
           [0. , 1. , 0. ],
           [1.5, 0. , 0. ]])

    A multi-label file (label values 0 and 2 on the first line, none on the last):

    >>> X, Y = load_svmlight_file(io.BytesIO(b"0,2 1:0.5\n1 2:1\n 1:1\n"))
    >>> Y.toarray()
    array([[1, 0, 1],
           [0, 1, 0],
           [0, 0, 0]], dtype=int8)
    >>> X, Y = load_svmlight_file(io.BytesIO(b"0,2 1:0.5\n1 2:1\n"), label_format="dense")
    >>> Y
    array([[1, 0, 1],
           [0, 1, 0]], dtype=int8)

    A sequence file (two sequences, of 2 and 1 tokens):

    >>> X, y, lengths = load_svmlight_file(io.BytesIO(b"1 qid:1 1:1\n2 qid:1 2:1\n1 qid:2 1:1\n"))
    >>> lengths
    array([2, 1])
    """
    if label_format not in ("csr", "dense"):
        raise ValueError(f"label_format must be 'csr' or 'dense', got {label_format!r}")
    out = _load_svmlight(f, n_features, zero_based, kind, dtype, n_labels, qid)
    if label_format == "dense" and len(out) == 2 and sp.issparse(out[1]):
        from .utils import check_memory
        Y = out[1]
        check_memory(Y.shape[0] * Y.shape[1], f"{_source_name(f)}: a dense label matrix of {Y.shape[0]} x "
                                             f"{Y.shape[1]} (label_format='dense')")
        return out[0], Y.toarray()
    return out


def _load_svmlight(f, n_features, zero_based, kind, dtype, n_labels, qid):
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {sorted(_KINDS)}, got {kind!r}")
    zero_based = _check_zero_based(zero_based)
    if n_features is not None:
        n_features = int(n_features)
        if n_features < 0:
            raise ValueError(f"n_features must be >= 0, got {n_features}")
    if n_labels is not None:
        n_labels = int(n_labels)
        if n_labels < 0:
            raise ValueError(f"n_labels must be >= 0, got {n_labels}")
    if qid not in ("ignore", "error"):
        raise ValueError(f"qid must be 'ignore' or 'error', got {qid!r}")
    refuse_qid = qid == "error" and kind in ("multiclass", "multilabel")
    name = _source_name(f)
    blocks = _load_in_blocks(f, name, n_features, zero_based, kind, dtype, n_labels, refuse_qid)
    if blocks is not None:
        return blocks
    raw = _read_bytes(f, name)

    err, info, arrays = _svmlight.parse(raw, _KINDS[kind], zero_based is False)
    if err:
        raise _kernel_error(name, err, info)
    n_lines, max_index, saw_qid, saw_multi, saw_zero = info
    data, indices, indptr, labels, labptr, qid, hasqid, lines = arrays
    n = lines.shape[0]
    if n == 0:
        raise _err(name, max(n_lines, 1), "no examples")

    if saw_qid and refuse_qid:
        raise _err(name, lines[np.flatnonzero(hasqid)[0]], f"has qid: (a sequence file), expected a {kind} file")
    if kind == "auto":
        kind = "sequence" if saw_qid else ("multilabel" if saw_multi else "multiclass")
        if kind == "sequence":
            bad = np.flatnonzero(hasqid == 0)
            if bad.size:
                raise _err(name, lines[bad[0]],
                           "missing qid (other lines have qid:, so this is a sequence file)")
            if saw_multi:
                bad = np.flatnonzero(np.diff(labptr) != 1)
                raise _err(name, lines[bad[0]], "a sequence token needs exactly one label (tag)")

    # ---- X
    one_based = zero_based is False or (zero_based == "auto" and not saw_zero)
    if one_based:
        indices -= 1
        max_index -= 1
    n_f = max_index + 1 if indices.size else 0
    if n_features is None:
        n_features = n_f
    elif n_f > n_features:
        pos = np.flatnonzero(indices >= n_features)[0]
        row = np.searchsorted(indptr, pos, side="right") - 1
        raise _err(name, lines[row], f"feature index {int(indices[pos]) + one_based} is beyond "
                                     f"n_features={n_features}")
    if indptr[-1] <= _INT32_MAX:
        indptr = indptr.astype(np.int32)
    else:
        indices = indices.astype(np.int64)
    if np.dtype(dtype) != np.float64:
        data = data.astype(dtype)
    X = sp.csr_matrix((data, indices, indptr), shape=(n, n_features))
    X.has_sorted_indices = True            # strictly increasing within each line (checked)

    # ---- labels
    if kind == "multilabel":
        return X, _label_indicator(name, labels, labptr, lines, n, n_labels)
    y = labels                              # exactly one label per example (checked)
    if kind == "multiclass":
        return X, y
    return X, y, _sequence_lengths(name, qid, lines)


def _load_in_blocks(f, name, n_features, zero_based, kind, dtype, n_labels, refuse_qid):
    """An uncompressed multiclass or multi-label file named by a path, parsed in blocks straight
    into its arrays (_parse_range), or None: the whole-file parse does it (compressed data, file
    objects, sequences -- a qid may not reappear anywhere in the file --, refused qids).
    zero_based="auto" (a file-wide property): the blocks are read zero-based, then, when no index
    is 0, every index is shifted down by one in place. Any error is left to the whole-file parse,
    so the messages are the same."""
    import mmap
    if not isinstance(f, (str, os.PathLike)) or kind == "sequence" or refuse_qid:
        return None
    auto = zero_based == "auto"
    try:
        if not stat.S_ISREG(os.stat(f).st_mode):    # a pipe (<(zcat ...)) must be read once, whole
            return None
    except OSError:
        return None
    try:
        with open(f, "rb") as fh:
            head = fh.read(3)
            if head[:2] == b"\x1f\x8b" or head == b"BZh" or os.fstat(fh.fileno()).st_size == 0:
                return None
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                fd = fh.fileno()
                parts = _parse_range(buf, 0, len(buf), kind, True if auto else zero_based, name,
                                     None if auto else n_features, dtype, n_labels,
                                     lambda s, size: os.pread(fd, size, s))
    except (ValueError, OSError, _BlocksDisagree):
        return None
    if len(parts) == 3:
        return None
    if auto:
        X = parts[0]
        width = X.shape[1]
        if X.nnz and X.indices.min() > 0:     # one-based: as the whole-file parse, in place
            X.indices -= 1
            width -= 1
        if n_features is not None:
            if width > n_features:
                return None                   # (the whole-file parse names the line)
            width = n_features
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))
        X.has_sorted_indices = True
        parts = (X,) + tuple(parts[1:])
    return parts


def _label_indicator(name, labels, labptr, lines, n, n_labels):
    bad = ~((labels >= 0) & (labels <= _MAX_LABEL) & (labels == np.floor(labels)))
    if n_labels is not None:
        bad |= labels >= n_labels
    if bad.any():
        pos = np.flatnonzero(bad)[0]
        row = np.searchsorted(labptr, pos, side="right") - 1
        what = ("non-negative integers" if n_labels is None
                else f"integers in [0, {n_labels})")
        raise _err(name, lines[row], f"bad label {float(labels[pos])!r}: multi-label labels must be "
                                     f"{what}")
    cols = labels.astype(np.int64)
    if n_labels is None:
        n_labels = int(cols.max()) + 1 if cols.size else 0
    idx_dtype = np.int32 if max(cols.size, n_labels) <= _INT32_MAX else np.int64
    Y = sp.csr_matrix((np.ones(cols.size, dtype=np.int8), cols.astype(idx_dtype),
                       labptr.astype(idx_dtype)), shape=(n, n_labels))
    Y.sum_duplicates()                     # sorts each row; a repeated label counts once
    Y.data[:] = 1
    return Y


def _sequence_lengths(name, qid, lines):
    n = qid.shape[0]
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    run_q = qid[starts]
    order = np.argsort(run_q, kind="stable")
    dup = np.flatnonzero(run_q[order][1:] == run_q[order][:-1])
    if dup.size:
        run = order[1:][dup].min()         # first run whose qid was already used by a run before
        raise _err(name, lines[starts[run]],
                   f"qid {int(run_q[run])} reappears after another qid (sequences must be "
                   f"contiguous runs of equal qid)")
    return np.diff(np.r_[starts, n]).astype(np.int64)


# --------------------------------------------------------------------------------------- writing

# Numbers in our text files: ASCII digits only (int() and float() also take '1_0', other
# scripts' digits, 'Infinity' and 'nan')
_INT_TOKEN = re.compile(r"[+-]?[0-9]+")
_FLOAT_TOKEN = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")   # unambiguous: linear time


def parse_int64(text):
    """An integer of the 64-bit range written with ASCII digits; ValueError otherwise."""
    if not _INT_TOKEN.fullmatch(text) or not -2**63 <= int(text) < 2**63:
        raise ValueError(f"{text[:40]!r} is not an integer of the 64-bit range")
    return int(text)


def parse_finite_float(text):
    """A finite float written as a decimal number (no 'inf', 'nan', '1_0'); ValueError otherwise."""
    if not _FLOAT_TOKEN.fullmatch(text):
        raise ValueError(f"{text[:40]!r} is not a number")
    v = float(text)
    if not np.isfinite(v):
        raise ValueError(f"{text[:40]} is not a finite float64")
    return v


def parse_int64_pairs(text):
    """Whitespace-separated pairs "a:b" of integers (parse_int64 each) as an (E, 2) int64 array."""
    pairs = []
    for tok in text.split():
        a, sep, b = tok.partition(":")
        if not sep:
            raise ValueError(f"{tok[:40]!r} is not a pair a:b")
        pairs.append((parse_int64(a), parse_int64(b)))
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


def parse_finite_floats(text):
    """The whitespace-separated numbers of `text` (parse_finite_float each) as a float64 array."""
    return np.array([parse_finite_float(t) for t in text.split()], dtype=np.float64)


def _token_lines(path):
    """(line number, tokens) of the lines of a small text file that hold tokens ('#' comments and
    blank lines skipped); OSError when it cannot be read."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            text = raw.decode("utf-8", errors="replace").split("#", 1)[0].split()
            if text:
                yield lineno, text


def read_int_pairs(path, what, noun):
    """The pairs of integers of a text file of two-integer lines ('#' comments, blank lines):
    (firsts, seconds, line numbers) as int64 arrays. ValueError "{path}:{line}: ..." on a line
    that is not two integers of the 64-bit range (`what` names the pair, `noun` one integer);
    OSError when the file cannot be read. Hierarchy and label-pair files."""
    firsts, seconds, lines = [], [], []
    for lineno, text in _token_lines(path):
        if len(text) != 2:
            raise ValueError(f"{path}:{lineno}: expected '{what}' (two integer {noun}s), got {len(text)} tokens")
        try:
            a, b = parse_int64(text[0]), parse_int64(text[1])
        except ValueError as e:
            raise ValueError(f"{path}:{lineno}: {noun} {e}") from None
        firsts.append(a)
        seconds.append(b)
        lines.append(lineno)
    return (np.array(firsts, dtype=np.int64), np.array(seconds, dtype=np.int64),
            np.array(lines, dtype=np.int64))


def read_instance_weights(path, n_rows):
    """ssvm-train -W: one weight per data line, one number a line (LIBLINEAR's weight file;
    blank lines and '#' comments skipped). ValueError "{path}:{line}: ..." for a value that is not
    a finite number >= 0, "{path}: ..." when the count is not n_rows; OSError when unreadable."""
    weights = np.empty(n_rows, dtype=np.float64)
    k = 0
    for lineno, text in _token_lines(path):
        if len(text) != 1:
            raise ValueError(f"{path}:{lineno}: expected one weight, got {len(text)} tokens")
        try:
            value = parse_finite_float(text[0])
        except ValueError:
            value = None
        if value is None or value < 0:
            raise ValueError(f"{path}:{lineno}: a weight must be a finite number >= 0, got {text[0][:40]!r}")
        if k == n_rows:
            raise ValueError(f"{path}:{lineno}: more weights than the {n_rows} examples of the data file")
        weights[k] = value
        k += 1
    if k != n_rows:
        raise ValueError(f"{path}: {k} weights for the {n_rows} examples of the data file (one per line)")
    return weights


def _fmt_numbers(values):
    """Shortest round-trip text of float64 values; integral values without '.0'."""
    out = list(map(float.__repr__, np.asarray(values, dtype=np.float64).tolist()))
    return [s[:-2] if s.endswith(".0") else s for s in out]


def _as_csr(M, what):
    if sp.issparse(M):
        M = sp.csr_matrix(M)
        if not M.has_canonical_format:
            M = M.copy()
            M.sum_duplicates()
    else:
        M = np.asarray(M)
        if M.ndim != 2:
            raise ValueError(f"{what} must be 2-dimensional, got shape {M.shape}")
        M = sp.csr_matrix(M)
    return M


def dump_svmlight_file(X, y, f, zero_based=False, lengths=None, comment=None):
    """Write examples and their labels in svmlight format (multiclass, multi-label or sequence).

    The label kind follows y: a 1-D y gives multiclass lines ``label i:v ...``; a 2-D 0/1
    indicator (dense or sparse) multi-label lines ``l1,l2 i:v ...``; a 1-D y with `lengths`
    sequence lines ``tag qid:k i:v ...`` with k = 1..len(lengths). Numbers are written with
    Python's shortest round-trip repr (integral values without ".0"), so that
    load_svmlight_file gives back the same float64 values.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The examples, finite; explicit zeros stored in a sparse X are written.
    y : array-like of shape (n_samples,) or {array-like, sparse matrix} of shape (n_samples, n_labels)
        The labels (finite), or a 0/1 indicator matrix whose column j is the label value j.
        An empty label set starts its line with a space; a row with neither labels nor
        features is written with an explicit ``i:0`` for the first column.
    f : str, path-like or binary file object
        Where to write: a path is written atomically (a temporary file, then a rename), gzip
        compressed when its name ends with ``.gz``, bzip2 with ``.bz2``.
    zero_based : bool, default=False
        Write 0-based feature indices (default: 1-based, as LIBLINEAR).
    lengths : array-like of shape (n_sequences,) or None, default=None
        Write a sequence file: the number of rows (tokens) of every sequence, summing to
        n_samples (1-D y only).
    comment : str or None, default=None
        Text written first, every line of it as a ``#`` comment line.

    Returns
    -------
    None
        The file is written; nothing is returned.

    Raises
    ------
    ValueError
        For non-finite values, mismatched shapes, or lengths that do not sum to n_samples.

    See Also
    --------
    load_svmlight_file : Read the file back.

    Examples
    --------
    >>> import io
    >>> import numpy as np
    >>> from ssvmlinear import dump_svmlight_file
    >>> X = np.array([[0.5, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> buf = io.BytesIO()
    >>> dump_svmlight_file(X, np.array([1, 2, 1]), buf)
    >>> print(buf.getvalue().decode())
    1 1:0.5
    2 2:2
    1 1:1 2:1
    <BLANKLINE>
    >>> buf = io.BytesIO()
    >>> dump_svmlight_file(X, np.array([1, 2, 1]), buf, lengths=[2, 1])
    >>> print(buf.getvalue().decode())
    1 qid:1 1:0.5
    2 qid:1 2:2
    1 qid:2 1:1 2:1
    <BLANKLINE>
    """
    X = _as_csr(X, "X").astype(np.float64)
    n, d = X.shape
    if not np.all(np.isfinite(X.data)):
        raise ValueError("X contains NaN or infinite values, which svmlight cannot store")

    multilabel = sp.issparse(y) or np.ndim(y) == 2
    if multilabel:
        if lengths is not None:
            raise ValueError("lengths (sequences) needs a 1-D y")
        Y = _as_csr(y, "y").copy()          # never modify the caller's arrays
        Y.eliminate_zeros()
        if Y.shape[0] != n:
            raise ValueError(f"X has {n} rows but y has {Y.shape[0]}")
        lab_text = [",".join(map(str, Y.indices[Y.indptr[i]:Y.indptr[i + 1]].tolist()))
                    for i in range(n)]
    else:
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != n:
            raise ValueError(f"y must be 1-D with {n} entries, got shape {y.shape}")
        if y.dtype.kind in "iub":
            lab_text = list(map(str, y.astype(np.int64).tolist()))
        else:
            y = y.astype(np.float64)
            if not np.all(np.isfinite(y)):
                raise ValueError("y contains NaN or infinite values")
            lab_text = _fmt_numbers(y)

    qid_text = None
    if lengths is not None:
        lengths = np.asarray(lengths)
        if lengths.ndim != 1 or lengths.dtype.kind not in "iu" or np.any(lengths < 0) \
                or lengths.sum() != n:
            raise ValueError("lengths must be non-negative integers summing to the number of rows")
        qid_text = np.repeat(np.arange(1, lengths.size + 1), lengths).tolist()

    base = 0 if zero_based else 1
    prefixes = lab_text
    if qid_text is not None:
        prefixes = [f"{t} qid:{q}" for t, q in zip(lab_text, qid_text)]
    if multilabel:
        empty = np.flatnonzero(np.diff(X.indptr) == 0).tolist()
        for i in empty:
            if not prefixes[i]:
                if d == 0:
                    raise ValueError(f"row {i} has no label, no feature and X has no column: "
                                     "svmlight cannot represent it")
                prefixes[i] = f" {base}:0"
    head = "".join(f"# {c}\n" for c in str(comment).splitlines()) if comment else ""
    payload = head.encode("utf-8") + _svmlight.format_lines(
        [p.encode("ascii") for p in prefixes], X.indptr.astype(np.int64),
        X.indices.astype(np.int64), X.data, base)

    if isinstance(f, (str, bytes, os.PathLike)):
        path = os.fsdecode(os.fspath(f))
        if path.endswith(".gz"):
            payload = gzip.compress(payload, compresslevel=6, mtime=0)
        elif path.endswith(".bz2"):
            payload = bz2.compress(payload)
        write_atomic(path, payload)
    elif isinstance(f, io.TextIOBase):
        f.write(payload.decode("ascii"))
    else:
        f.write(payload)


def load_crfsuite_file(f, feature_names=None, n_features=None, alternate_sign=True):
    r"""Load a sequence labeling file in CRFsuite's data format.

    One token a line: its label, then tab-separated attributes, each ``name`` (value 1) or
    ``name:value``; ``\:`` and ``\\`` write a colon and a backslash in a name or label; a blank
    line ends a sequence (what ``crfsuite learn`` and ``crfsuite tag`` read). gzip and bzip2
    contents are decompressed transparently. Columns are a vocabulary of the attribute names
    (sorted), or the given one, or hashed.

    Parameters
    ----------
    f : str, path-like or binary file object
        The file.
    feature_names : list of str or None, default=None
        The columns' attribute names (a fitted model's vocabulary): other attributes are
        ignored. None: the vocabulary of the file's names, sorted.
    n_features : int or None, default=None
        Hash every attribute name into this many columns instead (signed 32-bit MurmurHash3, as
        scikit-learn's FeatureHasher); feature_names must then be None.
    alternate_sign : bool, default=True
        With hashing: the sign of the name's hash multiplies its value.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_tokens, n_columns)
        One row per token, the sequences one after the other.
    y : ndarray of str of shape (n_tokens,)
        The label of every token.
    lengths : ndarray of int64 of shape (n_sequences,)
        The number of tokens of each sequence.
    feature_names : list of str or None
        The columns' attribute names (None with hashing).

    Raises
    ------
    ValueError
        For a malformed line (a field with two ':', an empty name, a value that is not a finite
        number, a declaration line '@...', bytes that are not UTF-8), with the file and line.
    OSError
        When the file cannot be read.

    See Also
    --------
    load_svmlight_file : The svmlight format (sequences by qid).
    ssvmlinear.feature_extraction.SequenceVectorizer : The same columns from Python dicts.

    Examples
    --------
    >>> import io
    >>> from ssvmlinear.io import load_crfsuite_file
    >>> text = b"B-PER\tw=John\ttitle\nO\tw=sleeps\n\nB-LOC\tw=Oslo\ttitle:2.0\n"
    >>> X, y, lengths, names = load_crfsuite_file(io.BytesIO(text))
    >>> y.tolist(), lengths.tolist(), names
    (['B-PER', 'O', 'B-LOC'], [2, 1], ['title', 'w=John', 'w=Oslo', 'w=sleeps'])
    >>> X.toarray()
    array([[1., 1., 0., 0.],
           [0., 0., 0., 1.],
           [2., 0., 1., 0.]])
    """
    from .token_features import TokenFeatures
    if feature_names is not None and n_features is not None:
        raise ValueError("give feature_names or n_features, not both")
    name = _source_name(f)
    raw = _read_bytes(f, name)
    features = TokenFeatures(n_features, alternate_sign)
    if feature_names is not None:
        features.feature_names = list(feature_names)
    X, y, lengths = features.read_crfsuite(raw, name, fit=feature_names is None and n_features is None)
    return X, y.astype(str) if len(y) else np.zeros(0, dtype=str), lengths, features.feature_names


def is_crfsuite_file(path):
    """Whether the data file at path (gzip and bzip2 read through) looks like CRFsuite's format
    (looks_like_crfsuite on its first bytes); False for what is not a readable file."""
    try:
        with open(path, "rb") as fh:
            magic = fh.read(3)
        opener = gzip.open if magic[:2] == b"\x1f\x8b" else bz2.open if magic == b"BZh" else open
        with opener(path, "rb") as fh:
            head = fh.read(1 << 16)
    except (OSError, EOFError, ValueError):
        return False
    return looks_like_crfsuite(head)


def looks_like_crfsuite(raw):
    """Whether a data file's bytes look like CRFsuite's format rather than svmlight's: a line
    with a tab-separated field that is not svmlight's 'index:value' or 'qid:N', a label that is
    not a number, or a blank line between tokens (the first lines are looked at)."""
    lines = raw[:1 << 16].split(b"\n")[:200]
    seen_token = False
    for k, line in enumerate(lines):
        line = line.rstrip(b"\r")
        if not line.strip():
            if seen_token and k + 1 < len(lines) and lines[k + 1].strip():
                return True
            continue
        if line.lstrip().startswith(b"#"):
            continue
        seen_token = True
        if b"\t" not in line:
            continue
        fields = line.split(b"\t")
        try:
            float(fields[0].split(b",")[0] or b"0")
        except ValueError:
            return True
        for field in fields[1:]:
            field = field.split(b"#")[0].strip()
            head, colon, tail = field.partition(b":")
            if field and not (colon and (head.isdigit() or head == b"qid")):
                return True
    return False
