# cython: language_level=3
"""Sequential dual method (SDM) for the n-slack margin-rescaling structural SVM dual.

    min_alpha  D(alpha) = 1/2 ||w(alpha)||^2 - sum_i sum_y alpha_i(y) Delta(y, y_i)
    s.t.       alpha_i(y) >= 0,  sum_y alpha_i(y) = C_i,   w = sum_i sum_y alpha_i(y) dphi_i(y),

with dphi_i(y) = phi(x_i, y_i) - phi(x_i, y): the dual of
    min_w 1/2 ||w||^2 + sum_i C_i max_y [Delta(y, y_i) + f(y) - f(y_i)].

Each example keeps a working set V_i (the label store of labels.pxd). A visit computes H_i(y) = Delta(y, y_i) -
w . dphi_i(y) (minus the dual gradient) on V_i and runs SMO steps on the maximal violating pair
(up = argmax H, down = argmin H over alpha > 0) until the pair's gap is tiny, updating H through the
cached Gram matrix and w once at the end (one update_many: structures merge the terms). Type-I
passes first call the loss-augmented oracle (lambda = 1) and add its label to V_i -- and, where the
structure lists them from the oracle's own work (runners_up: multiclass), up to RUNNERS_UP next
best labels that violate at the true label (H > 0); type-II passes only re-optimise working sets
of size >= 2.
Members with alpha = 0 that do not violate are dropped (shrinking); the oracle re-adds them when
needed. KKT violation of example i: max_y H_i(y) - min_{alpha_i(y) > 0} H_i(y), zero at the
optimum for every i (Keerthi et al. 2008; Balamurugan et al. 2011).

Batched type-I passes (batch B > 1): the shuffled examples are taken in blocks of B. The oracles
of a block are all asked at the weights of the block's start, each answer written to its slot of
the block buffers (labels, m, Delta); then the block's visits run sequentially in block order as
above, each adding its slot's label. The first example of a block sees the same w as the sequential
method; later ones may get a label that was the most violating a few updates earlier. At a fixed
point w does not change, so the optimum and the stopping rule are unchanged. B = 1 is the
sequential method (oracle inline, bit-for-bit the unbatched code).

The oracles of a block only read w, so the solver's Team (team.pxd) shares them: its helper
threads and the pass's own thread claim small ranges, each with its own work buffer, and the pass
waits for all before the visits. Which thread computes an answer does not change it, so results
are identical for any number of helpers (none: the pass's thread computes everything). The primal
objective's oracle values are shared the same way and summed in example order.
"""
import numpy as np

from libc.stdlib cimport malloc, realloc, free
from libc.time cimport timespec
from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.labels cimport WorkingSets
from ssvmlinear._kernels.dualsolver cimport DualSolver
from ssvmlinear._kernels.rng cimport rng_shuffle
from ssvmlinear._kernels.team cimport Team


cdef extern from "<time.h>" nogil:
    int timespec_get(timespec *ts, int base)
    enum:
        TIME_UTC


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    timespec_get(&ts, TIME_UTC)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


# Type-I visits add the oracle's answer and up to this many of its runners-up that violate, where
# the structure lists them from the oracle's own work (multiclass: its K scores): the working sets
# grow faster at no extra oracle cost. Measured on the planted problem of benchmarks/planted.py
# (K = 50), the type-I passes to LIBLINEAR's objective: 0 -> 7, 1 -> 5, 3 -> 4; but each member
# costs every later visit, and on OCR letters (K = 26) 3 is slower than 1 at C = 0.1 and 1.
RUNNERS_UP = 1

# kinds of shared work
cdef enum:
    JOB_ORACLES = 1   # the block's oracles: pass positions lo..hi-1 into slots (t - lo)
    JOB_SLACKS = 2    # slack[i] = max_y H_i(y) for examples lo..hi-1 (primal objective)


