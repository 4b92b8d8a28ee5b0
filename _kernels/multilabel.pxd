from ssvmlinear._kernels.structure cimport Structure


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
    # Micro-F1 surrogate (h = H + m, g = -(|y| + |y_i|), psi = h / (-g)); H is always the
    # unnormalised mismatch count here, whatever normalize_loss says.
    # argmax_y H(y, y_i) + m(y) - lam * (|y| + |y_i|) in O(K) (ties: the true value of each label);
    # writes h and g of the maximiser, returns h + lam * g. work: K doubles.
    cdef double oracle_f1(self, const double *w, Py_ssize_t i, double lam, int *y_out, double *h_out,
                          double *g_out, double *work) noexcept nogil
    # exact argmax_y (H + m) / (|y| + |y_i|) (0 for y = y_i = empty) in O(K log K); ties: the
    # smallest |y|, then labels in sorted-gain order (lowest index first). Writes h and g of the
    # maximiser, returns the value. work: 3K doubles.
    cdef double exact_f1(self, const double *w, Py_ssize_t i, int *y_out, double *h_out, double *g_out,
                         double *work) noexcept nogil
