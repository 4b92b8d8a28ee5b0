# cython: language_level=3
"""Dense QP on the simplex, for the cutting plane's restricted dual:

    min_beta  1/2 beta' H beta - b' beta     s.t.  beta >= 0,  sum(beta) = total

solved by SMO on the maximal violating pair (the same step as SDM's), warm-started from the beta
passed in. The one-slack dual's `sum(beta) <= C` becomes an equality by a zero constraint (a = 0,
b = 0) whose beta is the unused budget.
"""
import numpy as np


cdef int simplex_qp(const double *H, Py_ssize_t ld, const double *b, double *beta, double *grad,
                    Py_ssize_t m, double tol, int max_iter) noexcept nogil:
    """H: m x m (row stride ld), symmetric PSD; beta feasible on entry. grad is scratch (m).
    Returns the number of SMO steps (max_iter if the pair gap stayed above tol)."""
    cdef Py_ssize_t j, k, up, down
    cdef double gap, q, delta
    cdef int it
    for j in range(m):
        grad[j] = -b[j]
        for k in range(m):
            grad[j] += H[j * ld + k] * beta[k]
    for it in range(max_iter):
        up = 0       # most negative gradient: increase
        down = -1    # most positive gradient among beta > 0: decrease
        for j in range(m):
            if grad[j] < grad[up]:
                up = j
            if beta[j] > 0.0 and (down < 0 or grad[j] > grad[down]):
                down = j
        if down < 0:
            return it
        gap = grad[down] - grad[up]
        if gap <= tol or up == down:
            return it
        q = H[up * ld + up] + H[down * ld + down] - 2.0 * H[up * ld + down]
        delta = gap / q if q > 1e-300 else beta[down]
        if delta >= beta[down]:
            delta = beta[down]
            beta[down] = 0.0
        else:
            beta[down] -= delta
        beta[up] += delta
        for j in range(m):
            grad[j] += delta * (H[j * ld + up] - H[j * ld + down])
    return max_iter


def solve_simplex_qp(H, b, beta0=None, double total=1.0, double tol=1e-12, int max_iter=1000000):
    """Python entry point (tests and drivers): returns (beta, n_steps)."""
    cdef double[:, ::1] Hv = np.ascontiguousarray(H, dtype=np.float64)
    cdef double[::1] bv = np.ascontiguousarray(b, dtype=np.float64)
    cdef Py_ssize_t m = bv.shape[0]
    if Hv.shape[0] != m or Hv.shape[1] != m:
        raise ValueError("H must be m x m for m = len(b)")
    if m == 0:
        return np.zeros(0), 0
    if beta0 is None:
        beta = np.full(m, total / m)
    else:
        beta = np.array(beta0, dtype=np.float64)
        if beta.shape != (m,) or np.any(beta < 0) or abs(beta.sum() - total) > 1e-9 * max(1.0, total):
            raise ValueError("beta0 must be feasible: non-negative and summing to total")
    cdef double[::1] betav = beta
    grad = np.zeros(m)
    cdef double[::1] gv = grad
    cdef int steps
    with nogil:
        steps = simplex_qp(&Hv[0, 0], m, &bv[0], &betav[0], &gv[0], m, tol, max_iter)
    return beta, steps
