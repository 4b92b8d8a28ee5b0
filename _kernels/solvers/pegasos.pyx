# cython: language_level=3
"""Pegasos SGD (Shalev-Shwartz et al.) for any structure and any bi-criteria surrogate.

Objective (LIBLINEAR's convention): 1/2 |w|^2 + sum_i C_i psi_i(w), psi_i = max_y psi(h(y), g(y)),
i.e. lambda/2 |w|^2 + (1/n) sum_i (C_i / Cbar) psi_i with lambda = 1/(n Cbar). Step t (one
mini-batch B): eta = 1/(lambda t); w <- (1 - eta lambda) w - eta/|B| sum_{i in B} (C_i/Cbar) psi_h
(phi(y) - phi(y_i)), where y is the search's answer (a convex combination of two labels for the
fractional hull answer: one update per label, weighted). Optional projection onto the ball of
radius 1/sqrt(lambda), and averaging of the iterates.

w is kept as scale * v so that the shrink step is O(1); updates touch only the nonzeros of x_i.
The searches of a mini-batch only read v, so the solver's Team (team.pxd) shares them (one
StructureOracle per thread, each search writing its batch slot); their updates are then applied in
batch order, so results do not depend on n_jobs. A whole epoch runs in the kernel, without the GIL.
"""
import numpy as np
from libc.math cimport sqrt
from libc.string cimport memcpy

from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.labels cimport LabelStore
from ssvmlinear._kernels.surrogate cimport Surrogate, psi, psi_dh, SURR_MICROF1
from ssvmlinear._kernels.search cimport (StructureOracle, SearchResult, run_search, SEARCH_NONE,
                                         SEARCH_HULL)
from ssvmlinear._kernels.team cimport ShardWork, Team
from libc.stdlib cimport malloc, free

DEF WARM = 4          # labels remembered per example (the label cache / previous hull vertices)


cdef enum:
    JOB_SEARCHES = 1     # searches of batch positions lo..hi-1 (examples job_idx[b]) into slots b
    JOB_LOSSES = 2       # psi_i of examples lo..hi-1 at job_w into job_out, by job_method


