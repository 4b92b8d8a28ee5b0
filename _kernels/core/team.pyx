# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The kernels' thread team (see team.pxd)."""

cdef extern from "threads_compat.h" nogil:
    int ssvm_mutex_init(ssvm_mutex_t *m)
    void ssvm_mutex_destroy(ssvm_mutex_t *m)
    void ssvm_mutex_lock(ssvm_mutex_t *m)
    void ssvm_mutex_unlock(ssvm_mutex_t *m)
    int ssvm_cond_init(ssvm_cond_t *c)
    void ssvm_cond_destroy(ssvm_cond_t *c)
    void ssvm_cond_wait(ssvm_cond_t *c, ssvm_mutex_t *m)
    void ssvm_cond_signal(ssvm_cond_t *c)
    void ssvm_cond_broadcast(ssvm_cond_t *c)
    long long ssvm_atomic_load(long long *p)
    void ssvm_cpu_relax()


# Spin-loop hints a waiting thread tries before it sleeps on a condition variable: a short job (a
# mini-batch of multiclass searches) would otherwise cost a futex wake-up, more than the job
# itself (benchmarks/sdm_threads.py).
DEF SPINS = 4000


cdef class ShardWork:
    """Base of the kernels whose work a Team shares (subclasses override compute)."""

    cdef void compute(self, int kind, Py_ssize_t base, Py_ssize_t lo, Py_ssize_t hi,
                      Py_ssize_t tid) noexcept nogil:
        pass


cdef enum:
    JOB_NONE = -1


cdef class Team:
    """Threads sharing ranges of work; n_threads counts the caller of share() (thread 0)."""

    def __cinit__(self):
        self.sync_ready = False
        if ssvm_mutex_init(&self.mu) != 0:
            raise MemoryError("mutex")
        if ssvm_cond_init(&self.cv_work) != 0 or ssvm_cond_init(&self.cv_done) != 0:
            raise MemoryError("condition variable")
        self.sync_ready = True

    def __init__(self, Py_ssize_t n_threads=1):
        if n_threads < 1:
            raise ValueError("n_threads must be >= 1")
        self.n_threads = n_threads
        self.job_kind = JOB_NONE
        self.job_work = NULL
        self.job_seq = 0
        self.job_done = 0
        self.stopping = False
        self.n_helpers = 0
        self.n_helper_ranges = 0

    def __dealloc__(self):
        if self.sync_ready:
            ssvm_mutex_destroy(&self.mu)
            ssvm_cond_destroy(&self.cv_work)
            ssvm_cond_destroy(&self.cv_done)

    cdef void share(self, void *work, int kind, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t grain) noexcept nogil:
        cdef Py_ssize_t a, b, base = lo
        cdef long long total = hi - lo
        cdef int spins
        if hi <= lo:
            return
        if self.n_helpers == 0 or hi - lo <= grain:   # nobody to share with, or one claim: inline
            (<ShardWork> work).compute(kind, base, lo, hi, 0)
            return
        ssvm_mutex_lock(&self.mu)
        self.job_work, self.job_kind, self.job_lo, self.job_hi = work, kind, lo, hi
        self.job_next, self.job_done, self.job_grain = lo, 0, max(grain, 1)
        self.job_seq += 1
        ssvm_cond_broadcast(&self.cv_work)
        while self.job_next < self.job_hi:
            a = self.job_next
            b = min(a + self.job_grain, self.job_hi)
            self.job_next = b
            ssvm_mutex_unlock(&self.mu)
            (<ShardWork> work).compute(kind, base, a, b, 0)
            ssvm_mutex_lock(&self.mu)
            self.job_done += b - a
        while self.job_done < total:
            ssvm_mutex_unlock(&self.mu)
            spins = 0
            while spins < SPINS and ssvm_atomic_load(&self.job_done) < total:
                ssvm_cpu_relax()
                spins += 1
            ssvm_mutex_lock(&self.mu)
            if self.job_done < total:
                ssvm_cond_wait(&self.cv_done, &self.mu)
        self.job_kind = JOB_NONE
        self.job_work = NULL
        ssvm_mutex_unlock(&self.mu)

    def helper(self, Py_ssize_t tid):
        """Body of helper thread tid (1 <= tid < n_threads): computes claimed ranges of shared work
        until stop_helpers(); releases the GIL throughout. Only one call per tid at a time."""
        cdef int kind
        cdef void *work
        cdef Py_ssize_t a, b, base
        cdef long long ranges = 0, seen
        cdef int spins
        if not 1 <= tid < self.n_threads:
            raise ValueError(f"helper: tid must lie in [1, {self.n_threads})")
        with nogil:
            ssvm_mutex_lock(&self.mu)
            self.n_helpers += 1
            while not self.stopping:
                if self.job_kind != JOB_NONE and self.job_next < self.job_hi:
                    work, kind, base = self.job_work, self.job_kind, self.job_lo
                    a = self.job_next
                    b = min(a + self.job_grain, self.job_hi)
                    self.job_next = b
                    ssvm_mutex_unlock(&self.mu)
                    (<ShardWork> work).compute(kind, base, a, b, tid)
                    ranges += 1
                    ssvm_mutex_lock(&self.mu)
                    self.job_done += b - a
                    if self.job_done == self.job_hi - self.job_lo:
                        ssvm_cond_signal(&self.cv_done)
                else:
                    # nothing to claim: spin a little for the next job, then sleep
                    seen = self.job_seq
                    ssvm_mutex_unlock(&self.mu)
                    spins = 0
                    while spins < SPINS and ssvm_atomic_load(&self.job_seq) == seen:
                        ssvm_cpu_relax()
                        spins += 1
                    ssvm_mutex_lock(&self.mu)
                    if self.job_seq == seen and not self.stopping:
                        ssvm_cond_wait(&self.cv_work, &self.mu)
            self.n_helpers -= 1
            self.n_helper_ranges += ranges
            ssvm_mutex_unlock(&self.mu)

    def stop_helpers(self):
        """Makes every helper return (now, or as soon as it starts)."""
        with nogil:
            ssvm_mutex_lock(&self.mu)
            self.stopping = True
            ssvm_cond_broadcast(&self.cv_work)
            ssvm_mutex_unlock(&self.mu)

    def restart(self):
        """Allows helpers again after stop_helpers() (a team reused by another fit)."""
        self.stopping = False
