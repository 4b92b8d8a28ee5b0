"""Hierarchical classification at an LSHTC-like size that fits this machine (the thesis's IPC set:
M = 553 nodes, d = 228K, N = 75K): a seeded planted problem on a random tree of ~600 nodes
(~450 leaves), d = 200,000 sparse features (~50 nonzeros per row, Zipf-like popularity, rows of
unit norm), N = 75,000 (+ 25,000 test rows), labels = the leaf of maximal path potential under
Gaussian node weights on the 500 most popular features, 10 % of the training labels replaced by
a random leaf. Prints, per
model (flat, HSVM, NHSVM, SSVM): seconds per pass, passes to the default stopping rule (SDM, tol=None:
KKT rule at 0.1 and relative duality gap <= 1 %), fit seconds, test accuracy and the process's
peak RSS beside the size of the data and the weights. Each model runs in a fresh subprocess (so
that its peak RSS is its own).

    python benchmarks/hierarchy_scale.py                         # the full size
    python benchmarks/hierarchy_scale.py --n 20000 --d 50000     # smaller
    python benchmarks/hierarchy_scale.py --json rows.json        # the rows as JSON too
"""
import argparse
import json
import resource
import subprocess
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp


def planted_hierarchy(n, d, n_inner, n_leaves, nnz, seed):
    rng = np.random.default_rng(seed)
    # inner nodes 1..n_inner: a random tree; leaves: attached to random inner nodes (each inner
    # node gets at least one leaf, so the inner nodes stay inner)
    parent_inner = [1 + int(rng.integers(0, k)) for k in range(1, n_inner)]
    hosts = np.concatenate([np.arange(1, n_inner + 1), rng.integers(1, n_inner + 1, n_leaves - n_inner)])
    parents = np.concatenate([parent_inner, hosts])
    children = np.concatenate([np.arange(2, n_inner + 1), 10000 + np.arange(n_leaves)])
    M = n_inner + n_leaves
    node_of = {c: i for i, c in enumerate(np.concatenate([[1], children]))}
    # feature popularity ~ 1/rank^0.8; node weights Gaussian on the 500 most popular features
    # (where rows have most of their mass, so that labels depend on the rows), zero elsewhere
    pop = 1.0 / np.arange(1, d + 1) ** 0.8
    pop /= pop.sum()
    top = min(500, d)
    W = sp.csr_matrix(np.hstack([rng.standard_normal((M, top)), np.zeros((M, 0))]))
    W = sp.csr_matrix((W.data, W.indices, W.indptr), shape=(M, d))
    cols = rng.choice(d, size=(n, nnz), p=pop)
    X = sp.csr_matrix((np.ones(n * nnz), cols.ravel(), np.arange(0, n * nnz + 1, nnz)), shape=(n, d))
    X.sum_duplicates()
    X = sp.diags(1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())) @ X
    X = sp.csr_matrix(X)
    # path potentials of every leaf, in blocks of rows
    par = np.full(M, -1)
    for p, c in zip(parents, children):
        par[node_of[c]] = node_of[p]
    leaf_idx = np.array([node_of[10000 + k] for k in range(n_leaves)])
    paths = []
    for v in leaf_idx:
        path = []
        while v >= 0:
            path.append(v)
            v = par[v]
        paths.append(path)
    A = sp.csr_matrix((np.ones(sum(map(len, paths))), np.concatenate(paths),
                       np.concatenate([[0], np.cumsum(list(map(len, paths)))])), shape=(n_leaves, M))
    y = np.empty(n, dtype=np.int64)
    for s in range(0, n, 5000):
        S = (X[s:s + 5000] @ W.T).toarray()             # node scores
        y[s:s + 5000] = 10000 + np.argmax(S @ A.T.toarray(), axis=1)
    return parents, children, X, y


WORKER = r"""
import json, resource, sys, time, warnings
import numpy as np, scipy.sparse as sp
warnings.simplefilter("ignore")
from ssvmlinear import HierarchicalSSVM, Hierarchy
z = np.load(sys.argv[1])
model = sys.argv[2]
X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
y, ntr = z["y"], int(z["ntr"])
h = Hierarchy.from_edges(z["parents"], z["children"])
t = time.perf_counter()
est = HierarchicalSSVM(h, model=model, C=float(sys.argv[3]), fit_intercept=False, random_state=0).fit(X[:ntr], y[:ntr])
secs = time.perf_counter() - t
acc = est.score(X[ntr:], y[ntr:])
print(json.dumps(dict(seconds=secs, passes=int(est.n_iter_), acc=acc, gap=float(est.gap_ / abs(est.objective_)),
                      alternations=len(getattr(est, "alternation_objectives_", [1])),
                      rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=75000)
    ap.add_argument("--n-test", type=int, default=25000)
    ap.add_argument("--d", type=int, default=200000)
    ap.add_argument("--inner", type=int, default=150)
    ap.add_argument("--leaves", type=int, default=450)
    ap.add_argument("--nnz", type=int, default=50)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--noise", type=float, default=0.1)
    ap.add_argument("--models", nargs="+", default=["flat", "hsvm", "nhsvm", "shared"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default="/tmp/hierarchy_scale.npz")
    ap.add_argument("--json", help="write the rows (and the problem's shape) here")
    args = ap.parse_args()
    t = time.perf_counter()
    parents, children, X, y = planted_hierarchy(args.n + args.n_test, args.d, args.inner, args.leaves, args.nnz,
                                                args.seed)
    rng = np.random.default_rng(args.seed + 1)
    flip = rng.random(args.n) < args.noise
    y[:args.n][flip] = 10000 + rng.integers(0, args.leaves, int(flip.sum()))
    np.savez(args.data, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, y=y, ntr=args.n,
             parents=parents, children=children)
    csr_mb = (X[:args.n].data.nbytes + X[:args.n].indices.nbytes + X[:args.n].indptr.nbytes) / 2**20
    M = args.inner + args.leaves
    w_mb = 8 * args.d * M / 2**20
    print(f"{M} nodes ({args.leaves} leaves), d = {args.d}, N = {args.n} train + {args.n_test} test, "
          f"{X.nnz / X.shape[0]:.1f} nonzeros per row, {100 * args.noise:g} % label noise, C = {args.C}, no bias; "
          f"generated in {time.perf_counter() - t:.0f} s")
    print(f"training CSR {csr_mb:.0f} MB, weights {w_mb:.0f} MB; 1.5 x (CSR + weights) = {1.5 * (csr_mb + w_mb):.0f} MB")
    print(f"{'model':7s} {'fit s':>8s} {'passes':>7s} {'s/pass':>7s} {'rel gap':>8s} {'alt.':>5s} {'test %':>7s} "
          f"{'peak MB':>8s}")
    rows = []
    for model in args.models:
        r = subprocess.run([sys.executable, "-c", WORKER, args.data, model, str(args.C)], capture_output=True,
                           text=True)
        if r.returncode:
            print(f"{model}: failed\n{r.stderr[-2000:]}")
            continue
        o = json.loads(r.stdout.strip().splitlines()[-1])
        print(f"{model:7s} {o['seconds']:8.1f} {o['passes']:7d} {o['seconds'] / max(o['passes'], 1):7.2f} "
              f"{o['gap']:8.2g} {o['alternations']:5d} {100 * o['acc']:7.2f} {o['rss_mb']:8.0f}", flush=True)
        rows.append(dict(model=model, **o))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(nodes=M, leaves=args.leaves, d=args.d, n=args.n, n_test=args.n_test, C=args.C,
                           noise=args.noise, nnz_per_row=X.nnz / X.shape[0], rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
