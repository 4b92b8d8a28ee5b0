# The factor layer: tree-structured factor graphs and their max-product, shared by every
# structure (chains are paths, pairwise multi-label models are forests over the labels) and
# usable without a Structure (GDMM calls the factor primitives directly).

from ssvmlinear._kernels.dataset cimport CSRDataset, Row, row_axpy

# A model's score of a labelling y (one state per variable) is
#   sum_v unary_v(y_v) + sum_{v not a root} table_v(y_v, y_parent(v))
# where unary_v is a CSR row times a weight block (row_gemv of dataset.pxd gives all its states'
# scores at once) and table_v the pairwise factor between v and its parent. The caller fills the
# per-state "beliefs" B (unary scores + lam * the variable's part of a decomposable loss +
# any additive messages, flat, variable v's states at tree_off(t, v)); the routines below run
# max-product on B, leaving B overwritten.

cdef struct FactorTree:
    Py_ssize_t n_vars
    Py_ssize_t n_card          # every variable's domain size when card is NULL
    const int *card            # domain size per variable (NULL: n_card each)
    const Py_ssize_t *off      # first state of each variable in flat per-state arrays (with card)
    const int *order           # variables children-before-parents (NULL: 0, 1, .., n_vars-1)
    const int *parent          # parent variable, -1 for a root (NULL: a path, parent(v) = v + 1)
    const double *tables       # base of the pairwise tables
    const Py_ssize_t *tab_off  # variable v's table at tables + tab_off[v] (NULL: all share `tables`)
    const Py_ssize_t *cs       # table_v(a, b) = table[a * cs[v] + b * ps[v]] (NULL: row-major
    const Py_ssize_t *ps       #   [state of v][state of parent]: cs = card(parent), ps = 1)


cdef inline Py_ssize_t tree_card(const FactorTree *t, Py_ssize_t v) noexcept nogil:
    return t.card[v] if t.card != NULL else t.n_card

cdef inline Py_ssize_t tree_off(const FactorTree *t, Py_ssize_t v) noexcept nogil:
    return t.off[v] if t.card != NULL else v * t.n_card

cdef inline Py_ssize_t tree_order(const FactorTree *t, Py_ssize_t j) noexcept nogil:
    return t.order[j] if t.order != NULL else j

cdef inline Py_ssize_t tree_parent(const FactorTree *t, Py_ssize_t v) noexcept nogil:
    if t.parent != NULL:
        return t.parent[v]
    return v + 1 if v + 1 < t.n_vars else -1

cdef inline const double* tree_table(const FactorTree *t, Py_ssize_t v) noexcept nogil:
    return t.tables + t.tab_off[v] if t.tab_off != NULL else t.tables

cdef inline Py_ssize_t tree_cs(const FactorTree *t, Py_ssize_t v) noexcept nogil:
    return t.cs[v] if t.cs != NULL else tree_card(t, tree_parent(t, v))

cdef inline Py_ssize_t tree_ps(const FactorTree *t, Py_ssize_t v) noexcept nogil:
    return t.ps[v] if t.ps != NULL else 1

