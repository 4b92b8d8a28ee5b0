"""The factor layer's max-product (tree_maxsum, tree_maxsum_by_count, tree_kbest) against
brute-force enumeration of every labelling, on random forests, without a Structure."""
import itertools

import numpy as np
import pytest

from ssvmlinear._kernels.factor import PyTree, post_order

NEG = -1e300


def random_forest(rng, n, max_card, path=False):
    if path:
        parent = np.array([v + 1 for v in range(n - 1)] + [-1])
    else:   # each variable's parent: an earlier variable in a random permutation, or none (a root)
        perm = rng.permutation(n)
        parent = np.full(n, -1)
        for j in range(1, n):
            if rng.random() < 0.8:
                parent[perm[j]] = perm[rng.integers(0, j)]
    card = rng.integers(1, max_card + 1, size=n)
    if rng.random() < 0.3:
        card[:] = max_card          # square tables: the SSE max-plus step
    tables = [rng.normal(size=(card[v], card[parent[v]])) if parent[v] >= 0 else None for v in range(n)]
    # ties: integer-valued scores sometimes
    if rng.random() < 0.3:
        tables = [None if t is None else np.round(t) for t in tables]
    unary = rng.normal(size=card.sum())
    if rng.random() < 0.3:
        unary = np.round(unary)
    return parent, card, tables, unary


def enumerate_all(parent, card, tables, unary):
    off = np.concatenate([[0], np.cumsum(card)[:-1]])
    out = []
    for y in itertools.product(*[range(c) for c in card]):
        s = sum(unary[off[v] + y[v]] for v in range(len(card)))
        s += sum(tables[v][y[v], y[parent[v]]] for v in range(len(card)) if parent[v] >= 0)
        out.append((np.array(y), s))
    return out


def cases(n_cases, seed):
    rng = np.random.default_rng(seed)
    for c in range(n_cases):
        n = int(rng.integers(1, 6))
        yield rng, random_forest(rng, n, int(rng.integers(1, 4)), path=(c % 4 == 0))


def test_post_order_children_first():
    parent = np.array([2, 2, -1, 0, 0, -1])
    order = post_order(parent)
    pos = {v: j for j, v in enumerate(order)}
    assert all(pos[v] < pos[parent[v]] for v in range(6) if parent[v] >= 0)
    with pytest.raises(ValueError, match="cycle"):
        post_order(np.array([1, 0]))


def test_score_and_maxsum_equal_enumeration():
    for rng, (parent, card, tables, unary) in cases(300, 0):
        tree = PyTree(parent, card, tables)
        allv = enumerate_all(parent, card, tables, unary)
        truth = np.array([rng.integers(0, c) for c in card], dtype=np.int32)
        a = float(rng.choice([0.0, 0.5, 1.0, 3.0]))
        for y, s in allv[:5]:
            assert tree.score(unary, y.astype(np.int32)) == pytest.approx(s)
        best = max(s + a * np.sum(y != truth) for y, s in allv)
        y, v = tree.maxsum(unary, truth, a)
        assert v == pytest.approx(best, abs=1e-9)
        assert tree.score(unary, y) + a * np.sum(y != truth) == pytest.approx(v, abs=1e-9)


def test_maxsum_by_count_equals_enumeration():
    for rng, (parent, card, tables, unary) in cases(300, 1):
        n = len(card)
        tree = PyTree(parent, card, tables)
        truth = np.array([rng.integers(0, c) for c in card], dtype=np.int32)
        best, labels = tree.maxsum_by_count(unary, truth)
        ref = np.full(n + 1, NEG)
        for y, s in enumerate_all(parent, card, tables, unary):
            l = int(np.sum(y != truth))
            ref[l] = max(ref[l], s)
        for l in range(n + 1):
            if ref[l] <= NEG:
                assert best[l] <= NEG and np.all(labels[l] == -1)
                continue
            assert best[l] == pytest.approx(ref[l], abs=1e-9)
            assert np.sum(labels[l] != truth) == l
            assert tree.score(unary, labels[l]) == pytest.approx(ref[l], abs=1e-9)


@pytest.mark.parametrize("kb", [1, 2, 3, 7, 40])
def test_kbest_equals_enumeration(kb):
    for rng, (parent, card, tables, unary) in cases(150, 2 + kb):
        tree = PyTree(parent, card, tables)
        allv = enumerate_all(parent, card, tables, unary)
        ref = sorted((s for _, s in allv), reverse=True)[:kb]
        labels, values = tree.kbest(unary, kb)
        assert len(values) == len(ref)
        np.testing.assert_allclose(values, ref, atol=1e-9)
        assert len({tuple(y) for y in labels}) == len(labels)       # distinct labellings
        for y, v in zip(labels, values):
            assert tree.score(unary, y) == pytest.approx(v, abs=1e-9)
