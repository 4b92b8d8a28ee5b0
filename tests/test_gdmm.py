"""GDMM (solver='gdmm', -s 6) on chains: its optimum equals SDM's; the factorwise oracles equal
brute force (the sampled one over its block and the labels it always scores, the multimap search
over all K^2 pairs after passes and random changes of the transition table)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from ssvmlinear import ChainSSVM, MulticlassSSVM
from ssvmlinear.exceptions import ConvergenceWarning
from ssvmlinear._kernels.chain import ChainStructure
from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.gdmm import FactorGDMM
from ssvmlinear._kernels.multiclass import MulticlassStructure
from ssvmlinear.solvers import GDMM


def random_chains(n_seq=40, d=10, K=4, seed=2, density=0.4):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 6, n_seq)
    N = int(lengths.sum())
    X = sp.random(N, d, density=density, format="csr", random_state=seed)
    y = rng.integers(0, K, N)
    return X, y, lengths


@pytest.mark.parametrize("fmo_subsets", [1, 2, 3])
@pytest.mark.parametrize("options", [{}, {"start_end": True}, {"normalize_loss": True, "fit_intercept": True}])
def test_gdmm_reaches_sdms_optimum(fmo_subsets, options):
    X, y, lengths = random_chains(K=5, seed=3)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, len(lengths))
    ref = ChainSSVM(C=0.3, tol=1e-6, max_iter=50000, **options).fit(X, y, lengths, sample_weight=weights)
    # the consistency violation decays like 1/passes in the tail here: tol 1e-5 takes ~10^4 passes
    est = ChainSSVM(C=0.3, solver=GDMM(fmo_subsets=fmo_subsets), tol=1e-5, max_iter=100000, **options)
    est.fit(X, y, lengths, sample_weight=weights)
    assert ref.converged_ and est.converged_
    assert est.objective_ == pytest.approx(ref.objective_, rel=1e-5)
    assert est.dual_objective_ == pytest.approx(ref.objective_, rel=1e-5)
    # the primal is 1-strongly convex: ||w - w*||^2 <= 2 (P(w) - P*) (both fits are near w*)
    dw = est._weight_vector() - ref._weight_vector()
    assert dw @ dw <= 2 * (abs(est.objective_ - ref.objective_) + 1e-6 * ref.objective_) * 2


def test_gdmm_default_rule_stops_within_a_percent():
    X, y, lengths = random_chains(n_seq=60, K=6, seed=5)
    ref = ChainSSVM(C=1.0, tol=1e-8, max_iter=50000).fit(X, y, lengths)
    est = ChainSSVM(C=1.0, solver="gdmm", max_iter=5000).fit(X, y, lengths)
    assert est.converged_
    assert ref.objective_ <= est.objective_ <= ref.objective_ * 1.01
    assert est.gap_ <= 0.01 * est.objective_
    # the stopping rule's violation bound holds at the last pass (default tol 0.01)
    assert est.consistency_violation_curve_.shape == (est.n_iter_,)
    assert est.consistency_violation_curve_[-1] <= 0.01


@pytest.mark.parametrize("kind", ["chain", "pairwise"])
def test_gdmm_dual_bounds_the_optimum_at_every_pass(kind):
    """At large C (and a small rho) the factor duals stay far from consistent for many passes: the
    reported dual (at the consistent point nearest them) stays below the optimum and the primal at
    every pass, equals the factors' own dual at the consistent start and approaches the optimum;
    on the chain the factors' own dual overshoots the optimum meanwhile (the test has teeth)."""
    from ssvmlinear import MultiLabelSSVM
    from ssvmlinear.models.multilabel import _structure, _fit_edges
    from test_convergence_large_c import random_chains as correlated_chains
    C = 20.0
    if kind == "chain":
        X, y, lengths = correlated_chains(n_seq=30, K=4, seed=1)
        ref = ChainSSVM(C=C, tol=1e-8, max_iter=50000).fit(X, y, lengths)
        st, n = structure(X, y, lengths, 4), len(lengths)
    else:
        X, Y = multilabel_problem(n=30, d=5, K=6, seed=4)
        ref = MultiLabelSSVM(C=C, edges="full", tol=1e-8, max_iter=50000, fit_intercept=False).fit(X, Y)
        st, n = _structure(CSRDataset(X, -1.0), Y, _fit_edges("full", Y), False), 30
    solver = FactorGDMM(st.factor_graph(), np.full(n, C), rho=0.01, eta=0.5, seed=1)
    assert solver.consistent_dual() == solver.dual() == 0.0
    above = below = 0
    for p in range(1000):
        solver.run_pass()
        bound = solver.consistent_dual()
        assert bound <= ref.objective_ * (1 + 1e-9)
        above += solver.dual() > ref.objective_ * (1 + 1e-6)
        below += bound < solver.dual() - 1e-9 * abs(ref.objective_)
        if p % 100 == 0:
            assert bound <= solver.primal()
    assert below > 0
    if kind == "chain":
        assert above > 0
    assert bound >= 0.99 * ref.objective_


