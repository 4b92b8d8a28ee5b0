"""CRFsuite's data format: the reader against python-crfsuite's own items, its errors (fuzzed),
format detection, and ssvm-train / ssvm-predict on CRFsuite files (vocabulary in the model)."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ssvmlinear import ChainSSVM, load_crfsuite_file, load_model, save_model
from ssvmlinear.io import looks_like_crfsuite
from ssvmlinear.feature_extraction import SequenceVectorizer

pycrfsuite = pytest.importorskip("pycrfsuite")

name_chars = st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\t\n\r\x00")
attr_names = st.text(alphabet=name_chars, min_size=1, max_size=8)
attr_values = st.one_of(st.just(1.0), st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False))
items = st.dictionaries(attr_names, attr_values, max_size=5)
labels = st.text(alphabet=name_chars, min_size=1, max_size=4).filter(lambda s: not s.startswith("@"))  # "@": a declaration
sequences = st.lists(st.lists(st.tuples(labels, items), min_size=1, max_size=5), min_size=1, max_size=4)


def escape(text):
    return text.replace("\\", "\\\\").replace(":", "\\:")


def crfsuite_text(seqs):
    out = []
    for seq in seqs:
        for label, item in seq:
            fields = [escape(label)] + [escape(n) if v == 1.0 else f"{escape(n)}:{v!r}" for n, v in item.items()]
            out.append("\t".join(fields) + "\n")
        out.append("\n")
    return "".join(out).encode("utf-8")


@settings(max_examples=200, deadline=None)
@given(seqs=sequences)
def test_reader_equals_python_crfsuites_items(seqs):
    X, y, lengths, names = load_crfsuite_file(io.BytesIO(crfsuite_text(seqs)))
    assert lengths.tolist() == [len(s) for s in seqs]
    assert y.tolist() == [label for s in seqs for label, _ in s]
    tokens = [item for s in seqs for _, item in s]
    expected = [dict(d) for s in seqs for d in pycrfsuite.ItemSequence([item for _, item in s]).items()]
    assert len(expected) == X.shape[0] == len(tokens)
    for r, want in enumerate(expected):
        row = X[r]
        got = {names[j]: v for j, v in zip(row.indices, row.data)}
        assert got == pytest.approx({k: v for k, v in want.items() if v != 0.0})


@settings(max_examples=100, deadline=None)
@given(seqs=sequences)
def test_reader_equals_the_vectorizer_on_the_same_items(seqs):
    X, _, _, names = load_crfsuite_file(io.BytesIO(crfsuite_text(seqs)))
    vec = SequenceVectorizer().fit([[item for _, item in s] for s in seqs])
    assert names == vec.feature_names_
    assert abs(X - vec.transform([[item for _, item in s] for s in seqs])).sum() == 0


def test_hashing_and_a_given_vocabulary():
    text = b"A\tx\ty:2\nB\tz\n"
    X, _, _, names = load_crfsuite_file(io.BytesIO(text), n_features=16)
    assert names is None and X.shape == (2, 16)
    ref = SequenceVectorizer(n_features=16).fit_transform([[{"x": 1.0, "y": 2.0}, {"z": 1.0}]])
    assert abs(X - ref).sum() == 0
    X, _, _, names = load_crfsuite_file(io.BytesIO(text), feature_names=["y", "q"])
    assert names == ["y", "q"] and X.toarray().tolist() == [[2.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize("text, line, match", [
    (b"A\tx:1:2\n", 1, "more than one ':'"),
    (b"A\tx\n\nB\t:3\n", 3, "empty attribute name"),
    (b"A\tx:abc\n", 1, "not a number"),
    (b"A\tx:1e999\n", 1, "not finite"),
    (b"A\tx:nan\n", 1, "not a number|not finite"),
    (b"A:1\tx\n", 1, "label"),
    (b"@weight:2\nA\tx\n", 1, "declarations"),
    (b"A\tx\nB\t\x00\n", 2, "NUL"),
    (b"A\t\xff\xfe\n", 1, "not UTF-8"),
])
def test_errors_name_the_file_and_line(tmp_path, text, line, match):
    path = tmp_path / "bad.txt"
    path.write_bytes(text)
    with pytest.raises(ValueError, match=f"^{path}:{line}: .*({match})"):
        load_crfsuite_file(path)


@settings(max_examples=400, deadline=None)
@given(raw=st.lists(st.sampled_from([b"\t", b"\n", b"\r", b":", b"\\", b"a", b"1", b".", b"e", b"-", b"@",
                                     b"\x00", b"\xff", b"\xc3\xa9", b" ", b"B-X"]), max_size=60).map(b"".join))
def test_fuzzed_bytes_load_or_fail_with_one_line(raw):
    try:
        X, y, lengths, names = load_crfsuite_file(io.BytesIO(raw))
    except ValueError as e:
        assert str(e).startswith("<file>:") and "\n" not in str(e)
        return
    assert X.shape[0] == y.shape[0] == lengths.sum()
    assert np.all(np.isfinite(X.data))


def test_format_detection():
    assert looks_like_crfsuite(b"B-PER\tw=John\nO\tw=x\n\nO\tw=y\n")
    assert looks_like_crfsuite(b"1\tw=John\n")
    assert not looks_like_crfsuite(b"1 qid:1 3:0.5 7:1\n2 qid:1 1:1\n")
    assert not looks_like_crfsuite(b"1\t3:0.5\t7:1\n-1\t2:1 # comment\n")
    assert not looks_like_crfsuite(b"1,2 3:0.5\n\n")


def run(*args, cwd):
    return subprocess.run([sys.executable, "-c", "import sys; from ssvmlinear.cli import train_main, predict_main; "
                           f"sys.exit({'predict_main' if args[0] == 'predict' else 'train_main'}(sys.argv[1:]))",
                           *args[1:]], capture_output=True, text=True, cwd=cwd)


def write_ner(path, n, seed):
    rng = np.random.default_rng(seed)
    words = {"PER": ["john", "mary"], "LOC": ["paris", "oslo"], "O": ["the", "in", "saw"]}
    with open(path, "w") as f:
        for _ in range(n):
            prev = "<s>"
            for _ in range(rng.integers(1, 6)):
                k = rng.choice(["O", "PER", "LOC"])
                w = rng.choice(words[k])
                f.write(("O" if k == "O" else f"B-{k}") + f"\tw={w}\tw[-1]={prev}\tcolon\\:name\n")
                prev = w
            f.write("\n")


def test_ssvm_train_and_predict_on_crfsuite_files(tmp_path):
    write_ner(tmp_path / "train.txt", 80, 0)
    write_ner(tmp_path / "test.txt", 20, 1)
    r = run("train", "-q", "train.txt", "model", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run("predict", "test.txt", "model", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Entities (micro): precision 100.00%, recall 100.00%, F1 100.00" in r.stdout
    _, y, _, _ = load_crfsuite_file(tmp_path / "test.txt")
    assert (tmp_path / "out").read_text().split() == y.tolist()
    blocks = lambda text: [b.split("\n") for b in text.strip("\n").split("\n\n")]
    assert blocks((tmp_path / "out").read_text()) == [[line.split("\t")[0] for line in b]
                                                      for b in blocks((tmp_path / "test.txt").read_text())]
    model = load_model(tmp_path / "model")
    assert "colon:name" in model.token_features_.feature_names
    # the same model from the API
    X, y, lengths, names = load_crfsuite_file(tmp_path / "train.txt")
    assert model.n_features_in_ == len(names)
    # -t crfsuite reads it too; a malformed test file is one line and exit 1
    assert run("train", "-q", "-t", "crfsuite", "train.txt", "m2", cwd=tmp_path).returncode == 0
    (tmp_path / "bad.txt").write_text("O\tw:x\n")
    r = run("predict", "bad.txt", "model", "out2", cwd=tmp_path)
    assert r.returncode == 1 and r.stderr.strip() == "ssvm-predict: error: bad.txt:1: field 'w:x': the attribute's value is not a number"


def test_model_file_keeps_a_vocabulary_of_any_names(tmp_path):
    sents = [[{"a\nb": 1.0, "c\\d": 2.0, "e\r": True, " sp ": "x y"}, {"f": 1.0}]]
    est = ChainSSVM(C=1.0).fit(sents, [["B-X", "O"]])
    save_model(est, tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert back.token_features_.feature_names == est.token_features_.feature_names
    assert back.predict(sents) == est.predict(sents)


def test_model_file_vocabulary_refusals(tmp_path):
    est = ChainSSVM(C=1.0).fit([[{"a": 1.0}, {"b": 1.0}]], [["B-X", "O"]])
    save_model(est, tmp_path / "m")
    text = (tmp_path / "m").read_text()
    (tmp_path / "short").write_text(text[:text.rindex("b\n")])
    with pytest.raises(ValueError, match="vocabulary ends early|truncated"):
        load_model(tmp_path / "short")
    (tmp_path / "wrong").write_text(text.replace("vocabulary 2", "vocabulary 3"))
    with pytest.raises(ValueError, match="vocabulary 3 differs from nr_feature 2"):
        load_model(tmp_path / "wrong")
    (tmp_path / "repeat").write_text(text[:text.rindex("b\n")] + "a\n")
    with pytest.raises(ValueError, match="repeat"):
        load_model(tmp_path / "repeat")


def test_predict_refuses_the_other_format(tmp_path):
    write_ner(tmp_path / "train.txt", 30, 0)
    assert run("train", "-q", "train.txt", "model", cwd=tmp_path).returncode == 0
    (tmp_path / "test.svm").write_text("1 qid:1 1:1\n2 qid:1 2:1\n")
    r = run("predict", "test.svm", "model", "out", cwd=tmp_path)
    assert r.returncode == 1 and "trained on CRFsuite's format" in r.stderr and "Traceback" not in r.stderr
    (tmp_path / "train.svm").write_text("1 qid:1 1:1\n2 qid:1 2:1\n1 qid:2 1:1\n")
    assert run("train", "-q", "train.svm", "m2", cwd=tmp_path).returncode == 0
    r = run("predict", "train.txt", "m2", "out", cwd=tmp_path)
    assert r.returncode == 1 and "holds CRFsuite's format" in r.stderr and "Traceback" not in r.stderr
