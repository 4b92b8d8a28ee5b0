"""Relaxed labels (per-label and per-edge marginals) as a first-class kind of label:
RelaxedPairwiseMultiLabelStructure against the integral structure and enumeration. A relaxed
label built as a mixture of integral labels has the mixture's loss, score, margin, Gram entries and
update (phi and the Hamming loss are linear in the marginals); the oracles are the forest's; the
label store keeps and compares relaxed labels like integral ones, so every solver trains on them."""
import itertools

import numpy as np
import pytest

from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.factor import MARGINAL_ONE_VALUE
from ssvmlinear._kernels.pairwise_multilabel import PairwiseMultiLabelStructure
from ssvmlinear._kernels.relaxed_multilabel import RelaxedPairwiseMultiLabelStructure
from ssvmlinear.search import run_on_structure
from ssvmlinear.solvers import SDCD, SDM, CuttingPlane, Pegasos, solve

from test_multilabel import random_multilabel
from test_multilabel_pairwise import random_forest_edges


def make(seed, K, normalize=False, n=6):
    rng = np.random.default_rng(300 + seed)
    X, Y = random_multilabel(n=n, d=4, K=K, seed=seed)
    edges = random_forest_edges(rng, K)
    D = CSRDataset(X, 1.0)
    return (rng, edges, Y, PairwiseMultiLabelStructure(D, Y, edges, normalize),
            RelaxedPairwiseMultiLabelStructure(D, Y, edges, normalize))


def mixture(rng, st, K, parts=3):
    """A relaxed label: the marginals of a dyadic mixture of `parts` random integral labels
    (exact in MARGINAL_ONE units), with its components and weights."""
    ys = rng.integers(0, 2, size=(parts, K)).astype(np.int32)
    p = np.array([0.5, 0.25, 0.25][:parts]) if parts == 3 else np.full(parts, 1.0 / parts)
    e = st.edge_list()
    mu = p @ ys
    pair = p @ (ys[:, e[:, 0]] * ys[:, e[:, 1]]) if len(e) else np.zeros(0)
    return st.encode(mu, pair), ys, p


def enc(rst, y):
    return rst.encode(np.asarray(y, dtype=float))


@pytest.mark.parametrize("seed, K", [(0, 2), (1, 3), (2, 4), (3, 5)])
@pytest.mark.parametrize("normalize", [False, True])
def test_relaxed_label_is_linear_in_its_marginals(seed, K, normalize):
    rng, edges, Y, ist, rst = make(seed, K, normalize)
    assert rst.n_weights == ist.n_weights
    for trial in range(3):
        w = rng.standard_normal(ist.n_weights)
        for i in range(Y.shape[0]):
            a, ys, p = mixture(rng, rst, K)
            b, zs, q = mixture(rng, rst, K)
            assert rst.py_loss(i, a) == pytest.approx(sum(pj * ist.py_loss(i, y) for pj, y in zip(p, ys)), abs=1e-12)
            assert rst.py_score(w, i, a) == pytest.approx(sum(pj * ist.py_score(w, i, y) for pj, y in zip(p, ys)),
                                                          abs=1e-10)
            m = rst.py_margins(w, i, np.concatenate([a, b]))
            np.testing.assert_allclose(m, [sum(pj * ist.py_margins(w, i, y)[0] for pj, y in zip(p, ys)),
                                           sum(qj * ist.py_margins(w, i, z)[0] for qj, z in zip(q, zs))], atol=1e-10)
            g = sum(pj * qk * ist.py_gram(i, y, z) for pj, y in zip(p, ys) for qk, z in zip(q, zs))
            assert rst.py_gram(i, a, b) == pytest.approx(g, abs=1e-10)
            np.testing.assert_allclose(rst.py_gram_row(i, a, np.concatenate([a, b])),
                                       [rst.py_gram(i, a, a), g], atol=1e-10)
            # update by marginals = the mixture of integral updates (factor layer primitives)
            w1, w2 = w.copy(), w.copy()
            rst.py_update(w1, i, 0.7, a)
            for pj, y in zip(p, ys):
                ist.py_update(w2, i, 0.7 * pj, y)
            np.testing.assert_allclose(w1, w2, atol=1e-12)
            # integral labels: the same values as the integral structure
            y = ys[0]
            assert rst.py_loss(i, enc(rst, y)) == ist.py_loss(i, y)
            assert rst.py_score(w, i, enc(rst, y)) == pytest.approx(ist.py_score(w, i, y), abs=1e-12)
            mu, tables = rst.decode(a)
            np.testing.assert_allclose(mu, p @ ys)
            for e, (u, v) in enumerate(rst.edge_list()):
                for s, t in itertools.product((0, 1), repeat=2):
                    assert tables[e, s, t] == pytest.approx(sum(pj for pj, yy in zip(p, ys)
                                                                if yy[u] == s and yy[v] == t))


