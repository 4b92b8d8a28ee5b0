"""CoCoA+ over GDMM, simulated in one process: how the combination of shards' local passes
converges on OCR chains (folds 1-9, C = 0.1) against one process.

Each round every shard's GDMM kernel takes the round's w (set_weights), makes one local pass with
its subproblem scaling sigma' (the Gram part of every step and every update of w multiplied by it)
and returns u = w + sigma' (its change); w += the changes / sigma'. This is ssvmlinear.solvers.cocoa's
round without Dask (same kernels, same combination, shards drawn at random as there), so sigma'
and the number of shards can be varied freely; --contiguous cuts the file into consecutive
shards instead (OCR's folds one after the other: shards that differ). Prints the primal objective
every --every rounds (one process: passes).

    python benchmarks/cocoa_gdmm.py --shards 1 --sigma 1        # one process
    python benchmarks/cocoa_gdmm.py --shards 2 --sigma 2        # CoCoA+'s safe adding
    python benchmarks/cocoa_gdmm.py --shards 1 --sigma 2        # the scaling alone
    python benchmarks/cocoa_gdmm.py --contiguous                # consecutive shards
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--sigma", type=float, default=2.0, help="sigma' (CoCoA+'s safe value: the number of shards)")
    ap.add_argument("--C", type=float, default=0.1)
    ap.add_argument("--rho", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--every", type=int, default=25)
    ap.add_argument("--contiguous", action="store_true", help="consecutive shards, not drawn at random")
    args = ap.parse_args()
    from convergence import load
    from ssvmlinear._kernels.chain import ChainStructure
    from ssvmlinear._kernels.dataset import CSRDataset
    from ssvmlinear._kernels.gdmm import FactorGDMM
    X, y, lengths = load("ocr-chain")[:3]
    classes, yi = np.unique(y, return_inverse=True)
    st = ChainStructure(CSRDataset(X.tocsr(), -1.0), yi.astype(np.int32), lengths, len(classes), False, False)
    n, K = len(lengths), args.shards
    bounds = [n * k // K for k in range(K + 1)]
    order = None if args.contiguous else np.random.default_rng(0).permutation(n)
    shards = [FactorGDMM(st.subset(bounds[k], bounds[k + 1], order).factor_graph(),
                         np.full(bounds[k + 1] - bounds[k], args.C), rho=args.rho, seed=k) for k in range(K)]
    for s in shards:
        s.sigma = args.sigma
    full = FactorGDMM(st.factor_graph(), np.full(n, args.C), rho=args.rho, seed=0)
    w = np.zeros(full.coef.shape[0])
    print(f"{K} {'consecutive' if args.contiguous else 'random'} shard(s), sigma' = {args.sigma:g}, C = {args.C:g}, "
          f"rho = {args.rho:g}")
    for r in range(1, args.rounds + 1):
        changes = []
        for s in shards:
            s.set_weights(w)
            s.run_pass()
            changes.append((s.coef - w) / args.sigma)
        for d in changes:
            w += d
        if r % args.every == 0:
            full.set_weights(w)
            print(f"round {r:5d}  primal {full.primal():.3f}", flush=True)


if __name__ == "__main__":
    main()
