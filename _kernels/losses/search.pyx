# cython: language_level=3
"""lambda-oracle searches for the maximiser of a bi-criteria surrogate psi(h(y), g(y)).

Every search sees labels only as points (h, g) returned by a LabelOracle:
  query(lam)                      argmax_y h + lam g                      (the lambda-oracle)
  query_constrained(lam, a, b)    the same over labels with a x > g >= b x, x = h + origin
                                  (the constrained lambda-oracle of the angular search)
  query_exact(psi)                argmax_y psi (loss-indexed enumeration)
  query_excluding(lam, banned)    the lambda-oracle over labels not in `banned` (k-best)
The searches are generic in psi: they need psi to be increasing in h and g and quasi-concave
(choi-thesis Definition 1). Where a paper's step is specific to slack rescaling (the hyperbola
through a label, the tangent direction of a line), the generic step solves the same geometric
question for psi's level curves numerically; for slack rescaling it reduces to the paper's formulas.
"""
import numpy as np
from libc.math cimport sqrt, fabs, INFINITY, isfinite, log as log_, exp as exp_
from libc.string cimport memcpy

from ssvmlinear._kernels.surrogate cimport (Surrogate, psi, psi_dh, psi_dg, SURR_MARGIN,
                                            SURR_SLACK, SURR_BETA, SURR_GENERALIZED, SURR_MICROF1,
                                            SURR_PROBLOSS, SURR_PROBLOSS_CONVEX, SURR_LOGLOSS)
from ssvmlinear._kernels.structure cimport Structure

cdef double NEG_INF_M = -1e299      # structures mark unattainable loss levels with -1e300
cdef double LAM_MAX = 1e12
cdef int MAX_POINTS = 256


# ---------------------------------------------------------------------------------------------
# Geometry of psi on straight lines and segments

cdef double seg_max(const Surrogate *s, double h1, double g1, double h2, double g2,
                    double *t_out) noexcept nogil:
    """max of psi on the segment (1-t) p1 + t p2, t in [0, 1] (psi is unimodal along it)."""
    cdef double a, b, c, t, v1, v2, x1, x2, fx1, fx2, dh = h2 - h1, dg = g2 - g1
    cdef int it
    v1 = psi(s, h1, g1)
    v2 = psi(s, h2, g2)
    if s.kind == SURR_MARGIN:
        t_out[0] = 0.0 if v1 >= v2 else 1.0
        return v1 if v1 >= v2 else v2
    if s.kind == SURR_SLACK:
        # (g1 + t dg)(1 + h1 + t dh): a quadratic in t
        a = dg * dh
        b = g1 * dh + (1.0 + h1) * dg
        if a < 0.0:
            t = -b / (2.0 * a)
            if 0.0 < t < 1.0:
                c = psi(s, h1 + t * dh, g1 + t * dg)
                if c > v1 and c > v2:
                    t_out[0] = t
                    return c
        t_out[0] = 0.0 if v1 >= v2 else 1.0
        return v1 if v1 >= v2 else v2
    # golden section (0.618^60 ~ 3e-13)
    a, b = 0.0, 1.0
    x1 = b - 0.6180339887498949 * (b - a)
    x2 = a + 0.6180339887498949 * (b - a)
    fx1 = psi(s, h1 + x1 * dh, g1 + x1 * dg)
    fx2 = psi(s, h1 + x2 * dh, g1 + x2 * dg)
    for it in range(60):
        if fx1 < fx2:
            a = x1
            x1, fx1 = x2, fx2
            x2 = a + 0.6180339887498949 * (b - a)
            fx2 = psi(s, h1 + x2 * dh, g1 + x2 * dg)
        else:
            b = x2
            x2, fx2 = x1, fx1
            x1 = b - 0.6180339887498949 * (b - a)
            fx1 = psi(s, h1 + x1 * dh, g1 + x1 * dg)
    t = 0.5 * (a + b)
    c = psi(s, h1 + t * dh, g1 + t * dg)
    if v1 >= c and v1 >= v2:
        t_out[0] = 0.0
        return v1
    if v2 >= c:
        t_out[0] = 1.0
        return v2
    t_out[0] = t
    return c


cdef double line_max(const Surrogate *s, double c, double lam, double glo, double ghi,
                     double *g_out) noexcept nogil:
    """max of psi(h, g) on the line h + lam g = c for g in [glo, ghi] (finite bounds)."""
    cdef double t, v
    v = seg_max(s, c - lam * glo, glo, c - lam * ghi, ghi, &t)
    g_out[0] = glo + t * (ghi - glo)
    return v


cdef double level_cross(const Surrogate *s, double c, double lam, double g_in, double g_out,
                        double level) noexcept nogil:
    """On the line h + lam g = c, psi(g_in) >= level: the g between g_in and g_out where psi falls
    to `level` (g_out when it never does)."""
    cdef double a = g_in, b = g_out, mid
    cdef int it
    if psi(s, c - lam * g_out, g_out) >= level:
        return g_out
    for it in range(80):
        mid = 0.5 * (a + b)
        if psi(s, c - lam * mid, mid) >= level:
            a = mid
        else:
            b = mid
    return 0.5 * (a + b)


cdef double h_at_level(const Surrogate *s, double g, double c) noexcept nogil:
    """inf{h : psi(h, g) > c} (psi increasing in h); closed forms where they exist."""
    cdef double lo = -1.0, hi = 1.0, mid
    cdef int it
    if s.kind == SURR_MARGIN:
        return c - g
    if s.kind == SURR_SLACK:
        return c / g - 1.0
    if s.kind == SURR_BETA:
        return (c - g) / g ** s.beta
    if s.kind == SURR_GENERALIZED:
        return (c - g ** s.alpha) / g ** s.beta
    while psi(s, lo, g) > c and lo > -1e12:
        lo *= 2.0
    while psi(s, hi, g) <= c and hi < 1e12:
        hi *= 2.0
    for it in range(80):
        mid = 0.5 * (lo + hi)
        if psi(s, mid, g) > c:
            hi = mid
        else:
            lo = mid
    return lo


# ---------------------------------------------------------------------------------------------
# Oracles