def test_gdmm_reported_dual_is_below_its_primal_at_large_c():
    X, y, lengths = random_chains(n_seq=40, K=5, seed=8)
    est = ChainSSVM(C=20.0, solver="gdmm", max_iter=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y, lengths)
    assert np.all(est.dual_curve_ <= est.objective_ * (1 + 1e-12))


@pytest.mark.parametrize("options", [{}, {"use_start_end": True}])
def test_recompute_w_rebuilds_the_weights_from_the_factor_duals(options):
    """recompute_w (Catalyst's v) equals the weights the passes kept up to date at sigma = 1, and
    with sigma < 1 it is v, not the scaled weights."""
    X, y, lengths = random_chains(K=5, seed=3)
    st = structure(X, y, lengths, 5, **options)
    solver = FactorGDMM(st.factor_graph(), np.full(len(lengths), 2.0), seed=1)
    for _ in range(5):
        solver.run_pass()
    w = solver.coef.copy()
    assert np.abs(w).max() > 0
    solver.recompute_w()
    np.testing.assert_allclose(solver.coef, w, atol=1e-10)
    solver.sigma = 0.25
    solver.run_pass()
    scaled = solver.coef.copy()
    solver.recompute_w()
    v = solver.coef.copy()
    assert not np.allclose(v, scaled)
    # the scaled pass moved w by sigma times v's change
    np.testing.assert_allclose(scaled - w, 0.25 * (v - w), atol=1e-10)


def structure(X, y, lengths, K, **kw):
    return ChainStructure(CSRDataset(X), np.asarray(y, dtype=np.int32), lengths, K, **kw)


def unigram_scores(solver, st, X, i, t, K, lengths, start_end):
    """a_t(y) densely: x_t . w_y [+ start/end] + Hamming - rho * messages (from the solver's own
    message sums, checked separately against their definition through the optimum test)."""
    w = solver.coef
    d = X.shape[1]
    s0 = int(np.concatenate([[0], np.cumsum(lengths)])[i])
    a = X[s0 + t].toarray().ravel() @ w[:d * K].reshape(d, K)
    T = lengths[i]
    if start_end:
        if t == 0:
            a = a + w[st.start_off:st.start_off + K]
        if t == T - 1:
            a = a + w[st.end_off:st.end_off + K]
    ytrue = st.py_true_label(i)[t]
    a = a + (np.arange(K) != ytrue) - solver.rho * solver.unigram_messages(i, t)
    return a


@pytest.mark.parametrize("start_end", [False, True])
def test_sampled_unigram_fmo_is_the_argmax_over_its_block_and_support(start_end):
    K, nu = 11, 3
    X, y, lengths = random_chains(n_seq=15, K=K, seed=7)
    st = structure(X, y, lengths, K, use_start_end=start_end)
    solver = FactorGDMM(st.factor_graph(), np.full(len(lengths), 0.7), eta=1.0, fmo_subsets=nu, sublinear=True, seed=1)
    for _ in range(4):
        solver.run_pass()
    for i in range(len(lengths)):
        for t in range(lengths[i]):
            a = unigram_scores(solver, st, X, i, t, K, lengths, start_end)
            for block in range(nu):
                value, tag, support = solver.unigram_fmo(i, t, block)
                lo, hi = block * K // nu, (block + 1) * K // nu
                candidates = sorted(set(range(lo, hi)) | set(support))
                assert value == pytest.approx(a[candidates].max(), abs=1e-10)
                assert a[tag] == pytest.approx(value, abs=1e-10)
            value, tag, _ = FactorGDMM(st.factor_graph(), np.full(len(lengths), 0.7), eta=1.0, sublinear=False).unigram_fmo(i, t, 0)
            assert tag == st.py_true_label(i)[t] or value >= 1.0 - 1e-12   # w = 0: every wrong tag scores 1


