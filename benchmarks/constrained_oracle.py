"""The angular search's constrained lambda-oracle on a pairwise MRF over all label pairs (the LP
relaxation cut by the search's cone): in the kernel by max-flow support queries against HiGHS
through Python (``PairwiseLP(method="highs")``), on the same random cones at the weights of a few
slack-rescaled cutting-plane iterations, on the Yeast-shaped (14 labels, 91 pairs) and RCV1-shaped
(50 labels, 1,225 pairs) stand-ins of benchmarks/reproduce.py. Prints the median milliseconds per
query of each, their ratio, and how many answers differ in value (they must not).

    python benchmarks/constrained_oracle.py [--queries 200]
"""
import argparse
import time
import warnings

import numpy as np

from reproduce import rcv1_like, yeast_like


def compare(X, Y, n_queries, seed=0):
    from ssvmlinear import MultiLabelSSVM
    from ssvmlinear._kernels.dataset import CSRDataset
    from ssvmlinear._kernels.relaxed_multilabel import RelaxedPairwiseMultiLabelStructure
    from ssvmlinear.models.multilabel import PairwiseLP, _fit_edges
    weights = []
    est = MultiLabelSSVM(C=1.0, loss="slack", edges="full", solver="cutting-plane", fit_intercept=False, max_iter=4,
                         callback=lambda e: weights.append(e.current_weights_.copy()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, Y)
    K = Y.shape[1]
    edges = _fit_edges("full", Y)
    structures = {method: RelaxedPairwiseMultiLabelStructure(CSRDataset(X, -1.0), Y, edges, False,
                                                             PairwiseLP(K, edges, method=method))
                  for method in ("maxflow", "highs")}
    rng = np.random.default_rng(seed)
    times = {m: [] for m in structures}
    differ = 0
    for q in range(n_queries):
        w = np.ascontiguousarray(weights[1 + q % (len(weights) - 1)])
        i = int(rng.integers(X.shape[0]))
        lam, beta = float(rng.uniform(0.1, 5)), float(rng.uniform(0, 2))
        alpha = beta + float(rng.choice([0.01, 0.5, np.inf]))
        got = {}
        for m, st in structures.items():
            t = time.perf_counter()
            got[m] = st.py_constrained_oracle(w, i, lam, alpha, beta, 1.0, 1.0)
            times[m].append(time.perf_counter() - t)
        a, b = got["maxflow"], got["highs"]
        if (a is None) != (b is None) or (a is not None and
                                          abs(a[1] + lam * a[2] - b[1] - lam * b[2]) > 1e-6 * (1 + abs(b[1]))):
            differ += 1
    return {m: 1000 * float(np.median(t)) for m, t in times.items()}, differ


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    print("stand-in            max-flow ms   HiGHS ms   HiGHS / max-flow   answers differing")
    for name, (X, Y) in (("Yeast (14 labels)", yeast_like(n=500)), ("RCV1 (50 labels)", rcv1_like(50, 500))):
        ms, differ = compare(X, Y, args.queries)
        print(f"{name:<19} {ms['maxflow']:>11.3f} {ms['highs']:>10.2f} {ms['highs'] / ms['maxflow']:>18.1f}x "
              f"{differ:>10d} / {args.queries}")


if __name__ == "__main__":
    main()
