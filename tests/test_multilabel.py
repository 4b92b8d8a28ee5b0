"""Independent multi-label structure, MultiLabelSSVM, metrics, model files and the CLI.

Every kernel method is checked against brute-force enumeration of all 2^K labels with an explicit
joint feature map; the solver optima against independent solutions (scipy SLSQP on the primal QP,
LIBLINEAR's binary hinge SVMs for the decomposable margin problem)."""
import itertools
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.optimize import minimize

from ssvmlinear import (MultiLabelSSVM, ConvergenceWarning, load_svmlight_file, dump_svmlight_file, save_model,
                        load_model, metrics)
from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.multilabel import MultiLabelStructure
from ssvmlinear.solvers import SDCD, SDM, CuttingPlane, Pegasos

from conftest import DATA


# ---------------------------------------------------------------- helpers

def random_multilabel(n=10, d=4, K=3, density=0.6, seed=0):
    """A small problem with an empty true label set (row 0), a full one (row 1) and an all-zero
    feature row (row 2, so that scores tie without a bias)."""
    rng = np.random.default_rng(seed)
    D = sp.random(n, d, density=density, random_state=seed, data_rvs=rng.standard_normal).toarray()
    W = rng.standard_normal((K, d))
    Y = (D @ W.T + 0.7 * rng.standard_normal((n, K)) > 0).astype(np.int32)
    Y[0] = 0
    Y[1] = 1
    D[2] = 0.0
    return sp.csr_matrix(D), Y


def all_labels(K):
    return np.array(list(itertools.product([0, 1], repeat=K)), dtype=np.int32)


def phi(x, y):
    return np.outer(x, y).ravel()  # feature-major: w[j*K + k] = x_j y_k


def dense_rows(X, bias):
    D = X.toarray()
    return np.hstack([D, np.full((D.shape[0], 1), bias)]) if bias > 0 else D


def brute(st_, w, D, Y, i, normalize):
    """Scores f, margins m, Hamming counts H, losses of every label of example i."""
    K = Y.shape[1]
    labels = all_labels(K)
    f = np.array([w @ phi(D[i], y) for y in labels])
    fyi = w @ phi(D[i], Y[i])
    H = (labels != Y[i]).sum(axis=1).astype(float)
    return labels, f, f - fyi, H, H / K if normalize else H


KERNEL_CASES = [(seed, K) for seed, K in zip(range(4), (1, 2, 4, 5))]


@pytest.mark.parametrize("seed, K", KERNEL_CASES)
@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("normalize", [False, True])
def test_structure_methods_match_brute_force(seed, K, bias, normalize):
    X, Y = random_multilabel(n=8, d=4, K=K, seed=seed)
    st_ = MultiLabelStructure(CSRDataset(X, bias), Y, normalize)
    assert st_.n_weights == (4 + (bias > 0)) * K and st_.max_label_len == K
    D = dense_rows(X, bias)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(st_.n_weights)
    for i in range(X.shape[0]):
        labels, f, m, H, loss = brute(st_, w, D, Y, i, normalize)
        np.testing.assert_array_equal(st_.py_true_label(i), Y[i])
        for y, fy, ly in zip(labels, f, loss):
            assert st_.py_score(w, i, y) == pytest.approx(fy, abs=1e-12)
            assert st_.py_loss(i, y) == pytest.approx(ly, abs=1e-15)
        np.testing.assert_allclose(st_.py_margins(w, i, labels.ravel()), m, atol=1e-12)
        for lam in (0.0, 0.5, 1.0, 2.5):
            np.testing.assert_allclose(st_.py_margins_after_oracle(w, i, labels.ravel(), lam), m, atol=1e-12)
            vals = m + lam * loss
            lab, mo, do = st_.py_oracle(w, i, lam)
            idx = int(np.flatnonzero((labels == lab).all(axis=1))[0])
            assert vals[idx] == pytest.approx(vals.max(), abs=1e-12)
            # ties keep the true value of a label: the maximiser closest to y_i
            assert H[idx] == H[vals >= vals.max() - 1e-12].min()
            assert mo == pytest.approx(m[idx], abs=1e-12) and do == pytest.approx(loss[idx], abs=1e-15)
            for k in (1, 3, 2 ** K, 2 ** K + 3):
                kl, kv = st_.py_kbest(w, i, lam, k)
                assert kl.shape == (min(k, 2 ** K), K)
                np.testing.assert_allclose(kv, np.sort(vals)[::-1][:k], atol=1e-12)
                rows = [int(np.flatnonzero((labels == r).all(axis=1))[0]) for r in kl]
                assert len(set(rows)) == len(rows)
                np.testing.assert_allclose(vals[rows], kv, atol=1e-12)
        best, lab_levels, losses = st_.py_loss_indexed_oracle(w, i)
        np.testing.assert_allclose(losses, np.arange(K + 1) / (K if normalize else 1))
        for level in range(K + 1):
            mask = H == level
            assert best[level] == pytest.approx(m[mask].max(), abs=1e-12)
            assert (lab_levels[level] != Y[i]).sum() == level
            m_level = st_.py_score(w, i, lab_levels[level]) - st_.py_score(w, i, Y[i])
            assert m_level == pytest.approx(best[level], abs=1e-12)
        # Micro-F1 surrogate: h = H + m, g = -(|y| + |y_i|), H unnormalised
        h_all = H + m
        sizes = labels.sum(axis=1) + Y[i].sum()
        for lam in (0.0, 0.3, 1.0, 4.0):
            obj = h_all - lam * sizes
            lab, h, g, v = st_.py_oracle_f1(w, i, lam)
            idx = int(np.flatnonzero((labels == lab).all(axis=1))[0])
            assert v == pytest.approx(obj.max(), abs=1e-12) and obj[idx] == pytest.approx(obj.max(), abs=1e-12)
            assert h == pytest.approx(h_all[idx], abs=1e-12) and g == -sizes[idx]
        ratio = np.divide(h_all, sizes, out=np.zeros_like(h_all), where=sizes > 0)
        lab, h, g, v = st_.py_exact_f1(w, i)
        idx = int(np.flatnonzero((labels == lab).all(axis=1))[0])
        assert v == pytest.approx(ratio.max(), abs=1e-12) and ratio[idx] == pytest.approx(ratio.max(), abs=1e-12)
        assert h == pytest.approx(h_all[idx], abs=1e-12) and g == -sizes[idx]
        # Gram matrix and update against the explicit joint feature map
        pairs = [(a, b) for a in range(len(labels)) for b in range(len(labels))]
        for a, b in [pairs[j] for j in rng.permutation(len(pairs))[:30]]:
            da = phi(D[i], Y[i]) - phi(D[i], labels[a])
            db = phi(D[i], Y[i]) - phi(D[i], labels[b])
            assert st_.py_gram(i, labels[a], labels[b]) == pytest.approx(da @ db, abs=1e-12)
        a = labels[rng.integers(len(labels))]
        expect = [(phi(D[i], Y[i]) - phi(D[i], a)) @ (phi(D[i], Y[i]) - phi(D[i], b)) for b in labels]
        np.testing.assert_allclose(st_.py_gram_row(i, a, labels.ravel()), expect, atol=1e-12)
        w2 = w.copy()
        st_.py_update(w2, i, 0.7, a)
        np.testing.assert_allclose(w2, w + 0.7 * (phi(D[i], Y[i]) - phi(D[i], a)), atol=1e-14)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), K=st.integers(1, 4), lam=st.sampled_from([0.0, 0.5, 1.0, 2.0]))
