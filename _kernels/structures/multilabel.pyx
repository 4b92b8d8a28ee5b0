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
from libc.string cimport memmove

from ssvmlinear._kernels.dataset cimport CSRDataset, Row, row_dot, row_axpy, row_gemv
from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.factor cimport (FactorTree, tree_maxsum, tree_maxsum_workspace, tree_maxsum_by_count,
                                         tree_count_workspace, tree_kbest, tree_kbest_workspace,
                                         MARGINAL_ONE, marginal, binary_pair_marginals,
                                         unary_update_marginals, table_update_marginals)
from ssvmlinear._kernels.factor import post_order

cdef double NEG_INF = -1e300


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

    def subset(self, Py_ssize_t lo, Py_ssize_t hi):
        """The structure of examples lo..hi-1 (same weights layout)."""
        cls, args = self.__reduce__()
        Y = np.asarray(self.y).reshape(self.n_examples, self.n_labels)[lo:hi]
        return cls(self.X.rows(lo, hi), Y, *args[2:])

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


def check_pairs(edges, Py_ssize_t n_labels):
    """edges as an (E, 2) int64 array; ValueError naming the first pair outside 0..n_labels-1, a
    self-loop or a pair given twice (in either order)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    seen = {}
    for e, (a, b) in enumerate(edges.tolist()):
        if not (0 <= a < n_labels and 0 <= b < n_labels):
            raise ValueError(f"edge {e} ({a}, {b}) names a label outside 0..{n_labels - 1}")
        if a == b:
            raise ValueError(f"edge {e} ({a}, {b}) joins a label to itself")
        key = (min(a, b), max(a, b))
        if key in seen:
            raise ValueError(f"edge {e} ({a}, {b}) repeats edge {seen[key]}")
        seen[key] = e
    return edges


def forest_of(edges, Py_ssize_t n_labels):
    """(parent, edge_of): the forest of label pairs `edges` (E x 2) rooted at the lowest label of
    each tree; parent[v] = -1 for a root, edge_of[v] the edge joining v to its parent. ValueError
    when an index is out of range, an edge is a self-loop or repeated, or the edges close a cycle
    (the message names the edge)."""
    edges = check_pairs(edges, n_labels)
    root = list(range(n_labels))

    def find(u):
        while root[u] != u:
            root[u] = root[root[u]]
            u = root[u]
        return u
    adj = [[] for _ in range(n_labels)]
    for e, (a, b) in enumerate(edges.tolist()):
        if not (0 <= a < n_labels and 0 <= b < n_labels):
            raise ValueError(f"edge {e} ({a}, {b}) names a label outside 0..{n_labels - 1}")
        if a == b:
            raise ValueError(f"edge {e} ({a}, {b}) joins a label to itself")
        ra, rb = find(a), find(b)
        if ra == rb:
            raise ValueError(f"edge {e} ({a}, {b}) closes a cycle: the edges must form a forest (a tree or "
                             "several); fully connected pairwise models are not available in this version")
        root[ra] = rb
        adj[a].append((b, e))
        adj[b].append((a, e))
    parent = np.full(n_labels, -1, dtype=np.int32)
    edge_of = np.full(n_labels, -1, dtype=np.int64)
    seen = np.zeros(n_labels, dtype=bool)
    for r in range(n_labels):
        if seen[r]:
            continue
        seen[r] = True
        stack = [r]
        while stack:
            u = stack.pop()
            for v, e in adj[u]:
                if not seen[v]:
                    seen[v] = True
                    parent[v] = u
                    edge_of[v] = e
                    stack.append(v)
    return parent, edge_of


cdef inline Py_ssize_t _ints(Py_ssize_t n) noexcept nogil:
    return (n + 1) // 2


cdef class PairwiseMultiLabelStructure(MultiLabelStructure):
    """Multi-label with pairwise label interactions on a forest (multilabel.pxd).

    PairwiseMultiLabelStructure(X, Y, edges, normalize_loss=False): edges (E x 2) label indices
    forming a forest."""

    def __init__(self, CSRDataset X, Y, edges, bint normalize_loss=False, bint forest=True):
        MultiLabelStructure.__init__(self, X, Y, normalize_loss)
        cdef Py_ssize_t K = self.n_labels, v, e
        edges = np.ascontiguousarray(np.asarray(edges, dtype=np.int32).reshape(-1, 2))
        if forest:
            parent, edge_of = forest_of(edges, K)
        else:                          # any graph (a subclass brings its own oracle): no tree
            check_pairs(edges, K)
            parent, edge_of = np.full(K, -1, dtype=np.int32), np.full(K, -1, dtype=np.int64)
        self.edges = edges.ravel()
        self.n_edges = edges.shape[0]
        self.pair_off = self.n_weights
        self.n_weights += 4 * self.n_edges
        self.parent = parent
        self.order = post_order(parent)
        tab_off = np.zeros(K, dtype=np.intp)
        cs = np.ones(K, dtype=np.intp)
        ps = np.ones(K, dtype=np.intp)
        for v in range(K):
            e = edge_of[v]
            if e < 0:
                continue
            tab_off[v] = 4 * e
            if edges[e, 0] == v:       # table [y_a, y_b] with v = a: state of v is the row
                cs[v], ps[v] = 2, 1
            else:
                cs[v], ps[v] = 1, 2
        self.tab_off, self.cs, self.ps = tab_off, cs, ps

    def __reduce__(self):
        Y = np.asarray(self.y).reshape(self.n_examples, self.n_labels)
        return (PairwiseMultiLabelStructure, (self.X, Y, np.asarray(self.edges).reshape(-1, 2), self.normalize_loss))

    cdef void _tree(self, const double *w, FactorTree *t) noexcept nogil:
        t.n_vars = self.n_labels
        t.n_card = 2
        t.card = NULL
        t.off = NULL
        t.order = &self.order[0] if self.n_labels > 0 else NULL
        t.parent = &self.parent[0]
        t.tables = w + self.pair_off
        t.tab_off = &self.tab_off[0]
        t.cs = &self.cs[0]
        t.ps = &self.ps[0]

    cdef double _pair_margin(self, const double *w, Py_ssize_t i, const int *y) noexcept nogil:
        """Pairwise part of f(y) - f(y_i) (edges where y and y_i differ only)."""
        cdef Py_ssize_t e, a, b
        cdef const int *yi = self._states(i)
        cdef const double *P = w + self.pair_off
        cdef double m = 0.0
        for e in range(self.n_edges):
            a = self.edges[2 * e]
            b = self.edges[2 * e + 1]
            if y[a] != yi[a] or y[b] != yi[b]:
                m += P[4 * e + 2 * y[a] + y[b]] - P[4 * e + 2 * yi[a] + yi[b]]
        return m

    cdef void _beliefs(self, const double *w, Py_ssize_t i, double lam, double *work) noexcept nogil:
        """work[0:K] = the unary scores, B = work[K:3K] = per-state beliefs with lam * loss."""
        cdef Py_ssize_t k, K = self.n_labels
        cdef const int *yi = self._states(i)
        cdef double *B = work + K
        cdef double a = lam * self._loss_weight()
        row_gemv(self.X.row(i), w, K, work)
        for k in range(K):
            B[2 * k] = a if yi[k] else 0.0
            B[2 * k + 1] = work[k] + (0.0 if yi[k] else a)

    cdef double score(self, const double *w, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t e
        cdef const double *P = w + self.pair_off
        cdef double f = MultiLabelStructure.score(self, w, i, y)
        for e in range(self.n_edges):
            f += P[4 * e + 2 * y[self.edges[2 * e]] + y[self.edges[2 * e + 1]]]
        return f

    cdef void margins(self, const double *w, Py_ssize_t i, const int *labels, int n, double *out,
                      double *work, bint after_oracle) noexcept nogil:
        cdef int j
        MultiLabelStructure.margins(self, w, i, labels, n, out, work, after_oracle)
        for j in range(n):
            out[j] += self._pair_margin(w, i, labels + j * self.n_labels)

    cdef double _margin(self, const double *w, Py_ssize_t i, const int *y, const double *s) noexcept nogil:
        """m(y) from the unary scores s, summed over the differences from y_i."""
        cdef Py_ssize_t k
        cdef const int *yi = self._states(i)
        cdef double m = self._pair_margin(w, i, y)
        for k in range(self.n_labels):
            if y[k] != yi[k]:
                m += s[k] if y[k] else -s[k]
        return m

    cdef double oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                       double *m_out, double *delta_out, double *work) noexcept nogil:
        cdef FactorTree t
        cdef Py_ssize_t K = self.n_labels
        self._beliefs(w, i, lam, work)
        self._tree(w, &t)
        tree_maxsum(&t, work + K, y_out, work + 3 * K)
        m_out[0] = self._margin(w, i, y_out, work)
        delta_out[0] = MultiLabelStructure.loss(self, i, y_out)
        return m_out[0] + lam * delta_out[0]

    cdef void loss_indexed_oracle(self, const double *w, Py_ssize_t i, double *best_m, int *labels,
                                  double *work) noexcept nogil:
        cdef FactorTree t
        cdef Py_ssize_t l, K = self.n_labels
        self._beliefs(w, i, 0.0, work)
        self._tree(w, &t)
        tree_maxsum_by_count(&t, work + K, self._states(i), best_m, labels, work + 3 * K)
        for l in range(K + 1):      # every count is attainable with binary labels
            best_m[l] = self._margin(w, i, labels + l * K, work)

    cdef int kbest(self, const double *w, Py_ssize_t i, double lam, int kb, int *labels_out,
                   double *values_out, double *work) noexcept nogil:
        cdef FactorTree t
        cdef Py_ssize_t K = self.n_labels
        cdef int j, got
        if kb <= 0:
            return 0
        self._beliefs(w, i, lam, work)
        self._tree(w, &t)
        got = tree_kbest(&t, work + K, kb, labels_out, values_out, work + 3 * K)
        for j in range(got):
            values_out[j] = (self._margin(w, i, labels_out + j * K, work)
                             + lam * MultiLabelStructure.loss(self, i, labels_out + j * K))
        return got

    cdef double gram(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil:
        # unary: |x|^2 sum_k (y_ik - a_k)(y_ik - b_k); per edge with states u (y_i), p (a), q (b):
        # sum_s ([u=s] - [p=s])([u=s] - [q=s]) = 1 - [u=q] - [p=u] + [p=q]
        cdef Py_ssize_t e, ea, eb
        cdef const int *yi = self._states(i)
        cdef int u, p, q
        cdef double g = MultiLabelStructure.gram(self, i, a, b)
        for e in range(self.n_edges):
            ea = self.edges[2 * e]
            eb = self.edges[2 * e + 1]
            u = 2 * yi[ea] + yi[eb]
            p = 2 * a[ea] + a[eb]
            q = 2 * b[ea] + b[eb]
            if p != u and q != u:
                g += 1.0 + (p == q)
        return g

    cdef void gram_row(self, Py_ssize_t i, const int *a, const int *labels, int n, double *out,
                       double *work) noexcept nogil:
        cdef int j
        for j in range(n):
            out[j] = PairwiseMultiLabelStructure.gram(self, i, a, labels + j * self.n_labels)

    cdef void update(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil:
        cdef Py_ssize_t e, a, b
        cdef const int *yi = self._states(i)
        cdef double *P = w + self.pair_off
        MultiLabelStructure.update(self, w, i, coef, y)
        for e in range(self.n_edges):
            a = self.edges[2 * e]
            b = self.edges[2 * e + 1]
            if y[a] != yi[a] or y[b] != yi[b]:
                P[4 * e + 2 * yi[a] + yi[b]] += coef
                P[4 * e + 2 * y[a] + y[b]] -= coef

    cdef Py_ssize_t workspace_size(self) noexcept nogil:
        cdef Py_ssize_t K = self.n_labels
        cdef Py_ssize_t f1 = tree_count_workspace(K, 2) + (K + 1) + _ints((K + 1) * K + K)
        return 3 * K + max(tree_maxsum_workspace(K, 2), f1)

    cdef Py_ssize_t loss_indexed_workspace_size(self) noexcept nogil:
        return 3 * self.n_labels + tree_count_workspace(self.n_labels, 2)

    cdef Py_ssize_t kbest_workspace_size(self, int kb) noexcept nogil:
        return 3 * self.n_labels + tree_kbest_workspace(self.n_labels, 2, kb)

    # Micro-F1 (h = H + m, g = -(|y| + |y_i|)) on the forest: H and m are sums over labels and
    # edges, so oracle_f1 is max-product on per-state beliefs s*s_k + [s != y_ik] - lam*s, and
    # exact_f1 the best h for each size |y| (max-product by count against the empty label).

    cdef void _f1_beliefs(self, Py_ssize_t i, double lam, double *work) noexcept nogil:
        cdef Py_ssize_t k, K = self.n_labels
        cdef const int *yi = self._states(i)
        cdef double *B = work + K
        for k in range(K):
            B[2 * k] = 1.0 if yi[k] else 0.0
            B[2 * k + 1] = work[k] + (0.0 if yi[k] else 1.0) - lam

    cdef double _f1_h(self, const double *w, Py_ssize_t i, const int *y, const double *s, double *size) noexcept nogil:
        cdef Py_ssize_t k
        cdef const int *yi = self._states(i)
        cdef double h = self._margin(w, i, y, s)
        size[0] = 0.0
        for k in range(self.n_labels):
            if y[k] != yi[k]:
                h += 1.0
            size[0] += y[k] + yi[k]
        return h

    cdef double oracle_f1(self, const double *w, Py_ssize_t i, double lam, int *y_out, double *h_out,
                          double *g_out, double *work) noexcept nogil:
        cdef FactorTree t
        cdef Py_ssize_t K = self.n_labels
        cdef double size
        row_gemv(self.X.row(i), w, K, work)
        self._f1_beliefs(i, lam, work)
        self._tree(w, &t)
        tree_maxsum(&t, work + K, y_out, work + 3 * K)
        h_out[0] = self._f1_h(w, i, y_out, work, &size)
        g_out[0] = -size
        return h_out[0] - lam * size

    cdef double exact_f1(self, const double *w, Py_ssize_t i, int *y_out, double *h_out, double *g_out,
                         double *work) noexcept nogil:
        cdef FactorTree t
        cdef Py_ssize_t k, j, K = self.n_labels, best_j = 0
        cdef double *best = work + 3 * K + tree_count_workspace(K, 2)
        cdef int *labels = <int *> (best + K + 1)
        cdef int *zeros = labels + (K + 1) * K
        cdef double h, size, r, best_r = 0.0, best_h = 0.0, best_size = 0.0
        row_gemv(self.X.row(i), w, K, work)
        self._f1_beliefs(i, 0.0, work)
        self._tree(w, &t)
        for k in range(K):
            zeros[k] = 0
        tree_maxsum_by_count(&t, work + K, zeros, best, labels, work + 3 * K)
        for j in range(K + 1):
            h = self._f1_h(w, i, labels + j * K, work, &size)
            r = h / size if size > 0.0 else 0.0
            if j == 0 or r > best_r:
                best_r, best_j, best_h, best_size = r, j, h, size
        for k in range(K):
            y_out[k] = labels[best_j * K + k]
        h_out[0] = best_h
        g_out[0] = -best_size
        return best_r

    def edge_list(self):
        return np.asarray(self.edges).reshape(-1, 2).copy()



# ------------------------------------------------------------------ the local-polytope LP by max-flow
#
# For binary labels coupled by pairs, the LP relaxation over the local polytope equals roof
# duality and is solved exactly by one minimum cut on 2K + 2 nodes (Boros & Hammer 2002;
# Kolmogorov & Rother 2007, QPBO): node p_k stands for x_k = 1 when on the sink side, its twin
# q_k for x_k = 0; every term of the energy -c . x is split in halves over the two copies. A
# maximum flow's source side S gives the half-integral optimum x_k = ([p_k not in S] + [q_k in
# S]) / 2, and each pair takes the bound of its polytope interval that its coefficient prefers.

def flow_topology(Py_ssize_t K, edges):
    """(arc heads, CSR adjacency pointers, adjacency arcs) of the QPBO graph: source 0, sink 1,
    p_k = 2 + k, q_k = 2 + K + k; arc 2j is the j-th forward arc and 2j + 1 its reverse. Per
    label k (j = 4k..4k+3): s->p_k, q_k->t (the cost of x_k = 1), p_k->t, s->q_k (of x_k = 0);
    per pair e = (a, b) (j = 4K + 4e..): q_b->p_a, q_a->p_b (cost of x_a = x_b = 1), p_a->p_b,
    q_b->q_a (cost of x_a = 0, x_b = 1)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    E = edges.shape[0]
    s, t = 0, 1
    p = 2 + np.arange(K)
    q = 2 + K + np.arange(K)
    a, b = edges[:, 0], edges[:, 1]
    tail = np.concatenate([np.stack([np.full(K, s), q, p, np.full(K, s)], 1).ravel(),
                           np.stack([q[b], q[a], p[a], q[b]], 1).ravel()]).astype(np.int64)
    head = np.concatenate([np.stack([p, np.full(K, t), np.full(K, t), q], 1).ravel(),
                           np.stack([p[a], p[b], p[b], q[a]], 1).ravel()]).astype(np.int64)
    n_nodes = 2 * K + 2
    arc_tail = np.stack([tail, head], 1).ravel()          # arc 2j: tail->head, 2j+1: head->tail
    arc_head = np.stack([head, tail], 1).ravel()
    order = np.argsort(arc_tail, kind="stable")
    ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.add.at(ptr, arc_tail + 1, 1)
    return (arc_head.astype(np.int32), np.cumsum(ptr).astype(np.int32), order.astype(np.int32))


