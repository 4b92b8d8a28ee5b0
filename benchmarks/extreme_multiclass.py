"""Extreme multiclass: GDMM and SDM (ssvmlinear) against LIBLINEAR -s 4 (Crammer-Singer) on planted
sparse text-like problems with 1,000 to 100,000 classes.

Data (`extreme`, seeded, deterministic): K classes with power-law sizes (class k drawn with
probability proportional to 1 / (k + 1), every class at least once); each class owns a prototype
of `proto` features drawn uniformly from d; a row takes `from_class` distinct features of its
class's prototype and `background` features of Zipf popularity over all d, term counts
1 + Geometric(1/2), weighted by idf = 1 + log(n / df) and scaled to unit norm (tf-idf); a
fraction `noise` of the rows gets a uniformly random other label.

Protocol, per K: the problem is generated once (cached as .npz under --cache); every fit runs in a
fresh subprocess, so that its peak RSS is its own. LIBLINEAR at -e 0.1 (its default) sets the
target: its objective 1/2 |W|^2 + C sum_i max_k [1(k != y_i) + w_k x_i - w_{y_i} x_i]. Ours:
MulticlassSSVM(C, fit_intercept=False) with solver "sdm" and "gdmm" at their default rule and at
each --tols value; the table gives each fit's seconds (fit() wall time), objective (the same
function, from coef_), its relative distance to the target, peak RSS after training (ours: after
predicting too; before the objective is computed), and the prediction time of the test rows
(exact: every class scored). "to target" is the fastest of a solver's fits whose
objective is at most LIBLINEAR's, over LIBLINEAR's seconds.

Weights are dense K x d float64 (feature-major, as LIBLINEAR's): 8 K d bytes, one copy in a fit of
ours; LIBLINEAR adds its n x K dual variables (8 K (d + n) bytes). K = 100,000 at d = 100,000 needs
80 GB for the weights alone and is skipped by --max-gb.

    python benchmarks/extreme_multiclass.py --K 1000                    # n = 20 K by default
    python benchmarks/extreme_multiclass.py --K 1000 10000 --n-per-class 10 --C 1
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
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from planted import distinct_rows       # noqa: E402


def extreme(n, d, K, proto=20, from_class=10, background=30, zipf_s=1.1, noise=0.05, seed=0, chunk=50000):
    """(X: n x d CSR float64 tf-idf rows of unit norm, y: int64 labels in 0..K-1)."""
    if not (1 <= from_class <= proto <= d and K <= n and background + from_class <= d):
        raise ValueError("need 1 <= from_class <= proto <= d, K <= n and background + from_class <= d")
    rng = np.random.default_rng(seed)
    pk = 1.0 / np.arange(1, K + 1)
    y = np.concatenate([np.arange(K), rng.choice(K, size=n - K, p=pk / pk.sum())])
    rng.shuffle(y)
    protos = np.stack([rng.choice(d, size=proto, replace=False) for _ in range(K)]) if K <= 20000 else \
        rng.integers(0, d, size=(K, proto))
    p = 1.0 / np.arange(1, d + 1) ** zipf_s
    cdf = np.cumsum(p / p.sum())
    perm = rng.permutation(d)
    nnz = from_class + background
    indices = np.empty(n * nnz, dtype=np.int32)
    data = np.empty(n * nnz)
    for s in range(0, n, chunk):
        m = min(chunk, n - s)
        own = np.argsort(rng.random((m, proto)), axis=1)[:, :from_class]       # distinct prototype slots
        draw = lambda shape: perm[np.minimum(np.searchsorted(cdf, rng.random(shape)), d - 1)]   # noqa: E731
        # duplicates (a background feature drawn twice or in the prototype) redrawn from the background
        cols = distinct_rows(np.concatenate([protos[y[s:s + m, None], own], draw((m, background))], axis=1), draw)
        indices[s * nnz:(s + m) * nnz] = cols.ravel()
        data[s * nnz:(s + m) * nnz] = rng.geometric(0.5, size=m * nnz)      # term counts
    df = np.bincount(indices, minlength=d)
    data *= 1.0 + np.log(n / np.maximum(df[indices], 1))
    X = sp.csr_matrix((data, indices, np.arange(0, n * nnz + 1, nnz, dtype=np.int64)), shape=(n, d))
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1.0 / norms) @ X
    flip = rng.random(n) < noise
    y[flip] = (y[flip] + rng.integers(1, K, size=int(flip.sum()))) % K
    return X.tocsr(), y.astype(np.int64)


def objective(Wf, X, yi, C, chunk=2000):
    """1/2 ||W||^2 + C sum_i max_k [1(k != y_i) + w_k x_i - w_{y_i} x_i] over the training classes
    (both tools' problem: a class without training rows has no weights). Wf: the weights
    feature-major (d' x K, d' <= d: features beyond d' have none), read in place; yi: each row's
    column in Wf."""
    total = 0.0
    X = X[:, :Wf.shape[0]]
    for s in range(0, X.shape[0], chunk):
        S = np.asarray(X[s:s + chunk] @ Wf)
        rows, own_class = np.arange(S.shape[0]), yi[s:s + chunk]
        own = S[rows, own_class]
        S += 1.0
        S[rows, own_class] -= 1.0
        total += float(np.sum(S.max(axis=1) - own))
    return 0.5 * float(np.einsum("ij,ij->", Wf, Wf)) + C * total       # (no K x d temporary)


def problem_file(args, K):
    path = Path(args.cache) / f"extreme_K{K}_n{args.n_per_class * K}_d{args.d}.npz"
    if not path.exists():
        X, y = extreme(args.n_per_class * K + args.test_per_class * K, args.d, K, seed=args.seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, y=y,
                 n_train=args.n_per_class * K)
    return path


def load(path):
    z = np.load(path)
    X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
    n = int(z["n_train"])
    return X[:n], z["y"][:n], X[n:], z["y"][n:]


def worker(path, solver, C, tol, out):
    import warnings
    X, y, Xt, yt = load(path)
    if solver == "liblinear":
        from liblinear import liblinearutil as ll
        prob = ll.problem(y.astype(np.float64), X)
        param = ll.parameter(f"-s 4 -c {C} -e {tol if tol is not None else 0.1} -q")
        t = time.perf_counter()
        model = ll.train(prob, param)
        seconds = time.perf_counter() - t
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        labels = np.array(model.get_labels(), dtype=np.int64)
        Wf = np.ctypeslib.as_array(model.w, shape=(model.get_nr_feature() * len(labels),)).reshape(-1, len(labels))
        t = time.perf_counter()       # (its own predict is per row in Python)
        pred = labels[np.asarray(Xt[:, :Wf.shape[0]] @ Wf).argmax(axis=1)]
        predict_seconds = time.perf_counter() - t
        passes = -1
    else:
        from ssvmlinear import ConvergenceWarning, MulticlassSSVM
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t = time.perf_counter()
            est = MulticlassSSVM(C=C, solver=solver, tol=tol, fit_intercept=False, max_iter=2000,
                                 random_state=0).fit(X, y)
            seconds = time.perf_counter() - t
        t = time.perf_counter()
        pred = est.predict(Xt)
        predict_seconds = time.perf_counter() - t
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        passes = int(est.n_iter_)
        labels, Wf = est.classes_, est.coef_.T        # (coef_ is a view of the feature-major weights)
    order = np.argsort(labels)
    yi = order[np.searchsorted(labels[order], y)]
    json.dump(dict(seconds=seconds, objective=objective(Wf, X, yi, C), accuracy=float(np.mean(pred == yt)),
                   predict_seconds=predict_seconds, rss=rss, passes=passes), open(out, "w"))


def run(path, solver, C, tol):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        subprocess.run([sys.executable, __file__, "--worker", str(path), solver, repr(C), repr(tol), out], check=True)
        return json.load(open(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--K", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--d", type=int, default=100000)
    ap.add_argument("--n-per-class", type=int, default=20)
    ap.add_argument("--test-per-class", type=int, default=2)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--tols", type=float, nargs="*", default=[0.1, 0.01])
    ap.add_argument("--solvers", nargs="+", default=["gdmm", "sdm"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-gb", type=float, default=16.0, help="skip K whose weights and LIBLINEAR's duals "
                    "(8 K (d + n) bytes) exceed this")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "ssvm-extreme"))
    ap.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        path, solver, C, tol, out = a.worker
        worker(path, solver, float(C), None if tol == "None" else float(tol), out)
        return
    print(f"d = {a.d}, n = {a.n_per_class} K (train), C = {a.C}; seconds of fit(); rel = objective / LIBLINEAR's - 1")
    for K in a.K:
        gb = 8.0 * K * (a.d + a.n_per_class * K) / 2 ** 30
        if gb > a.max_gb:
            print(f"K = {K}: skipped, the weights and LIBLINEAR's duals need ~{gb:.0f} GB > --max-gb {a.max_gb:g}")
            continue
        path = problem_file(a, K)
        ref = run(path, "liblinear", a.C, 0.1)
        print(f"K = {K:6d}  LIBLINEAR -s 4 -e 0.1  {ref['seconds']:8.2f} s  objective {ref['objective']:.6g}  "
              f"acc {100 * ref['accuracy']:.2f}%  predict {ref['predict_seconds']:.2f} s  RSS {ref['rss'] / 2**30:.2f} GB",
              flush=True)
        for solver in a.solvers:
            best = None
            for tol in [None] + list(a.tols):
                r = run(path, solver, a.C, tol)
                rel = r["objective"] / ref["objective"] - 1
                if rel <= 0 and (best is None or r["seconds"] < best):
                    best = r["seconds"]
                print(f"          {solver:5} tol={str(tol):5}  {r['seconds']:8.2f} s  passes {r['passes']:4d}  "
                      f"objective {r['objective']:.6g} rel {rel:+.2e}  acc {100 * r['accuracy']:.2f}%  "
                      f"predict {r['predict_seconds']:.2f} s  RSS {r['rss'] / 2**30:.2f} GB", flush=True)
            print(f"          {solver:5} to target: " + (f"{best:.2f} s = {best / ref['seconds']:.2f}x LIBLINEAR"
                                                      if best is not None else "not reached"), flush=True)


if __name__ == "__main__":
    main()