def test_multimap_search_equals_a_full_scan():
    K = 9
    X, y, lengths = random_chains(n_seq=30, K=K, seed=11)
    st = structure(X, y, lengths, K)
    rng = np.random.default_rng(0)
    solver = FactorGDMM(st.factor_graph(), np.full(len(lengths), 1.3), eta=1.0, fmo_subsets=2, sublinear=True, seed=3)

    def check():
        assert solver.multimap_consistent()
        W = solver.coef[st.trans_off:st.trans_off + K * K].reshape(K, K)
        for i in range(len(lengths)):
            for t in range(lengths[i] - 1):
                v_map, a, b = solver.pair_fmo(i, t, True)
                v_scan, _, _ = solver.pair_fmo(i, t, False)
                left, right = solver.pair_message_vectors(i, t)
                brute = W + solver.rho * (left[:, None] + right[None, :])
                assert v_scan == pytest.approx(brute.max(), abs=1e-12)
                assert v_map == pytest.approx(v_scan, abs=1e-12)
                assert brute[a, b] == pytest.approx(v_map, abs=1e-12)    # the pair found attains it

    check()
    for _ in range(3):
        solver.run_pass()
        check()
    # random changes of the transition table: positive, negative and back to exactly zero
    for _ in range(5):
        p = rng.choice(K * K, 12, replace=False)
        v = rng.normal(0, 2, 12)
        v[:3] = 0.0
        solver.perturb_transitions(p, v)
        check()
    # a table where every entry is touched and negative: the search must not invent an untouched zero
    solver.perturb_transitions(np.arange(K * K), -1.0 - rng.random(K * K))
    check()


@pytest.mark.parametrize("fmo_subsets", [1, 3])
def test_gdmm_trains_multiclass_through_its_factor_graph(fmo_subsets):
    """Multiclass: one domain variable per example, no consistency constraints: each visit is the
    exact block minimiser over the class's active set and the oracle's answer (the dual never
    decreases), to the optimum SDM reaches, also with the sampled oracle (3 blocks of classes)
    and per-example weights."""
    X = sp.random(60, 8, density=0.5, format="csr", random_state=0)
    y = np.asarray(X @ np.random.RandomState(1).randn(8, 7)).argmax(axis=1)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, 60)
    ref = MulticlassSSVM(C=1.0, tol=1e-9, max_iter=100000).fit(X, y, sample_weight=weights)
    est = MulticlassSSVM(C=1.0, solver=GDMM(fmo_subsets=fmo_subsets), tol=1e-6, max_iter=100000)
    est.fit(X, y, sample_weight=weights)
    assert est.converged_ and est.objective_ == pytest.approx(ref.objective_, rel=1e-5)
    assert est.dual_objective_ == pytest.approx(ref.objective_, rel=1e-5)
    assert np.all(np.diff(est.dual_curve_) >= -1e-9 * abs(est.dual_curve_[-1]))
    assert np.all(est.consistency_violation_curve_ == 0.0)
    kernel = GDMM(fmo_subsets=fmo_subsets).factor_kernel(MulticlassStructure(CSRDataset(X), y.astype(np.int32), 7),
                                                          np.ones(60), 0)
    assert kernel.nu == fmo_subsets and not kernel.binary


def test_gdmm_on_a_hierarchy_is_block_frank_wolfe_with_away_steps():
    """A hierarchy is one factor per example (its oracle runs over the tree): GDMM is block
    Frank-Wolfe with away steps, every step an exact line search (the dual never decreases), to
    the optimum SDM reaches."""
    from ssvmlinear import HierarchicalSSVM
    from test_hierarchy import synthetic
    h, X, y = synthetic(seed=0, n=80, d=6)
    ref = HierarchicalSSVM(h, C=1.0, tol=1e-9, max_iter=100000).fit(X, y)
    est = HierarchicalSSVM(h, C=1.0, solver="gdmm", tol=1e-6, max_iter=100000).fit(X, y)
    assert est.converged_ and est.objective_ == pytest.approx(ref.objective_, rel=1e-5)
    assert np.all(np.diff(est.dual_curve_) >= -1e-9 * abs(est.dual_curve_[-1]))
    assert np.all(est.consistency_violation_curve_ == 0.0)


