"""A model header cannot make load_model allocate more than the file holds (issue 13 item 3)."""
import resource
import subprocess
import sys
import time

import pytest

from ssvmlinear import load_model
from ssvmlinear.cli import predict_main


def bomb(path, K=100000, d=100000, version=1):
    """~800 KB: a header of K classes and d features, then (format 1) d one-number lines, or
    (format 2) one row of K weights, consistent with its header."""
    head = [f"ssvmlinear_model {version}", "structure multiclass", "solver sdm", "loss margin", "C 1.0",
            "label_type int", f"nr_class {K}", "label " + " ".join(str(k) for k in range(K)), f"nr_feature {d}",
            "bias -1"]
    rows = ["0"] * d if version == 1 else ["7 " + " ".join(["0.5"] * K)]
    head += ["w"] if version == 1 else ["nr_w_rows 1", "w"]
    path.write_text("\n".join(head + rows) + "\n")
    return path


def load_error(model):
    """The one-line error of load_model, checked to come within 1 s."""
    t = time.perf_counter()
    with pytest.raises(ValueError) as e:
        load_model(str(model))
    assert time.perf_counter() - t < 1.0
    msg = str(e.value)
    assert "\n" not in msg and str(model) in msg
    return msg


def test_model_header_bomb_fails_fast_with_one_line(tmp_path):
    msg = load_error(bomb(tmp_path / "bomb.model"))
    assert "10000000000 weights" in msg and "74.5 GiB" in msg


