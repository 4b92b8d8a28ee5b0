#!/usr/bin/env python
"""Fuzzing of every entry point that reads untrusted input.

Entry points (``ENTRIES``):

    svmlight   ssvmlinear.load_svmlight_file(path, zero_based=False, kind=...)   (plain, gzip, bzip2)
    model      ssvmlinear.model_io.load_model(path), then predict on a small X of the model's width
    hierarchy  ssvmlinear.hierarchy.read_hierarchy(path)
    edges      ssvmlinear.multilabel.read_edges_file(path, label_values)
    ssvmdata   ssvmlinear.datacache.load_ssvmdata(folder), then ssvm-train -q -m 3 folder model

The standard checked for every input: the entry point succeeds, or raises ValueError / OSError
whose message names the file (the folder for .ssvmdata) and, for the line-oriented text formats
(svmlight, model, hierarchy, edges), the line (``path:LINE:``) -- unless the problem is file-wide
(``FILE_WIDE``). Never a crash (a signal), a hang (``--timeout``), another exception type, or an
allocation the data does not justify: workers run under ``RLIMIT_AS`` (``--mem``, 4 GiB), so such
an allocation is a MemoryError, i.e. a foreign exception.

Seeds are generated at run time (small files and folders, models trained for every structure);
each input is one seed with 1-4 stacked mutations, derived from ``random.Random(f"{seed}:{entry}:{i}")``
alone, so an input is reproduced by its (seed, entry, index) (``--only-index``). Inputs run one at
a time in a worker subprocess (``python tests/fuzzing.py --worker``) fed through a pipe; the
parent detects a crash from the worker's end (its return code, the last lines of its stderr, with
faulthandler's traceback), a hang from a per-input timeout (the worker is killed and restarted),
saves every finding's input to the findings folder (``--keep``) and goes on.

Script::

    python tests/fuzzing.py --n 100000 --entry all --seed 1 --keep /tmp/fuzz-findings

``--n`` is the number of inputs per entry point. The exit status is 1 when anything was found.
"""
import argparse
import bz2
import collections
import gzip
import io
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

ENTRIES = ("svmlight", "model", "hierarchy", "edges", "ssvmdata")
LINE_ORIENTED = ("svmlight", "model", "hierarchy", "edges")
THIS_FILE = os.path.abspath(__file__)
MEM_LIMIT = 4 << 30
TIMEOUT = 10.0
MAX_TEXT = 8 << 20                      # a mutated text input is cut to 8 MiB

# The finding categories, in report order (besides "ok" and "handled").
FINDINGS = ("crash", "hang", "foreign", "nofile", "noline", "predict", "train")
CATEGORY_TEXT = {
    "ok": "ok", "handled": "handled errors", "crash": "crashes", "hang": "hangs",
    "foreign": "foreign exceptions", "nofile": "messages without the file",
    "noline": "messages without a line", "predict": "loaded model unusable (predict error, non-finite weights)",
    "train": "ssvm-train misbehaviour (loaded folder)",
}

# Messages about the file as a whole, where no line can be named (line-oriented formats only).
FILE_WIDE = {
    "hierarchy": [r"no 'parent child' line", r"the hierarchy has no root", r"the hierarchy has a cycle"],
    "model": [r"GiB are available"],        # utils.check_memory: the model does not fit in memory
    "svmlight": [],
    "edges": [],
}

# ----------------------------------------------------------------------------------------- seeds

SVM_MULTICLASS = b"1 1:0.5 3:1.25\n2 2:1 4:-3e-2\n3 1:1 5:2 # comment\n-1 2:2.5 6:1e-3\n2.5 7:4\n"
SVM_MULTICLASS2 = b"# header comment\n\n0 1:1\n1 2:1 3:0\n0 1:-1 2:-1\n"
SVM_MULTILABEL = b"0,1 1:1 2:0.5\n2 1:0.3 3:1\n 2:1\n1,2,3 4:0.25\n3 1:1 4:1\n"
SVM_SEQUENCE = (b"3 qid:1 1:1 2:0.5\n1 qid:1 3:1\n2 qid:1 1:0.5 4:1\n2 qid:2 2:1\n1 qid:2 4:1\n"
                b"3 qid:7 1:1 3:2\n")

HIER_SEEDS = [
    b"1 2\n1 3\n2 4\n2 5\n3 6\n3 7\n",
    b"# a tree with sparse ids\n100 2000  # comment\n100 30000\n\n2000 7\n2000 8\n",
    b"1 2\n1 3\n2 4\n3 4\n2 5\n3 6\n",                         # a DAG (4 has two parents)
    b"1 2\n1 3\n7 8\n7 9\n",                                   # two roots
    b"-5 3\n-5 4\n3 10\n",
]

EDGE_SEEDS = [   # (text, label values)
    (b"0 1\n1 2\n2 3\n", list(range(6))),
    (b"# chain\n0 5\n5 2 # x\n\n4 3\n", list(range(6))),
    (b"2 7\n0 100\n", [0, 2, 5, 7, 100]),
    (b"1 0\n", [0, 1]),
]

EXTREME_NUMBERS = [
    "1e300", "-1e300", "1e400", "-1e400", "1e309", "1e-400", "4.9e-324", "inf", "-inf", "+inf", "nan", "NaN",
    "-nan", "Infinity", "-Infinity", "99999999999999999999", "-99999999999999999999", "2147483647",
    "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296", "9223372036854775807",
    "9223372036854775808", "-9223372036854775809", "18446744073709551616", "0", "-0", "+0", "-1", "+1",
    "1_0", "1__0", "\u0661", "\u0663\u0660", "\uff11", "\u00b2", "", "1" * 400, "9" * 5000, "0x10",
    "0b1", "1.5", "1e", ".", "-", "+", "e5", "1e5", ".5", "5.", "--1", "1-", "1e+", "1.2.3", "0.0",
    "1e-300", "3", "2", "1", "100000", "1000000000", "-2", "1 1", ":", ",", "#", "\x00", "\xe9",
    "1e30000", "0" * 30 + "1", "٣", "True", "None", "null",
]

MODEL_VALUES = [   # extra values for model header fields
    ")(", "(", ")", "()", "[", "int8", "int64", "float16", "float32", "object", "O", "U10", "S0", "S", "V8",
    "m8", "M8[ns]", "c16", "complex", "(2,)i4", "i4,i4", "[('a','i4')]", "bool", "b", "?", "sparse", "binary",
    "multilabel", "single", "hsvm", "nhsvm", "flat", "shared", "hamming", "zero-one", "normalized", "foo",
    "multiclass", "chain", "hierarchy", "int", "float", "str", "sdm", "margin", "lse", "1:2", "0:0", "0:1 1:0",
    "5:99999999999999999999", "a:b", "1:2:3", "-1:0", "0:-1", "1 2 3", "1,0", "{", "'", '"', "\\", "u1",
    "<i8", ">f8", "=f8", "|b1", "float64,int8", "f8,f8", "(3,3)f8", "i", "f", "d", "e", "g",
]

MODEL_KEYS = ["structure", "solver", "loss", "C", "label_type", "nr_class", "label", "nr_feature", "bias",
              "start_end", "normalize_loss", "output", "edges", "model", "task_loss", "hierarchy", "alpha",
              "nr_w_rows"]


def _synthetic(rng, n, d, K):
    import numpy as np
    import scipy.sparse as sp
    X = sp.random(n, d, density=0.6, random_state=int(rng.integers(1 << 30)), format="csr",
                  data_rvs=rng.standard_normal)
    W = rng.standard_normal((K, d))
    y = np.argmax(X @ W.T + 0.3 * rng.standard_normal((n, K)), axis=1)
    y[:K] = np.arange(K)
    return X.tocsr(), y


