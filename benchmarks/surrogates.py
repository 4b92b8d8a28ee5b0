"""Surrogates and searches (choi-meshi-srebro-2016 Tables 1-2 and Figure 4; choi-thesis Tables
5.1 and 5.3 analogs), on OCR letter chains and on the scene multi-label data.

  1. Search comparison, the papers' protocol: the slack-rescaling one-slack cutting plane runs on
     the data; at the weights of each of its iterations every search is run (on 40 random examples
     per iteration):
     success % (reaches the exact maximum of the slack-rescaled loss within 1e-9 relative; for the
     relaxed hull search, its value over the convex hull), oracle queries per search, microseconds
     per search (called from Python: ~2 us of call overhead included).
  2. Accuracy of margin / slack / beta-scaling / ProbLoss (/ Micro-F1 on scene) with Pegasos, C
     chosen on a held-out 20 % of train, then refit on all of train; scene also the slack-rescaled
     cutting plane. OCR: token accuracy; scene: subset accuracy, Hamming loss, micro-/macro-F1, Acc.
  3. Epoch cost: training seconds per Pegasos epoch for each search (slack rescaling) / margin,
     medians of interleaved runs.
  4. Objective (exact slack-rescaled primal) vs training time of Pegasos with each search
     (Figure 4 analog), saved as a PNG.

    python benchmarks/surrogates.py [--epochs 10] [--words 300] [--png benchmarks/figures/surrogates_fig4.png]
"""
import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from ssvmlinear import ChainSSVM, MultiLabelSSVM
from ssvmlinear.exceptions import ConvergenceWarning
from ssvmlinear.io import load_svmlight_file
from ssvmlinear.metrics import (example_accuracy, hamming_loss, macro_f1, micro_f1,
                                subset_accuracy)
from ssvmlinear.solvers import CuttingPlane, Pegasos

DATA = Path(__file__).resolve().parent.parent / "data"
SEARCHES = ["exact", "angular", "hull-integral", "hull", "bisecting", "binary", "none"]
warnings.simplefilter("ignore", ConvergenceWarning)


def solver_of(name, search):
    """The solver object of (solver name, search): the search is a parameter of Pegasos and of
    the cutting plane; the other solvers (SDM) have none."""
    if name == "pegasos":
        return Pegasos(search=search)
    if name == "cutting-plane":
        return CuttingPlane(search=search)
    return name


class ClockedPegasos(Pegasos):
    """Pegasos that also records its training seconds (evaluations of the primal excluded) after
    every epoch, in `train_curve` (the estimators' timestamps_ are wall-clock seconds, the
    per-epoch primal evaluations included)."""

    def start(self, problem):
        run = super().start(problem)
        self.train_curve = []
        step = run.step

        def timed(limit):
            out = step(limit)
            self.train_curve.append(run.train_seconds)
            return out
        run.step = timed
        return run


def load_ocr():
    Xtr, ytr, ltr = load_svmlight_file(DATA / "ocr_letters_train.svm.gz")
    Xte, yte, lte = load_svmlight_file(DATA / "ocr_letters_test.svm.gz", n_features=Xtr.shape[1])
    return Xtr, ytr, ltr, Xte, yte, lte


def load_scene():
    X, Y = load_svmlight_file(DATA / "scene_train.svm.gz")
    Xt, Yt = load_svmlight_file(DATA / "scene_test.svm.gz", n_features=X.shape[1])
    return X, Y, Xt, Yt


def weights_of(est):
    """The flat weight vector of a fitted estimator in its structure's layout."""
    w = est.coef_.T
    if getattr(est, "intercept_", None) is not None and est.fit_intercept:
        w = np.vstack([w, est.intercept_[None, :] / est.intercept_scaling])
    parts = [w.ravel()]
    if hasattr(est, "transition_"):
        parts.append(est.transition_.ravel())
    return np.ascontiguousarray(np.concatenate(parts))


