# cython: language_level=3
"""Single-label hierarchical structure (hierarchy.pxd): HSVM and NHSVM on a tree or a DAG.

The oracles compute the M node scores c_n x . W_n once (one row_gemv), then every leaf's score
and loss in one pass over the nodes: on a tree, path sums and the loss weight of the deepest
common ancestor with y_i, parents first (O(M)); on a DAG, sums over each leaf's ancestor set with
the ancestors of y_i marked (no node counted twice). The lambda-oracle, k-best and the
loss-indexed oracle (per loss level: the best leaf) then scan the leaves.
"""
import numpy as np

from libc.math cimport sqrt
from libc.stdlib cimport qsort

from ssvmlinear._kernels.dataset cimport CSRDataset, Row, row_dot, row_axpy, row_gemv
from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.factor cimport MARGINAL_ONE, marginal

cdef double NEG_INF = -1e300
# Largest loss-level table (doubles) the structure keeps: L distinct values per leaf at most
cdef long long LEVEL_TABLE_LIMIT = 4 * 1024 * 1024
# relative difference below which two losses are one loss level
cdef double LEVEL_TOL = 1e-12

cdef enum:
    TASK_HAMMING = 0
    TASK_NORMALIZED = 1
    TASK_NORMALIZED_MARGIN = 2
    TASK_ZERO_ONE = 3

# task_loss names for Python callers
TASK_LOSSES = {"hamming": TASK_HAMMING, "normalized": TASK_NORMALIZED, "normalized-margin": TASK_NORMALIZED_MARGIN,
               "zero-one": TASK_ZERO_ONE}


ctypedef struct Key:
    double v
    Py_ssize_t idx


cdef int _key_desc(const void *a, const void *b) noexcept nogil:
    """Larger value first, then the lower index (a total order: deterministic ties)."""
    cdef const Key *p = <const Key *> a
    cdef const Key *q = <const Key *> b
    if p.v > q.v:
        return -1
    if p.v < q.v:
        return 1
    return (p.idx > q.idx) - (p.idx < q.idx)


