"""Plain-text model files in LIBLINEAR's spirit: a readable header, then the weights.

Format 2 (the one written)::

    ssvmlinear_model 2
    structure multiclass | chain | multilabel
    solver, loss, C, label_type, nr_class, label (the K labels), nr_feature, bias
    [chain: start_end, normalize_loss]  [multilabel: normalize_loss, output, and with pairwise
      label interactions "edges a:b c:d ..." (0-based label positions)]
    nr_w_rows N
    w
    N lines "feature v_1 ... v_K": the non-zero rows of the unary weights, by increasing 1-based
      feature index (LIBLINEAR's numbering); feature nr_feature + 1 is the bias row; rows not
      listed are zero, so a model over feature index 10^8 is as small as its non-zero weights
    [chain: "transition" and K lines of K weights (rows = previous tag); with start_end, "start"
      and "end" and one line of K weights each; multilabel with edges: "pairwise" and one line
      per edge, its table [state of a][state of b] row-major]
    [a model fitted on token features (CRFsuite files, feature dicts): header "vocabulary N" and,
      last, "vocabulary" and the N attribute names of the feature columns, one a line (\\, \n and
      \r escaped)]

A multilabel model fitted on a 1-D binary y (`output binary`) has one weight column for its two
labels. Format 1 (every feature row written, no index, no nr_w_rows) is still read. Sizes a header
implies are checked against the bytes that follow and against available memory before anything is
allocated. Written atomically (temporary file + rename); %.17g round-trips exactly."""
import os
import re

import numpy as np

from .io import parse_int64, parse_finite_float
from .registry import SOLVERS, STRUCTURES, structure_of
from .utils import write_atomic, check_memory

MAGIC = "ssvmlinear_model"
FORMAT_VERSION = 2
READABLE_VERSIONS = ("1", "2")


# A line of weights: decimal numbers only (as %.17g writes them; no 'inf', 'nan', '1_0'), each
# ended by a space or the line's end; unambiguous, so that matching a line takes linear time
_NUMBERS = re.compile(r"\s*(?:[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?(?=\s|$)\s*)*")


def _parse_bool(text):
    if text not in ("True", "False"):
        raise ValueError(f"{text[:40]!r} is not True or False")
    return text == "True"


_LABEL_PARSERS = {"int": parse_int64, "float": parse_finite_float, "str": str, "bool": _parse_bool}


def format_label(v):
    """Labels as users wrote them: 3.0 -> '3', 2.5 -> '2.5', 'cat' -> 'cat'."""
    if isinstance(v, (float, np.floating)):
        return str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else repr(float(v))
    return str(v)


def _label_type(classes):
    kind = np.asarray(classes).dtype.kind
    return {"i": "int", "u": "int", "f": "float", "b": "bool"}.get(kind, "str")


def _format_rows(block):
    return "".join(" ".join("%.17g" % v for v in row) + "\n" for row in block)