cdef class LabelOracle:
    """Abstract: subclasses answer the queries and store labels in slots 0..capacity-1."""

    def __cinit__(self, *args, **kwargs):
        self.origin = 1.0
        self.g_lo = 0.0
        self.g_hi = INFINITY

    cdef int query(self, int slot, double lam) noexcept nogil:
        return -2

    cdef int query_constrained(self, int slot, double lam, double alpha, double beta) noexcept nogil:
        return -2

    cdef int query_exact(self, int slot, const Surrogate *s) noexcept nogil:
        return -2

    cdef int query_excluding(self, int slot, double lam, const int *banned, int n_banned) noexcept nogil:
        return -2

    cdef int max_banned(self) noexcept nogil:
        """The most banned labels query_excluding answers around (the hull-integral search's ban list)."""
        return 128

    cdef bint same(self, int a, int b) noexcept nogil:
        return a == b

    cdef double angular_origin(self, const Surrogate *s, double c) noexcept nogil:
        return 1.0


cdef inline bint cone_admits(double x, double g, double alpha, double beta) noexcept nogil:
    """alpha x > g >= beta x, with alpha = inf meaning x > 0 (the paper's initial right angle)."""
    if x <= 0.0:
        return False
    if isfinite(alpha) and not alpha * x > g:
        return False
    return beta * x <= g