def test_oracles_with_many_ties(data, K, lam):
    """Integer features and weights: many equal scores; the values still match brute force."""
    d, n = 3, 3
    vals = st.sampled_from([-1.0, 0.0, 1.0])
    D = np.array(data.draw(st.lists(vals, min_size=n * d, max_size=n * d))).reshape(n, d)
    Y = np.array(data.draw(st.lists(st.sampled_from([0, 1]), min_size=n * K, max_size=n * K)),
                 dtype=np.int32).reshape(n, K)
    w = np.array(data.draw(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]), min_size=d * K,
                                    max_size=d * K)))
    st_ = MultiLabelStructure(CSRDataset(sp.csr_matrix(D), -1.0), Y)
    for i in range(n):
        labels, f, m, H, loss = brute(st_, w, D, Y, i, False)
        v = m + lam * loss
        assert st_.py_oracle(w, i, lam)[1] + lam * st_.py_oracle(w, i, lam)[2] == pytest.approx(v.max())
        kl, kv = st_.py_kbest(w, i, lam, 2 ** K)
        np.testing.assert_allclose(kv, np.sort(v)[::-1], atol=1e-12)
        assert len({tuple(r) for r in kl}) == 2 ** K
        best = st_.py_loss_indexed_oracle(w, i)[0]
        np.testing.assert_allclose(best, [m[H == lv].max() for lv in range(K + 1)], atol=1e-12)
        sizes = labels.sum(axis=1) + Y[i].sum()
        ratio = np.divide(H + m, sizes, out=np.zeros(len(labels)), where=sizes > 0)
        assert st_.py_exact_f1(w, i)[3] == pytest.approx(ratio.max(), abs=1e-12)
        assert st_.py_oracle_f1(w, i, lam)[3] == pytest.approx((H + m - lam * sizes).max(), abs=1e-12)


def test_structure_pickles_and_validates():
    X, Y = random_multilabel(n=6, K=3, seed=1)
    s = MultiLabelStructure(CSRDataset(X, 1.0), sp.csr_matrix(Y), True)
    t = pickle.loads(pickle.dumps(s))
    assert t.normalize_loss and t.n_labels == 3
    np.testing.assert_array_equal(t.true_labels(), Y)
    w = np.random.default_rng(0).standard_normal(s.n_weights)
    for i in range(6):
        a, b = s.py_oracle(w, i, 1.0), t.py_oracle(w, i, 1.0)
        assert np.array_equal(a[0], b[0]) and a[1:] == b[1:]
    with pytest.raises(ValueError, match="only 0 and 1"):
        MultiLabelStructure(CSRDataset(X, 1.0), 2 * Y)
    with pytest.raises(ValueError, match="rows"):
        MultiLabelStructure(CSRDataset(X, 1.0), Y[:3])
    with pytest.raises(ValueError, match="at least one label"):
        MultiLabelStructure(CSRDataset(X, 1.0), Y[:, :0])


