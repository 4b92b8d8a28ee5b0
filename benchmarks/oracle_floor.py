"""How close a chain fit runs to the cost of its own oracle calls (the loss-augmented Viterbi on
every word, unary scores included, in the type-I passes and in the passes that measure the
primal: ``oracle_seconds_``).

OCR words of folds 1-9 (data/ocr_letters_train.svm.gz), ``ChainSSVM(C)`` at its defaults in this
process with one thread (n_jobs=1): fit seconds, oracle seconds, their ratio, passes and the
objective reached (medians of --reps fits; the fits are deterministic). The rest of a fit is SDM's
working-set steps, its type-II passes, the weight updates and Catalyst's centres.

    python benchmarks/oracle_floor.py                  # C = 0.1 and 1, 5 fits each
    python benchmarks/oracle_floor.py --C 0.01 10 --reps 3
"""
import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "data"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--C", type=float, nargs="+", default=[0.1, 1.0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", type=Path, help="write the rows here")
    args = ap.parse_args()
    from ssvmlinear import ChainSSVM, load_svmlight_file
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters_train.svm.gz", n_features=128)
    with warnings.catch_warnings():          # (imports and first-touch costs)
        warnings.simplefilter("ignore")
        ChainSSVM(C=0.1, n_jobs=1, max_iter=2).fit(X, y, lengths)
    rows = []
    print(f"{'C':>6s} {'fit s':>7s} {'oracle s':>9s} {'fit/oracle':>10s} {'passes':>6s} {'objective':>12s} {'rel. gap':>9s}")
    for C in args.C:
        fits, oracles = [], []
        for _ in range(args.reps):
            est = ChainSSVM(C=C, n_jobs=1)
            t = time.perf_counter()
            est.fit(X, y, lengths)
            fits.append(time.perf_counter() - t)
            oracles.append(est.oracle_seconds_)
        fit, oracle = float(np.median(fits)), float(np.median(oracles))
        gap = (est.objective_ - est.dual_objective_) / est.objective_
        rows.append(dict(C=C, fit_seconds=fit, oracle_seconds=oracle, ratio=fit / oracle, passes=int(est.n_iter_),
                         objective=float(est.objective_), relative_gap=float(gap)))
        print(f"{C:6g} {fit:7.3f} {oracle:9.3f} {fit / oracle:10.2f} {est.n_iter_:6d} {est.objective_:12.3f} {gap:9.2e}",
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
