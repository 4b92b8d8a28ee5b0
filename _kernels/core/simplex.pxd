# The Euclidean projection onto a scaled simplex {x >= 0, sum x = total}: max(0, z - tau), tau
# from the sorted z. Crammer-Singer's sub-problem (multiclass SDM visits) and GDMM's unary block
# steps are such projections.
from libc.stdlib cimport qsort


cdef inline int _descending(const void *a, const void *b) noexcept nogil:
    cdef double x = (<const double *> a)[0], y = (<const double *> b)[0]
    return (x < y) - (x > y)


cdef inline void sort_descending(double *z, int n) noexcept nogil:
    """z[0:n] sorted largest first (insertion sort for the few values of a visit, else qsort)."""
    cdef int i, j
    cdef double v
    if n > 16:
        qsort(z, n, sizeof(double), _descending)
        return
    for i in range(1, n):
        v = z[i]
        j = i
        while j > 0 and z[j - 1] < v:
            z[j] = z[j - 1]
            j -= 1
        z[j] = v


cdef inline double simplex_threshold(double *z, int n, double total) noexcept nogil:
    """tau with sum_j max(0, z_j - tau) = total (> 0); sorts z[0:n] (n >= 1) in place."""
    cdef int m
    cdef double run = 0.0, tau = 0.0
    sort_descending(z, n)
    for m in range(n):
        run += z[m]
        tau = (run - total) / (m + 1)
        if m == n - 1 or z[m + 1] <= tau:
            break
    return tau
