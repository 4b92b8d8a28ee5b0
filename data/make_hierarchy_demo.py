"""Writes the small hierarchy demo of README's hierarchy section: choi-thesis 6.8.1's unbalanced
synthetic set at a small size (benchmarks/hierarchy_synthetic.py's generator: x standard normal
in R^50 scaled to unit norm, the space cut by random hyperplanes into a one-sided binary tree of
depth 6), seed 0.

    python data/make_hierarchy_demo.py   # -> data/hier_demo.hier, hier_demo_{train,test}.svm.gz
"""
import gzip
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "benchmarks"))
from hierarchy_synthetic import unbalanced  # noqa: E402


def write(path, X, y):
    with gzip.open(path, "wt") as f:
        for row, label in zip(X, y):
            f.write(f"{label} " + " ".join(f"{j + 1}:{v:.4g}" for j, v in enumerate(row)) + "\n")


def main():
    h, X, y = unbalanced(np.random.default_rng(0), d=50, n=3000, depth=6)
    p, c = h.edges()
    (HERE / "hier_demo.hier").write_text("# parent child (choi-thesis 6.8.1 unbalanced tree, depth 6)\n"
                                         + "".join(f"{a} {b}\n" for a, b in zip(p, c)))
    write(HERE / "hier_demo_train.svm.gz", X[:2000], y[:2000])
    write(HERE / "hier_demo_test.svm.gz", X[2000:], y[2000:])


if __name__ == "__main__":
    main()