# ---------------------------------------------------------------- metrics

def random_indicators(n, K, seed):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, K)) < 0.3).astype(np.int32)
    P = (rng.random((n, K)) < 0.3).astype(np.int32)
    Y[:3] = 0
    P[0] = 0              # both empty
    P[1] = Y[1] = 1
    Y[:, 0] = P[:, 0] = 0  # a label neither present nor predicted
    return Y, P


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("fmt", ["dense", "csr", "mixed"])
def test_metrics_match_scikit_learn(seed, fmt):
    from sklearn import metrics as skm
    Y, P = random_indicators(40, 5, seed)
    sw = np.random.default_rng(seed).uniform(0.1, 2.0, 40)
    a = sp.csr_matrix(Y) if fmt in ("csr", "mixed") else Y
    b = sp.csr_matrix(P) if fmt == "csr" else P
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's zero-division warnings
        assert metrics.subset_accuracy(a, b) == pytest.approx(skm.accuracy_score(Y, P))
        assert metrics.subset_accuracy(a, b, sample_weight=sw) == pytest.approx(
            skm.accuracy_score(Y, P, sample_weight=sw))
        assert metrics.hamming_loss(a, b) == pytest.approx(skm.hamming_loss(Y, P))
        assert metrics.hamming_loss(a, b, sample_weight=sw) == pytest.approx(skm.hamming_loss(Y, P, sample_weight=sw))
        assert metrics.micro_f1(a, b) == pytest.approx(skm.f1_score(Y, P, average="micro", zero_division=0))
        assert metrics.macro_f1(a, b) == pytest.approx(skm.f1_score(Y, P, average="macro", zero_division=0))
        assert metrics.macro_f1(a, b, zero_division=1.0) == pytest.approx(
            skm.f1_score(Y, P, average="macro", zero_division=1.0))
        assert metrics.example_accuracy(a, b) == pytest.approx(
            skm.jaccard_score(Y, P, average="samples", zero_division=1.0))
        assert metrics.example_accuracy(a, b, sample_weight=sw) == pytest.approx(
            skm.jaccard_score(Y, P, average="samples", zero_division=1.0, sample_weight=sw))


def test_metrics_edge_cases():
    Z = np.zeros((3, 2), dtype=int)
    assert metrics.example_accuracy(Z, Z) == 1.0 and metrics.subset_accuracy(Z, Z) == 1.0
    assert metrics.hamming_loss(Z, Z) == 0.0 and metrics.micro_f1(Z, Z) == 0.0
    assert metrics.micro_f1(Z, Z, zero_division=1.0) == 1.0
    with pytest.raises(ValueError, match="shape"):
        metrics.hamming_loss(Z, np.zeros((3, 3)))
    # explicit zeros in a sparse matrix are not labels
    S = sp.csr_matrix((np.array([0, 1]), np.array([0, 1]), np.array([0, 1, 2, 2])), shape=(3, 2))
    assert metrics.subset_accuracy(S, np.array([[0, 0], [0, 1], [0, 0]])) == 1.0


# ---------------------------------------------------------------- optima vs independent solvers

def qp_margin_reference(X, Y, Cs, bias, normalize):
    """min 1/2||w||^2 + sum_i C_i xi_i  s.t.  xi_i >= Delta(y, y_i) + w . (phi(y) - phi(y_i)) for
    all 2^K labels y (SLSQP on the explicit constraint list)."""
    D = dense_rows(X, bias)
    n, p = D.shape
    K = Y.shape[1]
    nw = p * K
    rows, rhs = [], []
    for i in range(n):
        for y in all_labels(K):
            a = np.zeros(nw + n)
            a[:nw] = phi(D[i], Y[i]) - phi(D[i], y)
            a[nw + i] = 1.0
            rows.append(a)
            rhs.append((y != Y[i]).sum() / (K if normalize else 1))
    A, b = np.array(rows), np.array(rhs)
    res = minimize(lambda z: 0.5 * z[:nw] @ z[:nw] + Cs @ z[nw:], np.concatenate([np.zeros(nw), np.full(n, K)]),
                   jac=lambda z: np.concatenate([z[:nw], Cs]), method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda z: A @ z - b, "jac": lambda z: A}],
                   options={"ftol": 1e-12, "maxiter": 5000})
    assert res.status in (0, 8), res.message  # 8: positive directional derivative at an accurate optimum
    assert (A @ res.x - b).min() > -1e-7
    return res.fun, res.x[:nw].reshape(p, K)


@pytest.mark.parametrize("seed, fit_intercept, normalize", [(0, False, False), (1, True, False), (2, True, True),
                                                            (3, False, True)])