def text_seeds(entry, root):
    """[(name, bytes, params)] for the text entry points (params: the worker's extra arguments)."""
    if entry == "svmlight":
        out = []
        for name, text, kinds in (("multiclass", SVM_MULTICLASS, ["auto", "multiclass"]),
                                  ("multiclass2", SVM_MULTICLASS2, ["auto", "multiclass", "multilabel"]),
                                  ("multilabel", SVM_MULTILABEL, ["auto", "multilabel"]),
                                  ("sequence", SVM_SEQUENCE, ["auto", "sequence", "multiclass"])):
            out.append((name + ".svm", text, {"kinds": kinds}))
            out.append((name + ".svm.gz", gzip.compress(text, mtime=0), {"kinds": kinds, "compress": "gz"}))
        out.append(("multilabel.svm.bz2", bz2.compress(SVM_MULTILABEL), {"kinds": ["auto", "multilabel"],
                                                                         "compress": "bz2"}))
        return out
    if entry == "hierarchy":
        return [(f"h{k}.hier", t, {}) for k, t in enumerate(HIER_SEEDS)]
    if entry == "edges":
        return [(f"e{k}.edges", t, {"label_values": lv}) for k, (t, lv) in enumerate(EDGE_SEEDS)]
    if entry == "model":
        return model_seeds(root)
    raise ValueError(entry)


def model_seeds(root):
    """Small models of every structure, trained here (CLI and API) and written as model files."""
    import contextlib
    import numpy as np
    import scipy.sparse as sp
    from ssvmlinear import dump_svmlight_file
    from ssvmlinear.cli import train_main
    from ssvmlinear.model_io import save_model
    from ssvmlinear.multilabel import MultiLabelSSVM
    from ssvmlinear.chain import ChainSSVM

    root = os.path.join(root, "model-seeds")
    os.makedirs(root, exist_ok=True)
    rng = np.random.default_rng(0)
    p = lambda name: os.path.join(root, name)
    X, y = _synthetic(rng, 24, 6, 3)
    dump_svmlight_file(X, y, p("mc.svm"))
    Xs, ys = _synthetic(rng, 18, 5, 3)
    dump_svmlight_file(Xs, ys, p("seq.svm"), lengths=[4, 5, 4, 5])
    Y = (rng.random((24, 4)) < 0.4).astype(np.int8)
    Y[:4] = np.eye(4, dtype=np.int8)
    dump_svmlight_file(X, sp.csr_matrix(Y), p("ml.svm"))
    with open(p("tree.hier"), "w") as fh:        # heap-numbered tree 1..15, leaves 8..15
        fh.write("".join(f"{k // 2} {k}\n" for k in range(2, 16)))
    with open(p("dag.hier"), "w") as fh:
        fh.write("1 2\n1 3\n2 4\n3 4\n2 5\n3 6\n")
    Xh, yh = _synthetic(rng, 32, 6, 8)
    dump_svmlight_file(Xh, yh + 8, p("h.svm"))
    Xd, yd = _synthetic(rng, 18, 6, 3)
    dump_svmlight_file(Xd, np.array([4, 5, 6])[yd], p("hdag.svm"))
    Yh = np.zeros((24, 16), dtype=np.int8)
    for i in range(24):
        Yh[i, 8 + rng.choice(8, size=1 + i % 2, replace=False)] = 1
    dump_svmlight_file(X, sp.csr_matrix(Yh), p("hml.svm"))

    runs = [("multiclass-bias", ["-B", "1", p("mc.svm")]),
            ("multiclass", [p("mc.svm")]),
            ("chain", [p("seq.svm")]),
            ("chain-bias", ["-B", "1", p("seq.svm")]),
            ("multilabel", ["-B", "1", p("ml.svm")]),
            ("multilabel-chowliu", ["-E", "chow-liu", p("ml.svm")]),
            ("hier-nhsvm", ["-H", p("tree.hier"), "-M", "nhsvm", "-B", "1", p("h.svm")]),
            ("hier-hsvm", ["-H", p("tree.hier"), "-M", "hsvm", p("h.svm")]),
            ("hier-shared", ["-H", p("tree.hier"), "-M", "shared", p("h.svm")]),
            ("hier-flat", ["-H", p("tree.hier"), "-M", "flat", p("h.svm")]),
            ("hier-dag", ["-H", p("dag.hier"), p("hdag.svm")]),
            ("hier-multilabel", ["-H", p("tree.hier"), p("hml.svm")])]
    out = []
    for name, args in runs:
        model = p(name + ".model")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            rc = train_main(["-q", "-m", "3"] + args[:-1] + [args[-1], model])
        if rc != 0:
            raise RuntimeError(f"seed model {name}: ssvm-train failed: {err.getvalue()}")
        out.append(model)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = ChainSSVM(start_end=True, normalize_loss=True, max_iter=3).fit(Xs, ys, [4, 5, 4, 5])
        save_model(est, p("chain-start-end.model"))
        est = MultiLabelSSVM(max_iter=3).fit(X, (y == 1).astype(np.int64))
        save_model(est, p("multilabel-binary.model"))
        est = MultiLabelSSVM(max_iter=3, normalize_loss=True).fit(X, Y)       # dense int8 Y: output int8
        save_model(est, p("multilabel-dense.model"))
        est = MultiLabelSSVM(max_iter=3, edges=[(0, 1), (1, 2)]).fit(X, Y)
        save_model(est, p("multilabel-edges.model"))
    out += [p("chain-start-end.model"), p("multilabel-binary.model"), p("multilabel-dense.model"),
            p("multilabel-edges.model")]
    seeds = []
    for m in out:
        with open(m, "rb") as fh:
            seeds.append((os.path.basename(m), fh.read(), {}))
    seeds.append(("multiclass-v1.model", _format1(seeds[0][1]), {}))
    return seeds


def _format1(text):
    """A format-1 model (every weight row, no index, no nr_w_rows) from a format-2 one."""
    lines = text.decode().splitlines()
    head = {ln.split(" ", 1)[0]: ln.split(" ", 1)[1] for ln in lines[1:lines.index("w")]}
    d, K = int(head["nr_feature"]), int(head["nr_class"])
    rows = d + (1 if float(head["bias"]) > 0 else 0)
    listed = {int(ln.split()[0]): ln.split(None, 1)[1] for ln in lines[lines.index("w") + 1:] if ln.strip()}
    out = ["ssvmlinear_model 1"] + [ln for ln in lines[1:lines.index("w")] if not ln.startswith("nr_w_rows")] + ["w"]
    out += [listed.get(r, " ".join(["0"] * K)) for r in range(1, rows + 1)]
    return ("\n".join(out) + "\n").encode()


def ssvmdata_seeds(root):
    """[(folder, info)]: small .ssvmdata folders of the three kinds (save_ssvmdata and ssvm-convert)."""
    import contextlib
    import numpy as np
    import scipy.sparse as sp
    from ssvmlinear.datacache import save_ssvmdata, convert_main
    root = os.path.join(root, "ssvmdata-seeds")
    os.makedirs(root, exist_ok=True)
    rng = np.random.default_rng(1)
    out = []
    X, y = _synthetic(rng, 12, 5, 3)
    save_ssvmdata(os.path.join(root, "mc.ssvmdata"), X, y.astype(np.float64))
    out.append(os.path.join(root, "mc.ssvmdata"))
    Y = (rng.random((12, 4)) < 0.4).astype(np.int8)
    Y[:4] = np.eye(4, dtype=np.int8)
    save_ssvmdata(os.path.join(root, "ml.ssvmdata"), X, sp.csr_matrix(Y))
    out.append(os.path.join(root, "ml.ssvmdata"))
    save_ssvmdata(os.path.join(root, "seq.ssvmdata"), X, y.astype(np.float64), np.array([3, 4, 5]))
    out.append(os.path.join(root, "seq.ssvmdata"))
    for name, text in (("conv-ml", SVM_MULTILABEL), ("conv-seq", SVM_SEQUENCE)):
        src = os.path.join(root, name + ".svm")
        with open(src, "wb") as fh:
            fh.write(text)
        with contextlib.redirect_stdout(io.StringIO()):
            if convert_main(["-q", src, os.path.join(root, name + ".ssvmdata")]) != 0:
                raise RuntimeError(f"seed {name}: ssvm-convert failed")
        out.append(os.path.join(root, name + ".ssvmdata"))
    return out


