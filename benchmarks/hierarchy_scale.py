"""Hierarchical classification at an LSHTC-like size that fits this machine (the thesis's IPC set:
M = 553 nodes, d = 228K, N = 75K): a seeded planted problem on a random tree of ~600 nodes
(~450 leaves), d = 200,000 sparse features (~50 nonzeros per row, Zipf-like popularity, rows of
unit norm), N = 75,000 (+ 25,000 test rows), labels = the leaf of maximal path potential under
Gaussian node weights on the 500 most popular features, 10 % of the training labels replaced by
a random leaf. With --extra-parents the tree becomes a DAG (that many nodes get a second parent;
a leaf's potential sums over its whole ancestor set), and with --labels-per-example above 1 an
example also gets its second-best leaf with probability (labels-per-example - 1): the shapes of
SWIKI and ImageNet (--max-depth bounds the depth: SWIKI d5 is cut at depth 5). Prints, per
model (flat, HSVM, NHSVM, SSVM): seconds per pass, passes to the default stopping rule (SDM, tol=None:
KKT rule at 0.1 and relative duality gap <= 1 %), fit seconds, test accuracy (example-based
accuracy |y & y'| / |y | y'| with label sets) and the process's
peak RSS beside the size of the data and the weights. Each model runs in a fresh subprocess (so
that its peak RSS is its own).

    python benchmarks/hierarchy_scale.py                         # the full size
    python benchmarks/hierarchy_scale.py --n 20000 --d 50000     # smaller
    python benchmarks/hierarchy_scale.py --json rows.json        # the rows as JSON too
    python benchmarks/hierarchy_scale.py --inner 294 --leaves 1218 --d 1000 --n 41000 --extra-parents 150 \\
        --max-depth 5 --alpha directional --models flat hsvm nhsvm   # SWIKI-d5-shaped (a DAG)
"""
import argparse
import json
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp

LEAF_ID0 = 10000                 # leaf k has the id LEAF_ID0 + k; inner nodes are 1..n_inner (1: the root)

# choi-thesis Figure 6-4, test accuracy in % (None: '*', the Shared SVM is not applied to a DAG),
# and Figure 6-5 (the full SWIKI-2011 set of the LSHTC competition)
THESIS = {"IPC": {"SSVM": 52.9, "NHSVM": 52.2, "HSVM": 50.6, "flat": 51.7},
          "DMOZ": {"SSVM": 45.5, "NHSVM": 45.5, "HSVM": 45.0, "flat": 44.2},
          "SWIKI d5": {"SSVM": None, "NHSVM": 61.0, "HSVM": 59.0, "flat": 57.7},
          "ImageNet": {"SSVM": None, "NHSVM": 8.2, "HSVM": 7.5, "flat": 7.4}}
THESIS_FULL_SWIKI = {"NHSVM": 42.38, "HSVM": 38.7, "HR-SVM": 41.79, "FastXML": 31.6, "competition winner": 37.39}
# Figure 6-2: nodes M, features d, examples N, labels (leaves), labels per example, DAG or tree
PUBLISHED_SHAPES = {
    "IPC": dict(nodes=553, d=228000, n=75000, leaves=451, labels_per_example=1.0, dag=False),
    "SWIKI d5": dict(nodes=1512, d=1000, n=41000, leaves=1218, labels_per_example=1.1, dag=True),
    "ImageNet": dict(nodes=1676, d=51000, n=100000, leaves=1000, labels_per_example=1.0, dag=True),
    "DMOZ": dict(nodes=17221, d=165000, n=163000, leaves=12294, labels_per_example=1.0, dag=False),
    "SWIKI": dict(nodes=50312, d=346000, n=456000, leaves=36504, labels_per_example=1.8, dag=True)}


