# cython: language_level=3
"""Sequential dual method (SDM) for the n-slack margin-rescaling structural SVM dual.

    min_alpha  D(alpha) = 1/2 ||w(alpha)||^2 - sum_i sum_y alpha_i(y) Delta(y, y_i)
    s.t.       alpha_i(y) >= 0,  sum_y alpha_i(y) = C_i,   w = sum_i sum_y alpha_i(y) dphi_i(y),

with dphi_i(y) = phi(x_i, y_i) - phi(x_i, y): the dual of
    min_w 1/2 ||w||^2 + sum_i C_i max_y [Delta(y, y_i) + f(y) - f(y_i)].

Each example keeps a working set V_i (workingset.pyx). A visit computes H_i(y) = Delta(y, y_i) -
w . dphi_i(y) (minus the dual gradient) on V_i and runs SMO steps on the maximal violating pair
(up = argmax H, down = argmin H over alpha > 0) until the pair's gap is tiny, updating H through the
cached Gram matrix and w once at the end. Type-I passes first call the loss-augmented oracle
(lambda = 1) and add its label to V_i; type-II passes only re-optimise working sets of size >= 2.
Members with alpha = 0 that do not violate are dropped (shrinking); the oracle re-adds them when
needed. KKT violation of example i: max_y H_i(y) - min_{alpha_i(y) > 0} H_i(y), zero at the
optimum for every i (Keerthi et al. 2008; Balamurugan et al. 2011).
"""
import numpy as np

from libc.stdlib cimport malloc, realloc, free

from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.workingset cimport WorkingSets
from ssvmlinear._kernels.dualsolver cimport DualSolver
from ssvmlinear._kernels.rng cimport rng_shuffle


