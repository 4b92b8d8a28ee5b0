# cython: language_level=3
"""Block-coordinate Frank-Wolfe on the structural SVM dual (Lacoste-Julien, Jaggi, Schmidt &
Pletscher 2013, Alg. 3 with exact line search), margin rescaling.

With per-example weights C_i the dual is max sum_i sum_y alpha_i(y) Delta_i(y) - 1/2 ||w||^2,
w = sum_i sum_y alpha_i(y) dphi_i(y), alpha_i >= 0 summing to C_i. A block step on example i asks
the loss-augmented oracle for yhat = argmax_y H_i(y) (the corner C_i e_yhat of block i's simplex
maximises the linearised dual), then moves alpha_i towards it by the step gamma in [0, 1] that
maximises the dual exactly:
    gamma = g_i / ||sum_y d_y dphi_i(y)||^2,  d = C_i e_yhat - alpha_i,
    g_i = C_i H_i(yhat) - sum_y alpha_i(y) H_i(y)  (block i's Frank-Wolfe duality gap).
The paper keeps w_i = sum_y alpha_i(y) dphi_i(y) as a dense vector per example; here alpha_i lives
in the label store's working set V_i (labels the oracle returned, with their Gram matrix), so a
step costs the oracle, |V_i| margins and one merged update, and memory grows with the labels
found, not with n times the weight dimension. Sum of g_i over a pass: the stopping rule.

With away_steps (GDMM on a hierarchy, one factor per example: its factorwise oracle is the
structure's loss-augmented oracle and no consistency constraint links factors, so Yen et al.'s
method is this block method), a block whose away gap sum_y alpha_i(y) H_i(y) - C_i H_i(v), v the
active label of lowest H_i, exceeds its Frank-Wolfe gap moves mass away from v instead:
alpha_i <- alpha_i + gamma (alpha_i - C_i e_v), gamma <= alpha_i(v) / (C_i - alpha_i(v)), by the
same exact line search (Lacoste-Julien & Jaggi 2015's away-step Frank-Wolfe, per block).

Surrogates linear in the margin (slack rescaling, beta and generalized scaling: choi-thesis's
BCFW with slack rescaling and its siblings): psi(m, Delta) = b(Delta) + s(Delta) m, so each label is
a corner with the margin scaled, s dphi_i(y), and the loss b: the dual is BCFW's over these
corners (the loss column holds b, the aux column s; Gram rows and updates are scaled by s), and
a block's corner comes from the surrogate's search instead of the loss-augmented oracle.

sigma (DualSolver's: Catalyst's inner problems) scales the curvature of every line search and
every update of w, whose margins then give the inner dual's gradient: alpha stays feasible for the
original dual.
"""
import numpy as np

from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.dualsolver cimport DualSolver
from ssvmlinear._kernels.rng cimport rng_shuffle
from ssvmlinear._kernels.surrogate cimport Surrogate, psi, psi_dh, SURR_MARGIN
from ssvmlinear._kernels.search cimport StructureOracle, SearchResult, run_search


