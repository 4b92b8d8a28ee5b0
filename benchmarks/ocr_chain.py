"""Chain SSVMs on OCR words: LSE-SDCD, SDM and the cutting plane vs Balamurugan et al. (Tables III-V,
Fig. 2) and CRFsuite.

Reproduces the OCR protocol of Balamurugan, Shevade, Ravindra Babu et al., "Efficient Algorithms for
Linear Summed Error Structural SVMs" (Sec. V.B): the ten partitions of Taskar et al., where
partition k trains on the words of fold k (~650 words, ~5,000 letters) and tests on the words of all
other folds (~47,000 letters); first-order chain, 128 pixel features, 26 tags, no bias, Hamming loss.
  LSE-SDCD  ChainSSVM(C, loss="lse")     Alg. 2 of the paper (the problem OP3/OP5)
  SDM       ChainSSVM(C, loss="margin")  sequential dual method, margin rescaling (OP1)
  CP        ChainSSVM(C, solver="cutting-plane", loss="lse")     one-slack cutting plane on the LSE
            problem: the paper's CP (Alg. 1); its -e is svm_struct's (default 0.1 per example)
  CP-margin ChainSSVM(C, solver="cutting-plane", loss="margin")  the same on SDM's problem (OP1)
  CRFsuite  python-crfsuite, L-BFGS, c1=0, L2 coefficient c2 (default max_iterations and stopping);
            features are the same pixels (name = column index), labels the tag strings
Every fit runs in a fresh worker subprocess (so that its peak RSS is its own; the reported RSS is
ru_maxrss right after training). Solvers are interleaved within each repetition; times are the
median of --reps wall-clock times of fit() (CRFsuite: Trainer.train() only, not feature building),
all other quantities come from the first repetition (the solvers are deterministic: random_state=None
means seed 0). Accuracies are letter (token) accuracies on the test words.

Tables:
  1. Table III/IV analog, per C and partition: LSE-SDCD seconds vs the paper's SDCD seconds
     (speed-up = paper / ours; the paper used a 2.4 GHz Xeon, so this is hardware + implementation),
     our accuracy vs the paper's SDCD accuracy, and SDM's seconds and accuracy; a summary per C.
     Then the paper's cutting-plane (CP) numbers for the same cells ("paper CP"), and (unless
     --skip-cp) the Table III analog for our CP: CP (LSE) seconds, iterations, oracle calls and dual
     objective beside LSE-SDCD's and the paper's CP seconds, with the ratios CP/SDCD (ours and
     the paper's) and paper CP / our CP, per C the check "SDCD faster than CP, increasingly with
     C" (the paper's finding), and CP-margin beside SDM (seconds, iterations, oracle calls, primal).
  2. Table V analog: SDCD vs SDM per C over the partitions: total seconds, mean accuracy, mean
     sum_i |V_i| (working-set size), mean passes.
  3. Fig. 2 analog: relative dual difference |f* - f(t)| / |f*| vs training time on partition
     --fig-fold for every C, f* = the final dual of that run (SDCD and SDM solve different problems,
     so each is measured against its own optimum); saved to --png; plus the time to reach 1e-1..1e-4.
  4. CRFsuite on the same partitions for each --c2, next to SDCD and SDM at their best C (the C with
     the best mean test accuracy in table 1 -- chosen on test data, for orientation only).
  5. "large": train on folds 1-9 (6,251 words, 47,535 letters), test on fold 0 (4,617 letters):
     SDCD and SDM at --large-C, CRFsuite at --large-c2: seconds, accuracy, peak RSS; unless
     --skip-cp, CP and CP-margin with n_jobs = 1 and 2, and (unless --large-sdm-batch is 1) SDM
     with oracle blocks of --large-sdm-batch examples with n_jobs = 1 and 2: the seconds of the
     oracle phase (oracle_seconds_) and of the fit, and the n_jobs 2 vs 1 speed-ups.
ConvergenceWarnings are silenced; fits that did not converge are counted and listed at the end.

    python benchmarks/ocr_chain.py                                    # everything (long: C=1 is slow)
    python benchmarks/ocr_chain.py --folds 0 1 --C 0.01 0.1 --skip-large
    python benchmarks/ocr_chain.py --skip-crf --reps 3 --json benchmarks/results/ocr_chain.json
    python benchmarks/ocr_chain.py --folds 0 --C 0.01 --reps 1 --skip-crf --skip-large   # smoke test
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
DATA = ROOT.parent / "data"
OCR_FOLDS = list(range(10))

# Balamurugan et al., Table III: training time (seconds) on partitions OCR0..OCR9.
PAPER_SDCD_SECONDS = {
    0.01: [24.89, 23.41, 20.84, 25.44, 29.35, 25.62, 34.66, 23.07, 30.87, 24.95],
    0.1: [37.37, 38.73, 36.73, 49.69, 38.71, 33.47, 54.11, 68.39, 49.2, 37.63],
    1.0: [106.39, 179.53, 123.81, 116.5, 178.28, 148.41, 184.26, 193.44, 146.02, 116.76],
}
PAPER_CP_SECONDS = {
    0.01: [115.36, 99.37, 119.97, 132.31, 142.08, 113.14, 156, 175.91, 133.95, 113.33],
    0.1: [595.13, 628.05, 474.26, 432.04, 1288.68, 467.75, 418.11, 378.49, 511.23, 1193.12],
    1.0: [4181.79, 9013.09, 4928.94, 9628, 8971.55, 7657.24, 7134.54, 4904.36, 4118.72, 3822.71],
}
# Table IV: test letter accuracy (%).
PAPER_SDCD_ACC = {
    0.01: [74.43, 75.4, 75.3, 76.17, 75.47, 75.24, 75.99, 74.8, 75.6, 75.02],
    0.1: [73.86, 74.54, 74.66, 75.56, 75.44, 73.88, 74.43, 74.02, 75.62, 74.57],
    1.0: [71.3, 72.05, 72.44, 73.15, 72.93, 71.39, 71.68, 71.68, 73.31, 71.85],
}
PAPER_CP_ACC = {
    0.01: [75.46, 76.05, 75.97, 76.8, 76.43, 75.87, 76.44, 75.66, 76.44, 75.78],
    0.1: [73.46, 74.14, 74.1, 75.19, 75.28, 73.52, 74.2, 73.78, 75.5, 73.84],
    1.0: [71.15, 71.56, 72.25, 73, 72.74, 71.24, 71.63, 71.18, 73.38, 71.74],
}

# ChainSSVM parameters of each solver key (the cutting plane may need many cheap iterations)
CHAIN_PARAMS = {"sdcd": dict(loss="lse"), "sdm": dict(loss="margin"),
                "cp": dict(solver="cutting-plane", loss="lse", max_iter=100000),
                "cp-margin": dict(solver="cutting-plane", loss="margin", max_iter=100000)}
LABEL = {"sdcd": "SDCD", "sdm": "SDM", "cp": "CP", "cp-margin": "CP-margin", "crf": "CRFsuite"}
# options that are SDM's own parameters (ChainSSVM(solver=SDM(oracle_batch=B))), not the estimator's
SDM_OPTIONS = ("oracle_batch", "shards")


def paper(table, C, fold):
    """The paper's number for (C, fold), or None when the paper has no such cell."""
    for c, row in table.items():
        if np.isclose(c, C):
            return row[fold] if 0 <= fold < len(row) else None
    return None


