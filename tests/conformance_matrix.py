"""The conformance matrix: every structure x loss x search x solver, each cell refused before any
work or trained to its problem's optimum, checked against references written here.

A cell is (structure, loss, search, solver). Its fit either raises one ValueError before the
solver starts (`refused`), or trains; then

* the primal objective at the returned weights is recomputed by brute force: every labelling of
  each (tiny) example enumerated, the surrogate psi(h, g) applied to each with the formulas of
  SPEC's table written again here. Where the trained problem is over a convex set of labels, the
  maximum is taken over that set: the convex hull of the labels' (m, Delta) points for
  search='hull', and the local polytope of the LP relaxation for edges='full' (its support points
  found by scipy's linprog over the polytope written here);
* `objective_` must equal it (the model's objective is its primal);
* it must equal the problem's optimum within the solver's tolerance: for integral problems the
  optimum of the epigraph problem min 1/2 |w|^2 + sum_i C_i xi_i, xi_i >= psi(h_y(w), g_y) for
  every enumerated label y, by scipy's SLSQP (for LSE the sum over the labels); for the convex
  relaxations (hull, LP) the best objective of the cells that search that problem exactly.

Cells whose search is a heuristic for the loss (binary, bisecting, sarawagi, hull-integral, none;
angular, which the solvers stop within 0.1 % of its bound, and whose exactness beyond slack
rescaling needs 1 + m > 0) are `approximate`: their objective must be honest and
no lower than the optimum, and the table shows how far above it they stop. ProbLoss is not convex:
its cells (Pegasos only) are checked for an honest objective.

`python benchmarks/conformance.py` prints the table; tests/test_conformance_matrix.py runs a seeded
sample on every run and the whole matrix with --matrix-full.
"""
import functools
import itertools
import math
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog, minimize, minimize_scalar
from scipy.stats import norm

STRUCTURES = ("multiclass", "chain", "chain-weighted", "multilabel", "multilabel-tree", "multilabel-full", "hierarchy-nhsvm",
              "hierarchy-hsvm", "hierarchy-flat", "hierarchy-shared")
LOSSES = ("margin", "slack", "beta:0.5", "generalized:0,0.5", "probloss", "probloss-convex", "logloss", "microf1",
          "lse")
SEARCHES = ("none", "exact", "binary", "bisecting", "angular", "hull", "hull-integral", "sarawagi")
SOLVERS = ("sdm", "sdcd", "cutting-plane", "bcfw", "gdmm", "pegasos")
SEARCHING = ("cutting-plane", "bcfw", "pegasos")      # the solvers with a search parameter

# The primal's relative distance to the optimum each solver reaches (tests/test_conformance.py):
# linear convergence for the dual methods and the cutting plane, O(1/t) for BCFW, stochastic
# subgradients for Pegasos (O(1/t): its budget is 10,000 epochs, where the hierarchies reach 1 %).
REL_TOL = {"bcfw": 5e-4, "pegasos": 1e-2, "sdcd": 1e-5}
MAX_ITER = {"pegasos": 10000}
OBJECTIVE_TOL = 1e-6     # objective_ against the brute-force primal at the same weights
APPROXIMATE_MAX_ITER = 2000     # the passes of a cell whose search is a heuristic


def cells():
    """Every cell of the matrix: (structure, loss, search, solver); search None for solvers without one."""
    out = []
    for st in STRUCTURES:
        for loss in LOSSES:
            for solver in SOLVERS:
                for search in (SEARCHES if solver in SEARCHING else (None,)):
                    out.append((st, loss, search, solver))
    return out


# --------------------------------------------------------------------------------- problems

def _planted_X(n, d, seed):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.7, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    return X, rng