@pytest.mark.parametrize("seed, K", [(4, 3), (5, 4)])
def test_relaxed_oracles_are_the_forests(seed, K):
    """λ-oracle, loss-indexed oracle and k-best return the integral structure's answers, encoded
    (all 2^K labels enumerated by the integral structure's own brute-force tests)."""
    rng, edges, Y, ist, rst = make(seed, K)
    L = K + len(edges)
    for _ in range(3):
        w = rng.standard_normal(ist.n_weights)
        for i in range(Y.shape[0]):
            assert rst.py_same_label(i, rst.py_true_label(i), enc(rst, Y[i]))
            for lam in (0.0, 1.0, 2.5):
                y, m, d = ist.py_oracle(w, i, lam)
                ry, rm, rd = rst.py_oracle(w, i, lam)
                assert ry.tolist() == enc(rst, y).tolist() and rm == m and rd == d
                for k in (1, 4, 2 ** K + 2):
                    kl, kv = ist.py_kbest(w, i, lam, k)
                    rkl, rkv = rst.py_kbest(w, i, lam, k)
                    assert rkl.shape == (kl.shape[0], L)
                    assert [r.tolist() for r in rkl] == [enc(rst, r).tolist() for r in kl]
                    np.testing.assert_array_equal(rkv, kv)
            best, labels, losses = ist.py_loss_indexed_oracle(w, i)
            rbest, rlabels, rlosses = rst.py_loss_indexed_oracle(w, i)
            np.testing.assert_array_equal(rbest, best)
            assert [r.tolist() for r in rlabels] == [enc(rst, r).tolist() for r in labels]


def test_same_label_compares_marginals():
    rng, edges, Y, ist, rst = make(6, 4)
    a, _, _ = mixture(rng, rst, 4)
    b = a.copy()
    assert rst.py_same_label(0, a, b)
    b[-1] += 1                        # one edge marginal differs by 2^-30
    assert not rst.py_same_label(0, a, b)
    assert MARGINAL_ONE_VALUE == 2 ** 30


