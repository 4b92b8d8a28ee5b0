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
from libc.math cimport fabs, sqrt


cdef struct Face:
    # the active-set method's face F (indices into the QP's rows) and the Cholesky factor L of
    # M_FF = H_FF + c 11' (row-major, leading dimension ldl, lower triangle)
    double *L
    Py_ssize_t ldl
    int *F
    Py_ssize_t nf
    double c
    long long work       # multiply-adds spent on the factor (appends, deletions)


# A face index whose pivot in the factor falls to this fraction of c (the Gram's largest diagonal
# entry) is (nearly) an affine combination of the others: the face's system counts as singular.
cdef double FACE_PIVOT = 1e-13


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


cdef int _face_append(const double *H, Py_ssize_t ld, Face *fc, int j) noexcept nogil:
    """Append index j to the face: the new row of the Cholesky factor of M_FF = H_FF + c 11'
    (forward substitution). -1 (face unchanged) when its pivot is negligible: j's constraint is
    (nearly) an affine combination of the face's."""
    cdef Py_ssize_t p, q, nf = fc.nf, ldl = fc.ldl
    cdef double s, d2
    cdef double *L = fc.L
    cdef double *row = L + nf * ldl
    d2 = H[j * ld + j] + fc.c
    for p in range(nf):
        s = H[fc.F[p] * ld + j] + fc.c
        for q in range(p):
            s -= L[p * ldl + q] * row[q]
        s /= L[p * ldl + p]
        row[p] = s
        d2 -= s * s
    fc.work += (nf + 1) * (nf + 1) // 2
    if d2 <= FACE_PIVOT * fc.c:
        return -1
    row[nf] = sqrt(d2)
    fc.F[nf] = j
    fc.nf = nf + 1
    return 0


cdef void _face_delete(Face *fc, Py_ssize_t p) noexcept nogil:
    """Remove the face's p-th index: drop row p of the factor, then Givens rotations of columns
    (k, k+1), k >= p, restore its triangle (L L' is unchanged by them)."""
    cdef Py_ssize_t i, k, nf = fc.nf, ldl = fc.ldl
    cdef double a, bb, r, cs, sn, x, y
    cdef double *L = fc.L
    for i in range(p, nf - 1):
        memcpy(L + i * ldl, L + (i + 1) * ldl, (i + 2) * sizeof(double))
        fc.F[i] = fc.F[i + 1]
    nf -= 1
    for k in range(p, nf):
        a = L[k * ldl + k]
        bb = L[k * ldl + k + 1]
        r = sqrt(a * a + bb * bb)
        cs = a / r
        sn = bb / r
        for i in range(k, nf):
            x = L[i * ldl + k]
            y = L[i * ldl + k + 1]
            L[i * ldl + k] = cs * x + sn * y
            L[i * ldl + k + 1] = cs * y - sn * x
        L[k * ldl + k] = r
    fc.work += (nf - p) * (nf - p)
    fc.nf = nf


cdef void _face_solve2(const Face *fc, double *x, double *v) noexcept nogil:
    """x = M_FF^{-1} x and v = M_FF^{-1} v in place (the factor's triangular solves, both right-hand
    sides in one sweep over its rows)."""
    cdef Py_ssize_t p, q, nf = fc.nf, ldl = fc.ldl
    cdef double s, t, dp
    cdef const double *row
    for p in range(nf):
        row = fc.L + p * ldl
        s = x[p]
        t = v[p]
        for q in range(p):
            s -= row[q] * x[q]
            t -= row[q] * v[q]
        x[p] = s / row[p]
        v[p] = t / row[p]
    for p in range(nf - 1, -1, -1):       # L' z = y by columns of L' (rows of L, contiguous)
        row = fc.L + p * ldl
        dp = row[p]
        x[p] /= dp
        v[p] /= dp
        s = x[p]
        t = v[p]
        for q in range(p):
            x[q] -= row[q] * s
            v[q] -= row[q] * t


