"""Surrogate losses on named-entity recognition: margin rescaling against slack rescaling, ProbLoss
and the Micro-F1 surrogate (choi-thesis Table 5.4 analog, section 5.3.3).

    python benchmarks/ner_surrogates.py                      # full run (CoNLL-2003-sized corpus)
    python benchmarks/ner_surrogates.py --quick              # 2,000 / 800 / 800 sentences, 50 epochs
    python benchmarks/ner_surrogates.py --json out.json --seed 1
    python benchmarks/ner_surrogates.py --losses margin,probloss --probloss-search hull-integral

The thesis: CoNLL-2003 English NER (PER, LOC, ORG, MISC), SGD for 100 epochs, C in {0.01, 0.1,
1, 10} and learning rate in {0.01, 0.001} chosen on the validation set, the test score of the
best setting; Macro-F1 compares ProbLoss with margin rescaling, Micro-F1 the Micro-F1
surrogate with margin rescaling (PUBLISHED below).

Here: CoNLL is not available offline, so the corpus is ssvmlinear.datasets.make_entity_sentences
(BIO tags of PER, LOC, ORG, MISC; names drawn from syllables, so held-out sentences hold unseen
names) with ssvmlinear.datasets.word_features, built by benchmarks/ner.py's ner_data. The full
run has CoNLL-2003's split sizes (14,041 training, 3,250 validation, 3,453 test sentences); the
validation sentences are drawn with the training ones, the test sentences from another seed.
Solver: ChainSSVM with Pegasos (SGD with step 1/(lambda t), lambda = 1/(n C), averaged iterates:
it has no learning rate, so the thesis's learning-rate grid has no counterpart), mini-batches
of one sentence, max_iter epochs with the stopping rule disabled (tol=1e-12), n_jobs=1.
Full run: 100 epochs, as the thesis; --quick: 50 epochs on 2,000 / 800 / 800 sentences.

Surrogates (loss=) and searches: margin (the lambda = 1 oracle, exact), slack (exact),
probloss (exact: the loss-indexed search, the best integral label; --probloss-search
hull-integral runs the thesis's convex-hull search with the ban list instead), microf1 (exact;
on chains its sets are the (token, tag) pairs of the tags other than O, not entity spans).
A surrogate the package refuses is reported as such, with its message, not replaced; a C whose
fit fails is left out of the selection and listed.

Protocol per surrogate: fit every C of the grid on the training sentences, pick the C of best
validation entity micro-F1 (ties: the smaller C), report that model's test scores: entity
micro-F1 and macro-F1 over the entity types (ssvmlinear.metrics.entity_scores, conlleval's
rules), micro-F1 of the non-O (token, tag) pairs (what the microf1 surrogate scores), token
accuracy, fit seconds (wall, the per-epoch objective evaluations included), the solver's
training seconds (without them), and the chosen C (flagged when at an end of the grid).
--json writes every row, with every C's validation and test scores.
"""
import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ner import ner_data, token_accuracy  # noqa: E402

# choi-thesis Table 5.4 (CoNLL-2003 test, %)
PUBLISHED = {"macro_f1": {"margin": 85.28, "probloss": 85.62},
             "micro_f1": {"margin": 62.82, "microf1": 63.57}}

LOSSES = ("margin", "slack", "probloss", "microf1")
SEARCH = {"margin": "none", "slack": "exact", "probloss": "exact", "microf1": "exact"}
GRID = (0.01, 0.1, 1.0, 10.0)
# (train, validation, test sentences, epochs)
SIZES = {"full": (14041, 3250, 3453, 100), "quick": (2000, 800, 800, 50)}


def tag_micro_f1(y_true, y_pred, outside="O"):
    """Micro-F1 of the (token, tag) pairs whose tag is not `outside` (the microf1 surrogate's sets)."""
    t = np.array([a for s in y_true for a in s])
    p = np.array([a for s in y_pred for a in s])
    tp = int(np.sum((t == p) & (t != outside)))
    n_t, n_p = int(np.sum(t != outside)), int(np.sum(p != outside))
    return 2.0 * tp / (n_t + n_p) if n_t + n_p else 0.0


