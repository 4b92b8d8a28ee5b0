"""ssvm-train / ssvm-predict and model files."""
import os
import subprocess
import sys

import numpy as np
import pytest

from ssvmlinear import MulticlassSSVM, dump_svmlight_file, load_svmlight_file, save_model, load_model
from ssvmlinear.cli import train_main, predict_main
from ssvmlinear.solvers import SDM

from conftest import random_multiclass, DATA


@pytest.fixture
def train_test_files(tmp_path):
    X, y = random_multiclass(n=120, d=15, K=4, density=0.4, seed=11)
    y = np.array([3, 7, 11, 20])[y]  # arbitrary numeric labels
    dump_svmlight_file(X[:90], y[:90], tmp_path / "train.svm")
    dump_svmlight_file(X[90:], y[90:], tmp_path / "test.svm")
    return tmp_path / "train.svm", tmp_path / "test.svm"


def test_usage_without_arguments(capsys):
    assert train_main([]) == 1
    out = capsys.readouterr().out
    for opt in ("-s type", "-t structure", "-c cost", "-e epsilon", "-B bias", "-m max_iter", "-v n", "-n jobs",
                "-r seed", "-q"):
        assert opt in out
    assert predict_main([]) == 1
    assert "Usage: ssvm-predict" in capsys.readouterr().out


def test_cli_and_api_give_identical_predictions(train_test_files, tmp_path, capsys):
    train, test = train_test_files
    model, out = tmp_path / "m.model", tmp_path / "pred.txt"
    assert train_main(["-c", "0.5", "-e", "0.001", "-B", "1", "-q", str(train), str(model)]) == 0
    assert predict_main([str(test), str(model), str(out)]) == 0
    printed = capsys.readouterr().out
    pred_cli = np.loadtxt(out)
    X, y = load_svmlight_file(train, zero_based=False)
    Xt, yt = load_svmlight_file(test, zero_based=False, n_features=X.shape[1])
    est = MulticlassSSVM(C=0.5, tol=0.001, fit_intercept=True, intercept_scaling=1.0, random_state=1).fit(X, y)
    pred_api = est.predict(Xt)
    assert np.array_equal(pred_cli, pred_api)
    correct = int(np.sum(pred_api == yt))
    assert f"Accuracy = {100.0 * correct / len(yt):g}% ({correct}/{len(yt)})" in printed
    loaded = load_model(model)
    np.testing.assert_array_equal(loaded.coef_, est.coef_)
    np.testing.assert_array_equal(loaded.intercept_, est.intercept_)


