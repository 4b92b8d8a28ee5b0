# cython: language_level=3
"""CSR dataset wrapper shared by every kernel (see dataset.pxd)."""
import mmap

from libc.math cimport fabs

import numpy as np
import scipy.sparse as sp

INT32_MAX = 2**31 - 1


cdef extern from "<sys/mman.h>" nogil:
    int posix_madvise(void *addr, size_t length, int advice)
    int POSIX_MADV_WILLNEED

cdef extern from "<unistd.h>" nogil:
    long sysconf(int name)
    int _SC_PAGESIZE


cdef inline void _will_need(const char *p, size_t length) noexcept nogil:
    cdef size_t page = <size_t> sysconf(_SC_PAGESIZE)
    cdef size_t start = (<size_t> p) & ~(page - 1)
    posix_madvise(<void *> start, <size_t> p + length - start, POSIX_MADV_WILLNEED)   # (advice only)


def _memory_mapped(a):
    """Whether array a (or a memoryview of one) lives in a memory map (np.load(mmap_mode=...))."""
    a = getattr(a, "base", a)
    while a is not None:
        if isinstance(a, (np.memmap, mmap.mmap)):
            return True
        a = getattr(a, "base", None)
    return False


cdef class CSRDataset:
    """Read-only view of a CSR matrix with an optional virtual bias column.

    X must be a scipy CSR matrix with float64 data, sorted indices and column count < 2**31.
    ``indptr`` is held as int32 or int64, as given (nnz > 2**31 is fine); indices as int32. No copy
    is made when the dtypes already match (``ssvmlinear.utils.check_csr`` produces such matrices).
    """

    def __init__(self, X, double bias=-1.0):
        if not sp.issparse(X) or X.format != "csr":
            raise TypeError("CSRDataset needs a scipy CSR matrix")
        if X.shape[1] >= INT32_MAX:
            raise ValueError("at most 2**31 - 2 features are supported")
        self.data = np.asarray(X.data, dtype=np.float64)
        self.indices = np.asarray(X.indices, dtype=np.int32)
        self.wide_indptr = X.indptr.dtype != np.int32
        self.indptr = np.asarray(X.indptr, dtype=np.int64 if self.wide_indptr else np.int32)
        if self.wide_indptr:
            self.indptr64 = self.indptr
        else:
            self.indptr32 = self.indptr
        self.memory_mapped = _memory_mapped(self.data) or _memory_mapped(self.indices)
        self.n_rows = X.shape[0]
        self.n_features = X.shape[1]
        self.bias = bias if bias > 0 else 0.0
        self.n_cols = self.n_features + (1 if bias > 0 else 0)
        # squared row norms in one pass over the arrays (X.multiply(X) would copy all of X)
        self._sqnorms = np.empty(self.n_rows)
        cdef Py_ssize_t i, k
        cdef double s, b2 = self.bias * self.bias
        cdef Row r
        with nogil:
            for i in range(self.n_rows):
                r = self.row(i)
                s = 0.0
                for k in range(r.nnz):
                    s = s + r.val[k] * r.val[k]
                self._sqnorms[i] = s + b2

    @property
    def sqnorms(self):
        """Squared norm of every row, the bias included (a read-only view)."""
        a = np.asarray(self._sqnorms)
        a.flags.writeable = False
        return a

    def largest_entry(self, Py_ssize_t i):
        """(column, value) of row i's entry of largest magnitude, the bias column excluded
        ((-1, 0.0) for an empty row): what an input check names."""
        if not 0 <= i < self.n_rows:
            raise IndexError(f"row {i} outside 0..{self.n_rows - 1}")
        cdef Row r = self.row(i)
        cdef Py_ssize_t k, best = -1
        for k in range(r.nnz):
            if best < 0 or fabs(r.val[k]) > fabs(r.val[best]):
                best = k
        return (-1, 0.0) if best < 0 else (int(r.ind[best]), float(r.val[best]))

    def __reduce__(self):
        import scipy.sparse as sp
        X = sp.csr_matrix((np.asarray(self.data), np.asarray(self.indices), self.indptr),
                          shape=(self.n_rows, self.n_features))
        return (CSRDataset, (X, self.bias if self.bias > 0 else -1.0))

    def rows(self, Py_ssize_t lo, Py_ssize_t hi):
        """The dataset of rows lo..hi-1 (same columns and bias; data and indices are views)."""
        if not 0 <= lo <= hi <= self.n_rows:
            raise ValueError(f"rows {lo}..{hi} outside 0..{self.n_rows}")
        a, b = int(self.indptr[lo]), int(self.indptr[hi])
        indptr = self.indptr[lo:hi + 1] - self.indptr[lo]
        X = sp.csr_matrix((np.asarray(self.data[a:b]), np.asarray(self.indices[a:b]), indptr),
                          shape=(hi - lo, self.n_features))
        return CSRDataset(X, self.bias if self.bias > 0 else -1.0)

    def take(self, rows):
        """The dataset of the given rows, in that order (same columns and bias; a copy)."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= self.n_rows):
            raise ValueError(f"rows outside 0..{self.n_rows - 1}")
        X = sp.csr_matrix((np.asarray(self.data), np.asarray(self.indices), self.indptr),
                          shape=(self.n_rows, self.n_features))[rows]
        X.sort_indices()
        return CSRDataset(X, self.bias if self.bias > 0 else -1.0)

    def part(self, lo, hi, order=None):
        """Rows lo..hi-1 (views), or, given a permutation `order` of the rows, rows order[lo:hi]
        (a copy): a shard's rows."""
        return self.rows(lo, hi) if order is None else self.take(np.asarray(order)[lo:hi])

    cdef Row row(self, Py_ssize_t i) noexcept nogil:
        cdef Row r
        cdef Py_ssize_t start
        if self.wide_indptr:
            start = <Py_ssize_t> self.indptr64[i]
            r.nnz = <Py_ssize_t> self.indptr64[i + 1] - start
        else:
            start = self.indptr32[i]
            r.nnz = self.indptr32[i + 1] - start
        if r.nnz > 0:
            r.ind = &self.indices[start]
            r.val = &self.data[start]
        else:
            r.ind = NULL
            r.val = NULL
        r.bias_col = self.n_features
        r.bias = self.bias
        return r

    cdef void prefetch_rows(self, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
        """Memory-mapped data: ask the kernel to read rows [lo, hi) ahead (posix_madvise
        WILLNEED on their values and indices), so that visiting them waits for no disk read."""
        cdef Py_ssize_t s, e
        if not self.memory_mapped or hi <= lo:
            return
        s, e = self.row_start(lo), self.row_start(hi)
        if e > s:
            _will_need(<const char *> &self.data[s], (e - s) * sizeof(double))
            _will_need(<const char *> &self.indices[s], (e - s) * sizeof(int))

    cdef void cache_rows(self, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
        """Start loading rows [lo, hi) (values and indices) into the CPU cache: a visit in random
        order a few examples ahead finds them there instead of waiting on memory."""
        cdef Py_ssize_t s, e
        if hi <= lo:
            return
        s, e = self.row_start(lo), self.row_start(hi)
        if e > s:
            ssvm_prefetch(&self.data[s], (e - s) * sizeof(double), 0)
            ssvm_prefetch(&self.indices[s], (e - s) * sizeof(int), 0)

