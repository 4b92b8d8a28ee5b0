"""What ssvm-train prints (issue 13 item 6): only what the solver has, one-line warnings, a closed
stdout never stops training, an unwritable model path fails before training."""
import os
import subprocess
import sys
import time

import pytest

from ssvmlinear.cli import train_main

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
SCENE = os.path.join(DATA, "scene_train.svm.gz")


def test_pegasos_summary_prints_only_what_it_has(tmp_path, capsys):
    assert train_main(["-s", "4", "-m", "2", "-B", "1", SCENE, str(tmp_path / "m")]) == 0
    out = capsys.readouterr().out.strip().split("\n")[-1]
    assert out.startswith("passes 2  primal ") and "nan" not in out and "dual" not in out and "working set" not in out


def test_convergence_warning_is_one_line(tmp_path, capsys):
    assert train_main(["-m", "1", "-B", "1", SCENE, str(tmp_path / "m")]) == 0
    err = [ln for ln in capsys.readouterr().err.split("\n") if ln.startswith("WARNING")]
    assert len(err) == 1 and "reached max_iter=1" in err[0] and "relative duality gap" in err[0]
    assert train_main(["-q", "-m", "1", "-B", "1", SCENE, str(tmp_path / "m")]) == 0
    quiet = capsys.readouterr()      # -q silences progress and the summary, never warnings
    assert quiet.out == "" and quiet.err.startswith("WARNING") and "[sdm]" not in quiet.err


def test_closed_stdout_does_not_stop_training(tmp_path):
    model = tmp_path / "m"
    bindir = os.path.dirname(sys.executable)
    p = subprocess.Popen([os.path.join(bindir, "ssvm-train"), "-B", "1", SCENE, str(model)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdout.close()   # `| head -0`
    assert p.wait() == 0
    assert model.read_text().startswith("ssvmlinear_model")


@pytest.mark.parametrize("path", ["/proc/x.model", "no/such/dir/x.model", "."])
def test_unwritable_model_path_fails_before_training(tmp_path, capsys, path):
    t = time.perf_counter()
    assert train_main(["-q", "-m", "1000", "-e", "1e-9", SCENE, path]) == 1
    assert time.perf_counter() - t < 1.0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and path in err and ".tmp" not in err
