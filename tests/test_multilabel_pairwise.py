"""Pairwise multi-label on a forest of label pairs (PairwiseMultiLabelStructure): every kernel
method against brute-force enumeration of all 2^K labels with an explicit joint feature map, on
random forests; the forest's validation."""
import itertools
import pickle

import numpy as np
import pytest

from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.pairwise_multilabel import PairwiseMultiLabelStructure, forest_of
from ssvmlinear.solvers import SDCD, CuttingPlane, Pegasos

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
    with pytest.raises(ValueError, match=r"edge 1 \(1, 0\) repeats edge 0"):
        forest_of([(0, 1), (1, 0)], 3)
    X, Y = random_multilabel(n=6, K=4, seed=3)
    s = PairwiseMultiLabelStructure(CSRDataset(X, 1.0), Y, [(0, 1), (1, 2)], False)
    t = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(t.edge_list(), [(0, 1), (1, 2)])
    w = np.random.default_rng(0).standard_normal(s.n_weights)
    for i in range(6):
        a, b = s.py_oracle(w, i, 1.0), t.py_oracle(w, i, 1.0)
        assert np.array_equal(a[0], b[0]) and a[1:] == b[1:]


# ---------------------------------------------------------------- solvers and estimator

import warnings

import scipy.sparse as sp
from scipy.optimize import minimize

from ssvmlinear import MultiLabelSSVM, ConvergenceWarning, save_model, load_model, load_svmlight_file
from ssvmlinear.models.multilabel import chow_liu_edges

from conftest import DATA

EDGES = np.array([(0, 1), (2, 1)])


def feature_rows(X, Y, edges, bias):
    """Per example: (phi(y_i) - phi(y), Delta) for every label y."""
    D = dense_rows(X, bias)
    labels = all_labels(Y.shape[1])
    return [[(phi(D[i], Y[i], edges) - phi(D[i], y, edges), float((y != Y[i]).sum())) for y in labels]
            for i in range(D.shape[0])]


def qp_reference(rows, Cs, lse):
    """Margin: min 1/2||w||^2 + sum_i C_i xi_i, xi_i >= Delta - w.dphi for every label; LSE: one
    slack per (example, label), xi >= 0 (SLSQP on the explicit constraints)."""
    nw = rows[0][0][0].shape[0]
    cons, rhs, cost = [], [], []
    for i, ex in enumerate(rows):
        if not lse:
            cost.append(Cs[i])
        for d, delta in ex:
            if lse and delta == 0:
                continue
            if lse:
                cost.append(Cs[i])
            cons.append((d, len(cost) - 1))
            rhs.append(delta)
    ns = len(cost)
    A = np.zeros((len(cons) + (ns if lse else 0), nw + ns))
    b = np.zeros(A.shape[0])
    for r, (d, s) in enumerate(cons):
        A[r, :nw] = d
        A[r, nw + s] = 1.0
        b[r] = rhs[r]
    if lse:
        A[len(cons):, nw:] = np.eye(ns)
    c = np.concatenate([np.zeros(nw), cost])
    res = minimize(lambda z: 0.5 * z[:nw] @ z[:nw] + c @ z, np.concatenate([np.zeros(nw), np.full(ns, 5.0)]),
                   jac=lambda z: np.concatenate([z[:nw], np.zeros(ns)]) + c, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda z: A @ z - b, "jac": lambda z: A}],
                   options={"ftol": 1e-12, "maxiter": 5000})
    assert res.status in (0, 8), res.message
    return res.fun, res.x[:nw]


def primal(est, rows, Cs, lse):
    w = est._weight_vector()
    obj = 0.5 * w @ w
    for i, ex in enumerate(rows):
        h = np.array([delta - d @ w for d, delta in ex])
        obj += Cs[i] * (np.maximum(h, 0.0).sum() if lse else h.max())
    return obj


