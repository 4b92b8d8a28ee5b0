# cython: language_level=3
"""LSE-SDCD: sequential dual coordinate descent for the linear-summed-error structural SVM
(Balamurugan, Shevade & Ravindra Babu, Alg. 2), on the reduced dual OP5:

    min_alpha  D(alpha) = 1/2 ||sum_{i, y in V_i} alpha_i(y) dphi_i(y)||^2 - sum alpha_i(y) l_i(y)
    s.t.       0 <= alpha_i(y) <= C_i          (no equality constraint)

A visit of example i (type-I: first add the loss-augmented violator to V_i) makes one clipped
Newton step (IV.6) on every alpha_i(y), y in V_i, in turn; w follows (IV.7). Gradients within a
visit are kept exact through the cached Gram matrix, and w is written once per visit, which is
the same sequence of iterates as updating w after every step. Type-II visits skip the examples,
and within an example the variables, found at a bound their gradient pushed against on the last
visit (shrinking, as in LIBLINEAR); type-I visits take every variable. A visit reports
alphachange = sum of squared steps divided by C_i: the paper's deltathresh rule at C = 1, and
proportionally stricter at smaller C, where the plain sum of squared steps would stop the method
after its first pass.

Alg. 2 adds only the loss-augmented argmax to V_i. When that label is already in V_i with
alpha = C, a violating label outside V_i can never enter, and the method stops at the optimum of
the reduced problem OP5 rather than of OP3. With `exact_violators`
the type-I step then walks the k-best list (k = |V_i| + 1) past labels saturated at C and adds the
first label outside V_i if it violates (H > 0), so the fixed point is the optimum of OP3.
"""
import numpy as np

from libc.string cimport memcpy

from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.labels cimport WorkingSets
from ssvmlinear._kernels.dualsolver cimport DualSolver
from ssvmlinear._kernels.rng cimport rng_shuffle