cdef class StructureOracle(LabelOracle):
    """Oracle of one example of a Structure, for the weights scale * w."""

    def __init__(self, Structure st, int capacity=64, int kmax=32, bint microf1=False):
        if microf1 and not st.offers_microf1:
            raise ValueError(f"the Micro-F1 surrogate needs a structure that offers its oracles "
                             f"(multi-label, or a chain with an outside tag); {type(st).__name__} does not")
        self.st = st
        self.capacity = capacity
        self.kmax = kmax
        self.microf1 = microf1
        self.Lmax = max(st.max_label_len, 1)
        self.max_levels = 0
        cdef Py_ssize_t i
        for i in range(st.n_examples):
            self.max_levels = max(self.max_levels, st.n_loss_levels(i))
        nwork = max(st.workspace_size(), st.loss_indexed_workspace_size(), st.kbest_workspace_size(kmax), 1)
        bufs = dict(
            labels=np.zeros(capacity * self.Lmax, dtype=np.int32),
            work=np.zeros(nwork),
            sh=np.zeros(capacity), sg=np.zeros(capacity),
            li_m=np.zeros(max(self.max_levels, 1)),
            li_labels=np.zeros(max(self.max_levels, 1) * self.Lmax, dtype=np.int32),
            kb_values=np.zeros(kmax), kb_labels=np.zeros(kmax * self.Lmax, dtype=np.int32))
        self._keep = bufs
        cdef int[::1] iv
        cdef double[::1] dv
        iv = bufs["labels"]; self.labels = &iv[0]
        dv = bufs["work"]; self.work = &dv[0]
        dv = bufs["sh"]; self.slot_h = &dv[0]
        dv = bufs["sg"]; self.slot_g = &dv[0]
        dv = bufs["li_m"]; self.li_m = &dv[0]
        iv = bufs["li_labels"]; self.li_labels = &iv[0]
        dv = bufs["kb_values"]; self.kb_values = &dv[0]
        iv = bufs["kb_labels"]; self.kb_labels = &iv[0]
        self.scale = 1.0

    cdef void set_example(self, const double *w, double scale, Py_ssize_t i) noexcept nogil:
        self.w = w
        self.scale = scale
        self.i = i
        self.L = self.st.label_len(i)
        self.li_valid = 0
        self.unary_ok = 0
        self.n_calls = 0
        self.true_h = 0.0
        self.true_g = 0.0
        self.g_lo = 0.0
        self.n_levels = self.st.n_loss_levels(i)
        self.g_hi = self.st.level_loss(i, self.n_levels - 1) if self.n_levels > 0 else INFINITY
        self.g_min_pos = self.st.level_loss(i, 1) if self.n_levels > 1 else 0.0
        if self.microf1:
            # coordinates h = Hamming + m, g = -(|y| + |y_i|); no loss-indexed table applies
            self.n_levels = 0
            self.st.f1_counts(i, self.st.true_label(i), &self.true_g)
            self.true_g = -self.true_g
            self.g_hi = self.true_g / 2.0
            self.g_lo = self.g_hi - self.L
            self.g_min_pos = 0.0

    cdef const int* label(self, int slot) noexcept nogil:
        return self.st.true_label(self.i) if slot < 0 else self.labels + slot * self.Lmax

    cdef void load(self, int slot, const int *label) noexcept nogil:
        cdef int *dst = self.labels + slot * self.Lmax
        cdef double m
        memcpy(dst, label, self.L * sizeof(int))
        self.unary_ok = 0
        self.st.margins(self.w, self.i, dst, 1, &m, self.work, False)
        self.slot_h[slot] = self.scale * m
        self.slot_g[slot] = self.st.loss(self.i, dst)
        if self.microf1:
            self.slot_h[slot] += self.st.f1_counts(self.i, dst, &self.slot_g[slot])
            self.slot_g[slot] = -self.slot_g[slot]

    cdef void load_many(self, const int *labels, Py_ssize_t stride, int n) noexcept nogil:
        cdef int k
        if self.microf1 or self.L != self.Lmax:
            for k in range(n):
                self.load(k, labels + k * stride)
            return
        for k in range(n):
            memcpy(self.labels + k * self.Lmax, labels + k * stride, self.L * sizeof(int))
        self.unary_ok = 0
        self.st.margins(self.w, self.i, self.labels, n, self.slot_h, self.work, False)
        for k in range(n):
            self.slot_h[k] *= self.scale
            self.slot_g[k] = self.st.loss(self.i, self.labels + k * self.Lmax)

    cdef int query(self, int slot, double lam) noexcept nogil:
        cdef double m, d
        if self.microf1:
            self.st.oracle_f1(self.w, self.i, lam, self.labels + slot * self.Lmax, &self.slot_h[slot],
                              &self.slot_g[slot], self.work)
            self.n_calls += 1
            return 0
        if self.unary_ok:
            self.st.oracle_again(self.w, self.i, lam / self.scale, self.labels + slot * self.Lmax,
                                 &m, &d, self.work)
        else:
            self.st.oracle(self.w, self.i, lam / self.scale, self.labels + slot * self.Lmax, &m, &d,
                           self.work)
            self.unary_ok = 1
        self.slot_h[slot] = self.scale * m
        self.slot_g[slot] = d
        self.n_calls += 1
        return 0

    cdef int _table(self) noexcept nogil:
        if self.n_levels == 0:
            return -2
        if not self.li_valid:
            self.st.loss_indexed_oracle(self.w, self.i, self.li_m, self.li_labels, self.work)
            self.li_valid = 1
            self.unary_ok = 0
        return 0

    cdef int query_constrained(self, int slot, double lam, double alpha, double beta) noexcept nogil:
        # Over the best label of every loss level: psi is increasing in h, so the maximiser of psi
        # is the best-margin label of its level and the angular search stays exact on that set.
        cdef int l, best = -1, got
        cdef double m, g, v, best_v = 0.0
        if self.n_levels == 0 and not self.microf1:
            got = self.st.constrained_oracle(self.w, self.i, lam, alpha, beta, self.origin, self.scale,
                                             self.labels + slot * self.Lmax, self.work)
            if got <= 0:
                return got
            self.n_calls += 1
            self.unary_ok = 0
            self.st.margins(self.w, self.i, self.labels + slot * self.Lmax, 1, &m, self.work, False)
            self.slot_h[slot] = self.scale * m
            self.slot_g[slot] = self.st.loss(self.i, self.labels + slot * self.Lmax)
            return 1
        if self._table() < 0:
            return -2
        self.n_calls += 1
        for l in range(1, self.n_levels):     # level 0 is y_i, the search's fallback (psi = 0)
            if self.li_m[l] <= NEG_INF_M:
                continue
            m = self.scale * self.li_m[l]
            g = self.st.level_loss(self.i, l)
            if not cone_admits(m + self.origin, g, alpha, beta):
                continue
            v = m + lam * g
            if best < 0 or v > best_v:
                best, best_v = l, v
        if best < 0:
            return 0
        memcpy(self.labels + slot * self.Lmax, self.li_labels + best * self.L, self.L * sizeof(int))
        self.slot_h[slot] = self.scale * self.li_m[best]
        self.slot_g[slot] = self.st.level_loss(self.i, best)
        return 1

    cdef int query_exact(self, int slot, const Surrogate *s) noexcept nogil:
        cdef int l, best = 0
        cdef double v, best_v = 0.0
        if self.microf1:
            if s.kind != SURR_MICROF1:
                return -2
            self.st.exact_f1(self.w, self.i, self.labels + slot * self.Lmax, &self.slot_h[slot],
                             &self.slot_g[slot], self.work)
            self.n_calls += 1
            return 1
        if self._table() < 0:
            return -2
        self.n_calls += 1
        for l in range(self.n_levels):
            if self.li_m[l] <= NEG_INF_M:
                continue
            v = psi(s, self.scale * self.li_m[l], self.st.level_loss(self.i, l))
            if v > best_v:
                best, best_v = l, v
        memcpy(self.labels + slot * self.Lmax, self.li_labels + best * self.L, self.L * sizeof(int))
        self.slot_h[slot] = self.scale * self.li_m[best]
        self.slot_g[slot] = self.st.level_loss(self.i, best)
        return 1

    cdef int max_banned(self) noexcept nogil:
        return self.kmax - 1            # the k-best oracle's k is the bans + 1

    cdef int query_excluding(self, int slot, double lam, const int *banned, int n_banned) noexcept nogil:
        cdef int k = n_banned + 1, got, r, b, hit
        cdef const int *cand
        if k > self.kmax or self.microf1:
            return -2
        got = self.st.kbest(self.w, self.i, lam / self.scale, k, self.kb_labels, self.kb_values,
                            self.work)
        self.unary_ok = 0
        self.n_calls += 1
        for r in range(got):
            cand = self.kb_labels + r * self.L
            hit = 0
            for b in range(n_banned):
                if self.st.same_label(self.i, cand, self.label(banned[b])):
                    hit = 1
                    break
            if not hit:
                memcpy(self.labels + slot * self.Lmax, cand, self.L * sizeof(int))
                self.st.margins(self.w, self.i, self.labels + slot * self.Lmax, 1,
                                &self.slot_h[slot], self.work, False)
                self.slot_h[slot] *= self.scale
                self.slot_g[slot] = self.st.loss(self.i, cand)
                return 1
        return 0

    cdef bint same(self, int a, int b) noexcept nogil:
        if a == b:
            return True
        return self.st.same_label(self.i, self.label(a), self.label(b))

    cdef double angular_origin(self, const Surrogate *s, double c) noexcept nogil:
        # x = h + origin must be positive for every label that can beat psi = c: origin >=
        # -inf{h : psi(h, g) > c} over the attainable losses g (1 for slack rescaling, as in the paper).
        cdef double o = 1.0, g, hc
        cdef int l
        if s.kind == SURR_SLACK:
            return 1.0
        for l in range(1, self.n_levels):
            g = self.st.level_loss(self.i, l)
            if g <= 0:
                continue
            hc = h_at_level(s, g, c)
            if -hc + 1.0 > o:
                o = -hc + 1.0
        return o

    # Python access (tests, the benchmark's per-call comparison)
    def run(self, const double[::1] w, Py_ssize_t i, int kind, double alpha, double beta, int meth,
            double lam0=1.0, double ratio=1.0, int max_calls=50, double scale=1.0, warm=(), method="search"):
        """Run one search (surrogate kind/alpha/beta, search number) on example i; returns
        dict(value, h, g, labels, weights, n_calls). `warm`: labels known from an earlier search
        (the label cache / previous hull vertices); `method`: the search's name in messages.
        ssvmlinear.search.run_on_structure takes the names instead."""
        cdef Surrogate s
        s.kind, s.alpha, s.beta = kind, alpha, beta
        if (kind == SURR_MICROF1) != bool(self.microf1):
            raise ValueError("construct the StructureOracle with microf1=True for loss='microf1' "
                             "(and only then)")
        self.set_example(&w[0], scale, i)
        cdef int n_warm = 0
        cdef int[::1] lab_v
        for warm_label in warm:
            if n_warm >= self.capacity // 2:
                break
            lab_v = np.ascontiguousarray(warm_label, dtype=np.int32)
            if lab_v.shape[0] != self.L:
                raise ValueError(f"warm label of length {lab_v.shape[0]}, example {i} has {self.L}")
            self.load(n_warm, &lab_v[0])
            n_warm += 1
        cdef SearchResult r = run_search(self, &s, meth, lam0, ratio, max_calls, n_warm)
        self.st.check_implemented(f"search {method!r}")
        if r.error:
            raise ValueError(f"search {method!r} is not supported by {type(self.st).__name__}")
        labels, weights = [], []
        for slot, wt in ((r.slot1, r.weight1), (r.slot2, 1.0 - r.weight1)):
            if slot == -2 or (slot != r.slot1 and wt == 0.0):
                continue
            lab = self.label(slot)
            labels.append(np.array([lab[k] for k in range(self.L)], dtype=np.int32))
            weights.append(wt)
        return dict(value=r.value, h=r.h, g=r.g, labels=labels, weights=weights, n_calls=r.n_calls)


