# Per-call random numbers (no global state, so results do not depend on threads or n_jobs).
from libc.stdint cimport uint64_t


cdef inline uint64_t rng_next(uint64_t *state) noexcept nogil:
    """splitmix64 step."""
    state[0] += <uint64_t> 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t> 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t> 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline Py_ssize_t rng_below(uint64_t *state, Py_ssize_t n) noexcept nogil:
    """Uniform integer in [0, n) (n > 0); modulo bias is negligible for n << 2**64."""
    return <Py_ssize_t> (rng_next(state) % <uint64_t> n)


cdef inline void rng_shuffle(uint64_t *state, Py_ssize_t *a, Py_ssize_t n) noexcept nogil:
    """Fisher-Yates shuffle of a[0:n]."""
    cdef Py_ssize_t i, j, t
    for i in range(n - 1, 0, -1):
        j = rng_below(state, i + 1)
        t = a[i]
        a[i] = a[j]
        a[j] = t