cdef class SDCDSolver(DualSolver):
    cdef double[::1] H
    cdef double[::1] dalpha
    cdef double[::1] grow_      # one Gram row, computed per step when the working sets keep none
    cdef char[::1] settled     # 1: the last visit found every alpha at a bound its gradient pushes to
    cdef public long long n_kbest_calls
    cdef public long long n_updates
    cdef public bint exact_violators
    cdef double[::1] kwork
    cdef int[::1] klabels
    cdef double[::1] kvalues
    cdef int[::1] active       # members a visit works on
    cdef int[::1] glabels      # their labels, back to back, when some members are skipped

    def __init__(self, Structure structure, Cs, unsigned long long seed=0, bint exact_violators=True):
        # Alg. 2 line 2: V_i = {y_i}, alpha_i(y_i) = C; aux keeps each member's H at its last visit
        DualSolver.__init__(self, structure, Cs, seed, True)
        self._grow_scratch(16)
        self.settled = np.zeros(max(self.n, 1), dtype=np.int8)
        self.n_kbest_calls = 0
        self.n_updates = 0
        self.exact_violators = exact_violators
        self.kwork = np.zeros(1)
        self.klabels = np.zeros(1, dtype=np.int32)
        self.kvalues = np.zeros(1)

    def release(self):
        DualSolver.release(self)
        self.settled = None

    cdef double _visit(self, Py_ssize_t i, bint use_oracle) noexcept nogil:
        """Coordinate steps on V_i; returns sum of squared alpha changes divided by C_i (-1 on OOM)."""
        cdef double *w = &self.w[0]
        cdef double m, d, a_new, delta, change = 0.0, C = self.Cs[i], gkk
        cdef int k, j, n, got, a, na
        cdef Py_ssize_t c
        cdef double *alpha
        cdef double *G
        cdef double *row = &self.grow_[0]
        cdef double *Hlast
        cdef int *labels
        cdef const int *act
        cdef Py_ssize_t L = self.st.label_len(i)
        if use_oracle:
            self.st.oracle(w, i, 1.0, &self.ybuf[0], &m, &d, &self.work[0])
            self.n_oracle_calls += 1
            j = self.ws.find(i, &self.ybuf[0])
            if j < 0:
                if self.ws.add(i, &self.ybuf[0], d) < 0:
                    return -1.0
            elif self.exact_violators and self.ws.alpha(i)[j] >= C and m + d > 0.0:
                # the argmax is saturated: look further down the list for a violator outside V_i
                got = self.st.kbest(w, i, 1.0, self.ws.size[i] + 1, &self.klabels[0], &self.kvalues[0],
                                    &self.kwork[0])
                self.n_kbest_calls += 1
                for k in range(got):
                    if self.kvalues[k] <= 0.0:
                        break
                    j = self.ws.find(i, &self.klabels[k * L])
                    if j < 0:
                        if self.ws.add(i, &self.klabels[k * L],
                                          self.st.loss(i, &self.klabels[k * L])) < 0:
                            return -1.0
                        break
                    if self.ws.alpha(i)[j] < C:
                        break
        n = self.ws.size[i]
        alpha = self.ws.alpha(i)
        G = self.ws.gram(i)
        c = self.ws.cap[i]
        labels = self.ws.labels(i)
        Hlast = self.ws.aux(i)
        # Variable shrinking (Hsieh et al. 2008): a type-II visit skips the members that sat at a
        # bound their gradient pushed them against when last visited; type-I visits (where the
        # stopping rule is checked) take every member.
        na = 0
        for k in range(n):
            if use_oracle or not ((alpha[k] <= 0.0 and Hlast[k] < 0.0) or (alpha[k] >= C and Hlast[k] > 0.0)):
                self.active[na] = k
                na += 1
        act = &self.active[0]
        if na == 0:             # every member shrunk: nothing to compute or update
            self.settled[i] = 1
            return 0.0
        if na < n:
            for a in range(na):
                memcpy(&self.glabels[a * L], labels + act[a] * L, L * sizeof(int))
            labels = &self.glabels[0]
        self.st.margins(w, i, labels, na, &self.H[0], &self.work[0], use_oracle)
        for a in range(na):
            # H = l_i(y) - w . dphi_i(y) = -gradient (IV.5)
            self.H[a] += self.ws.loss(i)[act[a]]
            self.dalpha[a] = 0.0
        for a in range(na):
            k = act[a]
            if G != NULL:
                gkk = G[k * c + k]
            else:   # the structure's Gram is cheap: row k over the active members, now
                self.st.gram_row(i, labels + a * L, labels, na, row, &self.work[0])
                gkk = row[a]
            gkk *= self.sigma
            if gkk > 1e-300:
                a_new = alpha[k] + self.H[a] / gkk                 # (IV.6)
            else:
                a_new = C if self.H[a] > 0.0 else (0.0 if self.H[a] < 0.0 else alpha[k])
            if a_new < 0.0:
                a_new = 0.0
            elif a_new > C:
                a_new = C
            delta = a_new - alpha[k]
            if delta == 0.0:
                continue
            alpha[k] = a_new
            self.dalpha[a] += delta
            change += delta * delta / C
            if G != NULL:
                for j in range(na):
                    self.H[j] -= self.sigma * delta * G[k * c + act[j]]
            else:
                for j in range(na):
                    self.H[j] -= self.sigma * delta * row[j]
            self.n_updates += 1
        if self.sigma != 1.0:
            for a in range(na):
                self.dalpha[a] *= self.sigma
        self.st.update_many(w, i, &self.dalpha[0], labels, na, &self.work[0])  # (IV.7)
        # Shrinking of examples: one whose variables all sit at the bound their gradient pushes
        # them to is skipped by type-II passes until the next type-I pass.
        self.settled[i] = 1
        for a in range(na):
            k = act[a]
            Hlast[k] = self.H[a]
            if not ((alpha[k] <= 0.0 and self.H[a] <= 0.0) or (alpha[k] >= C and self.H[a] >= 0.0)):
                self.settled[i] = 0
        return change

    def run_pass(self, bint use_oracle, double deltathresh):
        """One pass in random order; returns (number of examples whose alphachange > deltathresh,
        largest alphachange)."""
        cdef Py_ssize_t t, i, changed = 0
        cdef double v, vmax = 0.0
        cdef bint oom = False
        cdef Py_ssize_t cap_needed = 0
        for i in range(self.n):
            if self.ws.size[i] > cap_needed:
                cap_needed = self.ws.size[i]
        if cap_needed + 1 > self.H.shape[0]:
            self._grow_scratch(2 * (cap_needed + 1))
        if self.exact_violators and (cap_needed + 1) * self.st.max_label_len > self.klabels.shape[0]:
            kb = 2 * (cap_needed + 1)
            self.klabels = np.zeros(kb * self.st.max_label_len, dtype=np.int32)
            self.kvalues = np.zeros(kb)
            self.kwork = np.zeros(max(self.st.kbest_workspace_size(kb), 1))
        with nogil:
            if self.n > 1:
                rng_shuffle(&self.rng_state, &self.order[0], self.n)
            for t in range(self.n):
                i = self.order[t]
                if self.Cs[i] <= 0.0 or (not use_oracle and self.settled[i]):
                    continue
                v = self._visit(i, use_oracle)
                if v == -1.0:
                    oom = True
                    break
                if v > deltathresh:
                    changed += 1
                if v > vmax:
                    vmax = v
                self.ws.maybe_compact()
        if oom:
            raise MemoryError("SDCD working sets")
        return changed, vmax

    def restricted_primal(self):
        """1/2 ||w||^2 + restricted_slack_sum(): the primal of the problem over the working sets
        (OP5), whose dual is dual()."""
        return 0.5 * float(np.dot(self.w, self.w)) + self.restricted_slack_sum()

    def restricted_slack_sum(self):
        """sum_i C_i sum_{y in V_i} max(0, Delta(y, y_i) - w . dphi_i(y)) at w."""
        cdef Py_ssize_t i, k, n_i, cap_needed = 0
        cdef double v, s_i, s = 0.0
        for i in range(self.n):
            if self.ws.size[i] > cap_needed:
                cap_needed = self.ws.size[i]
        if cap_needed > self.H.shape[0]:
            self._grow_scratch(2 * cap_needed)
        with nogil:
            for i in range(self.n):
                n_i = self.ws.size[i]
                if self.Cs[i] <= 0.0 or n_i == 0:
                    continue
                self.st.margins(&self.w[0], i, self.ws.labels(i), <int>n_i, &self.H[0], &self.work[0], False)
                s_i = 0.0
                for k in range(n_i):
                    v = self.H[k] + self.ws.loss(i)[k]
                    if v > 0.0:
                        s_i += v
                s += self.Cs[i] * s_i
        return s

    def _grow_scratch(self, Py_ssize_t m):
        self.H = np.zeros(m)
        self.dalpha = np.zeros(m)
        self.grow_ = np.zeros(m)
        self.active = np.zeros(m, dtype=np.int32)
        self.glabels = np.zeros(m * max(self.st.max_label_len, 1), dtype=np.int32)