cdef double _flow_dfs(int u, double f, const int *head, const int *ptr, const int *adj, double *cap,
                      int *level, int *it, double eps) noexcept nogil:
    cdef int a, v
    cdef double d
    if u == 1:
        return f
    while it[u] < ptr[u + 1]:
        a = adj[it[u]]
        v = head[a]
        if cap[a] > eps and level[v] == level[u] + 1:
            d = _flow_dfs(v, f if f < cap[a] else cap[a], head, ptr, adj, cap, level, it, eps)
            if d > 0.0:
                cap[a] -= d
                cap[a ^ 1] += d
                return d
        it[u] += 1
    return 0.0


cdef int _flow_bfs(int n, const int *head, const int *ptr, const int *adj, const double *cap, int *level,
                   int *queue, double eps) noexcept nogil:
    """Levels from the source over arcs with residual capacity; returns whether the sink is reached."""
    cdef int u, v, j, qh = 0, qt = 0
    for u in range(n):
        level[u] = -1
    level[0] = 0
    queue[qt] = 0
    qt += 1
    while qh < qt:
        u = queue[qh]
        qh += 1
        for j in range(ptr[u], ptr[u + 1]):
            v = head[adj[j]]
            if level[v] < 0 and cap[adj[j]] > eps:
                level[v] = level[u] + 1
                queue[qt] = v
                qt += 1
    return level[1] >= 0


