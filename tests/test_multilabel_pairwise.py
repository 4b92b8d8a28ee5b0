"""Pairwise multi-label on a forest of label pairs (PairwiseMultiLabelStructure): every kernel
method against brute-force enumeration of all 2^K labels with an explicit joint feature map, on
random forests; the forest's validation."""
import itertools
import pickle

import numpy as np
import pytest

from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.multilabel import PairwiseMultiLabelStructure, forest_of

from test_multilabel import random_multilabel, all_labels, dense_rows


def phi(x, y, edges):
    pair = np.zeros((len(edges), 4))
    for e, (a, b) in enumerate(edges):
        pair[e, 2 * y[a] + y[b]] = 1.0
    return np.concatenate([np.outer(x, y).ravel(), pair.ravel()])


def random_forest_edges(rng, K):
    edges = []
    perm = rng.permutation(K)
    for j in range(1, K):
        if rng.random() < 0.8:
            a, b = perm[j], perm[rng.integers(0, j)]
            edges.append((a, b) if rng.random() < 0.5 else (b, a))
    return np.array(edges, dtype=np.int64).reshape(-1, 2)


CASES = [(seed, K) for seed, K in zip(range(6), (1, 2, 3, 4, 5, 5))]


@pytest.mark.parametrize("seed, K", CASES)
@pytest.mark.parametrize("bias, normalize", [(-1.0, False), (1.0, True)])
def test_pairwise_structure_matches_brute_force(seed, K, bias, normalize):
    rng = np.random.default_rng(100 + seed)
    X, Y = random_multilabel(n=6, d=4, K=K, seed=seed)
    edges = random_forest_edges(rng, K)
    st_ = PairwiseMultiLabelStructure(CSRDataset(X, bias), Y, edges, normalize)
    D = dense_rows(X, bias)
    assert st_.n_weights == D.shape[1] * K + 4 * len(edges)
    labels = all_labels(K)
    c = 1.0 / K if normalize else 1.0
    for trial in range(2):
        w = rng.standard_normal(st_.n_weights)
        if trial:
            w = np.round(w)          # ties
        for i in range(X.shape[0]):
            P = np.array([phi(D[i], y, edges) for y in labels])
            f = P @ w
            fyi = w @ phi(D[i], Y[i], edges)
            m = f - fyi
            H = (labels != Y[i]).sum(axis=1).astype(float)
            for y, fy in zip(labels, f):
                assert st_.py_score(w, i, y) == pytest.approx(fy, abs=1e-12)
            np.testing.assert_allclose(st_.py_margins(w, i, labels.ravel()), m, atol=1e-12)
            for lam in (0.0, 0.5, 1.0, 2.5):
                vals = m + lam * c * H
                lab, mo, do = st_.py_oracle(w, i, lam)
                idx = int(np.flatnonzero((labels == lab).all(axis=1))[0])
                assert vals[idx] == pytest.approx(vals.max(), abs=1e-12)
                assert mo == pytest.approx(m[idx], abs=1e-12) and do == pytest.approx(c * H[idx], abs=1e-15)
                np.testing.assert_allclose(st_.py_margins_after_oracle(w, i, labels.ravel(), lam), m, atol=1e-12)
                for k in (1, 3, 2 ** K, 2 ** K + 3):
                    kl, kv = st_.py_kbest(w, i, lam, k)
                    assert kl.shape == (min(k, 2 ** K), K)
                    np.testing.assert_allclose(kv, np.sort(vals)[::-1][:k], atol=1e-12)
                    rows = [int(np.flatnonzero((labels == r).all(axis=1))[0]) for r in kl]
                    assert len(set(rows)) == len(rows)
                    np.testing.assert_allclose(vals[rows], kv, atol=1e-12)
                # Micro-F1 oracles: h = H + m, g = -(|y| + |y_i|)
                sizes = labels.sum(axis=1) + Y[i].sum()
                lab, h, g, v = st_.py_oracle_f1(w, i, lam)
                obj = H + m - lam * sizes
                idx = int(np.flatnonzero((labels == lab).all(axis=1))[0])
                assert v == pytest.approx(obj.max(), abs=1e-12) and obj[idx] == pytest.approx(v, abs=1e-12)
                assert h == pytest.approx((H + m)[idx], abs=1e-12) and g == -sizes[idx]
            ratio = np.divide(H + m, sizes, out=np.zeros(len(labels)), where=sizes > 0)
            lab, h, g, v = st_.py_exact_f1(w, i)
            idx = int(np.flatnonzero((labels == lab).all(axis=1))[0])
            assert v == pytest.approx(ratio.max(), abs=1e-12) and ratio[idx] == pytest.approx(v, abs=1e-12)
            best, lab_levels, losses = st_.py_loss_indexed_oracle(w, i)
            np.testing.assert_allclose(losses, c * np.arange(K + 1))
            for level in range(K + 1):
                assert best[level] == pytest.approx(m[H == level].max(), abs=1e-12)
                assert (lab_levels[level] != Y[i]).sum() == level
                assert st_.py_score(w, i, lab_levels[level]) - fyi == pytest.approx(best[level], abs=1e-12)
            # Gram entries and updates against the explicit feature map
            dP = phi(D[i], Y[i], edges) - P
            for a, b in rng.integers(0, len(labels), size=(15, 2)):
                assert st_.py_gram(i, labels[a], labels[b]) == pytest.approx(dP[a] @ dP[b], abs=1e-12)
            a = int(rng.integers(len(labels)))
            np.testing.assert_allclose(st_.py_gram_row(i, labels[a], labels.ravel()), dP @ dP[a], atol=1e-12)
            w2 = w.copy()
            st_.py_update(w2, i, 0.7, labels[a])
            np.testing.assert_allclose(w2 - w, 0.7 * dP[a], atol=1e-12)
            coefs = rng.standard_normal(3)
            picks = rng.integers(0, len(labels), size=3)
            w3 = w.copy()
            st_.py_update_many(w3, i, coefs, labels[picks].ravel())
            np.testing.assert_allclose(w3 - w, coefs @ dP[picks], atol=1e-12)


def test_forest_validation_and_pickle():
    parent, edge_of = forest_of([(0, 1), (2, 1), (3, 4)], 5)
    assert list(parent) == [-1, 0, 1, -1, 3] and list(edge_of) == [-1, 0, 1, -1, 2]
    with pytest.raises(ValueError, match=r"edge 2 \(2, 0\) closes a cycle"):
        forest_of([(0, 1), (1, 2), (2, 0)], 3)
    with pytest.raises(ValueError, match="outside 0..2"):
        forest_of([(0, 3)], 3)
    with pytest.raises(ValueError, match="itself"):
        forest_of([(1, 1)], 3)
    with pytest.raises(ValueError, match="closes a cycle"):
        forest_of([(0, 1), (1, 0)], 3)
    X, Y = random_multilabel(n=6, K=4, seed=3)
    s = PairwiseMultiLabelStructure(CSRDataset(X, 1.0), Y, [(0, 1), (1, 2)], False)
    t = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(t.edge_list(), [(0, 1), (1, 2)])
    w = np.random.default_rng(0).standard_normal(s.n_weights)
    for i in range(6):
        a, b = s.py_oracle(w, i, 1.0), t.py_oracle(w, i, 1.0)
        assert np.array_equal(a[0], b[0]) and a[1:] == b[1:]