@pytest.mark.parametrize("solver, kwargs", [
    (SDM(), dict(tol=1e-10, max_iter=100000, seed=0)),
    (SDCD(exact_violators=True), dict(tol=1e-12, max_iter=100000, seed=0, loss="lse")),
    (CuttingPlane(), dict(tol=1e-8, max_iter=2000, seed=0)),
    (Pegasos(), dict(tol=1e-12, max_iter=300, seed=0)),
], ids=["sdm", "sdcd", "cutting-plane", "pegasos"])
def test_every_solver_trains_on_relaxed_labels(solver, kwargs):
    """The same problem through relaxed labels (K + E ints kept in the label store, working sets,
    caches and Pegasos' warm cache) reaches the integral structure's optimum."""
    rng, edges, Y, ist, rst = make(7, 4, n=30)
    Cs = np.full(30, 0.5)
    ref = solve(solver, ist, Cs, **kwargs)
    got = solve(solver, rst, Cs, **kwargs)
    if isinstance(solver, (SDM, SDCD)):
        np.testing.assert_allclose(got.w, ref.w, atol=1e-6)
        assert got.primal == pytest.approx(ref.primal, rel=1e-9)
    else:
        np.testing.assert_allclose(got.w, ref.w, atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_lp_oracle_on_the_full_graph(seed):
    """edges = all pairs: the LP relaxation over the local polytope bounds the best labelling
    (enumeration of all 2^K) and attains it when its answer is integral; its reported m and loss
    are those of the relaxed label it returns; the integer program is exact MAP."""
    from ssvmlinear._kernels.pairwise_multilabel import PairwiseMultiLabelStructure as PMS
    from ssvmlinear.models.multilabel import PairwiseLP
    from test_multilabel_pairwise import phi
    from test_multilabel import all_labels, dense_rows
    rng = np.random.default_rng(40 + seed)
    K = 4
    X, Y = random_multilabel(n=5, d=3, K=K, seed=seed)
    a, b = np.triu_indices(K, 1)
    edges = np.stack([a, b], axis=1)
    lp = PairwiseLP(K, edges)
    st = RelaxedPairwiseMultiLabelStructure(CSRDataset(X, 1.0), Y, edges, False, lp)
    D = dense_rows(X, 1.0)
    labels = all_labels(K)
    Q = MARGINAL_ONE_VALUE
    for _ in range(3):
        w = rng.standard_normal(st.n_weights)
        for i in range(5):
            m = np.array([w @ (phi(D[i], y, edges) - phi(D[i], Y[i], edges)) for y in labels])
            H = (labels != Y[i]).sum(axis=1)
            for lam in (0.0, 1.0):
                vals = m + lam * H
                y, mo, do = st.py_oracle(w, i, lam)
                assert mo + lam * do >= vals.max() - 1e-7
                mu, tables = st.decode(y)
                assert np.all(tables >= -1e-6) and np.allclose(tables.sum(axis=(1, 2)), 1.0, atol=1e-6)
                if np.all((y == 0) | (y == Q)):
                    assert mo + lam * do == pytest.approx(vals.max(), abs=1e-7)
                # exact MAP by the integer program, with the objective the oracle builds
                U = (w[:-4 * len(edges)].reshape(4, K).T @ D[i])
                T = w[-4 * len(edges):].reshape(-1, 4)
                c = np.concatenate([U + lam * np.where(Y[i] == 1, -1.0, 1.0), T[:, 3] - T[:, 1] - T[:, 2] + T[:, 0]])
                np.add.at(c, edges[:, 0], T[:, 2] - T[:, 0])
                np.add.at(c, edges[:, 1], T[:, 1] - T[:, 0])
                z = lp.integer(c)[:K].astype(int)
                k = int(np.flatnonzero((labels == z).all(axis=1))[0])
                assert vals[k] == pytest.approx(vals.max(), abs=1e-9)
    with pytest.raises(ValueError, match="closes a cycle"):
        PMS(CSRDataset(X, 1.0), Y, edges)          # the exact structure still needs a forest


FULL = {}


def full_reference():
    """The data and SDM's optimum of MultiLabelSSVM(edges='full') (computed once)."""
    from ssvmlinear import MultiLabelSSVM
    if not FULL:
        X, Y = random_multilabel(n=20, d=4, K=4, seed=11)
        FULL.update(X=X, Y=Y, ref=MultiLabelSSVM(C=0.5, edges="full", tol=1e-4, max_iter=5000, random_state=0).fit(X, Y))
    return FULL["X"], FULL["Y"], FULL["ref"]


@pytest.mark.parametrize("solver", ["sdm", "cutting-plane", "bcfw"])
def test_full_pairwise_multilabel_estimator(solver):
    """MultiLabelSSVM(edges='full') trains on relaxed labels (LP oracle); predict is exact MAP
    (enumeration); the solvers agree on the relaxed problem's objective."""
    import warnings
    from ssvmlinear import MultiLabelSSVM
    from ssvmlinear.exceptions import ConvergenceWarning
    from test_multilabel import all_labels
    X, Y, ref = full_reference()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = MultiLabelSSVM(C=0.5, edges="full", solver=solver, max_iter=60 if solver == "bcfw" else 300,
                             random_state=0).fit(X, Y)
    assert est.edges_.shape == (6, 2) and est.pairwise_.shape == (6, 2, 2)
    P = est.predict(X)
    P = P.toarray() if hasattr(P, "toarray") else np.asarray(P)
    labels = all_labels(4)
    S = np.asarray(X @ est.coef_.T) + est.intercept_
    for r in range(X.shape[0]):
        f = labels @ S[r] + sum(est.pairwise_[e][labels[:, a], labels[:, b]] for e, (a, b) in enumerate(est.edges_))
        assert f[int(np.flatnonzero((labels == P[r]).all(axis=1))[0])] == pytest.approx(f.max(), abs=1e-9)
    assert est.objective_ == pytest.approx(ref.objective_, rel=0.05)


def test_prediction_counts_the_fractional_lp_answers():
    """A frustrated model (every label wants in, every pair of them is penalised) makes the LP
    relaxation fractional on every row: predict falls back to the integer program on each (one
    label, the exact MAP) and says so."""
    X, Y, ref = full_reference()
    est = __import__("copy").deepcopy(ref)
    est.predict(X)
    assert 0 <= est.n_fractional_predictions_ <= X.shape[0]
    est.coef_ = np.zeros_like(est.coef_)
    est.intercept_ = np.ones_like(est.intercept_)
    est.pairwise_ = np.zeros_like(est.pairwise_)
    est.pairwise_[:, 1, 1] = -3.0
    P = est.predict(X)
    P = P.toarray() if hasattr(P, "toarray") else np.asarray(P)
    assert est.n_fractional_predictions_ == X.shape[0]
    assert np.all(P.sum(axis=1) == 1)


def test_constrained_lp_oracle_equals_an_independent_lp():
    """The angular search's constrained lambda-oracle on the LP relaxation: max h + lam g over the
    local polytope cut by alpha (h + o) >= g >= beta (h + o), against scipy's HiGHS on an
    independent formulation (a 4-entry table per pair, consistency rows); None exactly when that
    LP is infeasible."""
    from scipy.optimize import linprog
    from ssvmlinear.models.multilabel import PairwiseLP
    from test_multilabel import dense_rows
    rng = np.random.default_rng(5)
    K = 4
    X, Y = random_multilabel(n=6, d=3, K=K, seed=2)
    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.int32)
    a, b = np.triu_indices(K, 1)
    edges = np.stack([a, b], axis=1)
    E = len(a)
    st = RelaxedPairwiseMultiLabelStructure(CSRDataset(X, 1.0), Y, edges, False, PairwiseLP(K, edges))
    D = dense_rows(X, 1.0)
    seen = {True: 0, False: 0}
    for trial in range(40):
        w = rng.standard_normal(st.n_weights)
        i = int(rng.integers(6))
        lam, origin, scale = float(rng.uniform(0.1, 3)), float(rng.uniform(0, 2)), float(rng.uniform(0.5, 2))
        beta = float(rng.uniform(0, 1.5))
        alpha = float("inf") if trial % 3 == 0 else beta + float(rng.uniform(0.05, 2))
        U = w[:-4 * E].reshape(4, K).T @ D[i]
        T = w[-4 * E:].reshape(E, 4)
        yb = Y[i]
        f_true = U @ yb + sum(T[e, 2 * yb[a[e]] + yb[b[e]]] for e in range(E))
        # variables: mu (K), q_e (4E); h = scale (score - f_true), g = Hamming
        nv = K + 4 * E
        cf = np.concatenate([U, T.ravel()])
        cg = np.concatenate([1.0 - 2.0 * yb, np.zeros(4 * E)])
        Aeq, beq = [], []
        for e in range(E):
            for var, cols in ((a[e], (2, 3)), (b[e], (1, 3))):
                r = np.zeros(nv)
                r[[K + 4 * e + c for c in cols]] = 1
                r[var] = -1
                Aeq.append(r)
                beq.append(0)
            r = np.zeros(nv)
            r[K + 4 * e:K + 4 * e + 4] = 1
            Aeq.append(r)
            beq.append(1)
        Aub, bub = [], []
        h0 = -scale * f_true + origin            # h + origin = scale cf.x + h0; g = cg.x + |y|
        if np.isfinite(alpha):
            Aub.append(-(alpha * scale * cf - cg))
            bub.append(-(yb.sum() - alpha * h0) - 1e-9 * (1 + yb.sum() + abs(alpha * h0)))
        else:                                    # the initial right angle: h + origin > 0
            Aub.append(-scale * cf)
            bub.append(h0 - 1e-9 * (1 + abs(h0)))
        Aub.append(-(cg - beta * scale * cf))
        bub.append(-(beta * h0 - yb.sum()))
        res = linprog(-(scale * cf + lam * cg), A_ub=np.array(Aub), b_ub=bub, A_eq=np.array(Aeq), b_eq=beq,
                      bounds=[(0, 1)] * nv, method="highs")
        got = st.py_constrained_oracle(w, i, lam, alpha, beta, origin, scale)
        seen[got is not None] += 1
        if res.status == 2:
            assert got is None
            continue
        assert res.status == 0 and got is not None
        y, m, g = got
        ref = -res.fun + lam * yb.sum() - scale * f_true       # max of scale m + lam g
        assert scale * m + lam * g == pytest.approx(ref, abs=1e-5)
        h = scale * m
        assert g >= beta * (h + origin) - 1e-5 and h + origin > -1e-5
        if np.isfinite(alpha):
            assert g <= alpha * (h + origin) + 1e-5
    assert seen[True] >= 10 and seen[False] >= 1


