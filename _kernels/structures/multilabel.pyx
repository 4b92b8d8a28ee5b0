# cython: language_level=3
"""Independent multi-label structure: K binary labels, phi(x, y) = sum_k y_k x (x) e_k, Hamming loss.

Every quantity decomposes over the labels. With the unary scores s_k = x . w_k and the gain of
flipping label k away from the truth, d_k = (1 - 2 y_ik) s_k, a label y is the set F of labels
it flips: m(y) = sum_{k in F} d_k and Delta(y, y_i) = c |F| (c = 1, or 1/K with normalize_loss).
So the lambda-oracle flips exactly the labels with d_k + lam c > 0 (O(K)), the loss-indexed oracle
flips the l largest d_k for every l (a sort), and the k best labels by m + lam Delta are the k
cheapest sets of deviations from the best label (sorted costs and a lazy heap over subsets).
"""
import numpy as np
import scipy.sparse as sp

from libc.stdlib cimport qsort

from ssvmlinear._kernels.dataset cimport CSRDataset, Row, row_dot, row_axpy, row_gemv
from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.factor cimport (FactorTree, tree_maxsum, tree_maxsum_workspace, tree_maxsum_by_count,
                                         tree_count_workspace, tree_kbest, tree_kbest_workspace,
                                         MARGINAL_ONE, marginal, binary_pair_marginals,
                                         unary_update_marginals, table_update_marginals)
from ssvmlinear._kernels.factor import post_order


# A sort key: (v, idx) in increasing order, idx breaking ties (a total order, so qsort's result
# is deterministic). Fits in two doubles of a workspace.
ctypedef struct Key:
    double v
    Py_ssize_t idx


# A node of the k-best search: the set of sorted positions {positions of `parent`} + {j}, with the
# sum of their costs. Node 0 is the empty set (j = -1). Fits in two doubles.
ctypedef struct Node:
    double sum
    int j
    int parent


cdef int _key_cmp(const void *a, const void *b) noexcept nogil:
    cdef const Key *p = <const Key *> a
    cdef const Key *q = <const Key *> b
    if p.v < q.v:
        return -1
    if p.v > q.v:
        return 1
    return (p.idx > q.idx) - (p.idx < q.idx)


cdef inline bint _node_less(const Node *nodes, int a, int b) noexcept nogil:
    """Heap order: smaller cost sum first, then the older node (deterministic ties)."""
    return nodes[a].sum < nodes[b].sum or (nodes[a].sum == nodes[b].sum and a < b)


cdef inline void _heap_push(int *heap, int *size, const Node *nodes, int t) noexcept nogil:
    cdef int c = size[0], p
    size[0] += 1
    while c > 0:
        p = (c - 1) // 2
        if not _node_less(nodes, t, heap[p]):
            break
        heap[c] = heap[p]
        c = p
    heap[c] = t


cdef inline int _heap_pop(int *heap, int *size, const Node *nodes) noexcept nogil:
    cdef int top = heap[0], last, c = 0, ch
    size[0] -= 1
    if size[0] == 0:
        return top
    last = heap[size[0]]
    while True:
        ch = 2 * c + 1
        if ch >= size[0]:
            break
        if ch + 1 < size[0] and _node_less(nodes, heap[ch + 1], heap[ch]):
            ch += 1
        if not _node_less(nodes, heap[ch], last):
            break
        heap[c] = heap[ch]
        c = ch
    heap[c] = last
    return top


