# cython: language_level=3
"""Constraint generation for the one-slack cutting plane (Joachims, Finley & Yu 2009; the LSE
variant of Balamurugan et al., Alg. 1).

With per-example weights C_i the one-slack problem reads
    min_w 1/2 ||w||^2 + xi   s.t.  w . a >= b - xi  for every constraint (a, b),
margin rescaling: a = sum_i C_i dphi_i(ybar_i), b = sum_i C_i Delta(ybar_i, y_i) over all choices
of ybar; LSE: a = sum_i C_i sum_{y in S_i} dphi_i(y), b likewise, over all subsets S_i. The most
violated constraint takes ybar_i = argmax_y H_i(y) (resp. S_i = {y : H_i(y) > 0}) with
H_i(y) = Delta(y, y_i) + f(y) - f(y_i).

Every example keeps a label cache (margin rescaling: a ring of the last `cache_size` oracle
answers, svm_struct's -w 4 idea; LSE: the violator set V_i of Alg. 1, which only grows). The
examples are split into fixed chunks; `pass_chunk(w, c, use_oracle)` refreshes chunk c's part of
the most violated constraint either with the loss-augmented oracle (type-I: the answer joins the
cache first, Alg. 1 steps 8-11) or from the caches only (type-II), and keeps that part in the
chunk's own accumulator. The accumulators are *running*: the selection of each example (ybar_i,
resp. S_i, as flags on its cache) is remembered, and a pass only adds C_i dphi_i of the labels
that entered and subtracts those that left, since from one iteration to the next few labels
change. An oracle pass rebuilds its chunk's accumulator from scratch, so rounding cannot pile up.
Chunks touch disjoint examples, their own accumulator and their own scratch buffers, and run
without the GIL: `run_pass` shares a pass's chunks among the threads of the oracle's Team
(team.pxd). `collect` adds the accumulators in chunk order, so the constraint does not depend on
the number of threads.
"""
import numpy as np

from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memset

from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.labels cimport LabelStore
from ssvmlinear._kernels.team cimport ShardWork, Team


# Team job kinds of OneSlackOracle
cdef enum:
    PASS_JOB = 0
    LINE_JOB = 1


