"""ChainSSVM.decision_function: per-token max-marginals of the sequence score, checked against
enumerating every tag sequence."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from ssvmlinear import ChainSSVM


def brute_force(est, X, lengths):
    U = np.asarray(X @ est.coef_.T) + est.intercept_
    K = U.shape[1]
    out = np.full(U.shape, -np.inf)
    start = 0
    for L in lengths:
        for tags in itertools.product(range(K), repeat=L):
            v = sum(U[start + t, tags[t]] for t in range(L))
            v += sum(est.transition_[tags[t], tags[t + 1]] for t in range(L - 1))
            if est.start_end:
                v += est.start_[tags[0]] + est.end_[tags[-1]]
            for t in range(L):
                out[start + t, tags[t]] = max(out[start + t, tags[t]], v)
        start += L
    return out


@pytest.mark.parametrize("start_end", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_max_marginals_equal_enumeration(start_end, seed):
    rng = np.random.default_rng(seed)
    lengths = np.array([1, 4, 2, 5, 3])
    X = sp.random(lengths.sum(), 6, density=0.6, format="csr", random_state=seed)
    y = rng.integers(0, 3, lengths.sum())
    est = ChainSSVM(C=1.0, start_end=start_end, max_iter=50).fit(X, y, lengths)
    S = est.decision_function(X, lengths)
    np.testing.assert_allclose(S, brute_force(est, X, lengths), rtol=1e-12, atol=1e-12)
    # the argmax of every token is the Viterbi labelling
    assert np.array_equal(est.classes_[S.argmax(axis=1)], est.predict(X, lengths))


def test_sequence_ids_and_chunks_give_the_same_scores(monkeypatch):
    from ssvmlinear import load_svmlight_file
    from conftest import DATA
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters_test.svm.gz", n_features=128)
    X, y, lengths = X[:lengths[:200].sum()], y[:lengths[:200].sum()], lengths[:200]
    est = ChainSSVM(C=0.1, max_iter=20).fit(X, y, lengths)
    S = est.decision_function(X, lengths)
    ids = np.repeat(np.arange(len(lengths)), lengths)
    np.testing.assert_array_equal(S, est.decision_function(X, sequence_ids=ids))
    import ssvmlinear.models.chain as chain
    monkeypatch.setattr(chain, "MAX_MARGINAL_ENTRIES", 7 * 26 * 26)       # chunks of 7 sequences
    np.testing.assert_array_equal(S, est.decision_function(X, lengths))
    assert np.mean(est.classes_[S.argmax(axis=1)] == est.predict(X, lengths)) == 1.0