@pytest.mark.parametrize("K", [3, 6])
def test_constrained_oracle_by_maxflow_equals_highs(K):
    """The constrained lambda-oracle in the kernel (support queries by max-flow in the plane of
    (h, g)) against the same LP by HiGHS (lp.method "highs"): the same optimum value, the cone's
    rows hold, and None exactly when HiGHS finds the cone empty. Random weights of both signs
    make non-submodular pairs; cones from wide to thin, with and without the upper ray."""
    from ssvmlinear.models.multilabel import PairwiseLP
    rng = np.random.default_rng(K)
    X, Y = random_multilabel(n=8, d=4, K=K, seed=K)
    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.int32)
    edges = np.array(list(itertools.combinations(range(K), 2)))
    flow = RelaxedPairwiseMultiLabelStructure(CSRDataset(X, 1.0), Y, edges, False, PairwiseLP(K, edges))
    highs = RelaxedPairwiseMultiLabelStructure(CSRDataset(X, 1.0), Y, edges, False,
                                               PairwiseLP(K, edges, method="highs"))
    seen = {True: 0, False: 0}
    for trial in range(120):
        w = rng.standard_normal(flow.n_weights) * rng.choice([0.1, 1.0, 5.0])
        i = int(rng.integers(8))
        lam, scale = float(rng.uniform(0.1, 3)), float(rng.uniform(0.5, 2))
        origin = float(rng.uniform(0, 2) if trial % 3 else rng.uniform(-3, 0))     # Q's maximiser left of it too
        beta = float(rng.uniform(0, 1.5) if trial % 2 else rng.uniform(1.5, 20.0))
        alpha = float("inf") if trial % 4 == 0 else beta + float(rng.choice([0.01, 0.3, 2.0]))
        got = flow.py_constrained_oracle(w, i, lam, alpha, beta, origin, scale)
        ref = highs.py_constrained_oracle(w, i, lam, alpha, beta, origin, scale)
        assert (got is None) == (ref is None)
        seen[got is not None] += 1
        if got is None:
            continue
        (_, m, g), (_, m_ref, g_ref) = got, ref
        assert scale * m + lam * g == pytest.approx(scale * m_ref + lam * g_ref, rel=1e-6, abs=1e-6)
        h = scale * m
        assert g >= beta * (h + origin) - 1e-6 and h + origin > -1e-6
        if np.isfinite(alpha):
            assert g <= alpha * (h + origin) + 1e-6
    assert seen[True] >= 30 and seen[False] >= 5