def test_sdm_optimum_equals_independent_qp(seed, fit_intercept, normalize):
    X, Y = random_multilabel(n=14, d=4, K=3, seed=seed)
    C = [0.1, 1.0, 5.0, 0.5][seed]
    sw = np.random.default_rng(seed).uniform(0.5, 2.0, X.shape[0]) if seed % 2 else None
    est = MultiLabelSSVM(C=C, tol=1e-10, max_iter=100000, fit_intercept=fit_intercept, normalize_loss=normalize,
                         random_state=seed).fit(X, Y, sample_weight=sw)
    Cs = C * (np.ones(X.shape[0]) if sw is None else sw)
    ref_obj, W = qp_margin_reference(X, Y, Cs, 1.0 if fit_intercept else -1.0, normalize)
    assert est.converged_
    assert est.objective_ == pytest.approx(ref_obj, rel=1e-6)
    assert est.gap_ <= 1e-6 * abs(est.objective_)
    np.testing.assert_allclose(est.coef_, W[:4].T, atol=1e-4 * max(1.0, np.abs(W).max()))
    if fit_intercept:
        np.testing.assert_allclose(est.intercept_, W[4], atol=1e-4 * max(1.0, np.abs(W).max()))


def lse_primal(est, X, Y, Cs, normalize):
    """1/2||w||^2 + sum_i C_i sum_y max(0, Delta + f(y) - f(y_i)) by enumerating all labels."""
    S = est.decision_function(X)
    K = Y.shape[1]
    labels = all_labels(K)
    obj = 0.5 * (np.sum(est.coef_ ** 2) + np.sum((est.intercept_ / est.intercept_scaling) ** 2
                                                   if est.fit_intercept else 0.0))
    for i in range(X.shape[0]):
        m = labels @ S[i] - Y[i] @ S[i]
        loss = (labels != Y[i]).sum(axis=1) / (K if normalize else 1)
        obj += Cs[i] * np.maximum(0.0, m + loss).sum()
    return obj


def qp_lse_reference(X, Y, Cs, bias):
    """min 1/2||w||^2 + sum_i C_i sum_{y != y_i} xi_iy, xi >= 0, xi_iy >= Delta + w . (phi(y) - phi(y_i))."""
    D = dense_rows(X, bias)
    n, p = D.shape
    K = Y.shape[1]
    nw = p * K
    labels = all_labels(K)
    pairs = [(i, y) for i in range(n) for y in labels if (y != Y[i]).any()]
    ns = len(pairs)
    A = np.zeros((2 * ns, nw + ns))
    b = np.zeros(2 * ns)
    c = np.zeros(nw + ns)
    for s, (i, y) in enumerate(pairs):
        A[s, :nw] = phi(D[i], Y[i]) - phi(D[i], y)
        A[s, nw + s] = 1.0
        b[s] = (y != Y[i]).sum()
        A[ns + s, nw + s] = 1.0
        c[nw + s] = Cs[i]
    res = minimize(lambda z: 0.5 * z[:nw] @ z[:nw] + c @ z, np.concatenate([np.zeros(nw), np.full(ns, K)]),
                   jac=lambda z: np.concatenate([z[:nw], np.zeros(ns)]) + c, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda z: A @ z - b, "jac": lambda z: A}],
                   options={"ftol": 1e-12, "maxiter": 5000})
    assert res.status in (0, 8), res.message
    return res.fun


def test_lse_sdcd_optimum_equals_independent_qp():
    X, Y = random_multilabel(n=8, d=3, K=3, seed=5)
    est = MultiLabelSSVM(C=0.3, loss="lse", solver=SDCD(exact_violators=True), tol=1e-14, max_iter=100000,
                         random_state=0)
    est.fit(X, Y)
    assert est.converged_ and est._solver_name == "sdcd"
    ref = qp_lse_reference(X, Y, np.full(8, 0.3), 1.0)
    assert lse_primal(est, X, Y, np.full(8, 0.3), False) == pytest.approx(ref, rel=1e-6)
    assert est.dual_objective_ == pytest.approx(ref, rel=1e-6)


@pytest.fixture(scope="module")
def scene():
    X, Y = load_svmlight_file(DATA / "scene_train.svm.gz")
    Xt, Yt = load_svmlight_file(DATA / "scene_test.svm.gz", n_features=X.shape[1])
    return X, Y, Xt, Yt


def test_margin_problem_is_binary_relevance_hinge_svm(scene):
    """The margin-rescaled Hamming problem decomposes: max_y sum_k [...] = sum_k max(0, 1 - y~_k s_k),
    i.e. K independent L1-loss SVMs with a regularised bias: LIBLINEAR -s 3 -B 1 per label."""
    from sklearn.svm import LinearSVC
    X, Y, _, _ = scene
    X, Y = X[::6], Y[::6].toarray()  # the file is ordered by label set
    C = 0.2
    est = MultiLabelSSVM(C=C, tol=1e-7, max_iter=100000).fit(X, Y)
    ref_obj = 0.0
    for k in range(Y.shape[1]):
        svc = LinearSVC(loss="hinge", C=C, tol=1e-10, max_iter=1000000, intercept_scaling=1.0).fit(X, Y[:, k])
        w = np.concatenate([svc.coef_.ravel(), svc.intercept_])
        ref_obj += 0.5 * w @ w + C * np.maximum(0.0, 1 - (2 * Y[:, k] - 1) * svc.decision_function(X)).sum()
        np.testing.assert_allclose(est.coef_[k], svc.coef_.ravel(), atol=1e-3)
    assert est.objective_ == pytest.approx(ref_obj, rel=1e-6)


