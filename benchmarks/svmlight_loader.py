"""Time ssvmlinear's svmlight loader against scikit-learn's on the shipped data sets.

    python benchmarks/svmlight_loader.py [--repeat 5]

Loads each file `repeat` times with each loader (from the .gz on disk, decompression included),
prints the median wall time, the ratio ours/scikit-learn, and checks the results are identical.
Exits with status 1 if a result differs or if ours is slower (ratio > 1).
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from ssvmlinear.io import load_svmlight_file

DATA = Path(__file__).resolve().parent.parent / "data"


def _median_time(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _same_csr(A, B):
    A, B = A.tocsr(), B.tocsr()
    return (A.shape == B.shape and np.array_equal(A.indptr, B.indptr)
            and np.array_equal(A.indices, B.indices) and A.data.tobytes() == B.data.tobytes())


def _check_sequence(ours, theirs):
    (X, y, lengths), (Xs, ys, qid) = ours, theirs
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    return (_same_csr(X, Xs) and np.array_equal(y, ys)
            and np.array_equal(lengths, np.diff(np.r_[starts, qid.size])))


def _check_multilabel(ours, theirs):
    (X, Y), (Xs, ys) = ours, theirs
    return _same_csr(X, Xs) and [tuple(map(float, Y[i].indices)) for i in range(Y.shape[0])] == list(ys)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    from sklearn.datasets import load_svmlight_file as sk_load

    cases = [
        ("ocr_letters.svm.gz", {"query_id": True}, _check_sequence),
        ("scene_train.svm.gz", {"multilabel": True}, _check_multilabel),
        ("scene_test.svm.gz", {"multilabel": True}, _check_multilabel),
    ]
    print(f"{'file':<22}{'rows':>8}{'nnz':>10}{'ours (s)':>11}{'sklearn (s)':>13}{'ratio':>8}"
          f"{'equal':>7}")
    ok = True
    for name, sk_kw, check in cases:
        path = DATA / name
        t_ours, ours = _median_time(lambda: load_svmlight_file(path), args.repeat)
        t_sk, theirs = _median_time(lambda: sk_load(str(path), **sk_kw), args.repeat)
        equal = check(ours, theirs)
        ratio = t_ours / t_sk
        ok &= equal and ratio <= 1.0
        X = ours[0]
        print(f"{name:<22}{X.shape[0]:>8}{X.nnz:>10}{t_ours:>11.4f}{t_sk:>13.4f}{ratio:>8.3f}"
              f"{str(equal):>7}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