cdef void _flow_lp(Py_ssize_t K, Py_ssize_t E, const int *edges, const double *c, const int *head,
                   const int *ptr, const int *adj, double *x, double *work) noexcept nogil:
    """x[0:K+E] = argmax c . x over the local polytope (P(y_k = 1), then P(y_a = y_b = 1) per edge).
    work: 2 (4K + 4E) doubles (capacities) + 3 (2K + 2) ints."""
    cdef Py_ssize_t k, e, n_arcs = 2 * (4 * K + 4 * E)
    cdef int n = <int> (2 * K + 2), u, a, b
    cdef double *cap = work
    cdef int *level = <int *> (work + n_arcs)
    cdef int *queue = level + n
    cdef int *it = queue + n
    cdef double *th = x                 # theta_k(1) (cost of x_k = 1), built in x[0:K]
    cdef double v, big = 0.0, eps, f
    for k in range(n_arcs):
        cap[k] = 0.0
    for k in range(K):
        th[k] = -c[k]
    for e in range(E):
        a = edges[2 * e]
        b = edges[2 * e + 1]
        v = -c[K + e]                   # the energy's x_a x_b coefficient
        if v > 0.0:                     # non-submodular: pay v when both are 1
            cap[2 * (4 * K + 4 * e)] = 0.5 * v
            cap[2 * (4 * K + 4 * e + 1)] = 0.5 * v
        elif v < 0.0:                   # v x_a x_b = v x_b + (-v) (1 - x_a) x_b
            th[b] += v
            cap[2 * (4 * K + 4 * e + 2)] = -0.5 * v
            cap[2 * (4 * K + 4 * e + 3)] = -0.5 * v
    for k in range(K):
        if th[k] > 0.0:
            cap[2 * (4 * k)] = 0.5 * th[k]
            cap[2 * (4 * k + 1)] = 0.5 * th[k]
        elif th[k] < 0.0:
            cap[2 * (4 * k + 2)] = -0.5 * th[k]
            cap[2 * (4 * k + 3)] = -0.5 * th[k]
    for k in range(n_arcs):
        if cap[k] > big:
            big = cap[k]
    eps = 1e-13 * big
    while _flow_bfs(n, head, ptr, adj, cap, level, queue, eps):
        for u in range(n):
            it[u] = ptr[u]
        while True:
            f = _flow_dfs(0, 1e300, head, ptr, adj, cap, level, it, eps)
            if f <= 0.0:
                break
    _flow_bfs(n, head, ptr, adj, cap, level, queue, eps)     # the source side: level >= 0
    for k in range(K):
        x[k] = 0.5 * ((level[2 + k] < 0) + (level[2 + K + k] >= 0))
    for e in range(E):
        a = edges[2 * e]
        b = edges[2 * e + 1]
        if c[K + e] > 0.0:
            x[K + e] = x[a] if x[a] < x[b] else x[b]
        else:
            v = x[a] + x[b] - 1.0
            x[K + e] = v if v > 0.0 else 0.0