def scores(y_true, y_pred):
    from ssvmlinear.metrics import entity_scores
    s = entity_scores(y_true, y_pred)
    return {"entity_micro_f1": s["micro avg"]["f1-score"], "entity_macro_f1": s["macro avg"]["f1-score"],
            "per_type_f1": {k: v["f1-score"] for k, v in s.items() if not k.endswith(" avg")},
            "tag_micro_f1": tag_micro_f1(y_true, y_pred), "token_accuracy": token_accuracy(y_true, y_pred)}


def fit_one(loss, search, C, epochs, X, y, seed, n_jobs):
    """A fitted ChainSSVM and its wall seconds, or (None, exception) when refused (ValueError,
    before training) or failed (RuntimeError, e.g. a search that failed during training)."""
    from ssvmlinear import ChainSSVM
    from ssvmlinear.solvers import Pegasos
    est = ChainSSVM(C=C, loss=loss, solver=Pegasos(search=search), max_iter=epochs, tol=1e-12,
                    random_state=seed, n_jobs=n_jobs)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # (max_iter warnings: the epochs are fixed)
            est.fit(X, y)
    except (ValueError, RuntimeError) as e:
        return None, e
    return est, time.perf_counter() - t0


def run(quick: bool, seed: int = 0, losses=LOSSES, grid=GRID, sizes=None, searches=None, n_jobs=1,
        verbose=False) -> dict:
    """Run the comparison; returns dict(config, published, rows), a row per surrogate."""
    n_train, n_val, n_test, epochs = sizes or SIZES["quick" if quick else "full"]
    search_of = dict(SEARCH, **(searches or {}))
    t0 = time.perf_counter()
    Xall, yall, Xte, yte = ner_data(n_train + n_val, n_test, seed)
    Xtr, ytr, Xva, yva = Xall[:n_train], yall[:n_train], Xall[n_train:], yall[n_train:]
    rows = []
    for loss in losses:
        search = search_of.get(loss, "exact")
        per_c, failed, error = [], [], None
        for C in grid:
            est, out = fit_one(loss, search, C, epochs, Xtr, ytr, seed, n_jobs)
            if est is None:
                message = f"{type(out).__name__}: {out}"
                if verbose:
                    print(f"  {loss:9s} C={C:<5g} {'refused' if isinstance(out, ValueError) else 'failed'}: "
                          f"{message}", flush=True)
                if isinstance(out, ValueError):       # a refusal does not depend on C
                    error = f"refused: {message}"
                    break
                failed.append({"C": C, "error": message})
                continue
            entry = {"C": C, "fit_seconds": out, "train_seconds": est.train_seconds_,
                     "epochs": int(est.n_iter_), "oracle_calls": int(est.n_oracle_calls_),
                     "validation": scores(yva, est.predict(Xva)), "test": scores(yte, est.predict(Xte))}
            per_c.append(entry)
            if verbose:
                print(f"  {loss:9s} C={C:<5g} val entity micro-F1 {100 * entry['validation']['entity_micro_f1']:6.2f}"
                      f"  fit {out:7.1f} s", flush=True)
        if error is None and not per_c:
            error = "failed at every C: " + "; ".join(f"C={f['C']:g} {f['error']}" for f in failed)
        # C values whose fit failed are left out of the selection, and listed
        row = {"loss": loss, "search": search, "error": error, "failed_C": failed, "grid": per_c}
        if error is None:
            best = max(per_c, key=lambda e: (e["validation"]["entity_micro_f1"], -e["C"]))
            row.update(C=best["C"], C_at_grid_edge=best["C"] in (min(grid), max(grid)),
                       fit_seconds=best["fit_seconds"], train_seconds=best["train_seconds"],
                       epochs=best["epochs"], validation_entity_micro_f1=best["validation"]["entity_micro_f1"],
                       **{k: v for k, v in best["test"].items()})
        rows.append(row)
    config = {"quick": quick, "seed": seed, "n_train": n_train, "n_validation": n_val, "n_test": n_test,
              "epochs": epochs, "grid": list(grid), "searches": {k: search_of.get(k, "exact") for k in losses},
              "n_jobs": n_jobs, "selection": "validation entity micro-F1", "solver": "pegasos",
              "wall_seconds": time.perf_counter() - t0}
    return {"config": config, "published": PUBLISHED, "rows": rows}


