"""svmlight reader/writer: agreement with scikit-learn, round trips, errors and fuzzing."""
import bz2
import gzip
import io
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssvmlinear.io import dump_svmlight_file, load_svmlight_file

sk_datasets = pytest.importorskip("sklearn.datasets")

DATA = Path(__file__).parent.parent / "data"
OCR = DATA / "ocr_letters.svm.gz"
SCENE = [DATA / "scene_train.svm.gz", DATA / "scene_test.svm.gz"]

FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def assert_csr_identical(A, B):
    """Same shape, same stored entries in the same order, same float64 bits."""
    assert A.shape == B.shape
    np.testing.assert_array_equal(A.indptr, B.indptr)
    np.testing.assert_array_equal(A.indices, B.indices)
    assert A.data.dtype == B.data.dtype
    assert A.data.tobytes() == B.data.tobytes()


def load_bytes(text, **kw):
    return load_svmlight_file(io.BytesIO(text), **kw)


# ------------------------------------------------------------------ agreement with scikit-learn

@pytest.fixture(scope="module")
def ocr():
    return load_svmlight_file(OCR)


def test_ocr_matches_sklearn(ocr):
    X, y, lengths = ocr
    Xs, ys, qid = sk_datasets.load_svmlight_file(str(OCR), query_id=True)
    assert sp.isspmatrix_csr(X) and X.has_sorted_indices
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    assert_csr_identical(X, Xs.astype(np.float64).tocsr())
    np.testing.assert_array_equal(y, ys)
    assert y.dtype == np.float64 and lengths.dtype == np.int64
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    np.testing.assert_array_equal(lengths, np.diff(np.r_[starts, qid.size]))
    assert X.shape == (52152, 128) and lengths.size == 6877 and lengths.sum() == 52152


def test_ocr_forced_multiclass_ignores_qid(ocr):
    X, y = load_svmlight_file(OCR, kind="multiclass")
    assert_csr_identical(X, ocr[0])
    np.testing.assert_array_equal(y, ocr[1])


@pytest.mark.parametrize("path", SCENE, ids=lambda p: p.name)
def test_scene_matches_sklearn(path):
    X, Y = load_svmlight_file(path)
    Xs, ys = sk_datasets.load_svmlight_file(str(path), multilabel=True)
    assert_csr_identical(X, Xs.tocsr())
    assert Y.dtype == np.int8 and sp.isspmatrix_csr(Y) and Y.shape == (X.shape[0], 6)
    assert set(np.unique(Y.data)) == {1}
    assert [tuple(float(j) for j in Y[i].indices) for i in range(Y.shape[0])] == list(ys)


def test_small_matches_sklearn_incl_explicit_zeros():
    text = b"1 1:0 3:2.5e-3\n-1 2:1e300 4:-0.0\n2.5 \n# comment\n\n0 5:7 # tail\n"
    X, y = load_bytes(text)
    Xs, ys = sk_datasets.load_svmlight_file(io.BytesIO(text))
    assert_csr_identical(X, Xs.tocsr())
    np.testing.assert_array_equal(y, ys)
    assert X.nnz == 5                                     # explicit zeros are kept


# ------------------------------------------------------------------------------- round trips

def test_roundtrip_real_files(tmp_path, ocr):
    X, y, lengths = ocr
    p = tmp_path / "ocr.svm.gz"
    dump_svmlight_file(X, y, p, lengths=lengths)
    assert p.read_bytes()[:2] == b"\x1f\x8b"
    X2, y2, l2 = load_svmlight_file(p)
    assert_csr_identical(X, X2)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(lengths, l2)
    assert [f for f in os.listdir(tmp_path) if f != "ocr.svm.gz"] == []   # no temporary left

    X, Y = load_svmlight_file(SCENE[0])
    buf = io.BytesIO()
    dump_svmlight_file(X, Y, buf)
    X2, Y2 = load_bytes(buf.getvalue())
    assert_csr_identical(X, X2)
    assert (Y != Y2).nnz == 0
    dump_svmlight_file(X.toarray(), Y.toarray(), buf := io.BytesIO())      # dense inputs
    X3, Y3 = load_bytes(buf.getvalue())
    assert_csr_identical(X, X3)
    assert (Y != Y3).nnz == 0


