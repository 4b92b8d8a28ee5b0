# Per-example working sets of labels for the dual solvers (SDM, LSE-SDCD).
#
# For each example i: size[i] labels, each a flat int array of label_len(i) entries, with their dual
# variable alpha, task loss, a value the solver may keep per member (aux; 0 on entry) and the
# cached Gram matrix G[k, j] = dphi_i(y_k) . dphi_i(y_j)
# (row stride cap[i]), computed once when a label enters the set -- unless the structure's gram()
# is cheap (cheap_gram): then gram(i) is NULL and solvers compute the rows they need. All of an
# example's arrays live in one allocation (labels, then alpha, loss, aux and Gram), so a visit
# touches one memory block.
from ssvmlinear._kernels.structure cimport Structure


cdef class WorkingSets:
    cdef Structure st
    cdef Py_ssize_t n
    cdef int *size
    cdef int *cap
    cdef Py_ssize_t *label_ints   # ints reserved for labels in the block (multiple of 2)
    cdef double **block           # per example: labels | alpha | loss | gram
    cdef double[::1] work_arr     # scratch for gram_row (working sets are used by one thread)
    cdef double *work
    cdef readonly bint cache_gram

    cdef int find(self, Py_ssize_t i, const int *y) noexcept nogil
    cdef int _grow(self, Py_ssize_t i) noexcept nogil
    cdef int append(self, Py_ssize_t i, const int *y, double loss) noexcept nogil
    cdef void keep(self, Py_ssize_t i, const char *flags) noexcept nogil

    cdef inline int* labels(self, Py_ssize_t i) noexcept nogil:
        return <int *> self.block[i]

    cdef inline const int* label(self, Py_ssize_t i, int k) noexcept nogil:
        return (<int *> self.block[i]) + k * self.st.label_len(i)

    cdef inline double* alpha(self, Py_ssize_t i) noexcept nogil:
        return self.block[i] + self.label_ints[i] // 2

    cdef inline double* loss(self, Py_ssize_t i) noexcept nogil:
        return self.block[i] + self.label_ints[i] // 2 + self.cap[i]

    cdef inline double* aux(self, Py_ssize_t i) noexcept nogil:
        return self.block[i] + self.label_ints[i] // 2 + 2 * self.cap[i]

    cdef inline double* gram(self, Py_ssize_t i) noexcept nogil:
        if not self.cache_gram:
            return NULL
        return self.block[i] + self.label_ints[i] // 2 + 3 * self.cap[i]
