"""Shards: a structure over a range of examples (subset), or over a range of a permutation of
them, answers exactly as the whole structure on those examples, also after pickling (as the
cluster's workers receive it)."""
import pickle

import numpy as np
import pytest

from ssvmlinear._kernels.chain import ChainStructure
from ssvmlinear._kernels.dataset import CSRDataset
from ssvmlinear._kernels.multiclass import MulticlassStructure
from ssvmlinear._kernels.multilabel import MultiLabelStructure
from ssvmlinear._kernels.pairwise_multilabel import PairwiseMultiLabelStructure
from ssvmlinear._kernels.relaxed_multilabel import RelaxedPairwiseMultiLabelStructure

from ssvmlinear import HierarchicalSSVM

from test_multilabel import random_multilabel


def structures():
    rng = np.random.default_rng(0)
    X, Y = random_multilabel(n=30, d=6, K=4, seed=1)
    D = CSRDataset(X, 1.0)
    edges = np.array([(0, 1), (1, 2), (3, 1)])
    lengths = rng.integers(1, 5, size=12)
    import scipy.sparse as sp
    Xc = sp.random(int(lengths.sum()), 7, density=0.4, format="csr", random_state=3)
    yc = rng.integers(0, 3, size=int(lengths.sum()))
    return {
        "multiclass": MulticlassStructure(D, rng.integers(0, 3, size=30).astype(np.int32), 3),
        "chain": ChainStructure(CSRDataset(Xc, 1.0), yc, lengths, 3, True, True),
        "multilabel": MultiLabelStructure(D, Y),
        "pairwise": PairwiseMultiLabelStructure(D, Y, edges, True),
        "relaxed": RelaxedPairwiseMultiLabelStructure(D, Y, edges),
        "hierarchy": _fitted_structure(HierarchicalSSVM(hierarchy=TREE), *_hierarchy_data()),
        "hierarchy-multilabel": _hierarchy_multilabel(),
    }


TREE = ([0, 0, 1, 1, 2, 2], [1, 2, 3, 4, 5, 6])


def _hierarchy_data():
    import scipy.sparse as sp
    rng = np.random.default_rng(2)
    X = sp.random(20, 5, density=0.6, format="csr", random_state=2)
    return X, np.array([3, 4, 5, 6])[rng.integers(0, 4, 20)]


def _hierarchy_multilabel():
    from ssvmlinear.hierarchy import Hierarchy, multilabel_hierarchy_structure
    X, _ = _hierarchy_data()
    h = Hierarchy.from_edges(*TREE)
    Y = (np.random.default_rng(3).random((20, h.n_leaves)) < 0.5).astype(np.int32)
    Y[:, 0] = 1
    return multilabel_hierarchy_structure(CSRDataset(X, 1.0), Y, h, np.ones(h.n_nodes))


def _fitted_structure(est, X, y):
    from test_conformance import _captured_fit
    return _captured_fit(est.set_params(max_iter=2), (X, y))[0]


@pytest.mark.parametrize("permuted", [False, True])
@pytest.mark.parametrize("name", ["multiclass", "chain", "multilabel", "pairwise", "relaxed", "hierarchy",
                                  "hierarchy-multilabel"])
def test_subset_answers_as_the_whole_structure(name, permuted):
    st = structures()[name]
    rng = np.random.default_rng(5)
    w = rng.standard_normal(st.n_weights)
    lo, hi = 3, st.n_examples - 2
    order = rng.permutation(st.n_examples) if permuted else None
    sub = pickle.loads(pickle.dumps(st.subset(lo, hi, order)))
    assert type(sub) is type(st) and sub.n_examples == hi - lo and sub.n_weights == st.n_weights
    for j in range(hi - lo):
        i = lo + j if order is None else int(order[lo + j])
        np.testing.assert_array_equal(sub.py_true_label(j), st.py_true_label(i))
        for lam in (0.0, 1.0):
            y, m, d = st.py_oracle(w, i, lam)
            ys, ms, ds = sub.py_oracle(w, j, lam)
            np.testing.assert_array_equal(ys, y)
            assert (ms, ds) == (m, d)
        w1, w2 = w.copy(), w.copy()
        st.py_update(w1, i, 0.3, y)
        sub.py_update(w2, j, 0.3, y)
        np.testing.assert_array_equal(w1, w2)
    with pytest.raises(ValueError, match="outside"):
        st.X.rows(0, st.X.n_rows + 1)
