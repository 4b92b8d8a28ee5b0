# The one parallel primitive of the kernels: a team of threads that share a range of work.
#
# A ShardWork subclass says what one claimed range [lo, hi) of a job costs (compute, nogil, with
# thread tid's scratch: 0 is the thread that called share, 1..n_threads-1 the helpers); the
# Team hands ranges of grain items to whichever thread is free -- the caller included -- and
# returns from share() when all are done. Helpers are plain threads that call Team.helper(tid)
# once per fit and sleep on a condition variable between jobs (ssvmlinear.parallel.KernelTeam
# starts them through joblib), so a job costs a wake-up, not a Python call, and takes no GIL.
# Which thread computes a range never changes what is written (each range writes its own
# slots), so results do not depend on the number of threads.
cdef extern from "threads_compat.h" nogil:
    ctypedef struct ssvm_mutex_t:
        pass
    ctypedef struct ssvm_cond_t:
        pass


cdef class ShardWork:
    cdef void compute(self, int kind, Py_ssize_t base, Py_ssize_t lo, Py_ssize_t hi,
                      Py_ssize_t tid) noexcept nogil


cdef class Team:
    cdef readonly Py_ssize_t n_threads
    cdef ssvm_mutex_t mu
    cdef ssvm_cond_t cv_work
    cdef ssvm_cond_t cv_done
    cdef bint sync_ready
    # the job (guarded by mu): [job_lo, job_hi) of job_kind for job_work (a borrowed ShardWork),
    # claimed up to job_next in ranges of job_grain, job_done finished
    cdef void *job_work
    cdef int job_kind
    cdef Py_ssize_t job_lo, job_hi, job_next, job_grain
    cdef long long job_done            # items finished (read by a spinning caller)
    cdef long long job_seq             # jobs posted so far (read by spinning helpers)
    cdef bint stopping
    cdef public int n_helpers              # helpers running (they announce themselves)
    cdef public long long n_helper_ranges  # ranges computed by helpers (diagnostics)
    # Computes [lo, hi) of `kind` of `work` (a ShardWork, borrowed for the call) with whichever
    # helpers are running; returns when all is done. Not reentrant: one job at a time.
    cdef void share(self, void *work, int kind, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t grain) noexcept nogil