# ---------------------------------------------------------------------------------------------
# worker side: one fit in a fresh process
# ---------------------------------------------------------------------------------------------

def load_partition(split):
    """(Xtr, ytr, lengths_tr, Xte, yte, lengths_te). split = fold k (train on k, test on the others)
    or "large" (train on folds 1-9, test on fold 0)."""
    from ssvmlinear import load_svmlight_file
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters.svm.gz", n_features=128)
    folds = np.loadtxt(DATA / "ocr_letters.folds", dtype=np.int64)
    words = folds != 0 if split == "large" else folds == int(split)
    tokens = np.repeat(words, lengths)
    return X[tokens], y[tokens], lengths[words], X[~tokens], y[~tokens], lengths[~words]


def maxrss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def fit_chain(solver, C, Xtr, ytr, ltr, Xte, yte, lte, options=None):
    """options: extra ChainSSVM parameters (n_jobs, ...) and SDM's (oracle_batch, shards)."""
    from ssvmlinear import ChainSSVM, ConvergenceWarning
    from ssvmlinear.solvers import SDM
    params = {**CHAIN_PARAMS[solver], **(options or {})}
    sdm_params = {k: params.pop(k) for k in SDM_OPTIONS if k in params}
    if sdm_params:
        params["solver"] = SDM(**sdm_params)
    rss0 = maxrss_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t = time.perf_counter()
        est = ChainSSVM(C=C, **params).fit(Xtr, ytr, ltr)
        seconds = time.perf_counter() - t
    rss1 = maxrss_bytes()
    oracle_seconds = getattr(est, "oracle_seconds_", None)
    return dict(seconds=seconds, solver_seconds=float(est.timestamps_[-1]) if len(est.timestamps_) else 0.0,
                accuracy=est.score(Xte, yte, lte), n_iter=int(est.n_iter_),
                working_set_size=int(est.working_set_size_), dual=float(est.dual_objective_),
                primal=float(est.objective_),
                dual_curve=[float(v) for v in est.dual_curve_], timestamps=[float(v) for v in est.timestamps_],
                n_oracle_calls=int(est.n_oracle_calls_), converged=bool(est.converged_),
                oracle_seconds=None if oracle_seconds is None else float(oracle_seconds),
                rss=rss1, rss_train=rss1 - rss0)


