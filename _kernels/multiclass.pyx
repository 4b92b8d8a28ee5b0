# cython: language_level=3
"""Multiclass structure: one of K classes, phi(x, y) = x (x) e_y, 0/1 loss (Crammer-Singer)."""
import numpy as np

from ssvmlinear._kernels.dataset cimport CSRDataset, Row, row_dot, row_axpy, row_gemv
from ssvmlinear._kernels.structure cimport Structure


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

    def subset(self, Py_ssize_t lo, Py_ssize_t hi):
        """The structure of examples lo..hi-1 (same weights layout)."""
        return MulticlassStructure(self.X.rows(lo, hi), np.asarray(self.y)[lo:hi], self.n_classes)

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
        cdef double fyi
        cdef Row r = self.X.row(i)
        if after_oracle:
            for k in range(n):
                out[k] = work[labels[k]] - work[yi]
            return
        if n <= 2:
            fyi = row_dot(r, w, self.n_classes, yi)
            for k in range(n):
                out[k] = 0.0 if labels[k] == yi else row_dot(r, w, self.n_classes, labels[k]) - fyi
            return
        row_gemv(r, w, self.n_classes, work)
        for k in range(n):
            out[k] = work[labels[k]] - work[yi]

    cdef double loss(self, Py_ssize_t i, const int *y) noexcept nogil:
        return 0.0 if y[0] == self.y[i] else 1.0

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

    cdef void update(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil:
        cdef int yi = self.y[i]
        if y[0] == yi:
            return
        cdef Row r = self.X.row(i)
        row_axpy(r, coef, w, self.n_classes, yi)
        row_axpy(r, -coef, w, self.n_classes, y[0])

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
