from ssvmlinear._kernels.structure cimport Structure


cdef class MulticlassStructure(Structure):
    # phi(x, y) = x (x) e_y, weights laid out n_cols x K (feature-major), 0/1 loss.
    cdef readonly Py_ssize_t n_classes
    cdef const int[::1] y
