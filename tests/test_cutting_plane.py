"""One-slack cutting plane: the QP kernel vs scipy, optima vs SDM / LSE-SDCD, n_jobs invariance."""
import numpy as np
import pytest
from scipy.optimize import minimize

from ssvmlinear import ChainSSVM, MulticlassSSVM
from ssvmlinear._kernels.qp import solve_simplex_qp
from ssvmlinear.solvers import SDCD, SDM, CuttingPlane, Pegasos, solve

from conftest import random_multiclass
from test_chain_oracles import random_chain_problem


@pytest.mark.parametrize("seed", range(8))
def test_simplex_qp_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 12))
    F = rng.standard_normal((m, int(rng.integers(1, 8))))  # rank-deficient H is allowed
    H = F @ F.T
    b = rng.standard_normal(m) * 3
    total = float(rng.uniform(0.1, 5))
    beta, _ = solve_simplex_qp(H, b, None, total, 1e-13)
    assert beta.min() >= 0 and beta.sum() == pytest.approx(total, rel=1e-12)
    f = lambda x: 0.5 * x @ H @ x - b @ x
    ref = minimize(f, np.full(m, total / m), jac=lambda x: H @ x - b, method="SLSQP", bounds=[(0, None)] * m,
                   constraints=[{"type": "eq", "fun": lambda x: x.sum() - total, "jac": lambda x: np.ones(m)}],
                   options={"ftol": 1e-15, "maxiter": 1000})
    assert f(beta) <= ref.fun + 1e-9 * max(1.0, abs(ref.fun))
    assert f(beta) == pytest.approx(ref.fun, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("C", [0.1, 1.0])
def test_cutting_plane_reaches_the_sdm_optimum_on_multiclass(seed, C):
    X, y = random_multiclass(n=80, d=8, K=4, seed=seed)
    sdm = MulticlassSSVM(C=C, tol=1e-8, max_iter=100000).fit(X, y)
    tol = 1e-4
    cp = MulticlassSSVM(C=C, solver="cutting-plane", tol=tol, max_iter=10000).fit(X, y)
    assert cp.converged_
    # SDM's dual is a lower bound of every primal value (SDM's own primal may be above the CP's)
    assert sdm.dual_objective_ - 1e-9 <= cp.objective_ <= sdm.objective_ + tol * C * X.shape[0] + 1e-9
    assert cp.dual_objective_ <= sdm.objective_ + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_cutting_plane_reaches_the_sdm_optimum_on_chains(seed):
    st, D, y, lengths, _ = random_chain_problem(seed, n_seq=12, max_T=5, K=3)
    Cs = np.full(len(lengths), 0.5)
    sdm = solve(SDM(), st, Cs, 1e-9, 100000, 0)
    cp = solve(CuttingPlane(), st, Cs, 1e-5, 10000)
    assert cp.converged
    # cp.primal is a true primal (weak duality: not below SDM's dual), within CP's tolerance of
    # SDM's near-optimal primal (which is optimal to ~1e-9 only, so it is no lower bound)
    assert sdm.dual - 1e-9 <= cp.primal <= sdm.primal + 1e-5 * Cs.sum() + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_lse_cutting_plane_matches_lse_sdcd(seed):
    # with exact violators both reach the optimum of the full LSE problem (OP3)
    st, D, y, lengths, _ = random_chain_problem(seed, n_seq=5, max_T=3, K=3)
    Cs = np.full(len(lengths), 0.3)
    sdcd = solve(SDCD(exact_violators=True), st, Cs, 1e-14, 100000, 0, loss="lse")
    cp = solve(CuttingPlane(exact_violators=True), st, Cs, 1e-7, 10000, loss="lse")
    assert cp.converged
    assert cp.dual == pytest.approx(sdcd.dual, rel=1e-5)


def test_lse_cutting_plane_iterates_over_the_caches_between_oracle_passes():
    # Alg. 1's type-II iterations: at a tight tolerance most iterations re-optimise over the
    # label caches (no oracle pass), at most MAX_TYPE2 in a row, and the run still converges
    from ssvmlinear.solvers.cutting_plane import MAX_TYPE2
    st, D, y, lengths, _ = random_chain_problem(1, n_seq=8, max_T=4, K=3)
    Cs = np.full(len(lengths), 0.3)
    cp = solve(CuttingPlane(), st, Cs, 1e-7, 10000, loss="lse")
    assert cp.converged
    assert cp.n_cache_passes > 0
    assert cp.n_oracle_passes < cp.n_iter
    assert cp.n_iter <= (MAX_TYPE2 + 1) * cp.n_oracle_passes


def test_lse_cutting_plane_on_multiclass_closes_the_gap():
    X, y = random_multiclass(n=60, d=6, K=4, seed=5)
    cp = MulticlassSSVM(C=0.5, solver="cutting-plane", loss="lse", tol=1e-6, max_iter=10000).fit(X, y)
    sdcd = MulticlassSSVM(C=0.5, solver="sdcd", loss="lse", tol=1e-14, max_iter=100000).fit(X, y)
    assert cp.objective_ == pytest.approx(sdcd.objective_, rel=1e-4)


@pytest.mark.parametrize("loss", ["margin", "lse"])
def test_results_identical_for_any_n_jobs(loss):
    X, y = random_multiclass(n=300, d=10, K=5, seed=2)
    a = MulticlassSSVM(C=1.0, solver="cutting-plane", loss=loss, tol=1e-3, n_jobs=1).fit(X, y)
    b = MulticlassSSVM(C=1.0, solver="cutting-plane", loss=loss, tol=1e-3, n_jobs=2).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_) and a.n_iter_ == b.n_iter_


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_joblib_backend_from_the_caller(backend):
    """A thread backend from parallel_config is used; a process backend cannot share the oracle
    phase's memory, so that phase runs on threads -- with the same result either way."""
    from joblib import parallel_config
    X, y = random_multiclass(n=200, d=10, K=5, seed=4)
    ref = MulticlassSSVM(C=1.0, solver="cutting-plane", tol=1e-3, n_jobs=1).fit(X, y)
    with parallel_config(backend=backend, n_jobs=2):
        other = MulticlassSSVM(C=1.0, solver="cutting-plane", tol=1e-3, n_jobs=2).fit(X, y)
    assert np.array_equal(ref.coef_, other.coef_)


