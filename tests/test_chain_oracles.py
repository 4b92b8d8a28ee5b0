"""Chain structure: Viterbi lambda-oracle, loss-indexed oracle, score, Gram and update vs brute force."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.chain import ChainStructure


def random_chain_problem(seed, n_seq=3, max_T=5, K=3, d=4, start_end=False, normalize=False, bias=-1.0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, max_T + 1, n_seq)
    n = int(lengths.sum())
    X = sp.random(n, d, density=0.6, random_state=seed, format="csr", data_rvs=rng.standard_normal)
    y = rng.integers(0, K, n).astype(np.int32)
    st = ChainStructure(CSRDataset(X.tocsr(), bias), y, lengths, K, start_end, normalize)
    w = rng.standard_normal(st.n_weights)
    return st, X.toarray(), y, lengths, w


def phi(D, y, K, start_end, bias):
    """Explicit joint feature vector in the structure's weight layout."""
    T, d = D.shape
    cols = d + (1 if bias > 0 else 0)
    U = np.zeros((cols, K))
    for t in range(T):
        U[:d, y[t]] += D[t]
        if bias > 0:
            U[d, y[t]] += bias
    tr = np.zeros((K, K))
    for t in range(1, T):
        tr[y[t - 1], y[t]] += 1
    parts = [U.ravel(), tr.ravel()]
    if start_end:
        s, e = np.zeros(K), np.zeros(K)
        s[y[0]] = 1
        e[y[-1]] = 1
        parts += [s, e]
    return np.concatenate(parts)


CASES = [dict(start_end=se, normalize=nz, bias=b) for se in (False, True) for nz in (False, True)
         for b in (-1.0, 1.0)]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", range(6))
def test_chain_oracles_match_enumeration(case, seed):
    K = 3 if seed % 2 else 2
    st, D, y, lengths, w = random_chain_problem(seed, K=K, start_end=case["start_end"],
                                                normalize=case["normalize"], bias=case["bias"])
    starts = np.concatenate([[0], np.cumsum(lengths)])
    for i in range(len(lengths)):
        Di, yi = D[starts[i]:starts[i + 1]], y[starts[i]:starts[i + 1]]
        T = len(yi)
        labels = [np.array(c, dtype=np.int32) for c in itertools.product(range(K), repeat=T)]
        phis = [phi(Di, lab, K, case["start_end"], case["bias"]) for lab in labels]
        p_true = phi(Di, yi, K, case["start_end"], case["bias"])
        f = np.array([w @ p for p in phis])
        f_true = w @ p_true
        scale = 1.0 / T if case["normalize"] else 1.0
        ham = np.array([np.sum(lab != yi) for lab in labels])
        loss = ham * scale
        for j, lab in enumerate(labels[:20]):
            assert st.py_score(w, i, lab) == pytest.approx(f[j], abs=1e-10)
            assert st.py_loss(i, lab) == pytest.approx(loss[j], abs=1e-14)
        # lambda-oracle
        for lam in (0.0, 0.3, 1.0, 4.0):
            vals = f - f_true + lam * loss
            lab, m, d = st.py_oracle(w, i, lam)
            j = int(np.argmax(vals))
            assert m + lam * d == pytest.approx(vals[j], abs=1e-10)
            assert np.array_equal(lab, labels[j])  # continuous random weights: a unique argmax
            assert m == pytest.approx(f[j] - f_true, abs=1e-10) and d == pytest.approx(loss[j])
        # loss-indexed oracle
        best_m, best_lab, level_loss = st.py_loss_indexed_oracle(w, i)
        assert len(best_m) == T + 1
        assert np.allclose(level_loss, np.arange(T + 1) * scale)
        for ell in range(T + 1):
            mask = ham == ell
            if not mask.any():
                assert best_m[ell] <= -1e299
                continue
            j = np.flatnonzero(mask)[np.argmax((f - f_true)[mask])]
            assert best_m[ell] == pytest.approx(f[j] - f_true, abs=1e-10)
            assert np.array_equal(best_lab[ell], labels[j])
        # Gram and update
        rng = np.random.default_rng(seed + 100)
        for _ in range(5):
            a, b = labels[rng.integers(len(labels))], labels[rng.integers(len(labels))]
            da, db = p_true - phi(Di, a, K, case["start_end"], case["bias"]), \
                p_true - phi(Di, b, K, case["start_end"], case["bias"])
            assert st.py_gram(i, a, b) == pytest.approx(da @ db, abs=1e-10)
            w2 = w.copy()
            st.py_update(w2, i, -0.4, a)
            np.testing.assert_allclose(w2, w - 0.4 * da, atol=1e-12)


