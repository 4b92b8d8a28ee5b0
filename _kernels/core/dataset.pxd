# CSR row access shared by every kernel (lightning-style dataset abstraction).
#
# Rows are examples (or tokens of a sequence); features are 0-based columns. An optional virtual
# bias column (index n_features, value `bias`) is handled here so that X is never copied to append
# it. Weights are laid out feature-major in blocks of `stride` (e.g. n_cols x K for K classes), so a
# sparse row touches contiguous K-blocks.

cdef struct Row:
    const int *ind          # column indices of the nonzeros
    const double *val       # their values
    Py_ssize_t nnz
    Py_ssize_t bias_col     # index of the bias column (== n_features)
    double bias             # value of the bias feature, 0.0 when there is none


cdef class CSRDataset:
    cdef const double[::1] data
    cdef const int[::1] indices
    # row starts as scipy holds them: int32 (no copy of an int32 indptr) or int64 (nnz >= 2**31)
    cdef const int[::1] indptr32
    cdef const long long[::1] indptr64
    cdef bint wide_indptr
    cdef object indptr                   # the array itself (Python-level slicing and pickling)
    cdef readonly Py_ssize_t n_rows
    cdef readonly Py_ssize_t n_features
    cdef readonly Py_ssize_t n_cols      # n_features + 1 if there is a bias column
    cdef readonly double bias            # value of the bias column (<= 0: no bias column)
    cdef double[::1] _sqnorms            # squared norm of each row, bias included
    cdef readonly bint memory_mapped     # data or indices read from a file by memory map

    cdef Row row(self, Py_ssize_t i) noexcept nogil
    cdef void prefetch_rows(self, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil
    cdef void cache_rows(self, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil

    cdef inline Py_ssize_t row_start(self, Py_ssize_t i) noexcept nogil:
        """Where row i's nonzeros start in data and indices (i = n_rows: their count)."""
        return <Py_ssize_t> self.indptr64[i] if self.wide_indptr else self.indptr32[i]

    cdef inline double sqnorm(self, Py_ssize_t i) noexcept nogil:
        # (inline: the dual solvers' Gram entries ask for it in every SMO step)
        return self._sqnorms[i]


cdef inline double row_dot(Row r, const double *w, Py_ssize_t stride, Py_ssize_t offset) noexcept nogil:
    """sum_j x_j * w[j*stride + offset]."""
    # two partial sums: the loop is bound by the latency of the additions, not by the loads
    cdef double s0 = 0.0, s1 = 0.0
    cdef Py_ssize_t k
    for k in range(0, r.nnz - 1, 2):
        s0 += r.val[k] * w[<Py_ssize_t> r.ind[k] * stride + offset]
        s1 += r.val[k + 1] * w[<Py_ssize_t> r.ind[k + 1] * stride + offset]
    if r.nnz % 2:
        s0 += r.val[r.nnz - 1] * w[<Py_ssize_t> r.ind[r.nnz - 1] * stride + offset]
    if r.bias != 0.0:
        s0 += r.bias * w[r.bias_col * stride + offset]
    return s0 + s1


cdef inline Py_ssize_t row_entries(Row r) noexcept nogil:
    """Entries of the row, the bias (when there is one) counted last: see row_entry."""
    return r.nnz + (1 if r.bias != 0.0 else 0)


cdef inline double row_entry(Row r, Py_ssize_t p, Py_ssize_t stride, Py_ssize_t *block) noexcept nogil:
    """Entry p < row_entries(r): its value, and in block the start of its weights (j * stride)."""
    if p < r.nnz:
        block[0] = <Py_ssize_t> r.ind[p] * stride
        return r.val[p]
    block[0] = r.bias_col * stride
    return r.bias


cdef inline void row_axpy(Row r, double a, double *w, Py_ssize_t stride, Py_ssize_t offset) noexcept nogil:
    """w[j*stride + offset] += a * x_j on the nonzeros of x."""
    cdef Py_ssize_t k
    for k in range(r.nnz):
        w[<Py_ssize_t> r.ind[k] * stride + offset] += a * r.val[k]
    if r.bias != 0.0:
        w[r.bias_col * stride + offset] += a * r.bias


cdef extern from "inner_loops.h" nogil:
    void ssvm_prefetch(const void *p, Py_ssize_t nbytes, int for_write)
    void ssvm_row_gather(const int *ind, const double *val, Py_ssize_t nnz, const double *w, Py_ssize_t stride,
                         int own, const int *labels, int n, double *out, double *own_out)
    void ssvm_row_gemv(const int *ind, const double *val, Py_ssize_t nnz, const double *w, Py_ssize_t stride,
                       double *out)
    void ssvm_row_scatter(const int *ind, const double *val, Py_ssize_t nnz, double *w, Py_ssize_t stride,
                          const int *labels, const double *coefs, int n)


cdef inline double row_gather(Row r, const double *w, Py_ssize_t stride, int own, const int *labels, int n,
                              double *out) noexcept nogil:
    """out[k] = x . w[:, labels[k]] for k < n, and the return value x . w[:, own], in one sweep
    over the nonzeros (the bias column included)."""
    cdef int k
    cdef double f
    cdef const double *wb
    ssvm_row_gather(r.ind, r.val, r.nnz, w, stride, own, labels, n, out, &f)
    if r.bias != 0.0:
        wb = w + r.bias_col * stride
        f += r.bias * wb[own]
        for k in range(n):
            out[k] += r.bias * wb[labels[k]]
    return f


cdef inline void row_scatter(Row r, double *w, Py_ssize_t stride, const int *labels, const double *coefs,
                             int n) noexcept nogil:
    """w[j*stride + labels[k]] += coefs[k] * x_j for k < n (distinct labels), one sweep over the
    nonzeros."""
    cdef int k
    ssvm_row_scatter(r.ind, r.val, r.nnz, w, stride, labels, coefs, n)
    if r.bias != 0.0:
        for k in range(n):
            w[r.bias_col * stride + labels[k]] += coefs[k] * r.bias


cdef inline void row_gemv(Row r, const double *w, Py_ssize_t stride, double *out) noexcept nogil:
    """out[c] = sum_j x_j * w[j*stride + c] for c < stride (all blocks of a row at once)."""
    cdef Py_ssize_t c
    cdef const double *wj
    ssvm_row_gemv(r.ind, r.val, r.nnz, w, stride, out)
    if r.bias != 0.0:
        wj = w + r.bias_col * stride
        for c in range(stride):
            out[c] += r.bias * wj[c]


cdef inline void row_gemv_range(Row r, const double *w, Py_ssize_t stride, Py_ssize_t lo, Py_ssize_t hi,
                                double *out) noexcept nogil:
    """out[c - lo] = sum_j x_j * w[j*stride + c] for lo <= c < hi (one block of the columns, e.g.
    the sampled block of labels of a factorwise oracle)."""
    cdef Py_ssize_t k, c
    cdef double xv
    cdef const double *wj
    for c in range(hi - lo):
        out[c] = 0.0
    for k in range(r.nnz):
        xv = r.val[k]
        wj = w + <Py_ssize_t> r.ind[k] * stride + lo
        for c in range(hi - lo):
            out[c] += xv * wj[c]
    if r.bias != 0.0:
        wj = w + r.bias_col * stride + lo
        for c in range(hi - lo):
            out[c] += r.bias * wj[c]


cdef inline double row_row_dot(Row a, Row b) noexcept nogil:
    """x_a . x_b for two rows with sorted indices (merge)."""
    cdef Py_ssize_t p = 0, q = 0
    cdef double s = a.bias * b.bias
    while p < a.nnz and q < b.nnz:
        if a.ind[p] == b.ind[q]:
            s += a.val[p] * b.val[q]
            p += 1
            q += 1
        elif a.ind[p] < b.ind[q]:
            p += 1
        else:
            q += 1
    return s


cdef inline void row_cache_blocks(Row r, const double *w, Py_ssize_t stride) noexcept nogil:
    """Start loading the weight blocks of the row's nonzeros into the cache (for writing)."""
    cdef Py_ssize_t k
    for k in range(r.nnz):
        ssvm_prefetch(w + <Py_ssize_t> r.ind[k] * stride, stride * sizeof(double), 1)
