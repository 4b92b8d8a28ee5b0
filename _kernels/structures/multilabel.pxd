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