def search_table(name, est, fit, structure_of, per_iter=40, max_iters=300, loss="slack", warm=False):
    """Every search at the weights of every iteration of the slack-rescaled cutting plane (on
    `per_iter` examples drawn at random per iteration, to bound the cost). warm: the angular and
    hull searches start from the labels they returned for that example last time (the paper's
    label cache; the thesis' warm start from the previous vertices)."""
    from ssvmlinear._kernels.search import StructureOracle
    from ssvmlinear.search import run_on_structure
    rows = {m: dict(ok=0, n=0, calls=0, us=0.0) for m in SEARCHES}
    snaps = []
    est.set_params(max_iter=max_iters, callback=lambda e: snaps.append(e.current_weights_.copy()))
    fit(est)
    st = structure_of(est)
    orc = StructureOracle(st)
    rng = np.random.default_rng(0)
    cache = {}       # (search, example) -> labels it returned last time (warm start / label cache)
    for w in snaps:
        for i in rng.choice(st.n_examples, min(per_iter, st.n_examples), replace=False):
            ref = run_on_structure(orc, w, i, loss, "exact")["value"]
            for m in SEARCHES:
                t = time.perf_counter()
                r = run_on_structure(orc, w, i, loss, m, ratio=0.999 if m == "angular" else 1.0,
                            warm=cache.get((m, i), ()) if warm else ())
                if warm and m in ("angular", "hull", "hull-integral"):
                    cache[m, i] = r["labels"]
                dt = time.perf_counter() - t
                row = rows[m]
                row["n"] += 1
                row["calls"] += r["n_calls"]
                row["us"] += dt * 1e6
                row["ok"] += r["value"] >= ref * (1 - 1e-9) - 1e-12
    print(f"\n== search comparison: {name} (loss={loss}; all {len(snaps)} cutting-plane iterations, "
          f"{rows['exact']['n']} searches; {'warm' if warm else 'cold'} starts) ==")
    print(f"{'search':>14} | {'success %':>9} | {'queries/search':>14} | {'us/search':>9}")
    for m in SEARCHES:
        r = rows[m]
        print(f"{m:>14} | {100 * r['ok'] / r['n']:9.1f} | {r['calls'] / r['n']:14.2f} | "
              f"{r['us'] / r['n']:9.1f}", flush=True)


def ocr_structure(est, X, y, lengths):
    from ssvmlinear._kernels.chain import ChainStructure
    from ssvmlinear._kernels.dataset import CSRDataset
    y_idx = np.searchsorted(est.classes_, y).astype(np.int32)
    return ChainStructure(CSRDataset(X.tocsr(), -1.0), y_idx, lengths, len(est.classes_), False, False)


def scene_structure(est, X, Y):
    from ssvmlinear._kernels.dataset import CSRDataset
    from ssvmlinear._kernels.multilabel import MultiLabelStructure
    import scipy.sparse as sp
    Yd = (Y.toarray() if sp.issparse(Y) else np.asarray(Y)).astype(np.int32)
    return MultiLabelStructure(CSRDataset(X.tocsr(), est.intercept_scaling if est.fit_intercept else -1.0), Yd)


def held_out_split(n, seed=0, frac=0.2):
    rng = np.random.default_rng(seed)
    test = np.zeros(n, dtype=bool)
    test[rng.permutation(n)[: int(frac * n)]] = True
    return test


def ocr_rows(Xtr, ytr, ltr, Xte, yte, lte, epochs, Cs):
    words = held_out_split(len(ltr))
    tok = np.repeat(words, ltr)
    print(f"\n== OCR: Pegasos, {epochs} epochs, C from {Cs} on a held-out 20 % of the train words ==")
    print(f"{'loss':>16} {'search':>8} | {'C':>6} | {'token acc':>9} | {'s/epoch':>7} | {'ratio':>5} | {'calls/word':>10}")
    base = None
    runs = [("margin", "none"), ("slack", "hull"), ("beta:0.25", "hull"), ("beta:0.5", "hull"),
            ("beta:0.75", "hull"), ("probloss", "hull"), ("probloss-convex", "hull")]
    for loss, search in runs:
        kw = dict(solver=Pegasos(search=search), loss=loss, max_iter=epochs, tol=1e-12, random_state=0)
        scores = [ChainSSVM(C=C, **kw).fit(Xtr[~tok], ytr[~tok], ltr[~words]).score(Xtr[tok], ytr[tok], ltr[words])
                  for C in Cs]
        C = Cs[int(np.argmax(scores))]
        m = ChainSSVM(C=C, **kw).fit(Xtr, ytr, ltr)
        per_epoch = m.train_seconds_ / m.n_iter_
        base = per_epoch if base is None else base
        print(f"{loss:>16} {search:>8} | {C:6g} | {100 * m.score(Xte, yte, lte):8.2f}% | {per_epoch:7.3f} | "
              f"{per_epoch / base:5.2f} | {m.n_oracle_calls_ / (len(ltr) * m.n_iter_):10.2f}", flush=True)