def test_dump_format():
    X = sp.csr_matrix(np.array([[0, 1.5, 0], [2.0, 0, 1e-7], [0, 0, 0]]))
    buf = io.BytesIO()
    dump_svmlight_file(X, np.array([1.0, -2.0, 0.25]), buf, comment="a\nb")
    assert buf.getvalue() == b"# a\n# b\n1 2:1.5\n-2 1:2 3:1e-07\n0.25\n"
    buf = io.BytesIO()
    dump_svmlight_file(X, np.array([[0, 1], [1, 1], [0, 0]]), buf, zero_based=True)
    assert buf.getvalue() == b"1 1:1.5\n0,1 0:2 2:1e-07\n 0:0\n"
    buf = io.BytesIO()
    dump_svmlight_file(X, np.array([3, 1, 2]), buf, lengths=[2, 1])
    assert buf.getvalue() == b"3 qid:1 2:1.5\n1 qid:1 1:2 3:1e-07\n2 qid:2\n"


def test_dump_rejects_bad_input(tmp_path):
    X = np.eye(2)
    with pytest.raises(ValueError):
        dump_svmlight_file(np.array([[np.nan, 1.0]]), [1], io.BytesIO())
    with pytest.raises(ValueError):
        dump_svmlight_file(X, [1, np.inf], io.BytesIO())
    with pytest.raises(ValueError):
        dump_svmlight_file(X, [1, 2, 3], io.BytesIO())
    with pytest.raises(ValueError):
        dump_svmlight_file(X, [1, 2], io.BytesIO(), lengths=[3])
    target = tmp_path / "keep.svm"
    target.write_bytes(b"1 1:1\n")
    with pytest.raises(ValueError):
        dump_svmlight_file(X, [1, np.nan], target)
    assert target.read_bytes() == b"1 1:1\n"                # untouched on failure


# ----------------------------------------------------------------------------- malformed input

GOOD = b"1 1:1 2:0.5\n2 3:1\n"
GOOD_SEQ = b"1 qid:1 1:1\n2 qid:1 2:1\n1 qid:2 1:1\n"

ERRORS = [
    # (id, file content, kwargs, line number, fragment of the message)
    ("no_colon", GOOD + b"1 1:1 abc\n", {}, 3, "bad token"),
    ("bad_index", GOOD + b"1 x:1\n", {}, 3, "bad feature index"),
    ("bad_value", GOOD + b"1 1:abc\n", {}, 3, "bad feature value"),
    ("empty_value", GOOD + b"1 1:\n", {}, 3, "bad feature value"),
    ("hex_value", GOOD + b"1 1:0x1p3\n", {}, 3, "bad feature value"),
    ("bad_label", GOOD + b"one 1:1\n", {}, 3, "bad label"),
    ("bad_label_list", GOOD + b"1,,2 1:1\n", {}, 3, "bad label"),
    ("zero_index_one_based", GOOD + b"1 0:1\n", {"zero_based": False}, 3, "index 0"),
    ("negative_index", GOOD + b"1 -1:1\n", {}, 3, "negative"),
    ("huge_index", GOOD + b"1 99999999999999999999:1\n", {}, 3, "too large"),
    ("decreasing", GOOD + b"1 3:1 2:1\n", {}, 3, "strictly increasing"),
    ("duplicate", GOOD + b"1 2:1 2:1\n", {}, 3, "strictly increasing"),
    ("nan_value", GOOD + b"1 1:nan\n", {}, 3, "non-finite"),
    ("inf_value", GOOD + b"1 1:-inf\n", {}, 3, "non-finite"),
    ("overflow_value", GOOD + b"1 1:1e999\n", {}, 3, "non-finite"),
    ("nan_label", GOOD + b"NaN 1:1\n", {}, 3, "non-finite label"),
    ("inf_label", GOOD + b"inf 1:1\n", {}, 3, "non-finite label"),
    ("qid_interleaved", GOOD_SEQ + b"1 qid:1 1:1\n", {}, 4, "reappears"),
    ("qid_missing", GOOD_SEQ + b"1 1:1\n", {}, 4, "missing qid"),
    ("qid_missing_forced", b"1 1:1\n", {"kind": "sequence"}, 1, "missing qid"),
    ("qid_bad", GOOD_SEQ + b"1 qid:x 1:1\n", {}, 4, "bad qid"),
    ("qid_position", GOOD + b"1 1:1 qid:2\n", {}, 3, "directly follow"),
    ("sequence_multilabel", GOOD_SEQ + b"1,2 qid:3 1:1\n", {}, 4, "exactly one label"),
    ("empty_file", b"", {}, 1, "no examples"),
    ("only_comments", b"# nothing\n\n   \n", {}, 3, "no examples"),
    ("beyond_n_features", GOOD + b"1 9:1\n", {"n_features": 5}, 3, "beyond n_features"),
    ("multiclass_forced_list", GOOD + b"1,2 1:1\n", {"kind": "multiclass"}, 3, "single label"),
    ("multiclass_forced_empty", GOOD + b" 1:1\n", {"kind": "multiclass"}, 3, "missing label"),
    ("multilabel_fraction", b"1,2 1:1\n" + b"0.5 1:1\n", {}, 2, "non-negative integers"),
    ("multilabel_negative", b"1,2 1:1\n" + b"-1 1:1\n", {}, 2, "non-negative integers"),
    ("multilabel_n_labels", b"1,2 1:1\n" + b"7 1:1\n", {"n_labels": 3}, 2, "[0, 3)"),
]


