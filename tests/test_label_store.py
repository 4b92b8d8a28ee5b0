"""The label store's arena: appends, keeps and compactions keep every example's labels, columns and
Gram matrix equal to a plain Python model of the lists (and the Gram to the structure's own)."""
import numpy as np
import pytest

from ssvmlinear._kernels.labels import LabelStore

from test_chain_oracles import random_chain_problem


def check_against(store, st, model, n_cols):
    state = store.get_state()
    assert state["sizes"].tolist() == [len(m) for m in model]
    labels = [np.asarray(lab, dtype=np.int32) for m in model for lab, _ in m]
    np.testing.assert_array_equal(state["labels"], np.concatenate(labels) if labels else np.zeros(0, np.int32))
    for c, name in enumerate(store.col_names):
        np.testing.assert_array_equal(state[name], [vals[c] for m in model for _, vals in m])
    if store.with_gram:
        for i, m in enumerate(model):
            want = np.array([[st.py_gram(i, np.asarray(a, np.int32), np.asarray(b, np.int32)) for b, _ in m]
                             for a, _ in m]).reshape(len(m), len(m))
            np.testing.assert_allclose(store.py_gram(i), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("with_gram", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_appends_keeps_and_compactions_match_a_model(seed, with_gram):
    rng = np.random.default_rng(seed)
    st = random_chain_problem(seed, n_seq=7, max_T=4, K=3)[0]
    store = LabelStore(st, ("a", "b"), 0, with_gram)
    lengths = [len(st.py_true_label(i)) for i in range(st.n_examples)]
    model = [[] for _ in range(st.n_examples)]
    compactions = 0
    for step in range(400):
        i = int(rng.integers(st.n_examples))
        op = rng.random()
        if op < 0.6:
            y = rng.integers(0, 3, lengths[i]).astype(np.int32)
            vals = tuple(rng.standard_normal(2))
            k = store.py_append(i, y, vals)
            assert k == len(model[i])
            model[i].append((y.tolist(), vals))
        elif op < 0.85 and model[i]:
            flags = rng.random(len(model[i])) < 0.5
            store.py_keep(i, flags)
            model[i] = [m for m, f in zip(model[i], flags) if f]
        else:
            total, used, garbage, chunks = store.arena_stats()
            did = store.compact()
            assert did == (garbage > 0)
            if did:
                compactions += 1
                after = store.arena_stats()
                assert after[2] == 0 and after[1] <= used - garbage and after[0] <= total
        if step % 50 == 0:
            check_against(store, st, model, 2)
    check_against(store, st, model, 2)
    assert compactions > 0


def test_ring_store_keeps_its_order_through_compactions():
    st = random_chain_problem(1, n_seq=3, max_T=3, K=4)[0]
    store = LabelStore(st, ("v",), 3, False)
    rng = np.random.default_rng(0)
    model = [[] for _ in range(st.n_examples)]
    for step in range(120):
        i = int(rng.integers(st.n_examples))
        y = rng.integers(0, 4, len(st.py_true_label(i))).astype(np.int32)
        v = float(rng.standard_normal())
        k = store.py_append(i, y, (v,))
        if len(model[i]) < 3:
            model[i].append((y.tolist(), (v,)))
        else:
            model[i][k] = (y.tolist(), (v,))
        if step % 7 == 0:
            store.compact()
        check_against(store, st, model, 1)


def test_solver_working_sets_compact_and_stay_small():
    """A fit grows most working sets: the dead blocks it leaves are reclaimed during the passes."""
    from ssvmlinear._kernels.dataset import CSRDataset
    from ssvmlinear._kernels.multiclass import MulticlassStructure
    from ssvmlinear._kernels.sdm import SDMSolver
    import scipy.sparse as sp
    rng = np.random.default_rng(0)
    n, d, K = 3000, 30, 8
    X = sp.random(n, d, density=0.3, format="csr", random_state=0)
    y = rng.integers(0, K, n).astype(np.int32)
    s = SDMSolver(MulticlassStructure(CSRDataset(X, -1.0), y, K), np.full(n, 10.0), 0)
    for _ in range(4):
        s.run_pass(True, 0.01)
    total, used, garbage, _ = s.ws.arena_stats()
    assert garbage <= 0.25 * used
    # each list within its size plus a third or its last growth (x1.5), header included
    sizes = s.working_set_sizes()
    live_bound = sum(1 + (c + 1) // 2 + 2 * c for c in np.maximum(2, np.ceil(1.5 * sizes + 1)).astype(int))
    assert used - garbage <= live_bound
