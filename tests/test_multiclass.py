"""Multiclass structure and SDM: oracles vs brute force, optimum vs an independent QP solver."""
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from ssvmlinear import MulticlassSSVM, ConvergenceWarning
from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.multiclass import MulticlassStructure
from ssvmlinear._kernels.sdm import SDMSolver

from conftest import random_multiclass


def joint_feature(x, y, K):
    phi = np.zeros((len(x), K))
    phi[:, y] = x
    return phi.ravel()  # feature-major layout: w[j*K + k]


def dense_rows(X, bias):
    D = X.toarray()
    return np.hstack([D, np.full((D.shape[0], 1), bias)]) if bias > 0 else D


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_oracle_score_gram_update_match_brute_force(seed, bias):
    X, y = random_multiclass(n=12, d=5, K=4, seed=seed)
    K = 4
    st = MulticlassStructure(CSRDataset(X, bias), y.astype(np.int32), K)
    D = dense_rows(X, bias)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(st.n_weights)
    w[:K] = w[K:2 * K]  # create ties
    for i in range(X.shape[0]):
        phis = [joint_feature(D[i], k, K) for k in range(K)]
        f = np.array([w @ p for p in phis])
        for lam in (0.0, 0.5, 1.0, 3.0):
            vals = f - f[y[i]] + lam * (np.arange(K) != y[i])
            best = int(np.flatnonzero(vals >= vals.max() - 1e-12)[0])
            lab, m, d = st.py_oracle(w, i, lam)
            assert vals[lab[0]] == pytest.approx(vals.max(), abs=1e-12)
            assert lab[0] == best
            assert m == pytest.approx(f[best] - f[y[i]], abs=1e-12)
            assert d == float(best != y[i])
        for a in range(K):
            ya = np.array([a], dtype=np.int32)
            assert st.py_score(w, i, ya) == pytest.approx(f[a], abs=1e-12)
            assert st.py_loss(i, ya) == float(a != y[i])
            for b in range(K):
                expect = (phis[y[i]] - phis[a]) @ (phis[y[i]] - phis[b])
                assert st.py_gram(i, ya, np.array([b], dtype=np.int32)) == pytest.approx(expect, abs=1e-12)
            w2 = w.copy()
            st.py_update(w2, i, 0.7, ya)
            np.testing.assert_allclose(w2, w + 0.7 * (phis[y[i]] - phis[a]), atol=1e-14)


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_margins_and_merged_updates_of_label_subsets_match_brute_force(bias):
    # K = 20: subsets of 1-2 labels (row dots), 3-4 (one sweep gathering their entries), more (gemv)
    K = 20
    X, y = random_multiclass(n=K, d=30, K=K, seed=9)
    st = MulticlassStructure(CSRDataset(X, bias), y.astype(np.int32), K)
    D = dense_rows(X, bias)
    rng = np.random.default_rng(1)
    w = rng.standard_normal(st.n_weights)
    for i in range(X.shape[0]):
        phis = np.array([joint_feature(D[i], k, K) for k in range(K)])
        f = phis @ w
        for n in (1, 2, 3, 4, 7, K):
            labels = rng.choice(K, size=n, replace=False).astype(np.int32)
            if n > 2:
                labels[0] = y[i]                  # the true label among them
            np.testing.assert_allclose(st.py_margins(w, i, labels), f[labels] - f[y[i]], atol=1e-12)
            coefs = rng.standard_normal(n)
            coefs[n // 2] = 0.0
            w2 = w.copy()
            st.py_update_many(w2, i, coefs, labels)
            expect = w + sum(c * (phis[y[i]] - phis[a]) for c, a in zip(coefs, labels))
            np.testing.assert_allclose(w2, expect, atol=1e-12)


def test_merged_update_of_more_labels_than_one_sweep_takes():
    """update_many merges up to 64 moved labels into one sweep over the row and updates the rest
    one by one: 75 moved labels of K = 80 (zero coefficients and the true label among them) still
    give the sum of their updates."""
    K = 80
    X, y = random_multiclass(n=K, d=12, K=K, density=0.6, seed=5)
    st = MulticlassStructure(CSRDataset(X, 1.0), y.astype(np.int32), K)
    D = dense_rows(X, 1.0)
    rng = np.random.default_rng(2)
    w = rng.standard_normal(st.n_weights)
    for i in range(0, K, 20):
        phis = np.array([joint_feature(D[i], k, K) for k in range(K)])
        labels = rng.choice(K, size=78, replace=False).astype(np.int32)
        labels[5] = y[i]
        coefs = rng.standard_normal(78)
        coefs[[1, 2]] = 0.0
        w2 = w.copy()
        st.py_update_many(w2, i, coefs, labels)
        expect = w + sum(c * (phis[y[i]] - phis[a]) for c, a in zip(coefs, labels))
        np.testing.assert_allclose(w2, expect, atol=1e-12)


def qp_primal_reference(X, y, K, Cs, bias):
    """Solve min 1/2||W||^2 + sum_i C_i xi_i s.t. xi_i >= Delta(k, y_i) + (w_k - w_{y_i}) x_i with SLSQP."""
    D = dense_rows(X, bias)
    n, p = D.shape
    nw = p * K

    def obj(z):
        return 0.5 * z[:nw] @ z[:nw] + Cs @ z[nw:]

    def grad(z):
        return np.concatenate([z[:nw], Cs])

    rows, rhs = [], []
    for i in range(n):
        for k in range(K):
            a = np.zeros(nw + n)
            if k != y[i]:
                a[:nw] = joint_feature(D[i], y[i], K) - joint_feature(D[i], k, K)
            a[nw + i] = 1.0
            rows.append(a)
            rhs.append(float(k != y[i]))
    A, b = np.array(rows), np.array(rhs)
    cons = {"type": "ineq", "fun": lambda z: A @ z - b, "jac": lambda z: A}
    z0 = np.concatenate([np.zeros(nw), np.ones(n)])
    res = minimize(obj, z0, jac=grad, constraints=[cons], method="SLSQP",
                   options={"ftol": 1e-10, "maxiter": 5000})
    # SLSQP may end with status 8 ("positive directional derivative") at an accurate optimum;
    # feasibility is checked instead.
    assert res.status in (0, 8), res.message
    assert (A @ res.x - b).min() > -1e-7
    return res.fun, res.x[:nw]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_sdm_optimum_equals_independent_qp(seed, fit_intercept):
    X, y = random_multiclass(n=25, d=5, K=3, seed=seed)
    C = [0.1, 1.0, 10.0, 0.5][seed]
    sw = np.random.default_rng(seed).uniform(0.5, 2.0, X.shape[0]) if seed % 2 else None
    est = MulticlassSSVM(C=C, tol=1e-9, max_iter=100000, fit_intercept=fit_intercept, random_state=seed)
    est.fit(X, y, sample_weight=sw)
    Cs = C * (np.ones(X.shape[0]) if sw is None else sw)
    ref_obj, ref_w = qp_primal_reference(X, y, 3, Cs, 1.0 if fit_intercept else -1.0)
    assert est.objective_ == pytest.approx(ref_obj, rel=1e-6)
    assert est.gap_ <= 1e-6 * abs(est.objective_)
    W = ref_w.reshape(-1, 3)
    np.testing.assert_allclose(est.coef_, W[:5].T, atol=1e-4 * max(1.0, np.abs(W).max()))


def test_duality_gap_decreases_to_zero():
    X, y = random_multiclass(n=200, d=20, K=5, density=0.3, seed=3)
    gaps = []
    for tol in (1.0, 0.1, 1e-3, 1e-6):
        est = MulticlassSSVM(C=1.0, tol=tol, max_iter=100000).fit(X, y)
        assert est.dual_objective_ <= est.objective_ + 1e-9
        gaps.append(est.gap_ / est.objective_)
    assert gaps[-1] < 1e-6
    assert gaps[-1] <= gaps[0]


def test_kernel_dual_state_roundtrip_and_C_rescaling():
    X, y = random_multiclass(n=60, d=8, K=4, seed=1)
    st = MulticlassStructure(CSRDataset(X, 1.0), y.astype(np.int32), 4)
    s = SDMSolver(st, np.full(60, 0.5), 7)
    for _ in range(5):
        s.run_pass(True, 1e-3)
    state = s.get_state()
    s2 = SDMSolver(st, np.full(60, 0.5), 7)
    s2.set_state(state)
    np.testing.assert_allclose(s2.coef, s.coef, atol=1e-12)
    assert s2.dual() == pytest.approx(s.dual(), rel=1e-12)
    # doubling C: alpha scaled by the s in [1, 2] that maximises the new dual along the ray (the
    # dual there is s L - s^2 |w|^2 / 2), the rest of the mass on the true labels (loss 0, dphi 0)
    L, ww = s.dual() + 0.5 * float(s.coef @ s.coef), float(s.coef @ s.coef)
    best = min(max(L / ww, 1.0), 2.0)
    s3 = SDMSolver(st, np.full(60, 1.0), 7)
    s3.set_state(state, np.full(60, 1.0))
    np.testing.assert_allclose(s3.coef, best * s.coef, atol=1e-12)
    assert s3.dual() == pytest.approx(best * L - 0.5 * best ** 2 * ww, rel=1e-12)
    for other in (1.0, 2.0, 0.5 * (1.0 + best), 0.5 * (best + 2.0)):     # no other s does better
        assert s3.dual() >= other * L - 0.5 * other ** 2 * ww - 1e-12
    s4 = SDMSolver(st, np.full(60, 0.25), 7)
    s4.set_state(state, np.full(60, 0.25))  # halving C halves alpha, hence w
    np.testing.assert_allclose(s4.coef, 0.5 * s.coef, atol=1e-12)


def test_ocr_letters_accuracy(ocr_letters):
    X, y, folds = ocr_letters
    tr, te = folds != 0, folds == 0
    est = MulticlassSSVM(C=0.1, fit_intercept=False).fit(X[tr], y[tr])
    assert est.converged_
    assert est.score(X[te], y[te]) > 0.74  # LIBLINEAR -s 4 -c 0.1 gets 0.765 here


# ---------------------------------------------------------------- API conventions

def test_sklearn_clone_and_params():
    from sklearn.base import clone
    est = MulticlassSSVM(C=3.0, tol=0.01, random_state=4)
    c = clone(est)
    assert c.get_params() == est.get_params()
    assert "C=3.0" in repr(est)
    est.set_params(C=2.0)
    assert est.C == 2.0
    with pytest.raises(ValueError, match="Invalid parameter 'foo'"):
        est.set_params(foo=1)


@pytest.mark.parametrize("params, message", [
    (dict(C=-1.0), "The 'C' parameter of MulticlassSSVM must be a float in the range \\(0.0, inf\\)"),
    (dict(tol=0), "'tol' parameter"),
    (dict(max_iter=0), "'max_iter' parameter"),
    (dict(solver="newton"), "'solver' parameter"),
    (dict(class_weight="weird"), "'class_weight' parameter"),
    (dict(solver="admm"), "The 'solver' parameter of MulticlassSSVM must be None, a str among"),
])
def test_parameter_validation(params, message):
    X, y = random_multiclass()
    with pytest.raises(ValueError, match=message):
        MulticlassSSVM(**params).fit(X, y)


def test_arbitrary_labels_dense_float32_readonly_inputs_agree():
    X, y = random_multiclass(n=50, d=6, K=3, seed=2)
    X = X.astype(np.float32).astype(np.float64)  # the same problem in float32 and float64
    names = np.array(["cat", "dog", "emu"])[y]
    a = MulticlassSSVM(C=1.0, tol=1e-6, random_state=0).fit(X, names)
    assert set(a.classes_) == {"cat", "dog", "emu"}
    Xd = X.toarray().astype(np.float32)
    Xd.setflags(write=False)
    b = MulticlassSSVM(C=1.0, tol=1e-6, random_state=0).fit(Xd, names)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert (a.predict(X) == b.predict(Xd)).all()
    assert a.decision_function(X).shape == (50, 3)
    assert a.score(X, names) == np.mean(a.predict(X) == names)


def test_working_sets_hold_only_what_the_solver_uses_and_are_released():
    from ssvmlinear._kernels.sdcd import SDCDSolver
    X, y = random_multiclass(n=60, d=8, K=4, seed=2)
    st = MulticlassStructure(CSRDataset(X, 1.0), y.astype(np.int32), 4)
    s = SDMSolver(st, np.full(60, 0.5), 7)
    assert s.ws.col_names == ("alpha", "loss")           # SDM keeps no aux column
    assert SDCDSolver(st, np.full(60, 0.5), 7).ws.col_names == ("alpha", "loss", "aux")
    for _ in range(3):
        s.run_pass(True, 1e-3)
    w = s.coef.copy()
    s.release()                                           # the end of a fit: only w stays
    assert s.ws is None
    np.testing.assert_array_equal(s.coef, w)


def test_determinism_and_pickle():
    X, y = random_multiclass(n=80, d=10, K=4, seed=5)
    a = MulticlassSSVM(random_state=3, tol=1e-3).fit(X, y)
    b = MulticlassSSVM(random_state=3, tol=1e-3).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_)
    c = pickle.loads(pickle.dumps(a))
    assert np.array_equal(c.predict(X), a.predict(X))