# --------------------------------------------------------------------------------- text mutators

INTERESTING = [b" ", b"\t", b"\n", b"\r", b":", b",", b"#", b"-", b"+", b".", b"0", b"1", b"9", b"e", b"E",
               b"\x00", b"\xff", b"\xc2\xa0", b"qid:", b"\xd9\xa1", b"\r\n", b"::", b",,", b"\x1f\x8b", b"BZh"]
TOKEN_RE = re.compile(rb"[^\s:,#]+")


def _pos(rng, data, end=False):
    return rng.randint(0, len(data)) if end else rng.randrange(len(data)) if data else 0


def m_flip(rng, data):
    if not data:
        return data, "flip: empty"
    i = _pos(rng, data)
    b = rng.randrange(8)
    data[i] ^= 1 << b
    return data, f"flip bit {b} of byte {i}"


def m_insert(rng, data):
    i = _pos(rng, data, True)
    if rng.random() < 0.6:
        ins = rng.choice(INTERESTING) * rng.choice([1, 1, 1, 2, 3, 50])
    else:
        ins = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    data[i:i] = ins
    return data, f"insert {bytes(ins[:40])!r} at {i}"


def m_delete(rng, data):
    if not data:
        return data, "delete: empty"
    i = _pos(rng, data)
    k = rng.choice([1, 1, 2, 4, 16, 64])
    del data[i:i + k]
    return data, f"delete {k} bytes at {i}"


def m_duplicate(rng, data):
    if not data:
        return data, "duplicate: empty"
    i = _pos(rng, data)
    k = rng.choice([1, 2, 8, 32, 128])
    chunk = bytes(data[i:i + k])
    times = rng.choice([1, 1, 2, 10, 1000])
    j = _pos(rng, data, True)
    data[j:j] = chunk * times
    return data, f"duplicate bytes {i}..{i + k} x{times} at {j}"


def m_truncate(rng, data):
    i = _pos(rng, data, True)
    del data[i:]
    return data, f"truncate at {i}"


def _tokens(data):
    return [m.span() for m in TOKEN_RE.finditer(bytes(data))]


def _extreme(rng, entry):
    pool = EXTREME_NUMBERS + (MODEL_VALUES if entry == "model" else [])
    v = rng.choice(pool)
    if rng.random() < 0.1:       # glue a sign or an exponent on
        v = rng.choice(["-", "+", ""]) + v + rng.choice(["", "e400", "e-400", "0", ".0", "_"])
    return v.encode("utf-8", "surrogateescape")


def m_token_extreme(rng, data, entry="svmlight"):
    toks = _tokens(data)
    if not toks:
        return m_insert(rng, data)
    s, e = rng.choice(toks)
    new = _extreme(rng, entry)
    old = bytes(data[s:e])
    data[s:e] = new
    return data, f"replace token {old[:40]!r} at {s} by {new[:40]!r}"


def m_token_swap(rng, data):
    toks = _tokens(data)
    if len(toks) < 2:
        return data, "swap: too few tokens"
    (a, b), (c, d) = sorted(rng.sample(toks, 2))
    ta, tc = bytes(data[a:b]), bytes(data[c:d])
    data[c:d] = ta
    data[a:b] = tc
    return data, f"swap tokens {ta[:30]!r}@{a} and {tc[:30]!r}@{c}"


def m_token_dup(rng, data):
    toks = _tokens(data)
    if not toks:
        return data, "token dup: none"
    s, e = rng.choice(toks)
    tok = bytes(data[s:e])
    sep = rng.choice([b" ", b":", b",", b""])
    data[e:e] = sep + tok
    return data, f"duplicate token {tok[:30]!r} at {s} with sep {sep!r}"


def _lines(data):
    return bytes(data).split(b"\n")


def m_lines(rng, data):
    lines = _lines(data)
    op = rng.choice(["drop", "dup", "swap", "shuffle", "blank", "comment", "join", "crlf", "nofinal", "long",
                     "reverse", "many"])
    i = rng.randrange(len(lines))
    if op == "drop":
        del lines[i]
    elif op == "dup":
        lines.insert(i, lines[i])
    elif op == "swap":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "shuffle":
        rng.shuffle(lines)
    elif op == "blank":
        lines.insert(i, rng.choice([b"", b"   ", b"\t", b"#", b"# x y z"]))
    elif op == "comment":
        lines[i] = b"#" + lines[i]
    elif op == "join" and i + 1 < len(lines):
        lines[i:i + 2] = [lines[i] + b" " + lines[i + 1]]
    elif op == "crlf":
        lines = [ln + b"\r" for ln in lines]
    elif op == "nofinal":
        while lines and lines[-1] == b"":
            lines.pop()
    elif op == "long":
        lines[i] = lines[i] + (b" " + lines[i].split(b" ")[-1]) * rng.choice([10, 1000, 20000])
    elif op == "reverse":
        lines.reverse()
    elif op == "many":
        lines = lines * rng.choice([2, 50, 2000])
    return bytearray(b"\n".join(lines)), f"lines: {op} (line {i + 1})"


def m_header(rng, data):
    """Model files: change a header line (key or value), drop it, repeat it or add one."""
    lines = _lines(data)
    try:
        w = lines.index(b"w")
    except ValueError:
        w = min(len(lines), 12)
    if w <= 1:
        return m_lines(rng, data)
    i = rng.randrange(1, w)
    key, _, value = lines[i].partition(b" ")
    op = rng.choices(["value", "value", "value", "element", "drop", "dup", "key", "add", "magic"],
                     weights=[3, 3, 3, 3, 1, 1, 1, 2, 1])[0]
    if op == "value":
        new = key + b" " + _extreme(rng, "model")
    elif op == "element":             # one element of a list value (label, alpha, edges, hierarchy)
        toks = value.split(b" ")
        j = rng.randrange(len(toks))
        if b":" in toks[j] and rng.random() < 0.5:
            a, _, b = toks[j].partition(b":")
            toks[j] = (a + b":" + _extreme(rng, "model")) if rng.random() < 0.5 else (_extreme(rng, "model") + b":" + b)
        else:
            toks[j] = _extreme(rng, "model")
        if rng.random() < 0.2:
            del toks[j]
        new = key + b" " + b" ".join(toks)
    elif op == "drop":
        del lines[i]
        return bytearray(b"\n".join(lines)), f"header: drop line {i + 1} ({key.decode(errors='replace')})"
    elif op == "dup":
        lines.insert(i, lines[i])
        return bytearray(b"\n".join(lines)), f"header: duplicate line {i + 1}"
    elif op == "key":
        new = rng.choice(MODEL_KEYS).encode() + b" " + value
    elif op == "add":
        new = rng.choice(MODEL_KEYS).encode() + b" " + _extreme(rng, "model")
        lines.insert(i, new)
        return bytearray(b"\n".join(lines)), f"header: add line {i + 1}: {new[:60]!r}"
    else:
        lines[0] = rng.choice([b"ssvmlinear_model 3", b"ssvmlinear_model", b"ssvmlinear_model 1",
                               b"ssvmlinear_model 2 x", b"ssvmlinear_modelx 2", b"ssvmlinear_model 01"])
        return bytearray(b"\n".join(lines)), f"header: magic line -> {lines[0]!r}"
    lines[i] = new
    return bytearray(b"\n".join(lines)), f"header: line {i + 1} -> {new[:80]!r}"