@pytest.mark.parametrize("text, kw, line, fragment", [e[1:] for e in ERRORS],
                         ids=[e[0] for e in ERRORS])
def test_error_names_file_and_line(tmp_path, text, kw, line, fragment):
    path = tmp_path / "bad.svm"
    path.write_bytes(text)
    with pytest.raises(ValueError) as info:
        load_svmlight_file(path, **kw)
    msg = str(info.value)
    assert msg.startswith(f"{path}:{line}: "), msg
    assert fragment in msg, msg
    # the same through a file object (named) and a gzip file
    with open(path, "rb") as fh, pytest.raises(ValueError, match=f"^{path}:{line}: "):
        load_svmlight_file(fh, **kw)
    with pytest.raises(ValueError, match=r"^<file>:%d: " % line):
        load_svmlight_file(io.BytesIO(gzip.compress(text)), **kw)


def test_corrupt_compressed_stream():
    with pytest.raises(ValueError, match="^<file>:"):
        load_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(ValueError, match="^<file>:"):
        load_bytes(b"BZh9" + b"\x00" * 20)


# --------------------------------------------------------------------- inputs and conventions

def test_compressed_and_file_objects(tmp_path):
    text = b"1 1:1 3:2\n-1 2:0.5\n"
    X0, y0 = load_bytes(text)
    for name, payload in [("a.svm", text), ("a.svm.gz", gzip.compress(text)),
                          ("a.bz2", bz2.compress(text)), ("gz_no_suffix", gzip.compress(text))]:
        p = tmp_path / name
        p.write_bytes(payload)
        for src in (p, str(p)):
            X, y = load_svmlight_file(src)
            assert_csr_identical(X, X0)
            np.testing.assert_array_equal(y, y0)
        with open(p, "rb") as fh:
            assert_csr_identical(load_svmlight_file(fh)[0], X0)
    with gzip.open(tmp_path / "a.svm.gz", "rb") as fh:                 # decompressing object
        assert_csr_identical(load_svmlight_file(fh)[0], X0)
    assert_csr_identical(load_svmlight_file(io.StringIO(text.decode()))[0], X0)