def test_warm_start_continues_and_rescales_C():
    X, y = random_multiclass(n=150, d=12, K=4, seed=6)
    cold = MulticlassSSVM(C=2.0, tol=1e-6, max_iter=100000).fit(X, y)
    est = MulticlassSSVM(C=0.5, tol=1e-6, max_iter=100000, warm_start=True).fit(X, y)
    est.set_params(C=2.0).fit(X, y)
    assert est.objective_ == pytest.approx(cold.objective_, rel=1e-6)
    est.fit(X, y)  # restarts from the optimum
    assert est.converged_ and est.n_iter_ < cold.n_iter_ / 10
    assert est.objective_ == pytest.approx(cold.objective_, rel=1e-6)


def test_convergence_warning_and_callback_stop():
    X, y = random_multiclass(n=100, d=10, K=4, seed=7)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        est = MulticlassSSVM(tol=1e-12, max_iter=2).fit(X, y)
    assert est.n_iter_ == 2 and not est.converged_
    calls = []

    def stop(e):
        calls.append(e)
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = MulticlassSSVM(tol=1e-12, callback=stop).fit(X, y)
    assert len(calls) == 1 and np.isfinite(est.objective_curve_[0])
    assert len(est.dual_curve_) == len(est.timestamps_) == 1


def test_class_weight_balanced_equals_sample_weight():
    X, y = random_multiclass(n=90, d=8, K=3, seed=8)
    y[:60] = 0
    counts = np.bincount(y)
    sw = (len(y) / (3 * counts))[y]
    a = MulticlassSSVM(class_weight="balanced", tol=1e-8, max_iter=100000).fit(X, y)
    b = MulticlassSSVM(tol=1e-8, max_iter=100000).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-6)