def test_gdmm_refuses_bad_parameters():
    X, y, lengths = random_chains()
    with pytest.raises(ValueError, match="GDMM: fmo_subsets must be"):
        ChainSSVM(solver=GDMM(fmo_subsets=0)).fit(X, y, lengths)
    with pytest.raises(ValueError, match="GDMM: rho must be"):
        ChainSSVM(solver=GDMM(rho=0.0)).fit(X, y, lengths)


def test_cli_trains_gdmm(tmp_path, capsys):
    from ssvmlinear import dump_svmlight_file
    from ssvmlinear.cli import train_main
    X, y, lengths = random_chains(n_seq=30, K=4, seed=4)
    path = tmp_path / "train.svm"
    dump_svmlight_file(X, y + 1, path, lengths=lengths)
    model = tmp_path / "m"
    assert train_main(["-s", "6", "-F", "2", "-c", "0.5", "-q", str(path), str(model)]) == 0
    # the CLI's model is the API's (same seed: -r 1 is random_state=1)
    from ssvmlinear import load_model
    api = ChainSSVM(C=0.5, solver=GDMM(fmo_subsets=2), random_state=1).fit(X, y + 1, lengths)
    np.testing.assert_allclose(load_model(model)._weight_vector(), api._weight_vector(), rtol=1e-12, atol=1e-12)
    assert train_main(["-s", "0", "-F", "2", str(path), str(model)]) == 1
    assert "-F applies to -s 6" in capsys.readouterr().err


# ------------------------------------------------------------------ fully connected multi-label

def multilabel_problem(n=40, d=6, K=5, seed=0):
    from test_multilabel import random_multilabel
    X, Y = random_multilabel(n=n, d=d, K=K, seed=seed)
    return X, np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.int32)


@pytest.mark.parametrize("fmo_subsets, fit_intercept", [(1, False), (3, True)])
def test_gdmm_reaches_the_lp_relaxed_optimum_on_full_multilabel(fmo_subsets, fit_intercept):
    from ssvmlinear import MultiLabelSSVM
    from test_multilabel_pairwise import feature_rows, qp_reference
    X, Y = multilabel_problem(n=30, seed=1 + fmo_subsets)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, X.shape[0])
    ref = MultiLabelSSVM(C=0.5, edges="full", tol=1e-6, max_iter=20000, fit_intercept=fit_intercept)
    ref.fit(X, Y, sample_weight=weights)
    est = MultiLabelSSVM(C=0.5, edges="full", solver=GDMM(fmo_subsets=fmo_subsets), tol=1e-5, max_iter=100000,
                         fit_intercept=fit_intercept).fit(X, Y, sample_weight=weights)
    assert est.converged_
    assert est.objective_ == pytest.approx(ref.objective_, rel=1e-5)
    assert est.dual_objective_ == pytest.approx(ref.objective_, rel=1e-5)
    assert est.dual_objective_ <= ref.objective_ * (1 + 1e-7)        # a consistent q's dual bounds the LP primal
    dw = est._weight_vector() - ref._weight_vector()
    assert dw @ dw <= 4 * (abs(est.objective_ - ref.objective_) + 1e-6 * ref.objective_)


