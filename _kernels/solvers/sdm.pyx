# cython: language_level=3
"""Sequential dual method (SDM) for the n-slack margin-rescaling structural SVM dual

    min_alpha  D(alpha) = 1/2 ||w(alpha)||^2 - sum_i sum_y alpha_i(y) Delta(y, y_i)
    s.t.       alpha_i(y) >= 0,  sum_y alpha_i(y) = C_i,   w = sum_i sum_y alpha_i(y) dphi_i(y),

dphi_i(y) = phi(x_i, y_i) - phi(x_i, y) (Keerthi et al. 2008; Balamurugan et al. 2011). Each example
keeps a working set V_i (labels.pxd); a visit optimises the example's alphas over V_i -- exactly where
the structure solves its sub-problem in closed form (multiclass: Crammer-Singer's), else by SMO steps
on the maximal violating pair of H_i(y) = Delta(y, y_i) - w . dphi_i(y) -- and updates w once
(update_many). Type-I passes first
add the loss-augmented oracle's label (and up to n_runners violating runners-up) to V_i; type-II
passes only re-optimise working sets of size >= 2; members with alpha = 0 that do not violate are
dropped. KKT violation of example i: max_y H_i(y) - min_{alpha_i(y) > 0} H_i(y), zero at the optimum.

Pass variants, all with the plain method's optimum and stopping rule:
- batched (batch B > 1): the oracles of a block of B shuffled examples are asked at the block's
  starting weights, shared by the solver's Team, then the block's visits run in order (B = 1: the
  sequential method, oracle inline);
- sharded (n_shards S > 1): each round's examples are cut into S shards visited concurrently, each
  against its own copy of w, then combined by the exact line search in [0, 1] along the sum of their
  changes (every alpha moves by the same fraction, so it stays feasible); results depend on S only;
- blocked (visit_block > 0, memory-mapped data): blocks of consecutive examples in random order, the
  next block's rows read ahead (posix_madvise WILLNEED), so a pass reads the file in long runs.
Cache hints ask for the rows and weights of visits ahead; they change no value. Which thread
computes an oracle answer never changes it, and shared sums are taken in example order, so results
do not depend on the number of threads.
"""
import numpy as np

from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy
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
# grow faster at no extra oracle cost, but each member costs every later visit
# (benchmarks/planted_vs_liblinear.py, benchmarks/multiclass_vs_liblinear.py).
RUNNERS_UP = 1

# A sharded pass combines its shards every n_shards x shard_block visits, shard_block =
# max(SHARD_BLOCK, n_weights / 8): a combination costs a few sweeps over w per shard, which this
# keeps small beside the visits, while more frequent combinations see fresher weights
# (benchmarks/sdm_threads.py).
SHARD_BLOCK = 256

# The primal's slack terms are summed per block of this many examples (in example order), then
# the blocks in order: the same value for any number of threads, with n / SLACK_BLOCK doubles kept.
cdef enum:
    SLACK_BLOCK = 256
    # How many visits ahead the weights a visit reads are asked into the cache (its rows twice as
    # far): early enough for the loads to overlap the visits in between
    # (benchmarks/planted_vs_liblinear.py).
    CACHE_AHEAD = 2
    # ... and only when w is larger than this (bytes): a smaller one stays in the core's cache, where
    # the hints would cost instructions for nothing (benchmarks/multiclass_vs_liblinear.py)
    HINT_WEIGHTS_BYTES = 1 << 20

# kinds of shared work
cdef enum:
    JOB_ORACLES = 1   # the block's oracles: pass positions lo..hi-1 into slots (t - lo)
    JOB_SLACKS = 2    # slack[b] = sum C_i max(0, max_y H_i(y)) over blocks lo..hi-1 (primal objective)
    JOB_SHARDS = 3    # the visits of shards lo..hi-1 of a sharded pass


cdef inline double _violating_pair(const double *H, const double *alpha, int n, int *up, int *down) noexcept nogil:
    """The maximal violating pair of a working set: up = argmax H, down = argmin H over alpha > 0
    (-1: none); returns H[up] - H[down], 0 without a down."""
    cdef int k
    up[0] = 0
    down[0] = -1
    for k in range(n):
        if H[k] > H[up[0]]:
            up[0] = k
        if alpha[k] > 0.0 and (down[0] < 0 or H[k] < H[down[0]]):
            down[0] = k
    return H[up[0]] - H[down[0]] if down[0] >= 0 else 0.0