def test_predict_with_more_or_fewer_features_than_training():
    # scikit-learn's rule since issue 13: another width is refused; match_columns gives LIBLINEAR's
    from ssvmlinear.utils import match_columns
    X, y = random_multiclass(n=40, d=6, K=3, seed=9)
    est = MulticlassSSVM().fit(X, y)
    wider = sp.hstack([X, sp.random(40, 3, density=0.5, random_state=1)]).tocsr()
    with pytest.raises(ValueError, match="X has 9 features, but MulticlassSSVM is expecting 6"):
        est.predict(wider)
    assert np.array_equal(est.predict(match_columns(wider, 6)), est.predict(X))
    narrow = X[:, :4]
    expected = np.asarray(narrow @ est.coef_[:, :4].T) + est.intercept_
    np.testing.assert_allclose(est.decision_function(match_columns(narrow, 6)), expected)


def test_multiclass_runners_up_are_the_violators_in_the_oracles_order():
    rng = np.random.default_rng(3)
    X, y = random_multiclass(n=10, d=5, K=6, seed=4)
    st = MulticlassStructure(CSRDataset(X, -1.0), y.astype(np.int32), 6)
    D = X.toarray()
    for w in (rng.standard_normal(st.n_weights), np.round(rng.standard_normal(st.n_weights))):  # (ties)
        for i in range(10):
            f = np.array([w @ joint_feature(D[i], k, 6) for k in range(6)])
            for lam in (0.0, 1.0):
                vals = f - f[y[i]] + lam * (np.arange(6) != y[i])
                order = np.lexsort((np.arange(6), -vals))     # value down, ties: lowest class
                violators = [c for c in order[1:] if vals[c] > 0.0]
                for k in (0, 2, 5, 9):
                    best, labels, values = st.py_runners_up(w, i, lam, k)
                    assert best[0] == order[0]
                    assert list(labels[:, 0]) == violators[:k]
                    np.testing.assert_allclose(values, vals[violators[:k]], atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("sigma", [1.0, 0.3])
def test_exact_subproblem_matches_a_qp_solver(seed, sigma):
    """Crammer-Singer's closed form against SLSQP on the visit's QP: maximise
    sum_k d_k H_k - sigma/2 d'Gd over d with alpha + d >= 0 and sum d = 0."""
    rng = np.random.default_rng(seed)
    K = 6
    X, y = random_multiclass(n=8, d=5, K=K, seed=seed)
    st = MulticlassStructure(CSRDataset(X, -1.0), y.astype(np.int32), K)
    w = rng.standard_normal(st.n_weights) * rng.choice([0.1, 1.0, 3.0])
    for i in range(8):
        members = rng.permutation(K)[:rng.integers(2, K + 1)].astype(np.int32)
        if rng.random() < 0.8 and y[i] not in members:     # the true label is usually a member
            members[0] = y[i]
        C = rng.choice([0.05, 1.0, 10.0])
        alpha = rng.dirichlet(np.ones(len(members))) * C
        alpha[rng.random(len(members)) < 0.3] = 0.0
        if y[i] not in members and alpha.sum() == 0.0:
            alpha[0] = C
        alpha *= C / alpha.sum()
        H = st.py_margins(w, i, members) + (members != y[i])
        G = np.array([st.py_gram_row(i, members[a:a + 1], members) for a in range(len(members))])
        solved, new_alpha, dalpha, new_H = st.py_solve_subproblem(i, members, sigma, H, alpha)
        assert solved
        np.testing.assert_allclose(new_alpha - alpha, dalpha, atol=1e-12)
        assert new_alpha.min() >= 0.0 and new_alpha.sum() == pytest.approx(alpha.sum(), abs=1e-9)
        np.testing.assert_allclose(new_H, H - sigma * G @ dalpha, atol=1e-9)

        def gain(d):
            return d @ H - 0.5 * sigma * d @ G @ d
        res = minimize(lambda d: -gain(d), np.zeros(len(members)), jac=lambda d: -(H - sigma * G @ d),
                       constraints=[dict(type="eq", fun=lambda d: d.sum(), jac=lambda d: np.ones_like(d))],
                       bounds=[(-a, None) for a in alpha], method="SLSQP", options=dict(ftol=1e-14, maxiter=500))
        assert gain(dalpha) >= -res.fun - 1e-7
        # KKT: the members holding alpha share the largest H
        support = new_alpha > 1e-12
        assert new_H[support].min() >= new_H.max() - 1e-8


def test_multiclass_kbest_matches_sort():
    X, y = random_multiclass(n=10, d=5, K=6, seed=4)
    st = MulticlassStructure(CSRDataset(X, -1.0), y.astype(np.int32), 6)
    w = np.random.default_rng(0).standard_normal(st.n_weights)
    D = X.toarray()
    for i in range(10):
        f = np.array([w @ joint_feature(D[i], k, 6) for k in range(6)])
        for lam in (0.0, 1.0):
            vals = f - f[y[i]] + lam * (np.arange(6) != y[i])
            labels, values = st.py_kbest(w, i, lam, 4)
            order = np.argsort(-vals, kind="stable")[:4]
            assert list(labels[:, 0]) == list(order)
            np.testing.assert_allclose(values, vals[order], atol=1e-12)
