"""GDMM with factorwise oracles (Yen et al. 2016) against the structural-oracle solvers, on sequence
labeling with many tags: a seeded planted problem like the paper's ChineseOCR (K tags, 20,000
tokens in sentences of 8-20, d = 5,000 sparse features, 30 nonzeros per token of unit norm; a
sparse Markov chain of tags, 5 successors each; 6 of a token's 30 features drawn from its tag's
20-feature prototype, the rest uniformly), and on OCR letters (K = 26, folds 1-9).

1. Seconds per pass for K in --K: GDMM-subFMO (fmo_subsets = ceil(K / 64): one block of <= 64
   tags per token and call, the transition table in ordered multimaps), GDMM with exact FMOs (all
   K tags per token, all K^2 pairs per bigram), BCFW and SDM (one Viterbi per sequence: O(T K^2)),
   with the log-log slope of each over K. GDMM's pass includes its multiplier step; no solver's
   pass includes a primal evaluation. Each (solver, K) runs in a fresh process: the table also
   gives its peak RSS.
2. Objective vs time at K = --curve-K: BCFW for --bcfw-passes passes, GDMM-subFMO for
   --gdmm-seconds, the primal objective (one Viterbi pass, not counted in the time) at
   checkpoints; the time GDMM-subFMO needs to reach BCFW's last objective, and the ratio; test
   token accuracy of both final models on 5,000 held-out tokens. PNG to --png.
3. OCR letters, C = 0.1: GDMM (exact FMOs), SDM and BCFW objective vs time (where GDMM does not pay:
   26 tags make Viterbi cheap). PNG to --png-ocr.
The paper's figures are for the real ChineseOCR (3,039 tags, 174,074 characters) and its own C++
code; ours are a planted stand-in at 20,000 tokens: compare shapes (slopes, ratios), not seconds.
4. Correlated multi-label like RCV1-regions (planted_multilabel: 228 labels in groups whose head
   co-occurs with the others, 23,149 examples, 47,236 features, every pair a factor): the time of
   one LP-relaxed MAP by HiGHS and by our max-flow oracle, GDMM-subFMO's passes at that size,
   then at --ml-small (default 228 labels, 5,000 + 1,000 test examples) GDMM-subFMO against BCFW
   with the (max-flow) LP oracle: objective vs time, test micro-F1 and Hamming loss (LP MAP
   rounded at 1/2). PNG to --png-ml.

    python benchmarks/gdmm.py                                  # everything (K = 3000 is slow: ~40 min)
    python benchmarks/gdmm.py --K 100 300 --skip-curves --skip-ocr --skip-multilabel   # small K only
"""
import argparse
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

DATA = Path(__file__).resolve().parent.parent / "data"
BLOCK = 64


def planted_chain(K, n_tokens, d=5000, nnz=30, seed=0, min_len=8, max_len=20, n_succ=5, proto=20, from_proto=6):
    rng = np.random.default_rng(seed)
    succ = np.stack([rng.choice(K, min(n_succ, K), replace=False) for _ in range(K)])
    psucc = rng.dirichlet(np.ones(succ.shape[1]), size=K)
    protos = np.stack([rng.choice(d, proto, replace=False) for _ in range(K)])
    lengths, total = [], 0
    while total < n_tokens:
        L = int(rng.integers(min_len, max_len + 1))
        if n_tokens - total - L < min_len:
            L = n_tokens - total
        lengths.append(L)
        total += L
    lengths = np.array(lengths)
    y = np.empty(n_tokens, dtype=np.int64)
    pos = 0
    for L in lengths:
        t = int(rng.integers(K))
        for j in range(L):
            y[pos + j] = t
            t = int(succ[t, rng.choice(succ.shape[1], p=psucc[t])])
        pos += L
    cols = np.empty((n_tokens, nnz), dtype=np.int64)
    cols[:, :from_proto] = protos[y[:, None], rng.integers(0, proto, (n_tokens, from_proto))]
    cols[:, from_proto:] = rng.integers(0, d, (n_tokens, nnz - from_proto))
    X = sp.csr_matrix((np.ones(n_tokens * nnz), cols.ravel(), np.arange(0, n_tokens * nnz + 1, nnz)),
                      shape=(n_tokens, d))
    X.sum_duplicates()
    X = sp.csr_matrix(sp.diags(1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())) @ X)
    return X, y, lengths