cdef class PegasosSolver(ShardWork):
    cdef readonly Structure st
    cdef Surrogate sur
    cdef readonly int method, max_calls
    cdef readonly double lam, ratio, Cbar
    cdef readonly double scale, avg_c
    cdef readonly long long t
    cdef readonly bint projection, averaging
    cdef public double[::1] v, A
    cdef const double[::1] Cw            # C_i / Cbar
    cdef LabelStore warm                 # per example a ring of the last WARM labels found
    cdef Py_ssize_t Lmax
    cdef list oracles
    cdef void **oracle_of                # oracle_of[tid]: thread tid's StructureOracle (borrowed)
    cdef readonly Team team
    # the job being shared (set before Team.share)
    cdef const Py_ssize_t *job_idx
    cdef const double *job_w
    cdef double *job_out
    cdef int job_method
    # per mini-batch answers: up to 2 labels per example with their update coefficients
    cdef int[::1] b_labels
    cdef double[::1] b_coef
    cdef double[::1] b_value
    cdef int[::1] b_calls
    cdef Py_ssize_t bmax
    cdef readonly long long n_calls_total
    cdef readonly Py_ssize_t failed_example     # an example whose search failed (-1: none)
    cdef double job_ratio

    def __init__(self, Structure st, int kind, double alpha, double beta, int method,
                 const double[::1] Cs, double ratio=1.0, int max_calls=50, bint projection=False,
                 bint averaging=True, Py_ssize_t batch_size=1, int n_oracles=1):
        cdef Py_ssize_t n = st.n_examples
        self.st = st
        self.sur.kind, self.sur.alpha, self.sur.beta = kind, alpha, beta
        self.method, self.ratio, self.max_calls = method, ratio, max_calls
        Cs_arr = np.asarray(Cs, dtype=np.float64)
        self.Cbar = float(Cs_arr.mean())
        self.Cw = Cs_arr / self.Cbar
        self.lam = 1.0 / (n * self.Cbar)
        self.projection, self.averaging = projection, averaging
        self.v = np.zeros(st.n_weights)
        self.A = np.zeros(st.n_weights)
        self.scale, self.avg_c, self.t = 1.0, 0.0, 0
        self.Lmax = max(st.max_label_len, 1)
        self.warm = LabelStore(st, (), WARM)
        cap = 2 * max_calls + WARM + 8
        # Micro-F1's oracles add the unscaled Hamming count to the margin: keep scale = 1 for it
        self.oracles = [StructureOracle(st, capacity=cap, microf1=kind == SURR_MICROF1)
                        for _ in range(max(n_oracles, 1))]
        self.oracle_of = <void **> malloc(len(self.oracles) * sizeof(void *))
        if self.oracle_of == NULL:
            raise MemoryError()
        for k, o in enumerate(self.oracles):
            self.oracle_of[k] = <void *> o
        self.team = Team(len(self.oracles))
        self.bmax = max(batch_size, 1)
        self.b_labels = np.zeros(self.bmax * 2 * self.Lmax, dtype=np.int32)
        self.b_coef = np.zeros(self.bmax * 2)
        self.b_value = np.zeros(self.bmax)
        self.b_calls = np.zeros(self.bmax, dtype=np.int32)
        self.n_calls_total = 0
        self.failed_example = -1

    cdef void _search_one(self, StructureOracle o, Py_ssize_t i, Py_ssize_t b) noexcept nogil:
        """Search example i with oracle o; store its labels/coefficients (psi_h weights) at b."""
        cdef int n_warm = 0, k, j, slot
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef SearchResult r
        cdef double dh
        o.set_example(&self.v[0], self.scale, i)
        if self.method != SEARCH_NONE and self.warm.size[i] > 0:
            n_warm = self.warm.size[i]
            o.load_many(self.warm.labels(i), L, n_warm)
        r = run_search(o, &self.sur, self.method, 1.0, self.ratio, self.max_calls, n_warm)
        self.b_value[b] = r.value if not r.error else 0.0
        self.b_calls[b] = r.n_calls
        self.b_coef[2 * b] = 0.0
        self.b_coef[2 * b + 1] = 0.0
        if r.error:
            self.failed_example = i       # (a race between threads only picks which one is named)
            return
        if r.value <= 0.0:
            return
        dh = psi_dh(&self.sur, r.h, r.g) * self.Cw[i]
        for j in range(2):
            slot = r.slot1 if j == 0 else r.slot2
            if slot < 0:                  # y_i (no update) or no second label
                continue
            memcpy(&self.b_labels[(2 * b + j) * self.Lmax], o.label(slot), L * sizeof(int))
            self.b_coef[2 * b + j] = dh * (r.weight1 if j == 0 else 1.0 - r.weight1)
            if self.method != SEARCH_NONE:
                if self.warm.find(i, o.label(slot)) < 0:
                    self.warm.append(i, o.label(slot))

    cdef void _apply(self, const Py_ssize_t *idx, Py_ssize_t nb) noexcept nogil:
        """One Pegasos step from the stored answers of the mini-batch idx[0:nb]."""
        cdef double eta, shrink, coef, nrm2, r
        cdef Py_ssize_t b, j, d = self.v.shape[0], k
        self.t += 1
        eta = 1.0 / (self.lam * self.t)
        shrink = 1.0 - eta * self.lam
        if shrink <= 0.0:                 # first step: w <- 0 before the gradient step
            for k in range(d):
                self.v[k] = 0.0
            self.scale = 1.0
        else:
            self.scale *= shrink
        for b in range(nb):
            for j in range(2):
                coef = self.b_coef[2 * b + j]
                if coef == 0.0:
                    continue
                coef *= eta / nb
                self.st.update(&self.v[0], idx[b], coef / self.scale,
                               &self.b_labels[(2 * b + j) * self.Lmax])
                if self.averaging and self.avg_c != 0.0:
                    self.st.update(&self.A[0], idx[b], -self.avg_c * coef / self.scale,
                                   &self.b_labels[(2 * b + j) * self.Lmax])
        if self.projection:
            nrm2 = 0.0
            for k in range(d):
                nrm2 += self.v[k] * self.v[k]
            nrm2 *= self.scale * self.scale
            r = 1.0 / sqrt(self.lam)
            if nrm2 > r * r:
                self.scale *= r / sqrt(nrm2)
        if self.scale < 1e-8 or self.scale > 1e8 or self.sur.kind == SURR_MICROF1:
            self._renormalize()
        self.avg_c += self.scale

    cdef void _renormalize(self) noexcept nogil:
        # w = scale v -> v; the running sum A + c v folds c v into A (c = 0 after), which keeps
        # that sum well conditioned (c / scale would grow without bound)
        cdef Py_ssize_t k
        for k in range(self.v.shape[0]):
            self.A[k] += self.avg_c * self.v[k]
            self.v[k] *= self.scale
        self.avg_c = 0.0
        self.scale = 1.0

    def __dealloc__(self):
        free(self.oracle_of)

    cdef void compute(self, int kind, Py_ssize_t base, Py_ssize_t lo, Py_ssize_t hi,
                      Py_ssize_t tid) noexcept nogil:
        cdef Py_ssize_t b, i
        if kind == JOB_SEARCHES:
            for b in range(lo, hi):
                self._search_one(<StructureOracle> self.oracle_of[tid], self.job_idx[b], b)
        else:
            for i in range(lo, hi):
                self.job_out[i] = self._loss_one(<StructureOracle> self.oracle_of[tid], i)

    cdef double _loss_one(self, StructureOracle o, Py_ssize_t i) noexcept nogil:
        """psi_i at job_w by job_method."""
        cdef SearchResult r
        o.set_example(self.job_w, 1.0, i)
        r = run_search(o, &self.sur, self.job_method, 1.0, self.job_ratio, self.max_calls, 0)
        if r.error:
            self.failed_example = i
            return 0.0
        return r.value

    def epoch(self, const Py_ssize_t[::1] order, Py_ssize_t batch_size):
        """One pass over `order` in mini-batches: each batch's searches shared by the team, then
        its update (nogil throughout)."""
        cdef Py_ssize_t s, b, nb, n = order.shape[0]
        cdef Py_ssize_t grain = max(1, batch_size // (2 * self.team.n_threads))
        cdef long long calls = 0
        if batch_size > self.bmax:
            raise ValueError(f"batch_size {batch_size} exceeds the solver's {self.bmax}")
        with nogil:
            s = 0
            while s < n:
                nb = min(batch_size, n - s)
                self.job_idx = &order[s]
                self.team.share(<void *> self, JOB_SEARCHES, 0, nb, grain)
                for b in range(nb):
                    calls += self.b_calls[b]
                self._apply(&order[s], nb)
                s += nb
        self.n_calls_total += calls

    def losses(self, const double[::1] w, double[::1] out, int method=-1, double ratio=-1.0):
        """psi_i of every example at the weights w, by the given search and stopping ratio
        (default: the training search's), shared by the team (nogil)."""
        cdef Py_ssize_t n = self.st.n_examples
        if out.shape[0] != n or w.shape[0] != self.v.shape[0]:
            raise ValueError("losses: w or out has the wrong length")
        self.job_w, self.job_out = &w[0], &out[0]
        self.job_method = self.method if method < 0 else method
        self.job_ratio = self.ratio if ratio <= 0.0 else ratio
        with nogil:
            self.team.share(<void *> self, JOB_LOSSES, 0, n, max(16, n // (16 * self.team.n_threads)))

    def weights(self, bint averaged):
        """The current iterate (scale * v) or the average of all iterates so far."""
        v = np.asarray(self.v) * self.scale
        if averaged and self.averaging and self.t > 0:
            return (np.asarray(self.A) + self.avg_c * np.asarray(self.v)) / self.t
        return v

    def set_weights(self, const double[::1] w):
        """Warm start: v = w (scale 1); the average restarts."""
        self.v[:] = w
        self.scale = 1.0
        self.A[:] = 0.0
        self.avg_c = 0.0
