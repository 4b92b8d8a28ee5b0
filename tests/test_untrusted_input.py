"""Reproducers of input paths that once crashed, gave tracebacks or wrote poisoned models: each now
fails in one line naming the file (and line or array), or works."""
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from ssvmlinear import MulticlassSSVM
from ssvmlinear.cli import train_main, predict_main
from ssvmlinear.datacache import convert_main
from ssvmlinear.hierarchy import read_hierarchy
from ssvmlinear.model_io import save_model, load_model
from ssvmlinear.models.multilabel import read_edges_file
from ssvmlinear.utils import write_atomic


def _one_error_line(err, *names):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


def test_extreme_values_never_write_a_model(tmp_path, capsys):
    data = tmp_path / "h.svm"
    data.write_text("1 1:1e300 2:1\n2 1:-1e300 3:1\n3 2:1e300\n1 1:1\n")
    for s in ("0", "1", "2", "3", "4", "5"):
        model = tmp_path / f"m{s}"
        assert train_main(["-q", "-s", s, str(data), str(model)]) == 1
        _one_error_line(capsys.readouterr().err, str(data), "too large")
        assert not model.exists()


@pytest.mark.parametrize("option", [["-B", "1e200"], ["-c", "1e300"]])
def test_huge_bias_or_C_is_refused(option, tmp_path, capsys):
    data = tmp_path / "ok.svm"
    data.write_text("1 1:1 2:1\n2 1:-1 3:1\n3 2:1\n1 1:1\n")
    assert train_main(["-q"] + option + [str(data), str(tmp_path / "m")]) == 1
    _one_error_line(capsys.readouterr().err, str(data))


def test_batch_size_is_capped_at_the_examples(tmp_path, capsys):
    data = tmp_path / "ok.svm"
    data.write_text("1 1:1 2:1\n2 1:-1 3:1\n3 2:1\n1 1:1\n")
    assert train_main(["-q", "-b", "1000000000", str(data), str(tmp_path / "m")]) == 0
    assert train_main(["-q", "-s", "4", "-b", "1000000000", "-m", "3", str(data), str(tmp_path / "m4")]) == 0


@pytest.mark.parametrize("label, message", [("1e300", "y[0] = 1e+300"), ("2.5", "y[0] = 2.5")])
def test_labels_that_are_not_integers_are_named(label, message, tmp_path, capsys):
    data = tmp_path / "lab.svm"
    data.write_text(f"{label} 1:1\n2 1:2\n")
    assert train_main(["-q", str(data), str(tmp_path / "m")]) == 1
    line = _one_error_line(capsys.readouterr().err, str(data), message)
    assert "class labels must be integers" in line


def test_multilabel_file_without_labels(tmp_path, capsys):
    data = tmp_path / "none.svm"
    data.write_text(" 1:1\n 2:1\n")
    assert train_main(["-q", "-t", "multilabel", str(data), str(tmp_path / "m")]) == 1
    _one_error_line(capsys.readouterr().err, str(data), "no example has a label")


def test_output_paths_are_checked_before_training_and_named(tmp_path, capsys):
    data = tmp_path / "ok.svm"
    data.write_text("1 1:1 2:1\n2 1:-1 3:1\n3 2:1\n1 1:1\n")
    missing = tmp_path / "nodir" / "m"
    assert train_main(["-q", str(data), str(missing)]) == 1
    _one_error_line(capsys.readouterr().err, str(missing))
    assert train_main(["-q", str(data), str(tmp_path)]) == 1
    _one_error_line(capsys.readouterr().err, str(tmp_path), "is a directory")
    assert train_main(["-q", str(data), str(tmp_path / "m")]) == 0
    assert predict_main(["-q", str(data), str(tmp_path / "m"), str(missing)]) == 1
    _one_error_line(capsys.readouterr().err, str(missing))
    with pytest.raises(OSError, match=f"{missing}: cannot write there"):
        write_atomic(missing, "x")


def test_stale_temporaries_of_killed_writers_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    stale = tmp_path / f".m.{dead}.0badcafe.tmp"
    stale.write_text("half a model")
    stale_dir = tmp_path / f".d.ssvmdata.{dead}.tmp"
    stale_dir.mkdir()
    alive = tmp_path / f".m.{os.getppid()}.0badcafe.tmp"      # a live writer's: kept
    alive.write_text("in progress")
    other = tmp_path / f".mm.{dead}.0badcafe.tmp"            # another target's: kept
    other.write_text("x")
    write_atomic(tmp_path / "m", "model")
    assert not stale.exists() and alive.exists() and other.exists()
    src = tmp_path / "ok.svm"
    src.write_text("1 1:1\n2 2:1\n")
    assert convert_main(["-q", str(src), str(tmp_path / "d.ssvmdata")]) == 0
    assert not stale_dir.exists()


