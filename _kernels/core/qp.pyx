# cython: language_level=3
"""Dense QP on the simplex, for the cutting plane's restricted dual:

    min_beta  1/2 beta' H beta - b' beta     s.t.  beta >= 0,  sum(beta) = total

solved by a primal active-set method (exact on the face it settles on; SMO alone converges slowly
on the cutting plane's ill-conditioned Gram matrices), then polished and certified by
SMO on the maximal violating pair (the same step as SDM's), warm-started from the beta passed in.
The one-slack dual's `sum(beta) <= C` becomes an equality by a zero constraint (a = 0, b = 0)
whose beta is the unused budget.
"""
import numpy as np

from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memset
from libc.math cimport fabs


cdef int simplex_qp(const double *H, Py_ssize_t ld, const double *b, double *beta, double *grad,
                    Py_ssize_t m, double tol, int max_iter) noexcept nogil:
    """H: m x m (row stride ld), symmetric PSD; beta feasible on entry. grad is scratch (m).
    Returns the number of SMO steps (max_iter if the pair gap stayed above tol)."""
    cdef Py_ssize_t j, k, up, down
    cdef double gap, q, delta
    cdef int it
    for j in range(m):
        grad[j] = -b[j]
        for k in range(m):
            grad[j] += H[j * ld + k] * beta[k]
    for it in range(max_iter):
        up = 0       # most negative gradient: increase
        down = -1    # most positive gradient among beta > 0: decrease
        for j in range(m):
            if grad[j] < grad[up]:
                up = j
            if beta[j] > 0.0 and (down < 0 or grad[j] > grad[down]):
                down = j
        if down < 0:
            return it
        gap = grad[down] - grad[up]
        if gap <= tol or up == down:
            return it
        q = H[up * ld + up] + H[down * ld + down] - 2.0 * H[up * ld + down]
        delta = gap / q if q > 1e-300 else beta[down]
        if delta >= beta[down]:
            delta = beta[down]
            beta[down] = 0.0
        else:
            beta[down] -= delta
        beta[up] += delta
        for j in range(m):       # H is symmetric: rows up and down, contiguous
            grad[j] += delta * (H[up * ld + j] - H[down * ld + j])
    return max_iter


cdef int _solve_kkt(double *K, Py_ssize_t n, double *rhs) noexcept nogil:
    """Solve K x = rhs in place (n x n, row-major, destroyed) by Gaussian elimination with partial
    pivoting; -1 when a pivot is negligible (singular or nearly so)."""
    cdef Py_ssize_t i, j, k, p
    cdef double piv, f, t, scale = 0.0
    for i in range(n * n):
        if fabs(K[i]) > scale:
            scale = fabs(K[i])
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if fabs(K[i * n + k]) > fabs(K[p * n + k]):
                p = i
        piv = K[p * n + k]
        if fabs(piv) <= 1e-13 * scale:
            return -1
        if p != k:
            for j in range(k, n):
                t = K[k * n + j]
                K[k * n + j] = K[p * n + j]
                K[p * n + j] = t
            t = rhs[k]
            rhs[k] = rhs[p]
            rhs[p] = t
        for i in range(k + 1, n):
            f = K[i * n + k] / piv
            if f != 0.0:
                for j in range(k + 1, n):
                    K[i * n + j] -= f * K[k * n + j]
                rhs[i] -= f * rhs[k]
    for k in range(n - 1, -1, -1):
        t = rhs[k]
        for j in range(k + 1, n):
            t -= K[k * n + j] * rhs[j]
        rhs[k] = t / K[k * n + k]
    return 0