# Scratch and counters of one thread of visits (a lane): the plain method has one, whose weights are
# the solver's; a sharded pass (n_shards > 1) one per shard, each with its own copy of w.
cdef struct Lane:
    double *u              # the weights its visits read and update
    double *H
    double *dalpha
    double *rows           # two Gram rows (up, down) when the working sets keep none
    char *flags
    Py_ssize_t cap         # members the four arrays above hold
    double *work           # oracle and margins scratch (margins read the oracle's scores from it)
    double *gwork          # Gram-row scratch of the working sets' appends
    int *ybuf
    int *rlabels           # runners-up of an inline oracle: n_runners labels, their values
    double *rvalues
    Py_ssize_t start, stop # a sharded pass: its positions order[start:stop]
    long long smo_steps
    long long oracle_calls
    double oracle_seconds
    double slack_seen      # sum of C_i max(0, the oracle's H_i) over its type-I visits (pass_slack)
    double dL              # sum of its alpha changes times their losses (a sharded pass)
    double vmax            # the largest KKT violation its visits saw
    bint failed            # out of memory
    # a sharded pass records each visit: the example, where its alphas before the visit start in
    # `saved` (and its members' shrinking flags in `keepable`), how many members it has
    bint record
    Py_ssize_t *rec_i
    Py_ssize_t *rec_off
    Py_ssize_t n_rec, rec_cap
    double *saved
    char *keepable
    Py_ssize_t n_saved, saved_cap
    char pad[64]           # lanes run on different threads: no cache line shared with the next


cdef inline int _resize(void **p, size_t nbytes) noexcept nogil:
    """realloc *p to nbytes in place (-1, *p untouched: out of memory)."""
    cdef void *q = realloc(p[0], nbytes)
    if q == NULL:
        return -1
    p[0] = q
    return 0


cdef int _lane_scratch(Lane *L, Py_ssize_t m) noexcept nogil:
    """Room for m members in the lane's visit arrays (-1: out of memory)."""
    if m <= L.cap:
        return 0
    m = max(m, 2 * L.cap)
    if (_resize(<void **> &L.H, m * sizeof(double)) < 0 or _resize(<void **> &L.dalpha, m * sizeof(double)) < 0
            or _resize(<void **> &L.flags, m * sizeof(char)) < 0
            or _resize(<void **> &L.rows, 2 * m * sizeof(double)) < 0):
        return -1
    L.cap = m
    return 0


cdef int _lane_record(Lane *L, Py_ssize_t i, const double *alpha, Py_ssize_t n) noexcept nogil:
    """Record a visit of example i with its n alphas before the visit (-1: out of memory)."""
    cdef Py_ssize_t m
    if L.n_rec == L.rec_cap:
        m = max(64, 2 * L.rec_cap)
        if (_resize(<void **> &L.rec_i, m * sizeof(Py_ssize_t)) < 0
                or _resize(<void **> &L.rec_off, (m + 1) * sizeof(Py_ssize_t)) < 0):
            return -1
        L.rec_cap = m
    if L.n_saved + n > L.saved_cap:
        m = max(L.n_saved + n, 2 * L.saved_cap, 256)
        if (_resize(<void **> &L.saved, m * sizeof(double)) < 0
                or _resize(<void **> &L.keepable, m * sizeof(char)) < 0):
            return -1
        L.saved_cap = m
    L.rec_i[L.n_rec] = i
    L.rec_off[L.n_rec] = L.n_saved
    memcpy(L.saved + L.n_saved, alpha, n * sizeof(double))
    L.n_rec += 1
    L.n_saved += n
    L.rec_off[L.n_rec] = L.n_saved
    return 0


cdef void _lane_free(Lane *L, bint own) noexcept nogil:
    free(L.H)
    free(L.dalpha)
    free(L.rows)
    free(L.flags)
    free(L.rlabels)
    free(L.rvalues)
    free(L.rec_i)
    free(L.rec_off)
    free(L.saved)
    free(L.keepable)
    free(L.gwork)
    if own:     # (lane 0 of the plain method borrows the solver's w, work and ybuf)
        free(L.u)
        free(L.work)
        free(L.ybuf)


