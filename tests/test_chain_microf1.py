"""The Micro-F1 surrogate on chains: the fitted objective against brute force, two searches and
two solvers agreeing, the outside tag's checks."""
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from ssvmlinear import ChainSSVM
from ssvmlinear.solvers import CuttingPlane, Pegasos


def tiny(seed):
    rng = np.random.default_rng(seed)
    lengths = np.array([3, 2, 4, 1, 3])
    X = sp.random(lengths.sum(), 4, density=0.8, random_state=seed, format="csr", data_rvs=rng.standard_normal)
    tags = np.array(["B-X", "I-X", "O"])
    y = tags[rng.integers(0, 3, size=lengths.sum())]
    y[:3] = "O"
    return X, y, lengths


def brute_primal(est, X, y, lengths, C):
    """1/2 ||w||^2 + C sum_i max_y (H(y, y_i) + f(y) - f(y_i)) / (|y| + |y_i|), by enumeration."""
    K = len(est.classes_)
    U = X @ est.coef_.T
    starts = np.concatenate([[0], np.cumsum(lengths)])
    out = 0.5 * (np.sum(est.coef_ ** 2) + np.sum(est.transition_ ** 2))
    o = list(est.classes_).index("O")
    for a, b in zip(starts[:-1], starts[1:]):
        yi = np.searchsorted(est.classes_, y[a:b])
        f = lambda l: U[np.arange(a, b), l].sum() + est.transition_[l[:-1], l[1:]].sum()
        best = 0.0
        for l in itertools.product(range(K), repeat=b - a):
            l = np.array(l)
            size = np.sum(l != o) + np.sum(yi != o)
            H = np.sum((l != yi) * ((l != o) * 1 + (yi != o)))
            if size:
                best = max(best, (H + f(l) - f(yi)) / size)
        out += C * best
    return out


@pytest.mark.parametrize("seed", range(3))
def test_cutting_plane_objective_is_the_brute_force_primal(seed):
    X, y, lengths = tiny(seed)
    est = ChainSSVM(C=2.0, loss="microf1", solver=CuttingPlane(search="exact"), tol=1e-6).fit(X, y, lengths)
    assert est.objective_ == pytest.approx(brute_primal(est, X, y, lengths, 2.0), rel=1e-9)
    assert est.dual_objective_ <= est.objective_ * (1 + 1e-9)
    assert est.gap_ <= 0.01 * est.objective_
    hull = ChainSSVM(C=2.0, loss="microf1", solver=CuttingPlane(search="hull"), tol=1e-6).fit(X, y, lengths)
    assert hull.objective_ == pytest.approx(est.objective_, rel=2e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sgd = ChainSSVM(C=2.0, loss="microf1", solver=Pegasos(search="exact"), max_iter=3000, tol=1e-12,
                        random_state=0).fit(X, y, lengths)
    assert brute_primal(sgd, X, y, lengths, 2.0) == pytest.approx(est.objective_, rel=0.05)
    assert brute_primal(sgd, X, y, lengths, 2.0) >= est.objective_ * (1 - 0.01)


def test_outside_tag_must_be_a_tag():
    X, y, lengths = tiny(0)
    with pytest.raises(ValueError, match="outside_tag='Z'"):
        ChainSSVM(loss="microf1", outside_tag="Z", solver=CuttingPlane(search="exact")).fit(X, y, lengths)
    y2 = np.where(y == "O", "OUT", y)
    est = ChainSSVM(loss="microf1", outside_tag="OUT", solver=CuttingPlane(search="exact")).fit(X, y2, lengths)
    assert est.objective_ > 0
    ChainSSVM(outside_tag="Z").fit(X, y, lengths)        # unused by the other losses