@functools.lru_cache(maxsize=None)
def problem(structure):
    """(estimator class, fit arguments, estimator parameters) of the structure's tiny problem."""
    from ssvmlinear import ChainSSVM, HierarchicalSSVM, MulticlassSSVM, MultiLabelSSVM
    if structure == "multiclass":
        X, rng = _planted_X(10, 3, 0)
        y = np.argmax(X @ rng.standard_normal((3, 3)) + 0.7 * rng.standard_normal((10, 3)), axis=1)
        y[:3] = [0, 1, 2]
        return MulticlassSSVM, (X, y), {}
    if structure.startswith("chain"):      # chain-weighted: per-tag weights on the Hamming loss
        X, rng = _planted_X(9, 3, 1)
        y = rng.integers(0, 3, 9)
        y[:3] = [0, 1, 2]
        weights = {"class_weight": {0: 2.5, 2: 0.5}} if structure == "chain-weighted" else {}
        return ChainSSVM, (X, y, [3, 2, 2, 2]), {"outside_tag": 0, **weights}
    if structure.startswith("multilabel"):
        X, rng = _planted_X(10, 3, 2)
        Y = (X @ rng.standard_normal((3, 3)) + 0.8 * rng.standard_normal((10, 3)) > 0).astype(int)
        Y[0] = [1, 1, 0]
        Y[1] = [0, 0, 1]
        edges = {"multilabel": None, "multilabel-tree": np.array([[0, 1], [1, 2]]), "multilabel-full": "full"}
        return MultiLabelSSVM, (X, Y), {"edges": edges[structure]}
    X, rng = _planted_X(10, 3, 3)
    leaves = np.array([3, 4, 5, 6])
    y = leaves[rng.integers(0, 4, 10)]
    y[:4] = leaves
    return HierarchicalSSVM, (X, y), {"hierarchy": ([0, 0, 1, 1, 2, 2], [1, 2, 3, 4, 5, 6]),
                                      "model": structure.split("-")[1]}


def estimator(cell, tol=1e-10):
    from ssvmlinear.registry import SOLVERS as REGISTERED
    structure, loss, search, solver = cell
    cls, _, params = problem(structure)
    solver_params = {"search": search} if search is not None else {}
    if loss == "lse":
        solver_params["exact_violators"] = True
    try:
        solver_obj = REGISTERED[solver].solver_class()(**solver_params)
    except TypeError:      # a parameter the solver does not have: the estimator refuses the name
        solver_obj = REGISTERED[solver].solver_class()()
    # a heuristic search need not converge to tol: its cells get the budget its objective is judged at
    max_iter = APPROXIMATE_MAX_ITER if approximate(cell) else MAX_ITER.get(solver, 20000)
    return cls(C=1.0, loss=loss, solver=solver_obj, tol=tol, max_iter=min(max_iter, MAX_ITER.get(solver, 20000)),
               random_state=0, **params)


# ----------------------------------------------------------------------- the fit, observed

class WorkStarted(Exception):
    pass


def observed_fit(est, fit_args):
    """Fit est; returns (error or None, whether the solver started, structure, Cs, w) of its last solve."""
    from ssvmlinear.exceptions import ConvergenceWarning
    from ssvmlinear.models.base import Model
    from ssvmlinear.solvers.solver import Solver
    seen = {"started": False}
    original_solve, original_start = Model._solve, Solver.start

    def solve(self, structure, Cs, warm_key, primal=None):
        w = original_solve(self, structure, Cs, warm_key, primal)
        seen.update(structure=structure, Cs=np.asarray(Cs, dtype=np.float64), w=np.array(w))
        return w

    def start(self, problem_):
        seen["started"] = True
        return original_start(self, problem_)
    Model._solve, Solver.start = solve, start
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(*fit_args)
        error = None
    except ValueError as e:
        error = e
    except Exception as e:       # anything else is a failure of the cell, reported as one
        error = e
        seen["started"] = True
    finally:
        Model._solve, Solver.start = original_solve, original_start
    return error, seen["started"], seen.get("structure"), seen.get("Cs"), seen.get("w")


# ------------------------------------------------------------------- brute-force references