def planted_hierarchy(n, d, n_inner, n_leaves, nnz, seed, extra_parents=0, labels_per_example=1.0, max_depth=None):
    """(parents, children, X, y) of the planted problem (see the module doc). y: the leaf id of
    every row, or with labels_per_example > 1 a list of leaf-id arrays (the best leaf, and the
    second best with probability labels_per_example - 1). max_depth: the deepest leaf's depth
    (the root's is 0; None: the random tree's own)."""
    from ssvmlinear import Hierarchy
    rng = np.random.default_rng(seed)
    # inner nodes 1..n_inner: a random tree; leaves: attached to random inner nodes (each inner
    # node gets at least one leaf, so the inner nodes stay inner)
    if max_depth is None:
        parent_inner = [1 + int(rng.integers(0, k)) for k in range(1, n_inner)]
    else:                      # parents drawn among the inner nodes that leave room for a leaf below
        depth = [0]
        parent_inner = []
        for k in range(1, n_inner):
            room = np.flatnonzero(np.array(depth) < max_depth - 1)
            parent_inner.append(1 + int(room[rng.integers(0, len(room))]))
            depth.append(depth[parent_inner[-1] - 1] + 1)
    hosts = np.concatenate([np.arange(1, n_inner + 1), rng.integers(1, n_inner + 1, n_leaves - n_inner)])
    parents = np.concatenate([parent_inner, hosts])
    children = np.concatenate([np.arange(2, n_inner + 1), LEAF_ID0 + np.arange(n_leaves)])
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
    if extra_parents:
        parents, children = _add_parents(parents, children, n_inner, extra_parents, seed)
    # leaves x nodes incidence of the ancestor sets (the Hierarchy's, in the generator's node order)
    h = Hierarchy.from_edges(parents, children)
    gen = np.array([node_of[i] for i in h.ids])
    A = sp.csr_matrix((np.ones(h.anc_idx.shape[0]), gen[h.anc_idx], h.anc_ptr), shape=(h.n_leaves, M)).T.toarray()
    leaf_ids = h.ids[h.leaves]
    multi = labels_per_example > 1
    y = [] if multi else np.empty(n, dtype=np.int64)
    second = np.random.default_rng(seed + 3).random(n) < labels_per_example - 1
    for s in range(0, n, 5000):
        P = (X[s:s + 5000] @ W.T).toarray() @ A          # path potential of every leaf
        if not multi:
            y[s:s + 5000] = leaf_ids[np.argmax(P, axis=1)]
            continue
        best2 = np.argsort(-P, axis=1)[:, :2]
        y += [leaf_ids[b if two else b[:1]] for b, two in zip(best2, second[s:s + 5000])]
    return parents, children, X, y


def _add_parents(parents, children, n_inner, extra, seed):
    """The edges with a second parent for `extra` random nodes (fewer if too few nodes have a
    candidate): an inner node of smaller id than the node (ids grow along edges: no cycle) that is
    no deeper than its first parent (no path gets longer: max_depth holds)."""
    rng = np.random.default_rng(seed + 2)
    first = dict(zip(children.tolist(), parents.tolist()))
    depth = {1: 0}
    for c in range(2, n_inner + 1):                     # inner parents have smaller ids
        depth[c] = depth[first[c]] + 1
    inner_depth = np.array([depth[k] for k in range(1, n_inner + 1)])
    new_p, new_c = [], []
    for c in rng.permutation(children).tolist():
        if len(new_c) == extra:
            break
        below = min(c, n_inner + 1) - 1                 # candidate ids 1..below
        ok = np.flatnonzero(inner_depth[:below] <= depth[first[c]]) + 1
        ok = ok[ok != first[c]]
        if ok.size:
            new_p.append(int(ok[rng.integers(0, ok.size)]))
            new_c.append(c)
    return np.concatenate([parents, new_p]), np.concatenate([children, new_c])


