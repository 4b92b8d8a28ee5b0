# cython: language_level=3
"""Multi-label with pairwise label interactions on a forest of label pairs: the independent
structure's unary part plus a 2 x 2 table per pair; the oracles are the forest's max-product
(factor.pyx), the variables being the labels with their two states."""
import numpy as np

from ssvmlinear._kernels.dataset cimport CSRDataset, Row, row_dot, row_axpy, row_gemv
from ssvmlinear._kernels.factor cimport (FactorTree, tree_maxsum, tree_maxsum_workspace, tree_maxsum_by_count,
                                         tree_count_workspace, tree_kbest, tree_kbest_workspace,
                                         MARGINAL_ONE, marginal, binary_pair_marginals,
                                         unary_update_marginals, table_update_marginals)
from ssvmlinear._kernels.factor import post_order
from ssvmlinear._kernels.multilabel cimport MultiLabelStructure


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
                             "several); other graphs train with the LP relaxation (RelaxedPairwiseMultiLabelStructure)")
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
    """Multi-label with pairwise label interactions on a forest (pairwise_multilabel.pxd).

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

    def factor_graph(self):
        """The per-example factor decomposition factorwise solvers (GDMM) train on (factor.pxd's
        FactorGraph): the labels as binary variables, a pairwise factor with its own table per edge."""
        from ssvmlinear._kernels.factor import FactorGraph
        n, K = self.n_examples, self.n_labels
        return FactorGraph(self, self.X, np.arange(n + 1, dtype=np.int64) * K, np.asarray(self.y),
                           np.full(n, self._loss_weight()), K, True, self.pair_off, self.n_weights,
                           np.asarray(self.edges).reshape(-1, 2))

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
