"""Choosing C: the warm-started path (ssvmlinear.model_selection.CPathCV, what ssvm-train -C runs)
against scikit-learn's GridSearchCV, which fits every (fold, C) pair from scratch.

Data: OCR words as chains (ChainSSVM, folds 1-9 of the OCR letters, split by word) and the same
letters as independent examples (MulticlassSSVM). Both searches get the same splits (--folds
random folds of whole words), the same --Cs values (default 8: 2^-6 .. 2^1) and one thread; each
runs --reps times in this process, alternating, and the medians are reported with their ratio,
the C each chose and the largest difference of their mean cross-validation scores.

    python benchmarks/c_search.py                        # both data sets, 3 repetitions
    python benchmarks/c_search.py --data letters --reps 1
"""
import argparse
import time
import warnings
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "data"


def splits_by_word(lengths, n_folds, seed=0):
    """(train rows, test rows) per fold, every word's letters in one fold."""
    from ssvmlinear.model_selection import kfold_indices
    fold = np.repeat(kfold_indices(len(lengths), n_folds, seed), lengths)
    rows = np.arange(fold.shape[0])
    return [(rows[fold != k], rows[fold == k]) for k in range(n_folds)]


def run(data, Cs, n_folds, reps):
    import sklearn
    from sklearn.model_selection import GridSearchCV
    from ssvmlinear import ChainSSVM, MulticlassSSVM, load_svmlight_file
    from ssvmlinear.model_selection import CPathCV
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters_train.svm.gz")
    splits = splits_by_word(lengths, n_folds)
    chain = data == "chains"
    ids = np.repeat(np.arange(len(lengths)), lengths)
    times = {"path": [], "grid": []}
    for _ in range(reps):
        t = time.perf_counter()
        path = CPathCV(ChainSSVM() if chain else MulticlassSSVM(), Cs=Cs, cv=splits).fit(
            X, y, lengths if chain else None)
        times["path"].append(time.perf_counter() - t)
        with sklearn.config_context(enable_metadata_routing=chain):
            est = ChainSSVM().set_fit_request(sequence_ids=True).set_score_request(sequence_ids=True) if chain \
                else MulticlassSSVM()
            t = time.perf_counter()
            grid = GridSearchCV(est, {"C": Cs}, cv=splits).fit(X, y, **({"sequence_ids": ids} if chain else {}))
            times["grid"].append(time.perf_counter() - t)
    ours, theirs = path.cv_results_["mean_test_score"], grid.cv_results_["mean_test_score"]
    diff = float(np.max(np.abs(ours - theirs)))
    # the two best C's scores by both searches: fits stop at a 1 % duality gap, so two C's whose
    # scores differ by less than the searches' own difference are a tie either may break
    chosen = sorted({float(path.best_C_), float(grid.best_params_["C"])})
    at = {C: (float(ours[list(Cs).index(C)]), float(theirs[list(Cs).index(C)])) for C in chosen}
    return dict(data=data, path=float(np.median(times["path"])), grid=float(np.median(times["grid"])),
                path_C=path.best_C_, grid_C=grid.best_params_["C"], diff=diff, at=at)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", nargs="+", default=["chains", "letters"], choices=["chains", "letters"])
    ap.add_argument("--Cs", type=float, nargs="+", default=[2.0 ** k for k in range(-6, 2)])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"{len(args.Cs)} values of C, {args.folds} folds, one thread; medians of {args.reps}")
    print(f"{'data':>8} | {'path s':>8} {'grid s':>8} {'grid/path':>9} | {'path C':>7} {'grid C':>7} | max |score diff|")
    for data in args.data:
        r = run(data, args.Cs, args.folds, args.reps)
        print(f"{r['data']:>8} | {r['path']:8.2f} {r['grid']:8.2f} {r['grid'] / r['path']:9.2f} | {r['path_C']:7g} "
              f"{r['grid_C']:7g} | {r['diff']:.2e}", flush=True)
        if len(r["at"]) > 1:
            print("         the two best C's mean scores (path, grid): " + "; ".join(
                f"C = {C:g}: {a:.4f}, {b:.4f}" for C, (a, b) in r["at"].items()), flush=True)


if __name__ == "__main__":
    main()
