# Bi-criteria surrogates psi(h, g) (choi-thesis ch. 3, SPEC "Surrogates"): h = m(y) = f(y) - f(y_i)
# and g = Delta(y, y_i), except Micro-F1 where h = Delta + m and g = -(|y| + |y_i|). The loss of an
# example is max_y psi(h(y), g(y)); y = y_i has psi = 0 for every surrogate.
cdef enum:
    SURR_MARGIN = 0
    SURR_SLACK = 1
    SURR_BETA = 2
    SURR_GENERALIZED = 3
    SURR_PROBLOSS = 4
    SURR_PROBLOSS_CONVEX = 5
    SURR_MICROF1 = 6
    SURR_LOGLOSS = 7


cdef struct Surrogate:
    int kind
    double alpha      # generalized scaling: psi = h g^beta + g^alpha
    double beta       # beta-scaling: psi = h g^beta + g


cdef double psi(const Surrogate *s, double h, double g) noexcept nogil
# partial derivatives (a subgradient where psi has a kink)
cdef double psi_dh(const Surrogate *s, double h, double g) noexcept nogil
cdef double psi_dg(const Surrogate *s, double h, double g) noexcept nogil