cdef class BCFWSolver(DualSolver):
    cdef double[::1] q          # per example alpha_i' G_i alpha_i = ||w_i||^2
    cdef double[::1] H
    cdef double[::1] coefs
    cdef double[::1] grow_
    cdef double[::1] slack
    cdef Py_ssize_t cap_
    cdef public bint away_steps
    cdef Surrogate sur
    cdef bint scaled               # a surrogate other than margin rescaling: corners s dphi, loss b
    cdef int method, max_calls
    cdef double ratio
    cdef StructureOracle orc

    def __init__(self, Structure structure, Cs, unsigned long long seed=0, int kind=0, double alpha=0.0,
                 double beta=0.0, int method=0, double ratio=1.0, int max_calls=50):
        """kind, alpha, beta: the surrogate (margin rescaling by default; otherwise one linear in
        the margin), searched with `method` (search.pxd's numbering) within max_calls calls."""
        DualSolver.__init__(self, structure, Cs, seed, kind != SURR_MARGIN)
        self.sur.kind, self.sur.alpha, self.sur.beta = kind, alpha, beta
        self.scaled = kind != SURR_MARGIN
        self.method, self.ratio, self.max_calls = method, ratio, max_calls
        if self.scaled:
            self.orc = StructureOracle(structure, capacity=2 * max_calls + 8)
        self.q = np.zeros(max(self.n, 1))
        self.cap_ = 0
        self._reserve(16)
        self.slack = np.zeros(max(self.n, 1))
        self.away_steps = False

    def _reserve(self, Py_ssize_t need):
        if need > self.cap_:
            self.cap_ = max(2 * need, 16)
            self.H = np.zeros(self.cap_)
            self.coefs = np.zeros(self.cap_)
            self.grow_ = np.zeros(self.cap_)

    cdef double _step(self, Py_ssize_t i) noexcept nogil:
        """One block step on example i; returns its Frank-Wolfe gap g_i (-1e300 on OOM)."""
        cdef double *w = &self.w[0]
        cdef double C = self.Cs[i], m, d, g, Ga_j, denom, gamma
        cdef double *alpha
        cdef double *G
        cdef double *row = &self.grow_[0]
        cdef int j, k, n
        cdef Py_ssize_t c
        if C <= 0.0:
            return 0.0
        if self.scaled:
            j = self._search_corner(i)
            if j == -3:
                return -3e300
        else:
            self.st.oracle(w, i, 1.0, &self.ybuf[0], &m, &d, &self.work[0])
            self.n_oracle_calls += 1
            j = self.ws.find(i, &self.ybuf[0])
            if j < 0:
                j = self.ws.add(i, &self.ybuf[0], d)
        if j < 0:
            return -1e300
        n = self.ws.size[i]
        if n > self.cap_:
            return -2e300            # the caller grows the buffers and retries
        alpha = self.ws.alpha(i)
        G = self.ws.gram(i)
        c = self.ws.cap[i]
        # H over V_i (after the plain oracle its unary scores are still in work)
        self.st.margins(w, i, self.ws.labels(i), n, &self.H[0], &self.work[0], not self.scaled)
        g = 0.0
        for k in range(n):
            if self.scaled:
                self.H[k] *= self.ws.aux(i)[k]
            self.H[k] += self.ws.loss(i)[k]
            g -= alpha[k] * self.H[k]
        g += C * self.H[j]
        if self.away_steps and self._away_step(i, n, C, g, alpha, G, c):
            return g
        if g <= 0.0:
            return 0.0
        # (G alpha)_j from the cached Gram row (or one computed now); ||w_i||^2 = q_i kept up to date
        self._gram_row(i, j, n, G, c, row)
        Ga_j = 0.0
        for k in range(n):
            Ga_j += alpha[k] * row[k]
        denom = self.sigma * (C * C * row[j] - 2.0 * C * Ga_j + self.q[i])
        # (no curvature along the direction, as for an example without features: the dual rises
        # linearly, so the whole step)
        gamma = 1.0 if denom <= 1e-300 * C * C else min(g / denom, 1.0)
        # alpha <- (1 - gamma) alpha + gamma C e_j; w moves by gamma sum_y d_y dphi(y)
        for k in range(n):
            self.coefs[k] = -gamma * alpha[k]
            alpha[k] *= 1.0 - gamma
        self.coefs[j] += gamma * C
        alpha[j] += gamma * C
        self._scale_coefs(i, n)
        self.st.update_many(w, i, &self.coefs[0], self.ws.labels(i), n, &self.work[0])
        self.q[i] = ((1.0 - gamma) * (1.0 - gamma) * self.q[i] + 2.0 * gamma * (1.0 - gamma) * C * Ga_j
                     + gamma * gamma * C * C * row[j])
        return g

    cdef inline void _scale_coefs(self, Py_ssize_t i, int n) noexcept nogil:
        """w's change is sigma times alpha's (coefs), each label's dphi scaled by its s."""
        cdef int k
        if self.sigma != 1.0:
            for k in range(n):
                self.coefs[k] *= self.sigma
        if self.scaled:
            for k in range(n):
                self.coefs[k] *= self.ws.aux(i)[k]

    cdef inline void _gram_row(self, Py_ssize_t i, int j, int n, const double *G, Py_ssize_t c,
                               double *row) noexcept nogil:
        """The Gram row of corner j over V_i (s_j s_k G_jk with surrogates)."""
        cdef int k
        if G != NULL:
            for k in range(n):
                row[k] = G[j * c + k]
        else:
            self.st.gram_row(i, self.ws.label(i, j), self.ws.labels(i), n, row, &self.work[0])
        if self.scaled:
            for k in range(n):
                row[k] *= self.ws.aux(i)[j] * self.ws.aux(i)[k]

    cdef int _search_corner(self, Py_ssize_t i) noexcept nogil:
        """The surrogate's search at w: the index of its label in V_i (added with loss b = psi(0,
        Delta) and scale s = psi_h(0, Delta)); the true label when no label has psi > 0; -1 on
        OOM, -3 when the search failed."""
        cdef SearchResult r
        cdef int j
        cdef const int *y
        cdef double b, s
        self.orc.set_example(&self.w[0], 1.0, i)
        r = run_search(self.orc, &self.sur, self.method, 1.0, self.ratio, self.max_calls, 0)
        self.n_oracle_calls += r.n_calls
        if r.error:
            return -3
        if r.slot1 < 0 or r.value <= 0.0:
            y = self.st.true_label(i)
            b, s = 0.0, 0.0
        else:
            y = self.orc.label(r.slot1)
            b, s = psi(&self.sur, 0.0, r.g), psi_dh(&self.sur, 0.0, r.g)
        j = self.ws.find(i, y)
        if j < 0:
            j = self.ws.add(i, y, b)
            if j >= 0:
                self.ws.aux(i)[j] = s
        return j

    cdef int _away_step(self, Py_ssize_t i, int n, double C, double g, double *alpha, double *G,
                        Py_ssize_t c) noexcept nogil:
        """The away step of block i when its away gap exceeds the Frank-Wolfe gap g (H over V_i
        in self.H); returns 1 when taken, 0 when the Frank-Wolfe step is to be taken instead. The
        mass C_i - sum alpha_i sits on the true label (H = 0, dphi = 0): it is a vertex too."""
        cdef double *w = &self.w[0]
        cdef double *row = &self.grow_[0]
        cdef double s = 0.0, total = 0.0, implicit, Hv, ga, Ga_v = 0.0, Gvv = 0.0, denom, gamma, gmax
        cdef int k, v = -1
        for k in range(n):
            if alpha[k] > 0.0:
                s += alpha[k] * self.H[k]
                total += alpha[k]
                if v < 0 or self.H[k] < self.H[v]:
                    v = k
        implicit = C - total
        Hv = self.H[v] if v >= 0 else 0.0
        if implicit > 1e-12 * C and (v < 0 or Hv > 0.0):
            v = -1                          # away from the true label
            Hv = 0.0
        elif v < 0 or alpha[v] >= C:
            return 0
        ga = s - C * Hv
        if not ga > g:
            return 0
        if v >= 0:
            self._gram_row(i, v, n, G, c, row)
            for k in range(n):
                Ga_v += alpha[k] * row[k]
            Gvv = row[v]
            gmax = alpha[v] / (C - alpha[v])
        else:
            gmax = implicit / total
        denom = self.sigma * (self.q[i] - 2.0 * C * Ga_v + C * C * Gvv)
        gamma = gmax if denom <= 1e-300 * C * C else min(ga / denom, gmax)
        # alpha <- (1 + gamma) alpha - gamma C e_v; w moves by gamma (w_i - C dphi(v))
        for k in range(n):
            self.coefs[k] = gamma * alpha[k]
            alpha[k] *= 1.0 + gamma
        if v >= 0:
            self.coefs[v] -= gamma * C
            alpha[v] -= gamma * C
            if gamma == gmax:
                alpha[v] = 0.0              # (exactly: a drop step leaves the label)
        self._scale_coefs(i, n)
        self.st.update_many(w, i, &self.coefs[0], self.ws.labels(i), n, &self.work[0])
        self.q[i] = ((1.0 + gamma) * (1.0 + gamma) * self.q[i] - 2.0 * gamma * (1.0 + gamma) * C * Ga_v
                     + gamma * gamma * C * C * Gvv)
        return 1

    def run_pass(self):
        """One pass over the examples in a random order; returns the sum of the block gaps."""
        cdef Py_ssize_t t, i
        cdef double g, total = 0.0
        rng_shuffle(&self.rng_state, &self.order[0], self.n)
        for t in range(self.n):
            i = self.order[t]
            while True:
                with nogil:
                    g = self._step(i)
                if g == -2e300:
                    self._reserve(self.ws.size[i])
                    continue
                break
            if g == -1e300:
                raise MemoryError("BCFW working sets")
            if g == -3e300:
                self.st.check_implemented("the surrogate's search")
                raise ValueError(f"BCFW: the search failed on example {i}")
            total += g
            self.ws.maybe_compact()
        return total

    def recompute_q(self):
        """||w_i||^2 of every example from its working set (after a warm start)."""
        cdef Py_ssize_t i
        cdef int k, k2, n
        cdef double s
        for i in range(self.n):
            n = self.ws.size[i]
            self._reserve(n)
            s = 0.0
            for k in range(n):
                if self.ws.alpha(i)[k] == 0.0:
                    continue
                self._gram_row(i, k, n, NULL, 0, &self.grow_[0])
                for k2 in range(n):
                    s += self.ws.alpha(i)[k] * self.ws.alpha(i)[k2] * self.grow_[k2]
            self.q[i] = s

    def recompute_w(self):
        """w = sum over the corners of alpha s dphi (s = 1: margin rescaling)."""
        cdef Py_ssize_t i
        cdef int k
        if not self.scaled:
            DualSolver.recompute_w(self)
            return
        self.w[:] = 0.0
        for i in range(self.n):
            for k in range(self.ws.size[i]):
                if self.ws.alpha(i)[k] != 0.0:
                    self.st.update(&self.w[0], i, self.ws.alpha(i)[k] * self.ws.aux(i)[k], self.ws.label(i, k))

    def primal(self):
        """1/2 ||w||^2 + sum_i C_i max(0, max_y H_i(y)) (one oracle call per example)."""
        cdef Py_ssize_t i
        cdef double m, d, s = 0.0
        for i in range(self.n):
            if self.Cs[i] > 0.0:
                with nogil:
                    self.st.oracle(&self.w[0], i, 1.0, &self.ybuf[0], &m, &d, &self.work[0])
                if m + d > 0.0:
                    s += self.Cs[i] * (m + d)
        return 0.5 * float(np.dot(self.w, self.w)) + s
