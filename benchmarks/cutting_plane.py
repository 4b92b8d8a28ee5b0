"""One-slack cutting plane (ssvmlinear -s 2 / -s 3) beside SDM and LSE-SDCD on OCR words, and
the n_jobs = 1 vs 2 speed-up of its oracle phase.

Protocol of Balamurugan et al. (Sec. V.B): partition k trains on the words of fold k and tests on
all other words. For each C and partition:
  - LSE: cutting plane (Alg. 1, -s 3) vs LSE-SDCD (Alg. 2, -s 1): seconds, iterations, oracle
    calls, dual objective, test accuracy, beside the paper's published CP and SDCD seconds
    (Table III) and the ratio paper-CP / our-CP;
  - margin rescaling: cutting plane (-s 2) vs SDM (-s 0): seconds, iterations, oracle calls and
    the primal objective of both (they solve the same problem; the cutting plane's epsilon bounds
    the difference by tol * sum_i C_i).
Then "large" (train on folds 1-9, test on fold 0): the cutting plane with n_jobs = 1 and 2, the
seconds of its oracle phase (loss-augmented inference of every example, in threads) and of the
whole fit, and the speed-up. Times are medians of --reps runs in this process.

    python benchmarks/cutting_plane.py                      # folds 0-9, C = 0.01 0.1 1
    python benchmarks/cutting_plane.py --folds 0 --C 0.01 0.1 1
"""
import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

from ssvmlinear import ChainSSVM, load_svmlight_file
from ssvmlinear.exceptions import ConvergenceWarning

DATA = Path(__file__).resolve().parent.parent / "data"
PAPER_CP = {0.01: [115.36, 99.37, 119.97, 132.31, 142.08, 113.14, 156, 175.91, 133.95, 113.33],
            0.1: [595.13, 628.05, 474.26, 432.04, 1288.68, 467.75, 418.11, 378.49, 511.23, 1193.12],
            1.0: [4181.79, 9013.09, 4928.94, 9628, 8971.55, 7657.24, 7134.54, 4904.36, 4118.72, 3822.71]}
PAPER_SDCD = {0.01: [24.89, 23.41, 20.84, 25.44, 29.35, 25.62, 34.66, 23.07, 30.87, 24.95],
              0.1: [37.37, 38.73, 36.73, 49.69, 38.71, 33.47, 54.11, 68.39, 49.2, 37.63],
              1.0: [106.39, 179.53, 123.81, 116.5, 178.28, 148.41, 184.26, 193.44, 146.02, 116.76]}