def word_sequences(X, y, lengths):
    """One (pycrfsuite.ItemSequence, [tag strings]) per word, built lazily (never all at once)."""
    import pycrfsuite
    starts = np.concatenate([[0], np.cumsum(lengths)])
    indptr, indices, data = X.indptr, X.indices, X.data
    for a, b in zip(starts[:-1], starts[1:]):
        items = [{str(j): float(v) for j, v in zip(indices[indptr[r]:indptr[r + 1]], data[indptr[r]:indptr[r + 1]])}
                 for r in range(a, b)]
        yield pycrfsuite.ItemSequence(items), [str(int(t)) for t in y[a:b]]


def fit_crf(c2, Xtr, ytr, ltr, Xte, yte, lte):
    import pycrfsuite
    trainer = pycrfsuite.Trainer(algorithm="lbfgs", params={"c1": 0.0, "c2": float(c2)}, verbose=False)
    for xseq, yseq in word_sequences(Xtr, ytr, ltr):
        trainer.append(xseq, yseq)
    rss0 = maxrss_bytes()
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "ocr.crfsuite")
        t = time.perf_counter()
        trainer.train(model)
        seconds = time.perf_counter() - t
        rss1 = maxrss_bytes()
        last = trainer.logparser.last_iteration or {}
        tagger = pycrfsuite.Tagger()
        tagger.open(model)
        correct = total = 0
        for xseq, yseq in word_sequences(Xte, yte, lte):
            pred = tagger.tag(xseq)
            correct += sum(p == t for p, t in zip(pred, yseq))
            total += len(yseq)
        tagger.close()
    return dict(seconds=seconds, accuracy=correct / total, n_iter=int(last.get("num", -1)),
                loss=float(last.get("loss", np.nan)), converged=True, rss=rss1, rss_train=rss1 - rss0)


def worker(spec, out):
    spec = json.loads(spec)
    parts = load_partition(spec["split"])
    if spec["solver"] == "crf":
        res = fit_crf(spec["param"], *parts)
    else:
        res = fit_chain(spec["solver"], spec["param"], *parts, options=spec.get("options"))
    res.update(spec, n_train_words=int(len(parts[2])), n_train_letters=int(parts[0].shape[0]),
               n_test_letters=int(parts[3].shape[0]))
    Path(out).write_text(json.dumps(res))


def run_one(solver, split, param, options=None):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        spec = json.dumps({"solver": solver, "split": split, "param": param, "options": options or {}})
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", spec, out], check=True)
        return json.loads(Path(out).read_text())


def run_reps(solvers_params, split, reps):
    """{key: result} for each (key, solver, param[, options]), interleaved over reps; seconds (and
    oracle_seconds) = median."""
    runs = {job[0]: [] for job in solvers_params}
    for _ in range(reps):
        for key, solver, param, *options in solvers_params:
            runs[key].append(run_one(solver, split, param, options[0] if options else None))
    out = {}
    for key, rs in runs.items():
        r = dict(rs[0])
        r["all_seconds"] = [x["seconds"] for x in rs]
        r["seconds"] = float(np.median(r["all_seconds"]))
        if r.get("oracle_seconds") is not None:
            r["all_oracle_seconds"] = [x["oracle_seconds"] for x in rs]
            r["oracle_seconds"] = float(np.median(r["all_oracle_seconds"]))
        r["peak_rss_mb"] = max(x["rss"] for x in rs) / 2**20
        r["train_rss_mb"] = max(x["rss_train"] for x in rs) / 2**20
        out[key] = r
    return out


# ---------------------------------------------------------------------------------------------
# driver side: tables
# ---------------------------------------------------------------------------------------------

def fmt(v, spec, width):
    return f"{'-' if v is None else format(v, spec):>{width}}"


def header(text, title):
    print()
    print(title)
    print(text)
    print("-" * len(text))


def rel_diff_curve(r):
    f = np.asarray(r["dual_curve"], dtype=float)
    t = np.asarray(r["timestamps"], dtype=float)
    fstar = r["dual"]
    return t, np.abs(fstar - f) / abs(fstar)


def time_to(t, rel, level):
    hit = np.flatnonzero(rel <= level)
    return float(t[hit[0]]) if hit.size else None