@pytest.mark.parametrize("case", CASES[::3])
@pytest.mark.parametrize("seed", range(4))
def test_kbest_matches_sorted_enumeration(case, seed):
    K = 3
    st, D, y, lengths, w = random_chain_problem(seed, K=K, max_T=4, start_end=case["start_end"],
                                                normalize=case["normalize"], bias=case["bias"])
    starts = np.concatenate([[0], np.cumsum(lengths)])
    for i in range(len(lengths)):
        Di, yi = D[starts[i]:starts[i + 1]], y[starts[i]:starts[i + 1]]
        T = len(yi)
        labels = [np.array(c, dtype=np.int32) for c in itertools.product(range(K), repeat=T)]
        f_true = w @ phi(Di, yi, K, case["start_end"], case["bias"])
        for lam in (0.0, 1.0):
            vals = np.array([w @ phi(Di, lab, K, case["start_end"], case["bias"]) - f_true
                             + lam * st.py_loss(i, lab) for lab in labels])
            order = np.argsort(-vals, kind="stable")
            for k in (1, 4, len(labels) + 3):
                got_labels, got_vals = st.py_kbest(w, i, lam, k)
                n = min(k, len(labels))
                assert len(got_vals) == n
                np.testing.assert_allclose(got_vals, vals[order[:n]], atol=1e-10)
                for lab, v in zip(got_labels, got_vals):
                    j = next(j for j, c in enumerate(labels) if np.array_equal(c, lab))
                    assert vals[j] == pytest.approx(v, abs=1e-10)
                assert len({tuple(lab) for lab in got_labels}) == n  # distinct labellings


@pytest.mark.parametrize("seed", range(4))
def test_gram_row_and_margins_agree_with_single_calls(seed):
    st, D, y, lengths, w = random_chain_problem(seed, K=3, max_T=5, start_end=bool(seed % 2))
    rng = np.random.default_rng(seed)
    for i in range(len(lengths)):
        T = int(lengths[i])
        labels = rng.integers(0, 3, (6, T)).astype(np.int32)
        flat = labels.ravel()
        for a in labels[:3]:
            np.testing.assert_allclose(st.py_gram_row(i, a, flat), [st.py_gram(i, a, b) for b in labels],
                                       atol=1e-12)
        truth = st.py_true_label(i)
        expect = [st.py_score(w, i, b) - st.py_score(w, i, truth) for b in labels]
        np.testing.assert_allclose(st.py_margins(w, i, flat), expect, atol=1e-10)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("n_labels", [1, 3, 8, 12])
def test_margins_match_explicit_feature_vectors(case, n_labels):
    """margins() of few labels (the scores they need, gathered per position) and of many (the full table, fresh or the
    oracle's) is phi(y) - phi(y_i) against the explicit joint feature map."""
    st, D, y, lengths, w = random_chain_problem(n_labels, n_seq=4, max_T=6, K=4, start_end=case["start_end"],
                                                normalize=case["normalize"], bias=case["bias"])
    starts = np.r_[0, np.cumsum(lengths)]
    rng = np.random.default_rng(n_labels)
    for i in range(len(lengths)):
        Di, yi = D[starts[i]:starts[i + 1]], y[starts[i]:starts[i + 1]]
        labels = rng.integers(0, 4, (n_labels, len(yi))).astype(np.int32)
        labels[0] = yi                    # y_i itself: margin exactly 0
        p_true = phi(Di, yi, 4, case["start_end"], case["bias"])
        expect = [w @ (phi(Di, b, 4, case["start_end"], case["bias"]) - p_true) for b in labels]
        got = st.py_margins(w, i, labels.ravel())
        np.testing.assert_allclose(got, expect, atol=1e-10)
        assert got[0] == 0.0
        for lam in (0.0, 1.0):
            np.testing.assert_allclose(st.py_margins_after_oracle(w, i, labels.ravel(), lam), expect, atol=1e-10)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", range(3))
