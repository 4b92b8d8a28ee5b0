# cython: language_level=3
"""Constraint generation for the one-slack cutting plane (Joachims, Finley & Yu 2009; the LSE
variant of Balamurugan et al., Alg. 1).

With per-example weights C_i the one-slack problem reads
    min_w 1/2 ||w||^2 + xi   s.t.  w . a >= b - xi  for every constraint (a, b),
margin rescaling: a = sum_i C_i dphi_i(ybar_i), b = sum_i C_i Delta(ybar_i, y_i) over all choices
of ybar; LSE: a = sum_i C_i sum_{y in S_i} dphi_i(y), b likewise, over all subsets S_i. The most
violated constraint takes ybar_i = argmax_y H_i(y) (resp. S_i = {y : H_i(y) > 0}) with
H_i(y) = Delta(y, y_i) + f(y) - f(y_i).

`pass_chunk` builds the part of that constraint contributed by examples [start, stop): either with
the loss-augmented oracle (which also refreshes each example's label cache) or from the cache only
(svm_struct's -w 4 idea; for LSE the cache is the violator set V_i of Alg. 1, which only grows).
Chunks touch disjoint examples and write their own `a`, so they run in parallel threads.
"""
import numpy as np

from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy

from ssvmlinear._kernels.structure cimport Structure