cdef class SDMSolver(DualSolver):
    cdef double *H
    cdef double *dalpha
    cdef double *rows      # two Gram rows (up, down) when the working sets keep none
    cdef char *flags
    cdef Py_ssize_t scratch_cap
    cdef public long long n_smo_steps
    cdef public int max_inner
    # block buffers: per-slot oracle answers (labels of Lmax ints, m, Delta) and runners-up
    # (n_runners labels of Lmax ints, their values, how many)
    cdef int[::1] b_labels
    cdef double[::1] b_m
    cdef double[::1] b_delta
    cdef int[::1] b_rlabels
    cdef double[::1] b_rvalues
    cdef int[::1] b_rcount
    # type-I visits also add up to n_runners of the oracle's runners-up that violate
    cdef readonly int n_runners
    cdef Py_ssize_t Lmax
    cdef readonly Py_ssize_t batch_cap
    # per-thread oracle scratch; row 0 is the pass's own thread, row k helper k
    cdef double[:, ::1] t_work
    cdef int[:, ::1] t_ybuf
    cdef readonly Py_ssize_t n_threads
    cdef double[::1] slack
    # the threads that share the blocks' oracles (helpers: ssvmlinear.parallel.KernelTeam)
    cdef readonly Team team
    # seconds spent in the loss-augmented oracles of type-I passes (wall clock of the pass's thread)
    cdef public double oracle_seconds

    def __cinit__(self):
        self.H = NULL
        self.dalpha = NULL
        self.flags = NULL
        self.rows = NULL
        self.scratch_cap = 0

    def __init__(self, Structure structure, Cs, unsigned long long seed=0, int max_inner=100,
                 Py_ssize_t batch=1, Py_ssize_t n_threads=1, int n_runners=RUNNERS_UP):
        DualSolver.__init__(self, structure, Cs, seed)
        if batch < 1 or n_threads < 1:
            raise ValueError("batch and n_threads must be >= 1")
        self.max_inner = max_inner
        self.n_smo_steps = 0
        self.oracle_seconds = 0.0
        self.team = Team(n_threads)
        self.Lmax = max(structure.max_label_len, 1)
        self.batch_cap = batch
        self.b_labels = np.zeros(batch * self.Lmax, dtype=np.int32)
        self.b_m = np.zeros(batch)
        self.b_delta = np.zeros(batch)
        self.n_runners = max(n_runners, 0)
        R = max(self.n_runners, 1)
        self.b_rlabels = np.zeros((batch + 1) * R * self.Lmax, dtype=np.int32)   # slot `batch`: inline oracles
        self.b_rvalues = np.zeros((batch + 1) * R)
        self.b_rcount = np.zeros(batch + 1, dtype=np.int32)
        self.n_threads = n_threads
        self.t_work = np.zeros((n_threads, max(structure.workspace_size(), 1)))
        self.t_ybuf = np.zeros((n_threads, self.Lmax), dtype=np.int32)
        self.slack = np.zeros(max(self.n, 1))
        if self._ensure_scratch(8) < 0:
            raise MemoryError()

    def release(self):
        DualSolver.release(self)
        self.slack = None

    def __dealloc__(self):
        free(self.H)
        free(self.dalpha)
        free(self.flags)
        free(self.rows)

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
        d = <double *> realloc(self.rows, 2 * m * sizeof(double))
        if d == NULL:
            return -1
        self.rows = d
        self.scratch_cap = m
        return 0

    cdef double _visit(self, Py_ssize_t i, bint use_oracle, double inner_tol, Py_ssize_t slot) noexcept nogil:
        """Optimise example i's sub-problem; returns its KKT violation before the visit (-1 on OOM).
        slot >= 0: the oracle's answer was computed before (at other weights) and sits in that
        slot of the block buffers; slot < 0: call the oracle here (if use_oracle)."""
        cdef double *w = &self.w[0]
        cdef double m, d, gap, q, delta, viol, hmin
        cdef int k, n, up, down, step
        cdef Py_ssize_t c
        cdef double *alpha
        cdef double *G
        cdef double *gu
        cdef double *gd
        cdef double *H = self.H
        cdef double *dalpha = self.dalpha
        cdef double t0
        cdef const int *y
        cdef bint fresh = use_oracle and slot < 0    # work holds this oracle's unary scores
        cdef Py_ssize_t rslot, R = max(self.n_runners, 1)
        cdef const int *yr
        cdef bint moved = False
        if use_oracle:
            if slot < 0:
                t0 = _now()
                self.st.oracle(w, i, 1.0, &self.ybuf[0], &m, &d, &self.work[0])
                y = &self.ybuf[0]
                rslot = self.batch_cap
                self.b_rcount[rslot] = self.st.runners_up(
                    i, 1.0, y, self.n_runners, &self.b_rlabels[rslot * R * self.Lmax],
                    &self.b_rvalues[rslot * R], &self.work[0])
                self.oracle_seconds += _now() - t0
            else:
                y = &self.b_labels[slot * self.Lmax]
                d = self.b_delta[slot]
                rslot = slot
            self.n_oracle_calls += 1
            if self.ws.find(i, y) < 0 and self.ws.add(i, y, d) < 0:
                return -1.0
            # the runners-up that violate at the true label's dual value (H > 0)
            for k in range(self.b_rcount[rslot]):
                if self.b_rvalues[rslot * R + k] <= 0.0:
                    break
                yr = &self.b_rlabels[(rslot * R + k) * self.Lmax]
                if self.ws.find(i, yr) < 0 and self.ws.add(i, yr, self.st.loss(i, yr)) < 0:
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
        gu = self.rows
        gd = self.rows + n
        self.st.margins(w, i, self.ws.labels(i), n, H, &self.work[0], fresh)
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
            if G == NULL:   # the structure's Gram is cheap: the two rows, now
                self.st.gram_row(i, self.ws.label(i, up), self.ws.labels(i), n, gu, &self.work[0])
                self.st.gram_row(i, self.ws.label(i, down), self.ws.labels(i), n, gd, &self.work[0])
            else:
                gu = G + up * c
                gd = G + down * c
            q = self.sigma * (gu[up] + gd[down] - 2.0 * gu[down])
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
                H[k] -= self.sigma * delta * (gu[k] - gd[k])
            self.n_smo_steps += 1
            moved = True
        if moved:   # (a visit that changes nothing must not sweep the example's weight rows)
            if self.sigma != 1.0:
                for k in range(n):
                    dalpha[k] *= self.sigma
            self.st.update_many(w, i, dalpha, self.ws.labels(i), n, &self.work[0])
        # Shrinking: drop members with alpha = 0 that do not violate the optimality conditions.
        hmin = 1e300
        for k in range(n):
            if alpha[k] > 0.0 and H[k] < hmin:
                hmin = H[k]
        for k in range(n):
            self.flags[k] = alpha[k] > 0.0 or H[k] >= hmin
        self.ws.keep(i, self.flags)
        return viol

    cdef Py_ssize_t _build_order(self, bint use_oracle) noexcept nogil:
        """The examples of a pass (type-II: working sets of size >= 2 only) in self.order, shuffled."""
        cdef Py_ssize_t i, m = 0
        for i in range(self.n):
            if self.Cs[i] > 0.0 and (use_oracle or self.ws.size[i] >= 2):
                self.order[m] = i
                m += 1
        if m > 1:
            rng_shuffle(&self.rng_state, &self.order[0], m)
        return m

    cdef void compute(self, int kind, Py_ssize_t base, Py_ssize_t lo, Py_ssize_t hi,
                       Py_ssize_t tid) noexcept nogil:
        """One claimed range of shared work, with thread tid's scratch (reads w only)."""
        cdef Py_ssize_t t, b, i
        cdef double m, d
        cdef double *w = &self.w[0]
        cdef double *work = &self.t_work[tid, 0]
        cdef Py_ssize_t R = max(self.n_runners, 1)
        if kind == JOB_ORACLES:
            for t in range(lo, hi):
                b = t - base
                self.st.oracle(w, self.order[t], 1.0, &self.b_labels[b * self.Lmax], &self.b_m[b],
                               &self.b_delta[b], work)
                self.b_rcount[b] = self.st.runners_up(
                    self.order[t], 1.0, &self.b_labels[b * self.Lmax], self.n_runners,
                    &self.b_rlabels[b * R * self.Lmax], &self.b_rvalues[b * R], work)
        else:
            for i in range(lo, hi):
                if self.Cs[i] > 0.0:
                    self.slack[i] = self.st.oracle(w, i, 1.0, &self.t_ybuf[tid, 0], &m, &d, work)

    cdef void _share(self, int kind, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t grain) noexcept nogil:
        self.team.share(<void *> self, kind, lo, hi, grain)

    cdef double _visits(self, Py_ssize_t start, Py_ssize_t stop, double inner_tol) noexcept nogil:
        """Visits of order[start:stop] with the block's oracle answers; max violation, -1 on OOM."""
        cdef Py_ssize_t t
        cdef double v, vmax = 0.0
        for t in range(start, stop):
            v = self._visit(self.order[t], True, inner_tol, t - start)
            if v == -1.0:
                return -1.0
            if v > vmax:
                vmax = v
        return vmax

    def run_pass(self, bint use_oracle, double inner_tol, Py_ssize_t batch=1):
        """One pass over the examples in random order; returns the maximal KKT violation seen.
        batch > 1 (type-I passes): the oracles of each block of `batch` examples are asked at the
        block's starting weights, shared with the running helpers."""
        cdef Py_ssize_t t, s, e, i, m = 0, grain
        cdef double v, vmax = 0.0, t0
        cdef bint oom = False
        if batch > self.batch_cap:
            raise ValueError(f"batch {batch} exceeds the block buffers ({self.batch_cap})")
        # claims of about a quarter of a thread's share: late or slow helpers cost little
        grain = max(1, batch // (4 * self.n_threads))
        with nogil:
            m = self._build_order(use_oracle)
            if batch <= 1 or not use_oracle:
                for t in range(m):
                    i = self.order[t]
                    v = self._visit(i, use_oracle, inner_tol, -1)
                    if v == -1.0:
                        oom = True
                        break
                    if v > vmax:
                        vmax = v
                    self.ws.maybe_compact()
            else:
                s = 0
                while s < m:
                    e = min(s + batch, m)
                    t0 = _now()
                    self._share(JOB_ORACLES, s, e, grain)
                    self.oracle_seconds += _now() - t0
                    v = self._visits(s, e, inner_tol)
                    if v == -1.0:
                        oom = True
                        break
                    if v > vmax:
                        vmax = v
                    self.ws.maybe_compact()
                    s = e
        if oom:
            raise MemoryError("SDM working sets")
        return vmax

    def primal(self):
        """1/2 ||w||^2 + slack_sum()."""
        return 0.5 * float(np.dot(self.w, self.w)) + self.slack_sum()

    def slack_sum(self):
        """sum_i C_i max(0, max_y H_i(y)) at w (one oracle call per example, shared with the
        running helpers; summed in example order, so the same value with or without them)."""
        cdef Py_ssize_t i
        cdef double v, s = 0.0
        with nogil:
            self._share(JOB_SLACKS, 0, self.n, max(16, self.n // (16 * self.n_threads)))
            for i in range(self.n):
                if self.Cs[i] > 0.0:
                    v = self.slack[i]
                    if v > 0.0:
                        s += self.Cs[i] * v
        return s

    def warm_scale(self, old):
        """1 where C_i grew (the alphas kept), C_i / C_old where it shrank (DualSolver's rule)."""
        return np.where(np.asarray(self.Cs) >= old, 1.0, DualSolver.warm_scale(self, old))

    def set_state(self, state, Cs=None):
        """Restore a dual state for new C_i (SDM needs sum_y alpha_i(y) = C_i): where C_i grew,
        the alphas are kept (warm_scale) and the extra mass goes to alpha_i(y_i) (dphi_i(y_i) = 0,
        so w stays the previous optimum: scaling by C_new / C_old would multiply w, far past the
        new optimum at large C); where it shrank, the alphas are scaled by C_new / C_old."""
        cdef Py_ssize_t i
        cdef int j
        old = np.asarray(state["Cs"], dtype=np.float64)
        DualSolver.set_state(self, state, Cs)
        for i in range(self.n):
            if self.Cs[i] > 0 and self.Cs[i] > old[i]:     # (w unchanged: dphi_i(y_i) = 0)
                j = self.ws.find(i, self.st.true_label(i))
                if j < 0:
                    j = self.ws.add(i, self.st.true_label(i), 0.0)
                    if j < 0:
                        raise MemoryError()
                self.ws.alpha(i)[j] += self.Cs[i] - max(old[i], 0.0)
