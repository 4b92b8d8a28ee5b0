"""Plain-text model files in LIBLINEAR's spirit: a readable header, a line `w`, then one line of
weights per feature (one column per class, tag or label, plus a line for the bias); a chain model
adds a block `transition` (K lines, rows = previous tag) and, when enabled, `start` and `end` (one
line each). A multilabel model has the multiclass layout (its `label` line lists the K labels and
the header adds `normalize_loss`). Written atomically (temporary file + rename); %.17g
round-trips exactly."""
import numpy as np

from .utils import write_atomic

MAGIC = "ssvmlinear_model"
FORMAT_VERSION = 1


def format_label(v):
    """Labels as users wrote them: 3.0 -> '3', 2.5 -> '2.5', 'cat' -> 'cat'."""
    if isinstance(v, (float, np.floating)):
        return str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else repr(float(v))
    return str(v)


def _label_type(classes):
    kind = np.asarray(classes).dtype.kind
    return {"i": "int", "u": "int", "f": "float", "b": "bool"}.get(kind, "str")


def _estimator_classes():
    from .multiclass import MulticlassSSVM
    from .chain import ChainSSVM
    from .multilabel import MultiLabelSSVM
    return {"multiclass": MulticlassSSVM, "chain": ChainSSVM, "multilabel": MultiLabelSSVM}


def _blocks(est):
    """(name, 2-D array) blocks after the header, in file order."""
    W = est.coef_.T
    if est._bias > 0:
        W = np.vstack([W, est.intercept_ / est._bias])
    blocks = [("w", W)]
    if hasattr(est, "transition_"):
        blocks.append(("transition", est.transition_))
        if est.start_end:
            blocks += [("start", est.start_[None, :]), ("end", est.end_[None, :])]
    return blocks


def save_model(estimator, path):
    """Write a fitted estimator to `path` (text)."""
    kinds = {cls: name for name, cls in _estimator_classes().items()}
    if type(estimator) not in kinds:
        raise TypeError(f"cannot save a {type(estimator).__name__}")
    structure = kinds[type(estimator)]
    estimator._check_fitted()
    classes = estimator.classes_
    ltype = _label_type(classes)
    if ltype == "str" and any(not str(c) or any(ch.isspace() for ch in str(c)) for c in classes):
        raise ValueError("labels containing whitespace (or empty labels) cannot be written to a model file")
    bias = estimator._bias
    lines = [f"{MAGIC} {FORMAT_VERSION}",
             f"structure {structure}",
             f"solver {estimator._solver_name}",
             f"loss {estimator.loss}",
             f"C {estimator.C!r}",
             f"label_type {ltype}",
             f"nr_class {len(classes)}",
             "label " + " ".join(format_label(c) for c in classes),
             f"nr_feature {estimator.n_features_in_}",
             f"bias {bias!r}" if bias > 0 else "bias -1"]
    if structure == "chain":
        lines += [f"start_end {int(bool(estimator.start_end))}",
                  f"normalize_loss {int(bool(estimator.normalize_loss))}"]
    elif structure == "multilabel":
        lines.append(f"normalize_loss {int(bool(estimator.normalize_loss))}")
    for name, block in _blocks(estimator):
        lines.append(name)
        lines += [" ".join("%.17g" % v for v in row) for row in block]
    text = "\n".join(lines) + "\n"
    write_atomic(path, text)


def load_model(path):
    """Read a model file written by save_model / ssvm-train; returns a fitted estimator."""
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
    lineno = 1  # index of the next line to read (0-based); file line numbers are lineno + 1
    while True:
        if lineno >= len(lines):
            fail(lineno, "header ends before the 'w' line")
        line = lines[lineno].strip()
        lineno += 1
        if line == "w":
            break
        key, _, value = line.partition(" ")
        if key[:1].isdigit() or key[:1] in "-+.":
            fail(lineno, "weights before the 'w' line (is the 'w' line missing?)")
        if not value:
            fail(lineno, f"malformed header line {line!r}")
        header[key] = (lineno, value)
    for key in ("structure", "solver", "loss", "label_type", "nr_class", "label", "nr_feature", "bias"):
        if key not in header:
            fail(lineno, f"header has no '{key}' line")
    structure = header["structure"][1]
    classes_by_name = _estimator_classes()
    if structure not in classes_by_name:
        fail(header["structure"][0], f"unknown structure {structure!r}")

    def number(key, conv, default=None):
        if key not in header:
            return default
        ln, v = header[key]
        try:
            return conv(v)
        except ValueError:
            fail(ln, f"bad {key} value {v!r}")

    K = number("nr_class", int)
    d = number("nr_feature", int)
    bias = number("bias", float)
    C = number("C", float, 1.0)
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

    def read_block(start, n_rows, n_cols, name):
        # checked before allocating, so that a bad header cannot ask for more memory than the file holds
        if start + n_rows > len(lines):
            fail(len(lines), f"block '{name}' needs {n_rows} lines but the file ends first (truncated or bad header?)")
        chars = sum(len(ln) for ln in lines[start:start + n_rows])
        if chars < n_rows * (2 * n_cols - 1):   # a weight takes at least one digit and a separator
            fail(start + 1, f"header says block '{name}' holds {n_rows} x {n_cols} = {n_rows * n_cols} weights "
                            f"({n_rows * n_cols * 8 / 2**30:.3g} GiB), but its {n_rows} lines hold only {chars} "
                            "characters (bad nr_class / nr_feature?)")
        B = np.empty((n_rows, n_cols))
        for r in range(n_rows):
            ln = start + r
            if ln >= len(lines) or not lines[ln].strip():
                fail(ln + 1, f"expected {n_rows} lines in block '{name}', found {r} (truncated file?)")
            vals = lines[ln].split()
            if len(vals) != n_cols:
                fail(ln + 1, f"expected {n_cols} weights, found {len(vals)}")
            try:
                B[r] = [float(v) for v in vals]
            except ValueError:
                fail(ln + 1, "weights must be numbers")
            if not np.all(np.isfinite(B[r])):
                fail(ln + 1, "weights must be finite")
        return B, start + n_rows

    def expect(name, at):
        if at >= len(lines) or lines[at].strip() != name:
            fail(at + 1, f"expected the line '{name}'")
        return at + 1

    n_cols = d + (1 if bias > 0 else 0)
    U, lineno = read_block(lineno, n_cols, K, "w")
    parts = [U.ravel()]
    kwargs = dict(C=C, loss=header["loss"][1], fit_intercept=bias > 0, intercept_scaling=bias if bias > 0 else 1.0)
    if structure == "chain":
        start_end = bool(number("start_end", int, 0))
        kwargs.update(solver=header["solver"][1], start_end=start_end,
                      normalize_loss=bool(number("normalize_loss", int, 0)))
        T, lineno = read_block(expect("transition", lineno), K, K, "transition")
        parts.append(T.ravel())
        if start_end:
            S, lineno = read_block(expect("start", lineno), 1, K, "start")
            E, lineno = read_block(expect("end", lineno), 1, K, "end")
            parts += [S.ravel(), E.ravel()]
    elif structure == "multilabel":
        kwargs.update(solver=header["solver"][1], normalize_loss=bool(number("normalize_loss", int, 0)))
    else:
        kwargs.update(solver=header["solver"][1])
    rest = [ln for ln in lines[lineno:] if ln.strip()]
    if rest:
        fail(lineno + 1, "unexpected content after the weights")
    est = classes_by_name[structure](**kwargs)
    est._set_weights(np.concatenate(parts), d, classes, bias)
    est.n_iter_ = 0
    return est