cdef class OneSlackOracle:
    cdef Structure st
    cdef double[::1] Cs
    cdef Py_ssize_t n
    cdef readonly bint lse
    cdef readonly int cache_size       # ring capacity for margin rescaling; LSE sets grow
    cdef readonly bint exact_violators # LSE: also add the best violator outside V_i (k-best)
    cdef int *size
    cdef int *cap
    cdef int *ring
    cdef int **lab
    cdef double **loss

    def __cinit__(self):
        self.size = NULL
        self.cap = NULL
        self.ring = NULL
        self.lab = NULL
        self.loss = NULL
        self.n = 0

    def __init__(self, Structure structure, Cs, bint lse=False, int cache_size=10, bint exact_violators=False):
        cdef Py_ssize_t i, m = max(structure.n_examples, 1)
        self.st = structure
        self.Cs = np.ascontiguousarray(Cs, dtype=np.float64).copy()
        if self.Cs.shape[0] != structure.n_examples:
            raise ValueError("need one C per example")
        self.lse = lse
        self.exact_violators = exact_violators
        self.cache_size = max(cache_size, 1)
        self.size = <int *> malloc(m * sizeof(int))
        self.cap = <int *> malloc(m * sizeof(int))
        self.ring = <int *> malloc(m * sizeof(int))
        self.lab = <int **> malloc(m * sizeof(int *))
        self.loss = <double **> malloc(m * sizeof(double *))
        if not (self.size and self.cap and self.ring and self.lab and self.loss):
            raise MemoryError()
        self.n = structure.n_examples
        for i in range(self.n):
            self.size[i] = 0
            self.cap[i] = 0
            self.ring[i] = 0
            self.lab[i] = NULL
            self.loss[i] = NULL

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.lab != NULL:
            for i in range(self.n):
                free(self.lab[i])
                free(self.loss[i])
        free(self.size)
        free(self.cap)
        free(self.ring)
        free(self.lab)
        free(self.loss)

    cdef int _find(self, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t L = self.st.label_len(i), t
        cdef int k
        for k in range(self.size[i]):
            t = 0
            while t < L and self.lab[i][k * L + t] == y[t]:
                t += 1
            if t == L:
                return k
        return -1

    cdef int _add(self, Py_ssize_t i, const int *y, double loss) noexcept nogil:
        """Put y in example i's cache (a full margin cache replaces its oldest entry); -1 on OOM."""
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef int k, new
        cdef int *lab
        cdef double *ls
        if self._find(i, y) >= 0:
            return 0
        if not self.lse and self.size[i] == self.cache_size:
            k = self.ring[i]
            self.ring[i] = (k + 1) % self.cache_size
        else:
            if self.size[i] == self.cap[i]:
                new = 2 if self.cap[i] == 0 else 2 * self.cap[i]
                if not self.lse and new > self.cache_size:
                    new = self.cache_size
                lab = <int *> realloc(self.lab[i], new * L * sizeof(int))
                if lab == NULL:
                    return -1
                self.lab[i] = lab
                ls = <double *> realloc(self.loss[i], new * sizeof(double))
                if ls == NULL:
                    return -1
                self.loss[i] = ls
                self.cap[i] = new
            k = self.size[i]
            self.size[i] += 1
        memcpy(self.lab[i] + k * L, y, L * sizeof(int))
        self.loss[i][k] = loss
        return 0

    def cache_sizes(self):
        return np.array([self.size[i] for i in range(self.n)], dtype=np.int64)

    def pass_chunk(self, const double[::1] w, Py_ssize_t start, Py_ssize_t stop, double[::1] a,
                   bint use_oracle):
        """Add examples [start, stop)'s part of the most violated constraint (from the oracle or
        from the caches) to `a`; returns (b, sum_i C_i * loss_i(w), oracle calls), where loss_i is
        max(0, max_y H_i(y)) (margin; exact when use_oracle) or sum over the cache of H_i(y)^+ (LSE)."""
        cdef Py_ssize_t i, L, k, best
        cdef double bsum = 0.0, hsum = 0.0, m, d, h, hbest, C
        cdef long long calls = 0
        cdef bint oom = False
        cdef Structure st = self.st
        work_arr = np.zeros(max(st.workspace_size(), 1))
        ybuf_arr = np.zeros(max(st.max_label_len, 1), dtype=np.int32)
        cdef double[::1] work = work_arr
        cdef int[::1] ybuf = ybuf_arr
        cdef Py_ssize_t hcap = 16, kb = 1, got
        for i in range(start, stop):
            kb = max(kb, self.size[i] + 2)
        klab_arr = np.zeros(kb * max(st.max_label_len, 1), dtype=np.int32)
        kval_arr = np.zeros(kb)
        kwork_arr = np.zeros(max(st.kbest_workspace_size(<int> kb), 1))
        cdef int[::1] klab = klab_arr
        cdef double[::1] kval = kval_arr
        cdef double[::1] kwork = kwork_arr
        cdef double *H = <double *> malloc(hcap * sizeof(double))
        cdef double *hp
        if H == NULL:
            raise MemoryError()
        with nogil:
            for i in range(start, stop):
                C = self.Cs[i]
                if C <= 0.0:
                    continue
                L = st.label_len(i)
                if use_oracle:
                    st.oracle(&w[0], i, 1.0, &ybuf[0], &m, &d, &work[0])
                    calls += 1
                    if (self.lse and self.exact_violators and m + d > 0.0 and self._find(i, &ybuf[0]) >= 0
                            and self.size[i] + 1 <= kb):
                        # the argmax is known: add the best violator outside V_i, if any
                        got = st.kbest(&w[0], i, 1.0, self.size[i] + 1, &klab[0], &kval[0], &kwork[0])
                        for k in range(got):
                            if kval[k] <= 0.0:
                                break
                            if self._find(i, &klab[k * L]) < 0:
                                if self._add(i, &klab[k * L], st.loss(i, &klab[k * L])) < 0:
                                    oom = True
                                break
                        if oom:
                            break
                        # kbest reused the oracle's buffers only through kwork: work is intact
                    if self._add(i, &ybuf[0], d) < 0:
                        oom = True
                        break
                    if not self.lse:
                        h = m + d
                        if h > 0.0:
                            st.update(&a[0], i, C, &ybuf[0])
                            bsum += C * d
                            hsum += C * h
                        continue
                if self.size[i] == 0:
                    continue
                if self.size[i] > hcap:
                    hcap = 2 * self.size[i]
                    hp = <double *> realloc(H, hcap * sizeof(double))
                    if hp == NULL:
                        oom = True
                        break
                    H = hp
                st.margins(&w[0], i, self.lab[i], self.size[i], H, &work[0], use_oracle)
                if self.lse:
                    for k in range(self.size[i]):
                        h = H[k] + self.loss[i][k]
                        if h > 0.0:
                            st.update(&a[0], i, C, self.lab[i] + k * L)
                            bsum += C * self.loss[i][k]
                            hsum += C * h
                else:
                    best = -1
                    hbest = 0.0          # y_i itself: H = 0
                    for k in range(self.size[i]):
                        h = H[k] + self.loss[i][k]
                        if h > hbest:
                            hbest = h
                            best = k
                    if best >= 0:
                        st.update(&a[0], i, C, self.lab[i] + best * L)
                        bsum += C * self.loss[i][best]
                        hsum += C * hbest
        free(H)
        if oom:
            raise MemoryError("cutting-plane label caches")
        return bsum, hsum, calls


from ssvmlinear._kernels.search cimport StructureOracle, SearchResult, run_search
from ssvmlinear._kernels.surrogate cimport Surrogate, psi, psi_dh


def surrogate_pass_chunk(StructureOracle o, const double[::1] w, double[::1] Cs, Py_ssize_t start,
                         Py_ssize_t stop, double[::1] a, int kind, double alpha, double beta,
                         int method, double ratio, int max_calls):
    """Part of the most violated one-slack constraint of a bi-criteria surrogate from examples
    [start, stop) (nogil). For each example the search returns ybar (or a convex combination) at
    the point (h, g); since psi is convex in h, psi(h(w'), g) >= psi(h, g) + psi_h (h(w') - h), so
    a += C_i psi_h dphi_i(ybar), b += C_i (psi(h, g) - psi_h m) with m the margin part of h
    (h = m except for Micro-F1, where h = Hamming + m) (slack rescaling: a = sum C_i
    Delta_i dphi_i, b = sum C_i Delta_i, Joachims et al.'s 1-slack slack-rescaling constraint).
    Returns (b, sum_i C_i psi_i, oracle calls)."""
    cdef Surrogate s
    s.kind, s.alpha, s.beta = kind, alpha, beta
    cdef Py_ssize_t i
    cdef SearchResult r
    cdef double b = 0.0, hsum = 0.0, dh, v, m, mk
    cdef long long calls = 0
    with nogil:
        for i in range(start, stop):
            o.set_example(&w[0], 1.0, i)
            r = run_search(o, &s, method, 1.0, ratio, max_calls, 0)
            calls += r.n_calls
            if r.error or r.value <= 0.0:
                continue
            dh = psi_dh(&s, r.h, r.g)
            hsum += Cs[i] * r.value
            m = r.h
            if o.microf1:      # h = Hamming + m there: linearise in the margin part only
                m = 0.0
                if r.slot1 >= 0:
                    o.st.margins(&w[0], i, o.label(r.slot1), 1, &mk, o.work, False)
                    m += r.weight1 * mk
                if r.slot2 >= 0:
                    o.st.margins(&w[0], i, o.label(r.slot2), 1, &mk, o.work, False)
                    m += (1.0 - r.weight1) * mk
            b += Cs[i] * (r.value - dh * m)
            if r.slot1 >= 0:
                o.st.update(&a[0], i, Cs[i] * dh * r.weight1, o.label(r.slot1))
            if r.slot2 >= 0:
                o.st.update(&a[0], i, Cs[i] * dh * (1.0 - r.weight1), o.label(r.slot2))
    return b, hsum, calls