def fit(params, Xtr, ytr, ltr, Xte, yte, lte, reps):
    times, est = [], None
    for _ in range(reps):
        t = time.perf_counter()
        est = ChainSSVM(**params).fit(Xtr, ytr, ltr)
        times.append(time.perf_counter() - t)
    return dict(seconds=float(np.median(times)), iters=int(est.n_iter_), calls=int(est.n_oracle_calls_),
                dual=float(est.dual_objective_), primal=float(est.objective_), converged=bool(est.converged_),
                accuracy=float(est.score(Xte, yte, lte)),
                oracle_seconds=getattr(est, "oracle_seconds_", None))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folds", nargs="+", type=int, default=list(range(10)))
    ap.add_argument("--C", nargs="+", type=float, default=[0.01, 0.1, 1.0])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--max-iter", type=int, default=100000)
    ap.add_argument("--large-C", type=float, default=0.1)
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters.svm.gz", n_features=128)
    folds = np.loadtxt(DATA / "ocr_letters.folds", dtype=np.int64)
    rows = []
    print("LSE: cutting plane (-s 3) vs LSE-SDCD (-s 1); margin: cutting plane (-s 2) vs SDM (-s 0); "
          "tol = defaults (CP 0.1 per example, SDCD 1e-4, SDM 0.1)")
    print(f"{'C':>5} {'part':>5} | {'CP-lse s':>8} {'it':>5} {'calls':>7} {'dual':>9} {'acc':>6} | "
          f"{'SDCD s':>7} {'dual':>9} {'acc':>6} | {'paperCP':>8} {'paperSD':>8} {'pCP/CP':>7} {'CP/SDCD':>7} | "
          f"{'CP s':>6} {'it':>5} {'calls':>7} {'primal':>10} | {'SDM s':>6} {'primal':>10} {'rel':>8}")
    for C in args.C:
        for k in args.folds:
            tr_w = folds == k
            tr, te = np.repeat(tr_w, lengths), np.repeat(~tr_w, lengths)
            data = (X[tr], y[tr], lengths[tr_w], X[te], y[te], lengths[~tr_w])
            r = dict(C=C, fold=k)
            r["cp_lse"] = fit(dict(C=C, solver="cutting-plane", loss="lse", max_iter=args.max_iter), *data, args.reps)
            r["sdcd"] = fit(dict(C=C, loss="lse", max_iter=args.max_iter), *data, args.reps)
            r["cp"] = fit(dict(C=C, solver="cutting-plane", loss="margin", max_iter=args.max_iter), *data, args.reps)
            r["sdm"] = fit(dict(C=C, loss="margin", max_iter=args.max_iter), *data, args.reps)
            pcp, psd = PAPER_CP.get(C, [np.nan] * 10)[k], PAPER_SDCD.get(C, [np.nan] * 10)[k]
            a, s, c, m = r["cp_lse"], r["sdcd"], r["cp"], r["sdm"]
            r["paper_cp_over_ours"] = pcp / a["seconds"]
            r["cp_over_sdcd"] = a["seconds"] / s["seconds"]
            r["cp_primal_rel_to_sdm"] = (c["primal"] - m["primal"]) / m["primal"]
            rows.append(r)
            flag = "" if a["converged"] and c["converged"] else "  (not converged)"
            print(f"{C:5g} {'OCR%d' % k:>5} | {a['seconds']:8.2f} {a['iters']:5d} {a['calls']:7d} {a['dual']:9.3f} "
                  f"{100 * a['accuracy']:6.2f} | {s['seconds']:7.2f} {s['dual']:9.3f} {100 * s['accuracy']:6.2f} | "
                  f"{pcp:8.1f} {psd:8.1f} {r['paper_cp_over_ours']:7.1f} {r['cp_over_sdcd']:7.1f} | "
                  f"{c['seconds']:6.2f} {c['iters']:5d} {c['calls']:7d} {c['primal']:10.3f} | "
                  f"{m['seconds']:6.2f} {m['primal']:10.3f} {r['cp_primal_rel_to_sdm']:+8.1e}{flag}", flush=True)
        sel = [r for r in rows if r["C"] == C]
        print(f"  C={C:g}: paper-CP / our-CP min {min(r['paper_cp_over_ours'] for r in sel):.1f}x, "
              f"median {np.median([r['paper_cp_over_ours'] for r in sel]):.1f}x; our CP / SDCD median "
              f"{np.median([r['cp_over_sdcd'] for r in sel]):.1f}x (paper: "
              f"{np.median([PAPER_CP[C][r['fold']] / PAPER_SDCD[C][r['fold']] for r in sel]) if C in PAPER_CP else np.nan:.1f}x)",
              flush=True)
    result = dict(rows=rows)
    if not args.skip_large:
        tr_w = folds != 0
        tr, te = np.repeat(tr_w, lengths), np.repeat(~tr_w, lengths)
        data = (X[tr], y[tr], lengths[tr_w], X[te], y[te], lengths[~tr_w])
        print(f"\nlarge: train folds 1-9 ({int(tr.sum())} letters), test fold 0; cutting plane, C={args.large_C}")
        print(f"{'loss':>6} {'n_jobs':>6} | {'oracle s':>9} {'total s':>8} {'it':>5} {'calls':>8} {'acc':>6}")
        large = {}
        for loss in ("margin", "lse"):
            for jobs in (1, 2):
                res = fit(dict(C=args.large_C, solver="cutting-plane", loss=loss, n_jobs=jobs,
                               max_iter=args.max_iter), *data, args.reps)
                large[(loss, jobs)] = res
                print(f"{loss:>6} {jobs:6d} | {res['oracle_seconds']:9.2f} {res['seconds']:8.2f} {res['iters']:5d} "
                      f"{res['calls']:8d} {100 * res['accuracy']:6.2f}", flush=True)
            sp = large[(loss, 1)]["oracle_seconds"] / large[(loss, 2)]["oracle_seconds"]
            tot = large[(loss, 1)]["seconds"] / large[(loss, 2)]["seconds"]
            print(f"{loss:>6} speed-up n_jobs 2 vs 1: oracle phase {sp:.2f}x, whole fit {tot:.2f}x")
        result["large"] = {f"{k[0]}-{k[1]}": v for k, v in large.items()}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, default=float))


if __name__ == "__main__":
    main()