def test_line_endings_whitespace_comments():
    a = load_bytes(b"1 1:1 3:2\n2\t2:5  # c\n")
    for text in (b"1 1:1 3:2\r\n2 2:5\r\n", b"\n# head\n1   1:1\t3:2 \n\n2 2:5#c", b"1 1:1 3:2\n2 2:5"):
        b = load_bytes(text)
        assert_csr_identical(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


def test_zero_based():
    X, _ = load_bytes(b"1 1:1 3:2\n")                                   # auto: no 0 -> one-based
    assert X.shape == (1, 3) and X.indices.tolist() == [0, 2]
    X, _ = load_bytes(b"1 0:1 3:2\n")                                   # auto: a 0 -> zero-based
    assert X.shape == (1, 4) and X.indices.tolist() == [0, 3]
    X, _ = load_bytes(b"1 1:1 3:2\n", zero_based=True)
    assert X.shape == (1, 4) and X.indices.tolist() == [1, 3]
    X, _ = load_bytes(b"1 1:1 3:2\n", zero_based=False)
    assert X.indices.tolist() == [0, 2]
    for text in (b"1 1:1 3:2\n2 0:1\n", b"1 2:1\n"):
        for zb in ("auto", True, False):
            if zb is False and b" 0:" in text:
                continue
            ours = load_bytes(text, zero_based=zb)[0]
            theirs = sk_datasets.load_svmlight_file(io.BytesIO(text), zero_based=zb)[0]
            assert_csr_identical(ours, theirs.tocsr())


def test_n_features_and_dtype():
    X, _ = load_bytes(b"1 1:1 3:2\n", n_features=10)
    assert X.shape == (1, 10)
    X, _ = load_bytes(b"1 1:1 3:2\n", n_features=3)
    assert X.shape == (1, 3)
    X, _ = load_bytes(b"1\n2\n")                                        # no features at all
    assert X.shape == (2, 0)
    X, _ = load_bytes(b"1 1:0.1\n", dtype=np.float32)
    assert X.dtype == np.float32 and X.data[0] == np.float32(0.1)


def test_kind_detection():
    assert len(load_bytes(b"1 1:1\n2 2:1\n")) == 2
    X, Y = load_bytes(b"1 1:1\n 2:1\n")                                 # empty label set
    assert Y.toarray().tolist() == [[0, 1], [0, 0]]
    X, Y = load_bytes(b"0,3 1:1\n1 2:1\n")
    assert Y.toarray().tolist() == [[1, 0, 0, 1], [0, 1, 0, 0]]
    X, Y = load_bytes(b"1 1:1\n", kind="multilabel", n_labels=4)
    assert Y.shape == (1, 4) and Y.toarray().tolist() == [[0, 1, 0, 0]]
    X, Y = load_bytes(b"3,1,3 1:1\n", kind="multilabel")                # sorted, deduplicated
    assert Y.indices.tolist() == [1, 3] and Y.data.tolist() == [1, 1]
    X, y, lengths = load_bytes(b"1 qid:7 1:1\n2 qid:7\n3 qid:-2 2:1\n")
    assert y.tolist() == [1, 2, 3] and lengths.tolist() == [2, 1]
    X, Y = load_bytes(b"1 qid:1 1:1\n 2:1\n", kind="multilabel")        # qid ignored
    assert Y.shape == (2, 2)
    with pytest.raises(ValueError):
        load_bytes(b"1 1:1\n", kind="bogus")


def test_number_parsing_matches_python_float():
    texts = ["0", "-0", "+1", "1.", ".5", "-.5e-3", "1e5", "1E+5", "123456789012345678901234567890",
             "0.1", "0.30000000000000004", "2.2250738585072014e-308", "4.9e-324", "1e-400",
             "1.7976931348623157e308", "9007199254740993", "0.000000000000000000000000001",
             "3.14159265358979323846264338327950288", "00012.5000", "1" * 40 + ".5"]
    line = "1 " + " ".join(f"{i + 1}:{t}" for i, t in enumerate(texts)) + "\n"
    X, _ = load_bytes(line.encode())
    expected = np.array([float(t) for t in texts])
    got = np.zeros(len(texts))
    got[X.indices] = X.data
    assert got.tobytes() == expected.tobytes()


def test_number_parsing_ignores_locale():
    import locale
    old = locale.setlocale(locale.LC_NUMERIC)
    for name in ("de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8"):
        try:
            locale.setlocale(locale.LC_NUMERIC, name)
            break
        except locale.Error:
            continue
    else:
        pytest.skip("no locale with a decimal comma installed")
    try:
        X, y = load_bytes(b"2.5 1:0.125 2:1e-3\n")
    finally:
        locale.setlocale(locale.LC_NUMERIC, old)
    assert y.tolist() == [2.5] and X.data.tolist() == [0.125, 1e-3]


# ---------------------------------------------------------------------------------- hypothesis

finite = st.floats(allow_nan=False, allow_infinity=False)
spicy = st.one_of(finite, st.sampled_from([5e-324, -2.2250738585072014e-308, 1.7976931348623157e308,
                                           -0.0, 0.0, 1e16, 1e15, 0.1, 1e-300, 123456.0]))


@st.composite
def datasets(draw):
    n = draw(st.integers(1, 8))
    d = draw(st.integers(1, 12))
    mask = draw(st.lists(st.lists(st.booleans(), min_size=d, max_size=d), min_size=n, max_size=n))
    rows, cols = np.nonzero(np.array(mask, dtype=bool))
    vals = np.array([draw(spicy) for _ in range(rows.size)], dtype=np.float64)
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, d))        # keeps explicit zeros
    kind = draw(st.sampled_from(["multiclass", "multilabel", "sequence"]))
    if kind == "multilabel":
        k = draw(st.integers(1, 5))
        y = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=k, max_size=k),
                                   min_size=n, max_size=n)), dtype=np.int8)
        if draw(st.booleans()):
            y = sp.csr_matrix(y)
    else:
        y = np.array(draw(st.lists(spicy, min_size=n, max_size=n)))
    lengths = None
    if kind == "sequence":
        cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=n - 1))) if n > 1 else []
        lengths = np.diff([0, *cuts, n])
    return X, y, lengths, kind, draw(st.booleans())