cdef int simplex_qp_active_set(const double *H, Py_ssize_t ld, const double *b, double *beta, double *grad,
                               Py_ssize_t m, double tol, int max_rounds, double *K, int *F) noexcept nogil:
    """Primal active-set method for the same QP (min 1/2 beta'H beta - b'beta on the simplex),
    from the feasible beta passed in: on the face F = {beta > 0} solve the equality-constrained
    QP exactly (KKT system [H_FF 1; 1' 0], Gaussian elimination), step towards its solution as far
    as beta >= 0 allows (dropping the blocking index), and once on the face's optimum add the index
    with the most negative reduced gradient. Exact in finitely many rounds where SMO's first-order
    steps crawl on ill-conditioned working sets (nearly parallel cutting planes). K: scratch of
    (m+1)^2 + m+1 doubles, F: m ints. Returns the number of rounds, or -1 when a KKT system was singular
    or the rounds ran out (beta is then feasible, and as good as the last step left it)."""
    cdef Py_ssize_t j, k, p, q, nf = 0, n, blk
    cdef double t, d, s, gmin, gbest, hs
    cdef int r
    cdef Py_ssize_t jbest
    cdef double *x = K + (m + 1) * (m + 1)     # the KKT solution (nf + 1 <= m + 1)
    for j in range(m):
        if beta[j] > 0.0:
            F[nf] = <int> j
            nf += 1
    if nf == 0:
        return -1
    for r in range(max_rounds):
        n = nf + 1
        # the border (sum(beta) = 1) is scaled to H's diagonal: with 1s beside a Gram of large
        # entries the last pivot would fall below the singularity threshold for no reason
        hs = 0.0
        for p in range(nf):
            hs = max(hs, H[F[p] * ld + F[p]])
        if hs <= 0.0:
            hs = 1.0
        for p in range(nf):
            for q in range(nf):
                K[p * n + q] = H[F[p] * ld + F[q]]
            K[p * n + nf] = hs
            K[nf * n + p] = hs
            x[p] = b[F[p]]
        K[nf * n + nf] = 0.0
        x[nf] = hs
        if _solve_kkt(K, n, x) < 0:
            return -1
        # ratio test along x_F - beta_F
        t = 1.0
        blk = -1
        for p in range(nf):
            d = x[p] - beta[F[p]]
            if d < 0.0 and beta[F[p]] + t * d < 0.0:
                t = beta[F[p]] / (-d)
                blk = p
        s = 0.0
        for p in range(nf):
            beta[F[p]] += t * (x[p] - beta[F[p]])
            if beta[F[p]] < 0.0 or p == blk:
                beta[F[p]] = 0.0
            s += beta[F[p]]
        if s <= 0.0:
            return -1
        for p in range(nf):
            beta[F[p]] /= s
        if t <= 0.0:               # degenerate: no move possible (leave it to SMO)
            return -1
        if blk >= 0 or t < 1.0:
            q = 0
            for p in range(nf):
                if beta[F[p]] > 0.0:
                    F[q] = F[p]
                    q += 1
            nf = q
            if nf == 0:
                return -1
            continue
        # on the face's optimum: reduced gradients of the indices outside F
        gmin = 1e300
        for p in range(nf):
            s = -b[F[p]]
            for q in range(nf):
                s += H[F[p] * ld + F[q]] * beta[F[q]]
            if s < gmin:
                gmin = s
        jbest = -1
        gbest = gmin - tol
        for j in range(m):
            if beta[j] > 0.0:
                continue
            s = -b[j]
            for q in range(nf):
                s += H[j * ld + F[q]] * beta[F[q]]
            if s < gbest:
                gbest = s
                jbest = j
        if jbest < 0:
            return r + 1
        # keep the face's indices first, then the new one
        k = 0
        for p in range(nf):
            if beta[F[p]] > 0.0:
                F[k] = F[p]
                k += 1
        F[k] = <int> jbest
        nf = k + 1
    return -1


cdef int simplex_qp_hybrid(const double *H, Py_ssize_t ld, const double *b, double *beta, double *grad,
                           Py_ssize_t m, double tol, int max_iter, double *K, int *F) noexcept nogil:
    """The active-set method, then SMO from where it stopped (SMO certifies the pair gap <= tol,
    and takes over when a KKT system was singular). Returns SMO's steps."""
    simplex_qp_active_set(H, ld, b, beta, grad, m, tol, <int> (2 * m + 10), K, F)
    return simplex_qp(H, ld, b, beta, grad, m, tol, max_iter)


