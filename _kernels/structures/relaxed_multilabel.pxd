from ssvmlinear._kernels.pairwise_multilabel cimport PairwiseMultiLabelStructure


cdef class RelaxedPairwiseMultiLabelStructure(PairwiseMultiLabelStructure):
    # The same model whose labels are relaxed labels (marginals, as LP relaxations return): a label
    # is K + E ints in units of MARGINAL_ONE (factor.pxd), P(y_k = 1) for every label k, then
    # P(y_a = 1, y_b = 1) for every edge (a, b) (the local polytope's parametrisation of a binary
    # pair). An integral labelling is the vertex with 0/1 marginals; loss (Hamming), score, Gram and
    # updates are linear in the marginals. The oracles are the forest's (integral answers, encoded).
    cdef const int[::1] y_marg            # true labels as marginals (n_examples x (K + E))
    cdef object lp                        # the LP oracle on any graph (None: a forest)
    # lp.method == "maxflow": the LP is solved in the kernel (roof duality by max-flow, nogil) on
    # this fixed arc topology (maxflow.pyx: flow_topology, flow_lp)
    cdef bint use_flow
    cdef int[::1] arc_head, adj_ptr, adj_arc
    cdef readonly long long n_lp_failures

    cdef void _lp_oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out, double *work) noexcept nogil
    cdef void _lp_objective(self, const double *w, Py_ssize_t i, double lam, double *c, double *work) noexcept nogil
    cdef void _flow_support(self, double uH, double uG, double h0, double g0, double scale, double *x,
                            double *z, double *work) noexcept nogil
    cdef bint _flow_chord(self, double nH, double nG, double b, double h0, double g0, double scale,
                          double *x_lo, double *z_lo, double *x_hi, double *z_hi, double *work) noexcept nogil
    cdef int _flow_constrained(self, Py_ssize_t i, double h0, double g0, double lam, double alpha, double beta,
                               double scale, int *y_out, double *work) noexcept nogil

    cdef void _encode(self, int *y) noexcept nogil
    cdef void _encode_many(self, int *labels, int n) noexcept nogil
    cdef void _edge_marginals(self, const int *y, Py_ssize_t e, double *mu) noexcept nogil
    cdef double _dphi_edges(self, Py_ssize_t i, const double *w, const int *y) noexcept nogil