@FAST
@given(datasets())
def test_roundtrip_random(case):
    X, y, lengths, kind, zero_based = case
    buf = io.BytesIO()
    dump_svmlight_file(X, y, buf, zero_based=zero_based, lengths=lengths)
    out = load_bytes(buf.getvalue(), n_features=X.shape[1], zero_based=zero_based, kind=kind,
                     **({"n_labels": y.shape[1]} if kind == "multilabel" else {}))
    if kind == "multilabel":
        X2, Y2 = out
        Y = sp.csr_matrix(y)
        assert Y2.shape == Y.shape and (Y2 != Y).nnz == 0
        # a row with neither labels nor features is written with an explicit 0 in column 0
        keep = np.flatnonzero((np.diff(X.indptr) > 0) | (np.diff(Y.indptr) > 0))
        lost = np.setdiff1d(np.arange(X.shape[0]), keep)
        assert all(X2[i].nnz == 1 and X2[i].indices[0] == 0 and X2[i].data[0] == 0 for i in lost)
        X, X2 = X[keep], X2[keep]
    else:
        X2, y2 = out[:2]
        assert y2.tobytes() == y.tobytes()
        if kind == "sequence":
            np.testing.assert_array_equal(out[2], lengths[lengths > 0])
    assert_csr_identical(X, X2)


@FAST
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=20),
       st.sampled_from(["%r", "%.17g", "%.3e", "%.25f", "%+.10G", "%.1f"]))
def test_value_text_random(values, fmt):
    texts = [fmt % v for v in values]
    line = "1 " + " ".join(f"{i + 1}:{t}" for i, t in enumerate(texts))
    expected = np.array([float(t) for t in texts])
    if not np.all(np.isfinite(expected)):                # rounding the text may overflow
        with pytest.raises(ValueError, match="non-finite"):
            load_bytes(line.encode())
        return
    X, _ = load_bytes(line.encode(), n_features=len(texts))
    got = np.zeros(len(texts))
    got[X.indices] = X.data
    assert got.tobytes() == expected.tobytes()


def _check_load(blob, **kw):
    try:
        out = load_bytes(blob, **kw)
    except ValueError:
        return
    X = out[0]
    assert sp.isspmatrix_csr(X) and X.shape[0] == out[1].shape[0] >= 1
    assert np.all(np.isfinite(X.data))
    if X.nnz:
        assert X.indices.min() >= 0 and X.indices.max() < X.shape[1]