def test_angular_search_on_a_loopy_mrf_finds_the_slack_maximum():
    """Slack rescaling's most violating relaxed label on a loopy MRF: the angular search (exact,
    ratio 1) reaches the maximum of Delta (1 + m) over the local polytope's image in the (m, Delta)
    plane, found by brute force: that image's upper-right boundary from lambda-oracles on a fine
    grid, the product maximised in closed form along each of its edges."""
    from ssvmlinear._kernels.search import StructureOracle
    from ssvmlinear.models.multilabel import PairwiseLP
    K = 6
    X, Y = random_multilabel(n=10, d=4, K=K, seed=3)
    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.int32)
    edges = np.array(list(itertools.combinations(range(K), 2)))
    st = RelaxedPairwiseMultiLabelStructure(CSRDataset(X, 1.0), Y, edges, False, PairwiseLP(K, edges))
    orc = StructureOracle(st, capacity=408)
    rng = np.random.default_rng(1)
    for trial in range(12):
        w = rng.standard_normal(st.n_weights) * (0.3 if trial % 2 else 1.5)
        i = trial % 10
        pts = [st.py_oracle(w, i, lam)[1:] for lam in np.concatenate([[0.0], np.geomspace(1e-4, 1e4, 600)])]
        pts = np.unique(np.round(np.array(pts), 12), axis=0)
        pts = pts[np.argsort(pts[:, 1])]                       # (m, Delta) by Delta
        best = max(0.0, float(np.max(pts[:, 1] * (1 + pts[:, 0]))))
        for (m0, d0), (m1, d1) in zip(pts[:-1], pts[1:]):      # (d0 + t dd)(1 + m0 + t dm) on [0, 1]
            dd, dm = d1 - d0, m1 - m0
            a, b = dd * dm, dd * (1 + m0) + d0 * dm
            if a < 0 and 0 < -b / (2 * a) < 1:
                t = -b / (2 * a)
                best = max(best, (d0 + t * dd) * (1 + m0 + t * dm))
        got = run_on_structure(orc, w, i, "slack", "angular", ratio=1.0, max_calls=200)["value"]
        assert got == pytest.approx(best, rel=1e-4, abs=1e-6)


