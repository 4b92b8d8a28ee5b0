# cython: language_level=3
# distutils: language = c++
"""GDMM (Yen et al. 2016, Alg. 1) over the factor decomposition a structure provides (factor.pxd's
FactorGraph): FactorGDMM, one kernel for every factor-decomposable structure. Each factor's dual
(11) is alpha_f = C_i (e_{ybar_f} - q_f) with q_f in its domain's simplex; the consistency
constraints (10), r_jf = M_jf q_f - q_j = 0 (the local polytope), enter the augmented Lagrangian
(12), whose gradient in a block is -C_i times the factor's augmented score a_f (its score plus rho
times the messages m_jf = lambda_jf - C_i r_jf). Blocks are driven by factorwise maximisation
oracles (FMOs): a pair factor takes Frank-Wolfe and away steps with exact line search (Alg. 2), a
domain variable the exact minimiser over its active states and the FMO's (a simplex projection);
after each example's sweeps its multipliers take step (13).

Domain variables (a chain's tokens: unary factors over K states, each variable and its successor
sharing one K x K table; a multiclass example: one variable over the K classes, no table): FMOs
exact (all K states of a variable, all K^2 pairs of a pair factor) or sublinear (fmo_subsets =
nu > 1): a variable scores one of nu blocks of states plus the states where its messages are
non-zero (21); a pair factor searches ordered multimaps (C++ std::set) of the shared table's
entries ever changed (sect. 3.2 (i)-(iv)): O(|S_L||S_R| + log) per pair instead of O(K^2).

Binary variables (labels: one unary column each, per-edge 2 x 2 tables over a graph common to the
examples, or none): block-greedy coordinate descent (Alg. 3) over per-example active variables; a
variable at its true state 0 with no explicit factor is implicit (see the binary path's notes
below).
"""
import numpy as np

from cython.operator cimport dereference as deref, preincrement as inc
from libc.stdint cimport uint64_t
from libc.stdlib cimport malloc, realloc, free, calloc
from libc.string cimport memset
from libcpp.pair cimport pair
from libcpp.set cimport set as cset
from libcpp.vector cimport vector

from ssvmlinear._kernels.dataset cimport CSRDataset, Row, row_dot, row_axpy, row_gemv_range
from ssvmlinear._kernels.factor cimport FactorGraph
from ssvmlinear._kernels.rng cimport rng_shuffle, rng_below
from ssvmlinear._kernels.simplex cimport simplex_threshold
from ssvmlinear._kernels.structure cimport Structure

ctypedef pair[double, int] Entry            # (-value, other index): ascending = best first
ctypedef pair[double, long long] PairEntry  # (-value, pair index)

cdef int MAX_INNER = 8                      # AFW steps per factor visit (until a non-drop step)
cdef double NEG = -1e300
cdef double OOM = -2e300                      # a step's return value when realloc failed


# An away step from a vertex holding all but rounding error of the mass would move by ~1e15 times
# that error: a q above VERTEX counts as the vertex, and q is renormalised after every step.
cdef double VERTEX = 1.0 - 1e-9


cdef inline void renormalize(double *q, int n) noexcept nogil:
    cdef int j
    cdef double s = 0.0
    for j in range(n):
        s += q[j]
    if s > 0.0 and s != 1.0:
        for j in range(n):
            q[j] /= s


cdef struct SVec:
    # a sparse vector over a factor's domain (labels or pair indices), grown by realloc
    int n
    int cap
    int *idx
    double *val


cdef inline int sv_find(const SVec *v, int k) noexcept nogil:
    cdef int j
    for j in range(v.n):
        if v.idx[j] == k:
            return j
    return -1


cdef inline double sv_get(const SVec *v, int k) noexcept nogil:
    cdef int j = sv_find(v, k)
    return v.val[j] if j >= 0 else 0.0


cdef inline int sv_add(SVec *v, int k, double a) noexcept nogil:
    """v[k] += a (inserting k); returns its position, -1 when out of memory."""
    cdef int j = sv_find(v, k), cap
    cdef int *ni
    cdef double *nv
    if j >= 0:
        v.val[j] += a
        return j
    if v.n == v.cap:
        cap = 4 if v.cap == 0 else 2 * v.cap
        ni = <int *> realloc(v.idx, cap * sizeof(int))
        if ni == NULL:
            return -1
        v.idx = ni
        nv = <double *> realloc(v.val, cap * sizeof(double))
        if nv == NULL:
            return -1
        v.val = nv
        v.cap = cap
    v.idx[v.n] = k
    v.val[v.n] = a
    v.n += 1
    return v.n - 1


cdef inline void sv_remove_at(SVec *v, int j) noexcept nogil:
    v.n -= 1
    v.idx[j] = v.idx[v.n]
    v.val[j] = v.val[v.n]


cdef int sv_afw_step(SVec *q, bint away, int jv, int ystar, double gamma) noexcept nogil:
    """q += gamma d for a Frank-Wolfe step towards vertex ystar (d = e_ystar - q) or an away step
    from the jv-th active vertex (d = q - e_v); drops vanished entries and renormalises (see
    VERTEX). Returns -1 when out of memory."""
    cdef int j
    for j in range(q.n):
        q.val[j] *= 1.0 + gamma if away else 1.0 - gamma
    if away:
        q.val[jv] -= gamma
    elif sv_add(q, ystar, gamma) < 0:
        return -1
    j = 0
    while j < q.n:
        if q.val[j] <= 1e-15:
            sv_remove_at(q, j)
        else:
            j += 1
    renormalize(q.val, q.n)
    return 0


cdef void couple_2x2(const double *q, double *p, double mu_a, double mu_b) noexcept nogil:
    """consistent_dual's coupling of a binary pair's q (at 2 y_a + y_b) to P(y_a = 1) = mu_a,
    P(y_b = 1) = mu_b: rows, then columns scaled down to them, the rest as the deficits' product."""
    cdef double ta[2]
    cdef double tb[2]
    cdef double r[2]
    cdef double cl[2]
    cdef double da[2]
    cdef double db[2]
    cdef double m
    cdef int s, y, z
    ta[0] = 1.0 - mu_a
    ta[1] = mu_a
    tb[0] = 1.0 - mu_b
    tb[1] = mu_b
    for y in range(2):
        r[y] = q[2 * y] + q[2 * y + 1]
    for s in range(4):
        y = s >> 1
        p[s] = q[s] * (ta[y] / r[y] if r[y] > ta[y] else 1.0)
    for z in range(2):
        cl[z] = p[z] + p[2 + z]
    for s in range(4):
        z = s & 1
        if cl[z] > tb[z]:
            p[s] *= tb[z] / cl[z]
    m = 0.0
    for y in range(2):
        da[y] = max(ta[y] - p[2 * y] - p[2 * y + 1], 0.0)
        db[y] = max(tb[y] - p[y] - p[2 + y], 0.0)
        m += da[y]
    if m > 1e-15:
        for s in range(4):
            p[s] += da[s >> 1] * db[s & 1] / m


def checked_Cs(Cs, Py_ssize_t n):
    Cs = np.ascontiguousarray(Cs, dtype=np.float64).copy()
    if Cs.shape[0] != n:
        raise ValueError("need one C per example")
    return Cs


cdef double mean_sqnorm(CSRDataset X):
    """The mean squared row norm (1 when X is empty or zero): rho is relative to it (the unigram
    blocks' curvature), so one default fits binary pixels (||x||^2 ~ 50) and unit-norm rows alike.
    The multipliers are scaled ones (units of C_i q), so eta is a plain step (1 = the method of
    multipliers)."""
    cdef Py_ssize_t i
    cdef double s = 0.0
    for i in range(X.n_rows):
        s += X.sqnorm(i)
    return s / X.n_rows if X.n_rows and s > 0 else 1.0


cdef struct PairRec:
    # an explicit pair factor of one example: labels a < b (positions ia, ib in its active list),
    # q over (y_a, y_b) at 2 y_a + y_b, the two links' scaled multipliers (of the y = 1 component)
    int ia
    int ib
    long long e
    double q[4]
    double lam_a
    double lam_b


cdef struct Example:
    int n_act
    int cap_act
    int *act            # active labels (the positives first, then the ones activated)
    double *mu          # their P(y = 1)
    int n_pair
    int cap_pair
    PairRec *pairs