# ---------------------------------------------------------------------------------------------
# The searches

cdef inline void _result_point(SearchResult *r, LabelOracle o, const Surrogate *s, int slot) noexcept nogil:
    r.error = 0
    r.slot1 = slot
    r.slot2 = -2
    r.weight1 = 1.0
    r.h = o.true_h if slot < 0 else o.slot_h[slot]
    r.g = o.true_g if slot < 0 else o.slot_g[slot]
    r.value = psi(s, r.h, r.g) if slot >= 0 else 0.0


cdef inline int _take(LabelOracle o, const Surrogate *s, int slot, int best, double *best_v) noexcept nogil:
    cdef double v = psi(s, o.slot_h[slot], o.slot_g[slot])
    if v > best_v[0]:
        best_v[0] = v
        return slot
    return best


cdef SearchResult _search_none(LabelOracle o, const Surrogate *s, double lam0, int n_warm) noexcept nogil:
    cdef SearchResult r
    cdef double best_v = 0.0
    cdef int best = -1
    r.error = 0
    if o.query(n_warm, lam0) < 0:
        r.error = 1
        return r
    best = _take(o, s, n_warm, best, &best_v)
    _result_point(&r, o, s, best)
    return r


cdef SearchResult _search_exact(LabelOracle o, const Surrogate *s) noexcept nogil:
    cdef SearchResult r
    if o.query_exact(0, s) < 0:
        r.error = 1
        return r
    _result_point(&r, o, s, 0 if psi(s, o.slot_h[0], o.slot_g[0]) > 0 else -1)
    return r


cdef double _g_bound(LabelOracle o, int slot_for_query, int *used) noexcept nogil:
    """An upper bound of g over all labels: the oracle's own, or the lambda -> inf oracle's g."""
    if isfinite(o.g_hi):
        return o.g_hi
    if o.query(slot_for_query, LAM_MAX) < 0:
        return -1.0
    used[0] = 1
    return o.slot_g[slot_for_query] * (1.0 + 1e-12) + 1e-300


cdef double _start(LabelOracle o, const Surrogate *s, int n_warm, bint query_lam1, int *slot,
                   int *best, double *best_v) noexcept nogil:
    """Common start of the binary and bisecting searches: take the warm labels as incumbents,
    find an upper bound of g, and (query_lam1) ask the lambda = 1 oracle so that the answer is
    never worse than margin-rescaling inference. Returns the bound (< 0: the oracle failed)."""
    cdef int it, used = 0
    cdef double G
    slot[0] = n_warm
    for it in range(n_warm):
        best[0] = _take(o, s, it, best[0], best_v)
    G = _g_bound(o, slot[0], &used)
    if G < 0:
        return G
    if used:
        best[0] = _take(o, s, slot[0], best[0], best_v)
        slot[0] += 1
    if query_lam1:
        if o.query(slot[0], 1.0) < 0:
            return -1.0
        best[0] = _take(o, s, slot[0], best[0], best_v)
        slot[0] += 1
    return G


cdef SearchResult _search_binary(LabelOracle o, const Surrogate *s, double lam0, double ratio,
                                 int max_calls, int n_warm) noexcept nogil:
    # Minimise the upper bound B(lam) = max psi over {h + lam g <= L(lam), g in [g_lo, G]} of
    # max_y psi (for slack rescaling B is the thesis' F(lam) up to the substitution lam -> lam^2)
    # by golden section over log lam; return the best label the oracle revealed on the way.
    cdef SearchResult r
    cdef int slot = n_warm, best = -1
    cdef double best_v = 0.0, G
    G = _start(o, s, n_warm, True, &slot, &best, &best_v)
    if G < 0:
        r.error = 1
        return r
    _golden_section(o, s, log_(lam0) - 7.0, log_(lam0) + 7.0, False, G, 0.0, ratio, max_calls, slot, &best,
                    &best_v)
    if o.failed:
        r.error = 1
        return r
    _result_point(&r, o, s, best)
    return r


cdef void _golden_section(LabelOracle o, const Surrogate *s, double a, double b, bint sarawagi, double G,
                          double xi, double ratio, int max_calls, int slot, int *best, double *best_v) noexcept nogil:
    """Golden section over x = log lam in [a, b] on a search's convex bound of the best value
    (the binary search's B with the bound G of g; sarawagi: Sarawagi & Gupta's F with the slack
    xi), one lambda-oracle call per point, each answer a candidate; stops early when the bound
    certifies the best label found (B <= best / ratio; F <= 0: no label beats xi)."""
    cdef double x1, x2, f1, f2
    x1 = b - 0.6180339887498949 * (b - a)
    x2 = a + 0.6180339887498949 * (b - a)
    f1 = _bound_of(o, s, exp_(x1), sarawagi, G, xi, slot, best, best_v); slot += 1
    f2 = _bound_of(o, s, exp_(x2), sarawagi, G, xi, slot, best, best_v); slot += 1
    while b - a > 0.05 and o.n_calls < max_calls and slot < o.capacity and not o.failed:
        if (min_(f1, f2) <= 0.0) if sarawagi else (min_(f1, f2) * ratio <= best_v[0]):
            break
        if f1 > f2:
            a = x1
            x1, f1 = x2, f2
            x2 = a + 0.6180339887498949 * (b - a)
            f2 = _bound_of(o, s, exp_(x2), sarawagi, G, xi, slot, best, best_v)
        else:
            b = x2
            x2, f2 = x1, f1
            x1 = b - 0.6180339887498949 * (b - a)
            f1 = _bound_of(o, s, exp_(x1), sarawagi, G, xi, slot, best, best_v)
        slot += 1


