# cython: language_level=3
"""Multiclass structure: one of K classes, phi(x, y) = x (x) e_y, 0/1 loss (Crammer-Singer)."""
import numpy as np

from ssvmlinear._kernels.dataset cimport (CSRDataset, Row, row_dot, row_axpy, row_gemv, row_entries,
                                         row_entry, row_cache_blocks, row_gather)
from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.simplex cimport simplex_threshold

# margins of n of K labels read only their entries when n <= 4 or GATHER_FACTOR * (n + 1) <= K:
# then one sweep over the row's entries beats the K-wide product (benchmarks/multiclass_vs_liblinear.py)
cdef Py_ssize_t GATHER_FACTOR = 4
# update_many merges the changes of up to this many labels into one sweep over the row
DEF MAX_MERGED = 64


cdef inline void margin_gather(Row r, const double *w, Py_ssize_t K, int yi, const int *labels, int n,
                               double *out) noexcept nogil:
    """out[k] = x . (w_{labels[k]} - w_{yi}) in one sweep over the nonzeros."""
    cdef int k
    cdef double fyi = row_gather(r, w, K, yi, labels, n, out)
    for k in range(n):
        out[k] = 0.0 if labels[k] == yi else out[k] - fyi


cdef class MulticlassStructure(Structure):
    """Labels are class indices 0..K-1 (int32); weight k of feature j is w[j*K + k]."""

    def __init__(self, CSRDataset X, y, Py_ssize_t n_classes):
        y = np.ascontiguousarray(y, dtype=np.int32)
        if y.shape[0] != X.n_rows:
            raise ValueError(f"X has {X.n_rows} rows but y has {y.shape[0]} labels")
        if y.shape[0] and (y.min() < 0 or y.max() >= n_classes):
            raise ValueError("class indices must lie in [0, n_classes)")
        self.X = X
        self.y = y
        self.n_classes = n_classes
        self.n_examples = X.n_rows
        self.n_weights = X.n_cols * n_classes
        self.max_label_len = 1
        self.cheap_gram = True

    def __reduce__(self):
        return (MulticlassStructure, (self.X, np.asarray(self.y), self.n_classes))

    def factor_graph(self):
        """The factor decomposition factorwise solvers (GDMM) train on (factor.pxd's FactorGraph):
        an example is one domain variable over the K classes, with no pair factors; the 0/1 loss
        is the loss of its mismatch."""
        from ssvmlinear._kernels.factor import FactorGraph
        n = self.n_examples
        return FactorGraph(self, self.X, np.arange(n + 1, dtype=np.int64), np.asarray(self.y), np.ones(n),
                           self.n_classes, False, -1, self.n_weights)

    def subset(self, Py_ssize_t lo, Py_ssize_t hi, order=None):
        """The structure of examples lo..hi-1 or order[lo:hi] (Structure.subset)."""
        index = self.shard_index(lo, hi, order)
        return MulticlassStructure(self.X.part(lo, hi, order), np.asarray(self.y)[index], self.n_classes)

    cdef Py_ssize_t label_len(self, Py_ssize_t i) noexcept nogil:
        return 1

    cdef const int* true_label(self, Py_ssize_t i) noexcept nogil:
        return &self.y[i]

    cdef double score(self, const double *w, Py_ssize_t i, const int *y) noexcept nogil:
        return row_dot(self.X.row(i), w, self.n_classes, y[0])

    cdef void margins(self, const double *w, Py_ssize_t i, const int *labels, int n, double *out,
                      double *work, bint after_oracle) noexcept nogil:
        # after_oracle: work holds the K scores the oracle computed
        cdef int k, yi = self.y[i]
        cdef Row r = self.X.row(i)
        if after_oracle:
            for k in range(n):
                out[k] = work[labels[k]] - work[yi]
            return
        if n <= 4 or GATHER_FACTOR * (n + 1) <= self.n_classes:
            # few labels (their sums in registers), or few of many: read their entries of each
            # feature's row (one sweep over the nonzeros) rather than all K (when w is large, the
            # rows' cache lines are the cost)
            margin_gather(r, w, self.n_classes, yi, labels, n, out)
            return
        row_gemv(r, w, self.n_classes, work)
        for k in range(n):
            out[k] = work[labels[k]] - work[yi]

    cdef bint same_label(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil:
        return a[0] == b[0]    # (the working sets' lookups: no memcmp call for one int)

    cdef double loss(self, Py_ssize_t i, const int *y) noexcept nogil:
        return 0.0 if y[0] == self.y[i] else 1.0

    cdef void cache_example(self, const double *w, Py_ssize_t i, bint weights) noexcept nogil:
        # the K-blocks of the row's features: the oracle reads them all and the update writes them
        if weights:
            row_cache_blocks(self.X.row(i), w, self.n_classes)
        else:
            self.X.cache_rows(i, i + 1)

    cdef double oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                       double *m_out, double *delta_out, double *work) noexcept nogil:
        # work holds the K scores; ties go to the lowest class index.
        cdef Py_ssize_t k, K = self.n_classes
        cdef int yi = self.y[i]
        cdef int best = yi
        cdef double v, best_v
        row_gemv(self.X.row(i), w, K, work)
        best_v = work[yi]
        for k in range(K):
            v = work[k] if k == yi else work[k] + lam
            if v > best_v or (v == best_v and k < best):
                best_v = v
                best = <int> k
        y_out[0] = best
        m_out[0] = work[best] - work[yi]
        delta_out[0] = 0.0 if best == yi else 1.0
        return best_v - work[yi]

    cdef int runners_up(self, Py_ssize_t i, double lam, const int *y_best, int k, int *labels_out,
                        double *values_out, const double *work) noexcept nogil:
        # from the oracle's K scores, in the oracle's order (value down, ties: lowest class
        # first): one scan keeping the best k violators in order (a later class displaces only
        # strictly smaller values)
        cdef Py_ssize_t c, K = self.n_classes
        cdef int yi = self.y[i], got = 0, p
        cdef double v, floor = work[yi]
        if k <= 0:
            return 0
        for c in range(K):
            if c == y_best[0] or c == yi:
                continue
            v = work[c] + lam
            if v <= floor or (got == k and v <= values_out[k - 1]):
                continue
            p = got if got < k else k - 1
            while p > 0 and values_out[p - 1] < v:
                values_out[p] = values_out[p - 1]
                labels_out[p] = labels_out[p - 1]
                p -= 1
            values_out[p] = v
            labels_out[p] = <int> c
            if got < k:
                got += 1
        for p in range(got):
            values_out[p] -= work[yi]
        return got

    cdef int n_loss_levels(self, Py_ssize_t i) noexcept nogil:
        return 2

    cdef Py_ssize_t loss_indexed_workspace_size(self) noexcept nogil:
        return self.n_classes

    cdef void loss_indexed_oracle(self, const double *w, Py_ssize_t i, double *best_m, int *labels,
                                  double *work) noexcept nogil:
        # level 0: y_i; level 1: the best other class (ties: lowest index)
        cdef Py_ssize_t k, K = self.n_classes
        cdef int yi = self.y[i], best = -1
        row_gemv(self.X.row(i), w, K, work)
        for k in range(K):
            if k != yi and (best < 0 or work[k] > work[best]):
                best = <int> k
        best_m[0] = 0.0
        labels[0] = yi
        best_m[1] = work[best] - work[yi] if best >= 0 else -1e300
        labels[1] = best

    cdef double gram(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil:
        cdef int yi = self.y[i]
        if a[0] == yi or b[0] == yi:
            return 0.0
        return self.X.sqnorm(i) * (2.0 if a[0] == b[0] else 1.0)

    cdef void gram_row(self, Py_ssize_t i, const int *a, const int *labels, int n, double *out,
                       double *work) noexcept nogil:
        # gram() for n labels at once (SMO asks for two rows per step)
        cdef int j, yi = self.y[i]
        cdef double q = self.X.sqnorm(i)
        for j in range(n):
            if a[0] == yi or labels[j] == yi:
                out[j] = 0.0
            else:
                out[j] = q * (2.0 if labels[j] == a[0] else 1.0)

    cdef int solve_subproblem(self, Py_ssize_t i, const int *labels, int n, double sigma, double *H,
                              double *alpha, double *dalpha, double *work) noexcept nogil:
        # Crammer-Singer's sub-problem (LIBLINEAR's solve_sub_problem): with beta = sigma |x_i|^2,
        # S = the alphas of the classes c != y_i and D_c = H_c + beta (alpha_c + S), D_{y_i} =
        # beta C_i, the optimal alphas are max(0, D - t) / beta, the projection of D / beta onto
        # {alpha >= 0, sum alpha = C_i}; then H_c = D_c - beta (alpha_c + S').
        cdef int yi = self.y[i], k, pos = -1
        cdef double beta = sigma * self.X.sqnorm(i), S = 0.0, total = 0.0, t, a, S_new = 0.0
        if not beta > 1e-300:
            return 0
        for k in range(n):
            total += alpha[k]
            if labels[k] == yi:
                pos = k
            else:
                S += alpha[k]
        for k in range(n):
            dalpha[k] = beta * total if k == pos else H[k] + beta * (alpha[k] + S)    # D
            work[k] = dalpha[k]
        t = simplex_threshold(work, n, beta * total)
        for k in range(n):
            a = dalpha[k] - t
            a = a / beta if a > 0.0 else 0.0
            if k != pos:
                S_new += a
                H[k] = dalpha[k]          # (D, until S' is known)
            dalpha[k] = a - alpha[k]
            alpha[k] = a
        for k in range(n):
            if k != pos:
                H[k] -= beta * (alpha[k] + S_new)
        return 1

    cdef void update(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil:
        cdef int yi = self.y[i]
        if y[0] == yi:
            return
        cdef Row r = self.X.row(i)
        row_axpy(r, coef, w, self.n_classes, yi)
        row_axpy(r, -coef, w, self.n_classes, y[0])

    cdef void update_many(self, double *w, Py_ssize_t i, const double *coefs, const int *labels, int n,
                          double *work) noexcept nogil:
        # one sweep over the nonzeros: each feature's row gets the changes of the labels that moved
        # (listed first: most members of a working set do not move in a visit), the true class's
        # column their sum
        cdef int k, moved = 0, yi = self.y[i]
        cdef int moved_labels[MAX_MERGED]
        cdef double moved_coefs[MAX_MERGED]
        cdef Py_ssize_t p, j, K = self.n_classes
        cdef double total = 0.0, xv
        cdef double *wj
        cdef Row r = self.X.row(i)
        for k in range(n):
            if coefs[k] != 0.0 and labels[k] != yi:
                if moved == MAX_MERGED:     # (past MAX_MERGED moved labels: one sweep each)
                    self.update(w, i, coefs[k], labels + k)
                    continue
                total += coefs[k]
                moved_labels[moved] = labels[k]
                moved_coefs[moved] = coefs[k]
                moved += 1
        if moved == 0:
            return
        for p in range(row_entries(r)):
            xv = row_entry(r, p, K, &j)
            wj = w + j
            wj[yi] += total * xv
            for k in range(moved):
                wj[moved_labels[k]] -= moved_coefs[k] * xv

    cdef Py_ssize_t workspace_size(self) noexcept nogil:
        return self.n_classes

    cdef int kbest(self, const double *w, Py_ssize_t i, double lam, int k, int *labels_out,
                   double *values_out, double *work) noexcept nogil:
        # Selection of the k largest augmented scores (ties: lowest class first); work: 2K doubles.
        cdef Py_ssize_t c, K = self.n_classes
        cdef int yi = self.y[i], r, best
        cdef double *used = work + K
        row_gemv(self.X.row(i), w, K, work)
        cdef double fyi = work[yi]
        for c in range(K):
            work[c] += 0.0 if c == yi else lam
            used[c] = 0.0
        if k > K:
            k = <int> K
        for r in range(k):
            best = -1
            for c in range(K):
                if used[c] == 0.0 and (best < 0 or work[c] > work[best]):
                    best = <int> c
            used[best] = 1.0
            labels_out[r] = best
            values_out[r] = work[best] - fyi
        return k

    cdef Py_ssize_t kbest_workspace_size(self, int k) noexcept nogil:
        return 2 * self.n_classes
