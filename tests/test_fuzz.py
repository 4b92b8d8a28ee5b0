"""Fuzzing of the untrusted-input entry points (tests/fuzzing.py), and the reproducers it found.

Default: a fast, deterministic subset (seed 0, DEFAULT_N inputs per entry point, one worker
process). ``pytest tests/test_fuzz.py --fuzz-long`` runs LONG_N per entry point (10^5 in all);
``SSVM_FUZZ_N=N`` sets the number per entry point. The inputs of every finding are kept under the
test's tmp_path (``findings/``), each with a .json (mutation, exception, traceback); a single
input is rerun with ``python tests/fuzzing.py --entry E --seed 0 --only-index I``.

The standard (fuzzing.py's docstring): success, or ValueError / OSError naming the file (the
folder for .ssvmdata) and, in the line-oriented formats, the line; never a crash, a hang, another
exception type or an unjustified allocation (the workers run under RLIMIT_AS = 4 GiB).
"""
import json
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import fuzzing

DEFAULT_N = 300
LONG_N = 20000


@pytest.fixture
def fuzz_n(request):
    if request.config.getoption("--fuzz-long", default=False):
        return LONG_N
    env = os.environ.get("SSVM_FUZZ_N")
    return int(env) if env else DEFAULT_N


@pytest.mark.parametrize("entry", fuzzing.ENTRIES)
def test_fuzz(entry, fuzz_n, tmp_path):
    keep = tmp_path / "findings"
    stats = fuzzing.run_campaign(entry, fuzz_n, seed=0, keep=str(keep), workdir=str(tmp_path / "work"),
                                 max_hangs=3)     # each hang costs the 10 s timeout
    report = stats.report() + f"\nfindings' inputs under {keep}"
    found = {c: stats.counts[c] for c in fuzzing.FINDINGS}
    assert found == {c: 0 for c in fuzzing.FINDINGS}, report
    assert stats.n == fuzz_n


# ----------------------------------------------------------------------- seeds for the reproducers