cdef class HierarchyStructure(Structure):
    """HierarchyStructure(X, y, parent, leaf_node, anc_ptr, anc_idx, coef, is_tree, task_loss):
    y the leaf number of every example; parent per node (parents numbered first; trees only, -1
    at the root; a DAG passes -1 everywhere); leaf_node the node of each leaf; A(l) as CSR
    (anc_ptr, anc_idx sorted); coef c_n per node; task_loss 0/1/2 (TASK_LOSSES)."""

    def __init__(self, CSRDataset X, y, parent, leaf_node, anc_ptr, anc_idx, coef, bint is_tree,
                 int task_loss=0, loss_coef=None):
        y = np.ascontiguousarray(y, dtype=np.int32)
        parent = np.ascontiguousarray(parent, dtype=np.int32)
        leaf_node = np.ascontiguousarray(leaf_node, dtype=np.int32)
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        M, L = parent.shape[0], leaf_node.shape[0]
        if y.shape[0] != X.n_rows:
            raise ValueError(f"X has {X.n_rows} rows but y has {y.shape[0]} labels")
        if y.shape[0] and (y.min() < 0 or y.max() >= L):
            raise ValueError("leaf numbers must lie in [0, n_leaves)")
        if coef.shape[0] != M or task_loss not in (0, 1, 2, 3):
            raise ValueError("one coefficient per node and a task loss 0..3 (TASK_LOSSES) expected")
        self.X = X
        self.y = y
        self.parent = parent
        self.leaf_node = leaf_node
        self.anc_ptr = np.ascontiguousarray(anc_ptr, dtype=np.int64)
        self.anc_idx = np.ascontiguousarray(anc_idx, dtype=np.int32)
        self.coef = coef
        self.n_nodes, self.n_leaves = M, L
        self.is_tree = is_tree
        self.task_loss = task_loss
        self.n_examples = X.n_rows
        self.n_weights = X.n_cols * M
        self.max_label_len = 1
        # a Gram entry is four merges of ancestor lists (O(depth)): the dual working sets compute
        # the rows they need instead of keeping |V_i|^2 doubles per example (the bulk of their
        # memory at LSHTC-like sizes)
        self.cheap_gram = True
        self.c2 = coef * coef
        # the normalised losses' node weights: c_n^2, or fixed ones (Shared SVM keeps its loss
        # while alpha changes)
        loss_coef = coef if loss_coef is None else np.ascontiguousarray(loss_coef, dtype=np.float64)
        if loss_coef.shape[0] != M:
            raise ValueError("one loss coefficient per node expected")
        self.loss_coef = loss_coef
        self.lw = np.ones(M) if task_loss == 0 else loss_coef * loss_coef
        dw = np.zeros(M)
        if is_tree:
            for n in range(M):
                dw[n] = self.lw[n] + (dw[parent[n]] if parent[n] >= 0 else 0.0)
        self.depth_w = dw
        self._levels()

    def __reduce__(self):
        return (HierarchyStructure, (self.X, np.asarray(self.y), np.asarray(self.parent), np.asarray(self.leaf_node),
                                     np.asarray(self.anc_ptr), np.asarray(self.anc_idx), np.asarray(self.coef),
                                     self.is_tree, self.task_loss, np.asarray(self.loss_coef)))

    def subset(self, Py_ssize_t lo, Py_ssize_t hi, order=None):
        """The structure of examples lo..hi-1 or order[lo:hi] (Structure.subset)."""
        cls, args = self.__reduce__()
        index = self.shard_index(lo, hi, order)
        return cls(self.X.part(lo, hi, order), args[1][index], *args[2:])

    def _levels(self):
        """The sorted distinct losses of every true leaf (the loss-indexed oracle's levels)."""
        cdef Py_ssize_t L = self.n_leaves
        cdef int l, t
        cdef bint two_levels = self.task_loss == TASK_NORMALIZED_MARGIN or self.task_loss == TASK_ZERO_ONE
        self.has_levels = two_levels or L * L <= LEVEL_TABLE_LIMIT
        if two_levels or not self.has_levels:
            self.lvl_ptr = np.zeros(L + 1, dtype=np.int64)
            self.lvl_vals = np.zeros(1)
            return
        ptr = np.zeros(L + 1, dtype=np.int64)
        vals = []
        loss = np.zeros(L)
        cdef double[::1] lv = loss
        for t in range(L):
            for l in range(L):
                lv[l] = self._loss_of(l, t)
            u = np.unique(loss)
            # losses that differ by rounding only (sums over sets in other orders) are one level
            u = u[np.concatenate([[True], np.diff(u) > LEVEL_TOL * np.maximum(1.0, u[1:])])]
            vals.append(u)
            ptr[t + 1] = ptr[t] + u.shape[0]
        self.lvl_ptr = ptr
        self.lvl_vals = np.concatenate(vals) if vals else np.zeros(1)

    cdef Py_ssize_t label_len(self, Py_ssize_t i) noexcept nogil:
        return 1

    cdef const int* true_label(self, Py_ssize_t i) noexcept nogil:
        return &self.y[i]

    cdef double _common(self, int a, int b, const double *weight) noexcept nogil:
        """sum of weight over A(a) & A(b) (sorted lists merged)."""
        cdef long long p = self.anc_ptr[a], pe = self.anc_ptr[a + 1]
        cdef long long q = self.anc_ptr[b], qe = self.anc_ptr[b + 1]
        cdef double s = 0.0
        while p < pe and q < qe:
            if self.anc_idx[p] == self.anc_idx[q]:
                s += weight[self.anc_idx[p]]
                p += 1
                q += 1
            elif self.anc_idx[p] < self.anc_idx[q]:
                p += 1
            else:
                q += 1
        return s

    cdef double _sym_diff(self, int a, int b, const double *weight) noexcept nogil:
        """sum of weight over A(a) sym-diff A(b)."""
        cdef long long p = self.anc_ptr[a], pe = self.anc_ptr[a + 1]
        cdef long long q = self.anc_ptr[b], qe = self.anc_ptr[b + 1]
        cdef double s = 0.0
        while p < pe or q < qe:
            if q >= qe or (p < pe and self.anc_idx[p] < self.anc_idx[q]):
                s += weight[self.anc_idx[p]]
                p += 1
            elif p >= pe or self.anc_idx[q] < self.anc_idx[p]:
                s += weight[self.anc_idx[q]]
                q += 1
            else:
                p += 1
                q += 1
        return s

    cdef double _loss_of(self, int l, int t) noexcept nogil:
        if l == t:
            return 0.0
        if self.task_loss == TASK_HAMMING:
            return self._sym_diff(l, t, &self.lw[0])
        if self.task_loss == TASK_NORMALIZED:
            return sqrt(self._sym_diff(l, t, &self.lw[0]))
        return 1.0

    cdef double _norm_of(self, int l, int t) noexcept nogil:
        """The divisor of dphi: ||c (A(l) sym-diff A(t))|| for the normalised margin (6.13), else 1."""
        cdef double s
        if self.task_loss != TASK_NORMALIZED_MARGIN or l == t:
            return 1.0
        s = sqrt(self._sym_diff(l, t, &self.lw[0]))
        return s if s > 0.0 else 1.0

    cdef double loss(self, Py_ssize_t i, const int *y) noexcept nogil:
        return self._loss_of(y[0], self.y[i])

    cdef double score(self, const double *w, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Row r = self.X.row(i)
        cdef long long p
        cdef int n
        cdef double f = 0.0
        for p in range(self.anc_ptr[y[0]], self.anc_ptr[y[0] + 1]):
            n = self.anc_idx[p]
            if self.coef[n] != 0.0:
                f += self.coef[n] * row_dot(r, w, self.n_nodes, n)
        return f

    cdef double _dphi_score(self, const double *w, Py_ssize_t i, int l) noexcept nogil:
        """m(l) = (f(l) - f(y_i)) / norm, summed over the symmetric difference only."""
        cdef int t = self.y[i], n
        cdef long long p = self.anc_ptr[l], pe = self.anc_ptr[l + 1]
        cdef long long q = self.anc_ptr[t], qe = self.anc_ptr[t + 1]
        cdef Row r = self.X.row(i)
        cdef double m = 0.0, c
        if l == t:
            return 0.0
        while p < pe or q < qe:
            if q >= qe or (p < pe and self.anc_idx[p] < self.anc_idx[q]):
                n = self.anc_idx[p]
                c = self.coef[n]
                p += 1
            elif p >= pe or self.anc_idx[q] < self.anc_idx[p]:
                n = self.anc_idx[q]
                c = -self.coef[n]
                q += 1
            else:
                p += 1
                q += 1
                continue
            if c != 0.0:
                m += c * row_dot(r, w, self.n_nodes, n)
        return m / self._norm_of(l, t)

    cdef void _all_leaves(self, const double *w, Py_ssize_t i, double lam, double *work) noexcept nogil:
        """work[0:M] node scores c_n x . W_n, work[M:2M] per node the sum over A(n) (trees; on a
        DAG only the leaves' entries), work[3M:3M+L] each leaf's m + lam * loss. work[2M:3M]
        (trees): the loss weight of each node's deepest common ancestor with y_i."""
        cdef Py_ssize_t M = self.n_nodes, L = self.n_leaves
        cdef double *S = work
        cdef double *P = work + M
        cdef double *C = work + 2 * M
        cdef double *V = work + 3 * M
        cdef int t = self.y[i], tn = self.leaf_node[t], n, l, ln
        cdef long long p
        cdef double fyi, sd, m, norm
        row_gemv(self.X.row(i), w, M, S)
        for n in range(M):
            S[n] *= self.coef[n]
        if self.is_tree:
            for n in range(M):
                C[n] = 0.0
            n = tn
            while n >= 0:                      # mark the path of y_i
                C[n] = 1.0
                n = self.parent[n]
            for n in range(M):                 # parents first
                if self.parent[n] >= 0:
                    P[n] = P[self.parent[n]] + S[n]
                    C[n] = self.depth_w[n] if C[n] != 0.0 else C[self.parent[n]]
                else:
                    P[n] = S[n]
                    C[n] = self.depth_w[n] if C[n] != 0.0 else 0.0
        else:
            for l in range(L):
                ln = self.leaf_node[l]
                P[ln] = 0.0
                for p in range(self.anc_ptr[l], self.anc_ptr[l + 1]):
                    P[ln] += S[self.anc_idx[p]]
        fyi = P[tn]
        for l in range(L):
            if l == t:
                V[l] = 0.0
                continue
            ln = self.leaf_node[l]
            if self.is_tree:
                sd = self.depth_w[ln] + self.depth_w[tn] - 2.0 * C[ln]
            else:
                sd = self._sym_diff(l, t, &self.lw[0])
            m = P[ln] - fyi
            if self.task_loss == TASK_HAMMING:
                V[l] = m + lam * sd
            elif self.task_loss == TASK_NORMALIZED:
                V[l] = m + lam * sqrt(sd)
            elif self.task_loss == TASK_ZERO_ONE:
                V[l] = m + lam
            else:
                norm = sqrt(sd)
                V[l] = (m / norm if norm > 0.0 else m) + lam

    cdef double oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                       double *m_out, double *delta_out, double *work) noexcept nogil:
        cdef Py_ssize_t L = self.n_leaves, M = self.n_nodes
        cdef double *V = work + 3 * M
        cdef int l, best = 0
        self._all_leaves(w, i, lam, work)
        for l in range(1, L):
            if V[l] > V[best]:
                best = l
        y_out[0] = best
        delta_out[0] = self._loss_of(best, self.y[i])
        m_out[0] = self._dphi_score(w, i, best)
        return m_out[0] + lam * delta_out[0]

    cdef void margins(self, const double *w, Py_ssize_t i, const int *labels, int n, double *out,
                      double *work, bint after_oracle) noexcept nogil:
        cdef int j
        for j in range(n):
            out[j] = self._dphi_score(w, i, labels[j])

    cdef double gram(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil:
        # sum_n c_n^2 ([n in T] - [n in A])([n in T] - [n in B]) |x|^2 with T = A(y_i), divided by
        # both norms for the normalised margin
        cdef int t = self.y[i], la = a[0], lb = b[0]
        cdef const double *c2 = &self.c2[0]
        cdef double g
        if la == t or lb == t:
            return 0.0
        g = (self._common(t, t, c2) - self._common(t, lb, c2) - self._common(la, t, c2)
             + self._common(la, lb, c2))
        return g * self.X.sqnorm(i) / (self._norm_of(la, t) * self._norm_of(lb, t))

    cdef void gram_row(self, Py_ssize_t i, const int *a, const int *labels, int n, double *out,
                       double *work) noexcept nogil:
        cdef int j
        for j in range(n):
            out[j] = self.gram(i, a, labels + j)

    cdef void update(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil:
        # w += coef (phi(y_i) - phi(l)) / norm: only the nodes of the symmetric difference
        cdef int t = self.y[i], l = y[0], n
        cdef long long p = self.anc_ptr[l], pe = self.anc_ptr[l + 1]
        cdef long long q = self.anc_ptr[t], qe = self.anc_ptr[t + 1]
        cdef Row r = self.X.row(i)
        cdef double s, c
        if l == t:
            return
        s = coef / self._norm_of(l, t)
        while p < pe or q < qe:
            if q >= qe or (p < pe and self.anc_idx[p] < self.anc_idx[q]):
                n = self.anc_idx[p]
                c = -s * self.coef[n]
                p += 1
            elif p >= pe or self.anc_idx[q] < self.anc_idx[p]:
                n = self.anc_idx[q]
                c = s * self.coef[n]
                q += 1
            else:
                p += 1
                q += 1
                continue
            if c != 0.0:
                row_axpy(r, c, w, self.n_nodes, n)

    cdef Py_ssize_t workspace_size(self) noexcept nogil:
        return 3 * self.n_nodes + 3 * self.n_leaves + 2

    cdef int kbest(self, const double *w, Py_ssize_t i, double lam, int k, int *labels_out,
                   double *values_out, double *work) noexcept nogil:
        cdef Py_ssize_t L = self.n_leaves, M = self.n_nodes
        cdef double *V = work + 3 * M
        cdef Key *keys = <Key *> (work + 3 * M + L)
        cdef int l, got
        self._all_leaves(w, i, lam, work)
        for l in range(L):
            keys[l].v = V[l]
            keys[l].idx = l
        qsort(keys, L, sizeof(Key), _key_desc)
        got = <int> min(k, L)
        for l in range(got):
            labels_out[l] = <int> keys[l].idx
            values_out[l] = (self._dphi_score(w, i, <int> keys[l].idx)
                             + lam * self._loss_of(<int> keys[l].idx, self.y[i]))
        return got

    cdef Py_ssize_t kbest_workspace_size(self, int k) noexcept nogil:
        return self.workspace_size()

    cdef int n_loss_levels(self, Py_ssize_t i) noexcept nogil:
        if not self.has_levels:
            return 0
        if self.task_loss == TASK_NORMALIZED_MARGIN or self.task_loss == TASK_ZERO_ONE:
            return 2 if self.n_leaves > 1 else 1
        return <int> (self.lvl_ptr[self.y[i] + 1] - self.lvl_ptr[self.y[i]])

    cdef double level_loss(self, Py_ssize_t i, int level) noexcept nogil:
        if self.task_loss == TASK_NORMALIZED_MARGIN or self.task_loss == TASK_ZERO_ONE:
            return <double> level
        return self.lvl_vals[self.lvl_ptr[self.y[i]] + level]

    cdef Py_ssize_t loss_indexed_workspace_size(self) noexcept nogil:
        return self.workspace_size()

    cdef void loss_indexed_oracle(self, const double *w, Py_ssize_t i, double *best_m, int *labels,
                                  double *work) noexcept nogil:
        # best leaf of every loss level (ties: the lowest leaf number); the levels are the sorted
        # distinct losses, found by bisection (the same _loss_of computed them)
        cdef Py_ssize_t L = self.n_leaves, M = self.n_nodes
        cdef double *V = work + 3 * M
        cdef int t = self.y[i], l, nl = self.n_loss_levels(i), lo, hi, mid, lev
        cdef const double *vals = &self.lvl_vals[self.lvl_ptr[t]]
        cdef double d
        self._all_leaves(w, i, 0.0, work)
        for lev in range(nl):
            best_m[lev] = NEG_INF
            labels[lev] = -1
        for l in range(L):
            d = self._loss_of(l, t)
            if self.task_loss == TASK_NORMALIZED_MARGIN or self.task_loss == TASK_ZERO_ONE:
                lev = 0 if l == t else 1
            else:
                lo, hi = 0, nl - 1
                d -= LEVEL_TOL * (d if d > 1.0 else 1.0)
                while lo < hi:
                    mid = (lo + hi) // 2
                    if vals[mid] < d:
                        lo = mid + 1
                    else:
                        hi = mid
                lev = lo
            if labels[lev] < 0 or V[l] > best_m[lev]:
                best_m[lev] = V[l]
                labels[lev] = l
        for lev in range(nl):                   # m from the symmetric difference (no cancellation)
            if labels[lev] >= 0:
                best_m[lev] = self._dphi_score(w, i, labels[lev])


cdef class HierarchyMultiLabelStructure(Structure):
    """HierarchyMultiLabelStructure(X, Z, is_leaf, coef, parent=None, lp=None): Z the
    (n_examples, M) 0/1 node indicators of the true labels (leaf sets closed under ancestors),
    is_leaf per node, coef c_n; a tree gives parent (per node, parents numbered first, -1 at the
    root) and gets the O(M) dynamic program, a DAG gives lp(r) -> z in [0, 1]^M maximising r . z
    over the LP relaxation of (6.22) (ssvmlinear.hierarchy.DagLP), called with the GIL held.
    Labels are M ints: node marginals in units of MARGINAL_ONE (0 or MARGINAL_ONE on a tree)."""

    def __init__(self, CSRDataset X, Z, is_leaf, coef, parent=None, lp=None):
        Z = np.ascontiguousarray(Z, dtype=np.int32)
        M = len(coef)
        if Z.ndim != 2 or Z.shape[0] != X.n_rows or Z.shape[1] != M:
            raise ValueError(f"Z must be ({X.n_rows}, {M}) node indicators")
        self.X = X
        self.z = (Z * MARGINAL_ONE).ravel()
        self.is_leaf = np.ascontiguousarray(is_leaf, dtype=np.int32)
        self.coef = np.ascontiguousarray(coef, dtype=np.float64)
        self.lp = lp
        self.is_tree = parent is not None
        if self.is_tree:
            parent = np.ascontiguousarray(parent, dtype=np.int32)
            if parent.shape[0] != M or (M and (parent[0] != -1 or np.any(parent[1:] < 0)
                                              or np.any(parent[1:] >= np.arange(1, M)))):
                raise ValueError("parent must describe a tree numbered parents first (-1 at node 0 only)")
        elif lp is None:
            raise ValueError("a DAG needs the LP oracle (lp)")
        self.parent = parent if self.is_tree else np.zeros(1, dtype=np.int32)
        self.n_nodes = M
        self.n_examples = X.n_rows
        self.n_weights = X.n_cols * M
        self.max_label_len = M
        self.n_lp_failures = 0

    def _args(self):
        return (np.asarray(self.is_leaf), np.asarray(self.coef), np.asarray(self.parent) if self.is_tree else None,
                self.lp)

    def __reduce__(self):
        Z = np.asarray(self.z).reshape(self.n_examples, self.n_nodes) // MARGINAL_ONE
        return (HierarchyMultiLabelStructure, (self.X, Z) + self._args())

    def subset(self, Py_ssize_t lo, Py_ssize_t hi, order=None):
        """The structure of examples lo..hi-1 or order[lo:hi] (Structure.subset)."""
        index = self.shard_index(lo, hi, order)
        Z = np.asarray(self.z).reshape(self.n_examples, self.n_nodes)[index] // MARGINAL_ONE
        return HierarchyMultiLabelStructure(self.X.part(lo, hi, order), Z, *self._args())

    cdef Py_ssize_t label_len(self, Py_ssize_t i) noexcept nogil:
        return self.n_nodes

    cdef const int* true_label(self, Py_ssize_t i) noexcept nogil:
        return &self.z[i * self.n_nodes]

    cdef double loss(self, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t n
        cdef const int *t = self.true_label(i)
        cdef double d = 0.0
        for n in range(self.n_nodes):
            if self.is_leaf[n]:
                d += marginal(y[n] - t[n]) if y[n] >= t[n] else marginal(t[n] - y[n])
        return d

    cdef double score(self, const double *w, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t n
        cdef Row r = self.X.row(i)
        cdef double f = 0.0
        for n in range(self.n_nodes):
            if y[n] != 0 and self.coef[n] != 0.0:
                f += marginal(y[n]) * self.coef[n] * row_dot(r, w, self.n_nodes, n)
        return f

    cdef void margins(self, const double *w, Py_ssize_t i, const int *labels, int n, double *out,
                      double *work, bint after_oracle) noexcept nogil:
        cdef Py_ssize_t k, M = self.n_nodes
        cdef const int *t = self.true_label(i)
        cdef const int *y
        cdef int j
        cdef double m
        if not after_oracle:
            row_gemv(self.X.row(i), w, M, work)
            for k in range(M):
                work[k] *= self.coef[k]
        for j in range(n):
            y = labels + j * M
            m = 0.0
            for k in range(M):
                if y[k] != t[k]:
                    m += marginal(y[k] - t[k]) * work[k]
            out[j] = m

    cdef double oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                       double *m_out, double *delta_out, double *work) noexcept nogil:
        cdef Py_ssize_t k, M = self.n_nodes
        cdef const int *t = self.true_label(i)
        cdef double *S = work
        cdef double *R = work + M
        cdef double v
        row_gemv(self.X.row(i), w, M, S)
        for k in range(M):
            S[k] *= self.coef[k]
            R[k] = S[k]
            if self.is_leaf[k]:
                R[k] += -lam if t[k] else lam
        if self.is_tree:
            self._tree_dp(t, R, work + 2 * M, y_out)
        else:
            with gil:
                try:
                    z = np.asarray(self.lp(np.asarray(<double[:M]> R)), dtype=np.float64)
                    for k in range(M):
                        v = min(max(float(z[k]), 0.0), 1.0)
                        y_out[k] = <int> (v * MARGINAL_ONE + 0.5)
                except Exception:
                    self.n_lp_failures += 1      # no answer: y_i itself (m = 0, loss 0)
                    for k in range(M):
                        y_out[k] = t[k]
        self.margins(w, i, y_out, 1, m_out, work, True)
        delta_out[0] = self.loss(i, y_out)
        return m_out[0] + lam * delta_out[0]

    cdef void _tree_dp(self, const int *t, const double *R, double *work, int *y_out) noexcept nogil:
        # The O(M) program on a tree (6.7.1): g[n], the best value of n's subtree given n in y, is
        # R_n plus the children worth taking (all with g > 0, else the best one: an inner node of
        # y needs a child in y); the root is always in y (labels are non-empty). Children have
        # larger indices: one backward pass, then the choice forward. Ties: a child with g = 0
        # stays out; the lowest best child.
        cdef Py_ssize_t k, p, M = self.n_nodes
        cdef double *g = work
        cdef double *pos = work + M
        cdef double *best = work + 2 * M           # best child index (as a double), -1: none
        for k in range(M):
            pos[k] = 0.0
            best[k] = -1.0
        for k in range(M - 1, -1, -1):
            g[k] = R[k]
            if not self.is_leaf[k]:
                g[k] += pos[k] if pos[k] > 0.0 else g[<Py_ssize_t> best[k]]
            p = self.parent[k]
            if p >= 0:
                if g[k] > 0.0:
                    pos[p] += g[k]
                if best[p] < 0.0 or g[k] >= g[<Py_ssize_t> best[p]]:
                    best[p] = <double> k
        for k in range(M):
            p = self.parent[k]
            if p < 0:
                y_out[k] = MARGINAL_ONE
            elif y_out[p] == 0:
                y_out[k] = 0
            elif pos[p] > 0.0:
                y_out[k] = MARGINAL_ONE if g[k] > 0.0 else 0
            else:
                y_out[k] = MARGINAL_ONE if k == <Py_ssize_t> best[p] else 0

    cdef double gram(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil:
        cdef Py_ssize_t k
        cdef const int *t = self.true_label(i)
        cdef double g = 0.0
        for k in range(self.n_nodes):
            if a[k] != t[k] and b[k] != t[k]:
                g += self.coef[k] * self.coef[k] * marginal(t[k] - a[k]) * marginal(t[k] - b[k])
        return g * self.X.sqnorm(i)

    cdef void gram_row(self, Py_ssize_t i, const int *a, const int *labels, int n, double *out,
                       double *work) noexcept nogil:
        cdef int j
        for j in range(n):
            out[j] = self.gram(i, a, labels + j * self.n_nodes)

    cdef void update(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil:
        cdef Py_ssize_t k
        cdef const int *t = self.true_label(i)
        cdef Row r = self.X.row(i)
        for k in range(self.n_nodes):
            if y[k] != t[k] and self.coef[k] != 0.0:
                row_axpy(r, coef * self.coef[k] * marginal(t[k] - y[k]), w, self.n_nodes, k)

    cdef Py_ssize_t workspace_size(self) noexcept nogil:
        return 5 * self.n_nodes + 1
