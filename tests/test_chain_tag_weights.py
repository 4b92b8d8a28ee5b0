"""Per-tag weights on a chain's Hamming loss (ChainSSVM(class_weight=...), ssvm-train -wi on
sequences): the loss and the oracles against enumeration, the refusals, the command line. The
solvers' optima with weights are cells of the conformance matrix (structure 'chain-weighted')."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from ssvmlinear import ChainSSVM, dump_svmlight_file, load_model
from ssvmlinear._kernels.chain import ChainStructure
from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear.cli import train_main

from test_chain_oracles import phi


def weighted_problem(seed, K=3, normalize=False):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 5, 3)
    n = int(lengths.sum())
    X = sp.random(n, 4, density=0.6, random_state=seed, format="csr", data_rvs=rng.standard_normal)
    y = rng.integers(0, K, n).astype(np.int32)
    tw = rng.uniform(0.1, 3.0, K)
    st = ChainStructure(CSRDataset(X, -1.0), y, lengths, K, False, normalize, -1, tw)
    return st, X.toarray(), y, lengths, tw, rng.standard_normal(st.n_weights)


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_weighted_loss_and_oracles_match_enumeration(seed, normalize):
    K = 3
    st, D, y, lengths, tw, w = weighted_problem(seed, K, normalize)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    for i in range(len(lengths)):
        Di, yi = D[starts[i]:starts[i + 1]], y[starts[i]:starts[i + 1]]
        T = len(yi)
        labels = [np.array(c, dtype=np.int32) for c in itertools.product(range(K), repeat=T)]
        f = np.array([w @ phi(Di, lab, K, False, -1.0) for lab in labels])
        f_true = w @ phi(Di, yi, K, False, -1.0)
        loss = np.array([np.sum(tw[yi] * (lab != yi)) for lab in labels]) / (T if normalize else 1)
        for j, lab in enumerate(labels):
            assert st.py_loss(i, lab) == pytest.approx(loss[j], abs=1e-14)
        for lam in (0.0, 0.5, 1.0, 3.0):
            vals = f - f_true + lam * loss
            lab, m, d = st.py_oracle(w, i, lam)
            j = int(np.argmax(vals))
            assert np.array_equal(lab, labels[j]) and m + lam * d == pytest.approx(vals[j], abs=1e-10)
            got, values = st.py_kbest(w, i, lam, 3)
            np.testing.assert_allclose(values, np.sort(vals)[::-1][:len(values)], atol=1e-10)
    assert not st.supports_loss_indexed()      # a weighted count has no levels by mismatch count


def test_unit_weights_train_the_unweighted_model_bit_for_bit():
    rng = np.random.default_rng(0)
    X = sp.random(40, 6, density=0.5, random_state=0, format="csr")
    y = rng.integers(0, 3, 40)
    lengths = [10, 10, 8, 12]
    plain = ChainSSVM(C=0.5, random_state=0).fit(X, y, lengths)
    ones = ChainSSVM(C=0.5, random_state=0, class_weight={0: 1.0, 1: 1.0, 2: 1.0}).fit(X, y, lengths)
    np.testing.assert_array_equal(plain.coef_, ones.coef_)
    np.testing.assert_array_equal(plain.transition_, ones.transition_)
    heavy = ChainSSVM(C=0.5, random_state=0, class_weight={2: 5.0}).fit(X, y, lengths)
    assert not np.array_equal(plain.coef_, heavy.coef_)
    balanced = ChainSSVM(C=0.5, random_state=0, class_weight="balanced").fit(X, y, lengths)
    counts = np.bincount(y, minlength=3)
    manual = ChainSSVM(C=0.5, random_state=0,
                       class_weight={k: 40 / (3 * counts[k]) for k in range(3)}).fit(X, y, lengths)
    np.testing.assert_array_equal(balanced.coef_, manual.coef_)


@pytest.mark.parametrize("params, message", [
    (dict(loss="slack"), "loss='slack' has no per-tag weights"),
    (dict(solver="gdmm"), "not available with solver='gdmm'"),
    (dict(class_weight={7: 2.0}), "class_weight names class 7"),
])
def test_weights_outside_margin_rescaling_are_refused_before_any_work(params, message, monkeypatch):
    from ssvmlinear.solvers.solver import Solver

    def no_work(*args, **kwargs):
        raise AssertionError("the solver started")
    monkeypatch.setattr(Solver, "start", no_work)
    X = sp.random(12, 4, density=0.5, random_state=1, format="csr")
    y = np.arange(12) % 3
    with pytest.raises(ValueError, match=message):
        ChainSSVM(**{"class_weight": {2: 2.0}, **params}).fit(X, y, [6, 6])


def test_class_weights_of_a_chain_file_from_the_command_line(tmp_path):
    rng = np.random.default_rng(3)
    X = sp.random(60, 5, density=0.6, random_state=3, format="csr")
    y = np.array([1, 4, 7])[rng.integers(0, 3, 60)]
    lengths = np.array([6] * 10)
    path = tmp_path / "chains.svm"
    dump_svmlight_file(X, y, path, lengths=lengths)
    assert train_main(["-q", "-w4", "3", "-w7", "0.5", str(path), str(tmp_path / "m")]) == 0
    est = ChainSSVM(C=1.0, random_state=1, n_jobs=1, class_weight={4: 3.0, 7: 0.5}).fit(X, y, lengths)
    model = load_model(tmp_path / "m")
    np.testing.assert_array_equal(model.coef_, est.coef_)
    np.testing.assert_array_equal(model.transition_, est.transition_)
    assert train_main(["-q", "-w4", "3", "-s", "6", str(path), str(tmp_path / "g")]) == 1