def psi(loss, h, g):
    """The surrogates of SPEC's table, written again: h = m (the margin), g = Delta."""
    h, g = np.asarray(h, dtype=float), np.asarray(g, dtype=float)
    name, _, arg = loss.partition(":")
    if name == "margin":
        return h + g
    pos = g > 0
    gs = np.where(pos, g, 1.0)
    if name == "slack":
        v = g * (1 + h)
    elif name == "beta":
        v = h * gs ** float(arg) + g
    elif name == "generalized":
        a, b = (float(t) for t in arg.split(","))
        v = h * gs ** b + gs ** a
    elif name in ("probloss", "probloss-convex"):
        sigma = np.sqrt(2 * gs / math.pi)
        v = 2 * g * norm.cdf(h / sigma)
        if name == "probloss-convex":
            v = np.where(h <= 0, v, g + np.sqrt(gs) * h)
    elif name == "logloss":
        v = g * np.logaddexp(0.0, h)
    else:
        raise ValueError(loss)
    return np.where(pos, v, 0.0)


def dphi(st, i, y):
    """phi(x_i, y_i) - phi(x_i, y) from the structure's joint feature map."""
    d = np.zeros(st.n_weights)
    st.py_update(d, i, 1.0, np.ascontiguousarray(y, dtype=np.int32))
    return d


def labels_of(structure, st, i, n_classes):
    """Every integral label of example i, as the structure encodes it."""
    if structure == "multiclass" or structure.startswith("hierarchy"):
        return [np.array([k]) for k in range(n_classes)]
    if structure.startswith("chain"):
        T = st.py_true_label(i).shape[0]
        return [np.array(c) for c in itertools.product(range(n_classes), repeat=T)]
    ys = [np.array(c) for c in itertools.product(range(2), repeat=n_classes)]
    if structure == "multilabel-full":
        return [np.asarray(st.encode(y.astype(float)), dtype=np.int32) for y in ys]
    return ys


def points(structure, st, i, n_classes):
    """(labels, D, Delta, extra) of example i: D[j] = dphi of label j (so m_j = -w . D[j]);
    extra = (Hamming, |y| + |y_i|) per label for Micro-F1."""
    yi = st.py_true_label(i)
    labs = labels_of(structure, st, i, n_classes)
    D = np.array([dphi(st, i, y) for y in labs])
    G = np.array([st.py_loss(i, np.ascontiguousarray(y, dtype=np.int32)) for y in labs])
    if structure.startswith("chain"):      # the sets: (position, tag) of the tags other than the outside tag 0
        H = np.array([float(np.sum((y != yi) * ((y != 0).astype(int) + (yi != 0)))) for y in labs])
        sizes = np.array([float(np.sum(y != 0) + np.sum(yi != 0)) for y in labs])
    elif structure.startswith("multilabel"):
        k = n_classes
        H = np.array([float(np.sum(y[:k] != yi[:k])) for y in labs])
        sizes = np.array([float(np.sum(y[:k]) + np.sum(yi[:k])) for y in labs])
    else:
        H = sizes = None
    return labs, D, G, (H, sizes)


def upper_chain(P):
    """The vertices of the convex hull of points P (m, Delta) that maximise m + lam Delta for
    some lam >= 0, from the largest m to the largest Delta (Andrew's monotone chain, upper part,
    in coordinates (Delta, m))."""
    Q = np.unique(np.round(P[:, ::-1], 12), axis=0)      # (Delta, m), sorted by Delta then m
    hull = []
    for q in Q:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (q[1] - y1) - (y2 - y1) * (q[0] - x1) >= 0:    # not a right turn: pop
                hull.pop()
            else:
                break
        hull.append(tuple(q))
    best = int(np.argmax([m for _, m in hull]))       # the chain's part right of its highest point
    return np.array([(m, d) for d, m in hull[best:]])