def _model_lines(estimator, structure):
    """The model file as a stream of text chunks (weights a block of rows at a time, so that
    writing never holds the whole text)."""
    classes = estimator.classes_
    bias = estimator._bias
    W = estimator.coef_            # (columns, nr_feature)
    d = estimator.n_features_in_
    head = [f"{MAGIC} {FORMAT_VERSION}",
            f"structure {structure.name}",
            f"solver {estimator._solver_name}",
            f"loss {estimator.loss}",
            f"C {estimator.C!r}",
            f"label_type {_label_type(classes)}",
            f"nr_class {len(classes)}",
            "label " + " ".join(format_label(c) for c in classes),
            f"nr_feature {d}",
            f"bias {bias!r}" if bias > 0 else "bias -1"]
    head += [f"{p} {int(bool(getattr(estimator, p)))}" for p in structure.model_params]
    head += [f"{key} {value}" for key, value in estimator._model_header()]
    if _vocabulary_of(estimator) is not None:
        head.append(f"vocabulary {len(_vocabulary_of(estimator))}")
    rows = np.flatnonzero(W.any(axis=0))
    bias_row = estimator.intercept_ / bias if bias > 0 else None
    has_bias_row = bias_row is not None and bool(np.any(bias_row))
    head += [f"nr_w_rows {rows.shape[0] + int(has_bias_row)}", "w"]
    yield "\n".join(head) + "\n"
    step = max(1, (1 << 16) // max(1, W.shape[0]))
    for s in range(0, rows.shape[0], step):
        chunk = rows[s:s + step]
        yield "".join(f"{j + 1} " + " ".join("%.17g" % v for v in W[:, j]) + "\n" for j in chunk)
    if has_bias_row:
        yield f"{d + 1} " + " ".join("%.17g" % v for v in bias_row) + "\n"
    params = {p: getattr(estimator, p) for p in structure.model_params}
    params.update(estimator._block_params())
    for name, n_rows, n_cols in structure.blocks(len(classes), params):   # block "x" is attribute x_
        yield f"{name}\n" + _format_rows(np.asarray(getattr(estimator, name + "_")).reshape(n_rows, n_cols))
    names = _vocabulary_of(estimator)
    if names is not None:
        yield "vocabulary\n"
        for s in range(0, len(names), 1 << 14):
            yield "".join(_escape_name(n) + "\n" for n in names[s:s + (1 << 14)])


def _vocabulary_of(estimator):
    """The attribute names of a model fitted on token features (a list), else None."""
    features = getattr(estimator, "token_features_", None)
    return None if features is None else features.feature_names


def _escape_name(name):
    return name.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


_ESCAPED = re.compile(r"\\(.)")


def _unescape_name(text):
    return _ESCAPED.sub(lambda m: {"n": "\n", "r": "\r"}.get(m.group(1), m.group(1)), text)


def save_model(estimator, path):
    """Write a fitted estimator to a plain-text model file.

    The file holds a readable header (structure, solver, loss, C, labels, number of features,
    bias and the structure's own settings) and the weights: only the non-zero rows of the unary
    weights, then the structure's blocks (a chain's transitions, pairwise tables). Numbers are
    written with 17 significant digits, so load_model gives back the same float64 weights. The
    file is written atomically (a temporary file, then a rename). ssvm-predict reads it too.

    Parameters
    ----------
    estimator : MulticlassSSVM, ChainSSVM, MultiLabelSSVM or HierarchicalSSVM
        A fitted estimator (or core model of ssvmlinear.models).
    path : str or path-like
        The file to write.

    Returns
    -------
    None
        The file is written; nothing is returned.

    Raises
    ------
    ValueError
        When the weights, the bias or C are not finite, or a label contains whitespace.
    TypeError
        When the estimator is not one of ssvmlinear's models.
    sklearn.exceptions.NotFittedError
        When the estimator is not fitted.

    See Also
    --------
    load_model : Read the file back.

    Examples
    --------
    >>> import os
    >>> import tempfile
    >>> import numpy as np
    >>> from ssvmlinear import MulticlassSSVM, save_model
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    >>> clf = MulticlassSSVM().fit(X, [0, 1, 2])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "model.txt")
    ...     save_model(clf, path)
    ...     with open(path) as f:
    ...         print(f.readline().strip())
    ssvmlinear_model 2
    """
    structure = structure_of(estimator)
    estimator._check_fitted()
    classes = estimator.classes_
    if _label_type(classes) == "str" and any(not str(c) or any(ch.isspace() for ch in str(c)) for c in classes):
        raise ValueError("labels containing whitespace (or empty labels) cannot be written to a model file")
    # nothing load_model would refuse: finite weights, bias and C
    params = {p: getattr(estimator, p) for p in structure.model_params}
    params.update(estimator._block_params())
    arrays = [estimator.coef_, estimator.intercept_] + [np.asarray(getattr(estimator, name + "_"))
                                                        for name, _, _ in structure.blocks(len(classes), params)]
    if not all(np.all(np.isfinite(a)) for a in arrays) or not np.isfinite(estimator._bias) \
            or not 0 < estimator.C < np.inf:
        raise ValueError(f"{path}: the model's weights, bias or C are not finite; nothing written")
    write_atomic(path, _model_lines(estimator, structure))


class _Lines:
    """A model file read one line at a time, knowing its line number and the bytes still unread
    (so that a header's sizes are checked against what the file holds before allocating)."""

    def __init__(self, path):
        self.path = path
        self.fh = open(path, "rb")
        self.remaining = os.fstat(self.fh.fileno()).st_size
        self.lineno = 0

    def fail(self, msg, lineno=None):
        raise ValueError(f"{self.path}:{self.lineno if lineno is None else lineno}: {msg}")

    def next(self):
        """The next line without its end, or None at the end of the file."""
        raw = self.fh.readline()
        if not raw:
            return None
        self.lineno += 1
        self.remaining -= len(raw)
        try:
            return raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            raise ValueError(f"{self.path}:{self.lineno}: not a model file (binary content)") from None

    def need(self, n_rows, n_cols, name, leading_index=False):
        """Fail unless the unread bytes can hold n_rows lines of n_cols numbers, each line after a
        feature index when leading_index (a number takes at least one character and a separator)."""
        if self.remaining < n_rows * 2 * (n_cols + leading_index):
            n = n_rows * n_cols
            self.fail(f"header says block '{name}' holds {n_rows} x {n_cols} = {n} weights ({n * 8 / 2**30:.3g} GiB), "
                      f"but only {self.remaining} bytes follow (bad nr_class / nr_feature / nr_w_rows, or a "
                      "truncated file?)", self.lineno + 1)

    def numbers(self, n_cols, name, leading_index=False):
        line = self.next()
        if line is None or not line.strip():
            self.fail(f"block '{name}' ends early (truncated file?)", self.lineno + (line is None))
        vals = line.split()
        if len(vals) != n_cols + leading_index:
            self.fail(f"expected {n_cols} weights" + (" after the feature index" if leading_index else "")
                      + f", found {len(vals) - leading_index}")
        if not _NUMBERS.fullmatch(line.split(None, 1)[1] if leading_index else line):
            self.fail("weights must be decimal numbers")
        row = np.array(vals[leading_index:], dtype=np.float64)
        if not np.all(np.isfinite(row)):
            self.fail("weights must be finite")
        return vals[0] if leading_index else None, row

    def dense_block(self, n_rows, n_cols, name):
        self.need(n_rows, n_cols, name)
        B = np.empty((n_rows, n_cols))
        for r in range(n_rows):
            B[r] = self.numbers(n_cols, name)[1]
        return B

    def expect(self, name):
        line = self.next()
        if line is None or line.strip() != name:
            self.fail(f"expected the line '{name}'", self.lineno + (line is None))


def load_model(path, estimator=True):
    """Read a model file written by save_model or ssvm-train.

    Returns the fitted estimator of the file's structure, ready to predict: its parameters (C,
    solver, loss, fit_intercept, the structure's settings) and fitted attributes (coef_, intercept_, classes_,
    n_features_in_ and the structure's own) are those of the model saved; the solver's
    diagnostics (objective_, n_iter_, ...) are not stored. Sizes the header implies are
    checked against the bytes that follow and against available memory before anything is
    allocated.

    Parameters
    ----------
    path : str or path-like
        The model file.
    estimator : bool, default=True
        True: a scikit-learn estimator (MulticlassSSVM, ChainSSVM, MultiLabelSSVM or
        HierarchicalSSVM). False: its core model of ssvmlinear.models, which imports no
        scikit-learn (what ssvm-predict uses).

    Returns
    -------
    MulticlassSSVM, ChainSSVM, MultiLabelSSVM, HierarchicalSSVM or core model
        The fitted model.

    Raises
    ------
    ValueError
        For a file that is not a valid model file, with its name and line.

    See Also
    --------
    save_model : Write a fitted estimator to a model file.

    Examples
    --------
    >>> import os
    >>> import tempfile
    >>> import numpy as np
    >>> from ssvmlinear import MulticlassSSVM, load_model, save_model
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    >>> clf = MulticlassSSVM().fit(X, ["a", "b", "c"])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "model.txt")
    ...     save_model(clf, path)
    ...     loaded = load_model(path)
    >>> type(loaded).__name__, loaded.classes_
    ('MulticlassSSVM', array(['a', 'b', 'c'], dtype='<U1'))
    >>> bool(np.array_equal(loaded.predict(X), clf.predict(X)))
    True
    >>> bool(np.array_equal(loaded.coef_, clf.coef_))
    True
    """
    src = _Lines(path)
    try:
        return _read_model(src, estimator)
    finally:
        src.fh.close()


def _read_model(src, as_estimator):
    fail = src.fail
    first = src.next()
    if first is None or not first.startswith(MAGIC):
        fail(f"not an ssvmlinear model file (expected '{MAGIC} {FORMAT_VERSION}')", 1)
    parts = first.split()
    if len(parts) != 2 or parts[1] not in READABLE_VERSIONS:
        fail(f"unsupported model format version {parts[1:]} (this version reads {', '.join(READABLE_VERSIONS)})")
    version = int(parts[1])
    header = {}
    while True:
        line = src.next()
        if line is None:
            fail("header ends before the 'w' line")
        line = line.strip()
        if line == "w":
            break
        key, _, value = line.partition(" ")
        if key[:1].isdigit() or key[:1] in "-+.":
            fail("weights before the 'w' line (is the 'w' line missing?)")
        if not value:
            fail(f"malformed header line {line!r}")
        header[key] = (src.lineno, value)
    required = ["structure", "solver", "loss", "label_type", "nr_class", "label", "nr_feature", "bias"]
    for key in required + (["nr_w_rows"] if version >= 2 else []):
        if key not in header:
            fail(f"header has no '{key}' line")
    if header["structure"][1] not in STRUCTURES:
        fail(f"unknown structure {header['structure'][1]!r}", header["structure"][0])
    structure = STRUCTURES[header["structure"][1]]
    estimator_class = structure.estimator_class() if as_estimator else structure.model_class()

    def number(key, conv, default=None):
        if key not in header:
            return default
        ln, v = header[key]
        try:
            return conv(v)
        except ValueError:
            fail(f"bad {key} value {v[:40]!r}", ln)

    K = number("nr_class", parse_int64)
    d = number("nr_feature", parse_int64)
    bias = number("bias", parse_finite_float)
    C = number("C", parse_finite_float, 1.0)
    if K < 1:
        fail("nr_class must be >= 1", header["nr_class"][0])
    if not 0 <= d < 2**31 - 1:
        fail("nr_feature must be in 0..2**31 - 2", header["nr_feature"][0])
    if not C > 0:
        fail("C must be > 0", header["C"][0])
    solver = header["solver"][1]
    if solver not in SOLVERS:
        fail(f"unknown solver {solver[:40]!r}", header["solver"][0])
    ltype = header["label_type"][1]
    conv = _LABEL_PARSERS.get(ltype)
    if conv is None:
        fail(f"unknown label_type {ltype[:40]!r}", header["label_type"][0])
    toks = header["label"][1].split()
    if len(toks) != K:
        fail(f"{len(toks)} labels for nr_class {K}", header["label"][0])
    try:
        classes = np.array([conv(t) for t in toks])
    except ValueError:
        fail(f"labels do not parse as {ltype}", header["label"][0])
    if len(set(classes.tolist())) != K:
        fail("labels repeat", header["label"][0])

    kwargs = dict(C=C, loss=header["loss"][1], solver=header["solver"][1], fit_intercept=bias > 0,
                  intercept_scaling=bias if bias > 0 else 1.0)
    for p in structure.model_params:
        kwargs[p] = bool(number(p, parse_int64, 0))
    n_cols, restore, params = estimator_class._model_layout(header, K, fail)   # weight columns
    kwargs.update(params)
    n_rows = d + (1 if bias > 0 else 0)              # weight rows (features, then the bias)
    blocks = structure.blocks(K, kwargs)
    extra = sum(r * c for _, r, c in blocks)
    if version >= 2:
        n_listed = number("nr_w_rows", parse_int64)
        if not 0 <= n_listed <= n_rows:
            fail(f"nr_w_rows {n_listed} is not between 0 and the {n_rows} weight rows", header["nr_w_rows"][0])
        src.need(n_listed, n_cols, "w", leading_index=True)
    else:
        src.need(n_rows, n_cols, "w")
    check_memory(8 * (2 * n_rows * n_cols + extra),
                 f"{src.path}: a model of {n_rows} x {n_cols} weights ({n_rows * n_cols} weights)")
    UT = np.zeros((n_cols, n_rows))    # the unary weights transposed: coef_'s layout, filled in place
    if version >= 2:
        last = 0
        for _ in range(n_listed):
            index, row = src.numbers(n_cols, "w", leading_index=True)
            try:
                j = parse_int64(index)
            except ValueError:
                fail(f"bad feature index {index[:40]!r}")
            if not last < j <= n_rows:
                fail(f"feature index {j} is not in {last + 1}..{n_rows} (indices increase; "
                     f"{d + 1} is the bias row)" if bias > 0 else
                     f"feature index {j} is not in {last + 1}..{n_rows} (indices increase)")
            UT[:, j - 1] = row
            last = j
    else:
        for r in range(n_rows):
            UT[:, r] = src.numbers(n_cols, "w")[1]
    parts = [UT.T]   # a feature-major (n_rows, K) view; estimators take their coef_ from it without a transposing copy
    for name, r, c in blocks:
        src.expect(name)
        parts.append(src.dense_block(r, c, name).ravel())
    vocabulary = None
    if "vocabulary" in header:          # a model fitted on token features: its attribute names
        n_names = number("vocabulary", parse_int64)
        if n_names != d:
            fail(f"vocabulary {n_names} differs from nr_feature {d}", header["vocabulary"][0])
        src.expect("vocabulary")
        if src.remaining < n_names:
            fail(f"header says the vocabulary holds {n_names} names, but only {src.remaining} bytes follow "
                 "(truncated file?)", src.lineno + 1)
        vocabulary = []
        for _ in range(n_names):
            line = src.next()
            if line is None:
                fail("the vocabulary ends early (truncated file?)", src.lineno + 1)
            vocabulary.append(_unescape_name(line))
        if len(set(vocabulary)) != n_names:
            fail("the vocabulary's names repeat")
    while True:
        line = src.next()
        if line is None:
            break
        if line.strip():
            fail("unexpected content after the weights")
    est = estimator_class(**kwargs)
    try:
        est._check_parameters()
    except ValueError as e:
        fail(str(e), header["loss"][0])
    est._set_weights(np.concatenate([p.ravel() for p in parts]) if len(parts) > 1 else parts[0], d, classes, bias)
    if bias > 0 and not np.all(np.isfinite(est.intercept_)):
        fail(f"bias {bias!r} times the bias row's weights overflows float64", header["bias"][0])
    if restore is not None:
        restore(est)
    if vocabulary is not None:
        from .token_features import TokenFeatures
        est.token_features_ = TokenFeatures()
        est.token_features_.feature_names = vocabulary
    est.n_iter_ = 0
    return est