def test_console_scripts_installed(train_test_files, tmp_path):
    train, test = train_test_files
    model = tmp_path / "m.model"
    bindir = os.path.dirname(sys.executable)
    r = subprocess.run([os.path.join(bindir, "ssvm-train"), "-q", str(train), str(model)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([os.path.join(bindir, "ssvm-predict"), str(test), str(model), str(tmp_path / "p")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("Accuracy = ")


def test_cross_validation(train_test_files, capsys):
    train, _ = train_test_files
    assert train_main(["-v", "3", "-q", "-n", "2", str(train)]) == 0
    out = capsys.readouterr().out
    acc = float(out.split("=")[1].strip().rstrip("%"))
    assert 40.0 < acc <= 100.0


def test_cross_validation_matches_manual_folds(train_test_files):
    from ssvmlinear.model_selection import cross_val_predict, kfold_indices
    X, y = load_svmlight_file(train_test_files[0])
    est = MulticlassSSVM(C=1.0, random_state=0)
    p1 = cross_val_predict(est, X, y, 3, seed=5, n_jobs=1)
    p2 = cross_val_predict(est, X, y, 3, seed=5, n_jobs=2)
    assert np.array_equal(p1, p2)
    fold = kfold_indices(X.shape[0], 3, seed=5)
    test = fold == 1
    manual = MulticlassSSVM(C=1.0, random_state=0).fit(X[~test], y[~test]).predict(X[test])
    assert np.array_equal(p1[test], manual)


@pytest.mark.parametrize("argv, message", [
    (["-s", "9"], "unknown solver type -s 9"),
    (["-s", "4", "-l", "hinge"], "-l: unknown loss"),
    (["-s", "4", "-S", "golden"], "-S: unknown search"),
    (["-l", "slack"], "-l applies to -s 2, 4"),
    (["-s", "3", "-S", "exact"], "-S applies to -s 2, 4"),
    (["-s", "2", "-l", "slack", "-b", "4"], "-b applies to -s 0, 4"),
    (["-s", "1", "-b", "4"], "-b applies to -s 0, 4"),
    (["-b", "0"], "-b must be an integer >= 1"),
    (["-s", "9"], "unknown solver type"),
    (["-c", "-1"], "-c must be a finite number > 0"),
    (["-c", "inf"], "-c must be a finite number > 0"),
    (["-e", "nan"], "-e must be a finite number > 0"),
    (["-m", "0"], "-m must be an integer >= 1"),
    (["-P", "0"], "-P must be an integer >= 1"),
    (["-s", "6", "-F", "0"], "-F must be an integer >= 1"),
    (["-B", "nan"], "-B must be a finite number, got nan"),
    (["-B", "inf"], "-B must be a finite number, got inf"),
    (["-x", "1"], "unknown option: -x"),
    (["-m", "1.5"], "-m must be an integer >= 1, got 1.5"),
    (["-c", "abc"], "-c must be a finite number > 0, got abc"),
    (["-t", "tree"], "unknown structure"),
])
def test_bad_options_exit_nonzero(argv, message, train_test_files, capsys):
    assert train_main(argv + [str(train_test_files[0])]) == 1
    assert message in capsys.readouterr().err


def test_option_without_value(capsys):
    assert train_main(["-q", "-c"]) == 1
    assert "option -c needs a value" in capsys.readouterr().err


def test_bad_training_file_names_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5 2:1\n2 3:1 2:1\n")
    assert train_main(["-q", str(bad), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err
    assert not (tmp_path / "m").exists()


@pytest.fixture
def chain_files(tmp_path):
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters_test.svm.gz", n_features=128)
    n_train = 80  # words
    t = int(lengths[:n_train].sum())
    tr, te = tmp_path / "chain_train.svm", tmp_path / "chain_test.svm"
    dump_svmlight_file(X[:t], y[:t], tr, lengths=lengths[:n_train])
    dump_svmlight_file(X[t:], y[t:], te, lengths=lengths[n_train:])
    return tr, te


@pytest.mark.parametrize("stype, solver, loss", [("0", "sdm", "margin"), ("1", "sdcd", "lse"),
                                                  ("2", "cutting-plane", "margin"), ("3", "cutting-plane", "lse")])
def test_chain_cli_and_api_agree(chain_files, tmp_path, capsys, stype, solver, loss):
    from ssvmlinear import ChainSSVM
    tr, te = chain_files
    model, out = tmp_path / "chain.model", tmp_path / "pred"
    assert train_main(["-s", stype, "-c", "0.1", "-q", str(tr), str(model)]) == 0
    assert predict_main([str(te), str(model), str(out)]) == 0
    printed = capsys.readouterr().out
    X, y, lengths = load_svmlight_file(tr)
    Xt, yt, lt = load_svmlight_file(te, n_features=X.shape[1])
    est = ChainSSVM(C=0.1, solver=solver, loss=loss, random_state=1).fit(X, y, lengths)
    pred = est.predict(Xt, lt)
    assert np.array_equal(np.loadtxt(out), pred)
    correct = int(np.sum(pred == yt))
    assert f"Accuracy = {100.0 * correct / len(yt):g}% ({correct}/{len(yt)})" in printed
    assert "Sequence accuracy = " in printed
    back = load_model(model)
    assert np.array_equal(back.transition_, est.transition_) and np.array_equal(back.coef_, est.coef_)


def test_chain_cross_validation_splits_by_sequence(chain_files, capsys):
    from ssvmlinear import ChainSSVM
    from ssvmlinear.model_selection import cross_val_predict
    assert train_main(["-v", "3", "-q", str(chain_files[0])]) == 0
    printed = capsys.readouterr().out
    X, y, lengths = load_svmlight_file(chain_files[0])
    pred = cross_val_predict(ChainSSVM(random_state=1), X, y, 3, seed=1, lengths=lengths)
    assert f"Cross Validation Accuracy = {100 * np.mean(pred == y):g}%" in printed
    assert "Cross Validation Sequence accuracy = " in printed       # as ssvm-predict prints for chains


# ---------------------------------------------------------------- model files

def test_chain_model_round_trip_with_start_end_and_bias(tmp_path):
    from ssvmlinear import ChainSSVM
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters_test.svm.gz", n_features=128)
    t = int(lengths[:40].sum())
    est = ChainSSVM(C=0.1, start_end=True, fit_intercept=True, normalize_loss=True).fit(X[:t], y[:t], lengths[:40])
    save_model(est, tmp_path / "m")
    back = load_model(tmp_path / "m")
    for attr in ("coef_", "intercept_", "transition_", "start_", "end_", "classes_"):
        assert np.array_equal(getattr(back, attr), getattr(est, attr))
    assert back.start_end and back.normalize_loss
    assert np.array_equal(back.predict(X[t:], lengths[40:]), est.predict(X[t:], lengths[40:]))
    save_model(back, tmp_path / "m2")
    assert (tmp_path / "m").read_text() == (tmp_path / "m2").read_text()


@pytest.mark.parametrize("labels", [np.array([3, 7, 11, 20]), np.array([0.0, 2.0, -3.0, 2.0**52]),
                                    np.array(["ant", "bee", "cow", "dog"])])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_model_round_trip_is_exact(labels, fit_intercept, tmp_path):
    X, y = random_multiclass(n=60, d=9, K=4, seed=12)
    est = MulticlassSSVM(C=0.7, fit_intercept=fit_intercept, intercept_scaling=2.5).fit(X, labels[y])
    save_model(est, tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert np.array_equal(back.classes_, est.classes_) and back.classes_.dtype.kind == est.classes_.dtype.kind
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.intercept_, est.intercept_)
    assert np.array_equal(back.predict(X), est.predict(X))
    save_model(back, tmp_path / "m2")
    assert (tmp_path / "m").read_text() == (tmp_path / "m2").read_text()


def _saved_model_lines(tmp_path):
    X, y = random_multiclass(n=40, d=4, K=3, seed=13)
    save_model(MulticlassSSVM().fit(X, y), tmp_path / "m")
    return (tmp_path / "m").read_text().split("\n")


@pytest.mark.parametrize("corrupt, message", [
    (lambda L: ["liblinear_model"] + L[1:], ":1: not an ssvmlinear model file"),
    (lambda L: L[:-3], "truncated"),
    (lambda L: [x for x in L if x != "w"], "is the 'w' line missing"),
    (lambda L: L[:-2] + ["5 1.0 abc 2.0", ""], "weights must be decimal numbers"),
    (lambda L: L[:-2] + ["5 1.0 2.0", ""], "expected 3 weights after the feature index, found 2"),
    (lambda L: L[:-2] + ["x 1.0 2.0 3", ""], "bad feature index 'x'"),
    (lambda L: L[:-2] + ["6 1.0 2.0 3", ""], r"feature index 6 is not in \d\.\.5"),
    (lambda L: L[:-3] + [L[-2], L[-3], ""], "indices increase"),
    (lambda L: [x for x in L if not x.startswith("nr_w_rows")], "no 'nr_w_rows' line"),
    (lambda L: [x.replace("nr_w_rows 5", "nr_w_rows 6") for x in L], "not between 0 and the 5 weight rows"),
    (lambda L: [x.replace("nr_feature 4", "nr_feature 40") .replace("nr_w_rows 5", "nr_w_rows 41") for x in L],
     r"block 'w' holds 41 x 3 = 123 weights .*, but only \d+ bytes follow"),
    (lambda L: [x.replace("nr_class 3", "nr_class x") for x in L], "bad nr_class value"),
    (lambda L: [x for x in L if not x.startswith("label ")], "no 'label' line"),
    (lambda L: L + ["0 0 0"], "unexpected content after the weights"),
    (lambda L: [x.replace("structure multiclass", "structure forest") for x in L], "unknown structure"),
    (lambda L: [x.replace("nr_feature 4", "nr_feature 2000000000") for x in L],
     "a model of 2000000001 x 3 weights .* needs 89.4 GiB; .* GiB are available"),
    (lambda L: [x.replace("nr_feature 4", "nr_feature 100000000000") for x in L], r":9: nr_feature must be in 0\.\.2\*\*31 - 2"),
    (lambda L: [x.replace("nr_feature 4", "nr_feature 1e400") for x in L], ":9: bad nr_feature value"),
    (lambda L: [x.replace("nr_class 3", "nr_class 99999999999999999999") for x in L], ":7: bad nr_class value"),
    (lambda L: [x.replace("bias 1.0", "bias inf") for x in L], ":10: bad bias value 'inf'"),
    (lambda L: [x.replace("bias 1.0", "bias 1e309") for x in L], ":10: bad bias value"),
    (lambda L: [x.replace("bias 1.0", "bias Infinity") for x in L], ":10: bad bias value"),
    (lambda L: [x.replace("bias 1.0", "bias nan") for x in L], ":10: bad bias value"),
    (lambda L: [x.replace("C 1.0", "C -1") for x in L], ":5: C must be > 0"),
    (lambda L: [x.replace("label 0 1 2", "label 0 1 1_0") for x in L], ":8: labels do not parse as int"),
    (lambda L: [x.replace("label 0 1 2", "label 0 1 1") for x in L], ":8: labels repeat"),
    (lambda L: [x.replace("solver sdm", "solver simplex") for x in L], ":3: unknown solver"),
    (lambda L: [x.replace("loss margin", "loss hinge") for x in L], ":4: "),
    (lambda L: L[:-2] + ["5 1.0 2.0 Infinity", ""], "weights must be decimal numbers"),
    (lambda L: L[:-2] + ["5 1.0 2.0 1e400", ""], "weights must be finite"),
    (lambda L: [x.replace("ssvmlinear_model 2", "ssvmlinear_model 3") for x in L], "unsupported model format"),
])
def test_corrupt_model_gives_clear_error(corrupt, message, tmp_path, capsys):
    lines = _saved_model_lines(tmp_path)
    (tmp_path / "bad").write_text("\n".join(corrupt(lines)))
    with pytest.raises(ValueError, match=message) as info:
        load_model(tmp_path / "bad")
    assert str(tmp_path / "bad") in str(info.value)
    test = tmp_path / "t.svm"
    test.write_text("1 1:1\n")
    assert predict_main([str(test), str(tmp_path / "bad"), str(tmp_path / "out")]) == 1
    assert "ssvm-predict: error:" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_model_write_is_atomic(tmp_path, monkeypatch):
    X, y = random_multiclass(n=40, d=4, K=3, seed=14)
    est = MulticlassSSVM().fit(X, y)
    save_model(est, tmp_path / "m")
    before = (tmp_path / "m").read_text()

    def boom(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        save_model(MulticlassSSVM(C=5.0).fit(X, y), tmp_path / "m")
    assert (tmp_path / "m").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


@pytest.mark.parametrize("flag, value, param", [("-b", "16", "oracle_batch"), ("-P", "2", "shards")])
def test_sdm_threads_from_the_cli(train_test_files, tmp_path, flag, value, param):
    """-s 0 -b (oracle blocks) and -P (shards): the same model for any -n, the API's with
    oracle_batch / shards, another than the plain method's."""
    train, _ = train_test_files
    models = []
    for jobs in ("1", "2"):
        model = tmp_path / f"m{jobs}.model"
        assert train_main([flag, value, "-n", jobs, "-e", "0.001", "-q", str(train), str(model)]) == 0
        models.append(load_model(model))
    np.testing.assert_array_equal(models[0].coef_, models[1].coef_)
    X, y = load_svmlight_file(train, zero_based=False)
    est = MulticlassSSVM(tol=0.001, random_state=1, fit_intercept=False, solver=SDM(**{param: int(value)})).fit(X, y)
    np.testing.assert_array_equal(models[0].coef_, est.coef_)
    plain = MulticlassSSVM(tol=0.001, random_state=1, fit_intercept=False).fit(X, y)
    assert not np.array_equal(plain.coef_, est.coef_)


def _mixed_multilabel_file(path):
    """Single-label and multi-label rows mixed; label values 2, 5 and 9 (never 0)."""
    rng = np.random.default_rng(3)
    lines = []
    for i in range(60):
        labels = sorted(set(rng.choice([2, 5, 9], size=rng.integers(1, 3)).tolist()))
        feats = " ".join(f"{j}:{v:.3f}" for j, v in zip(range(1, 7), rng.random(6)))
        lines.append(",".join(map(str, labels)) + " " + feats)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_mixed_single_and_multi_label_rows_get_no_phantom_label(tmp_path, capsys):
    data = _mixed_multilabel_file(tmp_path / "mixed.svm")
    model, pred = tmp_path / "mixed.model", tmp_path / "mixed.pred"
    assert train_main(["-q", str(data), str(model)]) == 0
    assert "label 2 5 9\n" in model.read_text()
    assert predict_main(["-q", str(data), str(model), str(pred)]) == 0
    predicted = {lab for line in pred.read_text().splitlines() for lab in line.split(",") if lab}
    assert predicted <= {"2", "5", "9"}


def test_predict_refuses_a_test_file_of_another_kind(chain_files, tmp_path, capsys):
    # a multi-label model on a sequence (qid) file; a chain model on a file without qid; a
    # multiclass model on a multi-label file: one line naming the file, exit 1, no output file
    train, test = chain_files
    mixed = _mixed_multilabel_file(tmp_path / "mixed.svm")
    noqid = tmp_path / "noqid.svm"
    noqid.write_text("".join(line.split(" qid:")[0] + " " + line.split(" ", 2)[2] + "\n"
                             for line in open(test).read().splitlines()))
    models = {}
    for name, args in [("multilabel", [str(mixed)]), ("chain", [str(train)]), ("multiclass", ["-t", "multiclass", str(train)])]:
        models[name] = tmp_path / f"{name}.model"
        assert train_main(["-q", "-m", "5"] + args + [str(models[name])]) == 0
    capsys.readouterr()
    for model, data, message in [("multilabel", test, "holds sequence data (sequences, qid:N on every line); "),
                                 ("chain", noqid, "holds multiclass data (one label per line); "),
                                 ("multiclass", mixed, "holds multilabel data (label lists l1,l2); ")]:
        out = tmp_path / f"{model}.pred"
        assert predict_main([str(data), str(models[model]), str(out)]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(data) in err and message in err
        assert f"{models[model]} is a {model} model, which predicts" in err
        assert not out.exists()


def test_sdm_shards_usage_errors(train_test_files, tmp_path):
    train, _ = train_test_files
    for bad in (["-P", "0"], ["-s", "2", "-P", "2"], ["-b", "4", "-P", "2"]):
        assert train_main([*bad, "-q", str(train), str(tmp_path / "bad.model")]) == 1
    assert not (tmp_path / "bad.model").exists()