def test_scene_accuracy(scene):
    X, Y, Xt, Yt = scene
    est = MultiLabelSSVM(C=0.1).fit(X, Y)
    assert est.converged_
    P = est.predict(Xt)
    assert sp.issparse(P) and P.shape == Yt.shape
    assert est.score(Xt, Yt) == pytest.approx(metrics.example_accuracy(Yt, P))
    # binary-relevance linear SVMs reach Hamming loss ~0.10-0.11 on scene
    assert est.score(Xt, Yt) > 0.5
    assert metrics.hamming_loss(Yt, P) < 0.115
    assert metrics.micro_f1(Yt, P) > 0.62 and metrics.subset_accuracy(Yt, P) > 0.45


# ---------------------------------------------------------------- estimator API

def test_label_formats_agree_and_set_the_output_format():
    X, Y = random_multilabel(n=40, d=6, K=4, seed=7)
    names = np.array(["beach", "field", "sky", "urban"])
    lists = [[names[k] for k in np.flatnonzero(row)] for row in Y]
    a = MultiLabelSSVM(C=1.0, random_state=0).fit(X, Y)
    b = MultiLabelSSVM(C=1.0, random_state=0).fit(X, sp.csr_matrix(Y))
    c = MultiLabelSSVM(C=1.0, random_state=0).fit(X.toarray(), lists)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.coef_, c.coef_)
    assert a.coef_.shape == (4, 6) and a.intercept_.shape == (4,)
    np.testing.assert_array_equal(a.classes_, np.arange(4))
    np.testing.assert_array_equal(c.classes_, names)
    Pa, Pb, Pc = a.predict(X), b.predict(X), c.predict(X)
    assert isinstance(Pa, np.ndarray) and Pa.dtype == np.int32 and sp.issparse(Pb) and sp.issparse(Pc)
    np.testing.assert_array_equal(Pa, Pb.toarray())
    np.testing.assert_array_equal(Pa, (a.decision_function(X) > 0))
    pl = c.predict_labels(X)
    assert pl == [tuple(names[np.flatnonzero(r)]) for r in Pa]
    assert a.score(X, Y) == b.score(X, sp.csr_matrix(Y)) == c.score(X, lists) == metrics.example_accuracy(Y, Pa)
    # labels the model has never seen count as missed
    more = [list(s) + ["desert"] for s in lists]
    inter = (Pa * Y).sum(axis=1)
    union = Pa.sum(axis=1) + Y.sum(axis=1) - inter + 1
    assert c.score(X, more) == pytest.approx(np.mean(inter / union))


def test_fit_input_validation():
    X, Y = random_multilabel(n=20, K=3, seed=1)
    with pytest.raises(ValueError, match="one row per row of X"):
        MultiLabelSSVM().fit(X, Y[:10])
    with pytest.raises(ValueError, match="only 0 and 1"):
        MultiLabelSSVM().fit(X, 3 * Y)
    with pytest.raises(ValueError, match="not a collection of labels"):
        MultiLabelSSVM().fit(X, [[1], 2] * 10)
    with pytest.raises(ValueError, match="Only binary classification is supported for a 1-D y"):
        MultiLabelSSVM().fit(X, list(range(20)))  # a 1-D y is one binary label since issue 13
    with pytest.raises(ValueError, match="at least one label"):
        MultiLabelSSVM().fit(X, [[] for _ in range(20)])
    with pytest.raises(ValueError, match="label columns but the model has"):
        MultiLabelSSVM().fit(X, Y).score(X, Y[:, :2])
    with pytest.raises(ValueError, match="The 'C' parameter of MultiLabelSSVM"):
        MultiLabelSSVM(C=0).fit(X, Y)
    with pytest.raises(ValueError, match="solver='sdm' with loss='slack' is not available"):
        MultiLabelSSVM(solver="sdm", loss="slack").fit(X, Y)
    with pytest.raises(ValueError, match="search='hull' or 'exact'"):
        MultiLabelSSVM(loss="microf1", solver=Pegasos(search="angular")).fit(X, Y)
    with pytest.raises(ValueError, match="not fitted"):
        MultiLabelSSVM().predict(X)


