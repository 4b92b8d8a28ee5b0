"""A model header cannot make load_model allocate more than the file holds (issue 13 item 3)."""
import resource
import subprocess
import sys
import time

import pytest

from ssvmlinear import load_model
from ssvmlinear.cli import predict_main


def bomb(path, K=100000, d=100000):
    """~800 KB: a header of K classes and d features, then d one-number lines."""
    head = ["ssvmlinear_model 1", "structure multiclass", "solver sdm", "loss margin", "C 1.0", "label_type int",
            f"nr_class {K}", "label " + " ".join(str(k) for k in range(K)), f"nr_feature {d}", "bias -1", "w"]
    path.write_text("\n".join(head + ["0"] * d) + "\n")
    return path


def test_model_header_bomb_fails_fast_with_one_line(tmp_path):
    model = bomb(tmp_path / "bomb.model")
    t = time.perf_counter()
    with pytest.raises(ValueError) as e:
        load_model(str(model))
    assert time.perf_counter() - t < 1.0
    msg = str(e.value)
    assert "\n" not in msg and str(model) in msg and "10000000000 weights" in msg and "74.5 GiB" in msg


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