def add_label_noise(y, noise, n_leaves, seed):
    """Replaces the labels of a fraction `noise` of the rows by one random leaf (in place)."""
    rng = np.random.default_rng(seed + 1)
    flip = np.flatnonzero(rng.random(len(y)) < noise)
    new = LEAF_ID0 + rng.integers(0, n_leaves, len(flip))
    for i, v in zip(flip.tolist(), new.tolist()):
        y[i] = v if isinstance(y, np.ndarray) else np.array([v])
    return y


def write_problem(path, n, n_test, d, n_inner, n_leaves, nnz, noise, seed, extra_parents=0, labels_per_example=1.0,
                  max_depth=None):
    """Generates the planted problem (training labels with noise) into the .npz file `path` the
    workers read; returns its shape (nodes, leaves, depth, d, n, n_test, second parents, labels per
    example, nonzeros per row, noise, CSR and weight sizes in MB, generation seconds)."""
    from ssvmlinear import Hierarchy
    t = time.perf_counter()
    parents, children, X, y = planted_hierarchy(n + n_test, d, n_inner, n_leaves, nnz, seed, extra_parents,
                                                labels_per_example, max_depth)
    y_train = add_label_noise(y[:n] if isinstance(y, np.ndarray) else list(y[:n]), noise, n_leaves, seed)
    y = np.concatenate([y_train, y[n:]]) if isinstance(y, np.ndarray) else y_train + list(y[n:])
    labels = dict(y=y) if isinstance(y, np.ndarray) else dict(
        y_ptr=np.concatenate([[0], np.cumsum([len(s) for s in y])]), y_ids=np.concatenate(y))
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, ntr=n, parents=parents,
             children=children, **labels)
    Xtr = X[:n]
    h = Hierarchy.from_edges(parents, children)
    return dict(nodes=h.n_nodes, leaves=h.n_leaves, depth=int(h.depth.max()), d=d, n=n, n_test=n_test,
                extra_parents=len(parents) - h.n_nodes + 1,
                labels_per_example=(float(np.mean([len(s) for s in y])) if "y_ids" in labels else 1.0),
                nnz_per_row=X.nnz / X.shape[0], noise=noise,
                csr_mb=(Xtr.data.nbytes + Xtr.indices.nbytes + Xtr.indptr.nbytes) / 2**20,
                w_mb=8 * d * (n_inner + n_leaves) / 2**20, seconds=time.perf_counter() - t)



def write_holdout_problem(path, holdout_path, n_fit, n_holdout):
    """The problem in `path` cut to its first n_fit training rows (to fit on) followed by the next
    n_holdout training rows (in the test rows' place), into holdout_path: C is chosen there, the
    test rows unseen."""
    z = dict(np.load(path))
    rows = n_fit + n_holdout
    if rows > int(z["ntr"]):
        raise ValueError(f"{n_fit} + {n_holdout} rows asked of {int(z['ntr'])} training rows")
    ptr = z["indptr"][:rows + 1]
    z.update(data=z["data"][:ptr[-1]], indices=z["indices"][:ptr[-1]], indptr=ptr,
             shape=np.array([rows, z["shape"][1]]), ntr=n_fit)
    if "y" in z:
        z["y"] = z["y"][:rows]
    else:
        z["y_ptr"] = z["y_ptr"][:rows + 1]
        z["y_ids"] = z["y_ids"][:z["y_ptr"][-1]]
    np.savez(holdout_path, **z)