def _quiet_fit(est, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(*args)


def _data(n=24, d=6, K=3, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.6, random_state=seed, format="csr")
    y = np.arange(n) % K
    rng.shuffle(y)
    return X, y


def _model_file(tmp_path, est, name):
    from ssvmlinear.model_io import save_model
    path = tmp_path / name
    save_model(est, path)
    return path


def _rewrite_header(path, key, value):
    """The model file with its `key` header line's value replaced; (path, that line's number)."""
    lines = path.read_text().split("\n")
    for k, line in enumerate(lines):
        if line.split(" ", 1)[0] == key:
            lines[k] = f"{key} {value}"
            break
        if line == "w":
            raise AssertionError(f"{path} has no {key!r} header line")
    path.write_text("\n".join(lines))
    return str(path), k + 1


def _assert_names_line(excinfo, path, lineno=None):
    msg = str(excinfo.value)
    assert path in msg, msg
    if lineno is None:
        assert re.search(re.escape(path) + r":\d+:", msg), msg
    else:
        assert f"{path}:{lineno}:" in msg, msg


@pytest.fixture
def multiclass_model(tmp_path):
    from ssvmlinear.multiclass import MulticlassSSVM
    X, y = _data()
    return _model_file(tmp_path, _quiet_fit(MulticlassSSVM(max_iter=3, fit_intercept=True), X, y), "mc.model")


def _multilabel_folder(tmp_path):
    from ssvmlinear.datacache import save_ssvmdata
    X, _ = _data(n=12, d=5)
    rng = np.random.default_rng(1)
    Y = (rng.random((12, 4)) < 0.4).astype(np.int8)
    Y[:4] = np.eye(4, dtype=np.int8)
    folder = str(tmp_path / "ml.ssvmdata")
    save_ssvmdata(folder, X, sp.csr_matrix(Y))
    return folder


# ------------------------------------------------------------------------------------ reproducers

def _train_in_subprocess(tmp_path, folder):
    argv = ["-q", "-m", "3", folder, str(tmp_path / "m.model")]
    return subprocess.run([sys.executable, "-c",
                           f"import sys; from ssvmlinear.cli import train_main; sys.exit(train_main({argv!r}))"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env=dict(os.environ, LIBC_FATAL_STDERR_="1"))


def _small_folder(tmp_path, lengths=None):
    from ssvmlinear.datacache import save_ssvmdata
    X, y = _data(n=4, d=5, K=2)
    folder = str(tmp_path / "d.ssvmdata")
    save_ssvmdata(folder, X, y.astype(np.float64), lengths)
    return folder, X


def test_ssvmdata_y_indptr_out_of_range_is_an_error_not_a_crash(tmp_path):
    """(a) y_indptr[1] = 100000 in a multi-label folder: ssvm-train died with "double free or
    corruption" / SIGSEGV (scipy sorted the label indices through a y_indptr past the array)."""
    folder = _multilabel_folder(tmp_path)
    f = os.path.join(folder, "y_indptr.npy")
    a = np.load(f)
    a[1] = 100000
    np.save(f, a)
    r = _train_in_subprocess(tmp_path, folder)
    assert r.returncode == 1, f"return code {r.returncode}; stderr:\n{r.stderr[-3000:]}"
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssvm-train: error: "), r.stderr[-3000:]
    assert folder in lines[0] and "y_indptr" in lines[0], lines[0]


def test_ssvmdata_lengths_whose_sum_wraps_around_are_refused(tmp_path):
    """Found by the fuzzer: lengths each >= 1 whose int64 sum wraps around to the number of rows
    passed the check; ssvm-train then died with SIGSEGV in fit_sdm."""
    from ssvmlinear.datacache import load_ssvmdata
    folder, _ = _small_folder(tmp_path, lengths=np.array([2, 2]))
    np.save(os.path.join(folder, "lengths.npy"), np.array([2**62, 2**62, 2**62, 2**62 + 4], dtype=np.int64))
    with pytest.raises(ValueError) as excinfo:
        load_ssvmdata(folder)
    assert folder in str(excinfo.value) and "lengths" in str(excinfo.value)
    r = _train_in_subprocess(tmp_path, folder)
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1 and folder in r.stderr, \
        f"return code {r.returncode}; stderr:\n{r.stderr[-3000:]}"


def test_ssvmdata_indptr_rising_by_int32_wraparound_is_refused(tmp_path):
    """Found by the fuzzer: indptr [0, 2^31-1, -2^31, -1, nnz] (int32) passed the "rises from 0 to
    nnz" check (np.diff wraps around); ssvm-train then failed in scipy with MemoryError
    (std::bad_alloc) and a traceback."""
    from ssvmlinear.datacache import load_ssvmdata
    folder, X = _small_folder(tmp_path)
    np.save(os.path.join(folder, "indptr.npy"), np.array([0, 2**31 - 1, -2**31, -1, X.nnz], dtype=np.int32))
    with pytest.raises(ValueError) as excinfo:
        load_ssvmdata(folder)
    assert folder in str(excinfo.value) and "indptr" in str(excinfo.value)
    r = _train_in_subprocess(tmp_path, folder)
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1 and folder in r.stderr, \
        f"return code {r.returncode}; stderr:\n{r.stderr[-3000:]}"


@pytest.mark.parametrize("values", [[np.nan], [np.inf], [np.inf, -np.inf]])
def test_ssvmdata_non_finite_data_is_one_error_line(tmp_path, values):
    """Found by the fuzzer: a NaN in data.npy loads; ssvm-train's error is scikit-learn's
    two-line message (svmlight files refuse non-finite values with file:line); inf and -inf
    together once warned 'invalid value encountered in reduce' before the error."""
    folder, _ = _small_folder(tmp_path)
    f = os.path.join(folder, "data.npy")
    a = np.load(f)
    a[:len(values)] = values
    np.save(f, a)
    r = _train_in_subprocess(tmp_path, folder)
    assert r.returncode == 1, f"return code {r.returncode}; stderr:\n{r.stderr[-3000:]}"
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssvm-train: error: ") and folder in lines[0], r.stderr


@pytest.mark.parametrize("meta", ["[]", "null", '"meta"', "SHAPE_1e400", "SHAPE_BIGINT", "NNZ_INF"])
def test_ssvmdata_malformed_meta_json_names_the_folder(tmp_path, meta):
    """(b) meta.json holding a list or null: AttributeError; "shape": [1e400, 2]: OverflowError."""
    from ssvmlinear.datacache import load_ssvmdata
    folder = _multilabel_folder(tmp_path)
    path = os.path.join(folder, "meta.json")
    with open(path) as fh:
        good = json.load(fh)
    text = {"SHAPE_1e400": json.dumps(dict(good, shape="@")).replace('"@"', "[1e400, 2]"),
            "SHAPE_BIGINT": json.dumps(dict(good, shape=[12, 2**64])),
            "NNZ_INF": json.dumps(dict(good, nnz="@")).replace('"@"', "-Infinity")}.get(meta, meta)
    with open(path, "w") as fh:
        fh.write(text)
    with pytest.raises(ValueError) as excinfo:
        load_ssvmdata(folder)
    assert folder in str(excinfo.value)


@pytest.mark.parametrize("value", ["inf", "1e309", "Infinity", "nan"])
def test_model_non_finite_bias_is_refused(multiclass_model, value):
    """(c) `bias inf` / `1e309` / `Infinity` loaded (intercept NaN); `bias nan` read as no bias."""
    from ssvmlinear.model_io import load_model
    path, lineno = _rewrite_header(multiclass_model, "bias", value)
    with pytest.raises(ValueError) as excinfo:
        load_model(path)
    _assert_names_line(excinfo, path, lineno)


@pytest.mark.parametrize("value", [")(", "(2,", "i4,)", "(1e400,)i4", "(100000000000,)f8", "(-1,)i4"])
def test_model_garbage_output_header_is_a_value_error(tmp_path, value):
    """(d) multilabel models' `output` goes through np.dtype(), which raises SyntaxError /
    TypeError / ValueError without the file on strings such as '(2,' or ')('."""
    from ssvmlinear.model_io import load_model
    from ssvmlinear.multilabel import MultiLabelSSVM
    X, y = _data()
    Y = sp.csr_matrix(np.eye(4, dtype=np.int8)[np.arange(24) % 4])
    path, lineno = _rewrite_header(_model_file(tmp_path, _quiet_fit(MultiLabelSSVM(max_iter=3), X, Y), "ml.model"),
                                   "output", value)
    with pytest.raises(ValueError) as excinfo:
        load_model(path)
    _assert_names_line(excinfo, path, lineno)


@pytest.mark.parametrize("text, lineno", [("1 2\n1 99999999999999999999\n", 2),
                                          ("1 2\n-99999999999999999999 1\n", 2),
                                          ("1 2\n1 1_0\n", 2),
                                          ("\u0661 2\n", 1),
                                          ("1 2\n1 \uff13\n", 2)])
def test_hierarchy_ids_beyond_int64_or_not_ascii_digits_are_refused(tmp_path, text, lineno):
    """(e) an id past int64: OverflowError without file or line; '1_0' and '١' were read as 10
    and 1 by int()."""
    from ssvmlinear.hierarchy import read_hierarchy
    path = tmp_path / "h.hier"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as excinfo:
        read_hierarchy(path)
    _assert_names_line(excinfo, str(path), lineno)


@pytest.fixture
def hierarchy_model(tmp_path):
    from ssvmlinear.hierarchical import HierarchicalSSVM
    from ssvmlinear.hierarchy import Hierarchy
    X, y = _data(K=4)
    h = Hierarchy.from_edges([1, 1, 2, 2, 3, 3], [2, 3, 4, 5, 6, 7])
    return _model_file(tmp_path, _quiet_fit(HierarchicalSSVM(h, max_iter=3), X, y + 4), "h.model")


def test_hierarchy_model_unknown_task_loss_is_refused_at_load(hierarchy_model):
    """(f) an unknown task_loss loaded, and predict then failed without naming the file."""
    from ssvmlinear.model_io import load_model
    path, lineno = _rewrite_header(hierarchy_model, "task_loss", "bogus")
    with pytest.raises(ValueError) as excinfo:
        load_model(path)
    _assert_names_line(excinfo, path, lineno)


@pytest.mark.parametrize("key, value", [("hierarchy", "1:2 1:3 2:4 2:5 3:6 3:99999999999999999999"),
                                        ("alpha", "nan 1 1 1 1 1 1"),
                                        ("alpha", "inf 1 1 1 1 1 1")])
def test_hierarchy_model_header_values_are_checked(hierarchy_model, key, value):
    """Found by the fuzzer: a node id past int64 in `hierarchy` (OverflowError), a NaN or
    infinite `alpha` (loaded)."""
    from ssvmlinear.model_io import load_model
    path, lineno = _rewrite_header(hierarchy_model, key, value)
    with pytest.raises(ValueError) as excinfo:
        load_model(path)
    _assert_names_line(excinfo, path, lineno)


@pytest.mark.parametrize("structure", ["multiclass", "chain", "multilabel", "hierarchy"])
@pytest.mark.parametrize("key, value", [("nr_class", "1e400"), ("nr_class", "99999999999999999999999"),
                                        ("nr_feature", "99999999999999999999999"), ("nr_feature", "1e400"),
                                        ("nr_w_rows", "99999999999999999999999"),
                                        ("nr_feature", "9223372036854775807"), ("nr_feature", "9" * 400),
                                        ("nr_w_rows", "9" * 400)])
def test_model_huge_header_ints_are_value_errors(tmp_path, hierarchy_model, structure, key, value):
    """(g) huge numbers in the size headers: a ValueError naming the file, never OverflowError."""
    from ssvmlinear.chain import ChainSSVM
    from ssvmlinear.model_io import load_model
    from ssvmlinear.multiclass import MulticlassSSVM
    from ssvmlinear.multilabel import MultiLabelSSVM
    X, y = _data()
    if structure == "hierarchy":
        model = hierarchy_model
    else:
        est = {"multiclass": lambda: _quiet_fit(MulticlassSSVM(max_iter=3), X, y),
               "chain": lambda: _quiet_fit(ChainSSVM(max_iter=3, fit_intercept=True), X, y, [10, 14]),
               "multilabel": lambda: _quiet_fit(MultiLabelSSVM(max_iter=3, edges=[(0, 1)]), X,
                                                sp.csr_matrix(np.eye(3, dtype=np.int8)[y]))}[structure]()
        model = _model_file(tmp_path, est, f"{structure}.model")
    path, _ = _rewrite_header(model, key, value)
    with pytest.raises(ValueError) as excinfo:
        load_model(path)
    assert path in str(excinfo.value)


@pytest.mark.parametrize("value", ["0:18446744073709551616", "0:99999999999999999999 1:2", "0:1e400"])
def test_multilabel_model_edges_beyond_int64_are_refused(tmp_path, value):
    """Found by the fuzzer: a label index past int64 in `edges`: OverflowError."""
    from ssvmlinear.model_io import load_model
    from ssvmlinear.multilabel import MultiLabelSSVM
    X, y = _data()
    est = _quiet_fit(MultiLabelSSVM(max_iter=3, edges=[(0, 1)]), X, sp.csr_matrix(np.eye(3, dtype=np.int8)[y]))
    path, lineno = _rewrite_header(_model_file(tmp_path, est, "ml.model"), "edges", value)
    with pytest.raises(ValueError) as excinfo:
        load_model(path)
    _assert_names_line(excinfo, path, lineno)


@pytest.mark.parametrize("text, lineno", [("0 1\n1 99999999999999999999\n", 2), ("0 1_0\n", 1),
                                          ("0 1\n\u0662 3\n", 2), ("0 \uff11\n", 1)])
def test_edges_file_ids_beyond_int64_or_not_ascii_digits_are_refused(tmp_path, text, lineno):
    """As (e) for -E files: int() read '1_0' as 10 and '\u0662' as 2."""
    from ssvmlinear.models.multilabel import read_edges_file
    path = tmp_path / "e.edges"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as excinfo:
        read_edges_file(str(path), np.arange(12))
    _assert_names_line(excinfo, str(path), lineno)


def test_edges_file_not_utf8_names_the_file_and_line(tmp_path):
    """Found by the fuzzer: read_edges_file opens the file as strict UTF-8 text, so a stray byte
    is a UnicodeDecodeError without the file."""
    from ssvmlinear.models.multilabel import read_edges_file
    path = tmp_path / "e.edges"
    path.write_bytes(b"0 1\n1 \xff2\n")
    with pytest.raises(ValueError) as excinfo:
        read_edges_file(str(path), np.arange(6))
    _assert_names_line(excinfo, str(path), 2)


@pytest.mark.parametrize("bad", ["x", "1e", "--1"])
def test_model_bad_weight_token_fails_fast(multiclass_model, bad):
    """Found by the fuzzer (dfc25fa): model_io._NUMBERS, the regular expression that checks a
    weight line, backtracks exponentially in the digits before a token it refuses (20 digits:
    50 s; a saved model's %.17g weights: 1-5 s per line). A bad token must fail at once."""
    lines = multiclass_model.read_text().split("\n")
    k = lines.index("w") + 1
    idx, *vals = lines[k].split()
    lines[k] = " ".join([idx, "0." + "1" * 26] + vals[1:-1] + [bad])
    multiclass_model.write_text("\n".join(lines))
    code = ("import sys\nfrom ssvmlinear.model_io import load_model\ntry:\n    load_model(sys.argv[1])\n"
            "except ValueError as e:\n    print(e)\n")
    try:
        r = subprocess.run([sys.executable, "-c", code, str(multiclass_model)], capture_output=True, text=True,
                           timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"load_model took more than 20 s on a weight line ending in {bad!r}")
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"{multiclass_model}:{k + 1}:" in r.stdout, r.stdout + r.stderr[-3000:]


@pytest.mark.parametrize("bad", ["1.2.3", "1-2", "+1+1", "1e5.5"])
def test_model_weight_token_of_two_numbers_names_the_line(multiclass_model, bad):
    """Found by the fuzzer (dfc25fa): _NUMBERS accepts a token made of two numbers ('1.2.3' =
    '1.2' '.3'), then np.array(..., float64) raises ValueError without the file."""
    from ssvmlinear.model_io import load_model
    lines = multiclass_model.read_text().split("\n")
    k = lines.index("w") + 1
    idx, *vals = lines[k].split()
    lines[k] = " ".join([idx, bad] + vals[1:])
    multiclass_model.write_text("\n".join(lines))
    with pytest.raises(ValueError) as excinfo:
        load_model(str(multiclass_model))
    _assert_names_line(excinfo, str(multiclass_model), k + 1)


def test_model_binary_content_names_the_line(multiclass_model):
    """Found by the fuzzer: a byte that is not UTF-8 in a model file: the message has no line."""
    from ssvmlinear.model_io import load_model
    data = multiclass_model.read_bytes().split(b"\n")
    data[4] = b"C \xff1"
    multiclass_model.write_bytes(b"\n".join(data))
    with pytest.raises(ValueError) as excinfo:
        load_model(str(multiclass_model))
    _assert_names_line(excinfo, str(multiclass_model), 5)
