"""SDM at large C: the default fit (tol=None: relative duality gap <= 1 %) with and without the
Catalyst acceleration of SDM (ssvmlinear.solvers.catalyst), on OCR letters (folds 1-9 train, fold 0 test).

  chain       ChainSSVM(C, fit_intercept=False)       47,535 letters, 6,251 words, 26 tags
  multiclass  MulticlassSSVM(C, fit_intercept=False)  the same letters as independent examples

"accelerated" is the shipped default; "plain" is the same fit with the acceleration switched off
(solvers.catalyst.CATALYST_SCALE = inf: SDM's type-I / type-II schedule and its KKT rule at tol 0.1 plus the
1 % gap, as before); --tol gives both an explicit tolerance (-e) instead. Both run max_iter passes
at most (1000, the estimators' default). The two are interleaved within each repetition; seconds are medians of --reps wall-clock fit() times, the
other columns come from the first repetition (the fits are deterministic). Relative gap =
(objective_ - dual_objective_) / objective_, both of the original problem. Peak RSS of this
process is printed at the end (the data is loaded once).

    python benchmarks/large_c.py                       # chains and multiclass, C = 0.01 .. 100
    python benchmarks/large_c.py --kinds chain --C 10 --reps 1
    python benchmarks/large_c.py --kinds chain --C 10 --reps 1 --tol 0.1    # an explicit -e 0.1
"""
import argparse
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ocr_chain import load_partition        # noqa: E402


def fit(kind, C, data, accelerated, max_iter, tol=None):
    from ssvmlinear import ChainSSVM, ConvergenceWarning, MulticlassSSVM
    from ssvmlinear.solvers import catalyst      # catalyst_kappa reads CATALYST_SCALE there at fit time
    Xtr, ytr, ltr, Xte, yte, lte = data
    saved = catalyst.CATALYST_SCALE
    catalyst.CATALYST_SCALE = saved if accelerated else float("inf")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t = time.perf_counter()
            if kind == "chain":
                est = ChainSSVM(C=C, fit_intercept=False, max_iter=max_iter, tol=tol).fit(Xtr, ytr, ltr)
                seconds = time.perf_counter() - t
                acc = est.score(Xte, yte, lte)
            else:
                est = MulticlassSSVM(C=C, fit_intercept=False, max_iter=max_iter, tol=tol).fit(Xtr, ytr)
                seconds = time.perf_counter() - t
                acc = est.score(Xte, yte)
    finally:
        catalyst.CATALYST_SCALE = saved
    return dict(seconds=seconds, passes=int(est.n_iter_), converged=bool(est.converged_),
                gap=float(est.gap_ / est.objective_), objective=float(est.objective_), accuracy=acc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", nargs="+", default=["chain", "multiclass"], choices=["chain", "multiclass"])
    ap.add_argument("--C", nargs="+", type=float, default=[0.01, 0.1, 1.0, 10.0, 100.0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--tol", type=float, help="an explicit tolerance (-e) instead of the default rule")
    args = ap.parse_args()
    from ssvmlinear.solvers.catalyst import CATALYST_SCALE
    data = load_partition("large")
    Xtr, _, ltr = data[:3]
    sq = np.asarray(Xtr.multiply(Xtr).sum(axis=1)).ravel()
    print(f"OCR folds 1-9: {Xtr.shape[0]} letters, {len(ltr)} words; max_iter {args.max_iter}; "
          f"median of {args.reps} fit() times; kappa = max(0, C R^2 / {CATALYST_SCALE:g} - 1)")
    print(f"{'kind':10s} {'C':>7s} {'kappa':>7s} {'method':12s} {'seconds':>8s} {'passes':>6s} {'conv':>5s} "
          f"{'rel.gap':>8s} {'objective':>12s} {'test acc':>8s}")
    for kind in args.kinds:
        n_examples = len(ltr) if kind == "chain" else Xtr.shape[0]
        r2 = float(sq.sum()) / n_examples
        for C in args.C:
            kappa = max(0.0, C * r2 / CATALYST_SCALE - 1.0)
            runs = {True: [], False: []}
            for _ in range(args.reps):
                for accelerated in ((True, False) if kappa > 0 else (True,)):
                    runs[accelerated].append(fit(kind, C, data, accelerated, args.max_iter, args.tol))
            for accelerated, rs in runs.items():
                if not rs:
                    continue
                r = rs[0]
                secs = statistics.median(x["seconds"] for x in rs)
                name = ("accelerated" if accelerated else "plain") if kappa > 0 else "plain (=)"
                print(f"{kind:10s} {C:7g} {kappa:7.3g} {name:12s} {secs:8.2f} {r['passes']:6d} "
                      f"{str(r['converged']):>5s} {r['gap']:8.4f} {r['objective']:12.6g} {r['accuracy']:8.4f}",
                      flush=True)
            if kappa > 0:
                a = statistics.median(x["seconds"] for x in runs[True])
                p = statistics.median(x["seconds"] for x in runs[False])
                print(f"{'':10s} {'':7s} {'':7s} {'ratio':12s} {a / p:8.2f}  (accelerated / plain seconds)")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    print("Done when (issue 18): chain C = 10 converges (rel. gap <= 1 %) in <= 10 s; every C in "
          "{0.01, 0.1, 1, 10} converges within max_iter.")


if __name__ == "__main__":
    main()
