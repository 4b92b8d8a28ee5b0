"""Plain-text model files in LIBLINEAR's spirit: a readable header, then one line of weights per
feature (one column per class). Written atomically (temporary file + rename); %.17g round-trips."""
import os
import tempfile

import numpy as np

MAGIC = "ssvmlinear_model"
FORMAT_VERSION = 1


def format_label(v):
    """Labels as users wrote them: 3.0 -> '3', 2.5 -> '2.5', 'cat' -> 'cat'."""
    if isinstance(v, (float, np.floating)):
        return str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else repr(float(v))
    return str(v)


def _label_type(classes):
    kind = np.asarray(classes).dtype.kind
    if kind in "iu":
        return "int"
    if kind == "f":
        return "float"
    if kind == "b":
        return "bool"
    return "str"


def save_model(estimator, path):
    """Write a fitted estimator to `path` (text)."""
    from .multiclass import MulticlassSSVM
    if not isinstance(estimator, MulticlassSSVM):
        raise TypeError(f"cannot save a {type(estimator).__name__}")
    estimator._check_fitted()
    classes = estimator.classes_
    ltype = _label_type(classes)
    if ltype == "str" and any(not str(c) or any(ch.isspace() for ch in str(c)) for c in classes):
        raise ValueError("labels containing whitespace (or empty labels) cannot be written to a model file")
    labels = [format_label(c) for c in classes]
    bias = estimator._bias
    W = estimator.coef_.T
    if bias > 0:
        W = np.vstack([W, estimator.intercept_ / bias])
    lines = [f"{MAGIC} {FORMAT_VERSION}",
             "structure multiclass",
             f"solver {estimator.solver}",
             f"loss {estimator.loss}",
             f"C {estimator.C!r}",
             f"label_type {ltype}",
             f"nr_class {len(classes)}",
             "label " + " ".join(labels),
             f"nr_feature {estimator.n_features_in_}",
             f"bias {bias!r}" if bias > 0 else "bias -1",
             "w"]
    body = "\n".join(" ".join("%.17g" % v for v in row) for row in W)
    text = "\n".join(lines) + "\n" + body + ("\n" if len(W) else "")
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".ssvm-model-", dir=directory)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_model(path):
    """Read a model file written by save_model / ssvm-train; returns a fitted estimator."""
    from .multiclass import MulticlassSSVM
    try:
        with open(path, "r") as fh:
            lines = fh.read().split("\n")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a model file (binary content)") from None

    def fail(lineno, msg):
        raise ValueError(f"{path}:{lineno}: {msg}")

    if not lines or not lines[0].startswith(MAGIC):
        fail(1, f"not an ssvmlinear model file (expected '{MAGIC} {FORMAT_VERSION}')")
    parts = lines[0].split()
    if len(parts) != 2 or parts[1] != str(FORMAT_VERSION):
        fail(1, f"unsupported model format version {parts[1:]}")
    header = {}
    lineno = 1
    while True:
        if lineno >= len(lines):
            fail(lineno, "header ends before the 'w' line")
        line = lines[lineno].strip()
        lineno += 1
        if line == "w":
            break
        key, _, value = line.partition(" ")
        if not value:
            fail(lineno, f"malformed header line {line!r}")
        header[key] = (lineno, value)
    for key in ("structure", "solver", "loss", "label_type", "nr_class", "label", "nr_feature", "bias"):
        if key not in header:
            fail(lineno, f"header has no '{key}' line")
    if header["structure"][1] != "multiclass":
        fail(header["structure"][0], f"unknown structure {header['structure'][1]!r}")

    def number(key, conv):
        ln, v = header[key]
        try:
            return conv(v)
        except ValueError:
            fail(ln, f"bad {key} value {v!r}")

    K = number("nr_class", int)
    d = number("nr_feature", int)
    bias = number("bias", float)
    C = number("C", float) if "C" in header else 1.0
    if K < 1 or d < 0:
        fail(header["nr_class"][0], "nr_class must be >= 1 and nr_feature >= 0")
    ltype = header["label_type"][1]
    conv = {"int": int, "float": float, "str": str, "bool": lambda s: s == "True"}.get(ltype)
    if conv is None:
        fail(header["label_type"][0], f"unknown label_type {ltype!r}")
    toks = header["label"][1].split()
    if len(toks) != K:
        fail(header["label"][0], f"{len(toks)} labels for nr_class {K}")
    try:
        classes = np.array([conv(t) for t in toks])
    except ValueError:
        fail(header["label"][0], f"labels do not parse as {ltype}")
    n_rows = d + (1 if bias > 0 else 0)
    W = np.empty((n_rows, K))
    for r in range(n_rows):
        ln = lineno + r
        if ln >= len(lines) or not lines[ln].strip():
            fail(ln + 1, f"expected {n_rows} weight lines, found {r} (truncated file?)")
        vals = lines[ln].split()
        if len(vals) != K:
            fail(ln + 1, f"expected {K} weights, found {len(vals)}")
        try:
            W[r] = [float(v) for v in vals]
        except ValueError:
            fail(ln + 1, "weights must be numbers")
    if not np.all(np.isfinite(W)):
        fail(lineno + 1, "weights must be finite")
    rest = [ln for ln in lines[lineno + n_rows:] if ln.strip()]
    if rest:
        fail(lineno + n_rows + 1, "unexpected content after the weights")
    est = MulticlassSSVM(C=C, solver=header["solver"][1], loss=header["loss"][1],
                         fit_intercept=bias > 0, intercept_scaling=bias if bias > 0 else 1.0)
    est._set_weights(W.ravel(), d, classes, bias)
    est.n_iter_ = 0
    return est