cdef int simplex_qp_active_set(const double *H, Py_ssize_t ld, const double *b, double *beta,
                               Py_ssize_t m, double tol, int max_rounds, Face *fc, double *x) noexcept nogil:
    """Primal active-set method for the same QP (min 1/2 beta'H beta - b'beta on the simplex),
    from the feasible beta passed in: on the face F = {beta > 0} solve the equality-constrained
    QP exactly, step towards its solution as far as beta >= 0 allows (dropping the blocking
    index), and once on the face's optimum add the index with the most negative reduced gradient.
    Exact in finitely many rounds where SMO's first-order steps crawl on ill-conditioned working
    sets (nearly parallel cutting planes). The face's KKT system is solved with a Cholesky factor
    of M_FF = H_FF + c 11' (on the simplex 1/2 beta'M beta differs from 1/2 beta'H beta by the
    constant c/2, and the zero row's M is then positive), kept in `fc` and updated as indices join
    or leave the face (rows appended, Givens rotations), also from one call to the next: each
    round costs O(|F|^2), not the O(|F|^3) of a factorisation. x: scratch of 2m doubles. Returns
    the number of rounds, or -1 when the face's system was singular or the rounds ran out (beta
    is then feasible, and as good as the last step left it)."""
    cdef Py_ssize_t j, p, nf, blk, jbest
    cdef double t, d, s, gmin, gbest, u1, v1, lam
    cdef double *v = x + m
    cdef int r
    # the face carried over loses the indices whose beta fell to 0 and gains those that rose
    _face_prune(fc, beta)
    for j in range(m):
        x[j] = 0.0
    for p in range(fc.nf):
        x[fc.F[p]] = 1.0
    for j in range(m):
        if beta[j] > 0.0 and x[j] == 0.0 and _face_append(H, ld, fc, <int> j) < 0:
            return -1
    if fc.nf == 0:
        return -1
    for r in range(max_rounds):
        nf = fc.nf
        # the face's optimum: M x = b_F - lam 1 with sum(x) = 1
        for p in range(nf):
            x[p] = b[fc.F[p]]
            v[p] = 1.0
        _face_solve2(fc, x, v)
        u1 = 0.0
        v1 = 0.0
        for p in range(nf):
            u1 += x[p]
            v1 += v[p]
        if not v1 > 0.0:
            return -1
        lam = (u1 - 1.0) / v1
        for p in range(nf):
            x[p] -= lam * v[p]
        # ratio test along x_F - beta_F
        t = 1.0
        blk = -1
        for p in range(nf):
            d = x[p] - beta[fc.F[p]]
            if d < 0.0 and beta[fc.F[p]] + t * d < 0.0:
                t = beta[fc.F[p]] / (-d)
                blk = p
        s = 0.0
        for p in range(nf):
            beta[fc.F[p]] += t * (x[p] - beta[fc.F[p]])
            if beta[fc.F[p]] < 0.0 or p == blk:
                beta[fc.F[p]] = 0.0
            s += beta[fc.F[p]]
        if s <= 0.0:
            return -1
        for p in range(nf):
            beta[fc.F[p]] /= s
        if t <= 0.0:               # degenerate: no move possible (leave it to SMO)
            return -1
        if blk >= 0 or t < 1.0:
            _face_prune(fc, beta)
            if fc.nf == 0:
                return -1
            continue
        # on the face's optimum: reduced gradients of the indices outside F against the face's
        # common one, H_FF x - b_F = -(lam + c) (from M x = b_F - lam 1 and sum(x) = 1)
        gmin = -(lam + fc.c)
        jbest = -1
        gbest = gmin - tol
        for j in range(m):
            if beta[j] > 0.0:
                continue
            s = -b[j]
            for p in range(nf):
                s += H[j * ld + fc.F[p]] * beta[fc.F[p]]
            if s < gbest:
                gbest = s
                jbest = j
        if jbest < 0:
            return r + 1
        _face_prune(fc, beta)
        if _face_append(H, ld, fc, <int> jbest) < 0:
            return -1
    return -1


cdef void _face_prune(Face *fc, const double *beta) noexcept nogil:
    """Remove the face's indices whose beta is 0."""
    cdef Py_ssize_t p = fc.nf - 1
    while p >= 0:
        if not beta[fc.F[p]] > 0.0:
            _face_delete(fc, p)
        p -= 1


cdef double _simplex_objective(const double *H, Py_ssize_t ld, const double *b, const double *beta,
                               Py_ssize_t m) noexcept nogil:
    """1/2 beta'H beta - b'beta over the support of beta."""
    cdef Py_ssize_t j, k
    cdef double f = 0.0, s
    for j in range(m):
        if beta[j] > 0.0:
            s = 0.5 * H[j * ld + j] * beta[j]
            for k in range(j):
                if beta[k] > 0.0:
                    s += H[j * ld + k] * beta[k]
            f += beta[j] * (s - b[j])
    return f