cdef Py_ssize_t _own_lines(Py_ssize_t count, Py_ssize_t itemsize):
    """Row length (items) for a per-chunk buffer that threads write concurrently: at least
    `count` items and no 64-byte cache line shared with the next row whatever the base alignment
    (false sharing would make every oracle answer written to ybuf cost a cache-line transfer)."""
    return ((max(count, 1) * itemsize + 127) // 64 * 64) // itemsize


cdef class OneSlackOracle(ShardWork):
    cdef Structure st
    cdef double[::1] Cs
    cdef Py_ssize_t n
    cdef readonly bint lse
    cdef readonly int cache_size       # ring capacity for margin rescaling; LSE sets grow
    cdef readonly bint exact_violators # LSE: also add the best violator outside V_i (k-best)
    cdef readonly Py_ssize_t n_chunks
    cdef readonly Py_ssize_t n_weights
    # per example: the label cache with each label's loss and (LSE) whether it is in S_i of the
    # running constraint; a ring of cache_size labels for margin rescaling
    cdef LabelStore cache
    cdef int *sel                      # margin: the cache slot of ybar_i in the running constraint, -1: y_i
    cdef long long[::1] bounds         # chunk c = examples bounds[c] .. bounds[c+1]-1
    cdef double[:, ::1] acc            # running accumulator of every chunk
    cdef double[:, ::1] work           # per-chunk structure workspace
    cdef int[:, ::1] ybuf              # per-chunk oracle answer
    cdef double **hbuf                 # per-chunk margins of a cache (grows)
    cdef Py_ssize_t *hcap
    cdef int **klab                    # per-chunk k-best buffers (exact_violators; grow)
    cdef double **kval
    cdef double **kwork
    cdef Py_ssize_t *kcap
    cdef double[::1] chunk_b           # per-chunk results of the last pass
    cdef double[::1] chunk_h
    cdef long long[::1] chunk_calls
    cdef long long[::1] chunk_changes  # labels that entered or left the constraint in cache passes
    cdef double **brk                  # per-chunk breakpoints of the last line pass: (t, slope jump) pairs
    cdef Py_ssize_t *brk_n
    cdef Py_ssize_t *brk_cap
    cdef double[::1] chunk_s0          # per-chunk slope at t = 0+ of the last line pass
    cdef readonly Team team
    cdef const double *job_w           # the pass being shared (run_pass; line_pass: the base point)
    cdef const double *job_d           # line_pass: the direction
    cdef double job_tmax
    cdef bint job_oracle, job_rebuild
    cdef int job_status

    def __cinit__(self):
        self.sel = NULL
        self.hbuf = NULL
        self.hcap = NULL
        self.brk = NULL
        self.brk_n = NULL
        self.brk_cap = NULL
        self.klab = NULL
        self.kval = NULL
        self.kwork = NULL
        self.kcap = NULL
        self.n = 0
        self.n_chunks = 0

    def __init__(self, Structure structure, Cs, bint lse=False, int cache_size=10, bint exact_violators=False,
                 bounds=None, Team team=None):
        """bounds: chunk boundaries (increasing, from 0 to n_examples); default one chunk. team:
        the threads run_pass shares chunks with (default: this thread only)."""
        cdef Py_ssize_t i, c, m = max(structure.n_examples, 1)
        self.st = structure
        self.Cs = np.ascontiguousarray(Cs, dtype=np.float64).copy()
        if self.Cs.shape[0] != structure.n_examples:
            raise ValueError("need one C per example")
        if bounds is None:
            bounds = [0, structure.n_examples]
        b = np.ascontiguousarray(bounds, dtype=np.int64)
        if b.shape[0] < 2 or b[0] != 0 or b[b.shape[0] - 1] != structure.n_examples or np.any(np.diff(b) < 0):
            raise ValueError("bounds must rise from 0 to n_examples")
        self.bounds = b
        self.n_chunks = b.shape[0] - 1
        self.n_weights = structure.n_weights
        self.lse = lse
        self.exact_violators = exact_violators
        self.cache_size = max(cache_size, 1)
        self.acc = np.zeros((self.n_chunks, _own_lines(self.n_weights, 8)))
        self.work = np.zeros((self.n_chunks, _own_lines(structure.workspace_size(), 8)))
        self.ybuf = np.zeros((self.n_chunks, _own_lines(structure.max_label_len, 4)), dtype=np.int32)
        self.chunk_b = np.zeros(self.n_chunks)
        self.chunk_h = np.zeros(self.n_chunks)
        self.chunk_calls = np.zeros(self.n_chunks, dtype=np.int64)
        self.chunk_changes = np.zeros(self.n_chunks, dtype=np.int64)
        self.cache = LabelStore(structure, ("loss", "inset"), 0 if lse else self.cache_size)
        self.sel = <int *> malloc(m * sizeof(int))
        self.hbuf = <double **> calloc(self.n_chunks, sizeof(double *))
        self.hcap = <Py_ssize_t *> calloc(self.n_chunks, sizeof(Py_ssize_t))
        self.klab = <int **> calloc(self.n_chunks, sizeof(int *))
        self.kval = <double **> calloc(self.n_chunks, sizeof(double *))
        self.kwork = <double **> calloc(self.n_chunks, sizeof(double *))
        self.kcap = <Py_ssize_t *> calloc(self.n_chunks, sizeof(Py_ssize_t))
        self.brk = <double **> calloc(self.n_chunks, sizeof(double *))
        self.brk_n = <Py_ssize_t *> calloc(self.n_chunks, sizeof(Py_ssize_t))
        self.brk_cap = <Py_ssize_t *> calloc(self.n_chunks, sizeof(Py_ssize_t))
        self.chunk_s0 = np.zeros(self.n_chunks)
        if not (self.sel and self.hbuf and self.hcap and self.klab and self.kval and self.kwork and self.kcap
                and self.brk and self.brk_n and self.brk_cap):
            raise MemoryError()
        self.n = structure.n_examples
        for i in range(m):
            self.sel[i] = -1
        self.team = team if team is not None else Team(1)

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.hbuf != NULL:
            for i in range(self.n_chunks):
                free(self.hbuf[i])
                free(self.klab[i])
                free(self.kval[i])
                free(self.kwork[i])
                free(self.brk[i])
        free(self.brk)
        free(self.brk_n)
        free(self.brk_cap)
        free(self.sel)
        free(self.hbuf)
        free(self.hcap)
        free(self.klab)
        free(self.kval)
        free(self.kwork)
        free(self.kcap)

    cdef int _add(self, Py_ssize_t i, const int *y, double loss, double *a) noexcept nogil:
        """Put y in example i's cache (a full margin cache replaces its oldest entry, first taking
        it out of the running accumulator `a` if it was example i's choice); -1 on OOM."""
        cdef int k
        if self.cache.find(i, y) >= 0:
            return 0
        k = self.cache.victim(i)
        if k >= 0 and self.sel[i] == k:
            self.st.update(a, i, -self.Cs[i], self.cache.label(i, k))
            self.sel[i] = -1
        k = self.cache.append(i, y)
        if k < 0:
            return -1
        self.cache.col(i, 0)[k] = loss
        return 0

    def cache_sizes(self):
        return self.cache.sizes()

    def get_caches(self):
        """The label caches as plain arrays: sizes (n), labels (concatenated), loss."""
        state = self.cache.get_state()
        return dict(sizes=state["sizes"], labels=state["labels"], loss=state["loss"])

    def set_caches(self, state):
        """Add labels to the caches: `state` as get_caches() returns it (or the working sets of
        SDM / LSE-SDCD's get_state()). Labels whose loss is 0 (y_i itself) are skipped. The
        running constraint is reset (the next pass should be an oracle pass or rebuild)."""
        sizes, labels, loss, offsets = self.cache.state_offsets(state, "set_caches")
        cdef int[::1] lab = labels
        cdef Py_ssize_t i, k, L, lpos = 0
        for i in range(self.n):
            L = self.st.label_len(i)
            for k in range(sizes[i]):
                if loss[lpos] > 0.0 and self._add(i, &lab[offsets[i] + k * L], loss[lpos], &self.acc[0, 0]) < 0:
                    raise MemoryError("cutting-plane label caches")
                lpos += 1
        self.reset()

    def get_state(self):
        """The caches and the running constraint (choices, in-constraint flags, accumulators):
        set_state() continues exactly where this oracle left off (a shard sent to a process)."""
        return dict(cache=self.cache.get_state(), sel=np.array([self.sel[i] for i in range(self.n)], dtype=np.int32),
                    acc=np.asarray(self.acc).copy())

    def set_state(self, state):
        self.cache.load(state["cache"])
        cdef Py_ssize_t i
        for i in range(self.n):
            self.sel[i] = state["sel"][i]
        np.asarray(self.acc)[:, :] = state["acc"]

    def reset(self):
        """Empty the running constraint (selections and accumulators)."""
        cdef Py_ssize_t i, k
        for i in range(self.n):
            self.sel[i] = -1
            for k in range(self.cache.size[i]):
                self.cache.col(i, 1)[k] = 0.0
        self.acc[:, :] = 0.0

    cdef int _grow(self, Py_ssize_t c, Py_ssize_t need, bint kbest) noexcept nogil:
        """Chunk c's margin buffer (and k-best buffers) hold at least `need` labels; -1 on OOM."""
        cdef Py_ssize_t new
        cdef double *hp
        cdef int *kl
        cdef double *kv
        cdef double *kw
        if need > self.hcap[c]:
            new = max(2 * need, 16)
            hp = <double *> realloc(self.hbuf[c], new * sizeof(double))
            if hp == NULL:
                return -1
            self.hbuf[c] = hp
            self.hcap[c] = new
        if kbest and need > self.kcap[c]:
            new = max(2 * need, 16)
            kl = <int *> realloc(self.klab[c], new * max(self.st.max_label_len, 1) * sizeof(int))
            if kl == NULL:
                return -1
            self.klab[c] = kl
            kv = <double *> realloc(self.kval[c], new * sizeof(double))
            if kv == NULL:
                return -1
            self.kval[c] = kv
            kw = <double *> realloc(self.kwork[c], max(self.st.kbest_workspace_size(<int> new), 1) * sizeof(double))
            if kw == NULL:
                return -1
            self.kwork[c] = kw
            self.kcap[c] = new
        return 0

    cdef int _chunk(self, const double *w, Py_ssize_t c, bint use_oracle, bint rebuild) noexcept nogil:
        """One pass over chunk c (see the module docstring); -1 on OOM."""
        cdef Py_ssize_t i, L, k, best
        cdef double bsum = 0.0, hsum = 0.0, m, d, h, hbest, C
        cdef long long calls = 0, changes = 0
        cdef int got, moved, kb, found
        cdef double *a = &self.acc[c, 0]
        cdef double *work = &self.work[c, 0]
        cdef int *ybuf = &self.ybuf[c, 0]
        cdef double *H
        cdef double *fl
        cdef double *loss
        if rebuild:
            memset(a, 0, self.n_weights * sizeof(double))
            for i in range(self.bounds[c], self.bounds[c + 1]):
                self.sel[i] = -1
                for k in range(self.cache.size[i]):
                    self.cache.col(i, 1)[k] = 0.0
        for i in range(self.bounds[c], self.bounds[c + 1]):
            C = self.Cs[i]
            if C <= 0.0:
                continue
            L = self.st.label_len(i)
            if use_oracle:
                self.st.oracle(w, i, 1.0, ybuf, &m, &d, work)
                calls += 1
                if (self.lse and self.exact_violators and m + d > 0.0 and self.cache.find(i, ybuf) >= 0):
                    # the argmax is known: add the best violator outside V_i, if any (k-best with
                    # k = |V_i| + 1 always reaches one); kbest leaves `work` (the unary scores) intact.
                    # The 2-best list is tried first: the runner-up is often outside V_i, and a
                    # selection of |V_i| + 1 labels per example was the multiclass pass's largest cost.
                    if self._grow(c, self.cache.size[i] + 2, True) < 0:
                        return -1
                    kb = min(2, self.cache.size[i] + 1)
                    while True:
                        got = self.st.kbest(w, i, 1.0, kb, self.klab[c], self.kval[c], self.kwork[c])
                        found = 0
                        for k in range(got):
                            if self.kval[c][k] <= 0.0:
                                found = 1      # (no violator further down either)
                                break
                            if self.cache.find(i, self.klab[c] + k * L) < 0:
                                if self._add(i, self.klab[c] + k * L, self.st.loss(i, self.klab[c] + k * L), a) < 0:
                                    return -1
                                found = 1
                                break
                        if found or got < kb or kb == self.cache.size[i] + 1:
                            break
                        kb = self.cache.size[i] + 1
                if self._add(i, ybuf, d, a) < 0:
                    return -1
            if self.cache.size[i] == 0:
                continue
            if self._grow(c, self.cache.size[i], False) < 0:
                return -1
            H = self.hbuf[c]
            self.st.margins(w, i, self.cache.labels(i), self.cache.size[i], H, work, use_oracle)
            # H[k] becomes the coefficient of label k's change (+C enters, -C leaves), so that
            # the example's changes go to `a` in one update_many (merged per position and tag)
            if self.lse:
                loss = self.cache.col(i, 0)
                fl = self.cache.col(i, 1)
                moved = 0
                for k in range(self.cache.size[i]):
                    h = H[k] + loss[k]
                    H[k] = 0.0
                    if h > 0.0:
                        bsum += C * loss[k]
                        hsum += C * h
                        if fl[k] == 0.0:
                            H[k] = C
                            fl[k] = 1.0
                            moved += 1
                    elif fl[k] != 0.0:
                        H[k] = -C
                        fl[k] = 0.0
                        moved += 1
                if moved:
                    self.st.update_many(a, i, H, self.cache.labels(i), self.cache.size[i], work)
                    changes += moved
            else:
                loss = self.cache.col(i, 0)
                best = -1
                hbest = 0.0          # y_i itself: H = 0
                for k in range(self.cache.size[i]):
                    h = H[k] + loss[k]
                    H[k] = 0.0
                    if h > hbest:
                        hbest = h
                        best = k
                if best >= 0:
                    bsum += C * loss[best]
                    hsum += C * hbest
                if best != self.sel[i]:
                    if self.sel[i] >= 0:
                        H[self.sel[i]] = -C
                    if best >= 0:
                        H[best] = C
                    self.st.update_many(a, i, H, self.cache.labels(i), self.cache.size[i], work)
                    self.sel[i] = <int> best
                    changes += 1
        self.chunk_b[c] = bsum
        self.chunk_h[c] = hsum
        self.chunk_calls[c] = calls
        if not use_oracle:
            self.chunk_changes[c] += changes
        return 0

    cdef int _breakpoint(self, Py_ssize_t c, double t, double jump) noexcept nogil:
        """Append (t, jump) to chunk c's breakpoints; -1 on OOM."""
        cdef Py_ssize_t new
        cdef double *p
        if self.brk_n[c] == self.brk_cap[c]:
            new = max(2 * self.brk_cap[c], 64)
            p = <double *> realloc(self.brk[c], 2 * new * sizeof(double))
            if p == NULL:
                return -1
            self.brk[c] = p
            self.brk_cap[c] = new
        self.brk[c][2 * self.brk_n[c]] = t
        self.brk[c][2 * self.brk_n[c] + 1] = jump
        self.brk_n[c] += 1
        return 0

    cdef int _line_chunk(self, Py_ssize_t c) noexcept nogil:
        """Chunk c's part of the line search along w + t d, t in [0, job_tmax], over the caches:
        each example's loss restricted to its cache is convex piecewise linear in t (margin: the
        upper envelope of its labels' lines H_k(w) + t m_k(d) and of y_i's zero line; LSE: the sum
        of their positive parts). Writes C_i times its right slope at t = 0 (summed) and the
        points where that slope jumps, with the jumps. -1 on OOM."""
        cdef Py_ssize_t i, k, K, nxt
        cdef double C, cc, ce, tcur, tx, tb, eb, s0 = 0.0, tmax = self.job_tmax
        cdef double *H
        cdef double *E
        cdef double *loss
        cdef double *work = &self.work[c, 0]
        self.brk_n[c] = 0
        for i in range(self.bounds[c], self.bounds[c + 1]):
            C = self.Cs[i]
            K = self.cache.size[i]
            if C <= 0.0 or K == 0:
                continue
            if self._grow(c, 2 * K, False) < 0:
                return -1
            H = self.hbuf[c]
            E = H + K
            loss = self.cache.col(i, 0)
            self.st.margins(self.job_w, i, self.cache.labels(i), <int> K, H, work, False)
            self.st.margins(self.job_d, i, self.cache.labels(i), <int> K, E, work, False)
            for k in range(K):
                H[k] += loss[k]
            if self.lse:
                for k in range(K):
                    if H[k] > 0.0 or (H[k] == 0.0 and E[k] > 0.0):
                        s0 += C * E[k]
                        if E[k] < 0.0:
                            tx = -H[k] / E[k]
                            if tx <= tmax and self._breakpoint(c, tx, -C * E[k]) < 0:
                                return -1
                    elif E[k] > 0.0:
                        tx = -H[k] / E[k]
                        if tx <= tmax and self._breakpoint(c, tx, C * E[k]) < 0:
                            return -1
                continue
            # margin: walk the upper envelope from t = 0 (nxt = -1: y_i's zero line)
            cc = 0.0
            ce = 0.0
            for k in range(K):
                if H[k] > cc or (H[k] == cc and E[k] > ce):
                    cc, ce = H[k], E[k]
            s0 += C * ce
            tcur = 0.0
            while True:
                nxt = -2
                tb = tmax
                eb = ce
                if ce < 0.0:             # y_i's zero line overtakes where cc + t ce = 0
                    tx = max(-cc / ce, tcur)
                    if tx <= tb:
                        nxt, tb, eb = -1, tx, 0.0
                for k in range(K):
                    if E[k] > ce:
                        tx = max((cc - H[k]) / (E[k] - ce), tcur)
                        if tx < tb or (tx == tb and (nxt == -2 or E[k] > eb)):
                            nxt, tb, eb = k, tx, E[k]
                if nxt == -2:
                    break
                if self._breakpoint(c, tb, C * (eb - ce)) < 0:
                    return -1
                cc = H[nxt] if nxt >= 0 else 0.0
                ce = eb
                tcur = tb
        self.chunk_s0[c] = s0
        return 0

    def line_pass(self, const double[::1] w, const double[::1] d, double t_max):
        """The caches' loss along w + t d, t in [0, t_max], as slopes (OCAS's line search over the
        label caches; see _line_chunk): every chunk shared by the team's threads. Read the result
        with lines()."""
        if w.shape[0] != self.n_weights or d.shape[0] != self.n_weights:
            raise ValueError("w and d must have n_weights entries")
        self.job_w, self.job_d, self.job_tmax, self.job_status = &w[0], &d[0], t_max, 0
        with nogil:
            self.team.share(<void *> self, LINE_JOB, 0, self.n_chunks, 1)
        if self.job_status < 0:
            raise MemoryError("cutting-plane line search")

    def lines(self):
        """The last line_pass: (per-chunk slopes at t = 0+, breakpoints t, slope jumps), chunk by
        chunk in chunk order."""
        cdef Py_ssize_t c
        parts = [np.asarray(<double[:2 * self.brk_n[c]]> self.brk[c]).reshape(-1, 2).copy()
                 if self.brk_n[c] else np.zeros((0, 2)) for c in range(self.n_chunks)]
        pts = np.concatenate(parts) if parts else np.zeros((0, 2))
        return np.asarray(self.chunk_s0).copy(), pts[:, 0].copy(), pts[:, 1].copy()

    def pass_chunk(self, const double[::1] w, Py_ssize_t c, bint use_oracle, bint rebuild=False):
        """Refresh chunk c's part of the most violated constraint at w (see the module docstring):
        type-I (use_oracle: the loss-augmented oracle's answer joins the cache first) or type-II;
        `rebuild` recomputes the chunk's accumulator from scratch. Runs without the GIL and
        allocates nothing but growing caches, so chunks can run in parallel threads."""
        cdef int status
        if c < 0 or c >= self.n_chunks:
            raise IndexError("chunk index out of range")
        if w.shape[0] != self.n_weights:
            raise ValueError("w has the wrong length")
        with nogil:
            status = self._chunk(&w[0], c, use_oracle, rebuild)
        if status < 0:
            raise MemoryError("cutting-plane label caches")

    @property
    def n_changes(self):
        """Labels that entered or left the constraint in cache passes (all chunks)."""
        return int(np.asarray(self.chunk_changes).sum())

    cdef void compute(self, int kind, Py_ssize_t base, Py_ssize_t lo, Py_ssize_t hi,
                      Py_ssize_t tid) noexcept nogil:
        cdef Py_ssize_t c
        for c in range(lo, hi):
            if kind == LINE_JOB:
                if self._line_chunk(c) < 0:
                    self.job_status = -1
            elif self._chunk(self.job_w, c, self.job_oracle, self.job_rebuild) < 0:
                self.job_status = -1

    def run_pass(self, const double[::1] w, bint use_oracle, bint rebuild=False):
        """pass_chunk for every chunk, shared by the team's threads (nogil)."""
        if w.shape[0] != self.n_weights:
            raise ValueError("w has the wrong length")
        self.job_w, self.job_oracle, self.job_rebuild, self.job_status = &w[0], use_oracle, rebuild, 0
        with nogil:
            self.team.share(<void *> self, PASS_JOB, 0, self.n_chunks, 1)
            self.cache.maybe_compact()    # (every thread is done: the blocks growing caches left)
        if self.job_status < 0:
            raise MemoryError("cutting-plane label caches")

    def cache_pass(self, const double[::1] w, double[::1] a):
        """Type-II pass over every chunk (run_pass without the oracle), then collect(a). Returns
        (b, hsum, oracle calls = 0)."""
        self.run_pass(w, False, False)
        return self.collect(a)

    def collect(self, double[::1] a):
        """a = sum of the chunk accumulators in chunk order; returns (b, hsum, oracle calls) of
        the last pass, where hsum = sum_i C_i loss_i(w) with loss_i = max(0, max over the cache
        of H_i) (margin; exact after an oracle pass) or the sum over the cache of H_i^+ (LSE);
        hsum = b - w . a up to rounding."""
        if a.shape[0] != self.n_weights:
            raise ValueError("a has the wrong length")
        a[:] = 0.0
        return self.add_chunks(a, 0.0, 0.0, 0)

    def add_chunks(self, double[::1] a, double b, double hsum, long long calls):
        """collect() continued from a running sum: adds the chunks, in order, to a (and to b, hsum,
        calls), so that shards holding consecutive chunks give the in-process sum bit for bit when
        the running sum visits them in order (ssvmlinear.distributed)."""
        return _add_chunks(self.acc, self.chunk_b, self.chunk_h, self.chunk_calls, a, b, hsum, calls)


def _add_chunks(const double[:, ::1] parts, const double[::1] chunk_b, const double[::1] chunk_h,
                const long long[::1] chunk_calls, double[::1] a, double b, double hs, long long calls):
    cdef Py_ssize_t c, j, d = a.shape[0]
    if d > parts.shape[1]:
        raise ValueError("a has the wrong length")
    with nogil:
        for c in range(parts.shape[0]):
            for j in range(d):
                a[j] += parts[c, j]
            b += chunk_b[c]
            hs += chunk_h[c]
            calls += chunk_calls[c]
    return b, hs, calls


from ssvmlinear._kernels.search cimport StructureOracle, SearchResult, run_search
from ssvmlinear._kernels.surrogate cimport Surrogate, psi, psi_dh


cdef class SurrogatePass(ShardWork):
    """The most violated one-slack constraint of a bi-criteria surrogate, in fixed chunks of
    examples shared by a Team (one StructureOracle and one accumulator per chunk, added in chunk
    order, so the result does not depend on the number of threads). For each example the search
    returns ybar (or a convex combination) at the point (h, g); since psi is convex in h,
    psi(h(w'), g) >= psi(h, g) + psi_h (h(w') - h), so a += C_i psi_h dphi_i(ybar),
    b += C_i (psi(h, g) - psi_h m) with m the margin part of h (h = m except for Micro-F1, where
    h = Hamming + m) (slack rescaling: a = sum C_i Delta_i dphi_i, b = sum C_i Delta_i, Joachims
    et al.'s 1-slack slack-rescaling constraint)."""
    cdef Surrogate s
    cdef int method, max_calls
    cdef double ratio
    cdef double[::1] Cs
    cdef long long[::1] bounds
    cdef list oracles
    cdef void **oracle_of
    cdef double[:, ::1] parts
    cdef double[::1] chunk_b, chunk_h
    cdef long long[::1] chunk_calls
    cdef readonly Team team
    cdef const double *job_w
    cdef readonly Py_ssize_t failed_example     # an example whose search failed (-1: none)

    def __cinit__(self):
        self.oracle_of = NULL
        self.failed_example = -1

    def __init__(self, Structure st, Cs, bounds, int kind, double alpha, double beta, int method,
                 double ratio, int max_calls, bint microf1, Team team=None):
        self.s.kind, self.s.alpha, self.s.beta = kind, alpha, beta
        self.method, self.ratio, self.max_calls = method, ratio, max_calls
        self.Cs = np.ascontiguousarray(Cs, dtype=np.float64)
        self.bounds = np.ascontiguousarray(bounds, dtype=np.int64)
        n_chunks = self.bounds.shape[0] - 1
        self.oracles = [StructureOracle(st, capacity=2 * max_calls + 8, microf1=microf1) for _ in range(n_chunks)]
        self.oracle_of = <void **> malloc(max(n_chunks, 1) * sizeof(void *))
        if self.oracle_of == NULL:
            raise MemoryError()
        for c, o in enumerate(self.oracles):
            self.oracle_of[c] = <void *> o
        self.parts = np.zeros((n_chunks, _own_lines(st.n_weights, 8)))
        self.chunk_b = np.zeros(n_chunks)
        self.chunk_h = np.zeros(n_chunks)
        self.chunk_calls = np.zeros(n_chunks, dtype=np.int64)
        self.team = team if team is not None else Team(1)

    def __dealloc__(self):
        free(self.oracle_of)

    cdef void compute(self, int kind, Py_ssize_t base, Py_ssize_t lo, Py_ssize_t hi,
                      Py_ssize_t tid) noexcept nogil:
        cdef Py_ssize_t c
        for c in range(lo, hi):
            self._chunk(<StructureOracle> self.oracle_of[c], c)

    cdef void _chunk(self, StructureOracle o, Py_ssize_t c) noexcept nogil:
        cdef Py_ssize_t i, j, d = self.parts.shape[1]
        cdef SearchResult r
        cdef double b = 0.0, hsum = 0.0, dh, m, mk
        cdef long long calls = 0
        cdef double *a = &self.parts[c, 0]
        cdef const double *w = self.job_w
        for j in range(d):
            a[j] = 0.0
        for i in range(self.bounds[c], self.bounds[c + 1]):
            o.set_example(w, 1.0, i)
            r = run_search(o, &self.s, self.method, 1.0, self.ratio, self.max_calls, 0)
            calls += r.n_calls
            if r.error:
                self.failed_example = i
                continue
            if r.value <= 0.0:
                continue
            dh = psi_dh(&self.s, r.h, r.g)
            hsum += self.Cs[i] * r.value
            m = r.h
            if o.microf1:      # h = Hamming + m there: linearise in the margin part only
                m = 0.0
                if r.slot1 >= 0:
                    o.st.margins(w, i, o.label(r.slot1), 1, &mk, o.work, False)
                    m += r.weight1 * mk
                if r.slot2 >= 0:
                    o.st.margins(w, i, o.label(r.slot2), 1, &mk, o.work, False)
                    m += (1.0 - r.weight1) * mk
            b += self.Cs[i] * (r.value - dh * m)
            if r.slot1 >= 0:
                o.st.update(a, i, self.Cs[i] * dh * r.weight1, o.label(r.slot1))
            if r.slot2 >= 0:
                o.st.update(a, i, self.Cs[i] * dh * (1.0 - r.weight1), o.label(r.slot2))
        self.chunk_b[c], self.chunk_h[c], self.chunk_calls[c] = b, hsum, calls

    def run(self, const double[::1] w, double[::1] a):
        """The constraint at w into a; returns (b, sum_i C_i psi_i, oracle calls)."""
        self.run_pass(w)
        self.check()
        a[:] = 0.0
        return self.add_chunks(a, 0.0, 0.0, 0)

    def check(self):
        """RuntimeError naming an example whose search failed in the passes so far."""
        if self.failed_example >= 0:
            raise RuntimeError(f"the cutting plane: the search failed on example {self.failed_example}")

    def run_pass(self, const double[::1] w):
        """Every chunk's part of the constraint at w (shared by the team's threads, nogil)."""
        if w.shape[0] > self.parts.shape[1]:
            raise ValueError("w has the wrong length")
        self.job_w = &w[0]
        with nogil:
            self.team.share(<void *> self, 0, 0, self.bounds.shape[0] - 1, 1)

    def add_chunks(self, double[::1] a, double b, double hsum, long long calls):
        """As OneSlackOracle.add_chunks."""
        return _add_chunks(self.parts, self.chunk_b, self.chunk_h, self.chunk_calls, a, b, hsum, calls)