def test_activation_search_is_the_best_inactive_label_of_its_block():
    """gain(k) = x.w_k + sum over inactive partners b of W_kb(1, 0) - W_kb(0, 0) + loss, against the
    weights written out in the structure's layout."""
    from ssvmlinear.models.multilabel import _structure, _fit_edges
    X, Y = multilabel_problem(n=30, d=5, K=12, seed=3)
    K, nu = 12, 3
    st = _structure(CSRDataset(X, -1.0), Y, _fit_edges("full", Y), False)
    solver = FactorGDMM(st.factor_graph(), np.full(30, 0.8), fmo_subsets=nu, seed=2)
    for _ in range(3):
        solver.run_pass()
    w = solver.coef.copy()
    d = X.shape[1]
    U = w[:d * K].reshape(d, K)
    T = w[d * K:].reshape(-1, 4)
    a_idx, b_idx = np.triu_indices(K, 1)
    Xd = X.toarray()
    checked = 0
    for i in range(30):
        active = set(solver.active_labels(i)[0])
        gain = np.full(K, -np.inf)
        for k in range(K):
            if k in active:
                continue
            g = Xd[i] @ U[:, k] + 1.0
            for e in range(len(a_idx)):
                a, b = a_idx[e], b_idx[e]
                if k == a and b not in active:
                    g += T[e, 2] - T[e, 0]
                elif k == b and a not in active:
                    g += T[e, 1] - T[e, 0]
            gain[k] = g
        for block in range(nu):
            lo, hi = block * K // nu, (block + 1) * K // nu
            value, k = solver.activation_search(i, block)
            if np.isfinite(gain[lo:hi]).any():
                assert value == pytest.approx(gain[lo:hi].max(), abs=1e-9)
                assert gain[k] == pytest.approx(value, abs=1e-9)
                checked += 1
            else:
                assert value < -1e299
    assert checked > 30


@pytest.mark.parametrize("seed", [1, 2])
def test_gdmm_reaches_sdms_optimum_on_tree_multilabel(seed):
    """Edges forming a forest (either orientation): the structure is exact (max-product), so
    GDMM's optimum is the integral problem's, SDM's."""
    from ssvmlinear import MultiLabelSSVM
    from test_multilabel_pairwise import random_forest_edges
    X, Y = multilabel_problem(n=40, d=5, K=7, seed=10 + seed)
    edges = random_forest_edges(np.random.default_rng(seed), 7)
    assert len(edges) >= 3
    ref = MultiLabelSSVM(C=0.7, edges=edges, tol=1e-7, max_iter=50000).fit(X, Y)
    est = MultiLabelSSVM(C=0.7, edges=edges, solver=GDMM(fmo_subsets=2), tol=1e-5, max_iter=100000).fit(X, Y)
    assert ref.converged_ and est.converged_
    assert est.objective_ == pytest.approx(ref.objective_, rel=1e-5)
    assert est.dual_objective_ <= ref.objective_ * (1 + 1e-7)
    dw = est._weight_vector() - ref._weight_vector()
    assert dw @ dw <= 4 * (abs(est.objective_ - ref.objective_) + 1e-6 * ref.objective_)


def test_pair_oracles_answer_a_valid_pair_when_no_score_compares():
    """NaN scores (weights gone non-finite) leave no maximum: the pair FMOs still name a pair of
    the table (0, 0) instead of an unset index the caller would use."""
    K = 5
    X, y, lengths = random_chains(n_seq=4, K=K, seed=2)
    st = structure(X, y, lengths, K)
    for sublinear in (False, True):
        solver = FactorGDMM(st.factor_graph(), np.full(len(lengths), 1.0), eta=1.0,
                            fmo_subsets=2 if sublinear else 1, sublinear=sublinear, seed=0)
        solver.set_weights(np.full(solver.coef.shape[0], np.nan))
        for multimap in ((False, True) if sublinear else (False,)):
            _, a, b = solver.pair_fmo(0, 0, multimap)
            assert 0 <= a < K and 0 <= b < K