def solve_simplex_qp(H, b, beta0=None, double total=1.0, double tol=1e-12, int max_iter=1000000,
                     bint active_set=False):
    """Python entry point (tests and drivers): returns (beta, n_smo_steps). active_set: run the
    active-set method first (total must be 1 then)."""
    cdef double[:, ::1] Hv = np.ascontiguousarray(H, dtype=np.float64)
    cdef double[::1] bv = np.ascontiguousarray(b, dtype=np.float64)
    cdef Py_ssize_t m = bv.shape[0]
    if Hv.shape[0] != m or Hv.shape[1] != m:
        raise ValueError("H must be m x m for m = len(b)")
    if m == 0:
        return np.zeros(0), 0
    if beta0 is None:
        beta = np.full(m, total / m)
    else:
        beta = np.array(beta0, dtype=np.float64)
        if beta.shape != (m,) or np.any(beta < 0) or abs(beta.sum() - total) > 1e-9 * max(1.0, total):
            raise ValueError("beta0 must be feasible: non-negative and summing to total")
    cdef double[::1] betav = beta
    grad = np.zeros(m)
    cdef double[::1] gv = grad
    cdef int steps
    if active_set and abs(total - 1.0) > 1e-12:
        raise ValueError("the active-set method solves on the unit simplex (total = 1)")
    Karr = np.zeros((m + 1) * (m + 2))
    if active_set and beta0 is None:       # start at the best vertex
        j = int(np.argmax(np.asarray(bv) - 0.5 * np.diag(np.asarray(Hv))))
        beta[:] = 0.0
        beta[j] = 1.0
    Farr = np.zeros(m, dtype=np.int32)
    cdef double[::1] Kv = Karr
    cdef int[::1] Fv = Farr
    with nogil:
        if active_set:
            steps = simplex_qp_hybrid(&Hv[0, 0], m, &bv[0], &betav[0], &gv[0], m, tol, max_iter, &Kv[0], &Fv[0])
        else:
            steps = simplex_qp(&Hv[0, 0], m, &bv[0], &betav[0], &gv[0], m, tol, max_iter)
    return beta, steps


# The Gram part of OneSlackQP's tolerance, relative to its largest diagonal entry: a few hundred
# times the double epsilon, below which the rounding of G beta hides the pair gap.
cdef double QP_ROUNDING = 1e-14


cdef inline double _dot(const double *x, const double *y, Py_ssize_t d) noexcept nogil:
    # four partial sums: lets the compiler keep several FMAs in flight (no -ffast-math needed)
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t j, d4 = d - d % 4
    for j in range(0, d4, 4):
        s0 += x[j] * y[j]
        s1 += x[j + 1] * y[j + 1]
        s2 += x[j + 2] * y[j + 2]
        s3 += x[j + 3] * y[j + 3]
    for j in range(d4, d):
        s0 += x[j] * y[j]
    return (s0 + s1) + (s2 + s3)


