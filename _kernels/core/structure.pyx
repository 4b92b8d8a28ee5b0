# cython: language_level=3
"""Base class of the structure interface (see structure.pxd); the methods here are abstract."""
from libc.string cimport memcmp

from ssvmlinear._kernels.dataset cimport CSRDataset
from ssvmlinear._kernels.team cimport ShardWork, Team


# Indices of Structure.missing: the methods without a meaningful default.
MISSING_NAMES = (None, "true_label", "score", "loss", "oracle", "gram", "update", "kbest", "oracle_f1",
                 "exact_f1")


cdef class Structure:
    """Abstract structure; subclasses implement every cdef method of structure.pxd. The defaults
    of the methods without a meaningful default record that they ran (see `missing`)."""

    def check_implemented(self, what="this solver"):
        """Raise NotImplementedError when a method that has no default was called."""
        if self.missing:
            name = MISSING_NAMES[self.missing]
            self.missing = 0
            raise NotImplementedError(f"{type(self).__name__} does not implement {name}(), which "
                                      f"{what} calls")

    cdef Py_ssize_t label_len(self, Py_ssize_t i) noexcept nogil:
        return 1

    cdef const int* true_label(self, Py_ssize_t i) noexcept nogil:
        self.missing = 1
        return NULL

    cdef double score(self, const double *w, Py_ssize_t i, const int *y) noexcept nogil:
        self.missing = 2
        return 0.0

    cdef void margins(self, const double *w, Py_ssize_t i, const int *labels, int n, double *out,
                      double *work, bint after_oracle) noexcept nogil:
        cdef int k
        cdef Py_ssize_t L = self.label_len(i)
        cdef double fyi = self.score(w, i, self.true_label(i))
        for k in range(n):
            out[k] = self.score(w, i, labels + k * L) - fyi

    cdef bint same_label(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil:
        return memcmp(a, b, self.label_len(i) * sizeof(int)) == 0

    cdef double loss(self, Py_ssize_t i, const int *y) noexcept nogil:
        self.missing = 3
        return 0.0

    cdef double oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                       double *m_out, double *delta_out, double *work) noexcept nogil:
        self.missing = 4
        return 0.0

    cdef double oracle_again(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                             double *m_out, double *delta_out, double *work) noexcept nogil:
        return self.oracle(w, i, lam, y_out, m_out, delta_out, work)

    cdef double gram(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil:
        self.missing = 5
        return 0.0

    cdef void gram_row(self, Py_ssize_t i, const int *a, const int *labels, int n, double *out,
                       double *work) noexcept nogil:
        cdef int j
        cdef Py_ssize_t L = self.label_len(i)
        for j in range(n):
            out[j] = self.gram(i, a, labels + j * L)

    cdef int solve_subproblem(self, Py_ssize_t i, const int *labels, int n, double sigma, double *H,
                              double *alpha, double *dalpha, double *work) noexcept nogil:
        return 0

    cdef void update(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil:
        self.missing = 6

    cdef void update_many(self, double *w, Py_ssize_t i, const double *coefs, const int *labels, int n,
                          double *work) noexcept nogil:
        cdef int k
        cdef Py_ssize_t L = self.label_len(i)
        for k in range(n):
            if coefs[k] != 0.0:
                self.update(w, i, coefs[k], labels + k * L)

    def prepare_gram(self):
        """Called by the dual solvers before they compute Gram entries; structures may cache
        what gram()/gram_row() reuse across calls (default: nothing)."""
        pass

    cdef void example_rows(self, Py_ssize_t i, Py_ssize_t *lo, Py_ssize_t *hi) noexcept nogil:
        lo[0] = i
        hi[0] = i + 1

    cdef void cache_example(self, const double *w, Py_ssize_t i, bint weights) noexcept nogil:
        cdef Py_ssize_t lo, hi
        if not weights:
            self.example_rows(i, &lo, &hi)
            self.X.cache_rows(lo, hi)

    cdef Py_ssize_t workspace_size(self) noexcept nogil:
        return 0

    cdef int runners_up(self, Py_ssize_t i, double lam, const int *y_best, int k, int *labels_out,
                        double *values_out, const double *work) noexcept nogil:
        return 0

    cdef int kbest(self, const double *w, Py_ssize_t i, double lam, int k, int *labels_out,
                   double *values_out, double *work) noexcept nogil:
        self.missing = 7
        return 0

    cdef Py_ssize_t kbest_workspace_size(self, int k) noexcept nogil:
        return 0

    cdef int n_loss_levels(self, Py_ssize_t i) noexcept nogil:
        return 0

    cdef int constrained_oracle(self, const double *w, Py_ssize_t i, double lam, double alpha, double beta,
                                double origin, double scale, int *y_out, double *work) noexcept nogil:
        return -2

    cdef double level_loss(self, Py_ssize_t i, int level) noexcept nogil:
        return <double> level

    cdef Py_ssize_t loss_indexed_workspace_size(self) noexcept nogil:
        return 0

    cdef void loss_indexed_oracle(self, const double *w, Py_ssize_t i, double *best_m, int *labels,
                                  double *work) noexcept nogil:
        pass

    cdef double oracle_f1(self, const double *w, Py_ssize_t i, double lam, int *y_out, double *h_out,
                          double *g_out, double *work) noexcept nogil:
        self.missing = 8
        return 0.0

    cdef double exact_f1(self, const double *w, Py_ssize_t i, int *y_out, double *h_out, double *g_out,
                         double *work) noexcept nogil:
        self.missing = 9
        return 0.0

    cdef double f1_counts(self, Py_ssize_t i, const int *y, double *size_out) noexcept nogil:
        cdef Py_ssize_t k
        cdef const int *yi = self.true_label(i)
        cdef double H = 0.0, size = 0.0
        for k in range(self.label_len(i)):
            size += y[k] + yi[k]
            if y[k] != yi[k]:
                H += 1.0
        size_out[0] = size
        return H

    def supports_loss_indexed(self):
        """Whether the structure has a loss-indexed oracle (exact bi-criteria inference)."""
        return self.n_examples == 0 or self.n_loss_levels(0) > 0

    def supports_kbest(self):
        """Whether the structure lists its k best labels: its kbest() ran on example 0 at w = 0
        without recording itself as missing (the base's default does)."""
        import numpy as np
        if self.n_examples == 0:
            return True
        cdef int L = max(self.max_label_len, 1)
        labels = np.zeros(2 * L, dtype=np.int32)
        values = np.zeros(2)
        w = np.zeros(max(self.n_weights, 1))
        work = np.zeros(max(self.kbest_workspace_size(2), 1))
        cdef int[::1] lv = labels
        cdef double[::1] vv = values, wv = w, kv = work
        self.kbest(&wv[0], 0, 1.0, 2, &lv[0], &vv[0], &kv[0])
        missing, self.missing = self.missing == 7, 0
        return not missing

    def supports_constrained(self):
        """Whether the structure has a constrained lambda-oracle: its constrained_oracle() on
        example 0 at w = 0 answers otherwise than the base's default (-2)."""
        import numpy as np
        if self.n_examples == 0:
            return True
        y = np.zeros(max(self.max_label_len, 1), dtype=np.int32)
        w = np.zeros(max(self.n_weights, 1))
        work = np.zeros(max(self.workspace_size(), 1))
        cdef int[::1] yv = y
        cdef double[::1] wv = w, kv = work
        return self.constrained_oracle(&wv[0], 0, 1.0, float("inf"), 0.0, 0.0, 1.0, &yv[0], &kv[0]) != -2

    def subset(self, Py_ssize_t lo, Py_ssize_t hi, order=None):
        """The same structure over examples lo..hi-1, or order[lo:hi] given a permutation `order`
        of the examples (same weights layout): a shard's structure."""
        raise NotImplementedError(f"{type(self).__name__} does not implement subset(), which shards call")

    @staticmethod
    def shard_index(lo, hi, order=None):
        """subset()'s examples: slice(lo, hi), or order[lo:hi] given a permutation."""
        import numpy as np
        return slice(lo, hi) if order is None else np.asarray(order)[lo:hi]

    def label_offsets(self):
        """Start of each example's label in a flat array of all labels (n_examples + 1 entries)."""
        import numpy as np
        out = np.zeros(self.n_examples + 1, dtype=np.int64)
        cdef Py_ssize_t i
        for i in range(self.n_examples):
            out[i + 1] = out[i] + self.label_len(i)
        return out

    def predict(self, const double[::1] w, int[::1] out, const long long[::1] offsets, Team team=None):
        """Prediction (the lambda = 0 oracle) of every example, written to
        out[offsets[i]:offsets[i] + label_len(i)]; examples shared by the team's threads (nogil)."""
        PredictPass(self, w, out, offsets, team if team is not None else Team(1)).run()
        self.check_implemented("prediction")


    # Python-level helpers used by tests and drivers (not on hot paths).
    def py_oracle(self, const double[::1] w, Py_ssize_t i, double lam=1.0):
        """Return (label, m, delta) of the lambda-oracle for example i."""
        import numpy as np
        y = np.zeros(max(self.max_label_len, 1), dtype=np.int32)
        work = np.zeros(max(self.workspace_size(), 1), dtype=np.float64)
        cdef int[::1] yv = y
        cdef double[::1] wv = work
        cdef double m = 0.0, d = 0.0
        self.oracle(&w[0], i, lam, &yv[0], &m, &d, &wv[0])
        result = y[:self.label_len(i)].copy(), m, d
        self.check_implemented("py_oracle")
        return result

    def py_constrained_oracle(self, const double[::1] w, Py_ssize_t i, double lam, double alpha, double beta,
                              double origin=0.0, double scale=1.0):
        """(label, m, delta) of the constrained lambda-oracle (see structure.pxd), or None when the
        cone holds no label."""
        import numpy as np
        y = np.zeros(max(self.max_label_len, 1), dtype=np.int32)
        work = np.zeros(max(self.workspace_size(), 1), dtype=np.float64)
        cdef int[::1] yv = y
        cdef double[::1] wv = work
        cdef double m = 0.0
        got = self.constrained_oracle(&w[0], i, lam, alpha, beta, origin, scale, &yv[0], &wv[0])
        if got == -2:
            raise NotImplementedError(f"{type(self).__name__} has no constrained oracle")
        if got == 0:
            return None
        self.margins(&w[0], i, &yv[0], 1, &m, &wv[0], False)
        return y[:self.label_len(i)].copy(), m, self.loss(i, &yv[0])

    def py_runners_up(self, const double[::1] w, Py_ssize_t i, double lam, int k):
        """(the oracle's label, the violating runners-up (n x L), their values m + lam * Delta)."""
        import numpy as np
        cdef Py_ssize_t L = self.label_len(i)
        labels = np.zeros(max(k, 1) * L, dtype=np.int32)
        values = np.zeros(max(k, 1))
        best = np.zeros(max(L, 1), dtype=np.int32)
        work = np.zeros(max(self.workspace_size(), 1))
        cdef int[::1] lv = labels, bv = best
        cdef double[::1] vv = values, wv = work
        cdef double m, d
        self.oracle(&w[0], i, lam, &bv[0], &m, &d, &wv[0])
        cdef int got = self.runners_up(i, lam, &bv[0], k, &lv[0], &vv[0], &wv[0])
        return best[:L].copy(), labels[:got * L].reshape(got, L), values[:got]

    def py_kbest(self, const double[::1] w, Py_ssize_t i, double lam, int k):
        """(labels (n x L), values) of the k best labels by m + lam * Delta."""
        import numpy as np
        cdef Py_ssize_t L = self.label_len(i)
        labels = np.zeros(k * L, dtype=np.int32)
        values = np.zeros(k)
        work = np.zeros(max(self.kbest_workspace_size(k), 1))
        cdef int[::1] lv = labels
        cdef double[::1] vv = values
        cdef double[::1] wv = work
        cdef int got = self.kbest(&w[0], i, lam, k, &lv[0], &vv[0], &wv[0])
        result = labels[:got * L].reshape(got, L), values[:got]
        self.check_implemented("py_kbest")
        return result

    def py_loss_indexed_oracle(self, const double[::1] w, Py_ssize_t i):
        """(best_m per level, labels (n_levels x L), loss value per level); NEG_INF = -1e300 marks
        a loss no label attains. Raises if the structure has no loss-indexed oracle."""
        import numpy as np
        cdef int n = self.n_loss_levels(i)
        if n == 0:
            raise NotImplementedError(f"{type(self).__name__} has no loss-indexed oracle")
        cdef Py_ssize_t L = self.label_len(i)
        best = np.zeros(n)
        labels = np.zeros(n * L, dtype=np.int32)
        work = np.zeros(max(self.loss_indexed_workspace_size(), 1))
        cdef double[::1] bv = best
        cdef int[::1] lv = labels
        cdef double[::1] wv = work
        self.loss_indexed_oracle(&w[0], i, &bv[0], &lv[0], &wv[0])
        losses = np.array([self.level_loss(i, l) for l in range(n)])
        result = best, labels.reshape(n, L), losses
        self.check_implemented("py_loss_indexed_oracle")
        return result

    def py_score(self, const double[::1] w, Py_ssize_t i, const int[::1] y):
        result = self.score(&w[0], i, &y[0])
        self.check_implemented("py_score")
        return result

    def py_same_label(self, Py_ssize_t i, const int[::1] a, const int[::1] b):
        return bool(self.same_label(i, &a[0], &b[0]))

    def py_loss(self, Py_ssize_t i, const int[::1] y):
        result = self.loss(i, &y[0])
        self.check_implemented("py_loss")
        return result

    def py_gram(self, Py_ssize_t i, const int[::1] a, const int[::1] b):
        result = self.gram(i, &a[0], &b[0])
        self.check_implemented("py_gram")
        return result

    def py_gram_row(self, Py_ssize_t i, const int[::1] a, const int[::1] labels):
        import numpy as np
        cdef Py_ssize_t L = self.label_len(i)
        cdef int n = labels.shape[0] // L
        out = np.zeros(max(n, 1))
        work = np.zeros(max(self.workspace_size(), 1))
        cdef double[::1] ov = out
        cdef double[::1] wv = work
        self.gram_row(i, &a[0], &labels[0], n, &ov[0], &wv[0])
        result = out[:n]
        self.check_implemented("py_gram_row")
        return result

    def py_solve_subproblem(self, Py_ssize_t i, const int[::1] labels, double sigma, H, alpha):
        """(solved, alpha, dalpha, H) of solve_subproblem on copies of H and alpha."""
        import numpy as np
        cdef Py_ssize_t L = self.label_len(i)
        cdef int n = labels.shape[0] // L
        Hc = np.array(H, dtype=np.float64)
        ac = np.array(alpha, dtype=np.float64)
        da = np.zeros(max(n, 1))
        work = np.zeros(max(self.workspace_size(), n, 1))
        cdef double[::1] hv = Hc, av = ac, dv = da, wv = work
        cdef int solved = self.solve_subproblem(i, &labels[0], n, sigma, &hv[0], &av[0], &dv[0], &wv[0])
        return bool(solved), ac, da[:n], Hc

    def py_margins(self, const double[::1] w, Py_ssize_t i, const int[::1] labels):
        import numpy as np
        cdef Py_ssize_t L = self.label_len(i)
        cdef int n = labels.shape[0] // L
        out = np.zeros(max(n, 1))
        work = np.zeros(max(self.workspace_size(), 1))
        cdef double[::1] ov = out
        cdef double[::1] wv = work
        self.margins(&w[0], i, &labels[0], n, &ov[0], &wv[0], False)
        result = out[:n]
        self.check_implemented("py_margins")
        return result

    def py_margins_after_oracle(self, const double[::1] w, Py_ssize_t i, const int[::1] labels, double lam=1.0):
        """margins() of labels (flat) reusing what the lambda-oracle left in `work`."""
        import numpy as np
        cdef Py_ssize_t L = self.label_len(i)
        cdef int n = labels.shape[0] // L
        y = np.zeros(max(self.max_label_len, 1), dtype=np.int32)
        out = np.zeros(max(n, 1))
        work = np.zeros(max(self.workspace_size(), 1))
        cdef int[::1] yv = y
        cdef double[::1] ov = out
        cdef double[::1] wv = work
        cdef double m = 0.0, d = 0.0
        self.oracle(&w[0], i, lam, &yv[0], &m, &d, &wv[0])
        self.margins(&w[0], i, &labels[0], n, &ov[0], &wv[0], True)
        result = out[:n]
        self.check_implemented("py_margins_after_oracle")
        return result

    def py_update(self, double[::1] w, Py_ssize_t i, double coef, const int[::1] y):
        self.update(&w[0], i, coef, &y[0])

    def py_update_many(self, double[::1] w, Py_ssize_t i, const double[::1] coefs, const int[::1] labels):
        import numpy as np
        work = np.zeros(max(self.workspace_size(), 1))
        cdef double[::1] wv = work
        self.update_many(&w[0], i, &coefs[0], &labels[0], <int> coefs.shape[0], &wv[0])

    def py_true_label(self, Py_ssize_t i):
        import numpy as np
        cdef const int *t = self.true_label(i)
        result = np.array([t[k] for k in range(self.label_len(i))], dtype=np.int32)
        self.check_implemented("py_true_label")
        return result


cdef class PredictPass(ShardWork):
    """The examples' predictions, shared by a Team (one workspace per thread)."""
    cdef Structure st
    cdef const double[::1] w
    cdef int[::1] out
    cdef const long long[::1] offsets
    cdef double[:, ::1] work
    cdef Team team

    def __init__(self, Structure st, const double[::1] w, int[::1] out, const long long[::1] offsets, Team team):
        import numpy as np
        if w.shape[0] != st.n_weights or offsets.shape[0] != st.n_examples + 1 or out.shape[0] < offsets[st.n_examples]:
            raise ValueError("predict: w, out or offsets has the wrong length")
        self.st, self.w, self.out, self.offsets, self.team = st, w, out, offsets, team
        self.work = np.zeros((team.n_threads, max(st.workspace_size(), 1)))

    cdef void compute(self, int kind, Py_ssize_t base, Py_ssize_t lo, Py_ssize_t hi,
                      Py_ssize_t tid) noexcept nogil:
        cdef Py_ssize_t i
        cdef double m, d
        for i in range(lo, hi):
            self.st.oracle(&self.w[0], i, 0.0, &self.out[self.offsets[i]], &m, &d, &self.work[tid, 0])

    def run(self):
        cdef Py_ssize_t n = self.st.n_examples
        if n == 0:
            return
        with nogil:
            self.team.share(<void *> self, 0, 0, n, max(1, n // (16 * self.team.n_threads)))
