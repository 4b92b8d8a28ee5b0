# lambda-oracle searches for bi-criteria surrogates (choi-meshi-srebro-2016 Alg. 1-2, choi-thesis
# section 4.2.2 and Alg. 4). A search sees labels only through a LabelOracle, as points
# (h, g) in the plane; labels found during one search live in numbered slots owned by the oracle.
# Slot -1 stands for the true label y_i (the point true_h, true_g, psi = 0).
from ssvmlinear._kernels.surrogate cimport Surrogate
from ssvmlinear._kernels.structure cimport Structure

cdef enum:
    SEARCH_NONE = 0          # the lambda = 1 oracle only (margin-rescaling inference)
    SEARCH_EXACT = 1         # loss-indexed enumeration
    SEARCH_BINARY = 2        # minimise a convex upper bound over lambda (thesis 4.2.2)
    SEARCH_BISECTING = 3     # Alg. 1
    SEARCH_ANGULAR = 4       # Alg. 2, constrained lambda-oracle
    SEARCH_HULL = 5          # thesis Alg. 4: optimum over the convex hull (may be fractional)
    SEARCH_HULL_INTEGRAL = 6 # Alg. 4 + ban list / k-best until an integral label is found
    SEARCH_SARAWAGI = 7      # Sarawagi & Gupta 2008: golden section on a bound tied to the slack xi_i


cdef struct SearchResult:
    double value             # psi attained (of the convex combination when fractional)
    double h, g              # its coordinates
    int slot1, slot2         # slot2 = -2 when the result is one label
    double weight1           # weight of slot1 (1 - weight1 on slot2)
    int n_calls              # oracle calls of this search
    int error                # nonzero: the oracle failed (Python exception) or is unsupported


cdef class LabelOracle:
    cdef readonly int capacity
    cdef int n_calls
    cdef double origin               # angular search works in x = h + origin
    cdef double true_h, true_g       # coordinates of y_i
    cdef double g_lo, g_hi           # range of g over all labels (bounds; may be +-inf)
    cdef double g_min_pos            # no label has 0 < g < g_min_pos (0 when unknown)
    cdef double *slot_h
    cdef double *slot_g
    cdef int failed
    cdef int query(self, int slot, double lam) noexcept nogil
    cdef int query_constrained(self, int slot, double lam, double alpha, double beta) noexcept nogil
    cdef int query_exact(self, int slot, const Surrogate *s) noexcept nogil
    cdef int query_excluding(self, int slot, double lam, const int *banned, int n_banned) noexcept nogil
    cdef int max_banned(self) noexcept nogil
    cdef bint same(self, int a, int b) noexcept nogil
    cdef double angular_origin(self, const Surrogate *s, double c) noexcept nogil


cdef class StructureOracle(LabelOracle):
    cdef Structure st
    cdef const double *w
    cdef double scale                # the weights are scale * w (Pegasos keeps w scaled)
    cdef Py_ssize_t i
    cdef Py_ssize_t L, Lmax
    cdef int microf1                 # Micro-F1 coordinates (multi-label structures; scale must be 1)
    cdef object _keep                # numpy buffers
    cdef int *labels                 # capacity x Lmax
    cdef double *work
    cdef double *li_m                # loss-indexed table of the current example
    cdef int *li_labels
    cdef int li_valid, n_levels, max_levels, kmax
    cdef int unary_ok                # work holds the unary scores of this example (oracle_again)
    cdef double *kb_values
    cdef int *kb_labels
    cdef void set_example(self, const double *w, double scale, Py_ssize_t i) noexcept nogil
    cdef void load(self, int slot, const int *label) noexcept nogil
    # labels[k * stride: k * stride + L] into slots 0..n-1, with one margins() call
    cdef void load_many(self, const int *labels, Py_ssize_t stride, int n) noexcept nogil
    cdef const int* label(self, int slot) noexcept nogil
    cdef int _table(self) noexcept nogil


cdef SearchResult run_search(LabelOracle o, const Surrogate *s, int method, double lam0,
                             double ratio, int max_calls, int n_warm) noexcept nogil