def test_interrupt_exits_130_without_a_model(tmp_path, capsys, monkeypatch):
    data = tmp_path / "ok.svm"
    data.write_text("1 1:1 2:1\n2 1:-1 3:1\n3 2:1\n1 1:1\n")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr("ssvmlinear.model_selection.cross_val_predict", interrupted)
    assert train_main(["-v", "2", str(data)]) == 130
    assert capsys.readouterr().err == "ssvm-train: interrupted\n"
    monkeypatch.setattr("ssvmlinear.cli.load_data", interrupted)
    assert train_main([str(data), str(tmp_path / "m")]) == 130
    assert not (tmp_path / "m").exists()
    assert predict_main([str(data), str(tmp_path / "m"), str(tmp_path / "p")]) in (1, 130)


def test_catalyst_keeps_its_pass_count_when_interrupted():
    # interrupt accelerated SDM (a default fit at large C) from its callback after a few centres
    rng = np.random.default_rng(0)
    X = sp.random(300, 30, density=0.3, format="csr", random_state=0, data_rvs=rng.standard_normal)
    y = rng.integers(0, 4, 300)
    calls = []

    def stop(est):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
    est = MulticlassSSVM(C=100.0, callback=stop)
    with pytest.raises(KeyboardInterrupt):
        est.fit(X, y)
    assert len(calls) == 3 and est.n_iter_ > 3
    assert est.predict(X).shape == y.shape      # the last completed pass's model is kept


def test_hierarchy_ids_are_ascii_64_bit_integers(tmp_path):
    for text, message in [("1 2\n1 99999999999999999999\n", ":2: node id '99999999999999999999' is not an integer of the 64-bit range"),
                          ("1 2\n1 1_0\n", ":2: node id '1_0' is not an integer"),
                          ("1 2\n1 \u0661\n", ":2: node id"),
                          ("-1 2\n5 6\n", ":1: node id -1 names the implicit root")]:
        f = tmp_path / "h.txt"
        f.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=message) as info:
            read_hierarchy(f)
        assert str(f) in str(info.value)
    f.write_bytes(b"1 2\n1 \xff\n")
    with pytest.raises(ValueError, match=":2: node id"):
        read_hierarchy(f)


def test_edge_files_are_strict_and_take_any_graph(tmp_path):
    labels = np.arange(4, dtype=np.int64)
    f = tmp_path / "e.txt"
    f.write_text("0 1\n1 2\n2 0\n")           # a cycle: the LP relaxation trains it
    assert read_edges_file(f, labels).tolist() == [[0, 1], [1, 2], [2, 0]]
    for text, message in [("0 1\n1 0\n", ":2: the pair 1 0 joins a label to itself or repeats a pair"),
                          ("0 1\n2 2\n", ":2: the pair 2 2"),
                          ("0 99999999999999999999\n", ":1: label '99999999999999999999' is not an integer"),
                          ("0 1_0\n", ":1: label '1_0' is not an integer"),
                          ("0 7\n", ":1: label 7 does not occur")]:
        f.write_text(text)
        with pytest.raises(ValueError, match=message):
            read_edges_file(f, labels)


def test_model_whose_bias_row_overflows_is_refused(tmp_path):
    rng = np.random.default_rng(1)
    X = sp.random(30, 4, density=0.5, format="csr", random_state=1, data_rvs=rng.standard_normal)
    est = MulticlassSSVM(max_iter=50).fit(X, np.arange(30) % 3)
    save_model(est, tmp_path / "m")
    lines = (tmp_path / "m").read_text().split("\n")
    lines = [("bias 1e300" if x.startswith("bias ") else x) for x in lines]
    lines = [(" ".join([x.split()[0]] + ["1e10"] * 3) if x.startswith("5 ") else x) for x in lines]
    (tmp_path / "bad").write_text("\n".join(lines))
    with pytest.raises(ValueError, match=r":10: bias 1e\+300 times the bias row's weights overflows"):
        load_model(tmp_path / "bad")


def test_save_model_writes_nothing_load_model_refuses(tmp_path):
    rng = np.random.default_rng(1)
    X = sp.random(30, 4, density=0.5, format="csr", random_state=1, data_rvs=rng.standard_normal)
    est = MulticlassSSVM(max_iter=50).fit(X, np.arange(30) % 3)
    est.coef_[0, 1] = np.nan
    with pytest.raises(ValueError, match="not finite; nothing written"):
        save_model(est, tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_full_disk_names_the_users_path(tmp_path, monkeypatch):
    import errno

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fsync", no_space)
    target = tmp_path / "m"
    with pytest.raises(OSError) as info:
        write_atomic(target, "model")
    assert str(info.value) == f"{target}: cannot write (No space left on device)"
    assert os.listdir(tmp_path) == []          # no temporary left behind


def test_cluster_failure_is_one_line(monkeypatch):
    distributed = pytest.importorskip("distributed")
    from ssvmlinear.cli import cluster_backend

    class FakeClient:
        def __init__(self, address, timeout):
            pass

        def close(self):
            pass
    import contextlib
    import joblib
    monkeypatch.setattr(distributed, "Client", FakeClient)
    monkeypatch.setattr(joblib, "parallel_config", lambda **kw: contextlib.nullcontext())
    with pytest.raises(ValueError, match=r"^--scheduler tcp://h:8786: training on the cluster failed "
                                         r"\(RuntimeError: a worker died\)$"):
        with cluster_backend("tcp://h:8786"):
            raise RuntimeError("a worker died\nits traceback")
