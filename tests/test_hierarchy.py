"""Hierarchies: parsing and its errors; alpha (6.6, rho = 2) against a generic convex solver; the
hierarchy structure's oracles, losses, Gram and updates against enumeration of all leaves with an
explicit feature map (trees and DAGs, HSVM and NHSVM, every task loss); solvers' optima against a
QP reference and NHSVM with leaf-only alpha against the flat multiclass model."""
import warnings
import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.multiclass import MulticlassStructure
from ssvmlinear.hierarchy import Hierarchy, alpha_rho2, hierarchy_structure, read_hierarchy
from ssvmlinear.solvers import SDCD, SDM, CuttingPlane, Pegasos, solve

from test_multilabel_pairwise import qp_reference


def random_tree(rng, M, id_scale=1000):
    ids = rng.choice(np.arange(1, id_scale * M), size=M, replace=False)
    parents = [ids[rng.integers(0, k)] for k in range(1, M)]
    return Hierarchy.from_edges(parents, ids[1:])


def random_dag(rng, M):
    """A random tree plus second parents: an inner node earlier in the topological order (never a
    descendant) for some nodes; at least one."""
    h = random_tree(rng, M)
    ps, cs = list(h.edges()[0]), list(h.edges()[1])
    inner = [u for u in range(h.n_nodes) if h.children[u].size]
    added = 0
    while added < max(1, M // 3):
        v = int(rng.integers(1, h.n_nodes))
        u = int(rng.choice([q for q in inner if q < v] or [0]))
        if u < v and u not in h.parents[v] and h.children[u].size:
            ps.append(h.ids[u]), cs.append(h.ids[v])
            added += 1
    return Hierarchy.from_edges(ps, cs)


def test_parse_and_errors(tmp_path):
    f = tmp_path / "h.txt"
    f.write_text("# a tree\n1 2\n1 3  # comment\n\n3 40\n3 50\n7 8\n")
    h = read_hierarchy(f)
    assert h.n_nodes == 8 and h.ids[0] == -1            # two roots (1, 7): an implicit root
    assert sorted(h.ids[h.leaves].tolist()) == [2, 8, 40, 50] and h.is_tree
    assert h.ids[h.ancestors(h.leaves[h.leaf_index([40])[0]])].tolist() == [-1, 1, 3, 40]
    for text, msg in [("1 2\n2 x\n", r"h2.txt:2: node id 'x' is not an integer"),
                      ("1 2\n2 2\n", r"h2.txt:2: node 2 is its own parent"),
                      ("1 2 3\n", r"h2.txt:1: expected 'parent child'"),
                      ("0 1\n1 2\n2 3\n3 1\n", r"cycle: 1 -> 2 -> 3 -> 1"),
                      ("# nothing\n", "no 'parent child' line")]:
        g = tmp_path / "h2.txt"
        g.write_text(text)
        with pytest.raises(ValueError, match=msg):
            read_hierarchy(g)
    with pytest.raises(ValueError, match="label 3 .* is an inner node"):
        h.leaf_index([2, 3])
    with pytest.raises(ValueError, match="label 99 .* is not a node"):
        h.leaf_index([99])
    d = Hierarchy.from_edges([1, 1, 2, 3], [2, 3, 4, 4])
    assert not d.is_tree and d.ids[d.ancestors(d.leaves[0])].tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize("seed", range(6))
def test_alpha_rho2_equals_a_convex_solver(seed):
    rng = np.random.default_rng(seed)
    h = random_tree(rng, int(rng.integers(2, 25)))
    a = alpha_rho2(h)
    A = np.zeros((h.n_leaves, h.n_nodes))
    for k, v in enumerate(h.leaves):
        A[k, h.ancestors(v)] = 1.0
    res = minimize(lambda x: x @ x, np.full(h.n_nodes, 0.1), jac=lambda x: 2 * x, method="SLSQP",
                   bounds=[(0, None)] * h.n_nodes,
                   constraints=[{"type": "eq", "fun": lambda x: A @ x - 1, "jac": lambda x: A}],
                   options={"ftol": 1e-15, "maxiter": 1000})
    assert res.success
    np.testing.assert_allclose(A @ a, 1.0, atol=1e-12)
    assert a @ a == pytest.approx(res.fun, abs=1e-7)
    np.testing.assert_allclose(a, res.x, atol=1e-6)


def explicit(h, coef, X, bias):
    """phi(x, l) = sum_{n in A(l)} c_n e_n (x) x, flattened feature-major like the kernel."""
    D = X.toarray()
    if bias > 0:
        D = np.hstack([D, np.full((D.shape[0], 1), bias)])
    lam = np.zeros((h.n_leaves, h.n_nodes))
    for k, v in enumerate(h.leaves):
        lam[k, h.ancestors(v)] = coef[h.ancestors(v)]
    return D, lam


def task(lam_y, lam_t, kind, coef_unit):
    diff = (lam_y != 0) != (lam_t != 0)
    if kind == "hamming":
        return float(diff.sum())
    sq = float(np.sum(coef_unit[diff] ** 2))
    return np.sqrt(sq) if kind == "normalized" else (1.0 if diff.any() else 0.0)   # normalized-margin, zero-one


@pytest.mark.parametrize("shape", ["tree", "dag"])
@pytest.mark.parametrize("model", ["hsvm", "nhsvm"])
@pytest.mark.parametrize("kind", ["hamming", "normalized", "normalized-margin", "zero-one"])
def test_structure_matches_enumeration(shape, model, kind):
    rng = np.random.default_rng(zlib.crc32(f"{shape}{model}{kind}".encode()))
    for trial in range(3):
        h = random_tree(rng, 9) if shape == "tree" else random_dag(rng, 9)
        assert h.is_tree == (shape == "tree")
        if model == "hsvm":
            coef = np.ones(h.n_nodes)
        else:
            coef = np.sqrt(alpha_rho2(h)) if h.is_tree else rng.uniform(0.2, 1.0, h.n_nodes)
        n, d = 5, 4
        X = sp.random(n, d, density=0.6, format="csr", random_state=int(rng.integers(1 << 30)))
        y = rng.integers(0, h.n_leaves, size=n).astype(np.int32)
        st = hierarchy_structure(CSRDataset(X, 1.0), y, h, coef, kind)
        D, lam = explicit(h, coef, X, 1.0)
        M, L = h.n_nodes, h.n_leaves
        for _ in range(2):
            w = rng.standard_normal(st.n_weights)
            W = w.reshape(D.shape[1], M)           # feature-major
            for i in range(n):
                t = y[i]
                scores = lam @ (W.T @ D[i])       # f(l) for every leaf
                loss = np.array([task(lam[l], lam[t], kind, coef) for l in range(L)])
                norm = np.array([np.linalg.norm(lam[l] - lam[t]) if (kind == "normalized-margin" and l != t)
                                 else 1.0 for l in range(L)])
                m = (scores - scores[t]) / norm
                labels = np.arange(L, dtype=np.int32)
                np.testing.assert_allclose(st.py_margins(w, i, labels), m, atol=1e-10)
                for l in range(L):
                    assert st.py_loss(i, labels[l:l + 1]) == pytest.approx(loss[l], abs=1e-12)
                for lamb in (0.0, 1.0, 3.0):
                    vals = m + lamb * loss
                    lab, mo, do = st.py_oracle(w, i, lamb)
                    assert vals[lab[0]] == pytest.approx(vals.max(), abs=1e-10)
                    assert mo == pytest.approx(m[lab[0]], abs=1e-10) and do == pytest.approx(loss[lab[0]])
                    for k in (1, 3, L + 2):
                        kl, kv = st.py_kbest(w, i, lamb, k)
                        np.testing.assert_allclose(kv, np.sort(vals)[::-1][:k], atol=1e-10)
                        np.testing.assert_allclose(vals[kl[:, 0]], kv, atol=1e-10)
                        assert len(set(kl[:, 0].tolist())) == len(kl)
                best, blabels, losses = st.py_loss_indexed_oracle(w, i)
                uniq = np.unique(np.round(loss, 10))
                assert len(losses) == len(uniq) and losses[0] == 0.0
                np.testing.assert_allclose(losses, uniq, atol=1e-10)
                for lev, g in enumerate(losses):
                    sel = np.abs(loss - g) < 1e-9
                    assert best[lev] == pytest.approx(m[sel].max(), abs=1e-10)
                    assert sel[blabels[lev, 0]] and m[blabels[lev, 0]] == pytest.approx(best[lev], abs=1e-10)
                # Gram and update against dphi = (phi(t) - phi(l)) / norm
                dphi = [np.outer(D[i], lam[t] - lam[l]).ravel() / norm[l] for l in range(L)]
                for a in range(L):
                    for b in range(L):
                        assert st.py_gram(i, labels[a:a + 1], labels[b:b + 1]) == pytest.approx(
                            dphi[a] @ dphi[b], abs=1e-10)
                    w2 = w.copy()
                    st.py_update(w2, i, 0.3, labels[a:a + 1])
                    np.testing.assert_allclose(w2, w + 0.3 * dphi[a], atol=1e-12)


def problem(seed, n=14, model="hsvm", kind="hamming"):
    rng = np.random.default_rng(seed)
    h = random_tree(rng, 7)
    coef = np.ones(h.n_nodes) if model == "hsvm" else np.sqrt(alpha_rho2(h))
    X = sp.random(n, 3, density=0.7, format="csr", random_state=seed)
    y = rng.integers(0, h.n_leaves, size=n).astype(np.int32)
    st = hierarchy_structure(CSRDataset(X, 1.0), y, h, coef, kind)
    D, lam = explicit(h, coef, X, 1.0)
    rows = []
    for i in range(n):
        t = y[i]
        ex = []
        for l in range(h.n_leaves):
            norm = np.linalg.norm(lam[l] - lam[t]) if (kind == "normalized-margin" and l != t) else 1.0
            ex.append((np.outer(D[i], lam[t] - lam[l]).ravel() / norm, st.py_loss(i, np.array([l], np.int32))))
        rows.append(ex)
    return st, rows


@pytest.mark.parametrize("model, kind", [("hsvm", "hamming"), ("nhsvm", "normalized"),
                                         ("nhsvm", "normalized-margin")])
def test_solvers_reach_the_qp_optimum(model, kind):
    st, rows = problem(3, model=model, kind=kind)
    Cs = np.full(st.n_examples, 0.7)
    ref, w_ref = qp_reference(rows, Cs, lse=False)

    def primal(w):
        return 0.5 * w @ w + sum(C * max(delta - d @ w for d, delta in ex) for C, ex in zip(Cs, rows))
    r = solve(SDM(), st, Cs, 1e-10, 100000, 0)
    assert r.primal == pytest.approx(ref, rel=1e-6) and primal(r.w) == pytest.approx(ref, rel=1e-6)
    r = solve(CuttingPlane(), st, Cs, 1e-9, 2000, 0)
    assert primal(r.w) == pytest.approx(ref, rel=1e-5)
    lse_ref, _ = qp_reference(rows, Cs, lse=True)
    r = solve(SDCD(exact_violators=True), st, Cs, 1e-13, 100000, 0, loss="lse")
    lse_primal = 0.5 * r.w @ r.w + sum(C * sum(max(0.0, delta - d @ r.w) for d, delta in ex)
                                       for C, ex in zip(Cs, rows))
    assert lse_primal == pytest.approx(lse_ref, rel=1e-6)


def test_nhsvm_with_leaf_alpha_is_the_flat_multiclass_model():
    """alpha = 1 on the leaves, 0 elsewhere: phi(x, l) = e_l (x) x, the flat model's, and the
    normalised error of two leaves is sqrt(2); since w = s u turns the loss s Delta into Delta at
    C / s, the NHSVM optimum at C is sqrt(2) times the flat (0/1 loss) optimum at C / sqrt(2)."""
    rng = np.random.default_rng(11)
    h = random_tree(rng, 12)
    coef = np.zeros(h.n_nodes)
    coef[h.leaves] = 1.0
    X = sp.random(40, 5, density=0.5, format="csr", random_state=1)
    y = rng.integers(0, h.n_leaves, size=40).astype(np.int32)
    st = hierarchy_structure(CSRDataset(X, 1.0), y, h, coef, "normalized")
    flat = MulticlassStructure(CSRDataset(X, 1.0), y, h.n_leaves)
    Cs = np.full(40, 0.5)
    a = solve(SDM(), st, Cs, 1e-11, 100000, 0)
    b = solve(SDM(), flat, Cs / np.sqrt(2.0), 1e-11, 100000, 0)
    W = a.w.reshape(6, h.n_nodes)
    inner = np.setdiff1d(np.arange(h.n_nodes), h.leaves)
    assert np.all(W[:, inner] == 0.0)
    np.testing.assert_allclose(W[:, h.leaves], np.sqrt(2.0) * b.w.reshape(6, h.n_leaves), atol=1e-6)
    assert a.primal == pytest.approx(2.0 * b.primal, rel=1e-8)


# ------------------------------------------------------------------ estimator, model files, CLI

def synthetic(seed=0, n=300, d=8):
    """A complete binary tree of depth 3 (ids 1..15), Gaussian node weights, label = the leaf of
    maximal path potential (choi-thesis 6.8.1's balanced set, small)."""
    rng = np.random.default_rng(seed)
    parents = [k // 2 for k in range(2, 16)]
    h = Hierarchy.from_edges(parents, list(range(2, 16)))
    Wn = rng.standard_normal((16, d))
    X = rng.standard_normal((n, d))
    pot = {1: X @ Wn[1]}
    for k in range(2, 16):
        pot[k] = pot[k // 2] + X @ Wn[k]
    leaves = np.arange(8, 16)
    y = leaves[np.argmax(np.stack([pot[k] for k in leaves], axis=1), axis=1)]
    return h, sp.csr_matrix(X), y


@pytest.mark.parametrize("model", ["nhsvm", "hsvm", "flat", "shared"])
def test_estimator_fits_predicts_and_round_trips(model, tmp_path):
    from ssvmlinear import HierarchicalSSVM, load_model, save_model
    h, X, y = synthetic()
    est = HierarchicalSSVM(h, model=model, C=1.0).fit(X[:200], y[:200])
    assert est.converged_ and est.coef_.shape == (15, 8) and est.score(X[200:], y[200:]) > 0.6
    S = est.decision_function(X)
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmax(S, axis=1)])
    save_model(est, tmp_path / "m")
    back = load_model(tmp_path / "m")
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    np.testing.assert_allclose(back.decision_function(X), S, atol=1e-12)
    assert back.model == model and np.array_equal(back.alpha_, est.alpha_)


def test_estimator_objective_is_the_structures_and_flat_equals_multiclass():
    from ssvmlinear import HierarchicalSSVM, MulticlassSSVM
    h, X, y = synthetic(1)
    a = HierarchicalSSVM(h, model="flat", C=0.5, tol=1e-7, max_iter=20000, fit_intercept=False).fit(X, y)
    b = MulticlassSSVM(C=0.5 / np.sqrt(2.0), tol=1e-7, max_iter=20000, fit_intercept=False).fit(X, y)
    leaves = [list(a.nodes_).index(c) for c in b.classes_]
    np.testing.assert_allclose(a.coef_[leaves], np.sqrt(2.0) * b.coef_, atol=1e-5)
    assert a.objective_ == pytest.approx(2.0 * b.objective_, rel=1e-6)


def test_bad_labels_and_cli(tmp_path, capsys):
    from ssvmlinear import HierarchicalSSVM, dump_svmlight_file
    from ssvmlinear.cli import predict_main, train_main
    h, X, y = synthetic(2)
    with pytest.raises(ValueError, match="label 3 .* is an inner node"):
        HierarchicalSSVM(h).fit(X[:4], np.array([8, 9, 3, 10]))
    hf = tmp_path / "tree.hier"
    hf.write_text("".join(f"{k // 2} {k}\n" for k in range(2, 16)))
    tr, te = tmp_path / "train.svm", tmp_path / "test.svm"
    dump_svmlight_file(X[:200], y[:200], tr, zero_based=False)
    dump_svmlight_file(X[200:], y[200:], te, zero_based=False)
    assert train_main(["-H", str(hf), "-M", "hsvm", "-c", "1", "-B", "1", str(tr), str(tmp_path / "m")]) == 0
    assert predict_main([str(te), str(tmp_path / "m"), str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "Accuracy =" in out
    est = HierarchicalSSVM(str(hf), model="hsvm", C=1.0).fit(X[:200], y[:200])
    # tree-induced error: edges on the path between leaves a and b of the heap-numbered tree
    def path_len(a, b):
        steps = 0
        while a != b:
            a, b = (a // 2, b) if a > b else (a, b // 2)
            steps += 1
        return steps
    pred = est.predict(X[200:])
    tie = np.mean([path_len(a, b) for a, b in zip(y[200:], pred)])
    assert est.tree_induced_error(y[200:], pred) == pytest.approx(tie)
    assert "Tree-induced error =" in out
    pred = np.loadtxt(tmp_path / "out")
    np.testing.assert_array_equal(pred, est.predict(X[200:]))
    bad = tmp_path / "bad.svm"
    dump_svmlight_file(X[:3], np.array([8, 2, 9]), bad, zero_based=False)
    assert train_main(["-H", str(hf), str(bad), str(tmp_path / "m2")]) == 1
    assert "bad.svm: y: label 2 (example 1) is an inner node" in capsys.readouterr().err
    assert train_main(["-E", "chow-liu", "-H", str(hf), str(tr), str(tmp_path / "m3")]) == 1


@pytest.mark.parametrize("seed", range(3))
def test_alpha_generic_solvers(seed):
    """The generic (6.6) solver equals the closed form on trees and keeps 1 <= path sums <= T on
    DAGs; (6.7)'s LP is feasible, directional, and its min alpha equals an SLSQP maximisation."""
    from ssvmlinear.hierarchy import alpha_directional, alpha_qp, node_alpha, _leaf_incidence
    rng = np.random.default_rng(seed)
    h = random_tree(rng, 12)
    np.testing.assert_allclose(alpha_qp(h), alpha_rho2(h), atol=1e-6)
    d = random_dag(rng, 12)
    for dag, T in ((d, 1.5), (random_dag(rng, 40), 1.5), (random_dag(rng, 40), 3.0)):
        A = _leaf_incidence(dag).toarray()
        a = node_alpha(dag, "rho2", T=T)
        assert np.all(A @ a >= 1 - 1e-7) and np.all(A @ a <= T + 1e-7) and np.all(a >= 0)
        # independent: the primal QP by SLSQP on the dense incidence
        cons = [{"type": "ineq", "fun": lambda x: A @ x - 1.0, "jac": lambda x: A},
                {"type": "ineq", "fun": lambda x: T - A @ x, "jac": lambda x: -A}]
        ref = minimize(lambda x: x @ x, np.full(dag.n_nodes, 0.5), jac=lambda x: 2 * x, method="SLSQP",
                       bounds=[(0, None)] * dag.n_nodes, constraints=cons, options={"ftol": 1e-14, "maxiter": 2000})
        assert ref.success
        assert a @ a == pytest.approx(ref.fun, rel=1e-6)
        np.testing.assert_allclose(a, ref.x, atol=1e-4)
    for g, T in ((h, 1.0), (d, 1.5)):
        A = _leaf_incidence(g).toarray()
        a = alpha_directional(g, T)
        assert np.all(A @ a >= 1 - 1e-7) and np.all(A @ a <= T + 1e-7)
        child = np.repeat(np.arange(g.n_nodes), np.diff(g._par_ptr))
        assert np.all(a[child] >= a[g._par_idx] - 1e-9)
        # independent: maximise t s.t. the same constraints, by SLSQP over (alpha, t)
        M = g.n_nodes
        cons = [{"type": "ineq", "fun": lambda z: z[:M] - z[M]},
                {"type": "ineq", "fun": lambda z: z[child] - z[g._par_idx]},
                {"type": "ineq", "fun": lambda z: A @ z[:M] - 1.0}]
        if T > 1:
            cons.append({"type": "ineq", "fun": lambda z: T - A @ z[:M]})
        else:
            cons[2] = {"type": "eq", "fun": lambda z: A @ z[:M] - 1.0}
        res = minimize(lambda z: -z[M], np.full(M + 1, 0.01), method="SLSQP", bounds=[(0, None)] * (M + 1),
                       constraints=cons, options={"ftol": 1e-12, "maxiter": 1000})
        assert res.success and a.min() == pytest.approx(res.x[M], abs=1e-6)
    with pytest.raises(ValueError, match="one per node"):
        node_alpha(h, np.ones(3))


@pytest.mark.parametrize("seed", range(6))
def test_algorithm5_equals_a_convex_solver(seed):
    """ARGMINALPHATREE: min sum N_n / alpha_n s.t. path sums <= 1 (6.23), against SLSQP."""
    from ssvmlinear.hierarchy import alpha_shared
    rng = np.random.default_rng(seed)
    h = random_tree(rng, int(rng.integers(2, 16)))
    N = rng.uniform(0.1, 2.0, h.n_nodes)
    a, value = alpha_shared(h, N)
    A = np.zeros((h.n_leaves, h.n_nodes))
    for k, v in enumerate(h.leaves):
        A[k, h.ancestors(v)] = 1.0
    assert np.all(A @ a <= 1 + 1e-12) and np.all(a > 0)
    assert value == pytest.approx(np.sum(N / a), rel=1e-12)
    res = minimize(lambda x: np.sum(N / x), np.full(h.n_nodes, 0.5 / (h.depth.max() + 1)),
                   jac=lambda x: -N / x ** 2, method="SLSQP", bounds=[(1e-9, None)] * h.n_nodes,
                   constraints=[{"type": "ineq", "fun": lambda x: 1 - A @ x, "jac": lambda x: -A}],
                   options={"ftol": 1e-15, "maxiter": 2000})
    assert res.status in (0, 8)           # 8: SLSQP at the limit of its line search
    assert value == pytest.approx(res.fun, rel=1e-6)
    np.testing.assert_allclose(a, res.x, atol=1e-4)


def test_shared_svm_reaches_the_joint_optimum():
    """Shared SVM's alternation (fits at fixed alpha, Algorithm 5) against SLSQP on the joint
    convex problem (6.17) in (U, alpha, slacks) on a tiny tree; objectives never increase."""
    from ssvmlinear import HierarchicalSSVM
    rng = np.random.default_rng(4)
    h = Hierarchy.from_edges([1, 1, 2, 2], [2, 3, 4, 5])
    X = sp.csr_matrix(rng.standard_normal((10, 2)))
    y = rng.choice([3, 4, 5], 10)
    C = 0.8
    est = HierarchicalSSVM(h, model="shared", task_loss="hamming", C=C, tol=1e-10, max_iter=100000,
                           max_alternations=300, shared_tol=1e-10).fit(X, y)
    curve = est.alternation_objectives_
    assert np.all(np.diff(curve) <= 1e-7 * abs(curve[0]))
    # the joint problem: variables U (M x 3, bias column), alpha (M), xi (n)
    M, n = h.n_nodes, 10
    D = np.hstack([X.toarray(), np.ones((n, 1))])
    lam = np.zeros((h.n_leaves, M))
    for k, v in enumerate(h.leaves):
        lam[k, h.ancestors(v)] = 1.0
    t = h.leaf_index(y)
    ham = np.array([[np.sum(lam[a] != lam[b]) for b in range(h.n_leaves)] for a in range(h.n_leaves)])
    nu, na = M * 3, M

    def obj(z):
        U, a = z[:nu].reshape(M, 3), z[nu:nu + na]
        return 0.5 * np.sum((U ** 2).sum(axis=1) / a) + C * z[nu + na:].sum()

    def grad(z):
        U, a = z[:nu].reshape(M, 3), z[nu:nu + na]
        return np.concatenate([(U / a[:, None]).ravel(), -0.5 * (U ** 2).sum(axis=1) / a ** 2, np.full(n, C)])
    # linear constraints G z >= g: xi_i >= ham + (lam_l - lam_t) U x_i; path sums of alpha <= 1
    G, g = [], []
    for i in range(n):
        for l in range(h.n_leaves):
            row = np.zeros(nu + na + n)
            row[:nu] = -np.outer(lam[l] - lam[t[i]], D[i]).ravel()
            row[nu + na + i] = 1.0
            G.append(row), g.append(ham[l, t[i]])
    for k in range(h.n_leaves):
        row = np.zeros(nu + na + n)
        row[nu:nu + na] = -lam[k]
        G.append(row), g.append(-1.0)
    G, g = np.array(G), np.array(g)
    z0 = np.concatenate([np.zeros(nu), np.full(na, 0.3), np.full(n, 3.0)])
    res = minimize(obj, z0, jac=grad, method="SLSQP",
                   bounds=[(None, None)] * nu + [(1e-6, None)] * na + [(0, None)] * n,
                   constraints=[{"type": "ineq", "fun": lambda z: G @ z - g, "jac": lambda z: G}],
                   options={"ftol": 1e-13, "maxiter": 5000})
    assert res.status in (0, 8)
    assert est.objective_ == pytest.approx(res.fun, rel=1e-4)
    assert est.objective_ < curve[0] - 1e-6          # learning alpha paid off against the rho2 start


def test_shared_svm_refuses_dags_and_alpha_dependent_losses():
    from ssvmlinear import HierarchicalSSVM
    d = Hierarchy.from_edges([1, 1, 2, 3], [2, 3, 4, 4])
    X = sp.csr_matrix(np.eye(3))
    with pytest.raises(ValueError, match="needs a tree"):
        HierarchicalSSVM(Hierarchy.from_edges([1, 1, 2, 3, 1], [2, 3, 4, 4, 5]), model="shared").fit(X, [4, 5, 4])
    h, X, y = synthetic()
    with pytest.raises(ValueError, match="rescales them with alpha"):
        HierarchicalSSVM(h, model="shared", task_loss="normalized-margin").fit(X, y)
    assert d.n_leaves == 1


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("model", ["hsvm", "nhsvm"])
def test_multilabel_tree_oracle_matches_enumeration(seed, model):
    """The O(M) dynamic program against all non-empty leaf sets; margins, loss, Gram, update
    against an explicit feature map."""
    from itertools import product
    from ssvmlinear._kernels.factor import MARGINAL_ONE_VALUE as Q
    from ssvmlinear.hierarchy import multilabel_hierarchy_structure, _leaf_incidence
    rng = np.random.default_rng(50 + seed)
    h = random_tree(rng, int(rng.integers(3, 10)))
    L, M = h.n_leaves, h.n_nodes
    coef = np.ones(M) if model == "hsvm" else np.sqrt(alpha_rho2(h))
    n = 4
    X = sp.random(n, 3, density=0.7, format="csr", random_state=seed)
    Y = np.zeros((n, L), dtype=np.int32)
    for i in range(n):
        Y[i, rng.choice(L, size=int(rng.integers(1, L + 1)), replace=False)] = 1
    st = multilabel_hierarchy_structure(CSRDataset(X, 1.0), Y, h, coef)
    A = _leaf_incidence(h).toarray()
    sets = np.array([s for s in product((0, 1), repeat=L) if any(s)])
    Zs = ((sets @ A) > 0).astype(np.int32)
    D = np.hstack([X.toarray(), np.ones((n, 1))])
    leaf_node = np.zeros(M, bool)
    leaf_node[h.leaves] = True
    for _ in range(3):
        w = rng.standard_normal(st.n_weights)
        W = w.reshape(4, M)
        for i in range(n):
            t = ((Y[i] @ A) > 0).astype(np.int32)
            np.testing.assert_array_equal(st.py_true_label(i), t * Q)     # labels: marginals, Q units
            s = coef * (W.T @ D[i])
            m = (Zs - t) @ s
            loss = (Zs[:, leaf_node] != t[leaf_node]).sum(axis=1).astype(float)
            np.testing.assert_allclose(st.py_margins(w, i, (Zs * Q).ravel()), m, atol=1e-10)
            for lam in (0.0, 0.5, 2.0):
                y, mo, do = st.py_oracle(w, i, lam)
                assert np.all((y == 0) | (y == Q))                       # integral on a tree
                vals = m + lam * loss
                k = int(np.flatnonzero((Zs * Q == y).all(axis=1))[0])   # a valid label
                assert vals[k] == pytest.approx(vals.max(), abs=1e-10)
                assert mo == pytest.approx(m[k], abs=1e-10) and do == loss[k]
            for a in rng.choice(len(Zs), 3):
                dphi_a = np.outer(D[i], coef * (t - Zs[a])).ravel()
                for b in rng.choice(len(Zs), 3):
                    dphi_b = np.outer(D[i], coef * (t - Zs[b])).ravel()
                    assert st.py_gram(i, Zs[a] * Q, Zs[b] * Q) == pytest.approx(dphi_a @ dphi_b, abs=1e-10)
                w2 = w.copy()
                st.py_update(w2, i, 0.4, Zs[a] * Q)
                np.testing.assert_allclose(w2, w + 0.4 * dphi_a, atol=1e-12)


def multilabel_synthetic(seed=3, n=300, d=8):
    """The complete binary tree of synthetic(); each example's leaves: those whose path potential
    is within 1 of the best."""
    rng = np.random.default_rng(seed)
    h, _, _ = synthetic(seed)
    Wn = rng.standard_normal((16, d))
    X = rng.standard_normal((n, d))
    pot = {1: X @ Wn[1]}
    for k in range(2, 16):
        pot[k] = pot[k // 2] + X @ Wn[k]
    P = np.stack([pot[k] for k in range(8, 16)], axis=1)
    sets = [tuple((8 + np.flatnonzero(P[i] >= P[i].max() - 1.0)).tolist()) for i in range(n)]
    return h, sp.csr_matrix(X), sets


def test_multilabel_estimator_round_trip_and_cli(tmp_path, capsys):
    from ssvmlinear import HierarchicalSSVM, dump_svmlight_file, load_model, save_model
    from ssvmlinear.cli import predict_main, train_main
    h, X, sets = multilabel_synthetic()
    est = HierarchicalSSVM(h, model="nhsvm", C=1.0).fit(X[:200], sets[:200])
    P = est.predict(X[200:])
    assert P.shape == (100, 8) and np.all(np.diff(P.indptr) >= 1)
    assert est.score(X[200:], sets[200:]) > 0.5
    labels = est.predict_labels(X[200:203])
    assert all(set(l) <= set(range(8, 16)) and l for l in labels)
    save_model(est, tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert (back.predict(X[200:]) != P).nnz == 0
    with pytest.raises(ValueError, match="label 3 .* inner node"):
        HierarchicalSSVM(h).fit(X[:2], [(8, 9), (3,)])
    # the CLI: label-set files, label values are the leaf ids
    hf = tmp_path / "tree.hier"
    hf.write_text("".join(f"{k // 2} {k}\n" for k in range(2, 16)))
    Y = np.zeros((300, 16), dtype=np.int32)
    for i, s in enumerate(sets):
        Y[i, list(s)] = 1
    dump_svmlight_file(X[:200], Y[:200], tmp_path / "tr.svm")
    dump_svmlight_file(X[200:], Y[200:], tmp_path / "te.svm")
    assert train_main(["-H", str(hf), "-c", "1", "-B", "1", str(tmp_path / "tr.svm"), str(tmp_path / "m2")]) == 0
    assert predict_main([str(tmp_path / "te.svm"), str(tmp_path / "m2"), str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    same = HierarchicalSSVM(str(hf), C=1.0, random_state=1).fit(X[:200], sp.csr_matrix(Y[:200]))  # the CLI's fit
    acc = same.score(X[200:], sp.csr_matrix(Y[200:]))
    assert f"Acc = {100 * acc:g}%" in out
    lines = (tmp_path / "out").read_text().splitlines()
    assert lines == [",".join(str(v) for v in s) for s in same.predict_labels(X[200:])]
    # the set form of the tree-induced error, recomputed from the ancestor sets
    pred = same.predict_labels(X[200:])
    anc = lambda leaves: set().union(*[set(h.ids[h.ancestors(h.leaves[k])].tolist()) for k in h.leaf_index(list(leaves))])
    tie = np.mean([len(anc(a) ^ anc(b)) for a, b in zip(sets[200:], pred)])
    assert f"Tree-induced error = {tie:g} " in out


@pytest.mark.parametrize("seed", range(3))
def test_dag_multilabel_lp_oracle_and_integer_prediction(seed):
    """On random DAGs: the LP oracle's value bounds every integral label's from above and equals
    the best when its answer is integral; the relaxed label's margin and loss are the LP's
    objective; the integer program equals enumeration; every method is linear in the marginals."""
    from itertools import product
    from ssvmlinear._kernels.factor import MARGINAL_ONE_VALUE as Q
    from ssvmlinear.hierarchy import DagLP, multilabel_hierarchy_structure, _leaf_incidence
    rng = np.random.default_rng(70 + seed)
    h = random_dag(rng, 8)
    L, M = h.n_leaves, h.n_nodes
    coef = rng.uniform(0.3, 1.0, M)
    n = 4
    X = sp.random(n, 3, density=0.7, format="csr", random_state=seed)
    Y = np.zeros((n, L), dtype=np.int32)
    for i in range(n):
        Y[i, rng.choice(L, size=int(rng.integers(1, L + 1)), replace=False)] = 1
    st = multilabel_hierarchy_structure(CSRDataset(X, 1.0), Y, h, coef)
    A = _leaf_incidence(h).toarray()
    sets = np.array([s for s in product((0, 1), repeat=L) if any(s)])
    Zs = ((sets @ A) > 0).astype(np.int32)
    D = np.hstack([X.toarray(), np.ones((n, 1))])
    leaf = np.zeros(M, bool)
    leaf[h.leaves] = True
    lp = DagLP(h)
    for _ in range(3):
        w = rng.standard_normal(st.n_weights)
        W = w.reshape(4, M)
        for i in range(n):
            t = ((Y[i] @ A) > 0).astype(np.int32)
            s = coef * (W.T @ D[i])
            m = (Zs - t) @ s
            loss = (Zs[:, leaf] != t[leaf]).sum(axis=1)
            np.testing.assert_allclose(st.py_margins(w, i, (Zs * Q).astype(np.int32).ravel()), m, atol=1e-10)
            for lam in (0.0, 1.0):
                y, mo, do = st.py_oracle(w, i, lam)
                z = y / Q
                vals = m + lam * loss
                assert mo + lam * do >= vals.max() - 1e-6          # a relaxation
                assert mo == pytest.approx((z - t) @ s, abs=1e-6) and do == pytest.approx(np.abs(z - t)[leaf].sum())
                if np.all((y == 0) | (y == Q)):
                    assert mo + lam * do == pytest.approx(vals.max(), abs=1e-6)
                zi = lp.integer(s + lam * np.where(leaf, np.where(t == 1, -1.0, 1.0), 0.0))
                k = int(np.flatnonzero((Zs == zi).all(axis=1))[0])
                assert vals[k] == pytest.approx(vals.max(), abs=1e-9)
            # relaxed labels: mixtures of two integral labels (dyadic weights, exact in Q units)
            a, b = rng.choice(len(Zs), 2, replace=False)
            mix = ((Zs[a] + Zs[b]) * (Q // 2)).astype(np.int32)
            assert st.py_loss(i, mix) == pytest.approx((loss[a] + loss[b]) / 2)
            w2, w3 = w.copy(), w.copy()
            st.py_update(w2, i, 0.6, mix)
            st.py_update(w3, i, 0.3, (Zs[a] * Q).astype(np.int32))
            st.py_update(w3, i, 0.3, (Zs[b] * Q).astype(np.int32))
            np.testing.assert_allclose(w2, w3, atol=1e-12)
            dphi = lambda z: np.outer(D[i], coef * (t - z)).ravel()
            g = 0.25 * (dphi(Zs[a]) + dphi(Zs[b])) @ (dphi(Zs[a]) + dphi(Zs[b]))
            assert st.py_gram(i, mix, mix) == pytest.approx(g, abs=1e-10)


def test_dag_multilabel_estimator_trains_and_predicts_integral_sets():
    from ssvmlinear import HierarchicalSSVM
    rng = np.random.default_rng(9)
    h = random_dag(rng, 10)
    X = sp.random(60, 5, density=0.6, format="csr", random_state=2)
    leaves = h.ids[h.leaves]
    sets = [tuple(rng.choice(leaves, size=int(rng.integers(1, 3)), replace=False).tolist()) for _ in range(60)]
    est = HierarchicalSSVM(h, model="hsvm", C=0.5).fit(X, sets)
    P = est.predict(X)
    assert P.shape == (60, h.n_leaves) and np.all(np.diff(P.indptr) >= 1)
    assert set(np.unique(P.data).tolist()) <= {1} and est.converged_
    # the prediction is the exact argmax over all label sets (LP, integer program when fractional)
    from itertools import product
    from ssvmlinear.hierarchy import _leaf_incidence
    A = _leaf_incidence(h).toarray()
    Zs = ((np.array([s for s in product((0, 1), repeat=h.n_leaves) if any(s)]) @ A) > 0).astype(float)
    S = (np.asarray(X @ est.coef_.T) + est.intercept_) * est._coef_n
    Zp = ((P.toarray() @ A) > 0).astype(float)
    np.testing.assert_allclose((Zp * S).sum(axis=1), (S @ Zs.T).max(axis=1), atol=1e-9)


@pytest.mark.parametrize("loss, search", [("slack", "exact"), ("slack", "hull"), ("beta:0.5", "angular"),
                                          ("probloss", "bisecting")])
def test_pegasos_surrogates_train_hierarchies(loss, search):
    """Every surrogate and search runs on the hierarchy (its loss-indexed oracle serves the exact and
    angular searches); slack rescaling's reported objective is the enumerated one (the hull search's
    problem is over the labels' convex hull, its objective no lower)."""
    from ssvmlinear import HierarchicalSSVM
    h, X, y = synthetic(5, n=120)
    est = HierarchicalSSVM(h, model="hsvm", C=0.5, loss=loss, solver=Pegasos(search=search), max_iter=30,
                           random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert np.isfinite(est.objective_) and est.score(X, y) > 0.4
    if loss == "slack":
        st, rows = None, []
        D = np.hstack([X.toarray(), np.ones((120, 1))])
        _, lam = explicit(h, np.ones(h.n_nodes), X, 1.0)
        t = h.leaf_index(y)
        w = est._w.ravel()
        obj = 0.5 * w @ w
        for i in range(120):
            best = 0.0
            for l in range(h.n_leaves):
                delta = float(np.sum((lam[l] != 0) != (lam[t[i]] != 0)))
                m = np.outer(D[i], lam[l] - lam[t[i]]).ravel() @ w
                best = max(best, delta * max(0.0, 1.0 + m))
            obj += 0.5 * best
        if search == "hull":    # its problem is over the labels' convex hull: a bound of the enumerated loss
            assert est.objective_ >= obj * (1 - 1e-9)
        else:
            assert est.objective_ == pytest.approx(obj, rel=1e-9)


def test_fixed_loss_coefficients_and_shared_normalized_loss():
    """loss_coef fixes the normalised loss's node weights apart from the feature map's c_n (Shared
    SVM keeps the loss of its initial alpha while alpha is learned)."""
    from ssvmlinear import HierarchicalSSVM
    rng = np.random.default_rng(21)
    h = random_tree(rng, 9)
    coef, lcoef = rng.uniform(0.2, 1.0, h.n_nodes), rng.uniform(0.2, 1.0, h.n_nodes)
    X = sp.random(4, 3, density=0.7, format="csr", random_state=0)
    y = rng.integers(0, h.n_leaves, 4).astype(np.int32)
    st = hierarchy_structure(CSRDataset(X, 1.0), y, h, coef, "normalized", loss_coef=lcoef)
    _, lam = explicit(h, lcoef, X, 1.0)
    for i in range(4):
        for l in range(h.n_leaves):
            assert st.py_loss(i, np.array([l], np.int32)) == pytest.approx(task(lam[l], lam[y[i]], "normalized", lcoef))
    hs, Xs, ys = synthetic(6, n=120)
    est = HierarchicalSSVM(hs, model="shared", task_loss="normalized", C=0.5, max_alternations=4).fit(Xs, ys)
    assert np.all(np.diff(est.alternation_objectives_) <= 1e-6 * abs(est.alternation_objectives_[0]))
    with pytest.raises(ValueError, match="normalized-margin"):
        HierarchicalSSVM(hs, model="shared", task_loss="normalized-margin").fit(Xs, ys)
