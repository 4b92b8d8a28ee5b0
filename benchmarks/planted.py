"""Seeded planted multiclass problems on sparse high-dimensional data (the shape of text
classification: few nonzeros per row out of many features, Zipf-like feature popularity).

Row i: `nnz` distinct features drawn with probability proportional to 1 / rank^zipf_s, values
uniform in (0, 1], the row scaled to unit Euclidean norm. Labels: the argmax over K classes of a
hidden Gaussian weight matrix times the row, then a fraction `noise` of the rows get a uniformly
random other label. Deterministic for a given seed, whatever the machine.

    python benchmarks/planted.py --n 200000 --d 100000 --K 50 --nnz 40 --out planted.svm
    python -c "from benchmarks.planted import planted; X, y = planted(1000, 5000, 10)"
"""
import argparse

import numpy as np
import scipy.sparse as sp


def distinct_rows(cols, draw):
    """cols with each row sorted, its repeated entries redrawn by draw(count) until it has none."""
    cols.sort(axis=1)
    while True:
        dup = np.zeros_like(cols, dtype=bool)
        dup[:, 1:] = cols[:, 1:] == cols[:, :-1]
        k = int(dup.sum())
        if k == 0:
            return cols
        cols[dup] = draw(k)
        cols.sort(axis=1)


def planted(n, d, K, nnz=20, zipf_s=1.1, noise=0.1, seed=0, chunk=100000):
    """(X: n x d CSR float64, y: int64 labels in 0..K-1)."""
    if not 1 <= nnz <= d:
        raise ValueError(f"need 1 <= nnz <= d, got nnz={nnz}, d={d}")
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, d + 1) ** zipf_s
    cdf = np.cumsum(p / p.sum())
    perm = rng.permutation(d)               # popularity rank -> feature index
    W = rng.standard_normal((d, K))
    indices = np.empty(n * nnz, dtype=np.int32)
    data = np.empty(n * nnz)
    y = np.empty(n, dtype=np.int64)
    for s in range(0, n, chunk):
        m = min(chunk, n - s)
        # draw with replacement, then redraw the duplicates of each row until the row is distinct
        draw = lambda shape: perm[np.minimum(np.searchsorted(cdf, rng.random(shape)), d - 1)]   # noqa: E731
        cols = distinct_rows(draw((m, nnz)), draw)
        vals = rng.random((m, nnz)) + 1e-3
        vals /= np.sqrt((vals * vals).sum(axis=1))[:, None]
        scores = np.zeros((m, K))
        for j in range(nnz):
            scores += vals[:, j, None] * W[cols[:, j]]
        y[s:s + m] = scores.argmax(axis=1)
        indices[s * nnz:(s + m) * nnz] = cols.ravel()
        data[s * nnz:(s + m) * nnz] = vals.ravel()
    flip = rng.random(n) < noise
    y[flip] = (y[flip] + rng.integers(1, K, size=int(flip.sum()))) % K
    X = sp.csr_matrix((data, indices, np.arange(0, n * nnz + 1, nnz, dtype=np.int64)), shape=(n, d))
    return X, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--d", type=int, default=100000)
    ap.add_argument("--K", type=int, default=50)
    ap.add_argument("--nnz", type=int, default=40)
    ap.add_argument("--zipf", type=float, default=1.1)
    ap.add_argument("--noise", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="svmlight file to write (1-based features, labels 1..K)")
    a = ap.parse_args()
    X, y = planted(a.n, a.d, a.K, a.nnz, a.zipf, a.noise, a.seed)
    from ssvmlinear import dump_svmlight_file
    dump_svmlight_file(X, y + 1, a.out)


if __name__ == "__main__":
    main()