cdef inline double _bound_of(LabelOracle o, const Surrogate *s, double lam, bint sarawagi, double G, double xi,
                             int slot, int *best, double *best_v) noexcept nogil:
    if sarawagi:
        return _sarawagi_bound(o, s, lam, xi, slot, best, best_v)
    return _bound_at(o, s, lam, G, slot, best, best_v)


cdef SearchResult _search_sarawagi(LabelOracle o, const Surrogate *s, int max_calls, int n_warm) noexcept nogil:
    # Sarawagi & Gupta (2008), as choi-thesis 4.2.1 states it, slack rescaling only: a label more
    # violated than the slack xi has 1 + h - xi / g > 0, and for every lam >= 0
    #     F(lam) = max_y (1 + h + lam g) - 2 sqrt(xi lam) >= max_{g > 0} 1 + h - xi / g
    # (equality at lam = xi / g^2). F is convex: golden section over log lam (the minimiser lies in
    # [xi / G^2, xi / g_min^2]); every answer is a candidate; F(lam) <= 0 proves that no label beats
    # xi. xi: the largest psi among the warm labels (a label cache: the slack an n-slack cutting
    # plane holds for the example), else the lambda = 1 oracle's (the solvers train surrogates
    # without caches: there xi is the margin-rescaling label's violation).
    cdef SearchResult r
    cdef int slot = n_warm, best = -1, used = 0, it
    cdef double best_v = 0.0, G, xi, gmin, a, b
    r.error = 0
    if s.kind != SURR_SLACK:
        r.error = 1
        return r
    for it in range(n_warm):
        best = _take(o, s, it, best, &best_v)
    if n_warm == 0:
        if o.query(slot, 1.0) < 0:
            r.error = 1
            return r
        best = _take(o, s, slot, best, &best_v)
        slot += 1
    xi = best_v
    G = _g_bound(o, slot, &used)
    if G < 0:
        r.error = 1
        return r
    if used:
        best = _take(o, s, slot, best, &best_v)
        slot += 1
    if xi <= 0.0 or G <= 0.0:         # no violation known: F falls towards lam = 0 (the plain score)
        a, b = log_(1e-6), log_(1e6)
    else:
        gmin = o.g_min_pos if o.g_min_pos > 0.0 else G * 1e-6
        a = log_(xi / (G * G)) - 1.0
        b = log_(xi / (gmin * gmin)) + 1.0
    _golden_section(o, s, a, b, True, G, xi, 1.0, max_calls, slot, &best, &best_v)
    if o.failed:
        r.error = 1
        return r
    _result_point(&r, o, s, best)
    return r


cdef double _sarawagi_bound(LabelOracle o, const Surrogate *s, double lam, double xi, int slot, int *best,
                            double *best_v) noexcept nogil:
    """F(lam) of the Sarawagi-Gupta search (one lambda-oracle call; its label is a candidate)."""
    if o.query(slot, lam) < 0:
        return INFINITY
    best[0] = _take(o, s, slot, best[0], best_v)
    return 1.0 + o.slot_h[slot] + lam * o.slot_g[slot] - 2.0 * sqrt(xi * lam)


cdef double _bound_at(LabelOracle o, const Surrogate *s, double lam, double G, int slot, int *best,
                      double *best_v) noexcept nogil:
    cdef double c, gg
    if o.query(slot, lam) < 0:
        return INFINITY
    best[0] = _take(o, s, slot, best[0], best_v)
    c = o.slot_h[slot] + lam * o.slot_g[slot]
    return line_max(s, c, lam, max_(o.g_lo, o.g_min_pos), G, &gg)


cdef SearchResult _search_bisecting(LabelOracle o, const Surrogate *s, double lam0, int max_calls,
                                    int n_warm) noexcept nogil:
    # Alg. 1: keep intervals H, G of the optimum's coordinates and L of lambda; each answer y'
    # cuts H and G to the chord between y' and the other crossing of its level curve with the
    # line through y', and L to the side of the line's psi-maximum on which the optimum lies.
    cdef SearchResult r
    cdef int slot = n_warm, best = -1
    cdef double best_v = 0.0, lam = lam0, Hlo = -INFINITY, Hhi = INFINITY
    cdef double Glo = o.g_lo, Ghi = o.g_hi, Llo = 0.0, Lhi = INFINITY
    cdef double h, g, c, gt, gz, hz, v, gmax
    gmax = _start(o, s, n_warm, lam0 != 1.0, &slot, &best, &best_v)
    if gmax < 0:
        r.error = 1
        return r
    while o.n_calls < max_calls and slot < o.capacity:
        if o.query(slot, lam) < 0:
            break
        h, g = o.slot_h[slot], o.slot_g[slot]
        best = _take(o, s, slot, best, &best_v)
        slot += 1
        c = h + lam * g
        v = psi(s, h, g)
        if line_max(s, c, lam, max_(o.g_lo, o.g_min_pos), gmax, &gt) <= best_v * (1.0 + 1e-12):
            break                     # this line's bound certifies the incumbent (Appendix D)
        if v > 0:
            gz = level_cross(s, c, lam, gt, gmax if g <= gt else o.g_lo, v)
            hz = c - lam * gz
            Hlo, Hhi = max_(Hlo, min_(h, hz)), min_(Hhi, max_(h, hz))
            Glo, Ghi = max_(Glo, min_(g, gz)), min_(Ghi, max_(g, gz))
            if Hlo > Hhi + 1e-12 * (1 + fabs(Hhi)) or Glo > Ghi + 1e-12 * (1 + fabs(Ghi)):
                break
        if g <= gt:
            Llo = lam
        else:
            Lhi = lam
        if isfinite(Lhi) and Lhi - Llo <= 1e-3 * Lhi:
            break
        lam = 0.5 * (Llo + Lhi) if isfinite(Lhi) else 2.0 * max_(lam, Llo)
    if o.failed:
        r.error = 1
        return r
    _result_point(&r, o, s, best)
    return r