cdef int simplex_qp_hybrid(const double *H, Py_ssize_t ld, const double *b, double *beta, double *grad,
                           Py_ssize_t m, double tol, int max_iter, Face *fc, double *x) noexcept nogil:
    """The active-set method, then SMO from where it stopped (SMO certifies the pair gap <= tol,
    and takes over when a face's system was singular). When the warm start fails (its support's
    system is singular: an earlier SMO run left beta on affinely dependent planes, or the carried
    factor drifted) the active-set method starts once more from the best vertex with a fresh
    factor, and the better of the two points is kept: SMO's first-order steps crawl on the nearly
    parallel planes where this happens, and from a singular support the active-set method could
    never take over again. Returns SMO's steps."""
    cdef Py_ssize_t j, jbest = 0
    cdef double f_warm
    if simplex_qp_active_set(H, ld, b, beta, m, tol, <int> (2 * m + 10), fc, x) < 0:
        f_warm = _simplex_objective(H, ld, b, beta, m)
        memcpy(grad, beta, m * sizeof(double))        # (grad is SMO's scratch)
        for j in range(m):
            if b[j] - 0.5 * H[j * ld + j] > b[jbest] - 0.5 * H[jbest * ld + jbest]:
                jbest = j
            beta[j] = 0.0
        beta[jbest] = 1.0
        fc.nf = 0
        if (simplex_qp_active_set(H, ld, b, beta, m, tol, <int> (2 * m + 10), fc, x) < 0
                and _simplex_objective(H, ld, b, beta, m) > f_warm):
            memcpy(beta, grad, m * sizeof(double))
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
    Larr = np.zeros(m * m)
    Xarr = np.zeros(2 * m)
    if active_set and beta0 is None:       # start at the best vertex
        j = int(np.argmax(np.asarray(bv) - 0.5 * np.diag(np.asarray(Hv))))
        beta[:] = 0.0
        beta[j] = 1.0
    Farr = np.zeros(m, dtype=np.int32)
    cdef double[::1] Lv = Larr
    cdef double[::1] Xv = Xarr
    cdef int[::1] Fv = Farr
    cdef Face fc
    fc.L = &Lv[0]
    fc.ldl = m
    fc.F = &Fv[0]
    fc.nf = 0
    fc.work = 0
    fc.c = float(np.max(np.diag(np.asarray(Hv))))
    if not fc.c > 0.0:
        fc.c = 1.0
    with nogil:
        if active_set:
            steps = simplex_qp_hybrid(&Hv[0, 0], m, &bv[0], &betav[0], &gv[0], m, tol, max_iter, &fc, &Xv[0])
        else:
            steps = simplex_qp(&Hv[0, 0], m, &bv[0], &betav[0], &gv[0], m, tol, max_iter)
    return beta, steps


# OneSlackQP recomputes its face's factor from scratch every this many solves: the updates'
# rounding stays far below FACE_PIVOT, and a rebuild costs about as much as this many solves' updates
# (benchmarks/cutting_plane.py).
cdef long long REFACTOR_EVERY = 100


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
    cdef Face face                          # the active-set method's face, kept between solves
    cdef double *X                          # 2 cap scratch of the active-set method
    cdef long long solves_since_factor
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
        self.face.L = NULL
        self.face.F = NULL
        self.face.nf = 0
        self.face.ldl = 0
        self.face.c = 0.0
        self.face.work = 0
        self.X = NULL

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
        free(self.face.L)
        free(self.face.F)
        free(self.X)

    cdef int _reserve(self, Py_ssize_t cap) noexcept nogil:
        """Capacity for `cap` rows (keeps the first m rows and G[:m, :m]); -1 on OOM."""
        cdef Py_ssize_t j, d = max(self.n_weights, 1)
        cdef double *A
        cdef double *G
        cdef double *L
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
        self.X = <double *> realloc(self.X, 2 * cap * sizeof(double))
        self.face.F = <int *> realloc(self.face.F, cap * sizeof(int))
        L = <double *> malloc(cap * cap * sizeof(double))
        if L == NULL:
            return -1
        for j in range(self.face.nf):
            memcpy(L + j * cap, self.face.L + j * self.face.ldl, (j + 1) * sizeof(double))
        free(self.face.L)
        self.face.L = L
        self.face.ldl = cap
        if (self.b == NULL or self.beta == NULL or self.grad == NULL or self.Gb == NULL or self.idle == NULL
                or self.X == NULL or self.face.F == NULL):
            return -1
        self.cap = cap
        return 0

    @property
    def w(self):
        """w = A' beta (a view, overwritten by the next add)."""
        return self.w_arr

    @property
    def factor_work(self):
        """Multiply-adds spent on the active-set method's Cholesky factors, all solves."""
        return self.face.work

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
        # the face's factor is recomputed from scratch (by the active set's appends) now and then,
        # for the rounding of its updates, and when the Gram's scale moved away from its c
        if gmax <= 0.0:
            gmax = 1.0
        if (self.solves_since_factor >= REFACTOR_EVERY or not (0.25 * self.face.c <= gmax <= 4.0 * self.face.c)):
            self.face.nf = 0
            self.face.c = gmax
            self.solves_since_factor = 0
        self.solves_since_factor += 1
        self.qp_steps += simplex_qp_hybrid(self.G, cap, self.b, self.beta, self.grad, m, tol,
                                           self.max_steps, &self.face, self.X)
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
        # the face's indices follow their rows (an index dropped: the factor is rebuilt next solve)
        q = 0
        for j in range(self.m):
            self.X[j] = -1.0 if keep[j] == 0.0 else <double> q
            if keep[j] != 0.0:
                q += 1
        for k in range(self.face.nf):
            if self.X[self.face.F[k]] < 0.0:
                self.face.nf = 0
                break
            self.face.F[k] = <int> self.X[self.face.F[k]]
        self.m = p
