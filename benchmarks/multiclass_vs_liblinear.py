"""Multiclass SDM (ssvmlinear -s 0) vs LIBLINEAR -s 4 (Crammer-Singer) on OCR letters and Sector, and
the one-slack cutting plane (ssvmlinear -s 2) on the same problem.

OCR letters flattened to independent letters (128 binary pixels, 26 classes), and the Sector text
subset (tf-idf, 105 classes, ~55,000 features, few examples per class). Splits:
  small: OCR, train on the words of fold 0, test on folds 1-9
  large: OCR, train on folds 1-9, test on fold 0
  sector: train on sector.heldout (865 documents), test on sector.test (961)
Both solvers get the same problem (no bias) and the same tolerance (-e 0.1, LIBLINEAR's default
and the same KKT-violation rule). Every fit runs in a fresh subprocess, so that its peak RSS is its
own; runs of the two solvers are interleaved; the table shows the median of --reps train times, the
primal objective of the returned weights computed by one common function, test accuracy and peak
RSS, with ours/LIBLINEAR ratios. Unless --skip-cp, a second table puts the cutting plane (margin
rescaling, -e --cp-tol: svm_struct's epsilon, per example) beside SDM and LIBLINEAR: seconds,
iterations (SDM: passes), oracle calls and primal objective (its runs are interleaved with the
others').

    python benchmarks/multiclass_vs_liblinear.py                 # all splits, C in 0.01 0.1 1 10
    python benchmarks/multiclass_vs_liblinear.py --split large --C 0.1 1
    python benchmarks/multiclass_vs_liblinear.py --split small --C 0.1 --reps 1   # smoke test
    python benchmarks/multiclass_vs_liblinear.py --sklearn     # also scikit-learn's LinearSVC (crammer_singer)
    python benchmarks/multiclass_vs_liblinear.py --split sector --C 1 --default --skip-cp

--default adds our fit at its default rule (tol=None) beside the one at LIBLINEAR's tolerance.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "data"


def load_split(split):
    from ssvmlinear import load_svmlight_file
    if split == "sector":
        Xtr, ytr = load_svmlight_file(DATA / "sector.heldout.svm.gz")[:2]
        Xte, yte = load_svmlight_file(DATA / "sector.test.svm.gz")[:2]
        d = max(Xtr.shape[1], Xte.shape[1])
        Xtr.resize((Xtr.shape[0], d))
        Xte.resize((Xte.shape[0], d))
        return Xtr, ytr, Xte, yte
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters.svm.gz", n_features=128)
    folds = np.repeat(np.loadtxt(DATA / "ocr_letters.folds", dtype=np.int64), lengths)
    train = folds == 0 if split == "small" else folds != 0
    return X[train], y[train], X[~train], y[~train]


def primal_objective(W, X, y, classes, C):
    """1/2 ||W||^2 + C sum_i max_k [1(k != y_i) + w_k x_i - w_{y_i} x_i]  (W: n_classes x n_features)."""
    S = np.asarray(X @ W.T)
    rows = np.arange(S.shape[0])
    yi = np.searchsorted(classes, y)
    aug = S + 1.0
    aug[rows, yi] -= 1.0
    return 0.5 * float(np.sum(W * W)) + C * float(np.sum(aug.max(axis=1) - S[rows, yi]))


def worker(solver, split, C, tol, out):
    Xtr, ytr, _, _ = load_split(split)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    calls = -1
    if solver in ("ssvmlinear", "cp", "default"):
        import warnings
        from ssvmlinear import MulticlassSSVM, ConvergenceWarning
        extra = dict(solver="cutting-plane", loss="margin") if solver == "cp" else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t = time.perf_counter()
            est = MulticlassSSVM(C=C, tol=None if solver == "default" else tol, fit_intercept=False, max_iter=100000,
                                 **extra).fit(Xtr, ytr)
            seconds = time.perf_counter() - t
        W, classes, iters, calls = est.coef_, est.classes_, est.n_iter_, est.n_oracle_calls_
    elif solver == "sklearn":
        import warnings
        from sklearn.svm import LinearSVC
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            est = LinearSVC(C=C, multi_class="crammer_singer", fit_intercept=False, tol=tol,
                            max_iter=100000).fit(Xtr, ytr)
            seconds = time.perf_counter() - t
        W, classes, iters = est.coef_, est.classes_, int(np.max(est.n_iter_))
    else:
        from liblinear import liblinearutil as ll
        prob = ll.problem(ytr, Xtr)
        param = ll.parameter(f"-s 4 -c {C} -e {tol} -q")
        t = time.perf_counter()
        model = ll.train(prob, param)
        seconds = time.perf_counter() - t
        from planted_vs_liblinear import liblinear_weights
        (W, classes), iters = liblinear_weights(model, Xtr.shape[1]), -1
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    np.savez(out, W=W, classes=classes, seconds=seconds, rss=rss1 * 1024, rss_train=(rss1 - rss0) * 1024,
             iters=iters, calls=calls)


def run_one(solver, split, C, tol):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.npz")
        subprocess.run([sys.executable, __file__, "--worker", solver, split, repr(C), repr(tol), out], check=True)
        r = np.load(out)
        return {k: r[k] for k in r.files}


def print_beside(rows, key, label, ref_key, ref_label, heading):
    """One line per row: run `key` beside run `ref_key` (seconds, primal, its relative difference,
    accuracy, the time ratio)."""
    print()
    print(f"{heading}: seconds, primal as above, rel = (its primal - {ref_label}'s) / {ref_label}'s")
    for row in rows:
        k, o = row[key], row[ref_key]
        print(f"{row['split']:6} {row['C']:6g} | {label} {k['seconds']:8.3f} s primal {k['primal']:14.6f} "
              f"rel {(k['primal'] - o['primal']) / o['primal']:+9.2e} acc {100 * k['accuracy']:6.2f}% | "
              f"{ref_label} {o['seconds']:8.3f} s | {label}/{ref_label} {k['seconds'] / o['seconds']:6.2f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", nargs="+", default=["small", "large"], choices=["small", "large", "sector"])
    ap.add_argument("--C", nargs="+", type=float, default=[0.01, 0.1, 1.0, 10.0])
    ap.add_argument("--tol", type=float, default=0.1)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--skip-cp", action="store_true", help="no cutting-plane runs")
    ap.add_argument("--cp-tol", type=float, default=0.1,
                    help="the cutting plane's -e (svm_struct's epsilon per example; default 0.1)")
    ap.add_argument("--sklearn", action="store_true",
                    help="also scikit-learn's LinearSVC(multi_class='crammer_singer'), the same problem")
    ap.add_argument("--default", action="store_true", help="also our fit at its default rule (tol=None)")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        solver, split, C, tol, out = args.worker
        worker(solver, split, float(C), float(tol), out)
        return
    rows = []
    header = (f"{'split':6} {'C':>6} | {'ours s':>8} {'LL s':>8} {'ratio':>6} | {'ours primal':>14} {'LL primal':>14} "
              f"{'rel diff':>9} | {'ours acc':>8} {'LL acc':>8} | {'ours MB':>7} {'LL MB':>7}")
    print(header)
    print("-" * len(header))
    for split in args.split:
        Xtr, ytr, Xte, yte = load_split(split)
        for C in args.C:
            runs = {"ssvmlinear": [], "liblinear": []}
            if not args.skip_cp:
                runs["cp"] = []
            if args.sklearn:
                runs["sklearn"] = []
            if args.default:
                runs["default"] = []
            for _ in range(args.reps):
                for solver in runs:
                    runs[solver].append(run_one(solver, split, C, args.cp_tol if solver == "cp" else args.tol))
            row = {"split": split, "C": C, "n_train": Xtr.shape[0], "n_test": Xte.shape[0]}
            for solver, rs in runs.items():
                r = rs[0]
                row[solver] = dict(
                    seconds=float(np.median([x["seconds"] for x in rs])),
                    all_seconds=[float(x["seconds"]) for x in rs],
                    primal=primal_objective(r["W"], Xtr, ytr, r["classes"], C),
                    accuracy=float(np.mean(r["classes"][np.argmax(np.asarray(Xte @ r["W"].T), axis=1)] == yte)),
                    peak_rss_mb=max(float(x["rss"]) for x in rs) / 2**20,
                    iters=int(r["iters"]), oracle_calls=int(r["calls"]))
            o, l = row["ssvmlinear"], row["liblinear"]
            row["time_ratio"] = o["seconds"] / l["seconds"]
            row["primal_rel_diff"] = (o["primal"] - l["primal"]) / l["primal"]
            rows.append(row)
            print(f"{split:6} {C:6g} | {o['seconds']:8.3f} {l['seconds']:8.3f} {row['time_ratio']:6.2f} | "
                  f"{o['primal']:14.6f} {l['primal']:14.6f} {row['primal_rel_diff']:+9.2e} | "
                  f"{100 * o['accuracy']:7.2f}% {100 * l['accuracy']:7.2f}% | "
                  f"{o['peak_rss_mb']:7.1f} {l['peak_rss_mb']:7.1f}", flush=True)
    if not args.skip_cp:
        print()
        print(f"cutting plane (-s 2, margin rescaling, -e {args.cp_tol:g} per example) beside SDM (-s 0, -e {args.tol:g}) "
              f"and LIBLINEAR -s 4: it = iterations (SDM: passes), calls = oracle calls, primal as above, "
              f"rel = (primal - LIBLINEAR's) / LIBLINEAR's")
        header = (f"{'split':6} {'C':>6} | {'CP s':>8} {'it':>6} {'calls':>9} {'CP primal':>14} {'rel':>9} {'acc':>7} | "
                  f"{'SDM s':>8} {'passes':>6} {'calls':>9} {'SDM primal':>14} | {'LL s':>8} {'CP/SDM':>6} {'CP/LL':>6}")
        print(header)
        print("-" * len(header))
        for row in rows:
            c, o, l = row["cp"], row["ssvmlinear"], row["liblinear"]
            row["cp_primal_rel_diff"] = (c["primal"] - l["primal"]) / l["primal"]
            print(f"{row['split']:6} {row['C']:6g} | {c['seconds']:8.3f} {c['iters']:6d} {c['oracle_calls']:9d} "
                  f"{c['primal']:14.6f} {row['cp_primal_rel_diff']:+9.2e} {100 * c['accuracy']:6.2f}% | "
                  f"{o['seconds']:8.3f} {o['iters']:6d} {o['oracle_calls']:9d} {o['primal']:14.6f} | "
                  f"{l['seconds']:8.3f} {c['seconds'] / o['seconds']:6.2f} {c['seconds'] / l['seconds']:6.2f}",
                  flush=True)
    if args.default:
        print_beside(rows, "default", "default", "liblinear", "LIBLINEAR",
                     "our fit at its default rule (tol=None) beside LIBLINEAR -s 4 at -e tol")
    if args.sklearn:
        print_beside(rows, "sklearn", "sklearn", "ssvmlinear", "SDM",
                     f"scikit-learn's LinearSVC(multi_class='crammer_singer', fit_intercept=False, tol={args.tol:g}) "
                     "beside SDM")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