def plot_fig2(curves, Cs, fold, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(Cs), figsize=(4.2 * len(Cs), 3.6), squeeze=False)
    for ax, C in zip(axes[0], Cs):
        for solver, style in (("sdcd", "-"), ("sdm", "--")):
            r = curves.get((C, solver))
            if r is None:
                continue
            t, rel = rel_diff_curve(r)
            keep = rel > 0  # the last point is f* itself
            ax.semilogy(t[keep], rel[keep], style, marker=".", markersize=3,
                        label=f"{LABEL[solver]} ({r['n_iter']} passes, {r['seconds']:.2f}s)")
        ax.set_title(f"OCR{fold}, C={C:g}")
        ax.set_xlabel("training time (s)")
        ax.set_ylabel(r"$|f^* - f(t)| \,/\, |f^*|$")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Relative dual objective difference vs time (each run against its own final dual)", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folds", nargs="+", type=int, default=OCR_FOLDS, choices=OCR_FOLDS,
                    help="OCR partitions (train on fold k, test on the others); default 0..9")
    ap.add_argument("--C", nargs="+", type=float, default=None, help="default 0.01 0.1 1.0 (the paper's)")
    ap.add_argument("--reps", type=int, default=1, help="repetitions per fit; times are the median")
    ap.add_argument("--c2", nargs="+", type=float, default=[0.1, 1.0, 10.0], help="CRFsuite L2 coefficients")
    ap.add_argument("--fig-fold", type=int, default=0, choices=OCR_FOLDS, help="partition of the Fig. 2 curves")
    ap.add_argument("--large-C", nargs="+", type=float, default=None,
                    help="C values of the large run; default the --C values if --C is given, else 0.01 0.1")
    ap.add_argument("--large-c2", type=float, default=1.0, help="CRFsuite c2 of the large run")
    ap.add_argument("--skip-crf", action="store_true", help="no CRFsuite runs")
    ap.add_argument("--skip-large", action="store_true", help="no large run (table 5)")
    ap.add_argument("--skip-cp", action="store_true", help="no cutting-plane runs")
    ap.add_argument("--large-sdm-batch", type=int, default=64,
                    help="SDM oracle_batch of the large run's n_jobs = 1 vs 2 rows (default 64; 1: no such rows)")
    ap.add_argument("--png", type=Path, default=ROOT / "results" / "ocr_fig2.png", help="Fig. 2 output")
    ap.add_argument("--json", help="also write all results to this file")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    Cs = args.C if args.C is not None else [0.01, 0.1, 1.0]
    large_Cs = args.large_C if args.large_C is not None else (args.C if args.C is not None else [0.01, 0.1])
    folds = list(dict.fromkeys(args.folds))
    report = {"folds": folds, "C": Cs, "reps": args.reps, "partitions": [], "paper_cp": [], "cp": [],
              "table_v": [], "fig2": {}, "crf": [], "large": [], "large_speedups": [], "not_converged": []}
    cp_jobs = [] if args.skip_cp else [("cp", "cp"), ("cp-margin", "cp-margin")]
    not_converged = []

    def note_convergence(r, where):
        if not r.get("converged", True):
            not_converged.append(f"{LABEL[r['solver']]} C={r['param']:g} {where} ({r['n_iter']} passes)")

    # ---- 1. Table III / IV analog ------------------------------------------------------------
    head = (f"{'C':>5} {'part':>5} | {'SDCD s':>8} {'paper s':>8} {'speed-up':>8} | {'SDCD acc':>8} "
            f"{'paper acc':>9} {'diff':>6} | {'SDM s':>7} {'SDM acc':>7} | {'SDCD it':>7} {'SDM it':>6} "
            f"| {'SDCD |V|':>8} {'SDM |V|':>7}")
    header(head, "1. Table III/IV analog: LSE-SDCD vs the paper's SDCD (train on fold k, test on the rest; "
                 "speed-up = paper s / our s; acc = test letter accuracy %, diff = ours - paper in points)")
    cells = {}
    summaries = []
    for C in Cs:
        speedups, diffs = [], []
        for k in folds:
            rs = run_reps([("sdcd", "sdcd", C), ("sdm", "sdm", C)] + [(key, solver, C) for key, solver in cp_jobs],
                          k, args.reps)
            cells[(C, k)] = rs
            s, m = rs["sdcd"], rs["sdm"]
            for r in rs.values():
                note_convergence(r, f"OCR{k}")
            ps, pa = paper(PAPER_SDCD_SECONDS, C, k), paper(PAPER_SDCD_ACC, C, k)
            speed = ps / s["seconds"] if ps is not None else None
            diff = 100 * s["accuracy"] - pa if pa is not None else None
            if speed is not None:
                speedups.append(speed)
            if diff is not None:
                diffs.append(diff)
            report["partitions"].append({"C": C, "fold": k, "paper_sdcd_seconds": ps, "paper_sdcd_accuracy": pa,
                                         "speedup": speed, "accuracy_diff_points": diff,
                                         "sdcd": s, "sdm": m, "cp": rs.get("cp"), "cp_margin": rs.get("cp-margin")})
            print(f"{C:5g} {'OCR' + str(k):>5} | {s['seconds']:8.3f} {fmt(ps, '.2f', 8)} {fmt(speed, '.1f', 8)} | "
                  f"{100 * s['accuracy']:8.2f} {fmt(pa, '.2f', 9)} {fmt(diff, '+.2f', 6)} | "
                  f"{m['seconds']:7.3f} {100 * m['accuracy']:7.2f} | {s['n_iter']:7d} {m['n_iter']:6d} | "
                  f"{s['working_set_size']:8d} {m['working_set_size']:7d}", flush=True)
        nc = sum(not cells[(C, k)]["sdcd"]["converged"] for k in folds)
        ncm = sum(not cells[(C, k)]["sdm"]["converged"] for k in folds)
        if speedups:
            line = (f"  C={C:g}: speed-up min {min(speedups):.1f}x, median {np.median(speedups):.1f}x; "
                    f"max |acc diff| {max(abs(d) for d in diffs):.2f} points (mean {np.mean(diffs):+.2f}); ")
        else:
            line = f"  C={C:g}: no published numbers for this C; "
        line += f"not converged: SDCD {nc}/{len(folds)}, SDM {ncm}/{len(folds)}"
        summaries.append(line)
        print(line, flush=True)

    head = (f"{'C':>5} {'part':>5} | {'paper CP s':>10} {'paper SDCD s':>12} {'CP/SDCD':>7} {'CP/ours':>7} | "
            f"{'paper CP acc':>12} {'our SDCD acc':>12}")
    header(head, "   paper CP: the paper's cutting-plane times and accuracies for the same cells "
                 "(CP/SDCD = paper's own speed-up, CP/ours = paper CP s / our SDCD s)")
    for C in Cs:
        for k in folds:
            s = cells[(C, k)]["sdcd"]
            cp, ps, ca = paper(PAPER_CP_SECONDS, C, k), paper(PAPER_SDCD_SECONDS, C, k), paper(PAPER_CP_ACC, C, k)
            r1 = cp / ps if cp is not None and ps is not None else None
            r2 = cp / s["seconds"] if cp is not None else None
            report["paper_cp"].append({"C": C, "fold": k, "paper_cp_seconds": cp, "paper_cp_accuracy": ca})
            print(f"{C:5g} {'OCR' + str(k):>5} | {fmt(cp, '.2f', 10)} {fmt(ps, '.2f', 12)} {fmt(r1, '.1f', 7)} "
                  f"{fmt(r2, '.0f', 7)} | {fmt(ca, '.2f', 12)} {100 * s['accuracy']:12.2f}")

    if cp_jobs:
        head = (f"{'C':>5} {'part':>5} | {'CP s':>8} {'it':>5} {'calls':>8} {'CP dual':>10} | {'SDCD s':>7} "
                f"{'SDCD dual':>10} | {'CP/SDCD':>7} {'paper':>6} | {'paper CP s':>10} {'pCP/CP':>7}")
        header(head, "   Table III analog, our cutting plane: CP (LSE, the paper's Alg. 1; -e = 0.1 per example) "
                     "vs LSE-SDCD (CP/SDCD = time ratio, ours and the paper's; pCP/CP = paper CP s / our CP s; "
                     "dual = LSE dual objective; calls = oracle calls)")
        ratios = {}
        for C in Cs:
            for k in folds:
                c, s = cells[(C, k)]["cp"], cells[(C, k)]["sdcd"]
                cp, ps = paper(PAPER_CP_SECONDS, C, k), paper(PAPER_SDCD_SECONDS, C, k)
                ours = c["seconds"] / s["seconds"]
                theirs = cp / ps if cp is not None and ps is not None else None
                vs_paper = cp / c["seconds"] if cp is not None else None
                ratios.setdefault(C, []).append((ours, theirs, vs_paper))
                report["cp"].append({"C": C, "fold": k, "cp_over_sdcd": ours, "paper_cp_over_sdcd": theirs,
                                     "paper_cp_over_our_cp": vs_paper, "paper_cp_seconds": cp,
                                     "cp": c, "cp_margin": cells[(C, k)]["cp-margin"]})
                print(f"{C:5g} {'OCR' + str(k):>5} | {c['seconds']:8.3f} {c['n_iter']:5d} {c['n_oracle_calls']:8d} "
                      f"{c['dual']:10.4f} | {s['seconds']:7.3f} {s['dual']:10.4f} | {ours:7.2f} "
                      f"{fmt(theirs, '.1f', 6)} | {fmt(cp, '.2f', 10)} {fmt(vs_paper, '.2f', 7)}", flush=True)
        medians = []
        for C in Cs:
            ours = [r[0] for r in ratios[C]]
            theirs = [r[1] for r in ratios[C] if r[1] is not None]
            vs = [r[2] for r in ratios[C] if r[2] is not None]
            medians.append(float(np.median(ours)))
            line = (f"  C={C:g}: CP/SDCD median {np.median(ours):.2f} (min {min(ours):.2f}, max {max(ours):.2f}); "
                    f"paper {np.median(theirs) if theirs else float('nan'):.1f}; paper CP / our CP median "
                    f"{np.median(vs) if vs else float('nan'):.2f}x")
            summaries.append(line)
            print(line)
        by_C = sorted(zip(Cs, medians))
        faster = all(m > 1 for _, m in by_C)
        increasing = all(a[1] < b[1] for a, b in zip(by_C, by_C[1:]))
        verdict = (f"  the paper's finding 'SDCD faster than CP, increasingly with C' on our implementation: "
                   f"SDCD faster at every C: {'yes' if faster else 'NO'}; CP/SDCD median increasing with C: "
                   + ("yes" if increasing else "NO") + (" (one C only)" if len(by_C) < 2 else ""))
        report["cp_verdict"] = {"sdcd_faster_at_every_C": faster, "ratio_increasing_with_C": increasing,
                                "median_cp_over_sdcd": dict((str(c), m) for c, m in by_C)}
        summaries.append(verdict)
        print(verdict)

        head = (f"{'C':>5} {'part':>5} | {'CPm s':>8} {'it':>5} {'calls':>8} {'CPm primal':>11} | {'SDM s':>7} "
                f"{'passes':>6} {'calls':>8} {'SDM primal':>11} | {'CPm/SDM':>7} {'rel primal':>10}")
        header(head, "   CP-margin (one-slack cutting plane, margin rescaling, -e = 0.1 per example) vs SDM on the "
                     "same problem (OP1): seconds, iterations / passes, oracle calls, primal objective "
                     "(rel primal = (CPm - SDM) / SDM)")
        for C in Cs:
            for k in folds:
                c, m = cells[(C, k)]["cp-margin"], cells[(C, k)]["sdm"]
                rel = (c["primal"] - m["primal"]) / m["primal"]
                print(f"{C:5g} {'OCR' + str(k):>5} | {c['seconds']:8.3f} {c['n_iter']:5d} {c['n_oracle_calls']:8d} "
                      f"{c['primal']:11.4f} | {m['seconds']:7.3f} {m['n_iter']:6d} {m['n_oracle_calls']:8d} "
                      f"{m['primal']:11.4f} | {c['seconds'] / m['seconds']:7.2f} {rel:+10.2e}", flush=True)

    # ---- 2. Table V analog -------------------------------------------------------------------
    head = (f"{'C':>5} | {'SDCD s':>8} {'SDM s':>8} {'SDCD/SDM':>8} | {'SDCD acc':>8} {'SDM acc':>8} | "
            f"{'SDCD |V|':>9} {'SDM |V|':>8} | {'SDCD it':>7} {'SDM it':>6} | {'SDCD orc':>8} {'SDM orc':>8}")
    header(head, f"2. Table V analog: SDCD vs SDM over partitions {folds} (s = total seconds, acc = mean %, "
                 f"|V| = mean sum_i |V_i|, it = mean passes, orc = mean oracle calls)")
    agg = {}
    for C in Cs:
        row = {"C": C}
        for solver in ("sdcd", "sdm"):
            rs = [cells[(C, k)][solver] for k in folds]
            row[solver] = dict(total_seconds=float(sum(r["seconds"] for r in rs)),
                               mean_accuracy=float(np.mean([r["accuracy"] for r in rs])),
                               mean_working_set=float(np.mean([r["working_set_size"] for r in rs])),
                               mean_passes=float(np.mean([r["n_iter"] for r in rs])),
                               mean_oracle_calls=float(np.mean([r["n_oracle_calls"] for r in rs])))
        agg[C] = row
        report["table_v"].append(row)
        s, m = row["sdcd"], row["sdm"]
        print(f"{C:5g} | {s['total_seconds']:8.3f} {m['total_seconds']:8.3f} "
              f"{s['total_seconds'] / m['total_seconds']:8.2f} | {100 * s['mean_accuracy']:8.2f} "
              f"{100 * m['mean_accuracy']:8.2f} | {s['mean_working_set']:9.0f} {m['mean_working_set']:8.0f} | "
              f"{s['mean_passes']:7.0f} {m['mean_passes']:6.0f} | {s['mean_oracle_calls']:8.0f} "
              f"{m['mean_oracle_calls']:8.0f}")
    best = {solver: max(Cs, key=lambda C: agg[C][solver]["mean_accuracy"]) for solver in ("sdcd", "sdm")}
    s, m = agg[best["sdcd"]]["sdcd"], agg[best["sdm"]]["sdm"]
    print(f"  each at its best C (by mean test accuracy, as the paper's Table V pairs SDCD C=0.01 with SDM C=0.1): "
          f"SDCD C={best['sdcd']:g} {s['total_seconds']:.3f}s {100 * s['mean_accuracy']:.2f}% "
          f"|V| {s['mean_working_set']:.0f}  vs  SDM C={best['sdm']:g} {m['total_seconds']:.3f}s "
          f"{100 * m['mean_accuracy']:.2f}% |V| {m['mean_working_set']:.0f}")
    report["best_C"] = best

    # ---- 3. Fig. 2 analog --------------------------------------------------------------------
    fold = args.fig_fold
    curves = {}
    for C in Cs:
        rs = cells.get((C, fold))
        if rs is None:  # the figure's partition is not among --folds: one extra run per solver
            rs = run_reps([("sdcd", "sdcd", C), ("sdm", "sdm", C)], fold, 1)
            for r in rs.values():
                note_convergence(r, f"OCR{fold} (fig)")
        for solver in ("sdcd", "sdm"):
            curves[(C, solver)] = rs[solver]
    plot_fig2(curves, Cs, fold, args.png)
    levels = (1e-1, 1e-2, 1e-3, 1e-4)
    head = (f"{'C':>5} {'solver':>6} | {'passes':>6} {'points':>6} {'final dual':>12} {'seconds':>8} | "
            + " ".join(f"{'t(' + format(lv, '.0e') + ')':>9}" for lv in levels))
    header(head, f"3. Fig. 2 analog (OCR{fold}): time (s) until |f* - f(t)|/|f*| <= level, f* = the run's final "
                 f"dual; points = recorded dual values (SDM records one per outer iteration)")
    for C in Cs:
        for solver in ("sdcd", "sdm"):
            r = curves[(C, solver)]
            t, rel = rel_diff_curve(r)
            reach = [time_to(t, rel, lv) for lv in levels]
            report["fig2"][f"C={C:g} {solver}"] = {"timestamps": r["timestamps"], "dual_curve": r["dual_curve"],
                                                   "dual": r["dual"], "time_to": dict(zip(map(str, levels), reach))}
            print(f"{C:5g} {LABEL[solver]:>6} | {r['n_iter']:6d} {len(t):6d} {r['dual']:12.5g} {r['seconds']:8.3f} | "
                  + " ".join(fmt(v, '.3f', 9) for v in reach))
    print(f"  figure: {args.png}")

    # ---- 4. CRFsuite ---------------------------------------------------------------------------
    if not args.skip_crf:
        cs, cm = best["sdcd"], best["sdm"]
        head = (f"{'part':>5} | {'SDCD s':>7} {'acc':>6} | {'SDM s':>7} {'acc':>6} | "
                + " | ".join(f"{'crf s':>7} {'acc':>6} {'it':>4}" for _ in args.c2))
        title = (f"4. CRFsuite (L-BFGS, c1=0) vs SDCD at C={cs:g} and SDM at C={cm:g} (best mean test accuracy "
                 f"in table 1); CRFsuite columns: c2 = " + ", ".join(f"{c2:g}" for c2 in args.c2)
                 + " (it = L-BFGS iterations)")
        header(head, title)
        tot = {"sdcd": [], "sdm": [], **{c2: [] for c2 in args.c2}}
        for k in folds:
            rs = run_reps([(c2, "crf", c2) for c2 in args.c2], k, args.reps)
            s, m = cells[(cs, k)]["sdcd"], cells[(cm, k)]["sdm"]
            tot["sdcd"].append(s)
            tot["sdm"].append(m)
            for c2 in args.c2:
                tot[c2].append(rs[c2])
            report["crf"].append({"fold": k, "sdcd_C": cs, "sdm_C": cm,
                                  "crf": [dict(rs[c2], c2=c2) for c2 in args.c2]})
            print(f"{'OCR' + str(k):>5} | {s['seconds']:7.3f} {100 * s['accuracy']:6.2f} | {m['seconds']:7.3f} "
                  f"{100 * m['accuracy']:6.2f} | "
                  + " | ".join(f"{rs[c2]['seconds']:7.3f} {100 * rs[c2]['accuracy']:6.2f} {rs[c2]['n_iter']:4d}"
                               for c2 in args.c2), flush=True)

        def tot_txt(rs):
            return f"{sum(r['seconds'] for r in rs):7.3f} {100 * np.mean([r['accuracy'] for r in rs]):6.2f}"
        print(f"{'all':>5} | {tot_txt(tot['sdcd'])} | {tot_txt(tot['sdm'])} | "
              + " | ".join(f"{tot_txt(tot[c2])} {'':>4}" for c2 in args.c2) + "   (total s, mean acc)")

    # ---- 5. large ---------------------------------------------------------------------------
    if not args.skip_large:
        jobs = [(f"sdcd C={C:g}", "sdcd", C) for C in large_Cs] + [(f"sdm C={C:g}", "sdm", C) for C in large_Cs]
        if not args.skip_crf:
            jobs.append((f"crf c2={args.large_c2:g}", "crf", args.large_c2))
        pairs = []      # (label, key with n_jobs=1, key with n_jobs=2)
        for C in large_Cs:
            variants = [] if args.skip_cp else [("cp", {}), ("cp-margin", {})]
            if args.large_sdm_batch > 1:
                variants.append(("sdm", {"oracle_batch": args.large_sdm_batch}))
            for solver, opts in variants:
                keys = []
                for n_jobs in (1, 2):
                    key = (f"{solver} C={C:g}" + "".join(f" {k}={v}" for k, v in opts.items())
                           + f" n_jobs={n_jobs}")
                    jobs.append((key, solver, C, dict(opts, n_jobs=n_jobs)))
                    keys.append(key)
                pairs.append((f"{LABEL[solver]} C={C:g}" + (f" B={opts['oracle_batch']}" if opts else ""),
                              *keys))
        rs = run_reps(jobs, "large", args.reps)
        head = (f"{'method':>9} {'param':>8} | {'seconds':>8} {'acc %':>6} | {'peak MB':>7} {'train MB':>8} | "
                f"{'passes':>6} {'|V|':>7} {'conv':>4} | {'n_jobs':>6} {'B':>4} {'oracle s':>8} {'calls':>8}")
        r0 = rs[jobs[0][0]]
        header(head, f"5. large: train on folds 1-9 ({r0['n_train_words']:,} words, {r0['n_train_letters']:,} letters), "
                     f"test on fold 0 ({r0['n_test_letters']:,} letters); peak MB = worker ru_maxrss after "
                     f"training, train MB = its growth during training")
        for key, solver, param, *opts in jobs:
            r = rs[key]
            opts = opts[0] if opts else {}
            note_convergence(r, "large")
            report["large"].append(dict(r, method=key))
            pname = f"c2={param:g}" if solver == "crf" else f"C={param:g}"
            ws = f"{r['working_set_size']:7d}" if "working_set_size" in r else f"{'-':>7}"
            extra = ""
            if solver != "crf":
                extra = (f" | {opts.get('n_jobs', 1):6d} {opts.get('oracle_batch', 1) if solver == 'sdm' else '-':>4} "
                         f"{fmt(r.get('oracle_seconds'), '.3f', 8)} {r['n_oracle_calls']:8d}")
            print(f"{LABEL[solver]:>9} {pname:>8} | {r['seconds']:8.3f} {100 * r['accuracy']:6.2f} | "
                  f"{r['peak_rss_mb']:7.1f} {r['train_rss_mb']:8.1f} | {r['n_iter']:6d} {ws} "
                  f"{'yes' if r['converged'] else 'NO':>4}{extra}", flush=True)
        if pairs:
            print(f"  n_jobs 2 vs 1 (medians of {args.reps} interleaved runs; results are identical for any n_jobs, "
                  f"so only the times differ):")
            for label, k1, k2 in pairs:
                a, b = rs[k1], rs[k2]
                osp = a["oracle_seconds"] / b["oracle_seconds"] if a.get("oracle_seconds") and b.get("oracle_seconds") \
                    else None
                same = a["n_oracle_calls"] == b["n_oracle_calls"] and a["dual"] == b["dual"]
                report["large_speedups"].append({"method": label, "oracle_speedup": osp,
                                                 "fit_speedup": a["seconds"] / b["seconds"],
                                                 "identical": same})
                print(f"    {label:24} oracle phase {a.get('oracle_seconds') or float('nan'):7.3f}s -> "
                      f"{b.get('oracle_seconds') or float('nan'):7.3f}s ({fmt(osp, '.2f', 4)}x), whole fit "
                      f"{a['seconds']:7.3f}s -> {b['seconds']:7.3f}s ({a['seconds'] / b['seconds']:.2f}x)"
                      + ("" if same else "  RESULTS DIFFER"), flush=True)

    print()
    if not_converged:
        print(f"fits that did not converge (ConvergenceWarning silenced): {len(not_converged)}")
        for line in not_converged:
            print("  " + line)
    else:
        print("all fits converged")
    report["not_converged"] = not_converged
    report["summaries"] = summaries
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, default=float))


if __name__ == "__main__":
    main()
