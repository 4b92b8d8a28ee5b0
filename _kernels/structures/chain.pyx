# cython: language_level=3
"""Chain (sequence labeling) structure: Viterbi lambda-oracle, loss-indexed oracle, Gram, update."""
import numpy as np
from libc.math cimport NAN
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from ssvmlinear._kernels.dataset cimport (CSRDataset, Row, row_dot, row_axpy, row_gemv, row_row_dot, row_gather,
                                          row_scatter)
from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.factor cimport (FactorTree, tree_add_hamming, tree_score, tree_maxsum,
                                         tree_maxsum_workspace, tree_maxsum_by_count,
                                         tree_count_workspace, tree_kbest, tree_kbest_workspace)

cdef double NEG_INF = -1e300
# Largest token-product cache prepare_gram() keeps (doubles; 32 MiB)
cdef long long TOKEN_GRAM_LIMIT = 4 * 1024 * 1024
# prepare_gram() scatters a token into a dense vector of n_features doubles up to this many
# features (8 MiB); wider (hashed) feature spaces merge the sparse rows instead
cdef Py_ssize_t DENSE_TOKEN_LIMIT = 1 << 20
# margins() and update_many(): from this many labels on, whole T x K tables (the unary scores;
# the coefficients per position and tag) beat lists of the few tags the labels take per position
# (the cutting plane's caches and SDM's working sets: benchmarks/ocr_chain.py)
cdef enum:
    FEW_LABELS = 8