def test_model_header_bomb_under_a_memory_limit(tmp_path):
    """In a process that may grow by at most ~100 MB past its imports, the reader refuses at once."""
    model = bomb(tmp_path / "bomb.model")
    code = ("import resource, sys, ssvmlinear\n"
            "rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "try:\n    ssvmlinear.load_model(sys.argv[1])\nexcept ValueError as e:\n    print(e)\n"
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) // 1024)\n")
    r = subprocess.run([sys.executable, "-c", code, str(model)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    err, grown_mb = r.stdout.strip().split("\n")
    assert "bad nr_class / nr_feature" in err and int(grown_mb) < 100


def test_ssvm_predict_on_a_model_bomb(tmp_path, capsys):
    model = bomb(tmp_path / "bomb.model")
    test = tmp_path / "t.svm"
    test.write_text("1 1:1\n")
    assert predict_main([str(test), str(model), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ssvm-predict: error: ") and str(model) in err
    assert not (tmp_path / "out").exists()


def _run_measured(args):
    """(exit code, stderr, wall seconds, peak RSS in MB) of a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    seconds = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return r.returncode, r.stderr, seconds, max(peak, before) / 1024


def test_feature_index_bomb_fails_fast_with_one_line(tmp_path):
    """A 3-line file with feature index 2147483646 asked for 32 GiB and died with a MemoryError
    traceback. Now: one line naming the file and the sizes, within 1 s and 100 MB of a run that
    only imports the CLI (the import of numpy/scipy/scikit-learn is most of both)."""
    data = tmp_path / "bomb.svm"
    data.write_text("1 2147483646:1\n2 1:1\n1 3:1\n")
    base = _run_measured([sys.executable, "-c", "import ssvmlinear.cli"])
    code, err, seconds, mb = _run_measured([sys.executable, "-c", "import sys; from ssvmlinear.cli import train_main; "
                                            "sys.exit(train_main(sys.argv[1:]))", "-q", str(data), str(tmp_path / "m")])
    assert code == 1 and err.count("\n") == 1 and str(data) in err and "GiB" in err and "Traceback" not in err
    assert seconds - base[2] < 1.0 and mb - base[3] < 100
    assert not (tmp_path / "m").exists()


def test_multilabel_label_bomb_trains_over_the_labels_that_occur(tmp_path):
    """A multi-label label 2000000000 asked for 14.9 GiB (a column per label value)."""
    text = "2000000000 1:1\n1,2 2:1\n1 2:1 3:0.5\n2000000000,2 1:1 2:1\n"
    run = [sys.executable, "-c", "import sys; from ssvmlinear.cli import train_main, predict_main; "
           "sys.exit((train_main if sys.argv[1] == 't' else predict_main)(sys.argv[2:]))"]

    def limit():   # a regression must fail here, not take the machine's memory
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    def train_predict(name, text):
        data, model, pred = tmp_path / f"{name}.svm", tmp_path / f"{name}.model", tmp_path / f"{name}.pred"
        data.write_text(text)
        outs = []
        for argv in (["t", "-q", "-B", "1", str(data), str(model)], ["p", str(data), str(model), str(pred)]):
            r = subprocess.run(run + argv, preexec_fn=limit, capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, r.stderr
            outs.append(r.stdout)
        return model.read_text(), pred.read_text(), outs[1]

    model, pred, report = train_predict("big", text)
    # the same problem with the label called 3: the same model, predictions and measures
    model3, pred3, report3 = train_predict("small", text.replace("2000000000", "3"))
    assert "label 1 2 2000000000\n" in model and model.replace("2000000000", "3") == model3
    assert pred.replace("2000000000", "3") == pred3 and report == report3


# ---------------------------------------------------------------- format 2: only non-zero rows

def test_a_sparse_model_stores_only_its_nonzero_rows(tmp_path):
    """Feature index 10^8 trained and then failed writing 10^8 lines; a model file now lists the
    non-zero weight rows with their feature index, and reads back into the same estimator."""
    import numpy as np
    import scipy.sparse as sp
    from ssvmlinear import MulticlassSSVM, save_model
    d = 10**7
    X = sp.csr_matrix((np.ones(6), [0, 5, 9_999_999, 0, 5, 7], np.arange(7)), shape=(6, d))
    y = np.array([1, 2, 3, 1, 2, 3])
    est = MulticlassSSVM(C=10.0, fit_intercept=False).fit(X, y)
    save_model(est, tmp_path / "m")
    text = (tmp_path / "m").read_text()
    assert len(text) < 2000 and "nr_w_rows 4\nw\n1 " in text and "\n10000000 " in text
    back = load_model(tmp_path / "m")
    assert back.n_features_in_ == d
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))


def test_the_cli_trains_and_predicts_at_feature_index_1e7(tmp_path):
    data, model, out = tmp_path / "big.svm", tmp_path / "big.model", tmp_path / "pred"
    data.write_text("1 3:1 10000000:1\n2 1:1\n3 2:1 5:2\n1 3:1\n")
    code = "import sys; from ssvmlinear.cli import train_main as m; sys.exit(m(sys.argv[1:]))"
    assert subprocess.run([sys.executable, "-c", code, "-q", str(data), str(model)], timeout=120).returncode == 0
    assert model.stat().st_size < 2000
    code = code.replace("train_main", "predict_main")
    r = subprocess.run([sys.executable, "-c", code, str(data), str(model), str(out)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and "Accuracy = 100% (4/4)" in r.stdout, (r.stdout, r.stderr)


def test_format_2_header_bomb_fails_on_memory_not_allocation(tmp_path):
    """A consistent sparse model whose dense weights cannot fit: one line naming the file and sizes."""
    msg = load_error(bomb(tmp_path / "bomb2.model", version=2))
    assert "100000 x 100000 weights" in msg and "GiB are available" in msg


def test_format_1_files_are_still_read(tmp_path):
    import numpy as np
    from conftest import random_multiclass
    from ssvmlinear import MulticlassSSVM, save_model
    X, y = random_multiclass(n=40, d=5, K=3, seed=4)
    est = MulticlassSSVM(fit_intercept=True).fit(X, y)
    W = np.vstack([est.coef_.T, est.intercept_ / est._bias])
    v1 = ["ssvmlinear_model 1", "structure multiclass", "solver sdm", "loss margin", "C 1.0", "label_type int",
          "nr_class 3", "label 0 1 2", "nr_feature 5", "bias 1.0", "w"] + [" ".join("%.17g" % v for v in r) for r in W]
    (tmp_path / "v1").write_text("\n".join(v1) + "\n")
    back = load_model(tmp_path / "v1")
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.intercept_, est.intercept_)
    save_model(back, tmp_path / "v2")          # rewritten as format 2
    save_model(est, tmp_path / "v2ref")
    assert (tmp_path / "v2").read_text().replace("solver sdm", "") == \
        (tmp_path / "v2ref").read_text().replace(f"solver {est._solver_name}", "")
