# The local-polytope LP of binary labels coupled by pairs (maxflow.pyx): x[0:K+E] = argmax c . x,
# P(y_k = 1) per label then P(y_a = y_b = 1) per edge, by one maximum flow on the QPBO graph of
# flow_topology (head, ptr, adj). work: 2 (4K + 4E) doubles + 3 (2K + 2) ints.
cdef void flow_lp(Py_ssize_t K, Py_ssize_t E, const int *edges, const double *c, const int *head,
                  const int *ptr, const int *adj, double *x, double *work) noexcept nogil