cdef SearchResult _search_angular(LabelOracle o, const Surrogate *s, double lam0, double ratio,
                                  int max_calls, int n_warm) noexcept nogil:
    # Alg. 2: cones {alpha x > g >= beta x} of the (x = h + origin, g) quadrant in a priority queue
    # by their upper bound of psi; each constrained query in a cone returns y, whose line bounds
    # the cone, and the part of the cone that can still beat psi(y) (between the rays through y
    # and through the other crossing of y's level curve with that line) is split at the line's
    # psi-maximum. Warm labels (the label cache) only raise the incumbent.
    cdef SearchResult r
    cdef int cap = 2 * max_calls + 2, n = 0, j, k, slot = n_warm, best = -1, got
    cdef double best_v = 0.0, lam, alpha, beta, bound, x, h, g, c, gr, vr, gz, ky, kr, kz, mdir
    cdef double glo_c, ghi_c, o0, v
    cdef double ca[258]
    cdef double cb[258]
    cdef double cu[258]
    if cap > 258:
        cap = 258
    for j in range(n_warm):
        best = _take(o, s, j, best, &best_v)
    if best_v <= 0 and (s.kind == SURR_PROBLOSS or s.kind == SURR_PROBLOSS_CONVEX or
                        s.kind == SURR_LOGLOSS):
        # psi > 0 for every label with g > 0: the origin needs a positive incumbent
        if o.query(slot, lam0) < 0:
            r.error = 1
            return r
        best = _take(o, s, slot, best, &best_v)
        slot += 1
        if best_v <= 0:               # the answer was y_i: the label of largest loss has psi > 0
            if o.query(slot, LAM_MAX) < 0:
                r.error = 1
                return r
            best = _take(o, s, slot, best, &best_v)
            slot += 1
        if best_v <= 0:
            _result_point(&r, o, s, best)
            return r
    o0 = o.angular_origin(s, best_v)
    o.origin = o0
    ca[0], cb[0], cu[0] = INFINITY, 0.0, INFINITY
    n = 1
    while n > 0 and o.n_calls < max_calls and slot < o.capacity:
        k = 0
        for j in range(1, n):
            if cu[j] > cu[k]:
                k = j
        alpha, beta, bound = ca[k], cb[k], cu[k]
        n -= 1
        ca[k], cb[k], cu[k] = ca[n], cb[n], cu[n]
        if best_v > 0 and best_v >= ratio * bound:
            break                       # no cone can beat the incumbent (by the ratio)
        if bound <= best_v:
            continue
        if isfinite(alpha) and beta > 0:
            mdir = sqrt(alpha * beta)
        elif isfinite(alpha):
            mdir = 0.5 * alpha
        elif beta > 0:
            mdir = 2.0 * beta
        else:
            mdir = 1.0 / lam0
        lam = 1.0 / mdir if mdir > 0 else LAM_MAX
        got = o.query_constrained(slot, lam, alpha, beta)
        if got < 0:
            r.error = 1
            return r
        if got == 0:
            continue
        h, g = o.slot_h[slot], o.slot_g[slot]
        best = _take(o, s, slot, best, &best_v)
        slot += 1
        x = h + o0
        v = psi(s, h, g)
        c = x + lam * g                     # the line x + lam g = c bounds the cone
        # g-range of the cone on that line: the ray of slope k meets it at g = k c / (1 + lam k)
        glo_c = max_(beta * c / (1.0 + lam * beta), o.g_min_pos)
        ghi_c = alpha * c / (1.0 + lam * alpha) if isfinite(alpha) else c / lam
        if glo_c > ghi_c:
            continue                    # no attainable loss inside this cone
        vr = line_max(s, c - o0, lam, glo_c, ghi_c, &gr)
        if vr <= best_v or (best_v > 0 and best_v >= ratio * vr):
            continue
        gz = level_cross(s, c - o0, lam, gr, ghi_c if g <= gr else glo_c, v) if v > 0 else \
            (ghi_c if g <= gr else glo_c)
        ky = g / x
        kr = gr / (c - lam * gr) if c - lam * gr > 0 else INFINITY
        kz = gz / (c - lam * gz) if c - lam * gz > 0 else INFINITY
        if n + 2 > cap:
            break
        # the ray through y is excluded by nudging the bound that passes through it (labels further
        # out on that ray would have beaten y in the query)
        if ky >= kr:
            ca[n], cb[n] = ky * (1.0 - 1e-12), kr     # (g/x) x may round above g: nudge too
        else:
            ca[n], cb[n] = kr, ky * (1.0 + 1e-12) + 1e-300
        cu[n] = vr
        n += 1
        ca[n], cb[n] = max_(kr, kz), min_(kr, kz)
        cu[n] = vr
        n += 1
    if o.failed:
        r.error = 1
        return r
    _result_point(&r, o, s, best)
    return r


cdef int _chain(LabelOracle o, const int *pts, int n, int *chain) noexcept nogil:
    """Upper-right hull chain (the points some lambda in [0, inf] maximises), ordered by
    increasing g; pts are slots (-1 = y_i). Returns its length."""
    cdef int a, b, i, j, m = 0, start, tmp
    cdef int order[256]
    cdef double hi, gi, ha, ga, hb, gb, cross
    for i in range(n):
        order[i] = pts[i]
    # insertion sort by g ascending, ties by h descending
    for i in range(1, n):
        tmp = order[i]
        j = i - 1
        while j >= 0 and (_pg(o, order[j]) > _pg(o, tmp) or
                          (_pg(o, order[j]) == _pg(o, tmp) and _ph(o, order[j]) < _ph(o, tmp))):
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = tmp
    # Andrew's monotone chain, upper hull in the (g, h) plane
    for i in range(n):
        if m > 0 and _pg(o, chain[m - 1]) == _pg(o, order[i]):
            continue                       # same g, lower h: never on the chain
        while m >= 2:
            ha, ga = _ph(o, chain[m - 2]), _pg(o, chain[m - 2])
            hb, gb = _ph(o, chain[m - 1]), _pg(o, chain[m - 1])
            hi, gi = _ph(o, order[i]), _pg(o, order[i])
            cross = (gb - ga) * (hi - ha) - (hb - ha) * (gi - ga)
            if cross >= 0:
                m -= 1                     # chain[m-1] is on or below the segment
            else:
                break
        chain[m] = order[i]
        m += 1
    # keep the part from the highest h on (lambda >= 0)
    start = 0
    for i in range(1, m):
        if _ph(o, chain[i]) >= _ph(o, chain[start]):
            start = i
    for i in range(start, m):
        chain[i - start] = chain[i]
    return m - start


cdef inline double _ph(LabelOracle o, int slot) noexcept nogil:
    return o.true_h if slot < 0 else o.slot_h[slot]


