from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.factor cimport FactorTree


cdef class ChainStructure(Structure):
    # phi(x, y) = sum_t x_t (x) e_{y_t} + transition counts (K x K) [+ start/end indicators].
    # Weights: unary n_cols x K (feature-major) at 0, transitions[prev, next] at trans_off,
    # start (K) at start_off and end (K) at end_off when use_start_end. Hamming loss, optionally
    # divided by the sequence length.
    cdef readonly Py_ssize_t n_tags
    cdef readonly bint use_start_end
    cdef readonly bint normalize_loss
    cdef readonly Py_ssize_t trans_off, start_off, end_off
    cdef const long long[::1] starts      # token offsets of the sequences (n_examples + 1)
    cdef const int[::1] y                 # tags of all tokens
    # token products x_t . x_s of every sequence (T_i x T_i each, at tok_off[i]) when
    # prepare_gram() found them small enough to keep; empty otherwise
    cdef double[::1] tok_gram
    cdef long long[::1] tok_off
    cdef bint has_tok_gram
    # the tag outside every entity (the Micro-F1 surrogate's sets are the (token, tag) pairs of
    # the other tags); -1: none, no Micro-F1 oracles
    cdef readonly int outside_tag
    # per-tag loss weights (class_weight): a mistake on a token whose true tag is k costs
    # tag_weights[k]; tok_w holds each token's (empty when unweighted: every mistake costs 1)
    cdef readonly bint tag_weighted
    cdef readonly object tag_weights
    cdef const double[::1] tok_w

    cdef double _unary_scores(self, const double *w, Py_ssize_t i, double lam, double *U) noexcept nogil
    cdef double _loss_weight(self, Py_ssize_t i) noexcept nogil
    cdef double _token_loss(self, Py_ssize_t s) noexcept nogil
    cdef FactorTree _path(self, const double *w, Py_ssize_t i) noexcept nogil
    cdef void _beliefs(self, const double *w, Py_ssize_t i, const FactorTree *t, const double *U,
                       double a, double *B) noexcept nogil
    cdef double _score_with_edges(self, const double *w, const FactorTree *t, const double *U,
                                  const int *y) noexcept nogil
    cdef double _viterbi(self, const double *w, Py_ssize_t i, double lam, int *y_out, double *m_out,
                         double *delta_out, double *work) noexcept nogil
    cdef void _f1_beliefs(self, const double *w, Py_ssize_t i, const double *U, double lam,
                          double *B) noexcept nogil
    cdef double _f1_h(self, const double *w, Py_ssize_t i, const FactorTree *t, const double *U,
                      const int *y, double *size) noexcept nogil
    cdef void _update_edges(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil
    cdef double _gram_pair(self, Py_ssize_t i, const int *a, const int *da, int na, const int *ta, int nta,
                           const int *b, const double *P) noexcept nogil
    cdef const double* _token_products(self, Py_ssize_t i, const int *da, int na, double *work) noexcept nogil