def print_table(result):
    cfg = result["config"]
    print(f"NER corpus: {cfg['n_train']} train / {cfg['n_validation']} validation / {cfg['n_test']} test sentences, "
          f"Pegasos {cfg['epochs']} epochs, C in {cfg['grid']} by validation entity micro-F1, seed {cfg['seed']}")
    print(f"{'loss':9s} {'search':13s} {'C':>6s} {'val miF1':>8s} | {'miF1':>6s} {'maF1':>6s} {'tagF1':>6s} "
          f"{'acc':>6s} | {'fit s':>7s} {'train s':>7s}  (test, %)")
    by_loss = {}
    for r in result["rows"]:
        by_loss[r["loss"]] = r
        if r["error"]:
            print(f"{r['loss']:9s} {r['search']:13s} {r['error']}")
            continue
        edge = "*" if r["C_at_grid_edge"] else " "
        print(f"{r['loss']:9s} {r['search']:13s} {r['C']:>5g}{edge} {100 * r['validation_entity_micro_f1']:8.2f} | "
              f"{100 * r['entity_micro_f1']:6.2f} {100 * r['entity_macro_f1']:6.2f} {100 * r['tag_micro_f1']:6.2f} "
              f"{100 * r['token_accuracy']:6.2f} | {r['fit_seconds']:7.1f} {r['train_seconds']:7.1f}"
              + ("  (failed at C = " + ", ".join(f"{f['C']:g}" for f in r["failed_C"]) + ", left out)"
                 if r["failed_C"] else ""))
    print("* chosen C at an end of the grid")
    print("miF1 / maF1: entity micro- / macro-F1 (over the entity types); tagF1: micro-F1 of the non-O "
          "(token, tag) pairs; acc: token accuracy")
    print("Table 5.4 (thesis, CoNLL-2003) beside ours:")
    for measure, key, other in (("Macro-F1", "entity_macro_f1", "probloss"), ("Micro-F1", "entity_micro_f1", "microf1")):
        pub = PUBLISHED[measure.lower().replace("-", "_")]
        parts = []
        for loss in ("margin", other):
            r = by_loss.get(loss)
            ours = ("not run" if r is None else "no result" if r["error"] else f"{100 * r[key]:.2f}")
            parts.append(f"{loss} {ours} (thesis {pub[loss]:.2f})")
        print(f"  {measure}: " + ", ".join(parts))
    print(f"wall {cfg['wall_seconds']:.0f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2,000 / 800 / 800 sentences, 50 epochs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--losses", default=",".join(LOSSES), help="surrogates (default: %(default)s)")
    ap.add_argument("--C-grid", default=",".join(f"{c:g}" for c in GRID), help="C values (default: %(default)s)")
    ap.add_argument("--probloss-search", default=SEARCH["probloss"],
                    help="ProbLoss's search (default exact; the thesis's: hull-integral)")
    ap.add_argument("--microf1-search", default=SEARCH["microf1"], help="Micro-F1's search (exact or hull)")
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--json", help="write the config and all rows to this file")
    args = ap.parse_args()
    result = run(args.quick, args.seed, losses=[s.strip() for s in args.losses.split(",")],
                 grid=tuple(float(c) for c in args.C_grid.split(",")),
                 searches={"probloss": args.probloss_search, "microf1": args.microf1_search},
                 n_jobs=args.n_jobs, verbose=True)
    print_table(result)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
