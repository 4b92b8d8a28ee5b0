cdef int simplex_qp(const double *H, Py_ssize_t ld, const double *b, double *beta, double *grad,
                    Py_ssize_t m, double tol, int max_iter) noexcept nogil
