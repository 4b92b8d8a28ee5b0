# Per-example working sets of labels for the dual solvers (SDM, LSE-SDCD).
#
# For each example i: size[i] labels, each a flat int array of label_len(i) entries, with their dual
# variable alpha, task loss and the cached Gram matrix G[k, j] = dphi_i(y_k) . dphi_i(y_j)
# (stride cap[i]), computed once when a label enters the set.
from ssvmlinear._kernels.structure cimport Structure


cdef class WorkingSets:
    cdef Structure st
    cdef Py_ssize_t n
    cdef int *size
    cdef int *cap
    cdef int **lab
    cdef double **alpha
    cdef double **loss
    cdef double **gram

    cdef int find(self, Py_ssize_t i, const int *y) noexcept nogil
    cdef int _grow(self, Py_ssize_t i) noexcept nogil
    cdef int append(self, Py_ssize_t i, const int *y, double loss) noexcept nogil
    cdef void keep(self, Py_ssize_t i, const char *flags) noexcept nogil
    cdef inline const int* label(self, Py_ssize_t i, int k) noexcept nogil:
        return self.lab[i] + k * self.st.label_len(i)