cdef class SDMSolver(DualSolver):
    cdef double *H
    cdef double *dalpha
    cdef char *flags
    cdef Py_ssize_t scratch_cap
    cdef public long long n_smo_steps
    cdef public int max_inner

    def __cinit__(self):
        self.H = NULL
        self.dalpha = NULL
        self.flags = NULL
        self.scratch_cap = 0

    def __init__(self, Structure structure, Cs, unsigned long long seed=0, int max_inner=100):
        DualSolver.__init__(self, structure, Cs, seed)
        self.max_inner = max_inner
        self.n_smo_steps = 0
        if self._ensure_scratch(8) < 0:
            raise MemoryError()

    def __dealloc__(self):
        free(self.H)
        free(self.dalpha)
        free(self.flags)

    cdef int _ensure_scratch(self, Py_ssize_t m) noexcept nogil:
        cdef double *h
        cdef double *d
        cdef char *f
        if m <= self.scratch_cap:
            return 0
        m = max(m, 2 * self.scratch_cap)
        h = <double *> realloc(self.H, m * sizeof(double))
        if h == NULL:
            return -1
        self.H = h
        d = <double *> realloc(self.dalpha, m * sizeof(double))
        if d == NULL:
            return -1
        self.dalpha = d
        f = <char *> realloc(self.flags, m * sizeof(char))
        if f == NULL:
            return -1
        self.flags = f
        self.scratch_cap = m
        return 0

    cdef double _visit(self, Py_ssize_t i, bint use_oracle, double inner_tol) noexcept nogil:
        """Optimise example i's sub-problem; returns its KKT violation before the visit (-1 on OOM)."""
        cdef double *w = &self.w[0]
        cdef double m, d, gap, q, delta, viol, hmin
        cdef int k, n, up, down, step
        cdef Py_ssize_t c
        cdef double *alpha
        cdef double *G
        cdef double *H = self.H
        cdef double *dalpha = self.dalpha
        if use_oracle:
            self.st.oracle(w, i, 1.0, &self.ybuf[0], &m, &d, &self.work[0])
            self.n_oracle_calls += 1
            if self.ws.find(i, &self.ybuf[0]) < 0 and self.ws.append(i, &self.ybuf[0], d) < 0:
                return -1.0
        n = self.ws.size[i]
        if n < 2:
            return 0.0
        if self._ensure_scratch(n) < 0:
            return -1.0
        H = self.H
        dalpha = self.dalpha
        alpha = self.ws.alpha(i)
        G = self.ws.gram(i)
        c = self.ws.cap[i]
        self.st.margins(w, i, self.ws.labels(i), n, H, &self.work[0], use_oracle)
        for k in range(n):
            H[k] += self.ws.loss(i)[k]
            dalpha[k] = 0.0
        viol = 0.0
        for step in range(self.max_inner):
            up = 0
            down = -1
            for k in range(n):
                if H[k] > H[up]:
                    up = k
                if alpha[k] > 0.0 and (down < 0 or H[k] < H[down]):
                    down = k
            if down < 0:
                break
            gap = H[up] - H[down]
            if step == 0:
                viol = gap
            if gap <= inner_tol or up == down:
                break
            q = G[up * c + up] + G[down * c + down] - 2.0 * G[up * c + down]
            delta = gap / q if q > 1e-300 else alpha[down]
            if delta >= alpha[down]:
                delta = alpha[down]
                alpha[down] = 0.0  # exactly zero, so that shrinking sees it
            else:
                alpha[down] -= delta
            alpha[up] += delta
            dalpha[up] += delta
            dalpha[down] -= delta
            for k in range(n):
                H[k] -= delta * (G[up * c + k] - G[down * c + k])
            self.n_smo_steps += 1
        for k in range(n):
            if dalpha[k] != 0.0:
                self.st.update(w, i, dalpha[k], self.ws.label(i, k))
        # Shrinking: drop members with alpha = 0 that do not violate the optimality conditions.
        hmin = 1e300
        for k in range(n):
            if alpha[k] > 0.0 and H[k] < hmin:
                hmin = H[k]
        for k in range(n):
            self.flags[k] = alpha[k] > 0.0 or H[k] >= hmin
        self.ws.keep(i, self.flags)
        return viol

    def run_pass(self, bint use_oracle, double inner_tol):
        """One pass over the examples in random order; returns the maximal KKT violation seen."""
        cdef Py_ssize_t t, i, m = 0
        cdef double v, vmax = 0.0
        cdef bint oom = False
        with nogil:
            # Type-II passes visit only working sets of size >= 2 (the others have no violation).
            for i in range(self.n):
                if self.Cs[i] > 0.0 and (use_oracle or self.ws.size[i] >= 2):
                    self.order[m] = i
                    m += 1
            if m > 1:
                rng_shuffle(&self.rng_state, &self.order[0], m)
            for t in range(m):
                i = self.order[t]
                v = self._visit(i, use_oracle, inner_tol)
                if v == -1.0:
                    oom = True
                    break
                if v > vmax:
                    vmax = v
        if oom:
            raise MemoryError("SDM working sets")
        return vmax

    def primal(self):
        """1/2 ||w||^2 + sum_i C_i max(0, max_y H_i(y)) (one oracle call per example)."""
        cdef Py_ssize_t i
        cdef double m, d, v, s = 0.0
        cdef double *w = &self.w[0]
        with nogil:
            for i in range(self.n):
                if self.Cs[i] > 0.0:
                    v = self.st.oracle(w, i, 1.0, &self.ybuf[0], &m, &d, &self.work[0])
                    if v > 0.0:
                        s += self.Cs[i] * v
        return 0.5 * float(np.dot(self.w, self.w)) + s

    def set_state(self, state, Cs=None):
        """As DualSolver.set_state; an example whose old C was 0 starts at alpha_i(y_i) = C_i
        (SDM needs sum_y alpha_i(y) = C_i)."""
        cdef Py_ssize_t i
        cdef int j
        old = np.asarray(state["Cs"], dtype=np.float64)
        DualSolver.set_state(self, state, Cs)
        for i in range(self.n):
            if old[i] <= 0 and self.Cs[i] > 0:
                j = self.ws.find(i, self.st.true_label(i))
                if j < 0:
                    j = self.ws.append(i, self.st.true_label(i), 0.0)
                self.ws.alpha(i)[j] = self.Cs[i]
        self.recompute_w()