cdef inline double _pg(LabelOracle o, int slot) noexcept nogil:
    return o.true_g if slot < 0 else o.slot_g[slot]


cdef SearchResult _search_hull(LabelOracle o, const Surrogate *s, int *pts, int n, int *next_slot,
                               int max_calls, const int *banned, int n_banned, double lam0) noexcept nogil:
    # Alg. 4: the best point p* of psi on the chain of the labels found so far (a vertex or a
    # point of an edge next to the best vertex, GetMaxFract); query the lambda of the line that
    # touches psi's level curve at p* (the edge's own line when p* is inside an edge). No label
    # above that line means p* is optimal over the convex hull of all labels; otherwise the
    # answer is a new vertex. pts[0:n] are the known points (slots; -1 = y_i); new labels go to
    # slots next_slot, next_slot + 1, ...; on return next_slot is one past the last slot written
    # (slots beyond it may hold another example's labels).
    cdef SearchResult r
    cdef int chain[256]
    cdef int m, j, t, slot = next_slot[0], got, e1, e2, certify, tried_lam0 = 0, written = next_slot[0]
    cdef double v, bv, tt, lam, ha, ga, hb, gb, hp, gp, dh, dg, Lp, glo_b, gb_arg
    cdef double bound = INFINITY
    cdef bint yi_in = False
    for j in range(n):
        if pts[j] == -1:
            yi_in = True
    r.error = 0
    r.weight1 = 1.0
    while True:
        m = _chain(o, pts, n, chain)
        t = 0
        bv = psi(s, _ph(o, chain[0]), _pg(o, chain[0])) if chain[0] >= 0 else 0.0
        for j in range(1, m):
            v = psi(s, _ph(o, chain[j]), _pg(o, chain[j]))
            if v > bv:
                bv, t = v, j
        e1, e2 = chain[t], -2
        r.weight1 = 1.0
        hp, gp = _ph(o, chain[t]), _pg(o, chain[t])
        for j in range(t - 1, t + 1):
            if j < 0 or j + 1 >= m:
                continue
            ha, ga = _ph(o, chain[j]), _pg(o, chain[j])
            hb, gb = _ph(o, chain[j + 1]), _pg(o, chain[j + 1])
            v = seg_max(s, ha, ga, hb, gb, &tt)
            if v > bv and 0.0 < tt < 1.0:
                bv = v
                e1, e2 = chain[j], chain[j + 1]
                hp, gp = ha + tt * (hb - ha), ga + tt * (gb - ga)
                r.weight1 = 1.0 - tt
        if bound <= bv * (1.0 + 1e-12) + 1e-300:
            break                      # the last query's line certifies p* (Appendix D's bound)
        if e2 != -2:
            lam = (_ph(o, e1) - _ph(o, e2)) / (_pg(o, e2) - _pg(o, e1))
        else:
            dh = psi_dh(s, hp, gp)
            dg = psi_dg(s, hp, gp)
            lam = dg / dh if dh > 0 else LAM_MAX
        if not lam >= 0.0:
            lam = 0.0
        if lam > LAM_MAX:
            lam = LAM_MAX
        certify = 1
        if n == 1 and not tried_lam0:
            # only y_i is known (no warm start): first ask the lam0 oracle (its answer is a vertex
            # but certifies nothing), then follow Alg. 4 from there
            lam = lam0
            tried_lam0 = 1
            certify = 0
        if o.n_calls >= max_calls or slot >= o.capacity or n >= 255:
            break
        if n_banned > 0:
            got = o.query_excluding(slot, lam, banned, n_banned)
            if got < 0:
                r.error = 1
                break
            if got == 0:
                break
        elif o.query(slot, lam) < 0:
            r.error = 1
            break
        written = slot + 1
        Lp = hp + lam * gp
        # every label lies on or below this query's line: psi's maximum over the part of that
        # half-plane with attainable losses bounds the optimum
        # (convex combinations with y_i reach g between 0 and the smallest positive loss)
        glo_b = o.g_lo if yi_in else max_(o.g_lo, o.g_min_pos)
        if isfinite(o.g_hi) and glo_b <= o.g_hi:
            bound = min_(bound, line_max(s, o.slot_h[slot] + lam * o.slot_g[slot], lam, glo_b,
                                         o.g_hi, &gb_arg))
        if o.slot_h[slot] + lam * o.slot_g[slot] <= Lp + 1e-12 * (1.0 + fabs(Lp)):
            if certify:
                break                  # nothing above the line: p* is optimal
            continue                   # y_i answered the lam0 query
        got = 0
        for j in range(n):
            if o.same(pts[j], slot):
                got = 1
                break
        if got:
            break                      # a known label (numerical tie)
        pts[n] = slot
        n += 1
        slot += 1
    next_slot[0] = written
    if e2 == -2:
        _result_point(&r, o, s, e1)
    else:
        r.slot1, r.slot2 = e1, e2
        r.h, r.g, r.value = hp, gp, bv
    return r


cdef SearchResult _search_hull_integral(LabelOracle o, const Surrogate *s, int *pts, int n,
                                        int max_calls, double lam0) noexcept nogil:
    # thesis 5.3.3: while the hull optimum is fractional and beats every integral label found,
    # ban the two labels of its edge and search again over the remaining labels (k-best oracle).
    cdef SearchResult r, best
    cdef int banned[130]
    cdef int n_banned = 0, rounds, j, k, next_slot = 0, keep, yi_banned = 0
    cdef double best_v = 0.0, v
    for j in range(n):
        if pts[j] >= next_slot:
            next_slot = pts[j] + 1
    _result_point(&best, o, s, -1)
    best.error = 0
    for rounds in range(64):
        r = _search_hull(o, s, pts, n, &next_slot, max_calls, banned, n_banned, lam0)
        if r.error:
            return r
        for j in range(min_i(next_slot, o.capacity)):   # every label seen is a candidate
            v = psi(s, o.slot_h[j], o.slot_g[j])
            if v > best_v:
                best_v = v
                _result_point(&best, o, s, j)
        # (the ban list's bounds: its array, the label slots and what the oracle can ban)
        if (r.slot2 == -2 or r.value <= best_v or n_banned + 2 > min_i(128, o.max_banned())
                or n_banned + 2 >= o.capacity or o.n_calls >= max_calls):
            break
        for j in range(2):
            k = r.slot1 if j == 0 else r.slot2
            if k >= 0 or not yi_banned:
                # y_i too: an edge to the zero-loss true label is a mixture no integral
                # violator comes close to (it would take many rounds to ban its way out), and y_i
                # stays the fallback answer anyway
                banned[n_banned] = k
                n_banned += 1
                if k < 0:
                    yi_banned = 1
        # known labels that are not banned seed the next round
        n = 0
        if not yi_banned:
            pts[0] = -1
            n = 1
        for j in range(min_i(next_slot, o.capacity)):
            keep = 1
            for k in range(n_banned):
                if o.same(j, banned[k]):
                    keep = 0
                    break
            if keep and n < 255:
                pts[n] = j
                n += 1
        if n == 0:                     # nothing known outside the ban list: ask for a label
            if next_slot >= o.capacity:
                break
            k = o.query_excluding(next_slot, lam0, banned, n_banned)
            if k <= 0:
                break
            pts[0] = next_slot
            n = 1
            next_slot += 1
    return best


