from ssvmlinear._kernels.structure cimport Structure


cdef class HierarchyStructure(Structure):
    # Single-label hierarchical classification (choi-thesis ch. 6): a label is a leaf (its number
    # 0..L-1, label_len 1) whose class attribute is its ancestor set A(l) (the leaf included);
    # phi(x, l) = sum_{n in A(l)} c_n x (x) e_n with c_n = 1 (HSVM, (6.2)) or sqrt(alpha_n)
    # (NHSVM, (6.10)); weights one row per node, feature-major (w[j*M + n], as multiclass with M
    # classes). Task losses: node Hamming |A(l) sym-diff A(y_i)| (6.2); the normalised structural
    # error sqrt(sum of c_n^2 over the symmetric difference) (6.9); normalised margin (6.13):
    # dphi divided by that norm and loss 1; the 0/1 loss (Shared SVM's fixed Delta(l, l_i)). Nodes are numbered parents first (a topological order).
    cdef readonly Py_ssize_t n_nodes, n_leaves
    cdef readonly bint is_tree
    cdef readonly int task_loss            # TASK_HAMMING, TASK_NORMALIZED, TASK_NORMALIZED_MARGIN
    cdef const int[::1] y                  # leaf number per example
    cdef const int[::1] parent             # per node (trees: the parent; -1 at the root)
    cdef const int[::1] leaf_node          # node index of each leaf
    cdef const long long[::1] anc_ptr      # A(l) of leaf l: anc_idx[anc_ptr[l]:anc_ptr[l+1]], sorted
    cdef const int[::1] anc_idx
    cdef const double[::1] coef            # c_n
    cdef const double[::1] loss_coef       # the normalised losses' node coefficients (default c_n)
    cdef double[::1] c2                    # c_n^2 (the Gram matrix's node weights)
    cdef double[::1] lw                    # loss weight of each node: 1 (Hamming) or c_n^2
    cdef double[::1] depth_w               # trees: sum of lw over A(n)
    # loss levels of each true leaf t (sorted distinct losses over all leaves, 0 first):
    # lvl_vals[lvl_ptr[t]:lvl_ptr[t+1]]; empty when the table would be too large
    cdef long long[::1] lvl_ptr
    cdef double[::1] lvl_vals
    cdef bint has_levels

    cdef double _sym_diff(self, int a, int b, const double *weight) noexcept nogil
    cdef double _common(self, int a, int b, const double *weight) noexcept nogil
    cdef double _loss_of(self, int l, int t) noexcept nogil
    cdef double _norm_of(self, int l, int t) noexcept nogil
    cdef void _all_leaves(self, const double *w, Py_ssize_t i, double lam, double *work) noexcept nogil
    cdef double _dphi_score(self, const double *w, Py_ssize_t i, int l) noexcept nogil


cdef class HierarchyMultiLabelStructure(Structure):
    # Multi-label classification on a tree or DAG of labels (choi-thesis 6.7.1): a label is a
    # non-empty leaf set closed under ancestors, stored as M node marginals z_n in units of
    # MARGINAL_ONE (factor.pxd: relaxed labels; 0 or MARGINAL_ONE when integral); phi(x, y) =
    # sum_n z_n c_n x (x) e_n; the loss is 6.7.1's decomposed Delta_L, the leaf Hamming distance,
    # linear in the marginals (so are scores, Gram and updates). lambda-oracle: on a tree the
    # O(M) dynamic program (a node of y needs a child in y), on a DAG the LP relaxation of (6.22)
    # by a Python callable (HiGHS): it holds the GIL.
    cdef readonly Py_ssize_t n_nodes
    cdef readonly bint is_tree
    cdef const int[::1] parent             # trees: per node, -1 at the root
    cdef const int[::1] z                  # true labels: n_examples x M, in MARGINAL_ONE units
    cdef const int[::1] is_leaf
    cdef const double[::1] coef
    cdef object lp                         # lp(r) -> z maximising r . z over the relaxed (6.22)
    cdef readonly long long n_lp_failures

    cdef void _tree_dp(self, const int *t, const double *R, double *work, int *y_out) noexcept nogil