@pytest.mark.parametrize("seed, fit_intercept", [(0, False), (1, True)])
def test_sdm_optimum_equals_qp(seed, fit_intercept):
    X, Y = random_multilabel(n=12, d=3, K=3, seed=seed)
    C = [0.5, 2.0][seed]
    est = MultiLabelSSVM(C=C, edges=EDGES, tol=1e-10, max_iter=100000, fit_intercept=fit_intercept,
                         random_state=seed).fit(X, Y)
    rows = feature_rows(X, Y, EDGES, 1.0 if fit_intercept else -1.0)
    ref, w = qp_reference(rows, np.full(12, C), lse=False)
    assert est.converged_ and est.objective_ == pytest.approx(ref, rel=1e-6)
    assert primal(est, rows, np.full(12, C), False) == pytest.approx(ref, rel=1e-6)
    np.testing.assert_allclose(est._weight_vector(), w, atol=1e-4 * max(1.0, np.abs(w).max()))
    assert est.pairwise_.shape == (2, 2, 2) and est.edges_.tolist() == EDGES.tolist()


def test_lse_sdcd_optimum_equals_qp():
    X, Y = random_multilabel(n=8, d=3, K=3, seed=5)
    est = MultiLabelSSVM(C=0.3, loss="lse", edges=EDGES, solver=SDCD(exact_violators=True), tol=1e-14,
                         max_iter=100000, random_state=0).fit(X, Y)
    rows = feature_rows(X, Y, EDGES, 1.0)
    ref, _ = qp_reference(rows, np.full(8, 0.3), lse=True)
    assert est.converged_
    assert primal(est, rows, np.full(8, 0.3), True) == pytest.approx(ref, rel=1e-6)
    assert est.dual_objective_ == pytest.approx(ref, rel=1e-6)


@pytest.mark.parametrize("solver, loss", [("cutting-plane", "margin"), ("cutting-plane", "lse"), ("pegasos", "margin")])
def test_other_solvers_reach_the_optimum(solver, loss):
    X, Y = random_multilabel(n=40, d=5, K=4, seed=9)
    edges = np.array([(0, 1), (1, 2), (1, 3)])
    rows = feature_rows(X, Y, edges, 1.0)
    Cs = np.full(40, 0.5)
    # exact_violators: LSE over all 2^K labels (the default solvers: SDM for margin, LSE-SDCD for lse)
    ref = MultiLabelSSVM(C=0.5, loss=loss, edges=edges, tol=1e-9, max_iter=100000,
                         solver=SDCD(exact_violators=True) if loss == "lse" else None).fit(X, Y)
    opt = primal(ref, rows, Cs, loss == "lse")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        solver_obj = CuttingPlane(exact_violators=True) if solver == "cutting-plane" else Pegasos()
        est = MultiLabelSSVM(C=0.5, solver=solver_obj, loss=loss, edges=edges, max_iter=400,
                             tol=1e-12 if solver == "pegasos" else None, random_state=0).fit(X, Y)
    got = primal(est, rows, Cs, loss == "lse")
    slack = 0.1 * Cs.sum() if solver == "cutting-plane" else 0.01 * opt
    assert opt * (1 - 1e-6) <= got <= opt + slack
    if loss == "margin":
        assert ref.objective_ == pytest.approx(opt, rel=1e-9)


@pytest.mark.parametrize("loss, search", [("slack", "exact"), ("slack", "hull-integral"), ("beta:0.5", "angular"),
                                          ("generalized:0,0.5", "binary"), ("probloss", "bisecting"),
                                          ("logloss", "hull"), ("microf1", "exact"), ("microf1", "hull")])