cdef SearchResult run_search(LabelOracle o, const Surrogate *s, int method, double lam0,
                             double ratio, int max_calls, int n_warm) noexcept nogil:
    """Run one search. Slots 0..n_warm-1 hold labels whose (h, g) are loaded (the warm start /
    label cache); the search uses the slots after them."""
    cdef SearchResult r
    cdef int pts[256]
    cdef int j, next_slot
    r.error = 0
    o.failed = 0
    o.n_calls = 0
    if s.kind == SURR_MARGIN:
        method = SEARCH_NONE          # the lambda = 1 oracle is exact for margin rescaling (on any structure)
    if method == SEARCH_NONE:
        r = _search_none(o, s, lam0 if s.kind != SURR_MARGIN else 1.0, n_warm)
    elif method == SEARCH_EXACT:
        r = _search_exact(o, s)
    elif method == SEARCH_BINARY:
        r = _search_binary(o, s, lam0, ratio, max_calls, n_warm)
    elif method == SEARCH_BISECTING:
        r = _search_bisecting(o, s, lam0, max_calls, n_warm)
    elif method == SEARCH_ANGULAR:
        r = _search_angular(o, s, lam0, ratio, max_calls, n_warm)
    elif method == SEARCH_SARAWAGI:
        r = _search_sarawagi(o, s, max_calls, n_warm)
    else:
        pts[0] = -1
        for j in range(min_i(n_warm, 255)):
            pts[j + 1] = j
        next_slot = n_warm
        if method == SEARCH_HULL:
            r = _search_hull(o, s, pts, min_i(n_warm, 255) + 1, &next_slot, max_calls, NULL, 0, lam0)
        else:
            r = _search_hull_integral(o, s, pts, min_i(n_warm, 255) + 1, max_calls, lam0)
    if o.failed:
        r.error = 1
    r.n_calls = o.n_calls
    return r


cdef inline double max_(double a, double b) noexcept nogil:
    return a if a >= b else b


cdef inline double min_(double a, double b) noexcept nogil:
    return a if a <= b else b


cdef inline int min_i(int a, int b) noexcept nogil:
    return a if a <= b else b



# ---------------------------------------------------------------------------------------------
# Python-driven searches (ssvmlinear.search.maximize)

cdef class PyOracle(LabelOracle):
    """Oracle backed by Python callables: oracle(lam) -> (h, g, label) and, for the angular
    search, constrained(lam, alpha, beta) -> (h, g, label) or None, with the constraint
    alpha (h + 1) > g >= beta (h + 1) (alpha = inf: h + 1 > 0)."""
    cdef object oracle_fn, constrained_fn, error
    cdef list slot_labels
    cdef object _keep

    def __init__(self, oracle, constrained=None, int capacity=256, double g_lo=0.0,
                 double g_hi=INFINITY):
        self.oracle_fn = oracle
        self.constrained_fn = constrained
        self.capacity = capacity
        self.slot_labels = [None] * capacity
        self._keep = (np.zeros(capacity), np.zeros(capacity))
        cdef double[::1] a = self._keep[0]
        cdef double[::1] b = self._keep[1]
        self.slot_h = &a[0]
        self.slot_g = &b[0]
        self.g_lo, self.g_hi = g_lo, g_hi
        self.origin = 1.0
        self.error = None

    cdef int _store(self, int slot, object res) noexcept with gil:
        try:
            h, g, label = res
            self.slot_h[slot] = float(h)
            self.slot_g[slot] = float(g)
            self.slot_labels[slot] = label
            return 0
        except BaseException as e:
            self.error = e
            self.failed = 1
            return -1

    cdef int query(self, int slot, double lam) noexcept nogil:
        with gil:
            self.n_calls += 1
            try:
                res = self.oracle_fn(lam)
            except BaseException as e:
                self.error = e
                self.failed = 1
                return -1
            return self._store(slot, res)

    cdef int query_constrained(self, int slot, double lam, double alpha, double beta) noexcept nogil:
        with gil:
            if self.constrained_fn is None:
                return -2
            self.n_calls += 1
            try:
                res = self.constrained_fn(lam, alpha, beta)
            except BaseException as e:
                self.error = e
                self.failed = 1
                return -1
            if res is None:
                return 0
            return 1 if self._store(slot, res) == 0 else -1

    cdef bint same(self, int a, int b) noexcept nogil:
        if a == b:
            return True
        if a < 0 or b < 0:
            return False
        with gil:
            x, y = self.slot_labels[a], self.slot_labels[b]
            try:
                return bool(np.array_equal(np.asarray(x), np.asarray(y)))
            except Exception:
                return x == y

    def run(self, int kind, double alpha, double beta, int method, double lam0, double ratio,
            int max_calls):
        cdef Surrogate s
        s.kind, s.alpha, s.beta = kind, alpha, beta
        cdef SearchResult r = run_search(self, &s, method, lam0, ratio, max_calls, 0)
        if self.error is not None:
            raise self.error
        if r.error:
            raise ValueError("this search needs an oracle the caller did not provide")
        out = []
        for slot, wt in ((r.slot1, r.weight1), (r.slot2, 1.0 - r.weight1)):
            if slot == -2:
                continue
            out.append((None if slot < 0 else self.slot_labels[slot], wt))
        return r.value, r.h, r.g, out, r.n_calls