WORKER = r"""
import json, resource, sys, time, warnings
import numpy as np, scipy.sparse as sp
warnings.simplefilter("ignore")
from ssvmlinear import HierarchicalSSVM, Hierarchy
z = np.load(sys.argv[1])
model = sys.argv[2]
X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
ntr = int(z["ntr"])
if "y" in z:
    y = z["y"]
else:                                    # label sets
    y = np.split(z["y_ids"], z["y_ptr"][1:-1])
h = Hierarchy.from_edges(z["parents"], z["children"])
options = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
t = time.perf_counter()
est = HierarchicalSSVM(h, model=model, C=float(sys.argv[3]), fit_intercept=False, random_state=0, **options)
est.fit(X[:ntr], y[:ntr])
secs = time.perf_counter() - t
acc = est.score(X[ntr:], y[ntr:])
print(json.dumps(dict(seconds=secs, passes=int(est.n_iter_), acc=acc, gap=float(est.gap_ / abs(est.objective_)),
                      alternations=len(getattr(est, "alternation_objectives_", [1])),
                      rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""


def fit_in_subprocess(path, model, C, **options):
    """Fits `model` on the problem in `path` in a fresh process (HierarchicalSSVM options as
    keywords); returns its row (seconds, passes, acc, gap, alternations, rss_mb), or raises
    RuntimeError with the end of the worker's stderr."""
    r = subprocess.run([sys.executable, "-c", WORKER, str(path), model, str(C), json.dumps(options)],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=75000)
    ap.add_argument("--n-test", type=int, default=25000)
    ap.add_argument("--d", type=int, default=200000)
    ap.add_argument("--inner", type=int, default=150)
    ap.add_argument("--leaves", type=int, default=450)
    ap.add_argument("--nnz", type=int, default=50)
    ap.add_argument("--extra-parents", type=int, default=0, help="nodes with a second parent (a DAG)")
    ap.add_argument("--labels-per-example", type=float, default=1.0, help="above 1: label sets")
    ap.add_argument("--max-depth", type=int, help="the deepest leaf's depth (default: the random tree's)")
    ap.add_argument("--alpha", default="rho2", choices=["rho2", "directional"],
                    help="NHSVM's node weights; on a DAG of ~1,500 nodes the generic solver of rho2 may not converge")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--noise", type=float, default=0.1)
    ap.add_argument("--models", nargs="+", default=["flat", "hsvm", "nhsvm", "shared"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default="/tmp/hierarchy_scale.npz")
    ap.add_argument("--json", help="write the rows (and the problem's shape) here")
    args = ap.parse_args()
    shape = write_problem(args.data, args.n, args.n_test, args.d, args.inner, args.leaves, args.nnz, args.noise,
                          args.seed, args.extra_parents, args.labels_per_example, args.max_depth)
    dag = f", {shape['extra_parents']} second parents" if shape["extra_parents"] else ""
    print(f"{shape['nodes']} nodes ({args.leaves} leaves{dag}, depth {shape['depth']}), "
          f"d = {args.d}, N = {args.n} train + {args.n_test} test, "
          f"{shape['nnz_per_row']:.1f} nonzeros per row, {shape['labels_per_example']:.2f} labels per example, "
          f"{100 * args.noise:g} % label noise, C = {args.C}, no bias; generated in {shape['seconds']:.0f} s")
    csr_mb, w_mb = shape["csr_mb"], shape["w_mb"]
    print(f"training CSR {csr_mb:.0f} MB, weights {w_mb:.0f} MB; 1.5 x (CSR + weights) = {1.5 * (csr_mb + w_mb):.0f} MB")
    print(f"{'model':7s} {'fit s':>8s} {'passes':>7s} {'s/pass':>7s} {'rel gap':>8s} {'alt.':>5s} {'test %':>7s} "
          f"{'peak MB':>8s}")
    rows = []
    for model in args.models:
        try:
            o = fit_in_subprocess(args.data, model, args.C, alpha=args.alpha)
        except RuntimeError as e:
            print(f"{model}: failed\n{e}")
            continue
        print(f"{model:7s} {o['seconds']:8.1f} {o['passes']:7d} {o['seconds'] / max(o['passes'], 1):7.2f} "
              f"{o['gap']:8.2g} {o['alternations']:5d} {100 * o['acc']:7.2f} {o['rss_mb']:8.0f}", flush=True)
        rows.append(dict(model=model, **o))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(C=args.C, **{k: v for k, v in shape.items() if k != "seconds"}, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