def test_cross_validation_folds_run_on_a_process_backend():
    from joblib import parallel_config
    from ssvmlinear.model_selection import cross_val_predict
    X, y = random_multiclass(n=120, d=8, K=3, seed=6)
    ref = cross_val_predict(MulticlassSSVM(), X, y, 3, seed=0, n_jobs=1)
    with parallel_config(backend="loky"):
        other = cross_val_predict(MulticlassSSVM(), X, y, 3, seed=0, n_jobs=2)
    assert np.array_equal(ref, other)


def test_slack_rescaling_cutting_plane():
    """Slack rescaling with the 0/1 loss is margin rescaling: the slack CP reaches SDM's optimum;
    on chains the slack CP (exact search) and slack Pegasos agree, and the CP's gap closes."""
    import warnings
    from ssvmlinear import ChainSSVM
    from ssvmlinear.exceptions import ConvergenceWarning
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 5))
    y = np.argmax(X[:, :3] + 0.5 * rng.standard_normal((150, 3)), axis=1)
    sdm = MulticlassSSVM(C=1.0, tol=1e-6).fit(X, y)
    tol = 1e-4
    cp = MulticlassSSVM(C=1.0, solver=CuttingPlane(search="exact"), loss="slack", tol=tol,
                        max_iter=3000).fit(X, y)
    assert cp.converged_
    assert sdm.objective_ - 1e-6 <= cp.objective_ <= sdm.objective_ + tol * 150
    # chains: exact and angular searches, against Pegasos on the same surrogate
    rng = np.random.default_rng(1)
    lengths = rng.integers(2, 5, 25)
    n = int(lengths.sum())
    yc = rng.integers(0, 3, n)
    Xc = rng.standard_normal((n, 4)) + np.eye(3, 4)[yc]
    kw = dict(C=0.2, loss="slack", tol=1e-4, max_iter=3000)
    ex = ChainSSVM(solver=CuttingPlane(search="exact"), **kw).fit(Xc, yc, lengths)
    an = ChainSSVM(solver=CuttingPlane(search="angular"), **kw).fit(Xc, yc, lengths)
    assert ex.converged_ and ex.gap_ <= 1e-4 * 0.2 * 25 + 1e-9
    assert an.objective_ == pytest.approx(ex.objective_, rel=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        peg = ChainSSVM(C=0.2, solver=Pegasos(search="exact"), loss="slack", max_iter=400,
                        tol=1e-12, random_state=0).fit(Xc, yc, lengths)
    assert ex.objective_ - 1e-6 <= peg.objective_ <= ex.objective_ * 1.03
    with pytest.raises(ValueError, match="convex in the margin"):
        MulticlassSSVM(solver="cutting-plane", loss="probloss").fit(X, y)


@pytest.mark.parametrize("seed", range(6))
def test_active_set_qp_matches_smo_and_scipy(seed):
    """The active-set phase (then SMO) reaches the same optimum, also with a zero row (the unused
    budget), a rank-deficient H and nearly parallel rows (the cutting plane's working sets)."""
    rng = np.random.default_rng(100 + seed)
    m = int(rng.integers(3, 40))
    F = rng.standard_normal((m, int(rng.integers(1, 60))))
    F[1:m // 2] = F[1] + 1e-4 * F[1:m // 2]       # nearly parallel cutting planes
    F[0] = 0.0
    H = F @ F.T
    b = rng.standard_normal(m) * 3
    b[0] = 0.0
    f = lambda x: 0.5 * x @ H @ x - b @ x
    smo, _ = solve_simplex_qp(H, b, None, 1.0, 1e-13)
    act, steps = solve_simplex_qp(H, b, None, 1.0, 1e-13, active_set=True)
    assert act.min() >= 0 and act.sum() == pytest.approx(1.0, abs=1e-12)
    assert f(act) <= f(smo) + 1e-9 * max(1.0, abs(f(smo)))
    g = H @ act - b                                 # KKT on the simplex: equal gradients on the support
    assert g.min() >= g[act > 0].max() - 1e-8 * max(1.0, np.abs(g).max())


@pytest.mark.parametrize("seed", range(6))
def test_active_set_qp_takes_over_from_a_singular_support(seed):
    """A warm start whose support is affinely dependent (more planes than the weights' dimension
    + 1, as SMO leaves them) makes the face's system singular: the active-set method restarts
    from the best vertex instead of leaving the solve to SMO's first-order steps."""
    rng = np.random.default_rng(seed)
    d, m = 4, 30
    A = rng.standard_normal((m, d))
    A[:, 0] = 3.0 + 1e-2 * rng.standard_normal(m)     # nearly parallel planes
    A[0] = 0.0
    b = 10.0 + rng.standard_normal(m)
    b[0] = 0.0
    H = A @ A.T
    f = lambda x: 0.5 * x @ H @ x - b @ x
    warm, steps = solve_simplex_qp(H, b, np.full(m, 1.0 / m), 1.0, 1e-12, active_set=True)
    cold, _ = solve_simplex_qp(H, b, None, 1.0, 1e-12, active_set=True)
    assert steps == 0
    assert f(warm) == pytest.approx(f(cold), abs=1e-12)


def test_one_slack_qp_working_set():
    """OneSlackQP: the Gram matrix, w = A' beta, xi and the dual agree with a direct evaluation;
    constraints are dropped only after `inactive_after` solves with beta = 0; the final solution
    is the restricted problem's optimum (primal = dual), and solving the QP over every constraint
    ever added from scratch gives the same optimum."""
    from ssvmlinear._kernels.qp import OneSlackQP
    rng = np.random.default_rng(0)
    d = 7
    qp = OneSlackQP(d, inactive_after=3)
    rows, bs = [np.zeros(d)], [0.0]
    for it in range(40):
        a = rng.standard_normal(d) * 2
        b = float(rng.uniform(0, 5))
        rows.append(a), bs.append(b)
        xi, dual = qp.add(a, b)
        A, B, beta = qp.rows(), qp.rhs(), qp.beta_()
        assert qp.gram() == pytest.approx(A @ A.T, abs=1e-12)
        assert np.all(beta >= 0) and beta.sum() == pytest.approx(1.0, abs=1e-12)
        assert qp.w == pytest.approx(beta @ A, abs=1e-12)
        assert xi == pytest.approx(max(0.0, np.max(B[1:] - A[1:] @ qp.w)), abs=1e-9)
        assert dual == pytest.approx(beta @ B - 0.5 * qp.w @ qp.w, abs=1e-9)
        assert 0.5 * qp.w @ qp.w + xi == pytest.approx(dual, abs=1e-8)
    assert qp.n_dropped > 0 and qp.n_constraints + qp.n_dropped == 40
    A, B = np.array(rows), np.array(bs)
    full, _ = solve_simplex_qp(A @ A.T, B, None, 1.0, 1e-13, active_set=True)
    assert full @ B - 0.5 * (full @ A) @ (full @ A) == pytest.approx(qp.dual, abs=1e-6)


@pytest.mark.parametrize("lse", [False, True])
def test_running_accumulators_match_a_rebuild(lse):
    """Cache passes only apply the labels that enter or leave the constraint; after a sequence of
    iterates the running constraint equals one built from scratch, and hsum = b - w . a."""
    from ssvmlinear._kernels.cuttingplane import OneSlackOracle
    st, D, y, lengths, w0 = random_chain_problem(3, n_seq=30, max_T=6, K=4)
    n = len(lengths)
    rng = np.random.default_rng(1)
    Cs = rng.uniform(0.1, 1.0, n)
    bounds = np.array([0, 7, 7, 19, n])                 # uneven chunks, one empty
    run = OneSlackOracle(st, Cs, lse, 3, False, bounds)
    a, a2 = np.zeros(st.n_weights), np.zeros(st.n_weights)
    for k in range(25):
        w = w0 * rng.uniform(0.0, 2.0) + 0.3 * rng.standard_normal(st.n_weights)
        if k % 5 == 0:                                  # type-I: new labels join the caches
            for c in range(len(bounds) - 1):
                run.pass_chunk(w, c, True, False)
            b, hs, calls = run.collect(a)
            assert calls == n
        else:
            b, hs, calls = run.cache_pass(w, a)
            assert calls == 0
        assert hs == pytest.approx(b - w @ a, rel=1e-12, abs=1e-12)
        fresh = OneSlackOracle(st, Cs, lse, 3, False, bounds)
        fresh.set_caches(run.get_caches())
        b2, hs2, _ = fresh.cache_pass(w, a2)
        assert np.allclose(a, a2, rtol=0, atol=1e-12) and b == pytest.approx(b2) and hs == pytest.approx(hs2)
    assert run.n_changes > 0
    if not lse:
        assert run.cache_sizes().max() <= 3               # ring caches


def test_cutting_plane_on_seeded_working_sets_matches_sdcd():
    """LSE on chains: with the oracle off, the cutting plane solves the problem restricted to the
    working sets it was given (the paper's OP5); seeded with LSE-SDCD's, both reach one optimum."""
    st, D, y, lengths, _ = random_chain_problem(7, n_seq=25, max_T=6, K=4)
    Cs = np.full(len(lengths), 0.2)
    sdcd = solve(SDCD(), st, Cs, 1e-12, 100000, 0, loss="lse", keep_state=True)
    tol = 1e-6
    cp = solve(CuttingPlane(init_caches=sdcd.state, oracle=False), st, Cs, tol, 100000, loss="lse")
    assert cp.converged and cp.n_oracle_calls == 0
    assert cp.working_set_size == int(np.sum(sdcd.state["loss"] > 0))
    assert cp.dual - 1e-9 <= cp.primal <= cp.dual + tol * Cs.sum() + 1e-9
    assert cp.primal == pytest.approx(sdcd.dual, rel=1e-6)


@pytest.mark.parametrize("lse", [False, True])
def test_line_pass_slopes_rebuild_the_caches_loss_along_the_line(lse):
    """OCAS's line search: the breakpoints and slope jumps line_pass reports reproduce the caches'
    loss sum_i C_i loss_i(w + t d) at every t in [0, t_max] (read by a cache pass there), and
    line_minimum's step is the minimum of 1/2 ||w + t d||^2 plus that loss on a fine grid."""
    from ssvmlinear._kernels.cuttingplane import OneSlackOracle
    from ssvmlinear.solvers.cutting_plane import line_minimum
    st, D, y, lengths, w0 = random_chain_problem(4, n_seq=30, max_T=6, K=4)
    n = len(lengths)
    rng = np.random.default_rng(2)
    Cs = rng.uniform(0.1, 1.0, n)
    bounds = np.array([0, 7, 7, 19, n])
    orc = OneSlackOracle(st, Cs, lse, 4, False, bounds)
    a = np.zeros(st.n_weights)
    for k in range(4):                                  # fill the caches from a few points
        orc.run_pass(w0 * rng.uniform(0.0, 1.5) + 0.5 * rng.standard_normal(st.n_weights), True)
    w = 0.3 * w0 + 0.2 * rng.standard_normal(st.n_weights)
    d = w0 - w + 0.3 * rng.standard_normal(st.n_weights)
    t_max = 2.0
    orc.line_pass(w, d, t_max)
    slope0, t, jump = orc.lines()
    assert slope0.shape == (len(bounds) - 1,) and t.shape == jump.shape and np.all((t >= 0) & (t <= t_max))
    assert t.size >= 5 and np.all(jump > 0)             # convex: the slope only rises
    loss0 = orc.cache_pass(w, a)[1]
    grid = np.linspace(0.0, t_max, 801)
    loss = np.array([orc.cache_pass(w + s * d, a)[1] for s in grid])
    rebuilt = loss0 + slope0.sum() * grid + np.array([np.sum(jump * np.maximum(s - t, 0.0)) for s in grid])
    assert np.allclose(rebuilt, loss, rtol=1e-10, atol=1e-9)
    obj = 0.5 * np.array([(w + s * d) @ (w + s * d) for s in grid]) + loss
    s = line_minimum(float(w @ d), float(d @ d), float(slope0.sum()), t, jump, t_max)
    assert 0.0 <= s <= t_max
    at_s = 0.5 * (w + s * d) @ (w + s * d) + orc.cache_pass(w + s * d, a)[1]
    assert at_s <= obj.min() + 1e-9 * max(1.0, abs(obj.min()))


def test_line_minimum_cases():
    """Edges of the sweep: no breakpoints, a minimum at a kink, at 0, clipped at t_max."""
    from ssvmlinear.solvers.cutting_plane import line_minimum
    empty = np.zeros(0)
    assert line_minimum(-2.0, 1.0, 0.0, empty, empty, 5.0) == pytest.approx(2.0)
    assert line_minimum(-2.0, 1.0, 0.0, empty, empty, 1.5) == pytest.approx(1.5)
    assert line_minimum(1.0, 1.0, -0.5, empty, empty, 5.0) == 0.0
    # derivative -2 + s - 3 before 1, -2 + s + 2 after: the kink at 1 is the minimum
    assert line_minimum(-2.0, 1.0, -3.0, np.array([1.0]), np.array([5.0]), 5.0) == pytest.approx(1.0)
    # two jumps, the root between them: -4 + s - 1 (s < 1), -4 + s + 0 (1 <= s < 3.5)
    assert line_minimum(-4.0, 1.0, -1.0, np.array([3.5, 1.0]), np.array([2.0, 1.0]), 10.0) == pytest.approx(3.5)
    assert line_minimum(-3.5, 1.0, -1.0, np.array([3.5, 1.0]), np.array([2.0, 1.0]), 10.0) == pytest.approx(3.5)
    assert line_minimum(-3.0, 1.0, -1.0, np.array([3.5, 1.0]), np.array([2.0, 1.0]), 10.0) == pytest.approx(3.0)


@pytest.mark.parametrize("search", ["sarawagi", "binary", "bisecting"])
def test_inexact_searches_report_the_exact_objective(search):
    """A search that may miss the most violating label measures too small a primal along the way
    (Sarawagi's stopped at 134 on this problem, below the optimum of 171.9): the objective the fit
    reports is measured with the exact search, so it is never below the optimum, and its gap is
    the true one."""
    import warnings
    from ssvmlinear import ConvergenceWarning, MultiLabelSSVM
    from ssvmlinear.solvers import CuttingPlane
    from test_multilabel import random_multilabel
    X, Y = random_multilabel(n=80, d=6, K=5, seed=1)
    ref = MultiLabelSSVM(C=1.0, loss="slack", solver=CuttingPlane(search="exact"), tol=1e-4).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = MultiLabelSSVM(C=1.0, loss="slack", solver=CuttingPlane(search=search), tol=1e-3).fit(X, Y)
    assert est.objective_ >= ref.dual_objective_ * (1 - 1e-9)
    assert est.objective_ >= ref.objective_ * (1 - 1e-3)
    assert est.gap_ == pytest.approx(est.objective_ - est.dual_objective_)


def test_one_slack_qp_updates_its_face_factor():
    """OneSlackQP's active-set method updates the Cholesky factor of its face as indices join or
    leave, carried from one solve to the next: over a run whose face holds most of a hundred-odd
    nearly parallel constraints (the LSE cutting plane's working sets at tight tolerance), its
    factor work stays near that of a few factorisations per solve's changes, far below
    refactorising the face every round (|F|^3 / 6 each), and the optimum is unchanged."""
    from ssvmlinear._kernels.qp import OneSlackQP
    rng = np.random.default_rng(3)
    d, n_add = 400, 120
    base = rng.standard_normal(d)
    qp = OneSlackQP(d, inactive_after=1000)
    rows, bs = [np.zeros(d)], [0.0]
    faces = []
    for it in range(n_add):
        a = base + 0.3 * rng.standard_normal(d)
        b = float(a @ base) * 0.5 + rng.uniform(0, 1)
        rows.append(a), bs.append(b)
        qp.add(a, b)
        faces.append(int((qp.beta_() > 0).sum()))
    assert max(faces) > 40
    refactor_every_round = sum(f ** 3 / 6 for f in faces)
    assert qp.factor_work < refactor_every_round / 5
    A, B = np.array(rows), np.array(bs)
    full, _ = solve_simplex_qp(A @ A.T, B, None, 1.0, 1e-13, active_set=True)
    assert full @ B - 0.5 * (full @ A) @ (full @ A) == pytest.approx(qp.dual, rel=1e-9)
