"""Where GDMM's sublinear factorwise oracles pay: the rule of GDMM(fmo_subsets="auto").

On the planted chains of benchmarks/gdmm.py (K tags, --tokens tokens), the seconds of GDMM's first
--passes passes (the active sets grow with K before they settle) and of --passes passes after
--later more (settled), with exact oracles (fmo_subsets = 1) and with the sublinear ones at
max(2, ceil(K / 64)) blocks, and their ratios; the auto rule takes the sublinear oracles from the
K where both ratios are below 1 (solvers.gdmm.AUTO_MIN_DOMAIN). Medians of --reps runs; one
process, one thread.

    python benchmarks/gdmm_auto.py --K 32 64 128 256 512
"""
import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gdmm import planted_chain  # noqa: E402


def passes_seconds(st, n_seq, nu, passes, later):
    """(seconds of the first `passes` passes, of `passes` passes after `later` more)."""
    from ssvmlinear._kernels.gdmm import FactorGDMM
    from ssvmlinear.solvers.gdmm import auto_eta
    graph = st.factor_graph()
    solver = FactorGDMM(graph, np.full(n_seq, 1.0), fmo_subsets=nu, sublinear=nu > 1, seed=0, eta=auto_eta(graph.K))
    t = time.perf_counter()
    for _ in range(passes):
        solver.run_pass()
    first = time.perf_counter() - t
    for _ in range(later):
        solver.run_pass()
    t = time.perf_counter()
    for _ in range(passes):
        solver.run_pass()
    return first, time.perf_counter() - t


def main():
    from ssvmlinear._kernels.chain import ChainStructure
    from ssvmlinear._kernels.dataset import CSRDataset
    from ssvmlinear.solvers.gdmm import AUTO_BLOCK, AUTO_MIN_DOMAIN, auto_subsets
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--K", type=int, nargs="+", default=[32, 64, 128, 256, 512])
    ap.add_argument("--tokens", type=int, default=5000)
    ap.add_argument("--passes", type=int, default=10)
    ap.add_argument("--later", type=int, default=100, help="passes between the first and the later measurement")
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args()
    print(f"planted chains, {args.tokens} tokens, C = 1; seconds of the first {args.passes} passes and of "
          f"{args.passes} passes after {args.later} more (active sets settled), medians of {args.reps}")
    print(f"{'K':>6s} {'blocks':>7s} {'exact first':>12s} {'sub first':>10s} {'ratio':>6s} "
          f"{'exact later':>12s} {'sub later':>10s} {'ratio':>6s} {'auto':>10s}")
    for K in args.K:
        X, y, lengths = planted_chain(K, args.tokens)[:3]
        st = ChainStructure(CSRDataset(X, -1.0), y.astype(np.int32), lengths, K, False, False)
        nu = max(2, math.ceil(K / AUTO_BLOCK))
        ex = np.median([passes_seconds(st, len(lengths), 1, args.passes, args.later) for _ in range(args.reps)], axis=0)
        sb = np.median([passes_seconds(st, len(lengths), nu, args.passes, args.later) for _ in range(args.reps)], axis=0)
        auto = auto_subsets(K)
        print(f"{K:6d} {nu:7d} {ex[0]:12.3f} {sb[0]:10.3f} {sb[0] / ex[0]:6.2f} {ex[1]:12.3f} {sb[1]:10.3f} "
              f"{sb[1] / ex[1]:6.2f} {'sublinear' if auto > 1 else 'exact':>10s}")
    print(f"auto rule: sublinear oracles (ceil(K / {AUTO_BLOCK}) blocks) for K >= {AUTO_MIN_DOMAIN}, exact below")


if __name__ == "__main__":
    main()