def m_weights(rng, data):
    """Model files: change the weight section (a row's index or count, a block name)."""
    lines = _lines(data)
    try:
        w = lines.index(b"w")
    except ValueError:
        return m_lines(rng, data)
    body = list(range(w + 1, len(lines)))
    if not body:
        return m_lines(rng, data)
    i = rng.choice(body)
    op = rng.choice(["index", "drop_value", "add_value", "name", "drop_line", "dup_line"])
    toks = lines[i].split(b" ")
    if op == "index" and toks:
        toks[0] = _extreme(rng, "model")
    elif op == "drop_value" and len(toks) > 1:
        del toks[rng.randrange(len(toks))]
    elif op == "add_value":
        toks.append(_extreme(rng, "model"))
    elif op == "name":
        lines[i] = rng.choice([b"transition", b"start", b"end", b"pairwise", b"w", b"x", b""])
        return bytearray(b"\n".join(lines)), f"weights: line {i + 1} -> {lines[i]!r}"
    elif op == "drop_line":
        del lines[i]
        return bytearray(b"\n".join(lines)), f"weights: drop line {i + 1}"
    elif op == "dup_line":
        lines.insert(i, lines[i])
        return bytearray(b"\n".join(lines)), f"weights: duplicate line {i + 1}"
    lines[i] = b" ".join(toks)
    return bytearray(b"\n".join(lines)), f"weights: {op} on line {i + 1} -> {lines[i][:80]!r}"


BYTE_MUTATORS = [m_flip, m_insert, m_delete, m_duplicate, m_truncate]


def mutate_text(rng, data, entry):
    """1-4 stacked mutations of bytes `data`; returns (bytes, [descriptions])."""
    data = bytearray(data)
    desc = []
    for _ in range(min(4, 1 + int(rng.expovariate(1.2)))):
        r = rng.random()
        if entry == "model" and r < 0.35:
            data, d = m_header(rng, data)
        elif entry == "model" and r < 0.5:
            data, d = m_weights(rng, data)
        elif r < 0.75:
            kind = rng.choices(["extreme", "swap", "dup", "lines"], weights=[6, 1, 1, 2])[0]
            if kind == "extreme":
                data, d = m_token_extreme(rng, data, entry)
            elif kind == "swap":
                data, d = m_token_swap(rng, data)
            elif kind == "dup":
                data, d = m_token_dup(rng, data)
            else:
                data, d = m_lines(rng, data)
        else:
            data, d = rng.choice(BYTE_MUTATORS)(rng, data)
        desc.append(d)
        if len(data) > MAX_TEXT:
            del data[MAX_TEXT:]
            desc.append(f"cut to {MAX_TEXT} bytes")
    return bytes(data), desc


# ---------------------------------------------------------------------------- folder mutators

def _npy_names(folder):
    return sorted(f for f in os.listdir(folder) if f.endswith(".npy"))


def _json_text(v):
    """JSON text of v, with Python's inf/nan spelled as JSON extensions and huge literals kept."""
    if isinstance(v, _Raw):
        return v.text
    if isinstance(v, list):
        return "[" + ", ".join(_json_text(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_json_text(x)}" for k, x in v.items()) + "}"
    return json.dumps(v)


class _Raw:
    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


JSON_VALUES = [[], None, "x", "12", "", 1.5, -1, 0, 1, 2, True, False, {"a": 1}, 2**31, 2**63, 2**64, -2**63 - 1,
               _Raw("1e400"), _Raw("-1e400"), _Raw("NaN"), _Raw("Infinity"), _Raw("-Infinity"), _Raw("1e308"),
               _Raw("99999999999999999999999"), _Raw("1" * 5000), 100000, 10**12, [1e400, 2], [1, 2, 3], [-1, 5],
               [12], [[12, 5]], ["12", "5"], [None, 5], [1.5, 5], [12, -5], [0, 0], [12, 0], [2**40, 5], [12, 2**40],
               [_Raw("1e400"), 2], [12, _Raw("1e400")], [_Raw("NaN"), 5], "multiclass", "multilabel", "sequence"]


def m_meta(rng, folder, info):
    path = os.path.join(folder, "meta.json")
    with open(path) as fh:
        meta = json.load(fh)
    r = rng.random()
    if r < 0.15 or not isinstance(meta, dict):
        text = rng.choice(["[]", "null", '"meta"', "1", "{}", "[1, 2]", "", "{", "\x00\xff", "NaN", "1e400",
                           json.dumps([meta]), '{"format": 1}', "true"])
        desc = f"meta.json := {text!r}"
    else:
        key = rng.choice(sorted(meta) + ["shape", "shape", "shape", "n_labels", "format", "nnz", "kind"])
        op = rng.random()
        if op < 0.15:
            meta.pop(key, None)
            desc = f"meta.json: drop {key!r}"
        elif key == "shape" and op < 0.55 and isinstance(meta.get("shape"), list):
            shape = list(meta["shape"])
            j = rng.randrange(2)
            shape[j] = rng.choice([_Raw("1e400"), -1, 0, 1, 2**31, 2**40, 2**63, 2**64, 1.5, None, "5", True,
                                   _Raw("NaN"), shape[j] + 1, shape[j] - 1, 100000, 2**31 - 1, 10**9])
            meta["shape"] = shape
            desc = f"meta.json: shape := {shape!r}"
        else:
            v = rng.choice(JSON_VALUES)
            if rng.random() < 0.3 and isinstance(meta.get(key), int):
                v = meta[key] + rng.choice([-2, -1, 1, 2, 1000, 2**32])
            meta[key] = v
            desc = f"meta.json: {key} := {v!r}"
        text = _json_text(meta)
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
        fh.write(text)
    return desc