def scene_rows(X, Y, Xt, Yt, epochs, Cs):
    import scipy.sparse as sp
    test = held_out_split(X.shape[0])
    Yd = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
    print(f"\n== scene: Pegasos, {epochs} epochs (and the slack cutting plane), C from {Cs} on a "
          f"held-out 20 % of train; bias on ==")
    print(f"{'model':>24} | {'C':>6} | {'subset':>6} | {'Hamming':>7} | {'micro-F1':>8} | {'macro-F1':>8} | "
          f"{'Acc':>6} | {'s/epoch':>7}")
    runs = [("margin", "none", "pegasos"), ("slack", "hull", "pegasos"), ("beta:0.25", "hull", "pegasos"),
            ("beta:0.5", "hull", "pegasos"), ("beta:0.75", "hull", "pegasos"),
            ("probloss-convex", "hull", "pegasos"), ("microf1", "hull", "pegasos"),
            ("margin", "none", "sdm"), ("slack", "exact", "cutting-plane"),
            ("microf1", "exact", "cutting-plane")]
    for loss, search, solver in runs:
        kw = dict(solver=solver_of(solver, search), loss=loss, fit_intercept=True, random_state=0)
        kw.update(dict(max_iter=epochs, tol=1e-12) if solver == "pegasos" else
                  dict(max_iter=2000, tol=0.01 if solver == "cutting-plane" else None))
        scores = []
        for C in Cs:
            m = MultiLabelSSVM(C=C, **kw).fit(X[~test], Yd[~test])
            scores.append(subset_accuracy(Yd[test], m.predict(X[test])))
        C = Cs[int(np.argmax(scores))]
        m = MultiLabelSSVM(C=C, **kw).fit(X, Yd)
        P = m.predict(Xt)
        per_epoch = m.train_seconds_ / m.n_iter_ if solver == "pegasos" else float("nan")
        print(f"{solver + ' ' + loss:>24} | {C:6g} | {subset_accuracy(Yt, P):6.3f} | {hamming_loss(Yt, P):7.4f} | "
              f"{micro_f1(Yt, P):8.3f} | {macro_f1(Yt, P):8.3f} | {example_accuracy(Yt, P):6.3f} | "
              f"{per_epoch:7.3f}", flush=True)


def figure4(Xtr, ytr, ltr, words, epochs, png, C=0.01):
    sel = np.arange(words)
    starts = np.concatenate([[0], np.cumsum(ltr)])
    tok = np.concatenate([np.arange(starts[i], starts[i + 1]) for i in sel])
    X, y, L = Xtr[tok], ytr[tok], ltr[sel]
    ref = ChainSSVM(C=C, solver=CuttingPlane(search="exact"), loss="slack", tol=1e-3,
                    max_iter=3000).fit(X, y, L)
    curves = {}
    print(f"\n== objective vs training time, slack-rescaled Pegasos (projection, averaging) on {words} "
          f"OCR words, C={C}; the slack cutting plane's optimum: {ref.objective_:.6f} (dual "
          f"{ref.dual_objective_:.6f}) ==")
    print(f"{'search':>14} | {'final exact primal':>18} | {'rel. to CP':>10} | {'train s':>7} | {'calls/word/epoch':>16}")
    for search in ["exact", "angular", "hull-integral", "hull", "bisecting", "binary", "none"]:
        clocked = ClockedPegasos(search=search, projection=True)
        m = ChainSSVM(C=C, solver=clocked, loss="slack", max_iter=epochs, tol=1e-12,
                      random_state=0).fit(X, y, L)
        curves[search] = (np.array(clocked.train_curve), m.objective_curve_)
        print(f"{search:>14} | {m.objective_:18.6f} | {m.objective_ / ref.objective_ - 1:+10.2e} | "
              f"{m.train_seconds_:7.3f} | {m.n_oracle_calls_ / (len(L) * m.n_iter_):16.2f}", flush=True)
    if png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 4))
        for s, (t, obj) in curves.items():
            ax.plot(t, obj / ref.objective_ - 1, marker=".", label=s)
        ax.set_xlabel("training seconds")
        ax.set_ylabel("relative primal excess over the CP optimum")
        ax.set_yscale("log")
        ax.set_title(f"Pegasos, slack rescaling, OCR ({words} words, C={C})")
        ax.legend()
        fig.tight_layout()
        Path(png).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(png, dpi=120)
        print(f"saved {png}")


