# cython: language_level=3
"""Sequential dual method (SDM) for the n-slack margin-rescaling structural SVM dual.

    min_alpha  D(alpha) = 1/2 ||w(alpha)||^2 - sum_i sum_y alpha_i(y) Delta(y, y_i)
    s.t.       alpha_i(y) >= 0,  sum_y alpha_i(y) = C_i,   w = sum_i sum_y alpha_i(y) dphi_i(y),

with dphi_i(y) = phi(x_i, y_i) - phi(x_i, y): the dual of
    min_w 1/2 ||w||^2 + sum_i C_i max_y [Delta(y, y_i) + f(y) - f(y_i)].

Each example keeps a working set V_i of labels (flat int arrays) with their alpha and loss. A visit
computes H_i(y) = Delta(y, y_i) - w . dphi_i(y) (= minus the dual gradient) on V_i and runs SMO steps
on the maximal violating pair (up = argmax H, down = argmin H over alpha > 0) until the pair's gap is
tiny, updating H through the structure's gram() and w once at the end. Type-I passes first call the
loss-augmented oracle (lambda = 1) and add its label to V_i; type-II passes only re-optimise working
sets of size >= 2. Members with alpha = 0 that do not violate are dropped (shrinking); the oracle
re-adds them when needed. KKT violation of example i: max_y H_i(y) - min_{alpha_i(y) > 0} H_i(y);
it is zero at the optimum for every i (Keerthi et al. 2008; Balamurugan et al. 2011).
"""
import numpy as np

from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy
from libc.stdint cimport uint64_t

from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.rng cimport rng_shuffle