def m_array(rng, folder, info):
    import numpy as np
    names = _npy_names(folder)
    if not names:
        return "array: none left"
    name = rng.choice(names + [n for n in names if n.startswith(("indptr", "y_indptr", "lengths", "indices",
                                                                "y_indices"))])
    path = os.path.join(folder, name)
    try:
        a = np.load(path, allow_pickle=False)
    except Exception:
        return f"array: {name} unreadable already"
    op = rng.choices(["dtype", "shape", "value", "value", "value", "reverse", "shuffle", "wrap", "endian",
                      "empty", "scalar", "2d", "object", "overflow-sum"], weights=[3, 2, 5, 5, 5, 2, 1, 2, 1, 1, 1, 1, 1, 1])[0]
    if op == "dtype":
        dt = rng.choice(["float32", "int32", "int64", "uint64", "uint32", "int8", "float64", "bool", "complex128",
                         "float16", "uint8", "int16"])
        with np.errstate(all="ignore"):
            b = a.astype(dt)
        desc = f"{name}: astype {dt}"
    elif op == "shape":
        k = rng.choice([-2, -1, 1, 2, 100])
        b = a[:max(0, len(a) + k)] if k < 0 else np.concatenate([a, a[-1:].repeat(k) if len(a) else np.zeros(k, a.dtype)])
        desc = f"{name}: length {len(a)} -> {len(b)}"
    elif op in ("value", "wrap", "overflow-sum"):
        b = a.copy()
        if op == "overflow-sum" and b.dtype == np.int64 and b.size >= 2:
            # four elements, each >= 1, whose int64 sum wraps around to the original sum
            orig = int(a.sum())
            b = np.array([2**62, 2**62, 2**62, 2**62 + orig], dtype=np.int64)
            desc = f"{name}: := {b.tolist()} (sum wraps to {orig})"
        elif op == "wrap" and b.dtype.kind in "iu" and name.endswith("indptr.npy") and b.size >= 2:
            # rises by the int's own arithmetic: [0, max, min, -1, ..., end]
            info_ = np.iinfo(b.dtype)
            b = np.concatenate([[0, info_.max, info_.min, -1], a[-1:]]).astype(b.dtype)
            desc = f"{name}: := {b.tolist()} (np.diff wraps around)"
        elif b.size == 0:
            b = np.zeros(1, dtype=b.dtype)
            desc = f"{name}: empty -> [0]"
        else:
            j = rng.randrange(b.size) if rng.random() < 0.7 else rng.choice([0, 1, b.size - 1]) % b.size
            if b.dtype.kind == "f":
                v = rng.choice([np.nan, np.inf, -np.inf, 1e308, -1e308, 1e300, 5e-324, 0.0, -0.0, 2.0**53 + 1,
                                2.0**31, -1.0, 1e20, 0.5])
            elif b.dtype.kind in "iu":
                v = rng.choice([-1, -2, 0, 1, 100000, 2**31 - 1, -2**31, 2**62, -2**63, 2**63 - 1, 1000,
                                int(b.max()) + 1, int(b.max()) * 2 + 3, info["n"] + 1, info["d"], info["d"] + 1])
                lim = np.iinfo(b.dtype)
                v = min(max(v, lim.min), lim.max)
            else:
                v = 1
            flat = b.reshape(-1)
            with np.errstate(all="ignore"):
                flat[j] = v
            desc = f"{name}: [{j}] := {v!r}"
    elif op == "reverse":
        b = a[::-1].copy()
        desc = f"{name}: reversed"
    elif op == "shuffle":
        b = a.copy()
        np.random.default_rng(rng.randrange(1 << 30)).shuffle(b)
        desc = f"{name}: shuffled"
    elif op == "endian":
        b = a.astype(a.dtype.newbyteorder(">"))
        desc = f"{name}: big-endian {b.dtype.str}"
    elif op == "empty":
        b = a[:0]
        desc = f"{name}: empty"
    elif op == "scalar":
        b = np.array(a[0] if a.size else 0, dtype=a.dtype)
        desc = f"{name}: 0-d"
    elif op == "2d":
        b = np.asfortranarray(np.stack([a, a], axis=1)) if rng.random() < 0.5 else a.reshape(1, -1)
        desc = f"{name}: 2-D {b.shape}"
    else:
        b = np.array(list(a), dtype=object)
        desc = f"{name}: object array"
    np.save(path, b, allow_pickle=True)
    return desc


def m_npy_bytes(rng, folder, info):
    names = _npy_names(folder)
    if not names:
        return "npy bytes: none left"
    name = rng.choice(names)
    path = os.path.join(folder, name)
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    op = rng.choice(["flip-header", "flip-header", "flip-data", "truncate", "append", "header-shape",
                     "header-descr", "header-order", "version"])
    if op == "flip-header":
        i = rng.randrange(min(len(data), 128))
        data[i] = rng.choice([data[i] ^ (1 << rng.randrange(8)), ord("9"), ord(" "), ord("("), 0, 0xff])
        desc = f"{name}: header byte {i} := {data[i]:#x}"
    elif op == "flip-data" and len(data) > 128:
        i = rng.randrange(128, len(data))
        data[i] ^= 1 << rng.randrange(8)
        desc = f"{name}: data byte {i} flipped"
    elif op == "truncate":
        i = rng.randrange(len(data) + 1)
        del data[i:]
        desc = f"{name}: truncated to {i} bytes"
    elif op == "append":
        data += bytes(rng.randrange(256) for _ in range(rng.choice([1, 7, 8, 64])))
        desc = f"{name}: bytes appended"
    else:
        head = bytes(data[:128]).decode("latin-1")
        if op == "header-shape":
            new = rng.choice(["(100000000000,)", "(9223372036854775807,)", "(-1,)", "(2, 3)", "()", "(1e400,)",
                              "(99999999999999999999,)", "(0,)", "(3,", "[3]", "(4611686018427387904,)"])
            head2 = re.sub(r"\(\d*,?\s*\d*,?\)", new, head, count=1)
        elif op == "header-descr":
            new = rng.choice(["'<f8'", "'<i4'", "'|O'", "'<U8'", "'|V8'", "'<c16'", "'>f8'", "'<f4'", "'x'",
                              "'<M8[ns]'", "[('a', '<f8')]", "'<i8'"])
            head2 = re.sub(r"'[<>|=][^']*'", new, head, count=1)
        elif op == "header-order":
            head2 = head.replace("False", "True") if "False" in head else head.replace("True", "False")
            new = "fortran_order flipped"
        else:
            data[6] = rng.choice([0, 2, 3, 4, 255])
            head2 = bytes(data[:128]).decode("latin-1")
            new = f"version byte {data[6]}"
        if len(head2) != len(head):
            ln = len(head2)
            body = head2[10:].rstrip("\n").rstrip(" ")
            # keep the header length: pad or cut (a header that no longer ends in \n is a finding too)
            head2 = (head2[:10] + body + " " * 128)[:127] + "\n" if ln < 200 else head2
        data[:128] = head2.encode("latin-1")[:128]
        desc = f"{name}: header {op} -> {new}"
    with open(path, "wb") as fh:
        fh.write(data)
    return desc


def m_files(rng, folder, info):
    names = sorted(os.listdir(folder))
    name = rng.choice(names)
    path = os.path.join(folder, name)
    op = rng.choice(["delete", "delete", "empty", "dir", "swap", "symlink-loop"])
    if op == "delete":
        os.remove(path)
    elif op == "empty":
        open(path, "wb").close()
    elif op == "dir":
        os.remove(path)
        os.mkdir(path)
    elif op == "swap":
        other = rng.choice([n for n in names if n.endswith(".npy")] or names)
        if other != name:
            tmp = path + ".swap"
            os.replace(path, tmp)
            os.replace(os.path.join(folder, other), path)
            os.replace(tmp, os.path.join(folder, other))
        return f"swap {name} and {other}"
    else:
        os.remove(path)
        os.symlink(name, path)
    return f"{op} {name}"


FOLDER_MUTATORS = [(m_meta, 3), (m_array, 6), (m_npy_bytes, 2), (m_files, 1)]


def mutate_folder(rng, folder, info):
    desc = []
    funcs, weights = zip(*FOLDER_MUTATORS)
    for _ in range(min(3, 1 + int(rng.expovariate(1.5)))):
        try:
            desc.append(rng.choices(funcs, weights=weights)[0](rng, folder, info))
        except Exception as e:        # a mutation that does not apply to what earlier ones left
            desc.append(f"(mutation skipped: {type(e).__name__})")
    return desc


# ------------------------------------------------------------------------------------- worker

def _make_X(est, rng_seed=0):
    import numpy as np
    import scipy.sparse as sp
    d = int(est.n_features_in_)
    rows, cols, vals = [], [], []
    rng = np.random.default_rng(rng_seed)
    if d > 0:
        for r in range(3):
            cs = sorted(set(rng.integers(0, min(d, 8), size=3).tolist()) | {d - 1})
            rows += [r] * len(cs)
            cols += cs
            vals += rng.standard_normal(len(cs)).tolist()
    return sp.csr_matrix((vals, (rows, cols)), shape=(3, d))