def test_clone_pickle_determinism_and_feature_width():
    from sklearn.base import clone
    X, Y = random_multilabel(n=60, d=8, K=4, seed=3)
    est = MultiLabelSSVM(C=0.3, loss="lse", normalize_loss=True, random_state=5)
    assert clone(est).get_params() == est.get_params()
    assert "loss='lse'" in repr(est) and "normalize_loss=True" in repr(est)
    a = est.fit(X, Y)
    b = MultiLabelSSVM(C=0.3, loss="lse", normalize_loss=True, random_state=5).fit(X, Y)
    assert np.array_equal(a.coef_, b.coef_) and a.n_iter_ == b.n_iter_
    back = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(back.predict(X), a.predict(X))
    # another width is refused (scikit-learn's rule since issue 13); match_columns gives LIBLINEAR's
    from ssvmlinear.utils import match_columns
    wider = sp.hstack([X, sp.random(60, 3, density=0.5, random_state=1)]).tocsr()
    with pytest.raises(ValueError, match="expecting 8 features"):
        a.predict(wider)
    np.testing.assert_array_equal(a.predict(match_columns(wider, 8)), a.predict(X))
    np.testing.assert_allclose(a.decision_function(match_columns(X[:, :5], 8)),
                               np.asarray(X[:, :5] @ a.coef_[:, :5].T) + a.intercept_)


@pytest.mark.parametrize("solver, loss", [("sdcd", "lse"), ("cutting-plane", "margin"), ("cutting-plane", "lse")])
def test_other_solvers(solver, loss):
    X, Y = random_multilabel(n=60, d=6, K=4, seed=9)
    ref = MultiLabelSSVM(C=0.5, loss=loss, tol=1e-8, max_iter=100000,
                         solver=SDCD(exact_violators=True) if loss == "lse" else SDM()).fit(X, Y)
    # exact_violators: LSE over all 2^K labels (without it, the paper's reduced problem OP5)
    make = {"sdcd": SDCD, "cutting-plane": CuttingPlane}[solver]
    est = MultiLabelSSVM(C=0.5, solver=make(exact_violators=True), loss=loss, n_jobs=1).fit(X, Y)
    assert est.converged_
    if solver == "cutting-plane":
        est2 = MultiLabelSSVM(C=0.5, solver=make(exact_violators=True), loss=loss, n_jobs=2).fit(X, Y)
        np.testing.assert_array_equal(est.coef_, est2.coef_)  # identical for any n_jobs
    # cutting plane (svm_struct's rule): primal within tol * sum_i C_i of the optimum
    slack = 0.1 * 0.5 * 60 if solver == "cutting-plane" else 1e-3 * abs(ref.dual_objective_)
    if loss == "margin":
        assert ref.objective_ <= est.objective_ <= ref.objective_ + slack
    else:
        opt = lse_primal(ref, X, Y, np.full(60, 0.5), False)
        assert opt == pytest.approx(ref.dual_objective_, rel=1e-5)
        assert opt - 1e-6 <= lse_primal(est, X, Y, np.full(60, 0.5), False) <= opt + slack
    assert np.mean(est.predict(X) == ref.predict(X)) > 0.9


def test_pegasos_reaches_sdm_objective_and_trains_surrogates():
    X, Y = random_multilabel(n=60, d=6, K=4, seed=9)
    sdm = MultiLabelSSVM(C=0.1, tol=1e-6, max_iter=5000).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        peg = MultiLabelSSVM(C=0.1, solver="pegasos", max_iter=300, tol=1e-12, random_state=0).fit(X, Y)
        assert sdm.objective_ * (1 - 1e-6) <= peg.objective_ <= sdm.objective_ * 1.01
        slack = MultiLabelSSVM(C=0.1, loss="slack", solver=Pegasos(search="exact"), max_iter=60, tol=1e-12,
                               random_state=0)
        slack.fit(X, Y)
    assert slack._solver_name == "pegasos" and np.isfinite(slack.objective_)
    assert slack.score(X, Y) > 0.6


def test_sample_weight_equals_repeated_examples():
    X, Y = random_multilabel(n=30, d=5, K=3, seed=4)
    sw = np.ones(30)
    sw[:10] = 2.0
    rep = np.concatenate([np.arange(30), np.arange(10)])
    a = MultiLabelSSVM(tol=1e-9, max_iter=100000).fit(X, Y, sample_weight=sw)
    b = MultiLabelSSVM(tol=1e-9, max_iter=100000).fit(X[rep], Y[rep])
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-7)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-5)


def test_warm_start_convergence_warning_and_callback():
    X, Y = random_multilabel(n=80, d=8, K=4, seed=6)
    cold = MultiLabelSSVM(C=2.0, tol=1e-6, max_iter=100000).fit(X, Y)
    est = MultiLabelSSVM(C=0.5, tol=1e-6, max_iter=100000, warm_start=True).fit(X, Y)
    est.set_params(C=2.0).fit(X, Y)
    assert est.objective_ == pytest.approx(cold.objective_, rel=1e-6)
    est.fit(X, Y)  # restarts from the optimum
    assert est.converged_ and est.n_iter_ < cold.n_iter_ / 10
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        est = MultiLabelSSVM(tol=1e-12, max_iter=2).fit(X, Y)
    assert est.n_iter_ == 2 and not est.converged_
    calls = []

    def stop(e):
        calls.append(e)
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = MultiLabelSSVM(tol=1e-12, callback=stop).fit(X, Y)
    assert len(calls) == 1 and calls[0] is est and np.isfinite(est.objective_curve_[0])