cdef class ChainStructure(Structure):
    """Examples are sequences: rows starts[i]..starts[i+1]-1 of X; tags 0..K-1 (int32)."""

    def __init__(self, CSRDataset X, y, lengths, Py_ssize_t n_tags, bint use_start_end=False,
                 bint normalize_loss=False, int outside_tag=-1, tag_weights=None):
        y = np.ascontiguousarray(y, dtype=np.int32)
        lengths = np.asarray(lengths, dtype=np.int64)
        if y.shape[0] != X.n_rows:
            raise ValueError(f"X has {X.n_rows} rows (tokens) but y has {y.shape[0]} tags")
        if lengths.sum() != X.n_rows or (lengths.shape[0] and lengths.min() < 1):
            raise ValueError("lengths must be positive and sum to the number of rows of X")
        if y.shape[0] and (y.min() < 0 or y.max() >= n_tags):
            raise ValueError("tag indices must lie in [0, n_tags)")
        starts = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        self.X = X
        self.y = y
        self.starts = starts
        self.n_tags = n_tags
        self.use_start_end = use_start_end
        self.normalize_loss = normalize_loss
        self.n_examples = lengths.shape[0]
        self.trans_off = X.n_cols * n_tags
        self.start_off = self.trans_off + n_tags * n_tags
        self.end_off = self.start_off + n_tags
        self.n_weights = self.start_off + (2 * n_tags if use_start_end else 0)
        self.max_label_len = int(lengths.max()) if lengths.shape[0] else 1
        # outside_tag >= 0 offers the Micro-F1 surrogate's oracles (its sets: the (token, tag)
        # pairs of the other tags)
        if not -1 <= outside_tag < n_tags:
            raise ValueError(f"outside tag {outside_tag} is not a tag index in [0, {n_tags})")
        self.outside_tag = outside_tag
        self.offers_microf1 = outside_tag >= 0
        self.tag_weighted = tag_weights is not None
        self.tag_weights = None
        self.tok_w = np.zeros(0)
        if self.tag_weighted:
            tw = np.ascontiguousarray(tag_weights, dtype=np.float64)
            if tw.shape != (n_tags,) or not np.all(np.isfinite(tw)) or tw.min(initial=0.0) < 0:
                raise ValueError(f"tag_weights: {n_tags} finite weights >= 0 expected (one per tag)")
            if outside_tag >= 0:
                raise ValueError("tag_weights: the Micro-F1 surrogate's loss has no per-tag weights")
            self.tag_weights = tw
            self.tok_w = tw[y]

    def __reduce__(self):
        lengths = np.diff(np.asarray(self.starts))
        return (ChainStructure, (self.X, np.asarray(self.y), lengths, self.n_tags, self.use_start_end,
                                 self.normalize_loss, self.outside_tag, self.tag_weights))

    def subset(self, Py_ssize_t lo, Py_ssize_t hi, order=None):
        """The structure of sequences lo..hi-1 or order[lo:hi] (Structure.subset)."""
        starts = np.asarray(self.starts)
        if order is None:
            a, b = starts[lo], starts[hi]
            X, y, lengths = self.X.rows(a, b), np.asarray(self.y)[a:b], np.diff(starts[lo:hi + 1])
        else:
            seqs = self.shard_index(lo, hi, order)
            lengths = starts[seqs + 1] - starts[seqs]
            # the tokens of the chosen sequences, each sequence's in order
            tokens = np.arange(lengths.sum()) + np.repeat(starts[seqs] - (np.cumsum(lengths) - lengths), lengths)
            X, y = self.X.take(tokens), np.asarray(self.y)[tokens]
        return ChainStructure(X, y, lengths, self.n_tags, self.use_start_end, self.normalize_loss, self.outside_tag,
                              self.tag_weights)

    cdef Py_ssize_t label_len(self, Py_ssize_t i) noexcept nogil:
        return <Py_ssize_t> (self.starts[i + 1] - self.starts[i])

    def factor_graph(self):
        """The per-example factor decomposition factorwise solvers (GDMM) train on (factor.pxd's
        FactorGraph): the tokens as domain variables over the K tags, each adjacent pair of tokens
        sharing the transition table, the start/end weights on a sequence's first/last token."""
        from ssvmlinear._kernels.factor import FactorGraph
        cdef Py_ssize_t i
        if self.tag_weighted:
            raise ValueError("per-tag loss weights (class_weight) are not available to factorwise solvers (GDMM)")
        lw = np.empty(self.n_examples)
        for i in range(self.n_examples):
            lw[i] = self._loss_weight(i)
        return FactorGraph(self, self.X, np.asarray(self.starts), np.asarray(self.y), lw, self.n_tags, False,
                           self.trans_off, self.n_weights, None, self.start_off if self.use_start_end else -1,
                           self.end_off if self.use_start_end else -1)

    cdef const int* true_label(self, Py_ssize_t i) noexcept nogil:
        return &self.y[self.starts[i]]

    cdef double _loss_weight(self, Py_ssize_t i) noexcept nogil:
        return 1.0 / self.label_len(i) if self.normalize_loss else 1.0

    cdef double _token_loss(self, Py_ssize_t s) noexcept nogil:
        """What a mistake on token s costs before _loss_weight: its true tag's weight, or 1."""
        return self.tok_w[s] if self.tag_weighted else 1.0

    cdef double score(self, const double *w, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t t, T = self.label_len(i), s0 = self.starts[i], K = self.n_tags
        cdef double f = 0.0
        for t in range(T):
            f += row_dot(self.X.row(s0 + t), w, K, y[t])
            if t > 0:
                f += w[self.trans_off + y[t - 1] * K + y[t]]
        if self.use_start_end:
            f += w[self.start_off + y[0]] + w[self.end_off + y[T - 1]]
        return f

    cdef void margins(self, const double *w, Py_ssize_t i, const int *labels, int n, double *out,
                      double *work, bint after_oracle) noexcept nogil:
        # m(y) = sum over the positions where y differs from y_i of the unary and transition
        # differences (never f(y) - f(y_i) from two large sums). Many labels (a working set or a
        # cache): the full T x K table of unary scores (the oracle's, or one row_gemv per
        # position), then a branch-free sum per label whose terms are exactly 0 where y agrees
        # with y_i. Few labels: only the (position, tag) scores they need, each position's in one
        # sweep over its token's nonzeros.
        cdef Py_ssize_t t, T = self.label_len(i), K = self.n_tags, s0 = self.starts[i]
        cdef int k
        cdef const int *y
        cdef const int *yi = self.true_label(i)
        cdef const double *tr = w + self.trans_off
        cdef double m
        cdef double *U = work
        cdef double *uyi = work + T * K          # U[t, y_i,t]
        cdef double *tyi = uyi + T               # transition score of y_i into t
        cdef int tags[FEW_LABELS]
        cdef double vals[FEW_LABELS]
        cdef double own
        cdef int nt, c, j
        cdef Row r
        if after_oracle or n >= FEW_LABELS:
            if not after_oracle:
                for t in range(T):
                    row_gemv(self.X.row(s0 + t), w, K, U + t * K)
            for t in range(T):
                uyi[t] = U[t * K + yi[t]]
                tyi[t] = tr[yi[t - 1] * K + yi[t]] if t > 0 else 0.0
            for k in range(n):
                y = labels + k * T
                m = U[y[0]] - uyi[0]
                for t in range(1, T):
                    m += (U[t * K + y[t]] - uyi[t]) + (tr[y[t - 1] * K + y[t]] - tyi[t])
                if self.use_start_end:
                    m += (w[self.start_off + y[0]] - w[self.start_off + yi[0]]
                          + w[self.end_off + y[T - 1]] - w[self.end_off + yi[T - 1]])
                out[k] = m
            return
        # the tags the labels take where they differ from y_i, per position: their scores and
        # y_i's in one sweep over the token's nonzeros
        for t in range(T):
            nt = 0
            for k in range(n):
                c = labels[k * T + t]
                if c == yi[t]:
                    continue
                j = 0
                while j < nt and tags[j] != c:
                    j += 1
                if j == nt:
                    tags[nt] = c
                    nt += 1
            if nt == 0:
                continue
            r = self.X.row(s0 + t)
            own = row_gather(r, w, K, yi[t], tags, nt, vals)
            U[t * K + yi[t]] = own
            for j in range(nt):
                U[t * K + tags[j]] = vals[j]
        for k in range(n):
            y = labels + k * T
            m = 0.0
            for t in range(T):
                if y[t] != yi[t]:
                    m += U[t * K + y[t]] - U[t * K + yi[t]]
                    if t > 0:
                        m += tr[y[t - 1] * K + y[t]] - tr[yi[t - 1] * K + yi[t]]
                elif t > 0 and y[t - 1] != yi[t - 1]:
                    m += tr[y[t - 1] * K + y[t]] - tr[yi[t - 1] * K + yi[t]]
            if self.use_start_end:
                m += (w[self.start_off + y[0]] - w[self.start_off + yi[0]]
                      + w[self.end_off + y[T - 1]] - w[self.end_off + yi[T - 1]])
            out[k] = m

    cdef double loss(self, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t t, T = self.label_len(i), s0 = self.starts[i]
        cdef const int *yi = self.true_label(i)
        cdef double d = 0.0
        for t in range(T):
            if y[t] != yi[t]:
                d += self._token_loss(s0 + t)
        return d * self._loss_weight(i)

    cdef double _unary_scores(self, const double *w, Py_ssize_t i, double lam, double *U) noexcept nogil:
        """U[t*K + k] = x_t . w_k + lam * loss of tag k at t; returns the truth's unary score."""
        cdef Py_ssize_t t, k, T = self.label_len(i), s0 = self.starts[i], K = self.n_tags
        cdef const int *yi = self.true_label(i)
        cdef double a = lam * self._loss_weight(i), f = 0.0, at
        for t in range(T):
            row_gemv(self.X.row(s0 + t), w, K, U + t * K)
            f += U[t * K + yi[t]]
            at = a * self._token_loss(s0 + t)
            if at != 0.0:
                for k in range(K):
                    if k != yi[t]:
                        U[t * K + k] += at
        return f

    cdef FactorTree _path(self, const double *w, Py_ssize_t i) noexcept nogil:
        """The sequence as a path of the factor layer: T variables of K tags, each token's
        transition table shared (tr[prev, next] is table_v(state of v, state of v + 1))."""
        cdef FactorTree t
        t.n_vars = self.label_len(i)
        t.n_card = self.n_tags
        t.card = NULL
        t.off = NULL
        t.order = NULL
        t.parent = NULL
        t.tables = w + self.trans_off
        t.tab_off = NULL
        t.cs = NULL
        t.ps = NULL
        return t

    cdef void _beliefs(self, const double *w, Py_ssize_t i, const FactorTree *t, const double *U,
                       double a, double *B) noexcept nogil:
        """B = the unary scores U + a per mismatch with y_i, times the token's tag weight (+ the
        start and end weights)."""
        cdef Py_ssize_t k, T = t.n_vars, K = self.n_tags
        if B != U:
            memcpy(B, U, T * K * sizeof(double))
        cdef const double *weight = &self.tok_w[self.starts[i]] if self.tag_weighted else NULL
        tree_add_hamming(t, B, self.true_label(i), a, weight)
        if self.use_start_end:
            for k in range(K):
                B[k] += w[self.start_off + k]
                B[(T - 1) * K + k] += w[self.end_off + k]

    cdef double _score_with_edges(self, const double *w, const FactorTree *t, const double *U,
                                  const int *y) noexcept nogil:
        cdef double f = tree_score(t, U, y)
        if self.use_start_end:
            f += w[self.start_off + y[0]] + w[self.end_off + y[t.n_vars - 1]]
        return f

    cdef double oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                       double *m_out, double *delta_out, double *work) noexcept nogil:
        # max-product on the path (Viterbi) on unary + lam * Hamming; ties go to the lowest tag
        # (backwards: lowest predecessor). work[0:T*K] keeps the plain unary scores (margins()
        # and oracle_again() reuse them).
        self._unary_scores(w, i, 0.0, work)
        return self._viterbi(w, i, lam, y_out, m_out, delta_out, work)

    cdef double oracle_again(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                             double *m_out, double *delta_out, double *work) noexcept nogil:
        # work[0:T*K] holds the unary scores of an earlier oracle call: only the DP is redone
        return self._viterbi(w, i, lam, y_out, m_out, delta_out, work)

    cdef double _viterbi(self, const double *w, Py_ssize_t i, double lam, int *y_out, double *m_out,
                         double *delta_out, double *work) noexcept nogil:
        cdef Py_ssize_t T = self.label_len(i), K = self.n_tags
        cdef FactorTree t = self._path(w, i)
        cdef double *U = work
        cdef double *B = work + T * K
        self._beliefs(w, i, &t, U, lam * self._loss_weight(i), B)
        tree_maxsum(&t, B, y_out, B + T * K)
        # m = f(y) - f(y_i), summed along the paths (not the path value less lam * loss, which
        # cancels catastrophically for the large lam some searches use)
        m_out[0] = (self._score_with_edges(w, &t, U, y_out)
                    - self._score_with_edges(w, &t, U, self.true_label(i)))
        delta_out[0] = self.loss(i, y_out)
        return m_out[0] + lam * delta_out[0]

    cdef void loss_indexed_oracle(self, const double *w, Py_ssize_t i, double *best_m, int *labels,
                                  double *work) noexcept nogil:
        """For every Hamming count l = 0..T: best_m[l] = max m(y) over labellings with l mistakes
        and labels[l*T:(l+1)*T] one such labelling (ties: lowest tags); max-product by mismatch
        count on the path. work[0:T*K] keeps the unary scores."""
        cdef Py_ssize_t l, T = self.label_len(i), K = self.n_tags
        cdef FactorTree t = self._path(w, i)
        cdef double *U = work
        cdef double *B = work + T * K
        self._unary_scores(w, i, 0.0, U)
        self._beliefs(w, i, &t, U, 0.0, B)
        tree_maxsum_by_count(&t, B, self.true_label(i), best_m, labels, B + T * K)
        cdef double fyi = self._score_with_edges(w, &t, U, self.true_label(i))
        for l in range(T + 1):
            if best_m[l] > NEG_INF:
                best_m[l] -= fyi

    def prepare_gram(self):
        """Keep the token products x_t . x_s of every sequence (sum_i T_i^2 doubles) when they
        fit in TOKEN_GRAM_LIMIT doubles: Gram entries then need no sparse dot products."""
        cdef Py_ssize_t i, t, s, T, s0
        cdef long long total = 0
        if self.has_tok_gram:
            return
        for i in range(self.n_examples):
            T = self.label_len(i)
            total += T * T
        if total > TOKEN_GRAM_LIMIT:
            return
        off = np.zeros(self.n_examples + 1, dtype=np.int64)
        gram = np.zeros(max(total, 1))
        cdef bint dense = self.X.n_features <= DENSE_TOKEN_LIMIT
        scratch = np.zeros(max(self.X.n_features, 1) if dense else 1)
        cdef long long[::1] ov = off
        cdef double[::1] gv = gram
        cdef double[::1] xt = scratch        # token t scattered: its products with every s are gathers
        cdef Row a, b
        cdef Py_ssize_t q
        cdef double g
        with nogil:
            for i in range(self.n_examples):
                T = self.label_len(i)
                s0 = self.starts[i]
                ov[i + 1] = ov[i] + T * T
                for t in range(T):
                    a = self.X.row(s0 + t)
                    if dense:
                        for q in range(a.nnz):
                            xt[a.ind[q]] = a.val[q]
                    for s in range(t, T):
                        b = self.X.row(s0 + s)
                        if dense:
                            g = a.bias * b.bias
                            for q in range(b.nnz):
                                g += b.val[q] * xt[b.ind[q]]
                        else:
                            g = row_row_dot(a, b)
                        gv[ov[i] + t * T + s] = g
                        gv[ov[i] + s * T + t] = g
                    if dense:
                        for q in range(a.nnz):
                            xt[a.ind[q]] = 0.0
        self.tok_off = off
        self.tok_gram = gram
        self.has_tok_gram = True

    cdef const double* _token_products(self, Py_ssize_t i, const int *da, int na, double *work) noexcept nogil:
        """P with P[t*T + s] = x_t . x_s for the positions t in da (all s): the cached table, or
        those rows computed into work (T*T doubles)."""
        cdef Py_ssize_t s, T = self.label_len(i), s0 = self.starts[i], t
        cdef int p
        if self.has_tok_gram:
            return &self.tok_gram[self.tok_off[i]]
        for p in range(na):
            t = da[p]
            for s in range(T):
                work[t * T + s] = row_row_dot(self.X.row(s0 + t), self.X.row(s0 + s))
        return work

    cdef double _gram_pair(self, Py_ssize_t i, const int *a, const int *da, int na, const int *ta, int nta,
                           const int *b, const double *P) noexcept nogil:
        # dphi(a) . dphi(b) with dphi(y) = phi(y_i) - phi(y). Only the positions where a differs
        # from y_i (da, na; transitions: ta, nta) and where b does contribute; token products
        # come from P (rows da).
        cdef Py_ssize_t s, T = self.label_len(i), t
        cdef const int *yi = self.true_label(i)
        cdef double g = 0.0, c
        cdef int p
        for s in range(T):
            if b[s] == yi[s]:
                continue
            for p in range(na):
                t = da[p]
                c = ((yi[t] == yi[s]) - (yi[t] == b[s]) - (a[t] == yi[s]) + (a[t] == b[s]))
                if c != 0.0:
                    g += c * P[t * T + s]
        for s in range(1, T):
            if b[s] == yi[s] and b[s - 1] == yi[s - 1]:
                continue
            for p in range(nta):
                t = ta[p]
                g += (_same(yi, yi, t, s) - _same(yi, b, t, s) - _same(a, yi, t, s) + _same(a, b, t, s))
        if self.use_start_end:
            g += ((yi[0] == yi[0]) - (yi[0] == b[0]) - (a[0] == yi[0]) + (a[0] == b[0]))
            g += ((yi[T - 1] == yi[T - 1]) - (yi[T - 1] == b[T - 1]) - (a[T - 1] == yi[T - 1])
                  + (a[T - 1] == b[T - 1]))
        return g

    cdef double gram(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil:
        # not on hot paths (gram_row is): scratch from the heap
        cdef Py_ssize_t T = self.label_len(i)
        cdef double *work = <double *> malloc((T * T + T) * sizeof(double))
        cdef double g
        if work == NULL:
            return NAN
        self.gram_row(i, a, b, 1, &g, work)
        free(work)
        return g

    cdef void gram_row(self, Py_ssize_t i, const int *a, const int *labels, int n, double *out,
                       double *work) noexcept nogil:
        # work: T*T doubles for token products, then the two position lists of a (T ints each)
        cdef Py_ssize_t t, T = self.label_len(i)
        cdef const int *yi = self.true_label(i)
        cdef int *da = <int *> (work + T * T)
        cdef int *ta = da + T
        cdef int na = 0, nta = 0, j
        for t in range(T):
            if a[t] != yi[t]:
                da[na] = <int> t
                na += 1
            if t > 0 and (a[t] != yi[t] or a[t - 1] != yi[t - 1]):
                ta[nta] = <int> t
                nta += 1
        cdef const double *P = self._token_products(i, da, na, work)
        for j in range(n):
            out[j] = self._gram_pair(i, a, da, na, ta, nta, labels + j * T, P)

    cdef void update(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil:
        cdef Py_ssize_t t, T = self.label_len(i), s0 = self.starts[i], K = self.n_tags
        cdef const int *yi = self.true_label(i)
        cdef Row r
        for t in range(T):
            if y[t] != yi[t]:
                r = self.X.row(s0 + t)
                row_axpy(r, coef, w, K, yi[t])
                row_axpy(r, -coef, w, K, y[t])
        self._update_edges(w, i, coef, y)

    cdef void _update_edges(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil:
        """The transition (and start/end) part of w += coef * (phi(y_i) - phi(y))."""
        cdef Py_ssize_t t, T = self.label_len(i), K = self.n_tags
        cdef const int *yi = self.true_label(i)
        for t in range(1, T):
            if y[t] != yi[t] or y[t - 1] != yi[t - 1]:
                w[self.trans_off + yi[t - 1] * K + yi[t]] += coef
                w[self.trans_off + y[t - 1] * K + y[t]] -= coef
        if self.use_start_end:
            if y[0] != yi[0]:
                w[self.start_off + yi[0]] += coef
                w[self.start_off + y[0]] -= coef
            if y[T - 1] != yi[T - 1]:
                w[self.end_off + yi[T - 1]] += coef
                w[self.end_off + y[T - 1]] -= coef

    cdef void update_many(self, double *w, Py_ssize_t i, const double *coefs, const int *labels, int n,
                          double *work) noexcept nogil:
        # The unary part sum_t x_t (x) (sum_k c_k (e_{y_i,t} - e_{y_k,t})) is merged per position
        # first, so each position costs one sweep over the token's nonzeros for all its distinct
        # tags (row_scatter) instead of two sparse axpys per label. Few labels: each position's tags
        # are listed from the labels; many: from a T x K table of coefficients.
        cdef Py_ssize_t t, c, T = self.label_len(i), s0 = self.starts[i], K = self.n_tags
        cdef const int *yi = self.true_label(i)
        cdef const int *y
        cdef double *Ct = work             # Ct[t*K + tag]: coefficient removed from tag at t
        cdef double *S = work + T * K      # S[t]: coefficient added to y_i's tag at t
        cdef double *touched = S + T
        cdef double *amounts = touched + T   # one position's tags and their coefficients (K + 1)
        cdef int *tags = <int *> (amounts + K + 1)
        cdef double coef, added
        cdef int k, m, j, tag
        for k in range(n):
            if coefs[k] != 0.0:
                self._update_edges(w, i, coefs[k], labels + k * T)
        if n < FEW_LABELS:
            for t in range(T):
                m = 1                          # (tags[0]: y_i's tag, its coefficient added last)
                added = 0.0
                for k in range(n):
                    coef = coefs[k]
                    tag = labels[k * T + t]
                    if coef == 0.0 or tag == yi[t]:
                        continue
                    added += coef
                    j = 1
                    while j < m and tags[j] != tag:
                        j += 1
                    if j == m:
                        tags[m] = tag
                        amounts[m] = 0.0
                        m += 1
                    amounts[j] -= coef
                if m == 1:
                    continue
                tags[0] = yi[t]
                amounts[0] = added
                j = 0                          # (coefficients that cancelled to 0 are left out)
                for k in range(m):
                    if amounts[k] != 0.0:
                        tags[j] = tags[k]
                        amounts[j] = amounts[k]
                        j += 1
                row_scatter(self.X.row(s0 + t), w, K, tags, amounts, j)
            return
        for t in range(T * K):
            Ct[t] = 0.0
        for t in range(T):
            S[t] = 0.0
            touched[t] = 0.0
        for k in range(n):
            coef = coefs[k]
            if coef == 0.0:
                continue
            y = labels + k * T
            for t in range(T):
                if y[t] != yi[t]:
                    S[t] += coef
                    Ct[t * K + y[t]] += coef
                    touched[t] = 1.0
        for t in range(T):
            if touched[t] == 0.0:
                continue
            m = 0
            if S[t] != 0.0:
                tags[0] = yi[t]
                amounts[0] = S[t]
                m = 1
            for c in range(K):
                if Ct[t * K + c] != 0.0:
                    tags[m] = <int> c
                    amounts[m] = -Ct[t * K + c]
                    m += 1
            row_scatter(self.X.row(s0 + t), w, K, tags, amounts, m)

    cdef void example_rows(self, Py_ssize_t i, Py_ssize_t *lo, Py_ssize_t *hi) noexcept nogil:
        lo[0] = <Py_ssize_t> self.starts[i]
        hi[0] = <Py_ssize_t> self.starts[i + 1]

    cdef Py_ssize_t workspace_size(self) noexcept nogil:
        # Viterbi: unary scores and beliefs (T x K each) + max-product's; margins: T x K + 2T;
        # update_many: T x K + 2T, and K + 1 tags with their coefficients; gram_row: T x T token
        # products + 2T ints
        cdef Py_ssize_t T = self.max_label_len, K = self.n_tags
        return max(2 * T * K + tree_maxsum_workspace(T, K), T * T + T, T * K + 2 * T + 2 * (K + 1))

    cdef int n_loss_levels(self, Py_ssize_t i) noexcept nogil:
        # per-tag weights make the loss a weighted count: no levels by mismatch count
        return 0 if self.tag_weighted else <int> self.label_len(i) + 1

    cdef double level_loss(self, Py_ssize_t i, int level) noexcept nogil:
        return level * self._loss_weight(i)

    cdef Py_ssize_t loss_indexed_workspace_size(self) noexcept nogil:
        # loss_indexed_oracle: unary scores and beliefs + max-product by count; exact_f1 also its
        # best values (T + 1) and labellings ((T + 1) x T ints) and a reference labelling (T ints)
        cdef Py_ssize_t T = self.max_label_len, K = self.n_tags
        return 2 * T * K + tree_count_workspace(T, K) + (T + 1) + (T + 1) * T + T

    # Micro-F1 (h = H + m, g = -(|y| + |y_i|)) on the path, the sets being the (token, tag) pairs
    # of tags other than outside_tag: H and |y| are sums over tokens, so oracle_f1 is Viterbi on
    # beliefs U + [k != y_t] ([k != o] + [y_t != o]) - lam [k != o], and exact_f1 the best h for
    # each |y| (max-product by count against the all-outside labelling), then the best ratio.

    cdef double f1_counts(self, Py_ssize_t i, const int *y, double *size_out) noexcept nogil:
        cdef Py_ssize_t t, T = self.label_len(i)
        cdef const int *yi = self.true_label(i)
        cdef int o = self.outside_tag
        cdef double H = 0.0, size = 0.0
        for t in range(T):
            size += (y[t] != o) + (yi[t] != o)
            if y[t] != yi[t]:
                H += (y[t] != o) + (yi[t] != o)
        size_out[0] = size
        return H

    cdef void _f1_beliefs(self, const double *w, Py_ssize_t i, const double *U, double lam,
                          double *B) noexcept nogil:
        cdef Py_ssize_t t, k, T = self.label_len(i), K = self.n_tags
        cdef const int *yi = self.true_label(i)
        cdef int o = self.outside_tag
        for t in range(T):
            for k in range(K):
                B[t * K + k] = U[t * K + k] + (((k != o) + (yi[t] != o)) if k != yi[t] else 0.0) - lam * (k != o)
        if self.use_start_end:
            for k in range(K):
                B[k] += w[self.start_off + k]
                B[(T - 1) * K + k] += w[self.end_off + k]

    cdef double _f1_h(self, const double *w, Py_ssize_t i, const FactorTree *t, const double *U,
                      const int *y, double *size) noexcept nogil:
        cdef double H = self.f1_counts(i, y, size)
        return H + self._score_with_edges(w, t, U, y) - self._score_with_edges(w, t, U, self.true_label(i))

    cdef double oracle_f1(self, const double *w, Py_ssize_t i, double lam, int *y_out, double *h_out,
                          double *g_out, double *work) noexcept nogil:
        cdef Py_ssize_t T = self.label_len(i), K = self.n_tags
        cdef FactorTree t = self._path(w, i)
        cdef double size
        self._unary_scores(w, i, 0.0, work)
        self._f1_beliefs(w, i, work, lam, work + T * K)
        tree_maxsum(&t, work + T * K, y_out, work + 2 * T * K)
        h_out[0] = self._f1_h(w, i, &t, work, y_out, &size)
        g_out[0] = -size
        return h_out[0] - lam * size

    cdef double exact_f1(self, const double *w, Py_ssize_t i, int *y_out, double *h_out, double *g_out,
                         double *work) noexcept nogil:
        cdef Py_ssize_t c, s, T = self.label_len(i), K = self.n_tags, Tm = self.max_label_len
        cdef FactorTree t = self._path(w, i)
        cdef double *U = work
        cdef double *B = work + T * K
        cdef double *best = B + T * K + tree_count_workspace(Tm, K)
        cdef int *labels = <int *> (best + T + 1)
        cdef int *outside = labels + (T + 1) * T
        cdef double h, size, r, best_r = 0.0, best_h = 0.0, best_size = 0.0
        cdef Py_ssize_t best_c = -1
        self._unary_scores(w, i, 0.0, U)
        self._f1_beliefs(w, i, U, 0.0, B)
        for s in range(T):
            outside[s] = self.outside_tag
        tree_maxsum_by_count(&t, B, outside, best, labels, B + T * K)
        for c in range(T + 1):       # c tokens tagged inside an entity
            if best[c] <= NEG_INF:
                continue
            h = self._f1_h(w, i, &t, U, labels + c * T, &size)
            r = h / size if size > 0.0 else 0.0
            if best_c < 0 or r > best_r:
                best_r, best_c, best_h, best_size = r, c, h, size
        for s in range(T):
            y_out[s] = labels[best_c * T + s]
        h_out[0] = best_h
        g_out[0] = -best_size
        return best_r

    cdef int kbest(self, const double *w, Py_ssize_t i, double lam, int kb, int *labels_out,
                   double *values_out, double *work) noexcept nogil:
        # list Viterbi: k-best max-product on the path
        cdef Py_ssize_t r, T = self.label_len(i), K = self.n_tags
        cdef FactorTree t = self._path(w, i)
        cdef double *U = work
        cdef int got
        self._unary_scores(w, i, 0.0, U)
        cdef double fyi = self._score_with_edges(w, &t, U, self.true_label(i))
        self._beliefs(w, i, &t, U, lam * self._loss_weight(i), U)
        got = tree_kbest(&t, U, kb, labels_out, values_out, U + T * K)
        for r in range(got):
            values_out[r] -= fyi
        return got

    cdef Py_ssize_t kbest_workspace_size(self, int kb) noexcept nogil:
        cdef Py_ssize_t T = self.max_label_len, K = self.n_tags
        return T * K + tree_kbest_workspace(T, K, kb)


cdef inline double _same(const int *u, const int *v, Py_ssize_t t, Py_ssize_t s) noexcept nogil:
    """1 if transition t of u equals transition s of v."""
    return 1.0 if (u[t - 1] == v[s - 1] and u[t] == v[s]) else 0.0