def epoch_cost(Xtr, ytr, ltr, X, Y, reps=5):
    """Training seconds per Pegasos epoch, medians of `reps` interleaved runs (the machine is
    shared and noisy: interleaving keeps the ratios fair)."""
    runs = [("margin", "none"), ("slack", "hull"), ("slack", "hull-integral"), ("slack", "angular"),
            ("slack", "exact"), ("beta:0.5", "hull"), ("probloss", "hull")]
    res = {r: ([], []) for r in runs}
    for rep in range(reps):
        for loss, s in runs:
            o = ChainSSVM(C=0.1, solver=Pegasos(search=s), loss=loss, max_iter=3, tol=1e-12,
                          random_state=rep).fit(Xtr, ytr, ltr)
            m = MultiLabelSSVM(C=0.1, solver=Pegasos(search=s), loss=loss, max_iter=20, tol=1e-12,
                               fit_intercept=True, random_state=rep).fit(X, Y)
            res[loss, s][0].append(o.train_seconds_ / o.n_iter_)
            res[loss, s][1].append(m.train_seconds_ / m.n_iter_)
    b0, b1 = (np.median(v) for v in res["margin", "none"])
    print(f"\n== Pegasos epoch cost (C=0.1; medians of {reps} interleaved runs; OCR 6,251 words x 3 "
          f"epochs, scene 1,211 examples x 20 epochs) ==")
    print(f"{'loss':>9} {'search':>13} | {'OCR s/epoch':>11} | {'ratio':>5} | {'scene s/epoch':>13} | {'ratio':>5}")
    for (loss, s), (a, b) in res.items():
        print(f"{loss:>9} {s:>13} | {np.median(a):11.4f} | {np.median(a) / b0:5.2f} | "
              f"{np.median(b):13.5f} | {np.median(b) / b1:5.2f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--words", type=int, default=300, help="OCR words / scene examples in table 1")
    ap.add_argument("--scene-epochs", type=int, default=300)
    ap.add_argument("--png", default="benchmarks/figures/surrogates_fig4.png")
    ap.add_argument("--skip", nargs="*", default=[], choices=["search", "ocr", "scene", "epoch", "fig4"])
    args = ap.parse_args()
    Xtr, ytr, ltr, Xte, yte, lte = load_ocr()
    X, Y, Xt, Yt = load_scene()
    if "search" not in args.skip:
        n = args.words
        starts = np.concatenate([[0], np.cumsum(ltr)])
        Xs, ys, Ls = Xtr[: starts[n]], ytr[: starts[n]], ltr[:n]
        for warm in (False, True):
            search_table(f"OCR letters ({n} train words)",
                         ChainSSVM(C=0.1, solver=CuttingPlane(search="exact"), loss="slack", tol=0.01),
                         lambda e: e.fit(Xs, ys, Ls), lambda e: ocr_structure(e, Xs, ys, Ls), warm=warm)
            search_table(f"scene ({n} train examples)",
                         MultiLabelSSVM(C=0.1, solver=CuttingPlane(search="exact"), loss="slack",
                                        tol=0.01, fit_intercept=True),
                         lambda e: e.fit(X[:n], Y[:n]), lambda e: scene_structure(e, X[:n], Y[:n]),
                         warm=warm)
    if "ocr" not in args.skip:
        ocr_rows(Xtr, ytr, ltr, Xte, yte, lte, args.epochs, [0.01, 0.1, 1.0])
    if "scene" not in args.skip:
        scene_rows(X, Y, Xt, Yt, args.scene_epochs, [0.01, 0.1, 1.0])
    if "epoch" not in args.skip:
        epoch_cost(Xtr, ytr, ltr, X, Y)
    if "fig4" not in args.skip:
        figure4(Xtr, ytr, ltr, 600, max(args.epochs, 30), args.png)


if __name__ == "__main__":
    main()
