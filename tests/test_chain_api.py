"""ChainSSVM: scikit-learn conventions, determinism, parallel prediction, warm start, OCR sanity."""
import pickle
import warnings

import numpy as np
import pytest

from ssvmlinear import ChainSSVM, MulticlassSSVM, load_svmlight_file
from ssvmlinear.exceptions import ConvergenceWarning

from conftest import DATA


@pytest.fixture(scope="module")
def words():
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters_train.svm.gz", n_features=128)
    words = np.zeros(len(lengths), dtype=bool)
    words[::15] = True  # 417 words spread over the file (it is ordered by word)
    Xt, yt, lt = load_svmlight_file(DATA / "ocr_letters_test.svm.gz", n_features=128)
    tokens = np.repeat(words, lengths)
    return (X[tokens], y[tokens], lengths[words]), (Xt, yt, lt)


@pytest.mark.parametrize("loss", ["margin", "lse"])
def test_deterministic_under_random_state(words, loss):
    (X, y, L), _ = words
    a = ChainSSVM(C=0.1, loss=loss, random_state=7).fit(X, y, L)
    b = ChainSSVM(C=0.1, loss=loss, random_state=7).fit(X, y, L)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.transition_, b.transition_)
    assert a.n_iter_ == b.n_iter_


def test_parallel_prediction_equals_serial(words):
    (X, y, L), (Xt, yt, Lt) = words
    est = ChainSSVM(C=0.1).fit(X, y, L)
    p1 = est.predict(Xt, Lt)
    p2 = est.set_params(n_jobs=2).predict(Xt, Lt)
    assert np.array_equal(p1, p2)
    assert est.score(Xt, yt, Lt) > 0.7  # letters of OCR words, trained on 300 words
    assert 0.0 < est.sequence_accuracy(Xt, yt, Lt) < est.score(Xt, yt, Lt)


def test_chain_beats_independent_letters(words):
    (X, y, L), (Xt, yt, Lt) = words
    chain = ChainSSVM(C=0.1).fit(X, y, L).score(Xt, yt, Lt)
    flat = MulticlassSSVM(C=0.1, fit_intercept=False).fit(X, y).score(Xt, yt)
    assert chain > flat + 0.03


def test_clone_pickle_repr_and_validation(words):
    from sklearn.base import clone
    (X, y, L), (Xt, _, Lt) = words
    est = ChainSSVM(C=0.3, loss="lse", start_end=True)
    assert clone(est).get_params() == est.get_params()
    assert "loss='lse'" in repr(est)
    est.fit(X, y, L)
    back = pickle.loads(pickle.dumps(est))
    assert np.array_equal(back.predict(Xt, Lt), est.predict(Xt, Lt))
    assert est.start_.shape == est.end_.shape == (len(est.classes_),)
    with pytest.raises(ValueError, match="lengths sum to"):
        ChainSSVM().fit(X, y, L[:-1])
    with pytest.raises(ValueError, match="The 'solver' parameter of ChainSSVM must be None, a str among"):
        ChainSSVM(solver="admm").fit(X, y, L)
    with pytest.raises(ValueError, match="not fitted"):
        ChainSSVM().predict(Xt, Lt)


@pytest.mark.parametrize("loss", ["margin", "lse"])
def test_warm_start_restarts_near_the_optimum(words, loss):
    (X, y, L), _ = words
    cold = ChainSSVM(C=0.1, loss=loss).fit(X, y, L)
    warm = ChainSSVM(C=0.1, loss=loss, warm_start=True).fit(X, y, L)
    warm.fit(X, y, L)
    assert warm.n_iter_ < cold.n_iter_
    assert warm.dual_objective_ == pytest.approx(cold.dual_objective_, rel=1e-2)


def test_sample_weight_zero_ignores_sequences(words):
    (X, y, L), _ = words
    sw = np.ones(len(L))
    sw[100:] = 0.0
    t = int(L[:100].sum())
    a = ChainSSVM(C=0.1, tol=1e-3, random_state=0).fit(X, y, L, sample_weight=sw)
    b = ChainSSVM(C=0.1, tol=1e-3, random_state=0).fit(X[:t], y[:t], L[:100])
    assert a.dual_objective_ == pytest.approx(b.dual_objective_, rel=1e-3)


def test_lse_on_multiclass_matches_enumerated_op3():
    """Multiclass LSE (the paper's Covertype/Sector setting): every class can be enumerated."""
    from scipy.optimize import minimize
    from conftest import random_multiclass
    X, y = random_multiclass(n=40, d=5, K=4, seed=3)
    est = MulticlassSSVM(C=0.5, solver="sdcd", loss="lse", tol=1e-14, max_iter=100000, fit_intercept=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(X, y)
    D = X.toarray()
    W = est.coef_
    primal = 0.5 * np.sum(W * W) + 0.5 * sum(
        max(0.0, 1.0 + D[i] @ W[k] - D[i] @ W[y[i]]) for i in range(40) for k in range(4) if k != y[i])
    assert est.dual_objective_ == pytest.approx(primal, rel=1e-6)


def test_warm_start_across_a_solver_change_is_a_cold_start(words):
    (X, y, L), _ = words
    cold = ChainSSVM(C=0.1, tol=1e-3, random_state=0).fit(X, y, L)
    est = ChainSSVM(C=0.1, loss="lse", warm_start=True, random_state=0).fit(X, y, L)
    est.set_params(loss="margin", tol=1e-3).fit(X, y, L)
    assert est.dual_objective_ <= est.objective_ + 1e-9
    assert est.objective_ == pytest.approx(cold.objective_, rel=1e-9)


def test_lse_warm_start_over_a_C_path():
    from conftest import random_multiclass
    X, y = random_multiclass(n=60, d=6, K=4, seed=9)
    cold = MulticlassSSVM(C=2.0, solver="sdcd", loss="lse", tol=1e-12, max_iter=100000).fit(X, y)
    est = MulticlassSSVM(C=0.5, solver="sdcd", loss="lse", tol=1e-12, max_iter=100000, warm_start=True)
    est.fit(X, y).set_params(C=2.0).fit(X, y)
    assert est.dual_objective_ == pytest.approx(cold.dual_objective_, rel=1e-6)
    assert est.objective_ == pytest.approx(est.dual_objective_, rel=1e-6)  # LSE multiclass: gap closes


def test_bad_weights_and_empty_input_are_rejected(words):
    from conftest import random_multiclass
    X, y = random_multiclass()
    with pytest.raises(ValueError, match="must be finite and >= 0"):
        MulticlassSSVM(class_weight={0: -1.0}).fit(X, y)
    with pytest.raises(ValueError, match="0 sample\\(s\\)"):  # scikit-learn's check since issue 13
        ChainSSVM().fit(X[:0], y[:0], np.zeros(0, dtype=np.int64))
