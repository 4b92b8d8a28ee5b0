"""Binary data sets (ssvm-convert / .ssvmdata): round trips of every kind, memory-mapped X that
the kernels use without a copy, the same models as from the text file, and clear errors on
corrupt folders."""
import json

import numpy as np
import pytest
import scipy.sparse as sp

from ssvmlinear import load_svmlight_file, load_model
from ssvmlinear.cli import train_main
from ssvmlinear.datacache import convert_main, load_ssvmdata, save_ssvmdata
from ssvmlinear.validation import check_csr


def mapped(a):
    """Whether an array's memory is a file mapping (its chain of bases ends in one)."""
    import mmap
    while a is not None:
        if isinstance(a, (np.memmap, mmap.mmap)):
            return True
        a = getattr(a, "base", None)
    return False


@pytest.mark.parametrize("name", ["ocr_letters_test.svm.gz", "scene_test.svm.gz"])
def test_round_trip_and_memory_map(name, tmp_path):
    src = f"data/{name}"
    ref = load_svmlight_file(src, zero_based=False)
    assert convert_main(["-q", src, str(tmp_path / "d.ssvmdata")]) == 0
    got = load_ssvmdata(tmp_path / "d.ssvmdata")
    assert len(got) == len(ref)
    assert (got[0] != ref[0]).nnz == 0 and got[0].shape == ref[0].shape
    assert mapped(got[0].data) and mapped(got[0].indices)
    X = check_csr(got[0])
    assert np.shares_memory(X.data, got[0].data)       # the kernels read the map, no copy
    if sp.issparse(ref[1]):
        assert (got[1] != ref[1]).nnz == 0
    else:
        np.testing.assert_array_equal(got[1], ref[1])
    if len(ref) == 3:
        np.testing.assert_array_equal(got[2], ref[2])


def test_training_from_ssvmdata_equals_the_text_file(tmp_path):
    src = "data/ocr_letters_test.svm.gz"
    assert convert_main(["-q", src, str(tmp_path / "d.ssvmdata")]) == 0
    assert train_main(["-q", "-c", "0.1", "-m", "30", src, str(tmp_path / "a.model")]) == 0
    assert train_main(["-q", "-c", "0.1", "-m", "30", str(tmp_path / "d.ssvmdata"), str(tmp_path / "b.model")]) == 0
    a, b = load_model(tmp_path / "a.model"), load_model(tmp_path / "b.model")
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.transition_, b.transition_)


def test_corrupt_folders_fail_clearly(tmp_path):
    X = sp.random(5, 4, density=0.5, format="csr", random_state=0)
    save_ssvmdata(tmp_path / "d", X, np.arange(5.0))
    meta = json.loads((tmp_path / "d" / "meta.json").read_text())
    meta["nnz"] += 10                                 # a header that promises more than is there
    (tmp_path / "d" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=r"d: data.npy holds \(\d+,\) float64, meta.json implies"):
        load_ssvmdata(tmp_path / "d")
    save_ssvmdata(tmp_path / "e", X, np.arange(5.0))
    np.save(tmp_path / "e" / "indices.npy", np.full(X.nnz, 7, dtype=np.int32))
    with pytest.raises(ValueError, match="column outside 0..3"):
        load_ssvmdata(tmp_path / "e")
    meta = json.loads((tmp_path / "e" / "meta.json").read_text())
    meta["format"] = 9
    (tmp_path / "e" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="unsupported format 9"):
        load_ssvmdata(tmp_path / "e")


def test_dataset_row_norms_without_copying_the_data():
    import scipy.sparse as sp
    from ssvmlinear._kernels.dataset import CSRDataset
    X = sp.random(50, 40, density=0.3, format="csr", random_state=4)
    X.data = X.data.astype(np.float64)
    for bias in (-1.0, 2.0):
        D = CSRDataset(X, bias)
        want = np.asarray(X.multiply(X).sum(axis=1)).ravel() + (bias ** 2 if bias > 0 else 0.0)
        np.testing.assert_allclose(D.sqnorms, want, rtol=1e-13)