def test_pegasos_surrogates_train_the_pairwise_model(loss, search):
    """Every surrogate and search runs on the forest; the objective the solver reports is the
    surrogate's value over all 2^K labels (recomputed here by enumeration for slack rescaling)."""
    X, Y = random_multilabel(n=40, d=5, K=4, seed=3)
    edges = np.array([(0, 1), (1, 2), (1, 3)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = MultiLabelSSVM(C=0.5, loss=loss, solver=Pegasos(search=search), edges=edges, max_iter=40,
                             random_state=0).fit(X, Y)
    assert np.isfinite(est.objective_) and est.score(X, Y) > 0.5
    if loss == "slack":
        rows = feature_rows(X, Y, edges, 1.0)
        w = est._weight_vector()
        obj = 0.5 * w @ w + 0.5 * sum(max(delta * max(0.0, 1.0 - d @ w) for d, delta in ex) for ex in rows)
        assert est.objective_ == pytest.approx(obj, rel=1e-9)


def test_predict_is_the_exact_argmax_and_models_round_trip(tmp_path):
    X, Y = random_multilabel(n=30, d=5, K=4, seed=2)
    est = MultiLabelSSVM(C=1.0, edges="chow-liu").fit(X, Y)
    assert est.edges_.shape[1] == 2 and len(est.edges_) >= 1
    P = est.predict(X)
    S = est.decision_function(X)
    labels = all_labels(4)
    for i in range(30):
        f = labels @ S[i] + np.array([sum(est.pairwise_[e, y[a], y[b]] for e, (a, b) in enumerate(est.edges_))
                                      for y in labels])
        assert f[int(np.flatnonzero((labels == P[i]).all(axis=1))[0])] == pytest.approx(f.max(), abs=1e-12)
    path = tmp_path / "m.model"
    save_model(est, path)
    back = load_model(path)
    np.testing.assert_array_equal(back.edges_, est.edges_)
    np.testing.assert_array_equal(back.pairwise_, est.pairwise_)
    np.testing.assert_array_equal(back.predict(X), P)
    text = path.read_text().replace("edges " + " ".join(f"{a}:{b}" for a, b in est.edges_.tolist()), "edges 0:1 1:0")
    (tmp_path / "bad.model").write_text(text)
    with pytest.raises(ValueError, match=r"bad.model:\d+: edges: edge 1 \(1, 0\) repeats edge 0"):
        load_model(tmp_path / "bad.model")
    # a cycle is no error: such graphs train with the LP relaxation (tests/test_relaxed_labels.py)
    cyc = MultiLabelSSVM(edges=[(0, 1), (1, 2), (2, 0)], max_iter=20).fit(X, Y)
    assert cyc.pairwise_.shape == (3, 2, 2)
    with pytest.raises(ValueError, match="outside 0..3"):
        MultiLabelSSVM(edges=[(0, 4)]).fit(X, Y)


def test_chow_liu_is_the_maximum_mutual_information_tree():
    from sklearn.metrics import mutual_info_score
    from scipy.sparse.csgraph import minimum_spanning_tree
    X, Y = load_svmlight_file(DATA / "scene_train.svm.gz")
    Y = Y[:, np.unique(Y.indices)].toarray()
    K = Y.shape[1]
    mi = np.array([[mutual_info_score(Y[:, a], Y[:, b]) if a != b else 0.0 for b in range(K)] for a in range(K)])
    ref = np.vstack(minimum_spanning_tree(sp.csr_matrix(-mi)).nonzero()).T
    ref.sort(axis=1)
    np.testing.assert_array_equal(chow_liu_edges(Y), ref)
    assert len(ref) == K - 1


class _Run:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def test_cli_trains_and_predicts_with_edges(tmp_path, capsys):
    from ssvmlinear.cli import train_main, predict_main
    train, test = str(DATA / "scene_train.svm.gz"), str(DATA / "scene_test.svm.gz")

    def run(cmd, *args):
        rc = (train_main if cmd == "train" else predict_main)(list(args))
        out = capsys.readouterr()
        return _Run(rc, out.out, out.err)
    model = str(tmp_path / "s.model")
    r = run("train", "-q", "-c", "0.1", "-E", "chow-liu", train, model)
    assert r.returncode == 0, r.stderr
    assert any(line.startswith("edges ") for line in open(model))
    r = run("predict", test, model, str(tmp_path / "s.pred"))
    assert r.returncode == 0 and "Subset accuracy" in r.stdout
    (tmp_path / "pairs.txt").write_text("# label pairs\n0 3\n2 5\n")
    r = run("train", "-q", "-E", str(tmp_path / "pairs.txt"), train, model)
    assert r.returncode == 0, r.stderr
    assert "edges 0:3 2:5" in open(model).read()
    (tmp_path / "bad.txt").write_text("0 3\n3 0\n")
    r = run("train", "-q", "-E", str(tmp_path / "bad.txt"), train, model)
    assert r.returncode == 1 and "bad.txt:2:" in r.stderr
    r = run("train", "-q", "-E", "chow-liu", str(DATA / "ocr_letters_train.svm.gz"), model)
    assert r.returncode == 1 and "-E applies to -t multilabel" in r.stderr
