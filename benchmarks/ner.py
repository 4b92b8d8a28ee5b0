"""Sequence labeling the way sklearn-crfsuite users do it: ChainSSVM vs sklearn-crfsuite on token
feature dicts, each with its regularisation chosen on a hold-out split.

    python benchmarks/ner.py                  # the NER-like corpus and OCR words
    python benchmarks/ner.py --only ner --reps 1

Data:
  ner  ssvmlinear.datasets.make_entity_sentences (BIO tags of persons, locations, organisations,
       events in template sentences; names drawn from syllables, so that the test sentences hold
       unseen names), --train / --test sentences, features ssvmlinear.datasets.word_features
       (sklearn-crfsuite's tutorial set);
  ocr  OCR words (data/, folds 1-9 -> fold 0), a token's features its pixels {"p<j>": 1.0}.
Both tools take the same lists of feature dicts: ChainSSVM().fit(X_sents, y_sents) and
sklearn_crfsuite.CRF().fit(X_sents, y_sents). Selection: 80 % of the training sentences fit each
value of the grid, the other 20 % score it (token accuracy); the best refits on all of them.
ChainSSVM: C in --C-grid (its default solver and stopping rule); CRF: L-BFGS, c1 = 0, c2 in
--c2-grid, its default max_iterations. Printed per data set and tool: the chosen value, token
accuracy and entity micro-F1 (conlleval's rules; NER only) on the test sentences, and the median
fit seconds of --reps refits (the features built beforehand, outside the timing).
Needs the bench extra (sklearn-crfsuite).
"""
import argparse
import json
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "data"


def ner_data(n_train, n_test, seed):
    from ssvmlinear.datasets import make_entity_sentences, word_features
    train = make_entity_sentences(n_train, random_state=seed)
    test = make_entity_sentences(n_test, random_state=seed + 1)

    def features(sentences):
        return [[word_features(s, i) for i in range(len(s))] for s in sentences]
    return features(train[0]), train[1], features(test[0]), test[1]


def ocr_data():
    from ssvmlinear import load_svmlight_file

    def sentences(path):
        X, y, lengths = load_svmlight_file(path, n_features=128)
        tokens = [{f"p{j}": float(v) for j, v in zip(X.indices[X.indptr[r]:X.indptr[r + 1]],
                                                    X.data[X.indptr[r]:X.indptr[r + 1]])} for r in range(X.shape[0])]
        tags = [chr(ord("a") + int(t) - 1) for t in y]
        bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
        return ([tokens[a:b] for a, b in zip(bounds[:-1], bounds[1:])],
                [tags[a:b] for a, b in zip(bounds[:-1], bounds[1:])])
    Xtr, ytr = sentences(DATA / "ocr_letters_train.svm.gz")
    Xte, yte = sentences(DATA / "ocr_letters_test.svm.gz")
    return Xtr, ytr, Xte, yte


def token_accuracy(y_true, y_pred):
    pairs = [(a, b) for s, p in zip(y_true, y_pred) for a, b in zip(s, p)]
    return float(np.mean([a == b for a, b in pairs]))


def make(tool, value):
    if tool == "ChainSSVM":
        from ssvmlinear import ChainSSVM
        return ChainSSVM(C=value)
    import sklearn_crfsuite
    return sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.0, c2=value)


def select(tool, grid, X, y, seed):
    """The grid value of best hold-out token accuracy (80 / 20 split of the sentences)."""
    order = np.random.default_rng(seed).permutation(len(X))
    cut = int(0.8 * len(X))
    fit_idx, val_idx = order[:cut], order[cut:]
    scores = {}
    for value in grid:
        est = make(tool, value).fit([X[i] for i in fit_idx], [y[i] for i in fit_idx])
        scores[value] = token_accuracy([y[i] for i in val_idx], est.predict([X[i] for i in val_idx]))
    return max(grid, key=lambda v: (scores[v], -grid.index(v))), scores


def run(name, data, grids, reps, seed, entities):
    import warnings
    from ssvmlinear.metrics import entity_scores
    Xtr, ytr, Xte, yte = data
    rows = []
    for tool, grid in grids.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # (max_iter warnings of the grid's extremes)
            best, scores = select(tool, grid, Xtr, ytr, seed)
            times = []
            for _ in range(reps):
                est = make(tool, best)
                t0 = time.perf_counter()
                est.fit(Xtr, ytr)
                times.append(time.perf_counter() - t0)
        pred = est.predict(Xte)
        row = {"data": name, "tool": tool, "chosen": best, "holdout": scores,
               "token_accuracy": token_accuracy(yte, pred),
               "entity_f1": entity_scores(yte, pred)["micro avg"]["f1-score"] if entities else None,
               "fit_seconds": float(np.median(times))}
        rows.append(row)
        print(f"{name:4s} {tool:10s} chosen {best:<6g} token accuracy {100 * row['token_accuracy']:6.2f} %  "
              + (f"entity F1 {100 * row['entity_f1']:6.2f}  " if entities else "entity F1    -    ")
              + f"fit {row['fit_seconds']:7.2f} s", flush=True)
    a, b = rows
    print(f"{name:4s} fit time sklearn-crfsuite / ChainSSVM = {b['fit_seconds'] / a['fit_seconds']:.1f}x", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["ner", "ocr"], help="one data set")
    ap.add_argument("--train", type=int, default=3000, help="NER training sentences (default 3000)")
    ap.add_argument("--test", type=int, default=1500, help="NER test sentences (default 1500)")
    ap.add_argument("--C-grid", default="0.01,0.1,1,10", help="ChainSSVM's C values")
    ap.add_argument("--c2-grid", default="0.001,0.01,0.1,1", help="sklearn-crfsuite's c2 values")
    ap.add_argument("--reps", type=int, default=3, help="timed refits (median; default 3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the rows to this file")
    args = ap.parse_args()
    grids = {"ChainSSVM": [float(v) for v in args.C_grid.split(",")],
             "CRF": [float(v) for v in args.c2_grid.split(",")]}
    rows = []
    if args.only in (None, "ner"):
        rows += run("ner", ner_data(args.train, args.test, args.seed), grids, args.reps, args.seed, True)
    if args.only in (None, "ocr"):
        rows += run("ocr", ocr_data(), grids, args.reps, args.seed, False)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