def _non_finite(est):
    """The fitted arrays (attributes ending in "_") and the bias scaling that hold NaN or inf."""
    import numpy as np
    bad = [k for k, v in sorted(vars(est).items()) if k.endswith("_") and not k.startswith("_")
           and isinstance(v, np.ndarray) and v.dtype.kind == "f" and not np.all(np.isfinite(v))]
    scale = getattr(est, "intercept_scaling", 1.0)
    if isinstance(scale, float) and not np.isfinite(scale):
        bad.append(f"intercept_scaling={scale!r}")
    return bad


def run_job(job, emit):
    """One input: returns {"status": "ok"} or the error {status, stage, type, msg, tb}; for
    ssvmdata also {"train": {...}}."""
    import warnings
    entry, path = job["entry"], job["path"]
    stage = "load"
    emit({"stage": stage})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)   # a RuntimeWarning is an exception here
            if entry == "svmlight":
                from ssvmlinear import load_svmlight_file
                load_svmlight_file(path, zero_based=False, kind=job.get("kind", "auto"))
            elif entry == "hierarchy":
                from ssvmlinear.hierarchy import read_hierarchy
                read_hierarchy(path)
            elif entry == "edges":
                import numpy as np
                from ssvmlinear.models.multilabel import read_edges_file
                read_edges_file(path, np.asarray(job["label_values"], dtype=np.int64))
            elif entry == "model":
                from ssvmlinear.model_io import load_model
                from ssvmlinear.registry import structure_of
                est = load_model(path)
                stage = "predict"
                emit({"stage": stage})
                bad = _non_finite(est)
                if bad:
                    return {"status": "error", "stage": stage, "type": "NonFiniteModel", "handled": False,
                            "msg": f"load_model accepted the file, but the model holds non-finite {', '.join(bad)}",
                            "tb": ""}
                X = _make_X(est)
                if structure_of(est).name == "chain":
                    P = est.predict(X, [1, 2])
                else:
                    P = est.predict(X)
                if P.shape[0] != X.shape[0]:
                    return {"status": "error", "stage": stage, "type": "BadPrediction", "handled": False,
                            "msg": f"predict returned shape {P.shape} for {X.shape[0]} rows", "tb": ""}
            elif entry == "ssvmdata":
                from ssvmlinear.datacache import load_ssvmdata
                out = load_ssvmdata(path)
                del out
                stage = "train"
                emit({"stage": stage})
                return {"status": "ok", "train": _run_train(path, job["model_path"])}
            else:
                raise SystemExit(f"unknown entry {entry}")
    except (ValueError, OSError) as e:
        return {"status": "error", "stage": stage, "type": type(e).__name__, "msg": _cap(str(e)),
                "handled": True, "tb": _tb(e)}
    except BaseException as e:        # noqa: B902 -- anything else is a finding (SystemExit too)
        if isinstance(e, KeyboardInterrupt):
            raise
        return {"status": "error", "stage": stage, "type": type(e).__name__, "msg": str(e)[:2000],
                "handled": False, "tb": _tb(e)}
    return {"status": "ok"}