cdef class FactorGDMM:
    """GDMM over a FactorGraph (margin rescaling, Hamming-type loss, per-example C_i).

    FactorGDMM(graph, Cs, rho=1, eta=0.5, fmo_subsets=1, sublinear=False, seed=0): graph a
    structure's factor_graph(); fmo_subsets = nu blocks of states (labels) per unary FMO
    (activation search); sublinear: the shared table's multimap pair FMO (domain variables).

    Domain variables: per variable a dual q_t over its K states, per pair factor (t, t+1) a dual
    over K^2 state pairs (index a K + b), and the two links' multipliers, all sparse (SVec); an
    example's sweep interleaves its variables and pair factors.

    Binary variables (our derivation of sect. 3.2's binary-interaction case). Each example keeps the
    variables A_i that are at state 1 in its truth or were activated; every other variable k has
    P(y_k = 1) = 0 = its truth. A pair factor of two inactive variables is at its truth
    (contributes nothing to w); a pair (a, b) with b inactive has exactly one consistent marginal,
    q_ab(y_a, 0) = q_a(y_a), so it is folded into a's unary block (its "implicit" pairs, no
    variables); the pairs within A_i are explicit factors with their own q and multipliers. The
    restriction is exact whenever no inactive variable would move: the activation search checks
    that, one block of variables per call (fmo_subsets), and adds the best one with a positive
    gradient to A_i (its pairs with A_i start at the consistent marginal, so w does not change).
    Weights: the unary block is kept dense; the pair tables as W_e = (D_a, D_b) + X_e with
    W(1,0) = D_a + X(1,0), W(0,1) = D_b + X(0,1), W(0,0) = -D_a - D_b + X(0,0), W(1,1) = X(1,1),
    D_a = sum_i C_i (ybar_ia - mu_ia) (every implicit pair's share) and X the explicit pairs'
    corrections, so that a step on mu_a costs O(|A_i|) instead of O(deg a) table entries; the row
    sums RX_a = sum_b X_e(a on, b off) - X_e(0, 0) and the neighbours' shares ND_a = sum_{b ~ a} D_b
    give a's implicit pairs' score in O(|A_i|). (Written for (a, b) in the edge's own order; ND is
    sum D - D_a on the complete graph, else kept up to date in O(deg) per step.)
    Unary step on mu_a: L is quadratic in mu_a, with slope -C_i g and curvature
    C_i^2 (||x||^2 + 2 (#implicit pairs) + 2 rho (#explicit pairs)), g = x.w_a + implicit pair
    scores + delta(1) - delta(0) - 2 rho sum_e m_ae (m_ae = lambda_ae - C_i r_ae, r_ae =
    q_e(a = 1) - mu_a); the minimiser over [0, 1] is exact. Pair step: AFW over the 4 states as
    for domain variables (a(y) = W_e(y) + 2 rho (m_a [y_a = 1] + m_b [y_b = 1])). Multipliers:
    lambda -= eta C_i r after each example's sweep."""
    cdef readonly FactorGraph graph
    cdef CSRDataset X
    cdef double[::1] w          # binary variables: the unary block dense, the pair block written by coef
    cdef double[::1] Cs
    cdef readonly Py_ssize_t n, n_vars, K, nu
    cdef public double rho
    cdef readonly double eta, rho_scale
    cdef readonly bint sublinear, binary
    cdef const long long[::1] var_ptr
    cdef const int[::1] truth
    cdef const double[::1] lw
    cdef Py_ssize_t table_off, head_off, tail_off
    cdef uint64_t rng_state
    cdef Py_ssize_t[::1] order
    cdef double[::1] scores      # a block of unary scores
    cdef double[::1] proj        # a unary step's projection: its states' targets, then sorted
    cdef int stamp               # marks of the current factor's supports (markL/markR, mark)
    cdef public long long n_fmo_calls, n_activations
    # CoCoA+'s subproblem scaling sigma' (1: the plain method): the curvature of w's part of every
    # step and every update of w are multiplied by it (as DualSolver.sigma)
    cdef public double sigma
    # ---- domain variables
    cdef SVec *qu                # per variable: q over its states
    cdef SVec *qb                # per variable t with a successor: q over pairs y*K + y'
    cdef SVec *lamL              # lambda of (variable t, pair t) over states
    cdef SVec *lamR              # lambda of (variable t+1, pair t) over states
    # scratch (dense over states, kept zero outside the current supports)
    cdef double[::1] aU, msgL, msgR, muL, muR
    cdef int[::1] markL, markR, supL, supR
    cdef int nsupL, nsupR
    # ordered multimaps of the shared table (sublinear pair FMO)
    cdef vector[cset[Entry]] row_map
    cdef vector[cset[Entry]] col_map
    cdef cset[PairEntry] all_map
    cdef unsigned char[::1] touched
    # ---- binary variables
    cdef readonly Py_ssize_t E
    cdef double[::1] D, RX, Xt  # Xt: E x 4 corrections
    cdef double Dsum
    cdef readonly bint full     # every pair an edge, in np.triu_indices order (edge index by formula)
    cdef int[::1] ea, eb        # the edges' endpoints (the tables' [y_ea, y_eb] order)
    cdef int[::1] edge_of       # K x K -> edge index or -1 (not full)
    cdef int[::1] deg, nbr_ptr, nbr
    cdef double[::1] ND         # sum of the neighbours' D (not full)
    cdef Example *ex
    cdef int[::1] mark

    def __cinit__(self):
        self.qu = NULL
        self.qb = NULL
        self.lamL = NULL
        self.lamR = NULL
        self.ex = NULL

    def __init__(self, FactorGraph graph, Cs, double rho=1.0, double eta=0.5, Py_ssize_t fmo_subsets=1,
                 bint sublinear=False, unsigned long long seed=0):
        if rho <= 0 or eta <= 0:
            raise ValueError("GDMM: rho and eta must be positive")
        self.graph = graph
        self.X = graph.X
        self.n = graph.n_examples
        self.n_vars = graph.n_vars
        self.K = graph.K
        self.binary = graph.binary
        self.var_ptr = graph.var_ptr
        self.truth = graph.truth
        self.lw = graph.loss_weight
        self.table_off = graph.table_off
        self.head_off = graph.head_off
        self.tail_off = graph.tail_off
        self.Cs = checked_Cs(Cs, self.n)
        self.rho_scale = mean_sqnorm(self.X)
        self.rho = rho * self.rho_scale
        self.eta = eta
        self.nu = max(1, min(fmo_subsets, self.K))
        self.sublinear = sublinear and not graph.binary and graph.table_off >= 0   # (the pair multimaps)
        self.rng_state = seed
        self.order = np.arange(max(self.n, 1), dtype=np.intp)
        self.w = np.zeros(graph.n_weights, dtype=np.float64)
        self.scores = np.zeros(max(self.K, 1))
        self.proj = np.zeros(2 * (self.K + 1))
        self.stamp = 0
        self.n_fmo_calls = 0
        self.n_activations = 0
        self.sigma = 1.0
        if self.binary:
            self._init_binary()
        else:
            self._init_domain()

    def _init_domain(self):
        cdef Py_ssize_t v, i, K = self.K
        if K > 46340 and self.table_off >= 0:
            raise ValueError(f"GDMM: K = {K} states; pair indices need K <= 46340")
        self.aU = np.zeros(K)
        self.msgL = np.zeros(K)
        self.msgR = np.zeros(K)
        self.muL = np.zeros(K)
        self.muR = np.zeros(K)
        self.markL = np.zeros(K, dtype=np.int32)
        self.markR = np.zeros(K, dtype=np.int32)
        self.supL = np.zeros(K, dtype=np.int32)
        self.supR = np.zeros(K, dtype=np.int32)
        N = max(self.n_vars, 1)
        self.qu = <SVec *> calloc(N, sizeof(SVec))
        self.qb = <SVec *> calloc(N, sizeof(SVec))
        self.lamL = <SVec *> calloc(N, sizeof(SVec))
        self.lamR = <SVec *> calloc(N, sizeof(SVec))
        if self.qu == NULL or self.qb == NULL or self.lamL == NULL or self.lamR == NULL:
            raise MemoryError("GDMM factor duals")
        # q = e_ybar everywhere: alpha = 0, w = 0
        for i in range(self.n):
            for v in range(self.var_ptr[i], self.var_ptr[i + 1]):
                if sv_add(&self.qu[v], self.truth[v], 1.0) < 0:
                    raise MemoryError("GDMM factor duals")
                if v + 1 < self.var_ptr[i + 1] and sv_add(&self.qb[v], self.truth[v] * <int> K + self.truth[v + 1], 1.0) < 0:
                    raise MemoryError("GDMM factor duals")
        if self.sublinear:
            self.row_map.resize(K)
            self.col_map.resize(K)
            self.touched = np.zeros(K * K, dtype=np.uint8)

    def _init_binary(self):
        cdef Py_ssize_t i, k, K = self.K
        edges = np.asarray(self.graph.edges, dtype=np.int32).reshape(-1, 2)
        self.E = edges.shape[0]
        self.ea = np.ascontiguousarray(edges[:, 0])
        self.eb = np.ascontiguousarray(edges[:, 1])
        ta, tb = np.triu_indices(K, 1)
        self.full = self.E == ta.shape[0] and np.array_equal(edges[:, 0], ta) and np.array_equal(edges[:, 1], tb)
        self.deg = np.bincount(edges.ravel(), minlength=K).astype(np.int32)
        self.ND = np.zeros(K)
        if not self.full:
            if self.E and K * K > 2 ** 31:
                raise ValueError(f"GDMM: {K} labels on a sparse graph need a K x K edge map")
            emap = np.full(K * K if self.E else 1, -1, dtype=np.int32)     # (no edges: _edge says so)
            emap[edges[:, 0] * K + edges[:, 1]] = np.arange(self.E, dtype=np.int32)
            emap[edges[:, 1] * K + edges[:, 0]] = np.arange(self.E, dtype=np.int32)
            self.edge_of = emap
            ends = np.concatenate([edges[:, 0], edges[:, 1]])
            other = np.concatenate([edges[:, 1], edges[:, 0]])
            order = np.argsort(ends, kind="stable")
            self.nbr = np.ascontiguousarray(other[order], dtype=np.int32)
            self.nbr_ptr = np.concatenate([[0], np.cumsum(np.asarray(self.deg))]).astype(np.int32)
        self.D = np.zeros(K)
        self.RX = np.zeros(K)
        self.Xt = np.zeros(4 * self.E)
        self.Dsum = 0.0
        self.mark = np.zeros(K, dtype=np.int32)
        self.ex = <Example *> calloc(max(self.n, 1), sizeof(Example))
        if self.ex == NULL:
            raise MemoryError("GDMM factor duals")
        for i in range(self.n):
            for k in range(K):
                if self.truth[i * K + k] and self._activate(i, <int> k, 1.0) < 0:
                    raise MemoryError("GDMM factor duals")

    def __dealloc__(self):
        cdef Py_ssize_t g
        cdef int a
        cdef SVec *arrs[4]
        arrs[0] = self.qu
        arrs[1] = self.qb
        arrs[2] = self.lamL
        arrs[3] = self.lamR
        for a in range(4):
            if arrs[a] != NULL:
                for g in range(max(self.n_vars, 1)):
                    free(arrs[a][g].idx)
                    free(arrs[a][g].val)
                free(arrs[a])
        if self.ex != NULL:
            for g in range(max(self.n, 1)):
                free(self.ex[g].act)
                free(self.ex[g].mu)
                free(self.ex[g].pairs)
            free(self.ex)

    def _require(self, bint binary, name):
        if self.binary != binary:
            raise ValueError(f"{name}: only for {'binary' if binary else 'domain'} variables")

    # ------------------------------------------------------------------ passes (both kinds)

    def run_pass(self, int sweeps=1):
        """One GDMM iteration: per example (random order), `sweeps` sweeps of block steps over its
        factors (binary variables: after the activation search), then the multiplier step (13) of
        its links: an example's multipliers enter only its own factors, so stepping them right
        after its sweeps is the same iteration as stepping all after the pass. Returns (sum of the
        blocks' Frank-Wolfe gaps in the first sweep [+ the activation gains], consistency violation
        sum_i C_i ||r||_1 / sum_i C_i T_i after the sweeps; T_i: example i's domain variables, 1
        for binary ones)."""
        cdef Py_ssize_t k, i
        cdef double c, total = 0.0, infeas = 0.0, norm = 0.0
        cdef int rc = 0
        with nogil:
            rng_shuffle(&self.rng_state, &self.order[0], self.n)
            for k in range(self.n):
                i = self.order[k]
                c = self.Cs[i]
                if c <= 0.0:
                    continue
                if self.binary:
                    norm += c
                    rc = self._binary_example(i, c, sweeps, &total, &infeas)
                else:
                    norm += c * (self.var_ptr[i + 1] - self.var_ptr[i])
                    rc = self._domain_example(i, c, sweeps, &total, &infeas)
                if rc < 0:
                    break
        if rc < 0:
            raise MemoryError("GDMM active sets")
        return total, infeas / norm if norm > 0 else 0.0

    cdef double _linear_term(self):
        """sum_i C_i sum_v Delta_v . q_v (the dual's linear part, from the variables' duals)."""
        cdef Py_ssize_t i, v
        cdef int j
        cdef Example *x
        cdef double s = 0.0
        for i in range(self.n):
            if self.binary:
                x = &self.ex[i]
                for j in range(x.n_act):
                    s += self.Cs[i] * self.lw[i] * (1.0 - x.mu[j] if self.truth[i * self.K + x.act[j]] else x.mu[j])
            else:
                for v in range(self.var_ptr[i], self.var_ptr[i + 1]):
                    s += self.Cs[i] * self.lw[i] * (1.0 - sv_get(&self.qu[v], self.truth[v]))
        return s

    def dual(self):
        """-G(q) = sum_i C_i sum_v delta_v . q_v - 1/2 ||w||^2 (the structural dual when the
        consistency constraints hold; above the optimum it bounds from below when they do not)."""
        w = self.coef
        return self._linear_term() - 0.5 * float(np.dot(w, w))

    def consistent_correction(self):
        """The pair tables' change from the factor duals' w to the consistent point's (each pair
        factor's q coupled to its variables' marginals: rows, then columns scaled down to them,
        the remaining mass as the product of the two deficits): (indices into w, values), the
        sum over examples of C_i (q - coupled). Zero at consistency."""
        # accumulated densely over the pair tables (K^2 on a chain, 4 per edge on binary
        # variables): every pass's dual needs it, and a hash map per entry cost far more
        cdef Py_ssize_t i, g, s0, T, K = self.K
        cdef Py_ssize_t size = self.table_off + (4 * self.E if self.binary else K * K)
        if self.table_off < 0 or (self.binary and self.E == 0):
            return np.zeros(0, dtype=np.int64), np.zeros(0)       # no pair factors: always consistent
        cdef double[::1] dense = np.zeros(size)
        cdef double *delta = &dense[0]
        cdef double c
        cdef double[::1] ta, tb, rowm, colm, pp
        cdef double Pq[4]
        cdef double P2[4]
        cdef int j, s, se
        cdef Example *x
        cdef PairRec *rec
        if self.binary:
            for i in range(self.n):
                c = self.Cs[i]
                if c <= 0.0:
                    continue
                x = &self.ex[i]
                for j in range(x.n_pair):
                    rec = &x.pairs[j]
                    for s in range(4):
                        Pq[s] = rec.q[s]
                    couple_2x2(Pq, P2, x.mu[rec.ia], x.mu[rec.ib])
                    for s in range(4):
                        if P2[s] != Pq[s]:
                            se = s if self.ea[rec.e] == x.act[rec.ia] else 2 * (s & 1) + (s >> 1)
                            delta[self.table_off + 4 * rec.e + se] += c * (Pq[s] - P2[s])
        else:
            ta = np.zeros(K)
            tb = np.zeros(K)
            rowm = np.zeros(K)
            colm = np.zeros(K)
            pp = np.zeros(16)
            for i in range(self.n):
                c = self.Cs[i]
                if c <= 0.0:
                    continue
                s0 = self.var_ptr[i]
                T = self.var_ptr[i + 1] - s0
                for g in range(s0, s0 + T - 1):
                    if self.qb[g].n > pp.shape[0]:
                        pp = np.zeros(2 * self.qb[g].n)
                    self._couple_pair(g, c, ta, tb, rowm, colm, pp, delta)
        index = np.flatnonzero(dense).astype(np.int64)
        return index, np.asarray(dense)[index]

    def consistent_dual(self):
        """The structural dual at the consistent point nearest the factor duals
        (consistent_correction): a lower bound of the optimum at any iterate (on a cyclic graph:
        of the LP-relaxed problem's), equal to dual() at consistency. Weights at sigma = 1
        (w = v)."""
        w = np.ascontiguousarray(self.coef)
        index, value = self.consistent_correction()
        return self._linear_term() - 0.5 * (float(np.dot(w, w)) + 2.0 * float(np.dot(w[index], value))
                                             + float(np.dot(value, value)))

    cdef void _couple_pair(self, Py_ssize_t g, double c, double[::1] ta, double[::1] tb, double[::1] rowm,
                           double[::1] colm, double[::1] pp, double *delta):
        """consistent_dual's coupling of pair factor (g, g+1) to qu[g] (rows) and qu[g+1]
        (columns); adds C_i (q - coupled) to delta (dense, w's indices). Scratch arrays of K are
        zero on entry and on exit; pp holds the pair's scaled values."""
        cdef SVec *q = &self.qb[g]
        cdef SVec *a = &self.qu[g]
        cdef SVec *b = &self.qu[g + 1]
        cdef Py_ssize_t K = self.K, off = self.table_off
        cdef int j, k, y, z
        cdef double m = 0.0, da, db
        for j in range(a.n):
            ta[a.idx[j]] = a.val[j]
        for j in range(b.n):
            tb[b.idx[j]] = b.val[j]
        for j in range(q.n):
            rowm[q.idx[j] // K] += q.val[j]
        for j in range(q.n):                 # rows scaled down to their targets
            y = <int> (q.idx[j] // K)
            pp[j] = q.val[j] * (ta[y] / rowm[y] if rowm[y] > ta[y] else 1.0)
            colm[q.idx[j] % K] += pp[j]
        for j in range(q.n):                 # then columns
            z = <int> (q.idx[j] % K)
            if colm[z] > tb[z]:
                pp[j] *= tb[z] / colm[z]
        for j in range(q.n):                 # the coupled pair's own marginals (scratch reused)
            rowm[q.idx[j] // K] = 0.0
            colm[q.idx[j] % K] = 0.0
        for j in range(q.n):
            rowm[q.idx[j] // K] += pp[j]
            colm[q.idx[j] % K] += pp[j]
            if pp[j] != q.val[j]:
                delta[off + q.idx[j]] += c * (q.val[j] - pp[j])
        for j in range(a.n):                 # the deficits: the rest of the mass, as a product
            m += max(ta[a.idx[j]] - rowm[a.idx[j]], 0.0)
        if m > 1e-15:
            for j in range(a.n):
                da = max(ta[a.idx[j]] - rowm[a.idx[j]], 0.0)
                if da <= 0.0:
                    continue
                for k in range(b.n):
                    db = max(tb[b.idx[k]] - colm[b.idx[k]], 0.0)
                    if db > 0.0:
                        delta[off + a.idx[j] * K + b.idx[k]] -= c * da * db / m
        for j in range(q.n):
            rowm[q.idx[j] // K] = 0.0
            colm[q.idx[j] % K] = 0.0
        for j in range(a.n):
            ta[a.idx[j]] = 0.0
        for j in range(b.n):
            tb[b.idx[j]] = 0.0

    def primal(self):
        """1/2 ||w||^2 + sum_i C_i max_y (m(y) + Delta(y)) with the structure's own lambda-oracle
        (Viterbi on a chain, max-product on a forest, the LP relaxation on a cyclic graph)."""
        cdef Structure st = self.graph.structure
        cdef Py_ssize_t i
        cdef double m, d, s = 0.0
        cdef const double[::1] w = np.ascontiguousarray(self.coef)
        cdef double[::1] work = np.zeros(max(st.workspace_size(), 1))
        cdef int[::1] ybuf = np.zeros(max(st.max_label_len, 1), dtype=np.int32)
        with nogil:
            for i in range(self.n):
                if self.Cs[i] > 0.0:
                    st.oracle(&w[0], i, 1.0, &ybuf[0], &m, &d, &work[0])
                    if m + d > 0.0:
                        s += self.Cs[i] * (m + d)
        return 0.5 * float(np.dot(w, w)) + s

    def active_set_sizes(self):
        """Domain variables: (mean |A| of the unary factors, mean |A| of the pair factors); binary:
        (mean |A_i|, mean number of explicit pairs per example)."""
        cdef Py_ssize_t g, i
        cdef long long su = 0, sb = 0, nb = 0
        if self.binary:
            for i in range(self.n):
                su += self.ex[i].n_act
                sb += self.ex[i].n_pair
            return su / max(self.n, 1), sb / max(self.n, 1)
        for g in range(self.n_vars):
            su += self.qu[g].n
            if self.qb[g].n:
                sb += self.qb[g].n
                nb += 1
        return su / max(self.n_vars, 1), sb / max(nb, 1)

    @property
    def coef(self):
        """The weights in the structure's layout (binary: the pair tables written from D and X)."""
        if not self.binary:
            return np.asarray(self.w)
        a, b = np.asarray(self.ea), np.asarray(self.eb)
        D = np.asarray(self.D)
        T = np.asarray(self.Xt).reshape(-1, 4).copy()
        T[:, 2] += D[a]
        T[:, 1] += D[b]
        T[:, 0] -= D[a] + D[b]
        w = np.asarray(self.w)
        w[self.table_off:self.table_off + 4 * self.E] = T.ravel()
        return w

    def recompute_w(self):
        """w = v = sum_i C_i (phi(ybar_i) - E_q phi), from the factor duals (Catalyst's centres:
        the inner problems' w is sigma v + (1 - sigma) c). Domain variables only."""
        self._require(False, "recompute_w")
        cdef Py_ssize_t i, v, s0, s1, K = self.K
        cdef int j
        cdef double c
        cdef double[::1] w = np.zeros(self.w.shape[0])
        cdef Row r
        with nogil:
            for i in range(self.n):
                c = self.Cs[i]
                if c <= 0.0:
                    continue
                s0 = self.var_ptr[i]
                s1 = self.var_ptr[i + 1]
                for v in range(s0, s1):
                    r = self.X.row(v)
                    row_axpy(r, c, &w[0], K, self.truth[v])
                    self._add_ends(&w[0], v - s0, s1 - s0, self.truth[v], c)
                    for j in range(self.qu[v].n):
                        row_axpy(r, -c * self.qu[v].val[j], &w[0], K, self.qu[v].idx[j])
                        self._add_ends(&w[0], v - s0, s1 - s0, self.qu[v].idx[j], -c * self.qu[v].val[j])
                    if v + 1 < s1:
                        w[self.table_off + self.truth[v] * K + self.truth[v + 1]] += c
                        for j in range(self.qb[v].n):
                            w[self.table_off + self.qb[v].idx[j]] -= c * self.qb[v].val[j]
        self._set_weights_domain(w)

    cdef inline void _add_ends(self, double *w, Py_ssize_t t, Py_ssize_t T, int y, double a) noexcept nogil:
        """w's unit weights of state y at position t (an example's first / last variable) += a."""
        if t == 0 and self.head_off >= 0:
            w[self.head_off + y] += a
        if t == T - 1 and self.tail_off >= 0:
            w[self.tail_off + y] += a

    def set_weights(self, const double[::1] w):
        """w = the given weights (CoCoA+: each round's global w). Domain variables: the multimaps
        rebuilt over the shared table's non-zero entries (their invariant: the others are 0);
        binary: the pair tables written as the corrections X over the current shares D (RX
        recomputed)."""
        if w.shape[0] != self.w.shape[0]:
            raise ValueError(f"set_weights: {w.shape[0]} weights, expected {self.w.shape[0]}")
        if self.binary:
            self._set_weights_binary(w)
        else:
            self._set_weights_domain(w)

    def weights_changed(self):
        """The weights were changed in place through `coef` (Catalyst's centre mix): the
        multimaps are rebuilt over the new table (domain variables; binary ones keep no index)."""
        if not self.binary:
            self._set_weights_domain(self.w)

    # ================================================================== domain variables

    cdef inline void _mark_L(self, int y) noexcept nogil:
        if self.markL[y] != self.stamp:
            self.markL[y] = self.stamp
            self.supL[self.nsupL] = y
            self.nsupL += 1

    cdef inline void _mark_R(self, int y) noexcept nogil:
        if self.markR[y] != self.stamp:
            self.markR[y] = self.stamp
            self.supR[self.nsupR] = y
            self.nsupR += 1

    cdef void _clear_scratch(self) noexcept nogil:
        cdef int k, y
        for k in range(self.nsupL):
            y = self.supL[k]
            self.msgL[y] = 0.0
            self.muL[y] = 0.0
        for k in range(self.nsupR):
            y = self.supR[k]
            self.msgR[y] = 0.0
            self.muR[y] = 0.0
        self.nsupL = 0
        self.nsupR = 0

    cdef inline double _se(self, Py_ssize_t t, Py_ssize_t T, int y) noexcept nogil:
        """The unit weight of state y at position t (an example's first / last variable)."""
        cdef double s = 0.0
        if t == 0 and self.head_off >= 0:
            s += self.w[self.head_off + y]
        if t == T - 1 and self.tail_off >= 0:
            s += self.w[self.tail_off + y]
        return s

    cdef void _unigram_messages(self, Py_ssize_t g, Py_ssize_t t, Py_ssize_t T, double c) noexcept nogil:
        """msgL[y] = sum over the variable's pair factors of m_tf(y), on the support supL (new stamp)."""
        cdef SVec *v
        cdef int j, y, n_inc = (t > 0) + (t + 1 < T)
        cdef Py_ssize_t K = self.K
        self.stamp += 1
        self.nsupL = 0
        self.nsupR = 0
        self._mark_L(self.truth[g])
        v = &self.qu[g]
        for j in range(v.n):
            self._mark_L(v.idx[j])
            self.msgL[v.idx[j]] += c * n_inc * v.val[j]
        if t + 1 < T:
            v = &self.lamL[g]
            for j in range(v.n):
                self._mark_L(v.idx[j])
                self.msgL[v.idx[j]] += v.val[j]
            v = &self.qb[g]
            for j in range(v.n):
                y = <int> (v.idx[j] // K)
                self._mark_L(y)
                self.msgL[y] -= c * v.val[j]
        if t > 0:
            v = &self.lamR[g - 1]
            for j in range(v.n):
                self._mark_L(v.idx[j])
                self.msgL[v.idx[j]] += v.val[j]
            v = &self.qb[g - 1]
            for j in range(v.n):
                y = <int> (v.idx[j] % K)
                self._mark_L(y)
                self.msgL[y] -= c * v.val[j]

    cdef double _unigram_fmo(self, Py_ssize_t g, Py_ssize_t t, Py_ssize_t T, double lw, Py_ssize_t block,
                             int *y_out) noexcept nogil:
        """a_t(y) on the support (into aU) and argmax over support + block `block` of nu."""
        cdef Py_ssize_t K = self.K, lo, hi, y, k
        cdef int ytrue = self.truth[g]
        cdef Row r = self.X.row(g)
        cdef double best = NEG, v
        cdef double *sc = &self.scores[0]
        cdef int yb = ytrue
        self.n_fmo_calls += 1
        for k in range(self.nsupL):
            y = self.supL[k]
            v = row_dot(r, &self.w[0], K, y) + self._se(t, T, <int> y) - self.rho * self.msgL[y]
            if y != ytrue:
                v += lw
            self.aU[y] = v
            if v > best:
                best = v
                yb = <int> y
        lo = block * K // self.nu
        hi = (block + 1) * K // self.nu
        row_gemv_range(r, &self.w[0], K, lo, hi, sc)
        for y in range(lo, hi):
            if self.markL[y] == self.stamp:
                continue
            v = sc[y - lo] + self._se(t, T, <int> y) + lw
            if v > best:
                best = v
                yb = <int> y
        y_out[0] = yb
        return best

    cdef double _unigram_step(self, Py_ssize_t i, Py_ssize_t g, Py_ssize_t t, Py_ssize_t T, double c,
                              double lw) noexcept nogil:
        """Variable g's block step: the FMO's state joins q_t's support, and q_t takes the exact
        minimiser of the augmented Lagrangian over that support -- its Hessian in q_t is the
        identity times C_i^2 (sigma |x|^2 + rho (#pair factors)), so the minimiser is the simplex
        projection of q + a / (C_i h) (the authors' projected step on the active set; a Frank-Wolfe
        or away step moves along one direction of it). Returns the FW gap (C_i (a(y*) - q.a)),
        -1 on out of memory."""
        cdef SVec *q = &self.qu[g]
        cdef Row r = self.X.row(g)
        cdef Py_ssize_t block
        cdef int n_inc = (t > 0) + (t + 1 < T), ystar, j, n
        cdef double kappa = self.X.sqnorm(g), best, qa = 0.0, h, tau, v
        cdef double *z = &self.proj[0]
        cdef double *zs = &self.proj[self.K + 1]
        kappa += (t == 0 and self.head_off >= 0) + (t == T - 1 and self.tail_off >= 0)
        self._unigram_messages(g, t, T, c)
        block = rng_below(&self.rng_state, self.nu) if self.nu > 1 else 0
        best = self._unigram_fmo(g, t, T, lw, block, &ystar)
        for j in range(q.n):
            qa += q.val[j] * self.aU[q.idx[j]]
        h = c * (self.sigma * kappa + self.rho * n_inc)
        if best - qa <= 0.0:
            self._clear_scratch()
            return 0.0
        if sv_find(q, ystar) < 0:
            self.aU[ystar] = best
            if sv_add(q, ystar, 0.0) < 0:
                self._clear_scratch()
                return OOM
        n = q.n
        for j in range(n):
            z[j] = q.val[j] + self.aU[q.idx[j]] / h if h > 1e-300 else (1.0 if q.idx[j] == ystar else 0.0)
            zs[j] = z[j]
        self._clear_scratch()
        tau = simplex_threshold(zs, n, 1.0)     # (h = 0: the objective is linear, its minimiser e_ystar)
        for j in range(n):      # w moves by the change; q takes the projection
            v = z[j] - tau
            v = v if v > 0.0 else 0.0
            self._move_unigram(r, t, T, q.idx[j], v - q.val[j], c)
            q.val[j] = v
        j = 0
        while j < q.n:
            if q.val[j] <= 0.0:
                sv_remove_at(q, j)
            else:
                j += 1
        renormalize(q.val, q.n)
        return c * (best - qa)

    cdef inline void _move_unigram(self, Row r, Py_ssize_t t, Py_ssize_t T, int y, double delta,
                                   double c) noexcept nogil:
        """w for q_t(y) += delta."""
        if delta == 0.0:
            return
        delta *= self.sigma
        row_axpy(r, -c * delta, &self.w[0], self.K, y)
        self._add_ends(&self.w[0], t, T, y, -c * delta)

    cdef void _pair_messages(self, Py_ssize_t g, double c) noexcept nogil:
        """msgL/msgR: m of (variable g, pair g) and (variable g+1, pair g); muL/muR: q_pair's marginals."""
        cdef SVec *v
        cdef int j, a, b
        cdef Py_ssize_t K = self.K
        self.stamp += 1
        self.nsupL = 0
        self.nsupR = 0
        v = &self.qb[g]
        for j in range(v.n):
            a = <int> (v.idx[j] // K)
            b = <int> (v.idx[j] % K)
            self._mark_L(a)
            self._mark_R(b)
            self.muL[a] += v.val[j]
            self.muR[b] += v.val[j]
            self.msgL[a] -= c * v.val[j]
            self.msgR[b] -= c * v.val[j]
        v = &self.qu[g]
        for j in range(v.n):
            self._mark_L(v.idx[j])
            self.msgL[v.idx[j]] += c * v.val[j]
        v = &self.lamL[g]
        for j in range(v.n):
            self._mark_L(v.idx[j])
            self.msgL[v.idx[j]] += v.val[j]
        v = &self.qu[g + 1]
        for j in range(v.n):
            self._mark_R(v.idx[j])
            self.msgR[v.idx[j]] += c * v.val[j]
        v = &self.lamR[g]
        for j in range(v.n):
            self._mark_R(v.idx[j])
            self.msgR[v.idx[j]] += v.val[j]

    cdef double _pair_fmo_exact(self, int *a_out, int *b_out) noexcept nogil:
        cdef Py_ssize_t K = self.K, a, b
        cdef const double *W = &self.w[self.table_off]
        cdef const double *mR = &self.msgR[0]
        cdef double best = NEG, base, v
        cdef double rho = self.rho
        a_out[0] = 0          # (a defined answer when no score compares: NaN scores)
        b_out[0] = 0
        for a in range(K):
            base = rho * self.msgL[a]
            for b in range(K):
                v = W[a * K + b] + base + rho * mR[b]
                if v > best:
                    best = v
                    a_out[0] = <int> a
                    b_out[0] = <int> b
        return best

    cdef double _best_in_line(self, cset[Entry] *line, const int *mark_other, Py_ssize_t base, Py_ssize_t stride,
                              int *out) noexcept nogil:
        """max of W over one row (or column) of the table outside the other side's support
        (mark_other == stamp): the map's best such entry, or an untouched one (value 0) when that
        is negative; -1e300 when none. Entry (line, j) is at base + stride * j of `touched`."""
        cdef cset[Entry].iterator it = line.begin()
        cdef cset[Entry].iterator end = line.end()
        cdef double v = NEG
        cdef int j
        cdef const unsigned char *tch = &self.touched[0]
        while it != end:
            j = deref(it).second
            if mark_other[j] != self.stamp:
                v = -deref(it).first
                out[0] = j
                break
            inc(it)
        if v >= 0.0:
            return v
        for j in range(self.K):
            if mark_other[j] != self.stamp and not tch[base + stride * j]:
                out[0] = j
                return 0.0
        return v

    cdef double _best_outside(self, int *a_out, int *b_out) noexcept nogil:
        cdef cset[PairEntry].iterator it = self.all_map.begin()
        cdef cset[PairEntry].iterator end = self.all_map.end()
        cdef double v = NEG
        cdef long long p
        cdef Py_ssize_t K = self.K, a, b
        cdef const unsigned char *tch = &self.touched[0]
        while it != end:
            p = deref(it).second
            a = p // K
            b = p % K
            if self.markL[a] != self.stamp and self.markR[b] != self.stamp:
                v = -deref(it).first
                a_out[0] = <int> a
                b_out[0] = <int> b
                break
            inc(it)
        if v >= 0.0:
            return v
        for a in range(K):
            if self.markL[a] == self.stamp:
                continue
            for b in range(K):
                if self.markR[b] != self.stamp and not tch[a * K + b]:
                    a_out[0] = <int> a
                    b_out[0] = <int> b
                    return 0.0
        return v

    cdef double _pair_fmo_multimap(self, int *a_out, int *b_out) noexcept nogil:
        """The four cases of sect. 3.2 (messages are zero outside supL x supR)."""
        cdef Py_ssize_t K = self.K
        cdef const double *W = &self.w[self.table_off]
        cdef double best = NEG, v, rho = self.rho
        cdef int k, l, a, b, x
        a_out[0] = 0          # (a defined answer when no score compares: NaN scores)
        b_out[0] = 0
        for k in range(self.nsupL):                  # (iv) and (ii)
            a = self.supL[k]
            for l in range(self.nsupR):
                b = self.supR[l]
                v = W[a * K + b] + rho * (self.msgL[a] + self.msgR[b])
                if v > best:
                    best = v
                    a_out[0] = a
                    b_out[0] = b
            v = self._best_in_line(&self.row_map[a], &self.markR[0], a * K, 1, &x)
            if v > NEG:
                v += rho * self.msgL[a]
                if v > best:
                    best = v
                    a_out[0] = a
                    b_out[0] = x
        for l in range(self.nsupR):                  # (iii)
            b = self.supR[l]
            v = self._best_in_line(&self.col_map[b], &self.markL[0], b, K, &x)
            if v > NEG:
                v += rho * self.msgR[b]
                if v > best:
                    best = v
                    a_out[0] = x
                    b_out[0] = b
        v = self._best_outside(&a, &b)               # (i)
        if v > best:
            best = v
            a_out[0] = a
            b_out[0] = b
        return best

    cdef void _set_transition(self, long long p, double value) noexcept nogil:
        """W_trans[p] = value, keeping the multimaps in step."""
        cdef double *W = &self.w[self.table_off]
        cdef double old = W[p]
        cdef int a = <int> (p // self.K), b = <int> (p % self.K)
        if self.sublinear:
            if self.touched[p]:
                if old == value:
                    return
                self.row_map[a].erase(Entry(-old, b))
                self.col_map[b].erase(Entry(-old, a))
                self.all_map.erase(PairEntry(-old, p))
            else:
                self.touched[p] = 1
            self.row_map[a].insert(Entry(-value, b))
            self.col_map[b].insert(Entry(-value, a))
            self.all_map.insert(PairEntry(-value, p))
        W[p] = value

    cdef double _pair_step(self, Py_ssize_t i, Py_ssize_t g, double c) noexcept nogil:
        """Block AFW on pair (g, g+1)'s q; returns its FW gap at the first step, -1 on OOM."""
        cdef SVec *q = &self.qb[g]
        cdef Py_ssize_t K = self.K, it
        cdef const double *W = &self.w[self.table_off]
        cdef int j, jv, a, b, pa, pb, ystar
        cdef double best, qa, q2, amin, fw, aw, num, dd, ddL, ddR, nL, nR, gmax, gamma, qv, av
        cdef double gap = 0.0
        cdef bint away, drop
        for it in range(MAX_INNER):
            self._pair_messages(g, c)
            self.n_fmo_calls += 1
            if self.sublinear:
                best = self._pair_fmo_multimap(&pa, &pb)
            else:
                best = self._pair_fmo_exact(&pa, &pb)
            ystar = pa * <int> K + pb
            qa = 0.0
            q2 = 0.0
            amin = -NEG
            jv = -1
            for j in range(q.n):
                a = <int> (q.idx[j] // K)
                b = <int> (q.idx[j] % K)
                av = W[q.idx[j]] + self.rho * (self.msgL[a] + self.msgR[b])
                qa += q.val[j] * av
                q2 += q.val[j] * q.val[j]
                if av < amin:
                    amin = av
                    jv = j
            fw = best - qa
            aw = qa - amin if jv >= 0 else 0.0
            if it == 0:
                gap = c * fw
            nL = 0.0
            for j in range(self.nsupL):
                nL += self.muL[self.supL[j]] ** 2
            nR = 0.0
            for j in range(self.nsupR):
                nR += self.muR[self.supR[j]] ** 2
            away = jv >= 0 and aw > fw and q.val[jv] < VERTEX
            if away:
                qv = q.val[jv]
                a = <int> (q.idx[jv] // K)
                b = <int> (q.idx[jv] % K)
                num = c * aw
                dd = q2 - 2.0 * qv + 1.0
                gmax = qv / (1.0 - qv)
            else:
                a = pa
                b = pb
                num = c * fw
                dd = q2 - 2.0 * sv_get(q, ystar) + 1.0
                gmax = 1.0
            ddL = nL - 2.0 * self.muL[a] + 1.0
            ddR = nR - 2.0 * self.muR[b] + 1.0
            self._clear_scratch()
            if num <= 0.0 or dd <= 1e-300:
                break
            gamma = num / (c * c * (self.sigma * dd + self.rho * (ddL + ddR)))
            drop = away and gamma >= gmax
            if gamma > gmax:
                gamma = gmax
            if away:
                ystar = q.idx[jv]
            for j in range(q.n):           # W -= C_i sigma' gamma d
                self._set_transition(q.idx[j], W[q.idx[j]] + (-c * gamma if away else c * gamma) * self.sigma * q.val[j])
            self._set_transition(ystar, W[ystar] + (c * gamma if away else -c * gamma) * self.sigma)
            if sv_afw_step(q, away, jv, ystar, gamma) < 0:
                return OOM
            if not drop:
                break
        return gap

    cdef double _update_multipliers(self, Py_ssize_t i, double *infeas) noexcept nogil:
        """(13) for the (variable, pair) links of example i; returns 0, -1 on OOM. Adds
        C_i ||r||_1 to infeas."""
        cdef Py_ssize_t t, g, s0 = self.var_ptr[i], T = self.var_ptr[i + 1] - self.var_ptr[i]
        cdef double c = self.Cs[i], s = 0.0, e = self.eta
        cdef int k, y
        for t in range(T - 1):
            g = s0 + t
            self._pair_messages(g, c)    # muL/muR: the pair's marginals, on supL/supR
            for k in range(self.nsupL):
                y = self.supL[k]
                self.aU[y] = self.muL[y] - sv_get(&self.qu[g], y)      # r_L(y)
                s += c * abs(self.aU[y])
                if self.aU[y] != 0.0 and sv_add(&self.lamL[g], y, -e * c * self.aU[y]) < 0:
                    self._clear_scratch()
                    return -1.0
            for k in range(self.nsupR):
                y = self.supR[k]
                self.aU[y] = self.muR[y] - sv_get(&self.qu[g + 1], y)
                s += c * abs(self.aU[y])
                if self.aU[y] != 0.0 and sv_add(&self.lamR[g], y, -e * c * self.aU[y]) < 0:
                    self._clear_scratch()
                    return -1.0
            self._clear_scratch()
        infeas[0] += s
        return 0.0

    # ------------------------------------------------------------------ an example's sweeps

    cdef int _domain_example(self, Py_ssize_t i, double c, int sweeps, double *total, double *infeas) noexcept nogil:
        """`sweeps` sweeps over example i's variables and pair factors (interleaved), then its
        multiplier step; adds the first sweep's gaps to total; -1 on out of memory."""
        cdef Py_ssize_t t, s0 = self.var_ptr[i], T = self.var_ptr[i + 1] - self.var_ptr[i]
        cdef int sweep
        cdef double g, lw = self.lw[i]
        for sweep in range(sweeps):
            for t in range(T):
                g = self._unigram_step(i, s0 + t, t, T, c, lw)
                if g == OOM:
                    return -1
                if sweep == 0:
                    total[0] += g
                if t + 1 < T:
                    g = self._pair_step(i, s0 + t, c)
                    if g == OOM:
                        return -1
                    if sweep == 0:
                        total[0] += g
        return -1 if self._update_multipliers(i, infeas) < 0.0 else 0

    def _set_weights_domain(self, const double[::1] w):
        cdef Py_ssize_t j, K2 = self.K * self.K, off = self.table_off
        cdef long long p
        for j in range(self.w.shape[0]):
            self.w[j] = w[j]
        if self.sublinear:
            for j in range(self.K):
                self.row_map[j].clear()
                self.col_map[j].clear()
            self.all_map.clear()
            for p in range(K2):
                self.touched[p] = 0
                if self.w[off + p] != 0.0:
                    self.touched[p] = 1
                    self.row_map[p // self.K].insert(Entry(-self.w[off + p], <int> (p % self.K)))
                    self.col_map[p % self.K].insert(Entry(-self.w[off + p], <int> (p // self.K)))
                    self.all_map.insert(PairEntry(-self.w[off + p], p))

    # ------------------------------------------------------------------ for tests

    def unigram_messages(self, Py_ssize_t i, Py_ssize_t t):
        """Dense sum of the messages into variable t of example i (K values)."""
        self._require(False, "unigram_messages")
        cdef Py_ssize_t s0 = self.var_ptr[i], T = self.var_ptr[i + 1] - s0
        out = np.zeros(self.K)
        self._unigram_messages(s0 + t, t, T, self.Cs[i])
        for k in range(self.nsupL):
            out[self.supL[k]] = self.msgL[self.supL[k]]
        self._clear_scratch()
        return out

    def unigram_fmo(self, Py_ssize_t i, Py_ssize_t t, Py_ssize_t block):
        """(value, state, support) of the FMO of variable t of example i searching block `block` of nu."""
        self._require(False, "unigram_fmo")
        cdef Py_ssize_t s0 = self.var_ptr[i], T = self.var_ptr[i + 1] - s0
        cdef int y
        self._unigram_messages(s0 + t, t, T, self.Cs[i])
        v = self._unigram_fmo(s0 + t, t, T, self.lw[i], block, &y)
        sup = [self.supL[k] for k in range(self.nsupL)]
        self._clear_scratch()
        return v, y, sup

    def pair_fmo(self, Py_ssize_t i, Py_ssize_t t, bint multimap):
        """(value, a, b) of the FMO of pair factor (t, t+1) of example i: the multimap search or a full scan."""
        self._require(False, "pair_fmo")
        cdef Py_ssize_t s0 = self.var_ptr[i]
        cdef int a = -1, b = -1
        cdef double v
        if multimap and not self.sublinear:
            raise ValueError("the multimaps exist only with sublinear=True")
        self._pair_messages(s0 + t, self.Cs[i])
        v = self._pair_fmo_multimap(&a, &b) if multimap else self._pair_fmo_exact(&a, &b)
        self._clear_scratch()
        return v, a, b

    def pair_message_vectors(self, Py_ssize_t i, Py_ssize_t t):
        """Dense messages (m of variable t, m of variable t+1) into pair factor (t, t+1) of example i."""
        self._require(False, "pair_message_vectors")
        cdef Py_ssize_t s0 = self.var_ptr[i]
        left, right = np.zeros(self.K), np.zeros(self.K)
        self._pair_messages(s0 + t, self.Cs[i])
        for k in range(self.nsupL):
            left[self.supL[k]] = self.msgL[self.supL[k]]
        for k in range(self.nsupR):
            right[self.supR[k]] = self.msgR[self.supR[k]]
        self._clear_scratch()
        return left, right

    def perturb_transitions(self, entries, values):
        """Set entries of the shared table (pair indices) through the multimap maintenance (tests)."""
        self._require(False, "perturb_transitions")
        for p, v in zip(entries, values):
            self._set_transition(int(p), float(v))

    def multimap_consistent(self):
        """Whether the multimaps hold exactly the touched entries with their current values."""
        self._require(False, "multimap_consistent")
        W = np.asarray(self.w)[self.table_off:self.table_off + self.K * self.K]
        tch = np.flatnonzero(np.asarray(self.touched))
        if <Py_ssize_t> self.all_map.size() != tch.shape[0]:
            return False
        for p in tch:
            if self.all_map.count(PairEntry(-W[p], p)) != 1:
                return False
        return True


    # ================================================================== binary variables

    cdef inline long long _edge(self, int a, int b) noexcept nogil:
        """Index of the edge joining labels a and b (either order), -1 when none."""
        cdef int t
        if self.E == 0:
            return -1
        if not self.full:
            return self.edge_of[a * self.K + b]
        if a > b:
            t = a
            a = b
            b = t
        return <long long> a * (2 * self.K - a - 1) // 2 + (b - a - 1)

    cdef inline void _shift_D(self, int a, double v) noexcept nogil:
        """D_a += v, with the neighbours' sums."""
        cdef int j
        self.D[a] += v
        self.Dsum += v
        if not self.full:
            for j in range(self.nbr_ptr[a], self.nbr_ptr[a + 1]):
                self.ND[self.nbr[j]] += v

    cdef inline double _nd(self, int a) noexcept nogil:
        return self.Dsum - self.D[a] if self.full else self.ND[a]

    cdef int _activate(self, Py_ssize_t i, int k, double mu) noexcept nogil:
        """Adds label k to A_i at P(y_k = 1) = mu, with its explicit pairs to A_i at the consistent
        marginal (k's own implicit share was already counted as D_k; the partners' too)."""
        cdef Example *x = &self.ex[i]
        cdef int j, cap, ja, jb, npair = x.n_act
        cdef long long e
        cdef PairRec *r
        cdef double ma, mb
        if x.n_act == x.cap_act:
            cap = 4 if x.cap_act == 0 else 2 * x.cap_act
            x.act = <int *> realloc(x.act, cap * sizeof(int))
            x.mu = <double *> realloc(x.mu, cap * sizeof(double))
            if x.act == NULL or x.mu == NULL:
                return -1
            x.cap_act = cap
        if x.n_pair + npair > x.cap_pair:
            cap = max(2 * x.cap_pair, x.n_pair + npair, 8)
            x.pairs = <PairRec *> realloc(x.pairs, cap * sizeof(PairRec))
            if x.pairs == NULL:
                return -1
            x.cap_pair = cap
        for j in range(x.n_act):
            e = self._edge(x.act[j], k)
            if e < 0:
                continue
            r = &x.pairs[x.n_pair]
            x.n_pair += 1
            if self.ea[e] == x.act[j]:
                ja, jb = j, x.n_act
            else:
                ja, jb = x.n_act, j
            r.ia = ja
            r.ib = jb
            r.e = e
            r.lam_a = 0.0
            r.lam_b = 0.0
            # the coupling with marginals (mu_a, mu_b) and the most mass on (1, 1): consistent, and
            # at a vertex whenever one of them is (k enters at 0, or at its truth when created)
            ma = x.mu[j] if ja == j else mu
            mb = mu if ja == j else x.mu[j]
            r.q[3] = min(ma, mb)
            r.q[2] = ma - r.q[3]
            r.q[1] = mb - r.q[3]
            r.q[0] = 1.0 - r.q[1] - r.q[2] - r.q[3]
        x.act[x.n_act] = k
        x.mu[x.n_act] = mu
        x.n_act += 1
        return 0

    cdef inline double _W(self, long long e, int a, int b, int s) noexcept nogil:
        """Pair table entry s = 2 y_a + y_b of edge e = (a, b)."""
        cdef double v = self.Xt[4 * e + s]
        if s == 2:
            v += self.D[a]
        elif s == 1:
            v += self.D[b]
        elif s == 0:
            v -= self.D[a] + self.D[b]
        return v

    cdef inline void _add_X(self, long long e, int a, int b, int s, double v) noexcept nogil:
        """X_e[s] += v, keeping the row sums RX in step."""
        self.Xt[4 * e + s] += v
        if s == 2:
            self.RX[a] += v
        elif s == 1:
            self.RX[b] += v
        elif s == 0:
            self.RX[a] -= v
            self.RX[b] -= v

    cdef double _implicit_score(self, Py_ssize_t i, int a) noexcept nogil:
        """sum over a's implicit partners (neighbours outside A_i) of W(a on, b off) - W(0, 0)."""
        cdef Example *x = &self.ex[i]
        cdef int j, b
        cdef long long e
        cdef double s = 2.0 * self.deg[a] * self.D[a] + self._nd(a) + self.RX[a]
        for j in range(x.n_act):
            b = x.act[j]
            if b == a:
                continue
            e = self._edge(a, b)
            if e < 0:
                continue
            s -= 2.0 * self.D[a] + self.D[b] - self.Xt[4 * e] + self.Xt[4 * e + (2 if self.ea[e] == a else 1)]
        return s

    cdef double _label_step(self, Py_ssize_t i, int j, double c, double lw) noexcept nogil:
        """Exact minimisation of L over mu of A_i's j-th label; returns its box FW gap."""
        cdef Example *x = &self.ex[i]
        cdef int a = x.act[j], p, ja, b
        cdef const int *y = &self.truth[i * self.K]
        cdef Row r = self.X.row(i)
        cdef PairRec *rec
        cdef double g, h, mu = x.mu[j], msum = 0.0, delta, mnew, gap
        cdef Py_ssize_t K = self.K
        cdef int n_exp = 0
        cdef long long e
        for p in range(x.n_pair):
            rec = &x.pairs[p]
            if rec.ia == j:
                msum += rec.lam_a - c * (rec.q[2] + rec.q[3] - mu)
                n_exp += 1
            elif rec.ib == j:
                msum += rec.lam_b - c * (rec.q[1] + rec.q[3] - mu)
                n_exp += 1
        g = (row_dot(r, &self.w[0], K, a) + self._implicit_score(i, a) + lw * (1.0 - 2.0 * y[a])
             - 2.0 * self.rho * msum)
        h = c * c * (self.sigma * (self.X.sqnorm(i) + 2.0 * (self.deg[a] - n_exp)) + 2.0 * self.rho * n_exp)
        gap = c * g * ((1.0 if g > 0.0 else 0.0) - mu)
        if h <= 0.0:
            return gap
        mnew = mu + c * g / h
        if mnew < 0.0:
            mnew = 0.0
        elif mnew > 1.0:
            mnew = 1.0
        delta = mnew - mu
        if delta == 0.0:
            return gap
        x.mu[j] = mnew
        delta *= self.sigma                  # (w's change; mu moved by the unscaled step)
        row_axpy(r, -c * delta, &self.w[0], K, a)
        self._shift_D(a, -c * delta)
        for ja in range(x.n_act):            # explicit partners keep their tables
            b = x.act[ja]
            if b == a:
                continue
            e = self._edge(a, b)
            if e < 0:
                continue
            if self.ea[e] == a:
                self._add_X(e, a, b, 2, c * delta)
                self._add_X(e, a, b, 0, -c * delta)
            else:
                self._add_X(e, b, a, 1, c * delta)
                self._add_X(e, b, a, 0, -c * delta)
        return gap

    cdef double _edge_step(self, Py_ssize_t i, int p, double c) noexcept nogil:
        """AFW on an explicit pair's 4 states; returns its FW gap at the first step."""
        cdef Example *x = &self.ex[i]
        cdef PairRec *rec = &x.pairs[p]
        cdef int a = x.act[rec.ia], b = x.act[rec.ib], s, it, sbest, sv
        cdef double av[4]
        cdef double ma, mb, best, qa, q2, amin, fw, aw, num, dd, da, db, gmax, gamma, gap = 0.0
        cdef bint away, drop
        cdef double d[4]
        for it in range(MAX_INNER):
            ma = rec.lam_a - c * (rec.q[2] + rec.q[3] - x.mu[rec.ia])
            mb = rec.lam_b - c * (rec.q[1] + rec.q[3] - x.mu[rec.ib])
            best = NEG
            sbest = 0
            qa = 0.0
            q2 = 0.0
            amin = -NEG
            sv = -1
            for s in range(4):
                av[s] = self._W(rec.e, a, b, s) + 2.0 * self.rho * (ma * (s >= 2) + mb * (s & 1))
                if av[s] > best:
                    best = av[s]
                    sbest = s
                qa += rec.q[s] * av[s]
                q2 += rec.q[s] * rec.q[s]
                if rec.q[s] > 0.0 and av[s] < amin:
                    amin = av[s]
                    sv = s
            fw = best - qa
            aw = qa - amin if sv >= 0 else 0.0
            if it == 0:
                gap = c * fw
            away = sv >= 0 and aw > fw and rec.q[sv] < VERTEX
            for s in range(4):
                if away:
                    d[s] = rec.q[s] - (1.0 if s == sv else 0.0)
                else:
                    d[s] = (1.0 if s == sbest else 0.0) - rec.q[s]
            if away:
                num = c * aw
                gmax = rec.q[sv] / (1.0 - rec.q[sv])
            else:
                num = c * fw
                gmax = 1.0
            dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]
            da = d[2] + d[3]
            db = d[1] + d[3]
            if num <= 0.0 or dd <= 1e-300:
                break
            gamma = num / (c * c * (self.sigma * dd + 2.0 * self.rho * (da * da + db * db)))
            drop = away and gamma >= gmax
            if gamma > gmax:
                gamma = gmax
            for s in range(4):
                if d[s] != 0.0:
                    rec.q[s] += gamma * d[s]
                    if rec.q[s] < 1e-15:
                        rec.q[s] = 0.0
                    self._add_X(rec.e, a, b, s, -c * gamma * self.sigma * d[s])
            renormalize(rec.q, 4)
            if not drop:
                break
        return gap

    cdef double _activation_search(self, Py_ssize_t i, double c, double lw, Py_ssize_t block,
                                   int *k_out) noexcept nogil:
        """The inactive label of largest gain in block `block` of nu (x.w_k + implicit pair
        scores + delta(1) - delta(0)); -1e300 when the block has none."""
        cdef Example *x = &self.ex[i]
        cdef Py_ssize_t K = self.K, lo = block * K // self.nu, hi = (block + 1) * K // self.nu, k, j
        cdef Row r = self.X.row(i)
        cdef double *sc = &self.scores[0]
        cdef double best = NEG, v
        self.n_fmo_calls += 1
        self.stamp += 1
        for j in range(x.n_act):
            self.mark[x.act[j]] = self.stamp
        row_gemv_range(r, &self.w[0], K, lo, hi, sc)
        for k in range(lo, hi):
            if self.mark[k] == self.stamp:
                continue
            v = sc[k - lo] + self._implicit_score(i, <int> k) + lw
            if v > best:
                best = v
                k_out[0] = <int> k
        return best

    cdef double _edge_multipliers(self, Py_ssize_t i, double c) noexcept nogil:
        cdef Example *x = &self.ex[i]
        cdef PairRec *rec
        cdef int p
        cdef double ra, rb, s = 0.0
        for p in range(x.n_pair):
            rec = &x.pairs[p]
            ra = rec.q[2] + rec.q[3] - x.mu[rec.ia]
            rb = rec.q[1] + rec.q[3] - x.mu[rec.ib]
            rec.lam_a -= self.eta * c * ra
            rec.lam_b -= self.eta * c * rb
            s += 2.0 * c * (abs(ra) + abs(rb))      # ||r||_1 of the two-component links
        return s

    cdef int _binary_example(self, Py_ssize_t i, double c, int sweeps, double *total, double *infeas) noexcept nogil:
        """The activation search, `sweeps` sweeps over example i's active variables and explicit
        pairs, then its multiplier step; adds the first sweep's gaps and the activation gain to
        total; -1 on out of memory."""
        cdef Example *x = &self.ex[i]
        cdef Py_ssize_t block = rng_below(&self.rng_state, self.nu) if self.nu > 1 else 0
        cdef int k = -1, j, p, sweep
        cdef double g, lw = self.lw[i]
        g = self._activation_search(i, c, lw, block, &k)
        if k >= 0 and g > 0.0:
            total[0] += c * g
            if self._activate(i, k, 0.0) < 0:
                return -1
            self.n_activations += 1
        for sweep in range(sweeps):
            for j in range(x.n_act):
                g = self._label_step(i, j, c, lw)
                if sweep == 0:
                    total[0] += g
            for p in range(x.n_pair):
                g = self._edge_step(i, p, c)
                if sweep == 0:
                    total[0] += g
        infeas[0] += self._edge_multipliers(i, c)
        return 0

    def _set_weights_binary(self, const double[::1] w):
        cdef Py_ssize_t j, e, off = self.table_off
        cdef int a, b
        for j in range(off):
            self.w[j] = w[j]
        for j in range(self.K):
            self.RX[j] = 0.0
        for e in range(self.E):
            a = self.ea[e]
            b = self.eb[e]
            self.Xt[4 * e] = w[off + 4 * e] + self.D[a] + self.D[b]
            self.Xt[4 * e + 1] = w[off + 4 * e + 1] - self.D[b]
            self.Xt[4 * e + 2] = w[off + 4 * e + 2] - self.D[a]
            self.Xt[4 * e + 3] = w[off + 4 * e + 3]
            self.RX[a] += self.Xt[4 * e + 2] - self.Xt[4 * e]
            self.RX[b] += self.Xt[4 * e + 1] - self.Xt[4 * e]
        for j in range(off, self.w.shape[0]):
            self.w[j] = w[j]


    # ------------------------------------------------------------------ for tests

    def activation_search(self, Py_ssize_t i, Py_ssize_t block):
        """(gain, label) of the activation search of example i over block `block` (tests)."""
        self._require(True, "activation_search")
        cdef int k = -1
        v = self._activation_search(i, self.Cs[i], self.lw[i], block, &k)
        return v, k

    def active_labels(self, Py_ssize_t i):
        self._require(True, "active_labels")
        return [self.ex[i].act[j] for j in range(self.ex[i].n_act)], [self.ex[i].mu[j] for j in range(self.ex[i].n_act)]

    def explicit_pairs(self, Py_ssize_t i):
        """[(a, b, q over 2 y_a + y_b, lambda_a, lambda_b)] of example i's explicit pair factors (tests)."""
        self._require(True, "explicit_pairs")
        cdef Example *x = &self.ex[i]
        cdef PairRec *r
        out = []
        for p in range(x.n_pair):
            r = &x.pairs[p]
            out.append((x.act[r.ia], x.act[r.ib], [r.q[0], r.q[1], r.q[2], r.q[3]], r.lam_a, r.lam_b))
        return out
