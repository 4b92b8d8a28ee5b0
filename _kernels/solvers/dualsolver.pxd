# State shared by the dual solvers (SDM, LSE-SDCD): the structure, per-example working sets and
# bounds C_i, the weights w = sum alpha dphi, scratch for the oracle, the pass order and its RNG.
from libc.stdint cimport uint64_t

from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.labels cimport WorkingSets
from ssvmlinear._kernels.team cimport ShardWork


cdef class DualSolver(ShardWork):
    cdef Structure st
    cdef readonly WorkingSets ws
    cdef double[::1] w
    cdef const double[::1] Cs         # read-only: the caller's array, not a copy
    cdef Py_ssize_t n
    cdef double[::1] work
    cdef int[::1] ybuf
    cdef Py_ssize_t[::1] order
    cdef uint64_t rng_state
    cdef public long long n_oracle_calls
    # CoCoA+'s subproblem scaling sigma' (1: the plain method): the Gram matrix and every update of
    # w are multiplied by it, so that w - w_start = sigma' (the shard's dual change) -- see
    # ssvmlinear/distributed.py
    cdef public double sigma