cdef class MultiLabelStructure(Structure):
    """Labels are 0/1 int32 vectors of length K; weight of label k for feature j is w[j*K + k].

    MultiLabelStructure(X, Y, normalize_loss=False): Y is an (n_examples, K) 0/1 indicator
    (dense array-like or scipy sparse), K >= 1.
    """

    def __init__(self, CSRDataset X, Y, bint normalize_loss=False):
        if sp.issparse(Y):
            Y = Y.toarray()
        Y = np.asarray(Y)
        if Y.ndim != 2:
            raise ValueError(f"Y must be a 2-D 0/1 indicator matrix; got shape {Y.shape}")
        if Y.shape[0] != X.n_rows:
            raise ValueError(f"X has {X.n_rows} rows but Y has {Y.shape[0]}")
        if Y.shape[1] < 1:
            raise ValueError("MultiLabelStructure needs at least one label column")
        if Y.size and not np.all((Y == 0) | (Y == 1)):
            raise ValueError("Y must hold only 0 and 1")
        self.X = X
        self.y = np.ascontiguousarray(Y, dtype=np.int32).ravel()
        self.n_labels = Y.shape[1]
        self.normalize_loss = normalize_loss
        self.n_examples = X.n_rows
        self.n_weights = X.n_cols * self.n_labels
        self.offers_microf1 = True
        self.max_label_len = self.n_labels

    def __reduce__(self):
        Y = np.asarray(self.y).reshape(self.n_examples, self.n_labels)
        return (MultiLabelStructure, (self.X, Y, self.normalize_loss))

    def factor_graph(self):
        """The factor decomposition factorwise solvers (GDMM) train on (factor.pxd's FactorGraph):
        the labels as binary variables with no pair factors."""
        from ssvmlinear._kernels.factor import FactorGraph
        n, K = self.n_examples, self.n_labels
        return FactorGraph(self, self.X, np.arange(n + 1, dtype=np.int64) * K, np.asarray(self.y),
                           np.full(n, self._loss_weight()), K, True, self.n_weights, self.n_weights)

    def subset(self, Py_ssize_t lo, Py_ssize_t hi, order=None):
        """The structure of examples lo..hi-1 or order[lo:hi] (Structure.subset)."""
        cls, args = self.__reduce__()
        index = self.shard_index(lo, hi, order)
        Y = np.asarray(self.y).reshape(self.n_examples, self.n_labels)[index]
        return cls(self.X.part(lo, hi, order), Y, *args[2:])

    cdef double _loss_weight(self) noexcept nogil:
        return 1.0 / self.n_labels if self.normalize_loss else 1.0

    cdef Py_ssize_t label_len(self, Py_ssize_t i) noexcept nogil:
        return self.n_labels

    cdef const int* true_label(self, Py_ssize_t i) noexcept nogil:
        return self._states(i)

    cdef double score(self, const double *w, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t k, K = self.n_labels
        cdef Row r = self.X.row(i)
        cdef double f = 0.0
        for k in range(K):
            if y[k]:
                f += row_dot(r, w, K, k)
        return f

    cdef void margins(self, const double *w, Py_ssize_t i, const int *labels, int n, double *out,
                      double *work, bint after_oracle) noexcept nogil:
        # m(y) = sum_k (y_k - y_ik) s_k from the K scores (the oracle's, when after_oracle)
        cdef Py_ssize_t k, K = self.n_labels
        cdef const int *yi = self._states(i)
        cdef const int *a
        cdef int j
        cdef double m
        if not after_oracle:
            row_gemv(self.X.row(i), w, K, work)
        for j in range(n):
            a = labels + j * K
            m = 0.0
            for k in range(K):
                if a[k] != yi[k]:
                    m += work[k] if a[k] else -work[k]
            out[j] = m

    cdef double loss(self, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t k, K = self.n_labels
        cdef const int *yi = self._states(i)
        cdef double d = 0.0
        for k in range(K):
            if y[k] != yi[k]:
                d += 1.0
        return d * self._loss_weight()

    cdef double oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                       double *m_out, double *delta_out, double *work) noexcept nogil:
        # flip label k iff d_k + lam c > 0 (ties keep the true value); work: the K scores
        cdef Py_ssize_t k, K = self.n_labels
        cdef const int *yi = self._states(i)
        cdef double a = lam * self._loss_weight(), d, m = 0.0, nflip = 0.0
        row_gemv(self.X.row(i), w, K, work)
        for k in range(K):
            d = -work[k] if yi[k] else work[k]
            if d + a > 0.0:
                y_out[k] = 1 - yi[k]
                m += d
                nflip += 1.0
            else:
                y_out[k] = yi[k]
        m_out[0] = m
        delta_out[0] = nflip * self._loss_weight()
        return m + lam * delta_out[0]

    cdef int n_loss_levels(self, Py_ssize_t i) noexcept nogil:
        return <int> (self.n_labels + 1)

    cdef double level_loss(self, Py_ssize_t i, int level) noexcept nogil:
        return level * self._loss_weight()

    cdef Py_ssize_t loss_indexed_workspace_size(self) noexcept nogil:
        return 3 * self.n_labels

    cdef void loss_indexed_oracle(self, const double *w, Py_ssize_t i, double *best_m, int *labels,
                                  double *work) noexcept nogil:
        """Level l = l mismatches: flip the l largest gains d_k (ties: lowest index first).
        work: K scores, then K sort keys (2K doubles)."""
        cdef Py_ssize_t k, l, K = self.n_labels
        cdef const int *yi = self._states(i)
        cdef Key *keys = <Key *> (work + K)
        cdef int *lab
        cdef Py_ssize_t kk
        row_gemv(self.X.row(i), w, K, work)
        for k in range(K):
            keys[k].v = work[k] if yi[k] else -work[k]     # -d_k: ascending = largest gain first
            keys[k].idx = k
        qsort(keys, K, sizeof(Key), _key_cmp)
        best_m[0] = 0.0
        for k in range(K):
            labels[k] = yi[k]
        for l in range(1, K + 1):
            lab = labels + l * K
            for k in range(K):
                lab[k] = labels[(l - 1) * K + k]
            kk = keys[l - 1].idx
            lab[kk] = 1 - lab[kk]
            best_m[l] = best_m[l - 1] - keys[l - 1].v

    cdef double gram(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil:
        cdef Py_ssize_t k, K = self.n_labels
        cdef const int *yi = self._states(i)
        cdef long long s = 0
        for k in range(K):
            s += (yi[k] - a[k]) * (yi[k] - b[k])
        return self.X.sqnorm(i) * s if s != 0 else 0.0

    cdef void gram_row(self, Py_ssize_t i, const int *a, const int *labels, int n, double *out,
                       double *work) noexcept nogil:
        cdef int j
        cdef Py_ssize_t K = self.n_labels
        for j in range(n):
            out[j] = MultiLabelStructure.gram(self, i, a, labels + j * K)

    cdef void update(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil:
        # w += coef (phi(y_i) - phi(y)): label blocks where y differs from y_i only
        cdef Py_ssize_t k, K = self.n_labels
        cdef const int *yi = self._states(i)
        cdef Row r = self.X.row(i)
        for k in range(K):
            if y[k] != yi[k]:
                row_axpy(r, coef * (yi[k] - y[k]), w, K, k)

    cdef Py_ssize_t workspace_size(self) noexcept nogil:
        # scores (K) + sort keys (2K) for the loss-indexed oracle and exact_f1
        return 3 * self.n_labels

    cdef int kbest(self, const double *w, Py_ssize_t i, double lam, int kb, int *labels_out,
                   double *values_out, double *work) noexcept nogil:
        """The kb best labels by m + lam Delta. The best label b flips the labels with
        g_k = d_k + lam c > 0; any other label deviates from b on a set T and is worth
        value(b) - sum_{k in T} |g_k|. Sets T come in increasing cost from a heap over the sorted
        costs (children of {.., j}: add j+1, replace j by j+1; each set is generated once).
        Ties: cheaper sum first, then generation order. work: K scores, 2K keys, 2(2kb+1) nodes,
        2kb+2 heap entries."""
        cdef Py_ssize_t k, K = self.n_labels
        cdef const int *yi = self._states(i)
        cdef double a = lam * self._loss_weight(), g, v
        cdef Key *keys = <Key *> (work + K)
        cdef Node *nodes = <Node *> (work + 3 * K)
        cdef int *heap = <int *> (work + 3 * K + 2 * (2 * <Py_ssize_t> kb + 1))
        cdef int *lab
        cdef int got = 0, n_nodes, hsize, t, j, par
        if kb <= 0:
            return 0
        row_gemv(self.X.row(i), w, K, work)
        for k in range(K):
            g = (-work[k] if yi[k] else work[k]) + a
            keys[k].v = g if g > 0.0 else -g              # cost of deviating from b on label k
            keys[k].idx = k
        qsort(keys, K, sizeof(Key), _key_cmp)
        nodes[0].sum = 0.0
        nodes[0].j = -1
        nodes[0].parent = -1
        n_nodes = 1
        hsize = 0
        _heap_push(heap, &hsize, nodes, 0)
        while got < kb and hsize > 0:
            t = _heap_pop(heap, &hsize, nodes)
            # the label: b, then flip the positions of node t
            lab = labels_out + got * K
            for k in range(K):
                g = (-work[k] if yi[k] else work[k]) + a
                lab[k] = 1 - yi[k] if g > 0.0 else yi[k]
            par = t
            while par > 0:
                k = keys[nodes[par].j].idx
                lab[k] = 1 - lab[k]
                par = nodes[par].parent
            v = 0.0
            for k in range(K):
                if lab[k] != yi[k]:
                    v += (-work[k] if yi[k] else work[k]) + a
            values_out[got] = v
            got += 1
            # children
            j = nodes[t].j
            if j + 1 < K:
                nodes[n_nodes].sum = nodes[t].sum + keys[j + 1].v           # add j+1
                nodes[n_nodes].j = j + 1
                nodes[n_nodes].parent = t
                _heap_push(heap, &hsize, nodes, n_nodes)
                n_nodes += 1
                if t > 0:                                                    # replace j by j+1
                    par = nodes[t].parent
                    nodes[n_nodes].sum = nodes[par].sum + keys[j + 1].v
                    nodes[n_nodes].j = j + 1
                    nodes[n_nodes].parent = par
                    _heap_push(heap, &hsize, nodes, n_nodes)
                    n_nodes += 1
        return got

    cdef Py_ssize_t kbest_workspace_size(self, int kb) noexcept nogil:
        cdef Py_ssize_t m = kb if kb > 0 else 0
        return 3 * self.n_labels + 2 * (2 * m + 1) + (2 * m + 2)

    # ------------------------------------------------------------------ Micro-F1 surrogate

    cdef double oracle_f1(self, const double *w, Py_ssize_t i, double lam, int *y_out, double *h_out,
                          double *g_out, double *work) noexcept nogil:
        cdef Py_ssize_t k, K = self.n_labels
        cdef const int *yi = self._states(i)
        cdef double h = 0.0, size = 0.0, v_on, v_off
        row_gemv(self.X.row(i), w, K, work)
        for k in range(K):
            # per label: H + m - lam y_k with y_k = 1 (on) or 0 (off)
            if yi[k]:
                v_on = -lam
                v_off = 1.0 - work[k]
                y_out[k] = 0 if v_off > v_on else 1
            else:
                v_on = 1.0 + work[k] - lam
                v_off = 0.0
                y_out[k] = 1 if v_on > v_off else 0
            if y_out[k] != yi[k]:
                h += 1.0 + (work[k] if y_out[k] else -work[k])
            size += yi[k] + y_out[k]
        h_out[0] = h
        g_out[0] = -size
        return h - lam * size

    cdef double exact_f1(self, const double *w, Py_ssize_t i, int *y_out, double *h_out, double *g_out,
                         double *work) noexcept nogil:
        # H + m = base + sum_{k: y_k = 1} a_k with a_k = s_k - 1 (y_ik = 1), 1 + s_k (y_ik = 0),
        # base = sum_{y_ik = 1} (1 - s_k): for each size j the best y takes the j largest a_k.
        cdef Py_ssize_t k, j, K = self.n_labels, best_j = 0
        cdef const int *yi = self._states(i)
        cdef Key *keys = <Key *> (work + K)
        cdef double base = 0.0, num, den, r, best_r, h = 0.0
        cdef Py_ssize_t nyi = 0
        row_gemv(self.X.row(i), w, K, work)
        for k in range(K):
            if yi[k]:
                base += 1.0 - work[k]
                nyi += 1
                keys[k].v = 1.0 - work[k]          # -a_k: ascending = largest gain first
            else:
                keys[k].v = -1.0 - work[k]
            keys[k].idx = k
        qsort(keys, K, sizeof(Key), _key_cmp)
        num = base
        best_r = base / nyi if nyi > 0 else 0.0
        for j in range(1, K + 1):
            num -= keys[j - 1].v
            den = <double> (j + nyi)
            r = num / den
            if r > best_r:
                best_r = r
                best_j = j
        for k in range(K):
            y_out[k] = 0
        for j in range(best_j):
            y_out[keys[j].idx] = 1
        for k in range(K):
            if y_out[k] != yi[k]:
                h += 1.0 + (work[k] if y_out[k] else -work[k])
        den = <double> (best_j + nyi)
        h_out[0] = h
        g_out[0] = -den
        return h / den if den > 0.0 else 0.0

    # ------------------------------------------------------------------ Python test helpers

    def py_oracle_f1(self, const double[::1] w, Py_ssize_t i, double lam):
        """(label, h, g, value) of oracle_f1 for example i."""
        y = np.zeros(self.n_labels, dtype=np.int32)
        work = np.zeros(max(self.workspace_size(), 1))
        cdef int[::1] yv = y
        cdef double[::1] wv = work
        cdef double h = 0.0, g = 0.0, v
        v = self.oracle_f1(&w[0], i, lam, &yv[0], &h, &g, &wv[0])
        return y, h, g, v

    def py_exact_f1(self, const double[::1] w, Py_ssize_t i):
        """(label, h, g, value) of exact_f1 for example i."""
        y = np.zeros(self.n_labels, dtype=np.int32)
        work = np.zeros(max(self.workspace_size(), 1))
        cdef int[::1] yv = y
        cdef double[::1] wv = work
        cdef double h = 0.0, g = 0.0, v
        v = self.exact_f1(&w[0], i, &yv[0], &h, &g, &wv[0])
        return y, h, g, v

    def true_labels(self):
        """The (n_examples, K) indicator matrix of the true labels (a copy)."""
        return np.asarray(self.y).reshape(self.n_examples, self.n_labels).copy()