def test_sdm_visits_blocks_of_consecutive_examples():
    """visit_block B: a pass is a permutation made of the blocks {kB, ..., kB + B - 1}, each visited
    whole (shuffled inside), the blocks in a random order; B = 0 shuffles all examples."""
    from ssvmlinear._kernels.dataset import CSRDataset
    from ssvmlinear._kernels.multiclass import MulticlassStructure
    from ssvmlinear._kernels.sdm import SDMSolver
    n, B = 1000, 64
    X = sp.random(n, 20, density=0.3, format="csr", random_state=0)
    y = np.random.RandomState(0).randint(0, 4, n).astype(np.int32)
    st = MulticlassStructure(CSRDataset(X, -1.0), y, 4)
    solver = SDMSolver(st, np.full(n, 0.1), 3, visit_block=B)
    orders = [solver.pass_order() for _ in range(2)]
    for o in orders:
        np.testing.assert_array_equal(np.sort(o), np.arange(n))
        block = o // B
        starts = np.flatnonzero(np.diff(block)) + 1
        runs = np.split(block, starts)
        assert len(runs) == -(-n // B)                  # each block visited in one run
        assert len({r[0] for r in runs}) == len(runs)
        assert not np.array_equal(block, np.sort(block))   # blocks in a random order
        assert not np.array_equal(o, np.sort(o))
    assert not np.array_equal(orders[0], orders[1])
    plain = SDMSolver(st, np.full(n, 0.1), 3).pass_order()
    assert np.count_nonzero(np.diff(plain // B)) > n // 2   # no blocks without visit_block


def test_memory_mapped_fit_reaches_the_in_memory_optimum(tmp_path, monkeypatch):
    """SDM on a memory-mapped data set visits blocks of consecutive rows (solvers.sdm.MMAP_VISIT_BLOCK)
    and stops at the optimum of the in-memory fit within the two fits' duality gaps."""
    from ssvmlinear import MulticlassSSVM
    from ssvmlinear.solvers import sdm
    rng = np.random.RandomState(1)
    X = sp.random(3000, 300, density=0.05, format="csr", random_state=rng)
    y = np.asarray(X @ rng.randn(300, 5)).argmax(axis=1).astype(np.float64)
    noisy = rng.rand(3000) < 0.1
    y[noisy] = rng.randint(0, 5, noisy.sum())
    save_ssvmdata(tmp_path / "d", X, y)
    Xm, ym = load_ssvmdata(tmp_path / "d")
    seen = []
    real = sdm.SDMSolver

    def spy(*args, **kwargs):
        seen.append(kwargs.get("visit_block", 0))
        return real(*args, **kwargs)
    monkeypatch.setattr(sdm, "MMAP_VISIT_BLOCK", 100)
    monkeypatch.setattr(sdm, "SDMSolver", spy)
    ref = MulticlassSSVM(C=1.0, fit_intercept=False, tol=1e-3).fit(X, y)
    got = MulticlassSSVM(C=1.0, fit_intercept=False).fit(Xm, ym)
    assert seen == [0, 100]
    assert abs(got.objective_ - ref.objective_) <= got.gap_ + ref.gap_ + 1e-9 * ref.objective_
    assert got.gap_ <= 0.01 * got.objective_


@pytest.mark.parametrize("name", ["ocr_letters_test.svm.gz", "scene_test.svm.gz"])
def test_parts_of_a_cache_are_its_rows(name, tmp_path):
    """load_ssvmdata(part=(k, K)): the K parts, memory-mapped, put back together are the whole
    (by_sequence: whole sequences)."""
    src = f"data/{name}"
    assert convert_main(["-q", src, str(tmp_path / "d.ssvmdata")]) == 0
    whole = load_ssvmdata(tmp_path / "d.ssvmdata")
    modes = [False, True] if len(whole) == 3 else [False]
    for by_sequence in modes:
        parts = [load_ssvmdata(tmp_path / "d.ssvmdata", part=(k, 3), by_sequence=by_sequence) for k in range(3)]
        assert all(mapped(p[0].data) and mapped(p[0].indices) for p in parts)
        assert (sp.vstack([p[0] for p in parts]) != whole[0]).nnz == 0
        if sp.issparse(whole[1]):
            assert (sp.vstack([p[1] for p in parts]) != whole[1]).nnz == 0
        else:
            np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), whole[1])
        if by_sequence:
            np.testing.assert_array_equal(np.concatenate([p[2] for p in parts]), whole[2])
            assert all(p[2].sum() == p[0].shape[0] for p in parts)
        else:
            assert [p[0].shape[0] for p in parts] == [(k + 1) * whole[0].shape[0] // 3 - k * whole[0].shape[0] // 3
                                                       for k in range(3)]
    if len(whole) != 3:
        with pytest.raises(ValueError, match="not sequences"):
            load_ssvmdata(tmp_path / "d.ssvmdata", part=(0, 2), by_sequence=True)


def test_memory_mapped_chains_reach_the_in_memory_optimum(tmp_path, monkeypatch):
    """Chains on a memory-mapped cache: blocks of sequences, each block's tokens read ahead
    (ChainStructure.example_rows); the optimum of the in-memory fit within the two gaps."""
    from ssvmlinear import ChainSSVM
    from ssvmlinear.solvers import sdm
    monkeypatch.setattr(sdm, "MMAP_VISIT_BLOCK", 64)
    src = "data/ocr_letters_test.svm.gz"
    assert convert_main(["-q", src, str(tmp_path / "d.ssvmdata")]) == 0
    X, y, lengths = load_svmlight_file(src, zero_based=False)
    Xm, ym, lm = load_ssvmdata(tmp_path / "d.ssvmdata")
    ref = ChainSSVM(C=0.1, fit_intercept=False).fit(X, y, lengths)
    got = ChainSSVM(C=0.1, fit_intercept=False).fit(Xm, ym, lm)
    assert not np.array_equal(got.coef_, ref.coef_)          # another visiting order
    assert abs(got.objective_ - ref.objective_) <= got.gap_ + ref.gap_
    assert got.gap_ <= 0.01 * got.objective_
