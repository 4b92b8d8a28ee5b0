"""benchmarks/vs_previous.py, the release gate: its cases cover every solver, and --gate's exit logic
on made-up results (no timing, no build)."""
import importlib.util
import sys
from pathlib import Path

import pytest

from ssvmlinear.registry import SOLVERS

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def vs():
    spec = importlib.util.spec_from_file_location("vs_previous", ROOT / "benchmarks" / "vs_previous.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("vs_previous", None)


def test_cases_cover_every_solver_at_default_and_explicit_tol(vs):
    for est in ("ChainSSVM", "MulticlassSSVM"):
        seen = {(c["kw"]["solver"], "tol" in c["kw"]) for c in vs.CASES.values()
                if c.get("est") == est and "solver" in c["kw"]}
        for solver in SOLVERS:
            assert (solver, False) in seen and (solver, True) in seen, (est, solver)
    names = set(vs.CASES)
    assert {"ml-tree", "ml-full", "hier-nhsvm", "planted-sdm", "startup-import", "startup-train-h"} <= names
    assert len(names) >= 16
    assert vs.LAST_RELEASE in vs.RELEASES


def _row(prev_s, cur_s, prev_error=None, cur_error=None):
    pairs = []
    for p, c in zip(prev_s, cur_s):
        prev = dict(error=prev_error) if prev_error else dict(seconds=p, objective=1.0, n_iter=5, rss_mb=100.0)
        cur = dict(error=cur_error) if cur_error else dict(seconds=c, objective=1.0, n_iter=5, rss_mb=110.0)
        pairs.append((prev, cur))
    return pairs


def test_gate_logic(vs):
    rows = {"fine": vs.summarize(_row([1.0, 1.0, 1.0], [1.1, 1.2, 1.0])),
            "noisy": vs.summarize(_row([1.0, 1.0, 1.0], [5.0, 1.1, 1.2])),     # one outlier: the median holds
            "slow": vs.summarize(_row([1.0, 2.0, 1.0], [9.0, 18.0, 9.5])),
            "missing": vs.summarize(_row([0, 0, 0], [1.0, 1.0, 1.0], prev_error="TypeError: no such parameter")),
            "broken": vs.summarize(_row([1.0, 1.0, 1.0], [0, 0, 0], cur_error="ValueError: boom"))}
    assert rows["fine"]["ratio"] == pytest.approx(1.1)
    assert rows["slow"]["ratio"] == pytest.approx(9.0)
    assert rows["fine"]["rss_ratio"] == pytest.approx(1.1)
    failures = vs.gate_failures(rows, 1.5)
    assert len(failures) == 2
    assert failures[0].startswith("GATE FAILED: slow: median ratio current/previous 9.00 > 1.5")
    assert failures[1].startswith("GATE FAILED: broken: the current version fails")
    assert "not in previous" in vs.format_row("missing", rows["missing"])
    assert "CURRENT FAILED" in vs.format_row("broken", rows["broken"])
    assert vs.gate_failures({"fine": rows["fine"]}, 1.05) == ["GATE FAILED: fine: median ratio current/previous "
                                                               "1.10 > 1.05 (1.000 s -> 1.100 s, 3 pairs)"]



def test_known_slower_cases_are_reported_not_failed(vs):
    assert set(vs.KNOWN_SLOWER) <= set(vs.RELEASES)
    assert all(set(known) <= set(vs.CASES) for known in vs.KNOWN_SLOWER.values())
    rows = {"slow": vs.summarize(_row([1.0, 1.0, 1.0], [9.0, 9.0, 9.0])),
            "other": vs.summarize(_row([1.0, 1.0, 1.0], [9.0, 9.0, 9.0]))}
    lines = vs.gate_failures(rows, 1.5, {"slow": "a reason"})
    assert lines[0] == "GATE KNOWN: slow: ratio 9.00 (a reason)"
    assert lines[1].startswith("GATE FAILED: other")


def test_release_resolves_without_tags(vs, monkeypatch):
    class Failed:
        returncode, stdout = 1, ""
    monkeypatch.setattr(vs.subprocess, "run", lambda *a, **k: Failed())
    assert vs.resolve("v0.2.0") == vs.RELEASES["v0.2.0"]
    with pytest.raises(SystemExit):
        vs.resolve("v9.9.9")


def test_list_runs_nothing(vs, capsys):
    assert vs.main(["--list"]) == 0
    assert "chain-cp3-eps" in capsys.readouterr().out