cdef class OneSlackQP:
    """The cutting plane's working set and its restricted dual, in compiled code.

    Constraints w . a_j >= b_j - xi are kept as dense rows of A (n_weights doubles each) with
    their Gram matrix G = A A'; row 0 is (0, 0), whose beta is the unused part of the budget, so
    the dual  max_beta  b' beta - 1/2 beta' G beta  s.t. beta >= 0, sum(beta) = 1  is a QP on the
    simplex (solved by simplex_qp, warm-started from the last beta). `add(a, b)` appends a
    constraint, re-solves, sets w = A' beta (rows with beta > 0 only), xi = max(0, max_j b_j -
    (G beta)_j) and drops constraints whose beta stayed 0 for more than `inactive_after`
    consecutive solves (svm_struct's rule; their beta is 0, so neither w nor the dual changes).
    The QP is solved to a pair gap of qp_tol times the largest |b_j| (no finer than the rounding
    of G beta allows).
    """
    cdef readonly Py_ssize_t n_weights
    cdef readonly Py_ssize_t m              # rows in use (row 0 included)
    cdef Py_ssize_t cap
    cdef double *A
    cdef double *G
    cdef double *b
    cdef double *beta
    cdef double *grad
    cdef double *Gb
    cdef long long *idle
    cdef double *K                          # (cap+1)^2 scratch of the active-set method
    cdef int *F
    cdef readonly int inactive_after
    cdef readonly double qp_tol
    cdef readonly int max_steps
    cdef readonly long long qp_steps        # SMO steps, all solves
    cdef readonly long long n_dropped
    cdef readonly double xi
    cdef readonly double dual
    cdef double[::1] w_view
    cdef object w_arr

    def __cinit__(self):
        self.A = NULL
        self.G = NULL
        self.b = NULL
        self.beta = NULL
        self.grad = NULL
        self.Gb = NULL
        self.idle = NULL
        self.K = NULL
        self.F = NULL

    def __init__(self, Py_ssize_t n_weights, int inactive_after=50, double qp_tol=1e-10, int max_steps=1000000):
        self.n_weights = n_weights
        self.inactive_after = inactive_after
        self.qp_tol = qp_tol
        self.max_steps = max_steps
        self.cap = 0
        self.m = 1
        if self._reserve(64) < 0:
            raise MemoryError()
        memset(self.A, 0, max(n_weights, 1) * sizeof(double))
        self.G[0] = 0.0
        self.b[0] = 0.0
        self.beta[0] = 1.0
        self.idle[0] = 0
        self.qp_steps = 0
        self.n_dropped = 0
        self.xi = 0.0
        self.dual = 0.0
        self.w_arr = np.zeros(n_weights)
        self.w_view = self.w_arr

    def __dealloc__(self):
        free(self.A)
        free(self.G)
        free(self.b)
        free(self.beta)
        free(self.grad)
        free(self.Gb)
        free(self.idle)
        free(self.K)
        free(self.F)

    cdef int _reserve(self, Py_ssize_t cap) noexcept nogil:
        """Capacity for `cap` rows (keeps the first m rows and G[:m, :m]); -1 on OOM."""
        cdef Py_ssize_t j, d = max(self.n_weights, 1)
        cdef double *A
        cdef double *G
        if cap <= self.cap:
            return 0
        A = <double *> realloc(self.A, cap * d * sizeof(double))
        if A == NULL:
            return -1
        self.A = A
        G = <double *> malloc(cap * cap * sizeof(double))
        if G == NULL:
            return -1
        for j in range(self.m if self.cap else 0):
            memcpy(G + j * cap, self.G + j * self.cap, self.m * sizeof(double))
        free(self.G)
        self.G = G
        self.b = <double *> realloc(self.b, cap * sizeof(double))
        self.beta = <double *> realloc(self.beta, cap * sizeof(double))
        self.grad = <double *> realloc(self.grad, cap * sizeof(double))
        self.Gb = <double *> realloc(self.Gb, cap * sizeof(double))
        self.idle = <long long *> realloc(self.idle, cap * sizeof(long long))
        self.K = <double *> realloc(self.K, (cap + 1) * (cap + 2) * sizeof(double))
        self.F = <int *> realloc(self.F, cap * sizeof(int))
        if (self.b == NULL or self.beta == NULL or self.grad == NULL or self.Gb == NULL or self.idle == NULL
                or self.K == NULL or self.F == NULL):
            return -1
        self.cap = cap
        return 0

    @property
    def w(self):
        """w = A' beta (a view, overwritten by the next add)."""
        return self.w_arr

    @property
    def n_constraints(self):
        return self.m - 1

    def beta_(self):
        """beta of the rows in use (row 0 first)."""
        return np.array([self.beta[j] for j in range(self.m)])

    def rhs(self):
        """b of the rows in use (row 0 first)."""
        return np.array([self.b[j] for j in range(self.m)])

    def rows(self):
        """A (the rows in use, row 0 first), a copy."""
        return np.array(<double[:self.m, :max(self.n_weights, 1)]> self.A)[:, :self.n_weights].copy()

    def gram(self):
        return np.array([[self.G[j * self.cap + k] for k in range(self.m)] for j in range(self.m)])

    def add(self, const double[::1] a, double b):
        """Append the constraint (a, b), re-solve, update w, xi, the dual; returns (xi, dual)."""
        cdef Py_ssize_t d = self.n_weights
        if a.shape[0] != d:
            raise ValueError("a has the wrong length")
        cdef int status
        with nogil:
            status = self._add(&a[0], b)
        if status < 0:
            raise MemoryError("cutting-plane working set")
        return self.xi, self.dual

    cdef int _add(self, const double *a, double bnew) noexcept nogil:
        cdef Py_ssize_t d = self.n_weights, j, k, m, keep, cap
        cdef double *row
        cdef double *w = &self.w_view[0] if d > 0 else NULL
        cdef double s, bj, gmax = 0.0, scale, tol
        if self.m == self.cap and self._reserve(2 * self.cap) < 0:
            return -1
        m = self.m
        cap = self.cap
        row = self.A + m * d
        memcpy(row, a, d * sizeof(double))
        self.G[m * cap] = 0.0
        self.G[m] = 0.0
        for j in range(1, m + 1):
            s = _dot(self.A + j * d, row, d)
            self.G[m * cap + j] = s
            self.G[j * cap + m] = s
        self.b[m] = bnew
        self.beta[m] = 0.0
        self.idle[m] = 0
        m += 1
        self.m = m
        # the tolerance scales with the problem: gradients are differences of terms as large as
        # max_j b_j and, in rounding, eps times the Gram's largest entry
        scale = 1.0
        for j in range(m):
            scale = max(scale, fabs(self.b[j]))
            gmax = max(gmax, self.G[j * cap + j])
        tol = max(self.qp_tol * scale, QP_ROUNDING * gmax)
        self.qp_steps += simplex_qp_hybrid(self.G, cap, self.b, self.beta, self.grad, m, tol,
                                           self.max_steps, self.K, self.F)
        # w = A' beta over the rows in use
        memset(w, 0, d * sizeof(double))
        for j in range(1, m):
            bj = self.beta[j]
            if bj > 0.0:
                row = self.A + j * d
                for k in range(d):
                    w[k] += bj * row[k]
        # G beta, xi, dual
        gmax = 0.0
        s = 0.0
        for j in range(m):
            bj = 0.0
            for k in range(m):
                if self.beta[k] > 0.0:
                    bj += self.G[j * cap + k] * self.beta[k]
            self.Gb[j] = bj
            if j > 0 and self.b[j] - bj > gmax:
                gmax = self.b[j] - bj
            s += self.beta[j] * (self.b[j] - 0.5 * bj)
        self.xi = gmax
        self.dual = s
        # inactive constraints
        keep = 0
        for j in range(m):
            if self.beta[j] > 0.0:
                self.idle[j] = 0
            else:
                self.idle[j] += 1
            if j == 0 or self.idle[j] <= self.inactive_after:
                keep += 1
        if keep < m:
            self._compact()
        return 0

    cdef void _compact(self) noexcept nogil:
        # keep flags first (grad is scratch: simplex_qp recomputes it), then move rows in place
        cdef Py_ssize_t d = self.n_weights, cap = self.cap, j, k, p = 0, q
        cdef double *keep = self.grad
        for j in range(self.m):
            keep[j] = 1.0 if (j == 0 or self.idle[j] <= self.inactive_after) else 0.0
        for j in range(self.m):
            if keep[j] == 0.0:
                continue
            if p != j:
                memcpy(self.A + p * d, self.A + j * d, d * sizeof(double))
                self.b[p] = self.b[j]
                self.beta[p] = self.beta[j]
                self.idle[p] = self.idle[j]
                self.Gb[p] = self.Gb[j]
            q = 0
            for k in range(self.m):
                if keep[k] != 0.0:
                    self.G[p * cap + q] = self.G[j * cap + k]
                    q += 1
            p += 1
        self.n_dropped += self.m - p
        self.m = p
