from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.factor cimport FactorTree


cdef class MultiLabelStructure(Structure):
    # K independent binary labels. A label is a 0/1 int vector of length K (label_len = K);
    # phi(x, y) = sum_k y_k x (x) e_k, weights n_cols x K feature-major (w[j*K + k], as multiclass),
    # so one row_gemv gives the K unary scores s_k = x . w_k. Hamming loss #{k : y_k != y_ik},
    # divided by K with normalize_loss.
    #
    # Workspaces (doubles): margins, oracle, oracle_f1: K; loss_indexed_oracle, exact_f1: 3K
    # (= workspace_size() = loss_indexed_workspace_size()); kbest(k): kbest_workspace_size(k).
    # Every method that takes `work` leaves the K unary scores of example i in work[0:K].
    cdef readonly Py_ssize_t n_labels
    cdef readonly bint normalize_loss
    cdef const int[::1] y                 # n_examples x K indicators, row-major

    cdef double _loss_weight(self) noexcept nogil

    # example i's true label as K states (its methods use this, not the overridable true_label())
    cdef inline const int* _states(self, Py_ssize_t i) noexcept nogil:
        return &self.y[i * self.n_labels]
    # oracle_f1 and exact_f1 (structure.pxd's Micro-F1 capability): O(K) and O(K log K); ties of
    # exact_f1: the smallest |y|, then labels in sorted-gain order (lowest index first).


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


cdef class RelaxedPairwiseMultiLabelStructure(PairwiseMultiLabelStructure):
    # The same model whose labels are relaxed labels (marginals, as LP relaxations return): a label
    # is K + E ints in units of MARGINAL_ONE (factor.pxd), P(y_k = 1) for every label k, then
    # P(y_a = 1, y_b = 1) for every edge (a, b) (the local polytope's parametrisation of a binary
    # pair). An integral labelling is the vertex with 0/1 marginals; loss (Hamming), score, Gram and
    # updates are linear in the marginals. The oracles are the forest's (integral answers, encoded).
    cdef const int[::1] y_marg            # true labels as marginals (n_examples x (K + E))
    cdef object lp                        # the LP oracle on any graph (None: a forest)
    # lp.method == "maxflow": the LP is solved in the kernel (roof duality by max-flow, nogil) on
    # this fixed arc topology (flow.pyx-style CSR adjacency; see _flow_lp)
    cdef bint use_flow
    cdef int[::1] arc_head, adj_ptr, adj_arc
    cdef readonly long long n_lp_failures

    cdef void _lp_oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out, double *work) noexcept nogil
    cdef void _lp_objective(self, const double *w, Py_ssize_t i, double lam, double *c, double *work) noexcept nogil

    cdef void _encode(self, int *y) noexcept nogil
    cdef void _encode_many(self, int *labels, int n) noexcept nogil
    cdef void _edge_marginals(self, const int *y, Py_ssize_t e, double *mu) noexcept nogil
    cdef double _dphi_edges(self, Py_ssize_t i, const double *w, const int *y) noexcept nogil