def max_over_hull(loss, P, samples=401):
    """max of psi over the convex hull of the points P (m, Delta) (psi grows with m, and with
    Delta where it is positive, so the maximum lies on the upper-right chain): a grid on each
    segment, refined by a bounded scalar search around its best point."""
    chain = upper_chain(P)
    best = float(np.max(psi(loss, P[:, 0], P[:, 1])))
    t = np.linspace(0.0, 1.0, samples)
    for a, b in zip(chain[:-1], chain[1:]):
        f = lambda s: float(psi(loss, a[0] + s * (b[0] - a[0]), a[1] + s * (b[1] - a[1])))
        vals = [f(s) for s in t]
        k = int(np.argmax(vals))
        lo, hi = t[max(k - 1, 0)], t[min(k + 1, samples - 1)]
        r = minimize_scalar(lambda s: -f(s), bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
        best = max(best, vals[k], -float(r.fun))
    return best


def local_polytope_points(st, i, w, K, edges, labs, D, G):
    """(m, Delta) support points of the LP relaxation's local polytope for example i: m and Delta
    are affine in the marginals (fitted on the integral labels), maximised by linprog."""
    E = len(edges)
    L = np.array(labs, dtype=float)
    Y = L[:, :K] / L.max()      # the integral labels' states (the encoding's unit is its largest entry)
    pairs = np.array([[y[a] * y[b] for a, b in edges] for y in Y])
    A = np.hstack([np.ones((len(Y), 1)), Y, pairs])
    m = -(D @ w)
    cm, *_ = np.linalg.lstsq(A, m, rcond=None)
    cg, *_ = np.linalg.lstsq(A, G, rcond=None)
    # local polytope: 0 <= mu_k <= 1, mu_ab <= mu_a, mu_ab <= mu_b, mu_ab >= mu_a + mu_b - 1, mu_ab >= 0
    A_ub, b_ub = [], []
    for e, (a, b) in enumerate(edges):
        for row, rhs in (({K + e: 1, a: -1}, 0.0), ({K + e: 1, b: -1}, 0.0), ({a: 1, b: 1, K + e: -1}, 1.0)):
            r = np.zeros(K + E)
            for k, v in row.items():
                r[k] = v
            A_ub.append(r)
            b_ub.append(rhs)
    A_ub = np.array(A_ub)

    def support(lam):
        x = linprog(-(cm[1:] + lam * cg[1:]), A_ub=A_ub, b_ub=b_ub, bounds=[(0, 1)] * (K + E), method="highs").x
        return np.array([cm[0] + cm[1:] @ x, cg[0] + cg[1:] @ x])

    # the upper-right chain exactly: between two of its vertices a (more m) and b (more Delta),
    # the direction lam at which they tie finds a vertex above their segment, if there is one
    pts = [np.array([m_, g_]) for m_, g_ in zip(m, G)]
    a, b = support(1e-9), support(1e9)
    stack = [(a, b)]
    pts += [a, b]
    while stack:
        a, b = stack.pop()
        if b[1] - a[1] <= 1e-12:
            continue
        lam = (a[0] - b[0]) / (b[1] - a[1])
        c = support(lam)
        if c[0] + lam * c[1] > a[0] + lam * a[1] + 1e-10:
            pts.append(c)
            stack += [(a, c), (c, b)]
    return np.array(pts)


class Reference:
    """The brute-force primal of one structure's problem at any weights, and its optima."""

    def __init__(self, structure):
        cls, fit_args, params = problem(structure)
        est = cls(C=1.0, loss="margin", solver="sdm", tol=1e-6, **params)
        error, _, st, Cs, w = observed_fit(est, fit_args)
        assert error is None, error
        self.structure, self.st, self.Cs = structure, st, Cs
        if structure.startswith("hierarchy"):
            self.n_classes = 4
        elif structure.startswith("multilabel"):
            self.n_classes = fit_args[1].shape[1]
        else:
            self.n_classes = len(np.unique(fit_args[1]))
        self.edges = [(0, 1), (0, 2), (1, 2)] if structure == "multilabel-full" else None
        self.examples = [points(structure, st, i, self.n_classes) for i in range(st.n_examples)]

    def compatible(self, st, Cs):
        """Whether a fit's structure is this problem's (same labels, feature map and C_i)."""
        return st.n_weights == self.st.n_weights and np.allclose(Cs, self.Cs)

    def losses(self, loss, w, over="labels"):
        """Each example's surrogate loss at w; over: 'labels', 'hull' (of the labels' points) or
        'polytope' (the LP relaxation's)."""
        out = []
        for i, (labs, D, G, (H, sizes)) in enumerate(self.examples):
            m = -(D @ w)
            if loss == "lse":
                out.append(float(np.sum(np.maximum(0.0, G + m))))
            elif loss == "microf1":
                with np.errstate(divide="ignore", invalid="ignore"):
                    v = np.where(sizes > 0, (H + m) / sizes, 0.0)
                out.append(max(0.0, float(np.max(v))))
            elif over == "labels":
                out.append(max(0.0, float(np.max(psi(loss, m, G)))))
            else:
                P = (local_polytope_points(self.st, i, w, self.n_classes, self.edges, labs, D, G)
                     if over == "polytope" else np.column_stack([m, G]))
                out.append(max(0.0, max_over_hull(loss, P)))
        return np.array(out)

    def primal(self, loss, w, over="labels"):
        return 0.5 * float(w @ w) + float(self.Cs @ self.losses(loss, w, over))

    @functools.lru_cache(maxsize=None)
    def optimum(self, loss):
        """min_w of the integral problem: the epigraph problem over every enumerated label, SLSQP."""
        nw, n = self.st.n_weights, len(self.examples)
        rows = []      # (example, D row, G, H, size) per label
        for i, (labs, D, G, (H, sizes)) in enumerate(self.examples):
            for j in range(len(labs)):
                rows.append((i, D[j], G[j], None if H is None else H[j], None if sizes is None else sizes[j]))
        idx = np.array([r[0] for r in rows])
        Dm = np.array([r[1] for r in rows])
        Gv = np.array([r[2] for r in rows])
        if loss == "lse":       # xi_iy >= Delta + m, xi_iy >= 0, objective sum C_i xi_iy
            nx = len(rows)
            c = np.concatenate([np.zeros(nw), self.Cs[idx]])
            A = np.hstack([-Dm, -np.eye(nx)])
            cons = [{"type": "ineq", "fun": lambda z: -(A @ z) - Gv, "jac": lambda z: -A}]
            bounds = [(None, None)] * nw + [(0, None)] * nx
        else:
            nx = n
            c = np.concatenate([np.zeros(nw), self.Cs])
            if loss == "microf1":
                Hv = np.array([r[3] for r in rows])
                Sv = np.array([r[4] for r in rows])
                keep = Sv > 0
                idx, Dm, Hv, Sv = idx[keep], Dm[keep], Hv[keep], Sv[keep]

                def val(z):
                    return z[nw + idx] - (Hv - Dm @ z[:nw]) / Sv

                def jac(z):
                    J = np.zeros((len(idx), nw + n))
                    J[:, :nw] = Dm / Sv[:, None]
                    J[np.arange(len(idx)), nw + idx] = 1.0
                    return J
            else:
                eps = 1e-7

                def val(z):
                    return z[nw + idx] - psi(loss, -(Dm @ z[:nw]), Gv)

                def jac(z):
                    m = -(Dm @ z[:nw])
                    dh = (psi(loss, m + eps, Gv) - psi(loss, m - eps, Gv)) / (2 * eps)
                    J = np.zeros((len(idx), nw + n))
                    J[:, :nw] = dh[:, None] * Dm
                    J[np.arange(len(idx)), nw + idx] = 1.0
                    return J
            cons = [{"type": "ineq", "fun": val, "jac": jac}]
            bounds = [(None, None)] * nw + [(0, None)] * n
        z0 = np.concatenate([np.zeros(nw), np.full(nx, 10.0)])
        res = minimize(lambda z: 0.5 * z[:nw] @ z[:nw] + c @ z, z0,
                       jac=lambda z: np.concatenate([z[:nw], np.zeros(nx)]) + c, method="SLSQP",
                       constraints=cons, bounds=bounds, options={"ftol": 1e-13, "maxiter": 3000})
        w = res.x[:nw]
        return self.primal(loss, w), w


@functools.lru_cache(maxsize=None)
def reference(structure):
    return Reference(structure)


def trained_over(cell):
    """The label set a cell's problem maximises over: 'labels', 'hull' or 'polytope'."""
    structure, loss, search, solver = cell
    if structure == "multilabel-full" and loss != "lse":
        return "polytope"
    if search == "hull" and loss not in ("margin", "lse", "microf1"):
        return "hull"
    return "labels"


def approximate(cell):
    """Whether the cell's search is a heuristic for its loss (its optimum is not guaranteed)."""
    structure, loss, search, solver = cell
    if loss in ("margin", "lse") or search is None:
        return False
    if search in ("binary", "bisecting", "sarawagi"):
        return True
    if search == "angular":      # exact for slack rescaling, but the solvers stop it within 0.1 % (the paper's)
        return True
    if search == "hull-integral":
        return True
    return search == "none"


@functools.lru_cache(maxsize=None)
def relaxed_optimum(structure, loss, over):
    """The optimum of a convex relaxation's problem (hull, LP): the cutting plane's with the hull
    search, exact over the relaxation, its own objective checked against the brute-force primal."""
    r = run_cell((structure, loss, "hull", "cutting-plane"), reference_run=True)
    assert r["status"] == "trained", r
    return r["primal"]


def run_cell(cell, reference_run=False):
    """Fit one cell; returns a dict: status ('refused', 'trained', 'FAIL'), and the figures."""
    structure, loss, search, solver = cell
    _, fit_args, _ = problem(structure)
    t = time.perf_counter()
    est = estimator(cell)
    error, started, st, Cs, w = observed_fit(est, fit_args)
    out = dict(cell=cell, seconds=time.perf_counter() - t)
    if error is not None:
        out.update(status="refused" if not started else "FAIL",
                   why=str(error) if not started else f"{type(error).__name__} after the solver started: {error}")
        return out
    ref = reference(structure)
    over = trained_over(cell)
    if structure.startswith("hierarchy-shared") or not ref.compatible(st, Cs):
        # Shared SVM's last problem has its own node weights: its primal is recomputed on the
        # structure it trained
        ref = Reference.__new__(Reference)
        ref.__dict__.update(reference(structure).__dict__)
        ref.st, ref.Cs = st, Cs
        ref.examples = [points(structure, st, i, ref.n_classes) for i in range(st.n_examples)]
        ref.optimum = functools.lru_cache(maxsize=None)(functools.partial(Reference.optimum.__wrapped__, ref))
    primal = ref.primal(loss, w, over)
    out.update(objective=float(est.objective_), primal=primal, status="trained")
    if not abs(est.objective_ - primal) <= OBJECTIVE_TOL * max(1.0, abs(primal)):
        out.update(status="FAIL", why=f"objective_ {est.objective_:.10g} is not the primal {primal:.10g} at its weights")
        return out
    if loss == "probloss":
        out["optimum"] = None
        return out
    if reference_run:
        return out
    if over == "labels":
        optimum, _ = ref.optimum(loss)
    else:
        optimum = relaxed_optimum(structure, loss, over)
    out["optimum"] = optimum
    rel = (primal - optimum) / max(abs(optimum), 1e-12)
    out["rel"] = rel
    tol = REL_TOL.get(solver, 1e-6)
    if rel < -max(tol, 1e-6):
        out.update(status="FAIL", why=f"primal {primal:.10g} below the reference optimum {optimum:.10g}")
    elif rel > tol and not approximate(cell):
        out.update(status="FAIL", why=f"primal {primal:.10g} above the optimum {optimum:.10g} (rel {rel:.2g} > {tol:g})")
    elif approximate(cell):
        out["status"] = "approximate"
    return out


def run_matrix(selected, log=None):
    """Run the selected cells; log(result) after each."""
    results = []
    for cell in selected:
        results.append(run_cell(cell))
        if log:
            log(results[-1])
    return results


def table(results):
    """The matrix as text: one line per structure x loss, a column per solver (x search), each
    entry T (trained to the optimum), A (approximate search, objective honest), R (refused),
    F (failed)."""
    mark = {"trained": "T", "approximate": "A", "refused": "R", "FAIL": "F"}
    by = {r["cell"]: mark[r["status"]] for r in results}
    cols = [(sv, se) for sv in SOLVERS for se in (SEARCHES if sv in SEARCHING else (None,))]
    cols = [c for c in cols if any((st, lo, c[1], c[0]) in by for st in STRUCTURES for lo in LOSSES)]
    head = ["structure", "loss"] + [sv if se is None else f"{sv}/{se}" for sv, se in cols]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for st in STRUCTURES:
        for lo in LOSSES:
            row = [by.get((st, lo, se, sv), " ") for sv, se in cols]
            if any(x.strip() for x in row):
                lines.append("| " + " | ".join([st, lo] + row) + " |")
    return "\n".join(lines)