FUZZ_KW = st.fixed_dictionaries({"kind": st.sampled_from(["auto", "multiclass", "multilabel",
                                                          "sequence"]),
                                 "zero_based": st.sampled_from(["auto", True, False])})


@FAST
@given(st.binary(max_size=300), FUZZ_KW)
def test_fuzz_arbitrary_bytes(blob, kw):
    _check_load(blob, **kw)


SEED_LINES = [b"1 1:1 2:0.5\n", b"2 qid:3 4:1e-3 7:2\n", b"0,2,5 1:1 9:-3\n", b" 3:1 # c\n",
              b"-1.5 2:7\n", b"\n", b"# comment\n", b"1 0:1\n"]


@FAST
@given(st.lists(st.sampled_from(SEED_LINES), min_size=1, max_size=6),
       st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255), st.sampled_from("ids")),
                max_size=6), FUZZ_KW)
def test_fuzz_mutated_lines(lines, edits, kw):
    blob = _mutated(lines, edits)
    _check_load(blob, **kw)
    _check_load(blob, n_features=5, n_labels=4, **kw)


def _mutated(lines, edits):
    """The lines joined, then each (position, byte, insert/delete/substitute) edit applied."""
    blob = bytearray(b"".join(lines))
    for pos, byte, op in edits:
        pos = pos % (len(blob) + 1)
        if op == "i":
            blob[pos:pos] = bytes([byte])
        elif op == "d":
            del blob[pos:pos + 1]
        elif pos < len(blob):
            blob[pos] = byte
    return bytes(blob)


@FAST
@given(st.lists(st.sampled_from(SEED_LINES), min_size=1, max_size=12),
       st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255), st.sampled_from("ids")), max_size=4),
       FUZZ_KW, st.integers(5, 60), st.sampled_from([None, 12]))
def test_block_parse_of_a_path_equals_the_whole_parse(lines, edits, kw, block, n_features):
    """A path is parsed in blocks straight into the arrays; a file object in one piece: the same
    arrays, or the same error."""
    import tempfile
    import ssvmlinear.io as sio
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f.svm")
        with open(path, "wb") as fh:
            fh.write(_mutated(lines, edits))
        old = sio.PARSE_BLOCK
        sio.PARSE_BLOCK = block
        try:
            try:
                got = load_svmlight_file(path, n_features=n_features, **kw)
            except ValueError as e:
                got = str(e)
        finally:
            sio.PARSE_BLOCK = old
        try:
            with open(path, "rb") as fh:
                want = load_svmlight_file(fh, n_features=n_features, **kw)
        except ValueError as e:
            want = str(e)
    if isinstance(want, str):
        assert got == want
        return
    assert len(got) == len(want)
    X, Xw = got[0], want[0]
    assert X.shape == Xw.shape and X.dtype == Xw.dtype and X.indices.dtype == Xw.indices.dtype
    np.testing.assert_array_equal(X.indptr, Xw.indptr)
    np.testing.assert_array_equal(X.indices, Xw.indices)
    np.testing.assert_array_equal(X.data, Xw.data)
    for a, b in zip(got[1:], want[1:]):
        if sp.issparse(b):
            assert a.shape == b.shape and abs(a - b).nnz == 0
        else:
            np.testing.assert_array_equal(a, b)


def test_a_pipe_named_by_a_path_is_read_once(tmp_path):
    """A named pipe (what `<(zcat file)` gives) cannot be read twice: the block parser leaves it alone."""
    import threading
    fifo = tmp_path / "pipe.svm"
    os.mkfifo(fifo)
    text = b"".join(b"%d 1:%d 3:0.5\n" % (k % 3, k + 1) for k in range(200))

    def feed():
        with open(fifo, "wb") as fh:
            fh.write(text)
    t = threading.Thread(target=feed)
    t.start()
    X, y = load_svmlight_file(str(fifo), zero_based=False)
    t.join()
    assert X.shape == (200, 3) and np.array_equal(y, np.arange(200) % 3)
