"""The conformance matrix (tests/conformance_matrix.py): a seeded sample of its cells on every run,
all of them with --matrix-full. Each cell is refused before any work or trains to its problem's
optimum, its objective_ the brute-force primal at its weights."""
import random

import numpy as np
import pytest

import conformance_matrix as matrix
from ssvmlinear.registry import SOLVERS, STRUCTURES

SAMPLE = 48          # cells per run (of about a thousand), drawn with --matrix-seed (default 0)


def _selected(config):
    cells = matrix.cells()
    if config.getoption("--matrix-full"):
        return cells
    rng = random.Random(config.getoption("--matrix-seed"))
    return rng.sample(cells, SAMPLE)


def pytest_generate_tests(metafunc):
    if "cell" in metafunc.fixturenames:
        cells = _selected(metafunc.config)
        metafunc.parametrize("cell", cells, ids=["-".join(str(p) for p in c) for c in cells])


def test_cell_is_refused_or_reaches_the_optimum(cell):
    r = matrix.run_cell(cell)
    assert r["status"] != "FAIL", r["why"]
    if r["status"] == "refused":
        assert str(r["why"]).strip(), "a refusal names the combination"


def test_the_matrix_covers_every_registered_solver_and_structure():
    assert set(matrix.SOLVERS) == set(SOLVERS)
    assert {s.split("-")[0] for s in matrix.STRUCTURES} == set(STRUCTURES)
    assert {s for s, p in SOLVERS.items() if any(q.name == "search" for q in p.solver_class().params)} \
        == set(matrix.SEARCHING)


def test_the_reference_surrogates_are_the_spec_table():
    """The matrix's own psi (SPEC's table written again) against the kernels' at random points."""
    from ssvmlinear.surrogates import parse_surrogate, psi
    rng = np.random.default_rng(0)
    for loss in matrix.LOSSES:
        if loss in ("lse", "microf1"):
            continue
        sur = parse_surrogate(loss)
        for h, g in zip(rng.normal(0, 2, 50), rng.uniform(0, 3, 50)):
            assert matrix.psi(loss, h, g) == pytest.approx(psi(sur, h, g), rel=1e-9, abs=1e-12)


def test_the_hull_reference_is_the_hull_maximum():
    """max_over_hull against a dense brute force over convex combinations of every pair of points."""
    rng = np.random.default_rng(1)
    for loss in ("slack", "beta:0.5", "logloss"):
        P = np.column_stack([rng.normal(-1, 1, 7), rng.integers(0, 4, 7).astype(float)])
        P[0] = 0.0
        t = np.linspace(0, 1, 2001)[:, None]
        brute = max(float(np.max(matrix.psi(loss, *(P[a] + t * (P[b] - P[a])).T)))
                    for a in range(7) for b in range(7))
        assert matrix.max_over_hull(loss, P) == pytest.approx(brute, rel=1e-6, abs=1e-9)


def test_the_integral_reference_optimum_is_the_n_slack_optimum():
    """The epigraph problem's optimum for margin rescaling equals the n-slack cutting plane's of
    tests/test_conformance.py (two references, written independently)."""
    from test_conformance import reference_optimum
    ref = matrix.reference("multiclass")
    ours, _ = ref.optimum("margin")
    other, _ = reference_optimum(ref.st, ref.Cs)
    assert ours == pytest.approx(other, rel=1e-6)