cdef class SDMSolver:
    cdef Structure st
    cdef double[::1] w
    cdef double[::1] Cs
    cdef Py_ssize_t n
    # working sets: ws_lab[i] holds ws_n[i] labels of length label_len(i)
    cdef int *ws_n
    cdef int *ws_cap
    cdef int **ws_lab
    cdef double **ws_alpha
    cdef double **ws_loss
    # scratch (single-threaded solver)
    cdef double[::1] work
    cdef int[::1] ybuf
    cdef double *H
    cdef double *dalpha
    cdef double *G           # n x n Gram matrix of the visited working set
    cdef Py_ssize_t scratch_cap
    cdef Py_ssize_t[::1] order
    cdef uint64_t rng_state
    cdef public long long n_oracle_calls
    cdef public long long n_smo_steps
    cdef public int max_inner

    def __cinit__(self):
        self.ws_n = NULL
        self.ws_cap = NULL
        self.ws_lab = NULL
        self.ws_alpha = NULL
        self.ws_loss = NULL
        self.H = NULL
        self.dalpha = NULL
        self.G = NULL
        self.n = 0

    def __init__(self, Structure structure, Cs, unsigned long long seed=0, int max_inner=100):
        cdef Py_ssize_t i, L
        cdef const int *yi
        self.st = structure
        self.n = structure.n_examples
        self.Cs = np.ascontiguousarray(Cs, dtype=np.float64).copy()
        if self.Cs.shape[0] != self.n:
            raise ValueError("need one C per example")
        self.w = np.zeros(structure.n_weights, dtype=np.float64)
        self.work = np.zeros(max(structure.workspace_size(), 1), dtype=np.float64)
        self.ybuf = np.zeros(max(structure.max_label_len, 1), dtype=np.int32)
        self.order = np.arange(self.n, dtype=np.intp)
        self.rng_state = seed
        self.max_inner = max_inner
        self.n_oracle_calls = 0
        self.n_smo_steps = 0
        self.ws_n = <int *> malloc(max(self.n, 1) * sizeof(int))
        self.ws_cap = <int *> malloc(max(self.n, 1) * sizeof(int))
        self.ws_lab = <int **> malloc(max(self.n, 1) * sizeof(int *))
        self.ws_alpha = <double **> malloc(max(self.n, 1) * sizeof(double *))
        self.ws_loss = <double **> malloc(max(self.n, 1) * sizeof(double *))
        if not (self.ws_n and self.ws_cap and self.ws_lab and self.ws_alpha and self.ws_loss):
            raise MemoryError()
        for i in range(self.n):
            self.ws_lab[i] = NULL
            self.ws_alpha[i] = NULL
            self.ws_loss[i] = NULL
            self.ws_n[i] = 0
            self.ws_cap[i] = 0
        self._ensure_scratch(8)
        # alpha_i(y_i) = C_i: w = 0 is feasible.
        for i in range(self.n):
            L = structure.label_len(i)
            yi = structure.true_label(i)
            if self._append(i, yi, L, 0.0) < 0:
                raise MemoryError()
            self.ws_alpha[i][0] = self.Cs[i]

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.ws_lab != NULL:
            for i in range(self.n):
                free(self.ws_lab[i])
                free(self.ws_alpha[i])
                free(self.ws_loss[i])
        free(self.ws_n)
        free(self.ws_cap)
        free(self.ws_lab)
        free(self.ws_alpha)
        free(self.ws_loss)
        free(self.H)
        free(self.dalpha)
        free(self.G)

    cdef int _ensure_scratch(self, Py_ssize_t m) noexcept nogil:
        cdef double *h
        cdef double *d
        cdef double *g
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
        g = <double *> realloc(self.G, m * m * sizeof(double))
        if g == NULL:
            return -1
        self.G = g
        self.scratch_cap = m
        return 0

    cdef int _append(self, Py_ssize_t i, const int *y, Py_ssize_t L, double loss) noexcept nogil:
        """Add label y (length L) to V_i with alpha 0; returns its position or -1 on OOM."""
        cdef int k = self.ws_n[i]
        cdef int cap = self.ws_cap[i]
        cdef int *lab
        cdef double *a
        cdef double *l
        if k == cap:
            cap = 2 if cap == 0 else 2 * cap
            lab = <int *> realloc(self.ws_lab[i], cap * L * sizeof(int))
            if lab == NULL:
                return -1
            self.ws_lab[i] = lab
            a = <double *> realloc(self.ws_alpha[i], cap * sizeof(double))
            if a == NULL:
                return -1
            self.ws_alpha[i] = a
            l = <double *> realloc(self.ws_loss[i], cap * sizeof(double))
            if l == NULL:
                return -1
            self.ws_loss[i] = l
            self.ws_cap[i] = cap
        memcpy(self.ws_lab[i] + k * L, y, L * sizeof(int))
        self.ws_alpha[i][k] = 0.0
        self.ws_loss[i][k] = loss
        self.ws_n[i] = k + 1
        return k

    cdef int _find(self, Py_ssize_t i, const int *y, Py_ssize_t L) noexcept nogil:
        cdef int k
        cdef Py_ssize_t t
        cdef const int *lab
        for k in range(self.ws_n[i]):
            lab = self.ws_lab[i] + k * L
            t = 0
            while t < L and lab[t] == y[t]:
                t += 1
            if t == L:
                return k
        return -1

    cdef double _visit(self, Py_ssize_t i, bint use_oracle, double inner_tol) noexcept nogil:
        """Optimise example i's sub-problem; returns its KKT violation before the visit (-1 on OOM)."""
        # self.st is used directly: a local Structure reference would need the GIL.
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef const int *yi = self.st.true_label(i)
        cdef double *w = &self.w[0]
        cdef double m, d, fyi, gap, q, delta, viol, hmin
        cdef int k, n, up, down, step, kk
        cdef int *labs
        cdef double *alpha
        cdef double *H
        cdef double *dalpha
        cdef double *G
        if use_oracle:
            self.st.oracle(w, i, 1.0, &self.ybuf[0], &m, &d, &self.work[0])
            self.n_oracle_calls += 1
            if self._find(i, &self.ybuf[0], L) < 0:
                if self._append(i, &self.ybuf[0], L, d) < 0:
                    return -1.0
        n = self.ws_n[i]
        if n < 2:
            return 0.0
        if self._ensure_scratch(n) < 0:
            return -1.0
        labs = self.ws_lab[i]
        alpha = self.ws_alpha[i]
        H = self.H
        dalpha = self.dalpha
        fyi = self.st.score(w, i, yi)
        for k in range(n):
            H[k] = self.ws_loss[i][k] + self.st.score(w, i, labs + k * L) - fyi
            dalpha[k] = 0.0
        # Gram matrix of the working set, once per visit: SMO steps then cost O(n).
        G = self.G
        for k in range(n):
            for kk in range(k, n):
                G[k * n + kk] = self.st.gram(i, labs + k * L, labs + kk * L)
                G[kk * n + k] = G[k * n + kk]
        viol = -1.0
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
            q = G[up * n + up] + G[down * n + down] - 2.0 * G[up * n + down]
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
                H[k] -= delta * (G[up * n + k] - G[down * n + k])
            self.n_smo_steps += 1
        for k in range(n):
            if dalpha[k] != 0.0:
                self.st.update(w, i, dalpha[k], labs + k * L)
        # Shrinking: drop members with alpha = 0 that do not violate the optimality conditions.
        hmin = 1e300
        for k in range(n):
            if alpha[k] > 0.0 and H[k] < hmin:
                hmin = H[k]
        kk = 0
        for k in range(n):
            if alpha[k] > 0.0 or H[k] >= hmin:
                if kk != k:
                    memcpy(labs + kk * L, labs + k * L, L * sizeof(int))
                    alpha[kk] = alpha[k]
                    self.ws_loss[i][kk] = self.ws_loss[i][k]
                kk += 1
        self.ws_n[i] = kk
        return viol

    def run_pass(self, bint use_oracle, double inner_tol):
        """One pass over the examples in random order; returns the maximal KKT violation seen."""
        cdef Py_ssize_t t, i
        cdef double v, vmax = 0.0
        cdef bint oom = False
        cdef Py_ssize_t m = 0
        with nogil:
            # Type-II passes visit only working sets of size >= 2 (the others have no violation).
            for i in range(self.n):
                if self.Cs[i] > 0.0 and (use_oracle or self.ws_n[i] >= 2):
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

    def dual(self):
        """sum_i sum_y alpha_i(y) Delta(y, y_i) - 1/2 ||w||^2."""
        cdef Py_ssize_t i
        cdef int k
        cdef double s = 0.0
        for i in range(self.n):
            for k in range(self.ws_n[i]):
                s += self.ws_alpha[i][k] * self.ws_loss[i][k]
        return s - 0.5 * float(np.dot(self.w, self.w))

    def working_set_sizes(self):
        return np.array([self.ws_n[i] for i in range(self.n)], dtype=np.int64)

    @property
    def coef(self):
        """The weights (a view: copy before the solver goes away)."""
        return np.asarray(self.w)

    def get_state(self):
        """Dual state as plain arrays (for warm starts and pickling)."""
        cdef Py_ssize_t i
        cdef int k, t, L
        sizes = self.working_set_sizes()
        labels, alphas, losses = [], [], []
        for i in range(self.n):
            L = self.st.label_len(i)
            labels.append(np.array([self.ws_lab[i][t] for t in range(self.ws_n[i] * L)], dtype=np.int32))
            alphas.append(np.array([self.ws_alpha[i][k] for k in range(self.ws_n[i])]))
            losses.append(np.array([self.ws_loss[i][k] for k in range(self.ws_n[i])]))
        cat = lambda a, dt: np.concatenate(a).astype(dt) if a else np.zeros(0, dt)
        return dict(sizes=sizes, labels=cat(labels, np.int32), alpha=cat(alphas, np.float64),
                    loss=cat(losses, np.float64), Cs=np.asarray(self.Cs).copy(),
                    rng_state=int(self.rng_state))

    def set_state(self, state, Cs=None):
        """Restore a dual state; with new Cs the alphas are rescaled by C_new / C_old (stays feasible)."""
        cdef Py_ssize_t i, L
        cdef int k, j
        cdef int[::1] labels = np.ascontiguousarray(state["labels"], dtype=np.int32)
        cdef double[::1] alpha = np.ascontiguousarray(state["alpha"], dtype=np.float64)
        cdef double[::1] loss = np.ascontiguousarray(state["loss"], dtype=np.float64)
        cdef long long[::1] sizes = np.ascontiguousarray(state["sizes"], dtype=np.int64)
        old = np.asarray(state["Cs"], dtype=np.float64)
        if sizes.shape[0] != self.n:
            raise ValueError("warm start: the number of examples changed")
        if Cs is not None:
            self.Cs = np.ascontiguousarray(Cs, dtype=np.float64).copy()
        cdef double[::1] scale = np.divide(np.asarray(self.Cs), old, out=np.zeros(self.n), where=old > 0)
        cdef Py_ssize_t pos = 0, apos = 0
        for i in range(self.n):
            L = self.st.label_len(i)
            self.ws_n[i] = 0
            for k in range(<int> sizes[i]):
                if self._append(i, &labels[pos + k * L], L, loss[apos + k]) < 0:
                    raise MemoryError()
                self.ws_alpha[i][k] = alpha[apos + k] * scale[i]
            if old[i] <= 0 and self.Cs[i] > 0:  # example newly weighted: start at y_i
                j = self._find(i, self.st.true_label(i), L)
                if j < 0:
                    j = self._append(i, self.st.true_label(i), L, 0.0)
                self.ws_alpha[i][j] = self.Cs[i]
            pos += sizes[i] * L
            apos += sizes[i]
        self.rng_state = state.get("rng_state", self.rng_state)
        self.recompute_w()

    def recompute_w(self):
        cdef Py_ssize_t i, L
        cdef int k
        cdef double *w = &self.w[0]
        self.w[:] = 0.0
        with nogil:
            for i in range(self.n):
                L = self.st.label_len(i)
                for k in range(self.ws_n[i]):
                    if self.ws_alpha[i][k] != 0.0:
                        self.st.update(w, i, self.ws_alpha[i][k], self.ws_lab[i] + k * L)