cdef class SDMSolver(DualSolver):
    cdef Lane *lanes
    cdef readonly Py_ssize_t n_shards
    cdef public long long n_smo_steps
    cdef public int max_inner
    cdef public bint hint_weights     # w exceeds HINT_WEIGHTS_BYTES: hints for weights too
    cdef public int cache_ahead      # visits ahead whose weights are asked into the cache (0: none)
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
    # how many of them the next passes add (<= n_runners; the solver may start lower)
    cdef public int active_runners
    cdef Py_ssize_t Lmax
    cdef readonly Py_ssize_t batch_cap
    # per-thread oracle scratch; row 0 is the pass's own thread, row k helper k
    cdef double[:, ::1] t_work
    cdef int[:, ::1] t_ybuf
    cdef readonly Py_ssize_t n_threads
    cdef double[::1] slack    # per block of SLACK_BLOCK examples: their slack terms' sum
    # the threads that share the blocks' oracles and the shards (helpers: ssvmlinear.parallel.KernelTeam)
    cdef readonly Team team
    # seconds spent in the loss-augmented oracles: type-I passes and slack_sum's passes (wall clock
    # of the pass's thread; sharded passes: summed over the shards)
    cdef public double oracle_seconds
    # the last type-I pass's sum of C_i max(0, max_y H_i(y)), each at the weights its oracle call
    # saw (the visit's, or its block's starting weights): an estimate of slack_sum() at the pass's
    # end that costs nothing (Catalyst's inner targets)
    cdef readonly double pass_slack
    # the sharded pass being run (JOB_SHARDS)
    cdef bint job_oracle
    cdef double job_tol
    # the last round's step along the sum of the shards' changes (1: all of it)
    cdef readonly double last_step
    # examples per shard and round: a sharded pass combines the shards every S * shard_block visits
    cdef readonly Py_ssize_t shard_block
    # > 0: passes visit blocks of this many consecutive examples of the pass (rows in file order) in a
    # random order, shuffled within each block, so that a pass over a memory-mapped data set reads
    # each page once (0: one shuffle of all examples)
    cdef readonly Py_ssize_t visit_block
    cdef Py_ssize_t[::1] order_tmp       # (after the order's copy, its blocks in visiting order)
    cdef Py_ssize_t[::1] block_ends      # per block of the pass's list: its first and last example
    cdef Py_ssize_t n_blocks             # blocks of this pass (0: not cut into blocks)

    def __cinit__(self):
        self.lanes = NULL
        self.n_shards = 0

    def __init__(self, Structure structure, Cs, unsigned long long seed=0, int max_inner=100,
                 Py_ssize_t batch=1, Py_ssize_t n_threads=1, int n_runners=RUNNERS_UP,
                 Py_ssize_t n_shards=1, Py_ssize_t shard_block=0, Py_ssize_t visit_block=0):
        cdef Py_ssize_t k, R, ws_size
        cdef Lane *L
        DualSolver.__init__(self, structure, Cs, seed)
        if batch < 1 or n_threads < 1 or n_shards < 1:
            raise ValueError("batch, n_threads and n_shards must be >= 1")
        self.max_inner = max_inner
        self.cache_ahead = CACHE_AHEAD
        self.hint_weights = structure.n_weights * sizeof(double) > HINT_WEIGHTS_BYTES
        self.n_smo_steps = 0
        self.oracle_seconds = 0.0
        self.last_step = 1.0
        self.shard_block = shard_block if shard_block > 0 else max(SHARD_BLOCK, structure.n_weights // 8)
        if visit_block < 0:
            raise ValueError("visit_block must be >= 0")
        self.visit_block = visit_block
        if visit_block > 0:     # the order's copy and one slot per block
            self.order_tmp = np.zeros(self.n + self.n // visit_block + 2, dtype=np.intp)
            self.block_ends = np.zeros(2 * (self.n // visit_block + 2), dtype=np.intp)
        self.team = Team(n_threads)
        self.Lmax = max(structure.max_label_len, 1)
        self.batch_cap = batch
        self.b_labels = np.zeros(batch * self.Lmax, dtype=np.int32)
        self.b_m = np.zeros(batch)
        self.b_delta = np.zeros(batch)
        self.n_runners = max(n_runners, 0)
        self.active_runners = self.n_runners
        R = max(self.n_runners, 1)
        self.b_rlabels = np.zeros(batch * R * self.Lmax, dtype=np.int32)
        self.b_rvalues = np.zeros(batch * R)
        self.b_rcount = np.zeros(batch, dtype=np.int32)
        self.n_threads = n_threads
        ws_size = max(structure.workspace_size(), 1)
        self.t_work = np.zeros((n_threads, ws_size))
        self.t_ybuf = np.zeros((n_threads, self.Lmax), dtype=np.int32)
        self.slack = np.zeros(max((self.n + SLACK_BLOCK - 1) // SLACK_BLOCK, 1))
        self.lanes = <Lane *> calloc(n_shards, sizeof(Lane))
        if self.lanes == NULL:
            raise MemoryError()
        self.n_shards = n_shards
        for k in range(n_shards):
            L = &self.lanes[k]
            if n_shards == 1:
                L.u = &self.w[0]
                L.work = &self.work[0]
                L.ybuf = &self.ybuf[0]
            else:
                L.u = <double *> malloc(max(structure.n_weights, 1) * sizeof(double))
                L.work = <double *> calloc(ws_size, sizeof(double))
                L.ybuf = <int *> calloc(self.Lmax, sizeof(int))
                L.record = True
            L.gwork = <double *> calloc(ws_size, sizeof(double))
            L.rlabels = <int *> calloc(R * self.Lmax, sizeof(int))
            L.rvalues = <double *> calloc(R, sizeof(double))
            if (L.u == NULL or L.work == NULL or L.ybuf == NULL or L.gwork == NULL or L.rlabels == NULL
                    or L.rvalues == NULL
                    or _lane_scratch(L, 8) < 0):
                raise MemoryError()

    def release(self):
        DualSolver.release(self)
        self.slack = None
        self._free_lanes()

    cdef void _free_lanes(self):
        cdef Py_ssize_t k
        if self.lanes != NULL:
            for k in range(self.n_shards):
                _lane_free(&self.lanes[k], self.n_shards > 1)
            free(self.lanes)
            self.lanes = NULL

    def __dealloc__(self):
        self._free_lanes()

    cdef double _visit(self, Lane *L, Py_ssize_t i, bint use_oracle, double inner_tol,
                       Py_ssize_t slot) noexcept nogil:
        """Optimise example i's sub-problem against the lane's weights; returns its KKT violation
        before the visit (-1 on OOM). slot >= 0: the oracle's answer was computed before (at other
        weights) and sits in that slot of the block buffers; slot < 0: call the oracle here (if
        use_oracle). A recording lane (sharded pass) saves the alphas before the SMO steps and the
        shrinking flags instead of shrinking (the combination of the shards may scale the step)."""
        cdef double *w = L.u
        cdef double m, d, gap, q, delta, viol, hmin, dl
        cdef int k, n, up, down, step, count
        cdef Py_ssize_t c
        cdef double *alpha
        cdef double *G
        cdef double *gu
        cdef double *gd
        cdef double *H
        cdef double *dalpha
        cdef const double *loss
        cdef double t0
        cdef const int *y
        cdef bint fresh = use_oracle and slot < 0    # work holds this oracle's unary scores
        cdef Py_ssize_t R = max(self.n_runners, 1)
        cdef const int *rlabels
        cdef const double *rvalues
        cdef const int *yr
        cdef bint moved = False
        cdef double sigma = self.sigma
        cdef int n_steps = self.max_inner     # SMO steps (none once solved exactly)
        cdef double cut = 0.0
        if use_oracle:
            if slot < 0:
                t0 = _now()
                self.st.oracle(w, i, 1.0, L.ybuf, &m, &d, L.work)
                y = L.ybuf
                count = self.st.runners_up(i, 1.0, y, min(self.active_runners, self.n_runners), L.rlabels, L.rvalues, L.work)
                rlabels = L.rlabels
                rvalues = L.rvalues
                L.oracle_seconds += _now() - t0
            else:
                y = &self.b_labels[slot * self.Lmax]
                m = self.b_m[slot]
                d = self.b_delta[slot]
                count = self.b_rcount[slot]
                rlabels = &self.b_rlabels[slot * R * self.Lmax]
                rvalues = &self.b_rvalues[slot * R]
            L.oracle_calls += 1
            if m + d > 0.0:
                L.slack_seen += self.Cs[i] * (m + d)
            if self.ws.find(i, y) < 0 and self.ws.add_using(i, y, d, L.gwork) < 0:
                return -1.0
            # the runners-up that violate at the true label's dual value (H > 0), but not those
            # that tie with the oracle's answer (at w = 0 every label does: no information), nor
            # those below H(y) - sigma C_i |dphi(y)|^2 / 2: a visit's exact step moves C_i at most,
            # which lowers H(y) by at most that, so the sub-problem's optimum leaves them at zero
            # (multiclass: exactly Crammer-Singer's bound)
            if count > 0:
                cut = m + d - 0.5 * sigma * self.Cs[i] * self.st.gram(i, y, y)
                if cut < 0.0:
                    cut = 0.0
            for k in range(count):
                if rvalues[k] <= cut:
                    break
                if rvalues[k] >= m + d:
                    continue
                yr = rlabels + k * self.Lmax
                if self.ws.find(i, yr) < 0 and self.ws.add_using(i, yr, self.st.loss(i, yr), L.gwork) < 0:
                    return -1.0
        n = self.ws.size[i]
        if n < 2:
            return 0.0
        if _lane_scratch(L, n) < 0:
            return -1.0
        H = L.H
        dalpha = L.dalpha
        alpha = self.ws.alpha(i)
        loss = self.ws.loss(i)
        G = self.ws.gram(i)
        c = self.ws.cap[i]
        gu = L.rows
        gd = L.rows + n
        if L.record and _lane_record(L, i, alpha, n) < 0:
            return -1.0
        self.st.margins(w, i, self.ws.labels(i), n, H, L.work, fresh)
        for k in range(n):
            H[k] += loss[k]
            dalpha[k] = 0.0
        # the structure's closed-form optimum where it has one (then no SMO steps)
        viol = _violating_pair(H, alpha, n, &up, &down)
        if viol <= inner_tol:
            n_steps = 0
        elif self.st.solve_subproblem(i, self.ws.labels(i), n, sigma, H, alpha, dalpha, L.work):
            moved = True
            n_steps = 0
        for step in range(n_steps):
            if step > 0:
                _violating_pair(H, alpha, n, &up, &down)
            if down < 0:
                break
            gap = H[up] - H[down]
            if gap <= inner_tol or up == down:
                break
            if G == NULL:   # the structure's Gram is cheap: the two rows, now
                self.st.gram_row(i, self.ws.label(i, up), self.ws.labels(i), n, gu, L.work)
                self.st.gram_row(i, self.ws.label(i, down), self.ws.labels(i), n, gd, L.work)
            else:
                gu = G + up * c
                gd = G + down * c
            q = sigma * (gu[up] + gd[down] - 2.0 * gu[down])
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
                H[k] -= sigma * delta * (gu[k] - gd[k])
            L.smo_steps += 1
            moved = True
        if moved:   # (a visit that changes nothing must not sweep the example's weight rows)
            if L.record:
                dl = 0.0
                for k in range(n):
                    dl += dalpha[k] * loss[k]
                L.dL += dl
            if sigma != 1.0:
                for k in range(n):
                    dalpha[k] *= sigma
            self.st.update_many(w, i, dalpha, self.ws.labels(i), n, L.work)
        # Shrinking: drop members with alpha = 0 that do not violate the optimality conditions.
        hmin = 1e300
        for k in range(n):
            if alpha[k] > 0.0 and H[k] < hmin:
                hmin = H[k]
        for k in range(n):
            L.flags[k] = alpha[k] > 0.0 or H[k] >= hmin
        if L.record:
            memcpy(L.keepable + L.rec_off[L.n_rec - 1], L.flags, n * sizeof(char))
        else:
            self.ws.keep(i, L.flags)
        return viol

    cdef Py_ssize_t _build_order(self, bint use_oracle) noexcept nogil:
        """The examples of a pass (type-II: working sets of size >= 2 only) in self.order, shuffled."""
        cdef Py_ssize_t i, m = 0
        for i in range(self.n):
            if self.Cs[i] > 0.0 and (use_oracle or self.ws.size[i] >= 2):
                self.order[m] = i
                m += 1
        self.n_blocks = 0
        if m > 1 and 0 < self.visit_block < m:
            self._shuffle_blocks(m)
        elif m > 1:
            rng_shuffle(&self.rng_state, &self.order[0], m)
        return m

    cdef void _shuffle_blocks(self, Py_ssize_t m) noexcept nogil:
        """order[:m] cut into blocks of visit_block consecutive entries: each block shuffled, the
        blocks put in a random order."""
        cdef Py_ssize_t B = self.visit_block, nb = (m + B - 1) // B, b, k, pos = 0, start, length
        cdef Py_ssize_t *blocks = &self.order_tmp[m]
        for b in range(nb):
            start = b * B
            length = min(B, m - start)
            self.block_ends[2 * b] = self.order[start]      # (the list is in row order)
            self.block_ends[2 * b + 1] = self.order[start + length - 1]
            rng_shuffle(&self.rng_state, &self.order[start], length)
            blocks[b] = b
        rng_shuffle(&self.rng_state, blocks, nb)
        for k in range(nb):
            start = blocks[k] * B
            length = min(B, m - start)
            memcpy(&self.order_tmp[pos], &self.order[start], length * sizeof(Py_ssize_t))
            pos += length
        memcpy(&self.order[0], &self.order_tmp[0], m * sizeof(Py_ssize_t))
        self.n_blocks = nb

    cdef Py_ssize_t _block_len(self, Py_ssize_t m, Py_ssize_t k) noexcept nogil:
        """Length of the k-th visited block of a pass of m visits (0 past the last)."""
        if k >= self.n_blocks:
            return 0
        return min(self.visit_block, m - self.order_tmp[m + k] * self.visit_block)

    cdef void _prefetch_block(self, Py_ssize_t m, Py_ssize_t k) noexcept nogil:
        """Ask for the k-th visited block's rows ahead (memory-mapped data)."""
        cdef Py_ssize_t b, lo, hi, unused
        if k >= self.n_blocks:
            return
        b = self.order_tmp[m + k]
        self.st.example_rows(self.block_ends[2 * b], &lo, &unused)
        self.st.example_rows(self.block_ends[2 * b + 1], &unused, &hi)
        self.st.X.prefetch_rows(lo, hi)

    cdef inline void _cache_ahead(self, const double *w, Py_ssize_t t, Py_ssize_t stop,
                                  bint oracle, bint visits) noexcept nogil:
        """Before visiting order[t]: start loading the rows of the visit 2a ahead, the working set
        of the visit a ahead (when this thread visits) and, in oracle passes (which read all of the
        weights the rows touch), the weights of the visit a ahead, whose rows were asked for a
        visits ago (a = cache_ahead) -- random order makes each a cache miss the visit would
        otherwise wait for. (Type-II visits read a few labels' weights: not worth a hint.)"""
        cdef Py_ssize_t a = self.cache_ahead
        if a <= 0:
            return
        if t + 2 * a < stop:
            self.st.cache_example(w, self.order[t + 2 * a], False)
        if visits and t + a < stop:
            self.ws.cache_block(self.order[t + a])
        if oracle and self.hint_weights and t + a < stop:
            self.st.cache_example(w, self.order[t + a], True)

    def pass_order(self, bint use_oracle=True):
        """The examples of the next pass in their visiting order (a copy; draws the pass's shuffle,
        so it changes the solver's RNG state: for tests)."""
        cdef Py_ssize_t m
        with nogil:
            m = self._build_order(use_oracle)
        return np.asarray(self.order[:m]).copy()

    cdef void _shard_pass(self, Lane *L) noexcept nogil:
        """One shard's visits of a round: sequential SDM on order[L.start:L.stop] against its own
        copy of the round's starting weights."""
        cdef Py_ssize_t t
        cdef double v
        memcpy(L.u, &self.w[0], self.st.n_weights * sizeof(double))
        L.dL = 0.0
        L.vmax = 0.0
        L.n_rec = 0
        L.n_saved = 0
        L.failed = False
        for t in range(L.start, L.stop):
            self._cache_ahead(L.u, t, L.stop, self.job_oracle, True)
            v = self._visit(L, self.order[t], self.job_oracle, self.job_tol, -1)
            if v == -1.0:
                L.failed = True
                return
            if v > L.vmax:
                L.vmax = v

    cdef double _combine(self) noexcept nogil:
        """After a round: w += step * (sum of the shards' changes), the step from the exact line
        search along that direction within [0, 1] (so every alpha stays feasible: it moves by the
        same fraction of its change); then the alphas follow and the deferred shrinking runs.
        Returns the step."""
        cdef Py_ssize_t j, k, r, i, nw = self.st.n_weights, off, n, S = self.n_shards
        cdef double *w = &self.w[0]
        cdef double dw, a = 0.0, b = 0.0, dL = 0.0, step = 1.0, old
        cdef double *alpha
        cdef char *keep
        cdef bint drop
        cdef Lane *L
        for k in range(S):
            dL += self.lanes[k].dL
        for j in range(nw):
            dw = 0.0
            for k in range(S):
                dw += self.lanes[k].u[j] - w[j]
            a += w[j] * dw
            b += dw * dw
        # the dual along the direction: (1 / (2 sigma)) |w + step dw|^2 - step dL (sigma: CoCoA+'s
        # and Catalyst's scaling, dw = sigma * the change of A alpha)
        if b > 0.0:
            step = (self.sigma * dL - a) / b
            step = min(1.0, max(0.0, step))
        for j in range(nw):
            dw = 0.0
            for k in range(S):
                dw += self.lanes[k].u[j] - w[j]
            w[j] += step * dw
        for k in range(S):
            L = &self.lanes[k]
            for r in range(L.n_rec):
                i = L.rec_i[r]
                off = L.rec_off[r]
                n = L.rec_off[r + 1] - off
                alpha = self.ws.alpha(i)
                keep = L.keepable + off
                if step < 1.0:
                    for j in range(n):
                        old = L.saved[off + j]
                        alpha[j] = old + step * (alpha[j] - old)
                drop = False
                for j in range(n):
                    keep[j] = keep[j] or alpha[j] > 0.0
                    drop = drop or not keep[j]
                if drop:
                    self.ws.keep(i, keep)
        return step

    cdef void compute(self, int kind, Py_ssize_t base, Py_ssize_t lo, Py_ssize_t hi,
                       Py_ssize_t tid) noexcept nogil:
        """One claimed range of shared work, with thread tid's scratch (reads w only) -- or, for
        JOB_SHARDS, shards lo..hi-1 with their own lanes."""
        cdef Py_ssize_t t, b, i, k, e
        cdef double m, d, v, s
        cdef double *w = &self.w[0]
        cdef double *work = &self.t_work[tid, 0]
        cdef Py_ssize_t R = max(self.n_runners, 1)
        if kind == JOB_ORACLES:
            for t in range(lo, hi):
                self._cache_ahead(w, t, hi, True, False)     # (a helper's oracles: no visits)
                b = t - base
                self.st.oracle(w, self.order[t], 1.0, &self.b_labels[b * self.Lmax], &self.b_m[b],
                               &self.b_delta[b], work)
                self.b_rcount[b] = self.st.runners_up(
                    self.order[t], 1.0, &self.b_labels[b * self.Lmax], min(self.active_runners, self.n_runners),
                    &self.b_rlabels[b * R * self.Lmax], &self.b_rvalues[b * R], work)
        elif kind == JOB_SHARDS:
            for k in range(lo, hi):
                self._shard_pass(&self.lanes[k])
        else:
            for b in range(lo, hi):
                s = 0.0
                e = min((b + 1) * SLACK_BLOCK, self.n)
                for i in range(b * SLACK_BLOCK, e):
                    # (rows in order here: only the weights would be misses)
                    if self.hint_weights and 0 < self.cache_ahead and i + self.cache_ahead < e:
                        self.st.cache_example(w, i + self.cache_ahead, True)
                    if self.Cs[i] > 0.0:
                        v = self.st.oracle(w, i, 1.0, &self.t_ybuf[tid, 0], &m, &d, work)
                        if v > 0.0:
                            s += self.Cs[i] * v
                self.slack[b] = s

    cdef void _share(self, int kind, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t grain) noexcept nogil:
        self.team.share(<void *> self, kind, lo, hi, grain)

    cdef double _visits(self, Py_ssize_t start, Py_ssize_t stop, double inner_tol) noexcept nogil:
        """Visits of order[start:stop] with the block's oracle answers; max violation, -1 on OOM."""
        cdef Py_ssize_t t
        cdef double v, vmax = 0.0
        for t in range(start, stop):
            v = self._visit(&self.lanes[0], self.order[t], True, inner_tol, t - start)
            if v == -1.0:
                return -1.0
            if v > vmax:
                vmax = v
        return vmax

    def run_pass(self, bint use_oracle, double inner_tol, Py_ssize_t batch=1):
        """One pass over the examples in random order; returns the maximal KKT violation seen.
        batch > 1 (type-I passes of the plain method): the oracles of each block of `batch`
        examples are asked at the block's starting weights, shared with the running helpers.
        n_shards > 1: the shuffled examples are cut into n_shards equal ranges, each visited
        sequentially against its own copy of w (shared with the helpers), then combined."""
        cdef Py_ssize_t t, s, e, i, k, m = 0, grain, next_block, S = self.n_shards
        cdef double v, vmax = 0.0, t0
        cdef bint oom = False
        cdef Lane *L
        cdef Lane *L0
        if self.lanes == NULL:
            raise ValueError("the solver was released")
        L0 = &self.lanes[0]
        if batch > self.batch_cap:
            raise ValueError(f"batch {batch} exceeds the block buffers ({self.batch_cap})")
        # claims of about a quarter of a thread's share: late or slow helpers cost little
        grain = max(1, batch // (4 * self.n_threads))
        with nogil:
            m = self._build_order(use_oracle)
            if S > 1:
                self.job_oracle = use_oracle
                self.job_tol = inner_tol
                s = 0
                while s < m and not oom:     # rounds of S ranges of shard_block examples
                    e = min(s + S * self.shard_block, m)
                    for k in range(S):
                        self.lanes[k].start = s + k * (e - s) // S
                        self.lanes[k].stop = s + (k + 1) * (e - s) // S
                    self._share(JOB_SHARDS, 0, S, 1)
                    for k in range(S):
                        oom = oom or self.lanes[k].failed
                        vmax = max(vmax, self.lanes[k].vmax)
                    if not oom:
                        self.last_step = self._combine()
                        self.ws.maybe_compact()
                    s = e
            elif batch <= 1 or not use_oracle:
                # blocks of memory-mapped data: while one block is visited the next is read
                self._prefetch_block(m, 0)
                self._prefetch_block(m, 1)
                next_block = self._block_len(m, 0) if self.n_blocks else m
                k = 1
                for t in range(m):
                    if t == next_block:         # block k starts
                        self._prefetch_block(m, k + 1)
                        next_block += self._block_len(m, k)
                        k += 1
                    self._cache_ahead(L0.u, t, m, use_oracle, True)
                    i = self.order[t]
                    v = self._visit(L0, i, use_oracle, inner_tol, -1)
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
                    L0.oracle_seconds += _now() - t0
                    v = self._visits(s, e, inner_tol)
                    if v == -1.0:
                        oom = True
                        break
                    if v > vmax:
                        vmax = v
                    self.ws.maybe_compact()
                    s = e
            if use_oracle:
                self.pass_slack = 0.0
            for k in range(S):
                L = &self.lanes[k]
                if use_oracle:
                    self.pass_slack += L.slack_seen
                L.slack_seen = 0.0
                self.n_smo_steps += L.smo_steps
                self.n_oracle_calls += L.oracle_calls
                self.oracle_seconds += L.oracle_seconds
                L.smo_steps = L.oracle_calls = 0
                L.oracle_seconds = 0.0
        if oom:
            raise MemoryError("SDM working sets")
        return vmax

    def primal(self):
        """1/2 ||w||^2 + slack_sum()."""
        return 0.5 * float(np.dot(self.w, self.w)) + self.slack_sum()

    def slack_sum(self):
        """sum_i C_i max(0, max_y H_i(y)) at w (one oracle call per example, shared with the
        running helpers; summed in blocks of examples, then the blocks, in order: the same value
        with or without them). Its calls and seconds count in n_oracle_calls and oracle_seconds."""
        cdef Py_ssize_t b, i, nb = (self.n + SLACK_BLOCK - 1) // SLACK_BLOCK
        cdef double s = 0.0, t0
        with nogil:
            t0 = _now()
            self._share(JOB_SLACKS, 0, nb, max(1, nb // (16 * self.n_threads)))
            self.oracle_seconds += _now() - t0
            for b in range(nb):
                s += self.slack[b]
            for i in range(self.n):
                if self.Cs[i] > 0.0:
                    self.n_oracle_calls += 1
        return s

    def warm_scale(self, old):
        """1 where C_i grew (the alphas kept), C_i / C_old where it shrank (DualSolver's rule)."""
        return np.where(np.asarray(self.Cs) >= old, 1.0, DualSolver.warm_scale(self, old))

    def set_state(self, state, Cs=None):
        """Restore a dual state for new C_i (SDM needs sum_y alpha_i(y) = C_i). Where C_i shrank,
        the alphas are scaled by C_new / C_old. Where it grew, they are scaled by the s in
        [1, min C_new / C_old] that maximises the new dual along that ray (a closed form: the dual
        is s L - 1/2 |s w_g + w_r|^2 there), and the rest of C_i goes to alpha_i(y_i)
        (dphi_i(y_i) = 0: w moves by (s - 1) w_g alone). At small C, where every example is at
        its bound, s is the C ratio (w grows with C); at large C it stays near 1 (w barely
        moves): a fixed rule would overshoot one or lag the other (benchmarks/c_search.py)."""
        cdef Py_ssize_t i
        cdef int j
        old_arr = np.ascontiguousarray(state["Cs"], dtype=np.float64)
        cdef const double[::1] old = old_arr
        DualSolver.set_state(self, state, Cs)
        grown_arr = ((np.asarray(self.Cs) > old_arr) & (old_arr > 0)).astype(np.int8)
        cdef signed char[::1] grown = grown_arr
        cdef double scale = 1.0
        if grown_arr.any():
            cap = float(np.min(np.asarray(self.Cs)[grown_arr > 0] / old_arr[grown_arr > 0]))
            w_grown = np.zeros(self.w.shape[0])
            self.ws.add_to_w(w_grown, grown)
            ww = float(np.dot(w_grown, w_grown))
            if ww > 0:
                rest = float(np.dot(w_grown, self.w)) - ww       # w_g . w_r
                scale = min(max((self.ws.linear_term(grown) - rest) / ww, 1.0), cap)
            if scale != 1.0:
                self.ws.scale(np.where(grown_arr > 0, scale, 1.0))
                np.add(self.w, (scale - 1.0) * w_grown, out=np.asarray(self.w))
        for i in range(self.n):
            if self.Cs[i] > 0 and self.Cs[i] > old[i]:     # (w unchanged: dphi_i(y_i) = 0)
                j = self.ws.find(i, self.st.true_label(i))
                if j < 0:
                    j = self.ws.add(i, self.st.true_label(i), 0.0)
                    if j < 0:
                        raise MemoryError()
                self.ws.alpha(i)[j] += self.Cs[i] - (scale if grown[i] else 1.0) * max(old[i], 0.0)
