# cython: language_level=3
"""Bi-criteria surrogate functions psi(h, g), their partial derivatives, and a Python mirror."""
from libc.math cimport pow, sqrt, erfc, exp, log1p, fabs, M_PI

cdef double SQRT2 = 1.4142135623730951


cdef inline double _softplus(double h) noexcept nogil:
    return h + log1p(exp(-h)) if h > 0 else log1p(exp(h))


cdef inline double _ncdf(double z) noexcept nogil:
    return 0.5 * erfc(-z / SQRT2)


cdef inline double _npdf(double z) noexcept nogil:
    return exp(-0.5 * z * z) / sqrt(2.0 * M_PI)


cdef double psi(const Surrogate *s, double h, double g) noexcept nogil:
    cdef double sigma
    cdef int k = s.kind
    if k == SURR_MARGIN:
        return h + g
    if k == SURR_MICROF1:
        return h / (-g) if g < 0 else 0.0
    if g <= 0.0:
        return 0.0          # only y_i has zero task loss; its psi is 0
    if k == SURR_SLACK:
        return g * (1.0 + h)
    if k == SURR_BETA:
        return h * pow(g, s.beta) + g
    if k == SURR_GENERALIZED:
        return h * pow(g, s.beta) + pow(g, s.alpha)
    if k == SURR_PROBLOSS or (k == SURR_PROBLOSS_CONVEX and h <= 0.0):
        sigma = sqrt(2.0 * g / M_PI)
        return 2.0 * g * _ncdf(h / sigma)
    if k == SURR_PROBLOSS_CONVEX:
        return g + sqrt(g) * h
    if k == SURR_LOGLOSS:
        return g * _softplus(h)
    return 0.0


cdef double psi_dh(const Surrogate *s, double h, double g) noexcept nogil:
    cdef double sigma
    cdef int k = s.kind
    if k == SURR_MARGIN:
        return 1.0
    if k == SURR_MICROF1:
        # at g = 0 (y = y_i = empty) psi is singular; the direction of increasing h is what a
        # search needs there
        return 1.0 / (-g) if g < 0 else 1.0
    if g <= 0.0:
        return 0.0
    if k == SURR_SLACK:
        return g
    if k == SURR_BETA or k == SURR_GENERALIZED:
        return pow(g, s.beta)
    if k == SURR_PROBLOSS or (k == SURR_PROBLOSS_CONVEX and h <= 0.0):
        sigma = sqrt(2.0 * g / M_PI)
        return 2.0 * g * _npdf(h / sigma) / sigma
    if k == SURR_PROBLOSS_CONVEX:
        return sqrt(g)
    if k == SURR_LOGLOSS:
        return g / (1.0 + exp(-h)) if h > -700 else 0.0
    return 0.0


cdef double psi_dg(const Surrogate *s, double h, double g) noexcept nogil:
    cdef double sigma, z
    cdef int k = s.kind
    if k == SURR_MARGIN:
        return 1.0
    if k == SURR_MICROF1:
        return h / (g * g) if g < 0 else 0.0
    if g <= 0.0:
        g = 1e-300          # one-sided derivative at the true label
    if k == SURR_SLACK:
        return 1.0 + h
    if k == SURR_BETA:
        return h * s.beta * pow(g, s.beta - 1.0) + 1.0
    if k == SURR_GENERALIZED:
        return h * s.beta * pow(g, s.beta - 1.0) + s.alpha * pow(g, s.alpha - 1.0)
    if k == SURR_PROBLOSS or (k == SURR_PROBLOSS_CONVEX and h <= 0.0):
        # d/dg [2 g Phi(h / sigma(g))], sigma = sqrt(2 g / pi): dz/dg = -z / (2 g)
        sigma = sqrt(2.0 * g / M_PI)
        z = h / sigma
        return 2.0 * _ncdf(z) - z * _npdf(z)
    if k == SURR_PROBLOSS_CONVEX:
        return 1.0 + 0.5 * h / sqrt(g)
    if k == SURR_LOGLOSS:
        return _softplus(h)
    return 0.0


def py_psi(int kind, double alpha, double beta, double h, double g):
    """(psi, dpsi/dh, dpsi/dg) of one point; for tests and the Python search driver."""
    cdef Surrogate s
    s.kind, s.alpha, s.beta = kind, alpha, beta
    return psi(&s, h, g), psi_dh(&s, h, g), psi_dg(&s, h, g)