def _cap(msg, n=20000):
    """A message cut to its first and last n/2 characters (the path and line are at its start)."""
    return msg if len(msg) <= n else msg[:n // 2] + f" [... {len(msg) - n} characters ...] " + msg[-n // 2:]


def _tb(e):
    return "".join(traceback.format_exception(type(e), e, e.__traceback__))[-6000:]


def _run_train(folder, model_path):
    """ssvm-train -q -m 3 folder model in this process; its return code, stderr and any escape."""
    import contextlib
    import warnings
    from ssvmlinear.cli import train_main
    err = io.StringIO()
    res = {}
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            warnings.simplefilter("error", RuntimeWarning)
            res["rc"] = train_main(["-q", "-m", "3", folder, model_path])
    except BaseException as e:        # noqa: B902
        if isinstance(e, KeyboardInterrupt):
            raise
        res["escaped"] = type(e).__name__
        res["msg"] = str(e)[:2000]
        res["tb"] = _tb(e)
    res["stderr"] = err.getvalue()[-4000:]
    try:
        os.remove(model_path)
    except OSError:
        pass
    return res


def worker_main(result_fd, mem):
    """The fork server: imports the package once, then forks one child per job (a fresh copy of
    the imported process: a crash, a hang or a corrupted heap ends with that input). Messages on
    result_fd, one JSON line each: {"pid"} (the child, to kill on a hang), the child's {"stage"}
    lines and its result ({"done": true, ...}), then {"exit": status} (-signal or the exit code)."""
    import ctypes
    import faulthandler
    import gc
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if mem:
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    faulthandler.enable(file=sys.stderr, all_threads=False)
    out = os.fdopen(result_fd, "w", buffering=1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)                    # the product's prints never reach the result pipe
    sys.stdout = open(os.devnull, "w")
    import numpy  # noqa: F401
    import scipy.sparse  # noqa: F401
    import ssvmlinear  # noqa: F401  (import time not charged to the inputs)
    import ssvmlinear.cli  # noqa: F401
    import ssvmlinear.datacache  # noqa: F401
    import ssvmlinear.hierarchy  # noqa: F401
    import ssvmlinear.hierarchical  # noqa: F401
    import ssvmlinear.multilabel  # noqa: F401
    import ssvmlinear.chain  # noqa: F401
    import ssvmlinear.model_io  # noqa: F401
    libc = ctypes.CDLL(None)
    gc.collect()
    gc.freeze()                         # the children do not copy the imported heap on collection

    def emit(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    emit({"ready": True})
    for line in sys.stdin:
        job = json.loads(line)
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                emit({"pid": os.getpid()})  # the child writes every line of a job: none interleave
                res = run_job(job, emit)
                res["done"] = True
                emit(res)
                # heap damage that has not shown yet: make glibc walk its heap before the child ends
                gc.collect()
                libc.malloc_trim(0)
                sys.stderr.flush()
            except BaseException:      # noqa: B902
                traceback.print_exc()
                code = 70
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        emit({"exit": -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)})


class Worker:
    """The fork server (one subprocess, one child per job); crash = a child's abnormal end, hang =
    no answer in time (the child is killed by its pid; the server goes on)."""

    def __init__(self, logdir, mem=MEM_LIMIT, timeout=TIMEOUT):
        self.logdir, self.mem, self.timeout = logdir, mem, timeout
        self.proc = None
        self.n_starts = 0

    def start(self):
        r, w = os.pipe()
        self.n_starts += 1
        self.errpath = os.path.join(self.logdir, "worker-stderr.log")
        self.errlog = open(self.errpath, "w+b")
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   LIBC_FATAL_STDERR_="1", PYTHONDONTWRITEBYTECODE="1")
        self.proc = subprocess.Popen([sys.executable, THIS_FILE, "--worker", "--result-fd", str(w),
                                      "--mem", str(self.mem)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=self.errlog, pass_fds=(w,), env=env, cwd=self.logdir)
        os.close(w)
        self.rfd = r
        self.buf = b""
        first = self._readline(time.monotonic() + 120)
        if not isinstance(first, dict) or not first.get("ready"):
            tail = self._stderr_tail()
            self.stop()
            raise RuntimeError(f"fuzz worker did not start: {tail}")

    def _readline(self, deadline):
        """The next JSON line, None at the server's end, "timeout" past the deadline."""
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            ready, _, _ = select.select([self.rfd], [], [], left)
            if not ready:
                return "timeout"
            chunk = os.read(self.rfd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return {"garbled": line[:2000].decode("utf-8", "replace")}

    def _stderr_tail(self, start=0):
        try:
            with open(self.errpath, "rb") as fh:
                fh.seek(start)
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return ""
        text = re.sub(r"\n*Extension modules:[^\n]*", "", text)    # faulthandler's module list
        return text[-4000:]

    def stop(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()            # our own child, by its pid
                self.proc.wait()
            os.close(self.rfd)
            self.errlog.close()
            self.proc = None

    def run(self, job):
        """The answer to one job: the child's result, or {"status": "crash"|"hang", ...}."""
        if self.proc is None:
            self.start()
        err_start = os.path.getsize(self.errpath)
        t0 = time.monotonic()
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        stage, child, result, hung = None, None, None, False
        deadline = t0 + self.timeout
        while True:
            msg = self._readline(deadline)
            if msg == "timeout":
                if child is None or hung:           # the server itself is stuck
                    self.proc.kill()
                    self.stop()
                    return {"status": "hang", "stage": stage, "type": "hang",
                            "msg": f"no answer in {self.timeout:g} s (stage {stage})"}
                hung = True
                try:
                    os.kill(child, signal.SIGKILL)   # the job's own process, by its pid
                except ProcessLookupError:
                    pass
                deadline = time.monotonic() + 30
                continue
            if msg is None:                          # the server died: restart it with the next job
                rc = self.proc.wait()
                tail = self._stderr_tail(err_start)
                self.stop()
                return {"status": "crash", "stage": stage, "type": f"fork server exit {rc}", "rc": rc,
                        "msg": tail.strip()[-2000:]}
            if "pid" in msg:
                child = msg["pid"]
            elif "exit" in msg:
                rc = msg["exit"]
                if hung:
                    return {"status": "hang", "stage": stage, "type": "hang",
                            "msg": f"no answer in {self.timeout:g} s (stage {stage})"}
                if rc != 0:
                    name = signal.Signals(-rc).name if rc < 0 else f"exit {rc}"
                    tail = self._stderr_tail(err_start).strip()[-2000:]
                    out = {"status": "crash", "stage": stage, "type": name, "rc": rc, "msg": tail}
                    if result is not None:
                        out["after"] = {k: v for k, v in result.items() if k != "done"}
                        out["msg"] = (f"[after the input's result: {result.get('type', result.get('status'))} "
                                      f"{str(result.get('msg', result.get('train', '')))[:300]}]\n" + tail)
                    return out
                if result is None:
                    return {"status": "crash", "stage": stage, "type": "no result", "rc": rc,
                            "msg": self._stderr_tail(err_start)[-2000:]}
                result["seconds"] = time.monotonic() - t0
                return result
            elif msg.get("done"):
                result = msg
            elif "garbled" in msg:
                result = {"status": "error", "stage": stage, "type": "GarbledResult", "handled": False,
                          "msg": "the worker's answer did not parse: " + msg["garbled"], "tb": ""}
            elif "stage" in msg:
                stage = msg["stage"]


# ------------------------------------------------------------------------------ classification

def _has_line(msg, path):
    p = re.escape(path)
    return bool(re.search(p + r"[:,]\s*(line\s*)?\d+\b", msg) or re.search(r"\bline \d+\b", msg))


def classify(entry, job, res):
    """The category of one result (see FINDINGS), and the message the finding is about."""
    status = res["status"]
    if status in ("crash", "hang"):
        return status
    path = job["path"]
    if status == "error":
        if not res.get("handled"):
            if res.get("stage") == "predict":
                return "predict"
            return "foreign"
        if res.get("stage") == "predict":
            return "ok" if path in res["msg"] else "predict"
        msg = res["msg"]
        if path not in msg:
            return "nofile"
        if entry in LINE_ORIENTED and not _has_line(msg, path) \
                and not any(re.search(p, msg) for p in FILE_WIDE[entry]):
            return "noline"
        return "handled"
    if entry == "ssvmdata":
        t = res.get("train") or {}
        if "escaped" in t:
            return "train"
        if t.get("rc") not in (0, 1):
            return "train"
        if t.get("rc") == 1:
            lines = t.get("stderr", "").splitlines()
            if len(lines) != 1 or not lines[0].startswith("ssvm-train: error: ") or path not in lines[0]:
                return "train"
    return "ok"


def signature(entry, cat, res, path):
    """What makes two findings the same: category, stage, type, the message's shape, the frame."""
    if cat == "train":
        t = res.get("train", {})
        typ = t.get("escaped") or f"rc={t.get('rc')}"
        msg = t.get("msg") or (t.get("stderr", "").splitlines() or [""])[0]
        if not t.get("escaped") and t.get("rc") == 1:
            n_lines = len(t.get("stderr", "").splitlines())
            typ += f", {n_lines} stderr lines" + ("" if path in t.get("stderr", "") else ", folder not named")
        tb = t.get("tb", "")
    else:
        typ, msg, tb = res.get("type"), res.get("msg", ""), res.get("tb", "")
    msg = (msg or "").replace(path, "<path>")
    if cat == "crash":
        m = re.search(r"(double free[^\n]*|free\(\)[^\n]*|corrupted[^\n]*|malloc[^\n]*|Fatal Python error: \w+)", msg)
        shape = m.group(1) if m else ""
        shape = re.sub(r"0x[0-9a-f]+", "0x", shape)
    else:
        shape = msg.strip().splitlines()[-1] if msg.strip() else ""
        shape = re.sub(r"0x[0-9a-fA-F]+|\\x[0-9a-fA-F]{2}", "0x", shape)
        shape = re.sub(r"'[^'\n]{0,80}'|\"[^\"\n]{0,80}\"", "'…'", shape)
        shape = re.sub(r"[-+]?\d[\d.eE+_-]*", "N", shape)[:60]     # the message's head tells its kind
    if cat == "crash":     # faulthandler: most recent call first
        frames = re.findall(r'File "([^"]*ssvmlinear[^"]*)", line (\d+)', res.get("msg", ""))[:1]
    else:
        frames = re.findall(r'File "([^"]*ssvmlinear[^"]*)", line (\d+)', tb or "")[-1:]
    frame = f"{os.path.basename(frames[0][0])}:{frames[0][1]}" if frames else ""
    if cat == "train":
        return (cat, "train", typ, frame, shape)
    return (cat, res.get("stage") or "", typ, frame, shape)


# ----------------------------------------------------------------------------------- campaigns

class Stats:
    def __init__(self, entry):
        self.entry = entry
        self.counts = collections.Counter()
        self.examples = collections.OrderedDict()     # signature -> [count, example dict]
        self.seconds = 0.0
        self.stopped = None

    @property
    def n(self):
        return sum(self.counts.values())

    def findings(self, cat=None):
        cats = FINDINGS if cat is None else (cat,)
        return sum(self.counts[c] for c in cats)

    def add(self, cat, sig, example):
        self.counts[cat] += 1
        if cat in FINDINGS:
            if sig not in self.examples:
                self.examples[sig] = [0, example]
            self.examples[sig][0] += 1

    def summary(self):
        """Everything found, JSON-ready: counts, and per distinct finding its count and an example."""
        return {"entry": self.entry, "inputs": self.n, "seconds": round(self.seconds, 1),
                "counts": dict(self.counts),
                "findings": [{"signature": list(sig), "count": count,
                              "example": {k: ex.get(k) for k in ("type", "stage", "msg", "mutation", "saved", "index",
                                                                "seed_name", "tb", "train")}}
                             for sig, (count, ex) in self.examples.items()]}

    def report(self, max_examples=4):
        out = [f"== {self.entry}: {self.n} inputs in {self.seconds:.1f} s" + (f" ({self.stopped})" if self.stopped else "")]
        for c in ("ok", "handled") + FINDINGS:
            if c in ("predict", "train") and not self.counts[c] and \
                    not (c == "predict" and self.entry == "model") and not (c == "train" and self.entry == "ssvmdata"):
                continue
            out.append(f"   {CATEGORY_TEXT[c]:<42} {self.counts[c]}")
        by_cat = collections.defaultdict(list)
        for sig, (count, ex) in self.examples.items():
            by_cat[sig[0]].append((count, sig, ex))
        for c in FINDINGS:
            if not by_cat[c]:
                continue
            out.append(f"  -- {CATEGORY_TEXT[c]}: {len(by_cat[c])} distinct")
            for count, sig, ex in sorted(by_cat[c], key=lambda t: -t[0])[:max_examples * 3]:
                out.append(f"   [{count}x] stage={sig[1]} {sig[2]} {sig[3]}")
                out.append(f"       message: {ex['msg'][:300]!r}")
                out.append(f"       mutation: {'; '.join(ex['mutation'])[:300]}")
                out.append(f"       input: {ex['saved'] or ex['path']}  (seed {ex['seed_name']}, index {ex['index']})")
        return "\n".join(out)


def _save_finding(keep, entry, cat, index, job, res, mutation, seed_name):
    if keep is None:
        return None
    d = os.path.join(keep, entry, cat)
    os.makedirs(d, exist_ok=True)
    base = os.path.basename(job["path"])
    dst = os.path.join(d, base)
    try:
        if os.path.isdir(job["path"]):
            shutil.copytree(job["path"], dst, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copyfile(job["path"], dst)
    except OSError:
        dst = None
    with open(os.path.join(d, base + ".json"), "w") as fh:
        json.dump({"entry": entry, "category": cat, "index": index, "seed_input": seed_name, "job": job,
                   "mutation": mutation, "result": res}, fh, indent=1, default=str)
    return dst


def run_campaign(entry, n, seed=0, keep=None, timeout=TIMEOUT, mem=MEM_LIMIT, workdir=None, progress=None,
                 only_index=None, max_saved_per_sig=10, worker=None, max_hangs=None):
    """n fuzzed inputs for `entry`; returns Stats. keep: folder for the findings' inputs.
    max_hangs: stop after that many hangs (each costs `timeout` seconds; stats.stopped says so)."""
    own_tmp = workdir is None
    workdir = tempfile.mkdtemp(prefix=f"fuzz-{entry}-") if own_tmp else workdir
    os.makedirs(workdir, exist_ok=True)
    indir = os.path.join(workdir, "in")
    os.makedirs(indir, exist_ok=True)
    stats = Stats(entry)
    saved = collections.Counter()
    own_worker = worker is None
    worker = worker or Worker(workdir, mem=mem, timeout=timeout)
    t_start = time.monotonic()
    try:
        if entry == "ssvmdata":
            seeds = [(os.path.basename(f), f, _folder_info(f)) for f in ssvmdata_seeds(workdir)]
        else:
            seeds = text_seeds(entry, workdir)
        indices = range(n) if only_index is None else [only_index]
        for i in indices:
            rng = random.Random(f"{seed}:{entry}:{i}")
            name, content, params = rng.choice(seeds)
            job = {"entry": entry}
            if entry == "ssvmdata":
                path = os.path.join(indir, f"{i:07d}-{name}")
                shutil.copytree(content, path, symlinks=True)
                mutation = mutate_folder(rng, path, params)
                job.update(path=path, model_path=os.path.join(workdir, "train.model"))
            else:
                ext = name.split(".", 1)[1] if "." in name else "txt"
                path = os.path.join(indir, f"{i:07d}-input.{ext}")
                data, mutation = _mutate_entry_text(rng, entry, content, params)
                with open(path, "wb") as fh:
                    fh.write(data)
                job["path"] = path
                if entry == "svmlight":
                    job["kind"] = rng.choice(params["kinds"] + ["auto"])
                    mutation = [f"kind={job['kind']}"] + mutation
                if entry == "edges":
                    job["label_values"] = params["label_values"]
            res = worker.run(job)
            cat = classify(entry, job, res)
            sig = signature(entry, cat, res, path) if cat in FINDINGS else None
            saved_to = None
            if cat in FINDINGS and saved[sig] < max_saved_per_sig:
                saved[sig] += 1
                saved_to = _save_finding(keep, entry, cat, i, job, res, mutation, name)
            if cat in FINDINGS:
                ex = dict(res)
                if cat == "train":
                    t = res.get("train", {})
                    ex["msg"] = (t.get("escaped", "") + ": " + t.get("msg", "") if "escaped" in t else "") + \
                        f" rc={t.get('rc')} stderr={t.get('stderr', '')[-500:]!r}"
                ex.update(mutation=mutation, saved=saved_to, path=path, seed_name=name, index=i)
                ex.setdefault("msg", "")
            else:
                ex = None
            stats.add(cat, sig, ex)
            if max_hangs is not None and stats.counts["hang"] >= max_hangs:
                stats.stopped = f"stopped after {stats.counts['hang']} hangs, at input {i + 1} of {n}"
            if entry == "ssvmdata":
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.remove(path)
                except OSError:
                    pass
            if stats.stopped:
                break
            if progress and (i + 1) % progress == 0:
                print(f"  {entry}: {i + 1}/{n}  " + " ".join(f"{c}={stats.counts[c]}" for c in ("ok", "handled") + FINDINGS
                                                           if stats.counts[c]), file=sys.stderr, flush=True)
    finally:
        if own_worker:
            worker.stop()
        stats.seconds = time.monotonic() - t_start
        if own_tmp:
            shutil.rmtree(workdir, ignore_errors=True)
    return stats


def _mutate_entry_text(rng, entry, content, params):
    comp = params.get("compress")
    if comp and rng.random() < 0.3:          # corrupt the compressed bytes themselves
        data = bytearray(content)
        desc = []
        for _ in range(1 + int(rng.expovariate(1.5))):
            data, d = rng.choice(BYTE_MUTATORS)(rng, data)
            desc.append(f"compressed: {d}")
        return bytes(data), desc
    plain = gzip.decompress(content) if comp == "gz" else bz2.decompress(content) if comp == "bz2" else content
    data, desc = mutate_text(rng, plain, entry)
    if comp == "gz":
        data = gzip.compress(data, mtime=0)
    elif comp == "bz2":
        data = bz2.compress(data)
    return data, desc


def _folder_info(folder):
    with open(os.path.join(folder, "meta.json")) as fh:
        meta = json.load(fh)
    return {"n": meta["shape"][0], "d": meta["shape"][1], "kind": meta["kind"]}


# ------------------------------------------------------------------------------------ the script

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="inputs per entry point")
    ap.add_argument("--entry", default="all", choices=ENTRIES + ("all",))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", default=None, help="folder for the findings' inputs (default: a new temp folder)")
    ap.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per input (a hang past it)")
    ap.add_argument("--mem", type=int, default=MEM_LIMIT, help="the workers' RLIMIT_AS in bytes (0: none)")
    ap.add_argument("--only-index", type=int, default=None, help="run input number I alone (reproduce)")
    ap.add_argument("--progress", type=int, default=1000, help="print counts every N inputs (stderr)")
    ap.add_argument("--max-examples", type=int, default=4, help="distinct findings shown per category / 3")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--result-fd", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker_main(args.result_fd, args.mem)
        return 0
    sys.path.insert(0, os.path.dirname(os.path.dirname(THIS_FILE)))
    keep = args.keep or tempfile.mkdtemp(prefix="ssvm-fuzz-findings-")
    entries = ENTRIES if args.entry == "all" else (args.entry,)
    total = 0
    os.makedirs(keep, exist_ok=True)
    for entry in entries:
        st = run_campaign(entry, args.n, seed=args.seed, keep=keep, timeout=args.timeout, mem=args.mem,
                          progress=args.progress, only_index=args.only_index)
        print(st.report(args.max_examples), flush=True)
        with open(os.path.join(keep, f"summary-{entry}.json"), "w") as fh:
            json.dump(st.summary(), fh, indent=1, default=str)
        total += st.findings()
    print(f"findings saved under {keep}" if total else "no findings")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
