from ssvmlinear._kernels.factor cimport FactorTree
from ssvmlinear._kernels.multilabel cimport MultiLabelStructure


cdef class PairwiseMultiLabelStructure(MultiLabelStructure):
    # Labels coupled along a forest of label pairs (edges): phi(x, y) adds, per edge e = (a, b), the
    # indicator of (y_a, y_b) in a 2 x 2 table; weights: the unary block, then the tables at
    # pair_off (entry [e, y_a, y_b] at pair_off + 4e + 2 y_a + y_b). The oracles are max-product on
    # the forest (factor.pyx), the variables being the labels with their two states.
    cdef readonly Py_ssize_t n_edges, pair_off
    cdef const int[::1] edges              # E x 2 label indices
    cdef int[::1] order, parent             # the forest, rooted, children before parents
    cdef Py_ssize_t[::1] tab_off, cs, ps    # variable v's table with its parent: edge 4e, strides

    cdef void _tree(self, const double *w, FactorTree *t) noexcept nogil
    cdef double _pair_margin(self, const double *w, Py_ssize_t i, const int *y) noexcept nogil
    cdef void _beliefs(self, const double *w, Py_ssize_t i, double lam, double *work) noexcept nogil
    cdef double _margin(self, const double *w, Py_ssize_t i, const int *y, const double *s) noexcept nogil
    cdef void _f1_beliefs(self, Py_ssize_t i, double lam, double *work) noexcept nogil
    cdef double _f1_h(self, const double *w, Py_ssize_t i, const int *y, const double *s, double *size) noexcept nogil