# ---------------------------------------------------------------- model files and the CLI

from ssvmlinear.cli import train_main, predict_main  # noqa: E402


@pytest.mark.parametrize("labels", [None, ["ant", "bee", "cow"], [3, 10, 200]])
@pytest.mark.parametrize("fit_intercept, normalize", [(False, False), (True, True)])
def test_model_round_trip_is_exact(labels, fit_intercept, normalize, tmp_path):
    X, Y = random_multilabel(n=40, d=6, K=3, seed=8)
    target = Y if labels is None else [[labels[k] for k in np.flatnonzero(r)] for r in Y]
    est = MultiLabelSSVM(C=0.7, fit_intercept=fit_intercept, intercept_scaling=2.5, normalize_loss=normalize,
                         loss="lse").fit(X, target)
    save_model(est, tmp_path / "m")
    text = (tmp_path / "m").read_text()
    assert "structure multilabel" in text and f"normalize_loss {int(normalize)}" in text
    back = load_model(tmp_path / "m")
    assert isinstance(back, MultiLabelSSVM) and back.normalize_loss == normalize and back.loss == "lse"
    assert np.array_equal(back.classes_, est.classes_) and back.classes_.dtype.kind == est.classes_.dtype.kind
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.intercept_, est.intercept_)
    assert back.predict_labels(X) == est.predict_labels(X)
    save_model(back, tmp_path / "m2")
    assert (tmp_path / "m2").read_text() == text


@pytest.fixture(scope="module")
def scene_files(tmp_path_factory, scene):
    X, Y, Xt, Yt = scene
    d = tmp_path_factory.mktemp("scene")
    tr, te = d / "train.svm", d / "test.svm"
    dump_svmlight_file(X[::3], Y[::3], tr)        # every third example: all label sets, fast
    Yt = Yt[::4].toarray()
    Yt[:5] = 0                                    # some empty true label sets
    dump_svmlight_file(Xt[::4], Yt, te)
    return tr, te


@pytest.mark.parametrize("stype, solver, loss", [("0", "sdm", "margin"), ("1", "sdcd", "lse"),
                                                  ("2", "cutting-plane", "margin"), ("3", "cutting-plane", "lse")])
def test_cli_and_api_agree(scene_files, tmp_path, capsys, stype, solver, loss):
    from ssvmlinear.cli import multilabel_report
    tr, te = scene_files
    model, out = tmp_path / "scene.model", tmp_path / "pred"
    assert train_main(["-s", stype, "-c", "0.1", "-B", "1", "-q", str(tr), str(model)]) == 0
    assert predict_main([str(te), str(model), str(out)]) == 0
    printed = capsys.readouterr().out
    X, Y = load_svmlight_file(tr)
    Xt, Yt = load_svmlight_file(te, n_features=X.shape[1], kind="multilabel", n_labels=Y.shape[1])
    est = MultiLabelSSVM(C=0.1, solver=solver, loss=loss, fit_intercept=True, random_state=1).fit(X, Y)
    pred = est.predict_labels(Xt)
    lines = out.read_text().split("\n")[:-1]
    assert lines == [",".join(str(c) for c in p) for p in pred]
    P = est.predict(Xt)
    assert printed.strip().split("\n") == multilabel_report(Yt, P)
    assert f"Acc = {100 * est.score(Xt, Yt):g}% (example-based accuracy)" in printed
    assert f"Hamming loss = {metrics.hamming_loss(Yt, P):g}" in printed
    exact = int(np.sum((Yt != P).sum(axis=1) == 0))
    assert f"Subset accuracy = {100.0 * exact / Yt.shape[0]:g}% ({exact}/{Yt.shape[0]})" in printed
    back = load_model(model)
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.intercept_, est.intercept_)


def test_cli_predict_with_labels_the_model_does_not_know(tmp_path, capsys):
    X, Y = random_multilabel(n=30, d=5, K=3, seed=2)
    dump_svmlight_file(X, Y, tmp_path / "tr")
    Yt = np.hstack([Y, np.ones((30, 1), dtype=np.int32)])   # label 3 in every test example
    dump_svmlight_file(X, Yt, tmp_path / "te")
    assert train_main(["-q", "-B", "1", str(tmp_path / "tr"), str(tmp_path / "m")]) == 0
    assert predict_main([str(tmp_path / "te"), str(tmp_path / "m"), str(tmp_path / "p")]) == 0
    printed = capsys.readouterr().out
    P = load_model(tmp_path / "m").predict(X).toarray()
    P4 = np.hstack([P, np.zeros((30, 1), dtype=np.int32)])
    assert "Subset accuracy = 0% (0/30)" in printed
    assert f"Hamming loss = {metrics.hamming_loss(Yt, P4):g}" in printed