def test_gram_and_update_many_match_explicit_feature_vectors(case, seed):
    """Gram entries (with and without the token-product cache) are dphi(a) . dphi(b), and
    update_many adds sum_k c_k dphi(y_k), against the explicit joint feature map."""
    st, D, y, lengths, w = random_chain_problem(seed, K=3, max_T=6, **case)
    starts = np.r_[0, np.cumsum(lengths)]
    rng = np.random.default_rng(seed)
    K, se, bias = 3, case["start_end"], case["bias"]
    for cached in (False, True):
        if cached:
            st.prepare_gram()
        for i in range(len(lengths)):
            Di, T = D[starts[i]:starts[i + 1]], int(lengths[i])
            # few labels (per-position tag lists) and many (a table); repeated labels, so that
            # coefficients of one tag can cancel
            n_labels = 5 if i % 2 else 12
            labels = rng.integers(0, K, (n_labels, T)).astype(np.int32)
            labels[-1] = labels[0]
            dphi = [phi(Di, y[starts[i]:starts[i + 1]], K, se, bias) - phi(Di, b, K, se, bias) for b in labels]
            for a, da in zip(labels, dphi):
                np.testing.assert_allclose(st.py_gram_row(i, a, labels.ravel()), [da @ db for db in dphi],
                                           atol=1e-10)
            coefs = rng.standard_normal(n_labels)
            coefs[rng.integers(1, n_labels - 1)] = 0.0
            coefs[-1] = -coefs[0]
            w1 = w.copy()
            st.py_update_many(w1, i, coefs, labels.ravel())
            np.testing.assert_allclose(w1, w + sum(c * d for c, d in zip(coefs, dphi)), atol=1e-10)


@pytest.mark.parametrize("n_features", [40, (1 << 20) + 7])
def test_token_product_cache_equals_the_products_it_replaces(n_features):
    """prepare_gram's token products (a scattered token, or merged rows past a million features:
    no dense vector that wide) give the Gram rows computed without the cache."""
    rng = np.random.default_rng(1)
    lengths = np.array([3, 5, 4])
    n = int(lengths.sum())
    cols = rng.choice(np.r_[0:20, n_features - 20:n_features], size=(n, 6))
    X = sp.csr_matrix((rng.standard_normal(n * 6), cols.ravel(), np.arange(0, n * 6 + 1, 6)), shape=(n, n_features))
    X.sum_duplicates()
    for bias in (-1.0, 1.5):
        st = ChainStructure(CSRDataset(X, bias), rng.integers(0, 3, n).astype(np.int32), lengths, 3)
        labels = [rng.integers(0, 3, (4, T)).astype(np.int32) for T in lengths]
        before = [st.py_gram_row(i, lab[0], lab.ravel()) for i, lab in enumerate(labels)]
        st.prepare_gram()
        after = [st.py_gram_row(i, lab[0], lab.ravel()) for i, lab in enumerate(labels)]
        for b, a in zip(before, after):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_ties_are_broken_towards_the_lowest_tags():
    st, D, y, lengths, w = random_chain_problem(3, n_seq=3, max_T=5, K=3)
    zero = np.zeros_like(w)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    for i in range(len(lengths)):
        yi = y[starts[i]:starts[i + 1]]
        lab, m, d = st.py_oracle(zero, i, 0.0)       # every labelling scores 0
        assert np.array_equal(lab, np.zeros_like(yi))
        lab, m, d = st.py_oracle(zero, i, 1.0)       # every all-wrong labelling ties: lowest wrong tags
        assert np.array_equal(lab, np.where(yi == 0, 1, 0))
        labels, values = st.py_kbest(zero, i, 0.0, 3)
        assert np.array_equal(labels[0], np.zeros_like(yi)) and np.all(values == 0.0)