def planted_multilabel(K, n, d=47236, nnz=60, seed=0, group=6, proto=30):
    """Labels in groups of `group` whose first label (the group's head) joins any other label of
    the group with probability 0.8 (planted pairwise correlations); an example draws 1-2 groups and
    1-3 labels in each; features: 15 from each positive label's 30-feature prototype, the rest
    uniform, rows of unit norm. Returns (X, Y 0/1 int32)."""
    rng = np.random.default_rng(seed)
    protos = np.stack([rng.choice(d, proto, replace=False) for _ in range(K)])
    n_groups = K // group
    Y = np.zeros((n, K), dtype=np.int32)
    rows, cols = [], []
    for i in range(n):
        for g in rng.choice(n_groups, int(rng.integers(1, 3)), replace=False):
            members = g * group + rng.choice(group, int(rng.integers(1, 4)), replace=False)
            Y[i, members] = 1
            if rng.random() < 0.8:
                Y[i, g * group] = 1
        pos = np.flatnonzero(Y[i])
        c = [protos[k, rng.integers(0, proto, 15)] for k in pos]
        c.append(rng.integers(0, d, max(nnz - 15 * len(pos), 5)))
        c = np.unique(np.concatenate(c))
        rows.append(np.full(c.size, i))
        cols.append(c)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, d))
    X = sp.csr_matrix(sp.diags(1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())) @ X)
    return X, Y


def multilabel_structure(X, Y):
    from ssvmlinear._kernels.dataset import CSRDataset
    from ssvmlinear.models.multilabel import _fit_edges, _structure
    return _structure(CSRDataset(sp.csr_matrix(X), -1.0), Y, _fit_edges("full", Y), False)


