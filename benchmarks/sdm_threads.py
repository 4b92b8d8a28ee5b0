"""SDM with two threads on OCR chains: sharded passes (SDM(shards=2)) and oracle blocks (oracle_batch)
vs the plain sequential method, at the same objective -- issue 18's "chains with n_jobs=2 >= 1.4x
faster than with 1" row.

Data: OCR letters (Taskar et al.), words of folds 1-9 (6,251 sequences, 47,535 letters), first-order
chain, 128 pixel features, 26 tags, no bias (benchmarks/ocr_chain.py's "large" split).

Runs (ChainSSVM, solver "sdm"), interleaved within each of --reps repetitions, in this process:
  plain       n_jobs=1                  the sequential method (the default)
  blocks      SDM(oracle_batch=64), n_jobs=2 type-I oracles of blocks of 64 shared by 2 threads
  shards/1    SDM(shards=2), n_jobs=1        sharded passes on one thread (the cost of sharding alone)
  shards/2    SDM(shards=2), n_jobs=2        the same passes on two threads (identical results)

Table 1, the same objective: every run uses the plain method's rule at an explicit tol (so no
Catalyst acceleration at C = 1: its centres are coarse points on the curve) and max_iter passes;
the optimum D* is the dual of a tight plain run (tol --star-tol, printed with its gap); a run's
time to eps is the solver clock (timestamps_) at the first pass whose dual objective is >=
D* (1 - eps) (the dual is recorded after every pass at no cost, and all runs climb the same dual
to the same optimum). Seconds are medians over --reps; "x plain" = plain's median / the run's.
Table 2, the default rule (what a user gets, Catalyst at C = 1): fit seconds, passes, primal,
relative gap.

    python benchmarks/sdm_threads.py                     # C = 0.1 and 1, 3 repetitions
    python benchmarks/sdm_threads.py --C 0.1 --reps 1    # quick look
"""
import argparse
import statistics
import time
import warnings
from pathlib import Path

import numpy as np

from ssvmlinear.solvers import SDM

DATA = Path(__file__).resolve().parent.parent / "data"
RUNS = [("plain", dict(n_jobs=1)),
        ("blocks", dict(solver=SDM(oracle_batch=64), n_jobs=2)),
        ("shards/1", dict(solver=SDM(shards=2), n_jobs=1)),
        ("shards/2", dict(solver=SDM(shards=2), n_jobs=2))]
EPS = (1e-3, 1e-4)


def load_ocr():
    from ssvmlinear import load_svmlight_file
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters.svm.gz", n_features=128)
    folds = np.loadtxt(DATA / "ocr_letters.folds", dtype=np.int64)
    words = folds != 0
    tokens = np.repeat(words, lengths)
    return X[tokens], y[tokens], lengths[words]


def fit(data, C, **params):
    from ssvmlinear import ChainSSVM, ConvergenceWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t = time.perf_counter()
        est = ChainSSVM(C=C, **params).fit(*data)
        seconds = time.perf_counter() - t
    return est, seconds


def med(values):
    values = [v for v in values if v == v]
    return statistics.median(values) if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--C", type=float, nargs="+", default=[0.1, 1.0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tol", type=float, default=0.01, help="the runs' explicit tol (table 1)")
    ap.add_argument("--max-iter", type=int, default=2500, help="the runs' max_iter (table 1)")
    ap.add_argument("--star-tol", type=float, default=1e-3, help="tol of the reference run for D*")
    args = ap.parse_args()
    data = load_ocr()
    print(f"OCR letters, folds 1-9: {len(data[2])} sequences, {data[0].shape[0]} letters; "
          f"runs: {', '.join(name + ' ' + str(p) for name, p in RUNS)}")
    for C in args.C:
        ref, _ = fit(data, C, tol=args.star_tol, max_iter=100000)
        dstar = float(ref.dual_objective_)
        print(f"\n== C = {C:g}: D* = {dstar:.6f} (plain SDM at tol {args.star_tol:g}: {ref.n_iter_} passes, "
              f"primal {ref.objective_:.6f}, relative gap {ref.gap_ / ref.objective_:.2e})")
        times = {name: {eps: [] for eps in EPS} for name, _ in RUNS}
        passes = {name: {eps: None for eps in EPS} for name, _ in RUNS}
        defaults = {name: [] for name, _ in RUNS}
        last = {}
        for rep in range(args.reps):
            for name, params in RUNS:
                est, _ = fit(data, C, tol=args.tol, max_iter=args.max_iter, **params)
                dual = np.asarray(est.dual_curve_)
                stamps = np.asarray(est.timestamps_)
                for eps in EPS:
                    hit = np.nonzero(dual >= dstar * (1 - eps))[0]
                    times[name][eps].append(float(stamps[hit[0]]) if len(hit) else float("nan"))
                    passes[name][eps] = int(hit[0]) + 1 if len(hit) else None
            for name, params in RUNS:
                est, seconds = fit(data, C, **params)
                defaults[name].append(seconds)
                last[name] = est
        print(f"Table 1 (same objective; tol {args.tol:g}, max_iter {args.max_iter}): seconds to "
              f"dual >= D* (1 - eps), median of {args.reps}, and passes")
        print(f"{'run':>9} | " + " | ".join(f"{'eps ' + format(e, 'g'):>8} {'passes':>6} {'x plain':>7}" for e in EPS))
        for name, _ in RUNS:
            cells = []
            for eps in EPS:
                t = med(times[name][eps])
                ratio = med(times["plain"][eps]) / t if t == t else float("nan")
                p = passes[name][eps]
                cells.append(f"{t:8.2f} {p if p else '-':>6} {ratio:7.2f}")
            print(f"{name:>9} | " + " | ".join(cells))
        print(f"Table 2 (default rule): fit seconds (median of {args.reps}), passes, primal, relative gap")
        print(f"{'run':>9} | {'seconds':>8} {'x plain':>7} {'passes':>6} {'primal':>14} {'rel gap':>8}")
        for name, _ in RUNS:
            est = last[name]
            s = med(defaults[name])
            print(f"{name:>9} | {s:8.2f} {med(defaults['plain']) / s:7.2f} {est.n_iter_:6d} "
                  f"{est.objective_:14.6f} {est.gap_ / est.objective_:8.2e}")


if __name__ == "__main__":
    main()