def test_cli_forced_multilabel_and_cross_validation(tmp_path, capsys):
    from ssvmlinear.cli import multilabel_report
    from ssvmlinear.model_selection import cross_val_predict
    X, Y = random_multilabel(n=60, d=5, K=3, seed=3)
    Y[:, 1:] = 0
    Y[:, 0] = 1                       # every line holds exactly one label: auto-detected multiclass
    Y[::2, 0], Y[::2, 2] = 0, 1
    dump_svmlight_file(X, Y, tmp_path / "tr")
    assert train_main(["-q", "-t", "multilabel", str(tmp_path / "tr"), str(tmp_path / "m")]) == 0
    assert isinstance(load_model(tmp_path / "m"), MultiLabelSSVM)
    capsys.readouterr()
    assert train_main(["-q", "-t", "multilabel", "-v", "3", "-n", "2", str(tmp_path / "tr")]) == 0
    printed = capsys.readouterr().out.strip().split("\n")
    Xf, Yf = load_svmlight_file(tmp_path / "tr", kind="multilabel")
    Yf = Yf[:, np.unique(Yf.indices)]   # the CLI trains over the labels that occur (label 1 does not)
    pred = cross_val_predict(MultiLabelSSVM(fit_intercept=False, random_state=1), Xf, Yf, 3, seed=1)
    assert sp.issparse(pred) and pred.shape == Yf.shape
    assert printed == ["Cross Validation " + line for line in multilabel_report(Yf, pred)]


def test_microf1_surrogate_trains_with_pegasos_and_cutting_plane():
    """The Micro-F1 surrogate (thesis 3.3.3) through the multi-label oracles: Pegasos with the
    exact and hull searches reach the same objective (psi is linear-fractional: the hull optimum
    has the value of a vertex, though ties along an edge may pick a different point), and the
    cutting plane reaches at most Pegasos' objective."""
    import warnings
    from ssvmlinear.exceptions import ConvergenceWarning
    from ssvmlinear.metrics import micro_f1
    X, Y = random_multilabel(n=60, d=5, K=4, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ex = MultiLabelSSVM(C=0.5, loss="microf1", solver=Pegasos(search="exact"), max_iter=100, tol=1e-12,
                            random_state=0).fit(X, Y)
        hu = MultiLabelSSVM(C=0.5, loss="microf1", solver=Pegasos(search="hull"), max_iter=100, tol=1e-12,
                            random_state=0).fit(X, Y)
        cp = MultiLabelSSVM(C=0.5, solver=CuttingPlane(search="exact"), loss="microf1",
                            tol=1e-4, max_iter=3000).fit(X, Y)
    assert hu.objective_ == pytest.approx(ex.objective_, rel=0.01)
    assert cp.objective_ <= ex.objective_ + 1e-6
    assert ex.objective_ <= cp.objective_ * 1.05
    assert micro_f1(Y, ex.predict(X)) > 0.5


@pytest.mark.parametrize("kind", ["binary", "int8", "bool"])
def test_model_round_trip_keeps_the_output_kind(kind, tmp_path):
    """A fit on a 1-D binary y (one weight column) or on a dense Y predicts the same kind after a
    save and a load."""
    X, Y = random_multilabel(n=40, d=6, K=3, seed=8)
    target = np.where(Y[:, 0] > 0, "yes", "no") if kind == "binary" else Y.astype(kind)
    est = MultiLabelSSVM(C=0.7).fit(X, target)
    save_model(est, tmp_path / "m")
    assert f"output {kind}\n" in (tmp_path / "m").read_text()
    back = load_model(tmp_path / "m")
    pred, ref = back.predict(X), est.predict(X)
    assert type(pred) is type(ref) and pred.dtype == ref.dtype and np.array_equal(pred, ref)
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    save_model(back, tmp_path / "m2")
    assert (tmp_path / "m2").read_text() == (tmp_path / "m").read_text()


def test_label_columns_that_never_occur_warn(tmp_path):
    """load_svmlight_file numbers Y's columns by label value: labels 1..3 give an empty column 0,
    trained as a label that is never present. fit says so; the slice it suggests trains what
    ssvm-train trains (the labels that occur)."""
    path = tmp_path / "ml.svm"
    path.write_text("1,2 1:1\n3 2:1\n2 1:0.5 3:1\n1,3 2:1 3:1\n2 3:1\n")
    X, Y = load_svmlight_file(path)
    assert Y.shape[1] == 4
    with pytest.warns(UserWarning, match=r"1 of the 4 label columns never occur in Y \(columns 0\)"):
        full = MultiLabelSSVM(C=1.0).fit(X, Y)
    cols = np.unique(Y.indices)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        occur = MultiLabelSSVM(C=1.0).fit(X, Y[:, cols])
        lists = MultiLabelSSVM(C=1.0).fit(X, [[1, 2], [3], [2], [1, 3], [2]])
    assert np.array_equal(cols[occur.classes_], lists.classes_)
    np.testing.assert_allclose(occur.coef_, lists.coef_, atol=1e-8)
    assert not full.predict(X).toarray()[:, 0].any()
