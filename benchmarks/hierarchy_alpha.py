"""Time of the rho = 2 node weights (choi-thesis (6.6), the O(M) closed form on trees) and of
building the Hierarchy itself, for random trees of M = 10^3 .. 10^6 nodes (each node's parent
uniform among the nodes before it: depth ~ ln M), with the log-log slope of time against M
(1 = linear). Medians of --reps runs.

    python benchmarks/hierarchy_alpha.py
    python benchmarks/hierarchy_alpha.py --sizes 1000 10000 100000 1000000 --reps 5
"""
import argparse
import time

import numpy as np

from ssvmlinear.hierarchy import Hierarchy, alpha_rho2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000, 1000000])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    print(f"{'M':>9s} {'leaves':>8s} {'depth':>6s} {'build s':>9s} {'alpha s':>9s}")
    for M in args.sizes:
        ids = rng.permutation(10 * M)[:M] + 1                 # sparse, large ids
        parents = ids[(rng.random(M - 1) * np.arange(1, M)).astype(np.int64)]
        build, alpha = [], []
        for _ in range(args.reps):
            t = time.perf_counter()
            h = Hierarchy.from_edges(parents, ids[1:])
            build.append(time.perf_counter() - t)
            t = time.perf_counter()
            a = alpha_rho2(h)
            alpha.append(time.perf_counter() - t)
        assert abs(a[h.anc_idx].sum() - h.n_leaves) < 1e-6 * h.n_leaves    # every path sums to 1
        rows.append((M, np.median(build), np.median(alpha)))
        print(f"{M:9d} {h.n_leaves:8d} {int(h.depth.max()):6d} {rows[-1][1]:9.4f} {rows[-1][2]:9.4f}", flush=True)
    if len(rows) > 1:
        lm = np.log([r[0] for r in rows])
        for k, name in ((1, "build"), (2, "alpha")):
            slope = np.polyfit(lm[1:], np.log([r[k] for r in rows])[1:], 1)[0]
            print(f"log-log slope of {name} time vs M (from M = {rows[1][0]}): {slope:.2f}")


if __name__ == "__main__":
    main()