def multilabel_scores(st, w, Y):
    """(micro-F1, Hamming loss) of the LP relaxation's MAP rounded at 1/2."""
    from ssvmlinear._kernels.factor import MARGINAL_ONE_VALUE as Q
    K = Y.shape[1]
    out = np.zeros(int(st.label_offsets()[-1]), dtype=np.int32)
    st.predict(np.ascontiguousarray(w), out, st.label_offsets())
    P = (out.reshape(Y.shape[0], -1)[:, :K] >= Q // 2).astype(np.int32)
    tp = int(np.sum(P & Y))
    f1 = 2 * tp / max(int(P.sum() + Y.sum()), 1)
    return f1, float(np.mean(P != Y))


def split(X, y, lengths, n_test):
    """The last sequences holding >= n_test tokens are the test set."""
    ends = np.cumsum(lengths)
    k = int(np.searchsorted(ends, ends[-1] - n_test))
    cut = int(ends[k - 1]) if k else 0
    return X[:cut], y[:cut], lengths[:k], X[cut:], y[cut:], lengths[k:]


def load_ocr():
    from ssvmlinear import load_svmlight_file
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters.svm.gz", n_features=128)
    folds = np.loadtxt(DATA / "ocr_letters.folds", dtype=np.int64)
    words = folds != 0
    tokens = np.repeat(words, lengths)
    y = np.unique(y, return_inverse=True)[1]
    return X[tokens], y[tokens], lengths[words], X[~tokens], y[~tokens], lengths[~words]


def maxrss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def structure_of(X, y, lengths, K):
    from ssvmlinear._kernels.chain import ChainStructure
    from ssvmlinear._kernels.dataset import CSRDataset
    return ChainStructure(CSRDataset(sp.csr_matrix(X)), np.asarray(y, dtype=np.int32), lengths, K)


def make_solver(name, st, C, K, rho, eta):
    from ssvmlinear.solvers.gdmm import auto_eta
    Cs = np.full(st.n_examples, C)
    eta = auto_eta(K) if eta is None else eta
    if name == "gdmm-sub":
        from ssvmlinear._kernels.gdmm import FactorGDMM
        nu = max(2, math.ceil(K / BLOCK))
        s = FactorGDMM(st.factor_graph(), Cs, rho=rho, eta=eta, fmo_subsets=nu, sublinear=True)
        return s, lambda: s.run_pass()
    if name == "gdmm-exact":
        from ssvmlinear._kernels.gdmm import FactorGDMM
        s = FactorGDMM(st.factor_graph(), Cs, rho=rho, eta=eta)
        return s, lambda: s.run_pass()
    if name == "bcfw":
        from ssvmlinear._kernels.bcfw import BCFWSolver
        s = BCFWSolver(st, Cs, 0)
        return s, lambda: s.run_pass()
    if name == "sdm":
        from ssvmlinear._kernels.sdm import SDMSolver
        s = SDMSolver(st, Cs, 0, batch=1, n_threads=1)
        return s, lambda: s.run_pass(True, 0.01, 1)
    if name == "ssg":
        s = StochasticSubgradient(st, Cs)
        return s, s.run_pass
    raise ValueError(name)


class StochasticSubgradient:
    """SSG, the paper's stochastic baseline: Pegasos epochs (margin rescaling, one example a step,
    the averaged iterate) with the kernel-level interface of the other solvers here."""

    def __init__(self, st, Cs):
        from ssvmlinear._kernels.pegasos import PegasosSolver
        from ssvmlinear.search import METHODS
        self.method = METHODS["hull"]
        self.kernel = PegasosSolver(st, 0, 1.0, 0.0, self.method, Cs)
        self.Cs, self.n = Cs, st.n_examples
        self.rng = np.random.default_rng(0)

    def run_pass(self):
        self.kernel.epoch(self.rng.permutation(self.n).astype(np.intp), 1)

    @property
    def coef(self):
        return self.kernel.weights(True)

    def primal(self):
        w, losses = self.coef, np.zeros(self.n)
        self.kernel.losses(w, losses, self.method)
        return 0.5 * float(w @ w) + float(self.Cs @ losses)


def worker(spec):
    """One solver on one problem in this process: per-pass times, or a curve."""
    if spec["data"] == "multilabel":
        return multilabel_worker(spec)
    if spec["data"] == "ocr":
        Xtr, ytr, ltr, Xte, yte, lte = load_ocr()
        K = 26
    else:
        K = spec["K"]
        X, y, lengths = planted_chain(K, spec["tokens"] + spec["test_tokens"], seed=spec["seed"])
        Xtr, ytr, ltr, Xte, yte, lte = split(X, y, lengths, spec["test_tokens"])
    st = structure_of(Xtr, ytr, ltr, K)
    solver, run_pass = make_solver(spec["solver"], st, spec["C"], K, spec["rho"], spec["eta"])
    out = {"solver": spec["solver"], "K": K}
    if spec["mode"] == "passes":
        times = []
        for _ in range(spec["passes"]):
            t = time.perf_counter()
            run_pass()
            times.append(time.perf_counter() - t)
        out["pass_seconds"] = times
    else:
        elapsed, curve, test_curve = 0.0, [], []
        checkpoints = iter(spec["checkpoints"])
        nxt = next(checkpoints, None)
        passes = 0
        while passes < spec["max_passes"] and elapsed < spec["seconds"]:
            t = time.perf_counter()
            run_pass()
            elapsed += time.perf_counter() - t
            passes += 1
            every = spec["solver"] in ("bcfw", "sdm") or spec["data"] == "ocr" or spec.get("every")
            if every or (nxt is not None and elapsed >= nxt):
                curve.append((elapsed, passes, solver.primal()))
                if spec.get("test_curve"):
                    test_curve.append((elapsed, test_accuracy(np.asarray(solver.coef), Xte, yte, lte, K)))
                while nxt is not None and nxt <= elapsed:
                    nxt = next(checkpoints, None)
        if not curve or curve[-1][1] != passes:
            curve.append((elapsed, passes, solver.primal()))
            if spec.get("test_curve"):
                test_curve.append((elapsed, test_accuracy(np.asarray(solver.coef), Xte, yte, lte, K)))
        out["curve"] = curve
        out["test_curve"] = test_curve
        out["test_accuracy"] = test_accuracy(np.asarray(solver.coef), Xte, yte, lte, K)
    out["peak_mb"] = maxrss_mb()
    return out


def multilabel_worker(spec):
    """One solver on the planted multi-label problem: spec["primal"] True, the primal objective
    (an LP-oracle pass; NaN with spec["objective"] False) after every pass of BCFW and SSG (at
    their checkpoints only with spec["every"] False) and at GDMM-subFMO's checkpoints, and with
    spec["test_curve"] the test micro-F1 and Hamming loss there too (evaluations not timed);
    False, GDMM's dual and consistency violation after every pass."""
    K, n, n_test = spec["K"], spec["n"], spec["n_test"]
    X, Y = planted_multilabel(K, n + n_test, seed=spec["seed"])
    st = multilabel_structure(X[:n], Y[:n])
    test = multilabel_structure(X[n:], Y[n:]) if n_test else None
    solver, run_pass = make_solver(spec["solver"], st, spec["C"], K, spec["rho"], spec["eta"])
    out = {"solver": spec["solver"], "K": K}
    elapsed, curve, test_curve, passes = 0.0, [], [], 0
    checkpoints = iter(spec["checkpoints"])
    nxt = next(checkpoints, None)

    def evaluate():
        curve.append((elapsed, passes, solver.primal() if spec.get("objective", True) else float("nan")))
        if spec.get("test_curve"):
            test_curve.append((elapsed, *multilabel_scores(test, np.asarray(solver.coef), Y[n:])))
    while passes < spec["max_passes"] and elapsed < spec["seconds"]:
        t = time.perf_counter()
        r = run_pass()
        elapsed += time.perf_counter() - t
        passes += 1
        every = spec["solver"] != "gdmm-sub" and spec.get("every", True)
        if spec["primal"] and (every or (nxt is not None and elapsed >= nxt)):
            evaluate()
            while nxt is not None and nxt <= elapsed:
                nxt = next(checkpoints, None)
        elif not spec["primal"]:
            curve.append((elapsed, passes, float(solver.dual()), float(r[1])))
    if spec["primal"] and (not curve or curve[-1][1] != passes):
        evaluate()
    out["curve"] = curve
    out["test_curve"] = test_curve
    if spec["primal"] and test is not None:
        out["f1"], out["hamming"] = multilabel_scores(test, np.asarray(solver.coef), Y[n:])
    if spec["solver"] == "gdmm-sub":
        out["active"] = solver.active_set_sizes()
    out["peak_mb"] = maxrss_mb()
    return out


def test_accuracy(w, Xte, yte, lte, K):
    st = structure_of(Xte, yte, lte, K)
    out = np.zeros(Xte.shape[0], dtype=np.int32)
    st.predict(np.ascontiguousarray(w), out, st.label_offsets())
    return float(np.mean(out == yte))


def run(spec):
    p = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-3000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def slope(Ks, ts):
    ok = [(k, t) for k, t in zip(Ks, ts) if t is not None and t > 0]
    if len(ok) < 2:
        return float("nan")
    return float(np.polyfit(np.log([k for k, _ in ok]), np.log([t for _, t in ok]), 1)[0])


def reach_line(ref, curve, ref_name):
    """When GDMM-subFMO first reached the reference's best objective (its primal is not monotone),
    against the time the reference first had it; GDMM's checkpoints are sparse, so its time is an
    upper bound and the ratio a lower bound."""
    t_ref, p_ref, target = min(ref, key=lambda r: (r[2], r[0]))
    reach = next((t for t, _, obj in curve if obj <= target), None)
    if reach is None:
        return (f"GDMM-subFMO did not reach {ref_name}'s best objective {target:.6g} ({ref_name}: {t_ref:.1f} s, "
                f"pass {p_ref}) within {curve[-1][0]:.1f} s")
    return (f"GDMM-subFMO reached {ref_name}'s best objective {target:.6g} (which {ref_name} had at {t_ref:.1f} s, "
            f"pass {p_ref}) by its checkpoint at {reach:.1f} s: >= {t_ref / reach:.2g}x sooner")


def plot(curves, title, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"(matplotlib not installed: no {path})")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, c in curves.items():
        ax.plot([t for t, _, _ in c], [p for _, _, p in c], marker="o", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("solver seconds (primal evaluations excluded)")
    ax.set_ylabel("primal objective")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker")
    ap.add_argument("--K", type=int, nargs="+", default=[100, 300, 1000, 3000])
    ap.add_argument("--tokens", type=int, default=20000)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--rho", type=float, default=1.0)
    ap.add_argument("--eta", type=float, default=None,
                    help="GDMM's multiplier step (default: its eta='auto' for the problem's K)")
    ap.add_argument("--passes", type=int, default=5, help="passes timed per (solver, K) for GDMM")
    ap.add_argument("--slow-passes", type=int, default=1,
                    help="passes timed for the Viterbi solvers and exact GDMM at K >= 1000")
    ap.add_argument("--curve-K", type=int, default=3000)
    ap.add_argument("--bcfw-passes", type=int, default=3)
    ap.add_argument("--gdmm-seconds", type=float, default=60.0)
    ap.add_argument("--skip-table", action="store_true")
    ap.add_argument("--skip-curves", action="store_true")
    ap.add_argument("--skip-ocr", action="store_true")
    ap.add_argument("--skip-multilabel", action="store_true")
    ap.add_argument("--ml-passes", type=int, default=5, help="GDMM passes at the RCV1-regions size")
    ap.add_argument("--ml-small", type=int, nargs=2, default=[228, 5000], metavar=("K", "N"),
                    help="the size of the comparison with BCFW + the LP oracle (and primal evaluations)")
    ap.add_argument("--ml-bcfw-passes", type=int, default=3)
    ap.add_argument("--ml-seconds", type=float, default=60.0)
    ap.add_argument("--png-ml", default="benchmarks/figures/gdmm_multilabel.png")
    ap.add_argument("--png", default="benchmarks/figures/gdmm_planted.png")
    ap.add_argument("--png-ocr", default="benchmarks/figures/gdmm_ocr.png")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    base = dict(data="planted", tokens=args.tokens, test_tokens=5000, seed=0, C=args.C, rho=args.rho, eta=args.eta)
    solvers = ["gdmm-sub", "gdmm-exact", "bcfw", "sdm"]
    if not args.skip_table:
        print(f"Seconds per pass, planted chains: {args.tokens} training tokens, d = 5000, 30 nonzeros per token, "
              f"C = {args.C}, GDMM rho = {args.rho}, eta = {'auto' if args.eta is None else args.eta}; median over the timed passes "
              f"(the first GDMM pass is included)")
        print(f"{'K':>6} " + " ".join(f"{s + ' s':>14} {'MB':>6}" for s in solvers))
        table = {s: [] for s in solvers}
        for K in args.K:
            row = []
            for s in solvers:
                slow = s != "gdmm-sub" and K >= 1000
                r = run(dict(base, K=K, solver=s, mode="passes", passes=args.slow_passes if slow else args.passes))
                t = float(np.median(r["pass_seconds"]))
                table[s].append(t)
                row.append(f"{t:14.4f} {r['peak_mb']:6.0f}")
            print(f"{K:>6} " + " ".join(row), flush=True)
        print(f"{'slope':>6} " + " ".join(f"{slope(args.K, table[s]):14.2f} {'':>6}" for s in solvers))
        print("per-pass ratio BCFW / GDMM-subFMO: " + ", ".join(
            f"K={K}: {b / g:.1f}x" for K, b, g in zip(args.K, table["bcfw"], table["gdmm-sub"])))
    if not args.skip_curves:
        K = args.curve_K
        print(f"\nObjective vs time at K = {K} (C = {args.C}); primal evaluations excluded from the times")
        b = run(dict(base, K=K, solver="bcfw", mode="curve", seconds=1e9, max_passes=args.bcfw_passes,
                     checkpoints=[0.0]))
        g = run(dict(base, K=K, solver="gdmm-sub", mode="curve", seconds=args.gdmm_seconds, max_passes=10 ** 9,
                     checkpoints=list(args.gdmm_seconds * np.array([0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75]))))
        for name, r in (("BCFW", b), ("GDMM-subFMO", g)):
            print(f"{name:>12}: " + "; ".join(f"{t:.1f}s ({p} passes) {obj:.6g}" for t, p, obj in r["curve"])
                  + f"; test token accuracy {100 * r['test_accuracy']:.2f} %, peak {r['peak_mb']:.0f} MB")
        print(reach_line(b["curve"], g["curve"], "BCFW"))
        plot({"BCFW": b["curve"], "GDMM-subFMO": g["curve"]}, f"planted chain, K = {K}", args.png)
    if not args.skip_ocr:
        print("\nOCR letters, folds 1-9, C = 0.1: objective vs time (primal evaluations excluded)")
        curves = {}
        for s, name, secs in (("sdm", "SDM", 8.0), ("bcfw", "BCFW", 8.0), ("gdmm-exact", "GDMM", 25.0)):
            r = run(dict(data="ocr", K=26, solver=s, mode="curve", seconds=secs, max_passes=10 ** 9, C=0.1,
                         rho=args.rho, eta=args.eta, checkpoints=[0.0]))
            curves[name] = r["curve"]
            best = r["curve"][-1]
            print(f"{name:>6}: {best[1]} passes in {best[0]:.1f} s, objective {best[2]:.6g}, "
                  f"test token accuracy {100 * r['test_accuracy']:.2f} %")
        final = min(c[-1][2] for c in curves.values())
        for name, c in curves.items():
            reach = {lvl: next((t for t, _, p in c if p <= final * (1 + lvl)), None) for lvl in (1e-1, 1e-2, 1e-3)}
            print(f"{name:>6} seconds to reach the best objective within " + ", ".join(
                f"{lvl:g}: {'-' if t is None else f'{t:.2f}'}" for lvl, t in reach.items()))
        plot(curves, "OCR letters (K = 26), C = 0.1", args.png_ocr)
    if not args.skip_multilabel:
        ml = dict(data="multilabel", seed=0, C=args.C, rho=args.rho, eta=args.eta, checkpoints=[])
        print("\nCorrelated multi-label like RCV1-regions (228 labels, 23,149 examples, 47,236 features, every label "
              "pair a factor: 25,878 pair tables), C = %g" % args.C)
        from ssvmlinear.models.multilabel import PairwiseLP
        a, b = np.triu_indices(228, 1)
        c = np.concatenate([np.random.default_rng(0).normal(-1, 1, 228), np.random.default_rng(1).normal(0, 0.05, len(a))])
        t_lp = {}
        for method in ("highs", "maxflow"):
            lp = PairwiseLP(228, np.stack([a, b], 1), method)
            t = time.perf_counter()
            lp(c)
            t_lp[method] = time.perf_counter() - t
        print(f"one LP-relaxed MAP at K = 228: HiGHS {t_lp['highs']:.2f} s, max-flow (roof duality, our oracle) "
              f"{1000 * t_lp['maxflow']:.1f} ms (with Python overhead); with HiGHS a BCFW pass over 23,149 examples "
              f"would take ~{t_lp['highs'] * 23149 / 3600:.0f} h")
        print("GDMM-subFMO at the full size (dual objective and consistency violation per pass):")
        r = run(dict(ml, K=228, n=23149, n_test=0, solver="gdmm-sub", seconds=1e9, max_passes=args.ml_passes,
                     primal=False))
        for t_, p_, dual, viol in r["curve"]:
            print(f"  GDMM-subFMO pass {p_}: {t_:.1f} s, dual {dual:.6g}, violation {viol:.3g}")
        print(f"  active labels / explicit pairs per example: {r['active'][0]:.1f} / {r['active'][1]:.1f}; "
              f"peak {r['peak_mb']:.0f} MB")
        K, n = args.ml_small
        print(f"\nThe same generator at K = {K}, {n} training + 1,000 test examples: objective vs time (primal "
              f"evaluations with the LP oracle excluded), test micro-F1 and Hamming loss (LP MAP rounded at 1/2)")
        bc = run(dict(ml, K=K, n=n, n_test=1000, solver="bcfw", seconds=1e9, max_passes=args.ml_bcfw_passes,
                      primal=True))
        gd = run(dict(ml, K=K, n=n, n_test=1000, solver="gdmm-sub", seconds=args.ml_seconds, max_passes=10 ** 9,
                      primal=True, checkpoints=list(args.ml_seconds * np.array([0.02, 0.05, 0.1, 0.25, 0.5]))))
        for name, r in (("BCFW+LP", bc), ("GDMM-subFMO", gd)):
            print(f"{name:>12}: " + "; ".join(f"{t:.1f}s ({p}) {obj:.6g}" for t, p, obj in r["curve"])
                  + f"; micro-F1 {r['f1']:.4f}, Hamming {r['hamming']:.4f}, peak {r['peak_mb']:.0f} MB")
        print(reach_line(bc["curve"], gd["curve"], "BCFW"))
        plot({"BCFW + LP oracle": bc["curve"], "GDMM-subFMO": gd["curve"]}, f"planted multi-label, K = {K}, full pairs",
             args.png_ml)


if __name__ == "__main__":
    main()