def test_fmo_subsets_auto_takes_the_sublinear_oracles_on_large_domains():
    """fmo_subsets="auto" (the default): exact oracles below AUTO_MIN_DOMAIN tags or labels,
    ceil(K / AUTO_BLOCK) blocks from it on (benchmarks/gdmm_auto.py measures where they pay)."""
    from ssvmlinear.solvers.gdmm import AUTO_BLOCK, AUTO_MIN_DOMAIN, auto_subsets
    assert auto_subsets(AUTO_MIN_DOMAIN - 1) == 1
    assert auto_subsets(AUTO_MIN_DOMAIN) == -(-AUTO_MIN_DOMAIN // AUTO_BLOCK) > 1
    for K in (5, AUTO_MIN_DOMAIN):
        X, y, lengths = random_chains(n_seq=3, K=K, seed=0)
        kernel = GDMM().factor_kernel(structure(X, y, lengths, K), np.ones(len(lengths)), 0)
        assert (kernel.nu, kernel.sublinear) == ((1, False) if K < AUTO_MIN_DOMAIN else (auto_subsets(K), True))
    assert GDMM(fmo_subsets=1).factor_kernel(structure(X, y, lengths, K), np.ones(len(lengths)), 0).nu == 1


def test_structures_provide_their_factor_decompositions():
    """A chain: tokens as domain variables over the K tags, the transition table shared, start/end
    weights on the first/last token; pairwise multi-label: labels as binary variables, a table per
    edge; multiclass: one domain variable per example over the classes, no pair table; a
    hierarchy provides none (GDMM's one-factor path)."""
    from ssvmlinear._kernels.factor import FactorGraph
    from ssvmlinear.models.multilabel import _structure, _fit_edges
    X, y, lengths = random_chains(n_seq=6, K=4, seed=1)
    st = structure(X, y, lengths, 4, use_start_end=True, normalize_loss=True)
    g = st.factor_graph()
    assert (g.binary, g.K, g.n_examples, g.n_vars, g.n_weights) == (False, 4, 6, X.shape[0], st.n_weights)
    assert (g.table_off, g.head_off, g.tail_off) == (st.trans_off, st.start_off, st.end_off)
    assert g.structure is st and g.edges.shape == (0, 2)
    assert structure(X, y, lengths, 4).factor_graph().head_off == -1
    Xm, Y = multilabel_problem(n=10, K=5, seed=2)
    mst = _structure(CSRDataset(Xm, -1.0), Y, _fit_edges("full", Y), False)
    h = mst.factor_graph()
    assert (h.binary, h.K, h.n_examples, h.n_vars, h.table_off) == (True, 5, 10, 50, mst.pair_off)
    np.testing.assert_array_equal(h.edges, np.stack(np.triu_indices(5, 1), 1))
    yc = np.arange(10, dtype=np.int32) % 3
    c = MulticlassStructure(CSRDataset(Xm), yc, 3).factor_graph()
    assert (c.binary, c.K, c.n_examples, c.n_vars) == (False, 3, 10, 10)
    assert (c.table_off, c.head_off, c.tail_off) == (-1, -1, -1)
    with pytest.raises(ValueError, match="one per example"):
        FactorGraph(st, st.X, np.concatenate([[0], np.cumsum(lengths)]), y, np.ones(6), 4, False, -1, st.n_weights)
    with pytest.raises(ValueError, match="true states"):
        FactorGraph(st, st.X, [0, 2], [0], [1.0], 4, False, 0, 10)
    with pytest.raises(ValueError, match="edge outside"):
        FactorGraph(mst, mst.X, np.arange(11) * 5, Y, np.ones(10), 5, True, mst.pair_off, mst.n_weights, [[0, 5]])
    kernel = FactorGDMM(h, np.ones(10))
    with pytest.raises(ValueError, match="domain variables"):
        kernel.pair_fmo(0, 0, False)


def test_an_explicit_loose_tol_inside_catalyst_stops_where_its_rule_holds():
    """Inside Catalyst (C R^2 > 10) GDMM's rule is measured at centres whose relative gap is at
    most max(1 %, tol): tol = 0.1 stops before the default fit (which runs to a 1 % gap), with
    the rule's violation bound and a gap within tol; at C = 10, where a pass from a centre keeps
    the block gaps above tol, the default fit's gap rule stops it too, within max_iter."""
    from test_convergence_large_c import random_chains as correlated_chains
    X, y, lengths = correlated_chains(n_seq=60, seed=1)
    default = ChainSSVM(C=1.0, solver="gdmm").fit(X, y, lengths)
    loose = ChainSSVM(C=1.0, solver="gdmm", tol=0.1).fit(X, y, lengths)
    assert default.converged_ and loose.converged_
    assert loose.n_iter_ < default.n_iter_
    assert loose.consistency_violation_curve_[-1] <= 0.1
    assert 0 <= loose.gap_ <= 0.1 * loose.objective_
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = ChainSSVM(C=10.0, solver="gdmm", tol=0.1, max_iter=1000).fit(X, y, lengths)
    assert est.converged_ and 0 <= est.gap_ <= 0.01 * est.objective_


def test_sublinear_gdmm_inside_catalyst_keeps_its_multimaps(monkeypatch):
    """Catalyst mixes the centre into the kernel's weights in place: the transition table's
    multimaps (the sublinear pair oracle's index) must follow, or the pair oracles answer from
    stale values and the fit stalls above the optimum."""
    import ssvmlinear._kernels.gdmm as kernels
    passes = []

    class Checked(kernels.FactorGDMM):
        def run_pass(self, *args, **kwargs):
            assert self.multimap_consistent()
            passes.append(1)
            return super().run_pass(*args, **kwargs)

    monkeypatch.setattr(kernels, "FactorGDMM", Checked)
    X, y, lengths = random_chains(K=5, seed=3)
    # C R^2 far above catalyst.CATALYST_SCALE: GDMM runs inside Catalyst
    est = ChainSSVM(C=40.0, solver=GDMM(fmo_subsets=2), max_iter=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y, lengths)
    assert len(passes) >= 60


def test_gdmm_inside_catalyst_measures_the_slack_less_often_than_it_passes(monkeypatch):
    """GDMM's exact slack is a Viterbi pass: inside Catalyst a centre measures its inner gap
    first after as many passes as the last centre needed, less one, so most passes are not
    followed by one -- and the default fit still reaches SDM's optimum within its gap rule."""
    from ssvmlinear.solvers import gdmm as solver_module
    passes, slacks = [], []
    run_pass, slack_sum = solver_module.GDMMRun.run_pass, solver_module.GDMMRun.slack_sum

    def counted_pass(self):
        passes.append(1)
        return run_pass(self)

    def counted_slack(self):
        slacks.append(1)
        return slack_sum(self)

    monkeypatch.setattr(solver_module.GDMMRun, "run_pass", counted_pass)
    monkeypatch.setattr(solver_module.GDMMRun, "slack_sum", counted_slack)
    X, y, lengths = random_chains(n_seq=60, K=6, seed=5)
    ref = ChainSSVM(C=40.0, tol=1e-8, max_iter=50000).fit(X, y, lengths)
    est = ChainSSVM(C=40.0, solver="gdmm", max_iter=5000).fit(X, y, lengths)
    assert est.converged_ and ref.objective_ <= est.objective_ <= ref.objective_ * 1.01
    assert len(slacks) < 0.75 * len(passes)


def test_gdmm_eta_auto_takes_the_smaller_step_on_large_domains():
    """eta='auto': 0.5 up to AUTO_BLOCK tags, 0.2 above (the larger step stalled above the
    optimum there); a default fit with 80 tags reaches SDM's optimum within its gap rule."""
    from ssvmlinear.solvers.gdmm import AUTO_BLOCK, auto_eta
    assert auto_eta(26) == auto_eta(AUTO_BLOCK) == 0.5 and auto_eta(AUTO_BLOCK + 1) == 0.2
    X, y, lengths = random_chains(n_seq=30, d=12, K=80, seed=4, density=0.5)
    ref = ChainSSVM(C=1.0, tol=1e-8, max_iter=50000).fit(X, y, lengths)
    est = ChainSSVM(C=1.0, solver="gdmm", max_iter=5000).fit(X, y, lengths)
    assert est.converged_ and ref.objective_ <= est.objective_ <= ref.objective_ * 1.01


def test_sampled_oracles_rule_is_confirmed_by_the_exact_duality_gap():
    """With fmo_subsets > 1 the block gaps are over the sampled classes only (a lower bound): an
    explicit tol stops only where the exact relative duality gap is at most tol too."""
    rng = np.random.default_rng(3)
    X = sp.random(600, 40, density=0.2, format="csr", random_state=3)
    y = np.asarray(X @ rng.standard_normal((40, 96))).argmax(axis=1)
    noise = rng.random(600) < 0.2
    y[noise] = rng.integers(0, 96, size=int(noise.sum()))
    for tol in (0.1, 0.03):
        est = MulticlassSSVM(C=1.0, solver=GDMM(fmo_subsets=8), tol=tol, fit_intercept=False, max_iter=20000)
        est.fit(X, y)
        assert est.converged_
        assert est.objective_ - est.dual_objective_ <= tol * est.objective_