cdef inline double tree_pair(const FactorTree *t, Py_ssize_t v, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """table_v(a, b): state a of v, state b of its parent."""
    return tree_table(t, v)[a * tree_cs(t, v) + b * tree_ps(t, v)]


# Total number of states (the length of B).
cdef Py_ssize_t tree_n_states(const FactorTree *t) noexcept nogil
# The labelling's score under unary (flat per-state) and the pairwise tables.
cdef double tree_score(const FactorTree *t, const double *unary, const int *y) noexcept nogil
# B[s] += a * weight[v] for every state s of variable v other than truth[v] (Hamming: lam times
# the loss weight of a mismatch; weight NULL: 1 for every variable), for every variable.
cdef void tree_add_hamming(const FactorTree *t, double *B, const int *truth, double a,
                           const double *weight) noexcept nogil

# argmax_y of sum_v B_v(y_v) + pairwise, into y; returns its value. Ties: lowest states (a child's
# lowest state for each parent state, a root's lowest state). work: tree_maxsum_workspace doubles.
cdef double tree_maxsum(const FactorTree *t, double *B, int *y, double *work) noexcept nogil
cdef Py_ssize_t tree_maxsum_workspace(Py_ssize_t n_vars, Py_ssize_t max_card) noexcept nogil

# For every mismatch count l = 0..n_vars against truth: best[l] = max of sum B + pairwise over
# the labellings with l variables different from truth (-1e300 when none), and labels[l*n_vars:]
# one such labelling. work: tree_count_workspace doubles.
cdef void tree_maxsum_by_count(const FactorTree *t, const double *B, const int *truth, double *best,
                               int *labels, double *work) noexcept nogil
cdef Py_ssize_t tree_count_workspace(Py_ssize_t n_vars, Py_ssize_t max_card) noexcept nogil

# The (up to) kb labellings with the largest sum B + pairwise, best first, into labels (kb x
# n_vars) and values; returns how many exist. Lists of the kb best per (variable, state) merged
# along the tree (list Viterbi on a path). work: tree_kbest_workspace doubles.
cdef int tree_kbest(const FactorTree *t, const double *B, int kb, int *labels, double *values,
                    double *work) noexcept nogil
cdef Py_ssize_t tree_kbest_workspace(Py_ssize_t n_vars, Py_ssize_t max_card, int kb) noexcept nogil


# ---------------------------------------------------------------- weight updates by marginals
# A relaxed label (an LP relaxation's answer) gives each variable marginals over its states and
# each pairwise factor marginals over its table. The joint feature map being linear in them, the
# update w += coef (phi(truth) - phi(mu)) is, per factor: the unary block gets coef (e_truth - mu)
# times the CSR row, the table coef (e_truth - mu). An integral label is the case mu = e_y.

# Labels store marginals as ints in units of MARGINAL_ONE (exact for dyadic values, 2^-30
# otherwise), so that relaxed labels live in the label store and compare like integral ones.
cdef enum:
    MARGINAL_ONE = 1073741824

cdef inline double marginal(int q) noexcept nogil:
    return q * (1.0 / MARGINAL_ONE)

# The unary factor of a variable with states 0..card-1 whose weight columns are first..first+card-1
# of a feature-major block of `stride` columns (dataset.pxd's row_axpy layout): column first + s
# gets coef ([s == truth] - mu[s]) x_i. A binary variable whose state 0 has no weights (a
# multi-label label) is card = 1 with mu[0] = P(state 1).
cdef inline void unary_update_marginals(Row r, double *w, Py_ssize_t stride, Py_ssize_t first,
                                        const double *mu, Py_ssize_t card, Py_ssize_t truth,
                                        double coef) noexcept nogil:
    cdef Py_ssize_t s
    cdef double c
    for s in range(card):
        c = coef * ((1.0 if s == truth else 0.0) - mu[s])
        if c != 0.0:
            row_axpy(r, c, w, stride, first + s)

# table[s] += coef ([s == truth] - mu[s]) for the n entries of a pairwise factor's table
cdef inline void table_update_marginals(double *table, const double *mu, Py_ssize_t n, Py_ssize_t truth,
                                        double coef) noexcept nogil:
    cdef Py_ssize_t s
    for s in range(n):
        table[s] += coef * ((1.0 if s == truth else 0.0) - mu[s])

# The 2 x 2 table marginals [00, 01, 10, 11] of a pair of binary variables from P(a = 1), P(b = 1)
# and P(a = 1, b = 1) (the local polytope's parametrisation: the table is consistent with both).
cdef inline void binary_pair_marginals(double ma, double mb, double m11, double *mu) noexcept nogil:
    mu[0] = 1.0 - ma - mb + m11
    mu[1] = mb - m11
    mu[2] = ma - m11
    mu[3] = m11


# ---------------------------------------------------------------- per-example factor decomposition
# What a structure's examples decompose into, for solvers that work factor by factor (GDMM,
# gdmm.pyx); a structure provides it (its factor_graph()). Example i's variables are
# var_ptr[i]..var_ptr[i+1]-1, truth their true states, loss_weight[i] the loss of one mismatched
# variable (Hamming-type losses). Two kinds of variables:
# - domain variables (binary = False, e.g. a chain's tokens): variable v has states 0..K-1; its
#   unary factor is row v of X times columns 0..K-1 of the feature-major unary block at w[0]
#   (stride K), shared by every variable; per-state unit weights at head_off + s for an example's
#   first variable and tail_off + s for its last (-1: none). Each variable and its successor in the
#   example share a pairwise factor, all of them the one K x K table at table_off ([state of v]
#   [state of v+1]): a shared table is what the sublinear pair oracle's ordered multimaps search.
#   table_off = -1: no pair factors, one variable per example (multiclass: a class is a state).
# - binary variables (binary = True, e.g. labels): example i's variable j (0 <= j < K) has states
#   {0, 1}; its unary factor is row i of X times column j of the unary block (stride K), on state
#   1 only. The pairwise factors are the edges (edge_a[e], edge_b[e]) over an example's variables,
#   the same for every example, each with its own 2 x 2 table at table_off + 4e ([y_a][y_b]); no
#   edges: independent labels.
cdef class FactorGraph:
    cdef readonly object structure          # the Structure itself (its exact oracle: the primal)
    cdef readonly CSRDataset X
    cdef readonly Py_ssize_t n_examples, n_vars, K, n_weights, n_edges, table_off, head_off, tail_off
    cdef readonly bint binary
    cdef const long long[::1] var_ptr
    cdef const int[::1] truth
    cdef const double[::1] loss_weight
    cdef const int[::1] edge_a
    cdef const int[::1] edge_b