def test_maxflow_lp_equals_highs():
    """Roof duality by max-flow solves the local-polytope LP exactly: its value equals HiGHS's on
    random graphs and objectives of both signs, its answer is in the polytope and half-integral;
    the structure's oracle gives the same value with either method."""
    from ssvmlinear.models.multilabel import PairwiseLP
    rng = np.random.default_rng(7)
    for trial in range(150):
        K = int(rng.integers(2, 10))
        a, b = np.triu_indices(K, 1)
        keep = rng.random(len(a)) < rng.uniform(0.3, 1.0)
        if not keep.any():
            continue
        edges = np.stack([a[keep], b[keep]], axis=1)
        c = np.concatenate([rng.normal(0, 1, K), rng.normal(0, 1.5, len(edges))])
        xh = PairwiseLP(K, edges, "highs")(c)
        xf = PairwiseLP(K, edges, "maxflow")(c)
        assert c @ xf == pytest.approx(c @ xh, abs=1e-9 * (1 + abs(c @ xh)))
        mu, pair = xf[:K], xf[K:]
        assert np.all(np.isin(mu, [0.0, 0.5, 1.0]))
        ea, eb = edges[:, 0], edges[:, 1]
        assert np.all(pair <= np.minimum(mu[ea], mu[eb]) + 1e-12) and np.all(pair >= mu[ea] + mu[eb] - 1 - 1e-12)
        assert np.all(pair >= -1e-12)
    X, Y = random_multilabel(n=8, d=3, K=6, seed=4)
    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.int32)
    a, b = np.triu_indices(6, 1)
    edges = np.stack([a, b], axis=1)
    sf = RelaxedPairwiseMultiLabelStructure(CSRDataset(X, 1.0), Y, edges, False, PairwiseLP(6, edges, "maxflow"))
    sh = RelaxedPairwiseMultiLabelStructure(CSRDataset(X, 1.0), Y, edges, False, PairwiseLP(6, edges, "highs"))
    for _ in range(5):
        w = rng.standard_normal(sf.n_weights)
        for i in range(8):
            _, mf, df = sf.py_oracle(w, i, 1.0)
            _, mh, dh = sh.py_oracle(w, i, 1.0)
            assert mf + df == pytest.approx(mh + dh, abs=1e-6)