def maxflow_lp(c, Py_ssize_t K, edges, topology=None):
    """The local-polytope LP max c . x by max-flow (see _flow_lp); x = (P(y_k = 1), pair marginals)."""
    edges32 = np.ascontiguousarray(np.asarray(edges).reshape(-1, 2), dtype=np.int32)
    cdef Py_ssize_t E = edges32.shape[0]
    head, ptr, adj = topology if topology is not None else flow_topology(K, edges32)
    cdef const double[::1] cv = np.ascontiguousarray(c, dtype=np.float64)
    cdef const int[::1] ev = edges32.ravel() if E else np.zeros(1, dtype=np.int32)
    cdef const int[::1] hv = head
    cdef const int[::1] pv = ptr
    cdef const int[::1] av = adj
    x = np.zeros(K + E)
    work = np.zeros(2 * (4 * K + 4 * E) + 3 * (2 * K + 2))
    cdef double[::1] xv = x
    cdef double[::1] wv = work
    _flow_lp(K, E, &ev[0], &cv[0], &hv[0], &pv[0], &av[0], &xv[0], &wv[0])
    return x


cdef class RelaxedPairwiseMultiLabelStructure(PairwiseMultiLabelStructure):
    """The pairwise multi-label model on a forest with relaxed labels (multilabel.pxd): a label is
    K + E ints, P(y_k = 1) for each label then P(y_a = 1, y_b = 1) for each edge, in units of
    MARGINAL_ONE (encode() / decode()). Trained by every solver like the integral structure; the
    oracles' answers are integral (the forest's max-product), the loss, scores, Gram and updates
    take any marginals.

    RelaxedPairwiseMultiLabelStructure(X, Y, edges, normalize_loss=False, lp=None): with lp (any
    graph of label pairs, e.g. all of them) the lambda-oracle is the LP relaxation over the local
    polytope, lp(c) -> the marginals x (K + E) maximising c . x (ssvmlinear.multilabel.PairwiseLP,
    HiGHS): it holds the GIL, and its fractional answers are the relaxed labels the solvers train
    on; without lp the edges must form a forest and the oracles are its max-product."""

    def __init__(self, CSRDataset X, Y, edges, bint normalize_loss=False, lp=None):
        PairwiseMultiLabelStructure.__init__(self, X, Y, edges, normalize_loss, lp is None)
        self.lp = lp
        self.use_flow = getattr(lp, "method", "highs") == "maxflow"
        if self.use_flow:
            self.arc_head, self.adj_ptr, self.adj_arc = flow_topology(self.n_labels, np.asarray(self.edges).reshape(-1, 2))
        cdef Py_ssize_t i, L = self.n_labels + self.n_edges
        self.max_label_len = L
        self.offers_microf1 = False     # Micro-F1's coordinates count integral labels
        ym = np.zeros(max(self.n_examples * L, 1), dtype=np.int32)
        cdef int[::1] yv = ym
        for i in range(self.n_examples):
            yv[i * L:i * L + self.n_labels] = self.y[i * self.n_labels:(i + 1) * self.n_labels]
            self._encode(&yv[i * L])
        self.y_marg = ym

    def __reduce__(self):
        Y = np.asarray(self.y).reshape(self.n_examples, self.n_labels)
        return (RelaxedPairwiseMultiLabelStructure,
                (self.X, Y, np.asarray(self.edges).reshape(-1, 2), self.normalize_loss, self.lp))

    def encode(self, label_marginals, pair_marginals=None):
        """The relaxed label of P(y_k = 1) (K) and P(y_a = 1, y_b = 1) per edge (E); a 0/1 vector
        of K states alone gives the integral label."""
        K, E = self.n_labels, self.n_edges
        mu = np.asarray(label_marginals, dtype=np.float64).reshape(K)
        if pair_marginals is None:
            e = np.asarray(self.edges).reshape(-1, 2)
            pair = mu[e[:, 0]] * mu[e[:, 1]] if np.all((mu == 0) | (mu == 1)) else None
            if pair is None:
                raise ValueError("fractional label marginals need the pair marginals")
        else:
            pair = np.asarray(pair_marginals, dtype=np.float64).reshape(E)
        return np.rint(np.concatenate([mu, pair]) * MARGINAL_ONE).astype(np.int32)

    def decode(self, label):
        """(P(y_k = 1) per label (K), the 2 x 2 marginal table [y_a, y_b] per edge (E x 2 x 2))."""
        cdef int[::1] y = np.ascontiguousarray(label, dtype=np.int32)
        tables = np.zeros((self.n_edges, 4))
        cdef double[:, ::1] tv = tables
        cdef Py_ssize_t e
        for e in range(self.n_edges):
            self._edge_marginals(&y[0], e, &tv[e, 0])
        return np.asarray(y[:self.n_labels]) / MARGINAL_ONE, tables.reshape(self.n_edges, 2, 2)

    cdef void _encode(self, int *y) noexcept nogil:
        """K states in y[0:K] -> the integral label's marginals in y[0:K+E]."""
        cdef Py_ssize_t k, e, K = self.n_labels
        for e in range(self.n_edges):
            y[K + e] = MARGINAL_ONE if (y[self.edges[2 * e]] and y[self.edges[2 * e + 1]]) else 0
        for k in range(K):
            y[k] = MARGINAL_ONE if y[k] else 0

    cdef void _encode_many(self, int *labels, int n) noexcept nogil:
        """n labels of K states back to back -> n encoded labels of K + E ints back to back."""
        cdef Py_ssize_t K = self.n_labels, L = K + self.n_edges
        cdef int j
        for j in range(n - 1, -1, -1):   # label j moves up: the labels below it are not yet read
            memmove(labels + j * L, labels + j * K, K * sizeof(int))
            self._encode(labels + j * L)

    cdef void _edge_marginals(self, const int *y, Py_ssize_t e, double *mu) noexcept nogil:
        binary_pair_marginals(marginal(y[self.edges[2 * e]]), marginal(y[self.edges[2 * e + 1]]),
                              marginal(y[self.n_labels + e]), mu)

    cdef Py_ssize_t label_len(self, Py_ssize_t i) noexcept nogil:
        return self.n_labels + self.n_edges

    cdef const int* true_label(self, Py_ssize_t i) noexcept nogil:
        return &self.y_marg[i * (self.n_labels + self.n_edges)]

    cdef double loss(self, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t k
        cdef const int *yi = self._states(i)
        cdef double d = 0.0, mu
        for k in range(self.n_labels):
            mu = marginal(y[k])
            d += 1.0 - mu if yi[k] else mu
        return d * self._loss_weight()

    cdef double score(self, const double *w, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t k, e, s, K = self.n_labels
        cdef Row r = self.X.row(i)
        cdef const double *P = w + self.pair_off
        cdef double f = 0.0
        cdef double mu[4]
        for k in range(K):
            if y[k] != 0:
                f += marginal(y[k]) * row_dot(r, w, K, k)
        for e in range(self.n_edges):
            self._edge_marginals(y, e, mu)
            for s in range(4):
                f += mu[s] * P[4 * e + s]
        return f

    cdef double _dphi_edges(self, Py_ssize_t i, const double *w, const int *y) noexcept nogil:
        """The pairwise part of f(y) - f(y_i)."""
        cdef Py_ssize_t e, s, u
        cdef const int *yi = self._states(i)
        cdef const double *P = w + self.pair_off
        cdef double m = 0.0
        cdef double mu[4]
        for e in range(self.n_edges):
            self._edge_marginals(y, e, mu)
            u = 2 * yi[self.edges[2 * e]] + yi[self.edges[2 * e + 1]]
            for s in range(4):
                m += (mu[s] - (1.0 if s == u else 0.0)) * P[4 * e + s]
        return m

    cdef void margins(self, const double *w, Py_ssize_t i, const int *labels, int n, double *out,
                      double *work, bint after_oracle) noexcept nogil:
        cdef Py_ssize_t k, K = self.n_labels, L = K + self.n_edges
        cdef const int *yi = self._states(i)
        cdef const int *y
        cdef int j
        cdef double m
        if not after_oracle:
            row_gemv(self.X.row(i), w, K, work)
        for j in range(n):
            y = labels + j * L
            m = self._dphi_edges(i, w, y)
            for k in range(K):
                m += (marginal(y[k]) - yi[k]) * work[k]
            out[j] = m

    cdef double gram(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil:
        cdef Py_ssize_t k, e, s, u
        cdef const int *yi = self._states(i)
        cdef double g = 0.0, t, du
        cdef double ma[4]
        cdef double mb[4]
        for k in range(self.n_labels):
            g += (yi[k] - marginal(a[k])) * (yi[k] - marginal(b[k]))
        g *= self.X.sqnorm(i)
        for e in range(self.n_edges):
            self._edge_marginals(a, e, ma)
            self._edge_marginals(b, e, mb)
            u = 2 * yi[self.edges[2 * e]] + yi[self.edges[2 * e + 1]]
            for s in range(4):
                du = 1.0 if s == u else 0.0
                g += (du - ma[s]) * (du - mb[s])
        return g

    cdef void gram_row(self, Py_ssize_t i, const int *a, const int *labels, int n, double *out,
                       double *work) noexcept nogil:
        cdef int j
        cdef Py_ssize_t L = self.n_labels + self.n_edges
        for j in range(n):
            out[j] = self.gram(i, a, labels + j * L)

    cdef void update(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil:
        cdef Py_ssize_t k, e, K = self.n_labels
        cdef const int *yi = self._states(i)
        cdef Row r = self.X.row(i)
        cdef double mu[4]
        for k in range(K):
            mu[0] = marginal(y[k])
            unary_update_marginals(r, w, K, k, mu, 1, 0 if yi[k] else -1, coef)
        for e in range(self.n_edges):
            self._edge_marginals(y, e, mu)
            table_update_marginals(w + self.pair_off + 4 * e, mu, 4,
                                   2 * yi[self.edges[2 * e]] + yi[self.edges[2 * e + 1]], coef)

    cdef double oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                       double *m_out, double *delta_out, double *work) noexcept nogil:
        cdef double v
        if self.lp is None:
            v = PairwiseMultiLabelStructure.oracle(self, w, i, lam, y_out, m_out, delta_out, work)
            self._encode(y_out)
            return v
        self._lp_oracle(w, i, lam, y_out, work)
        self.margins(w, i, y_out, 1, m_out, work, True)
        delta_out[0] = self.loss(i, y_out)
        return m_out[0] + lam * delta_out[0]

    cdef void _lp_objective(self, const double *w, Py_ssize_t i, double lam, double *c, double *work) noexcept nogil:
        """c[0:K+E]: f + lam * Hamming written in the LP's variables P(y_k = 1), P(y_a = y_b = 1),
        up to a constant (a table's four marginals are linear in its pair's three variables).
        work[0:K]: the unary scores (margins() reuses them)."""
        cdef Py_ssize_t k, e, a, b, K = self.n_labels, E = self.n_edges
        cdef const int *yi = self._states(i)
        cdef const double *P = w + self.pair_off
        cdef double la = lam * self._loss_weight()
        row_gemv(self.X.row(i), w, K, work)
        for k in range(K):
            c[k] = work[k] + (-la if yi[k] else la)
        for e in range(E):
            a = self.edges[2 * e]
            b = self.edges[2 * e + 1]
            c[a] += P[4 * e + 2] - P[4 * e]
            c[b] += P[4 * e + 1] - P[4 * e]
            c[K + e] = P[4 * e] - P[4 * e + 1] - P[4 * e + 2] + P[4 * e + 3]

    cdef void _lp_oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out, double *work) noexcept nogil:
        """The LP relaxation over the local polytope: by max-flow in the kernel (lp.method
        "maxflow"), else by lp (HiGHS; holds the GIL)."""
        cdef Py_ssize_t k, K = self.n_labels, E = self.n_edges
        cdef double *c = work + K
        cdef double *x = c + K + E
        cdef double v
        self._lp_objective(w, i, lam, c, work)
        if self.use_flow:
            _flow_lp(K, E, &self.edges[0], c, &self.arc_head[0], &self.adj_ptr[0], &self.adj_arc[0], x,
                     x + K + E)
            for k in range(K + E):
                y_out[k] = <int> (x[k] * MARGINAL_ONE + 0.5)
            return
        with gil:
            try:
                xs = np.asarray(self.lp(np.asarray(<double[:K + E]> c)), dtype=np.float64)
                for k in range(K + E):
                    v = min(max(float(xs[k]), 0.0), 1.0)
                    y_out[k] = <int> (v * MARGINAL_ONE + 0.5)
            except Exception:
                self.n_lp_failures += 1      # no answer: y_i itself
                for k in range(K + E):
                    y_out[k] = self.true_label(i)[k]

    cdef int constrained_oracle(self, const double *w, Py_ssize_t i, double lam, double alpha, double beta,
                                double origin, double scale, int *y_out, double *work) noexcept nogil:
        """The LP of _lp_oracle with the cone's two rows: h = scale m and g = Delta are linear in
        the LP's variables (m = c_f . x + const - f(y_i), g = c_g . x + const), so the cone
        alpha (h + origin) > g >= beta (h + origin) adds two linear inequalities (the strict one
        by a margin of 1e-9 relative). Holds the GIL (HiGHS)."""
        cdef Py_ssize_t k, e, K = self.n_labels, E = self.n_edges
        cdef const int *yi = self._states(i)
        cdef const double *P = w + self.pair_off
        cdef double *cf = work + K
        cdef double lw = self._loss_weight(), const_f = 0.0, const_g = 0.0, v
        if self.lp is None:
            return -2
        self._lp_objective(w, i, 0.0, cf, work)
        for e in range(E):
            const_f += P[4 * e]
        for k in range(K):
            const_g += lw * yi[k]
        with gil:
            try:
                f_true = self.score(w, i, self.true_label(i))
                cfv = np.array(<double[:K + E]> cf)
                cg = np.zeros(K + E)
                for k in range(K):
                    cg[k] = lw * (1.0 - 2.0 * yi[k])
                h0 = scale * (const_f - f_true) + origin       # h + origin = scale cf.x + h0
                rows, lbs = [], []
                if alpha != float("inf"):                      # alpha (h + origin) - g >= eps
                    rows.append(alpha * scale * cfv - cg)
                    lbs.append(const_g - alpha * h0 + 1e-9 * (1.0 + abs(const_g) + abs(alpha * h0)))
                rows.append(cg - beta * scale * cfv)           # g - beta (h + origin) >= 0
                lbs.append(beta * h0 - const_g)
                x = self.lp.constrained(scale * cfv + lam * cg, np.array(rows), np.array(lbs))
                if x is None:
                    return 0
                x = np.asarray(x, dtype=np.float64)
                for k in range(K + E):
                    v = min(max(float(x[k]), 0.0), 1.0)
                    y_out[k] = <int> (v * MARGINAL_ONE + 0.5)
                return 1
            except Exception:
                self.n_lp_failures += 1
                return 0

    cdef int n_loss_levels(self, Py_ssize_t i) noexcept nogil:
        return 0 if self.lp is not None else PairwiseMultiLabelStructure.n_loss_levels(self, i)

    cdef Py_ssize_t workspace_size(self) noexcept nogil:
        cdef Py_ssize_t a = PairwiseMultiLabelStructure.workspace_size(self)
        # the LP oracle's: unary scores, objective, x, then the flow's capacities and node arrays
        cdef Py_ssize_t b = 3 * (self.n_labels + self.n_edges) + 2 * (4 * self.n_labels + 4 * self.n_edges) \
            + 3 * (2 * self.n_labels + 2)
        return a if a > b else b

    cdef void loss_indexed_oracle(self, const double *w, Py_ssize_t i, double *best_m, int *labels,
                                  double *work) noexcept nogil:
        PairwiseMultiLabelStructure.loss_indexed_oracle(self, w, i, best_m, labels, work)
        self._encode_many(labels, <int> self.n_labels + 1)

    cdef int kbest(self, const double *w, Py_ssize_t i, double lam, int kb, int *labels_out,
                   double *values_out, double *work) noexcept nogil:
        if self.lp is not None:
            return Structure.kbest(self, w, i, lam, kb, labels_out, values_out, work)   # none: raises
        cdef int got = PairwiseMultiLabelStructure.kbest(self, w, i, lam, kb, labels_out, values_out, work)
        self._encode_many(labels_out, got)
        return got
