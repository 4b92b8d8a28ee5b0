# cython: language_level=3
"""The pairwise multi-label model with relaxed labels (marginals), as LP relaxations return them."""
from libc.math cimport fabs, INFINITY
from libc.string cimport memcpy, memmove

import numpy as np

from ssvmlinear._kernels.dataset cimport CSRDataset, Row, row_dot, row_axpy, row_gemv
from ssvmlinear._kernels.factor cimport (FactorTree, tree_maxsum, tree_maxsum_workspace, tree_maxsum_by_count,
                                         tree_count_workspace, tree_kbest, tree_kbest_workspace,
                                         MARGINAL_ONE, marginal, binary_pair_marginals,
                                         unary_update_marginals, table_update_marginals)
from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.pairwise_multilabel cimport PairwiseMultiLabelStructure
from ssvmlinear._kernels.maxflow cimport flow_lp
from ssvmlinear._kernels.maxflow import flow_topology


cdef inline bint outside(double nH, double nG, double b, const double *z) noexcept nogil:
    """Whether z = (H, G) violates nH H + nG G >= b by more than rounding (1e-10 relative)."""
    return nH * z[0] + nG * z[1] - b < -1e-10 * (1.0 + fabs(b) + fabs(nH * z[0]) + fabs(nG * z[1]))


cdef class RelaxedPairwiseMultiLabelStructure(PairwiseMultiLabelStructure):
    """The pairwise multi-label model on a forest with relaxed labels (relaxed_multilabel.pxd): a label is
    K + E ints, P(y_k = 1) for each label then P(y_a = 1, y_b = 1) for each edge, in units of
    MARGINAL_ONE (encode() / decode()). Trained by every solver like the integral structure; the
    oracles' answers are integral (the forest's max-product), the loss, scores, Gram and updates
    take any marginals.

    RelaxedPairwiseMultiLabelStructure(X, Y, edges, normalize_loss=False, lp=None): with lp (any
    graph of label pairs, e.g. all of them) the lambda-oracle is the LP relaxation over the local
    polytope, lp(c) -> the marginals x (K + E) maximising c . x (ssvmlinear.multilabel.PairwiseLP:
    by max-flow in the kernel, without the GIL, when lp.method is "maxflow", else through lp,
    holding the GIL), and its fractional answers are the relaxed labels the solvers train
    on; without lp the edges must form a forest and the oracles are its max-product."""

    def __init__(self, CSRDataset X, Y, edges, bint normalize_loss=False, lp=None):
        PairwiseMultiLabelStructure.__init__(self, X, Y, edges, normalize_loss, lp is None)
        self.lp = lp
        self.use_flow = getattr(lp, "method", "highs") == "maxflow"
        if self.use_flow:
            self.arc_head, self.adj_ptr, self.adj_arc = flow_topology(self.n_labels, np.asarray(self.edges).reshape(-1, 2))
        cdef Py_ssize_t i, L = self.n_labels + self.n_edges
        self.max_label_len = L
        self.offers_microf1 = False     # Micro-F1's coordinates count integral labels
        ym = np.zeros(max(self.n_examples * L, 1), dtype=np.int32)
        cdef int[::1] yv = ym
        for i in range(self.n_examples):
            yv[i * L:i * L + self.n_labels] = self.y[i * self.n_labels:(i + 1) * self.n_labels]
            self._encode(&yv[i * L])
        self.y_marg = ym

    @property
    def convex_labels(self):
        """Whether the labels form a convex set (the LP relaxation's local polytope): then the
        points (m, Delta) of the labels are convex too, and the hull search is exact over them."""
        return self.lp is not None

    @property
    def description(self):
        return ("the LP relaxation of pairwise labels on a graph with cycles (edges='full')"
                if self.lp is not None else type(self).__name__)

    def __reduce__(self):
        Y = np.asarray(self.y).reshape(self.n_examples, self.n_labels)
        return (RelaxedPairwiseMultiLabelStructure,
                (self.X, Y, np.asarray(self.edges).reshape(-1, 2), self.normalize_loss, self.lp))

    def encode(self, label_marginals, pair_marginals=None):
        """The relaxed label of P(y_k = 1) (K) and P(y_a = 1, y_b = 1) per edge (E); a 0/1 vector
        of K states alone gives the integral label."""
        K, E = self.n_labels, self.n_edges
        mu = np.asarray(label_marginals, dtype=np.float64).reshape(K)
        if pair_marginals is None:
            e = np.asarray(self.edges).reshape(-1, 2)
            pair = mu[e[:, 0]] * mu[e[:, 1]] if np.all((mu == 0) | (mu == 1)) else None
            if pair is None:
                raise ValueError("fractional label marginals need the pair marginals")
        else:
            pair = np.asarray(pair_marginals, dtype=np.float64).reshape(E)
        return np.rint(np.concatenate([mu, pair]) * MARGINAL_ONE).astype(np.int32)

    def decode(self, label):
        """(P(y_k = 1) per label (K), the 2 x 2 marginal table [y_a, y_b] per edge (E x 2 x 2))."""
        cdef int[::1] y = np.ascontiguousarray(label, dtype=np.int32)
        tables = np.zeros((self.n_edges, 4))
        cdef double[:, ::1] tv = tables
        cdef Py_ssize_t e
        for e in range(self.n_edges):
            self._edge_marginals(&y[0], e, &tv[e, 0])
        return np.asarray(y[:self.n_labels]) / MARGINAL_ONE, tables.reshape(self.n_edges, 2, 2)

    cdef void _encode(self, int *y) noexcept nogil:
        """K states in y[0:K] -> the integral label's marginals in y[0:K+E]."""
        cdef Py_ssize_t k, e, K = self.n_labels
        for e in range(self.n_edges):
            y[K + e] = MARGINAL_ONE if (y[self.edges[2 * e]] and y[self.edges[2 * e + 1]]) else 0
        for k in range(K):
            y[k] = MARGINAL_ONE if y[k] else 0

    cdef void _encode_many(self, int *labels, int n) noexcept nogil:
        """n labels of K states back to back -> n encoded labels of K + E ints back to back."""
        cdef Py_ssize_t K = self.n_labels, L = K + self.n_edges
        cdef int j
        for j in range(n - 1, -1, -1):   # label j moves up: the labels below it are not yet read
            memmove(labels + j * L, labels + j * K, K * sizeof(int))
            self._encode(labels + j * L)

    cdef void _edge_marginals(self, const int *y, Py_ssize_t e, double *mu) noexcept nogil:
        binary_pair_marginals(marginal(y[self.edges[2 * e]]), marginal(y[self.edges[2 * e + 1]]),
                              marginal(y[self.n_labels + e]), mu)

    cdef Py_ssize_t label_len(self, Py_ssize_t i) noexcept nogil:
        return self.n_labels + self.n_edges

    cdef const int* true_label(self, Py_ssize_t i) noexcept nogil:
        return &self.y_marg[i * (self.n_labels + self.n_edges)]

    cdef double loss(self, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t k
        cdef const int *yi = self._states(i)
        cdef double d = 0.0, mu
        for k in range(self.n_labels):
            mu = marginal(y[k])
            d += 1.0 - mu if yi[k] else mu
        return d * self._loss_weight()

    cdef double score(self, const double *w, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t k, e, s, K = self.n_labels
        cdef Row r = self.X.row(i)
        cdef const double *P = w + self.pair_off
        cdef double f = 0.0
        cdef double mu[4]
        for k in range(K):
            if y[k] != 0:
                f += marginal(y[k]) * row_dot(r, w, K, k)
        for e in range(self.n_edges):
            self._edge_marginals(y, e, mu)
            for s in range(4):
                f += mu[s] * P[4 * e + s]
        return f

    cdef double _dphi_edges(self, Py_ssize_t i, const double *w, const int *y) noexcept nogil:
        """The pairwise part of f(y) - f(y_i)."""
        cdef Py_ssize_t e, s, u
        cdef const int *yi = self._states(i)
        cdef const double *P = w + self.pair_off
        cdef double m = 0.0
        cdef double mu[4]
        for e in range(self.n_edges):
            self._edge_marginals(y, e, mu)
            u = 2 * yi[self.edges[2 * e]] + yi[self.edges[2 * e + 1]]
            for s in range(4):
                m += (mu[s] - (1.0 if s == u else 0.0)) * P[4 * e + s]
        return m

    cdef void margins(self, const double *w, Py_ssize_t i, const int *labels, int n, double *out,
                      double *work, bint after_oracle) noexcept nogil:
        cdef Py_ssize_t k, K = self.n_labels, L = K + self.n_edges
        cdef const int *yi = self._states(i)
        cdef const int *y
        cdef int j
        cdef double m
        if not after_oracle:
            row_gemv(self.X.row(i), w, K, work)
        for j in range(n):
            y = labels + j * L
            m = self._dphi_edges(i, w, y)
            for k in range(K):
                m += (marginal(y[k]) - yi[k]) * work[k]
            out[j] = m

    cdef double gram(self, Py_ssize_t i, const int *a, const int *b) noexcept nogil:
        cdef Py_ssize_t k, e, s, u
        cdef const int *yi = self._states(i)
        cdef double g = 0.0, t, du
        cdef double ma[4]
        cdef double mb[4]
        for k in range(self.n_labels):
            g += (yi[k] - marginal(a[k])) * (yi[k] - marginal(b[k]))
        g *= self.X.sqnorm(i)
        for e in range(self.n_edges):
            self._edge_marginals(a, e, ma)
            self._edge_marginals(b, e, mb)
            u = 2 * yi[self.edges[2 * e]] + yi[self.edges[2 * e + 1]]
            for s in range(4):
                du = 1.0 if s == u else 0.0
                g += (du - ma[s]) * (du - mb[s])
        return g

    cdef void gram_row(self, Py_ssize_t i, const int *a, const int *labels, int n, double *out,
                       double *work) noexcept nogil:
        cdef int j
        cdef Py_ssize_t L = self.n_labels + self.n_edges
        for j in range(n):
            out[j] = self.gram(i, a, labels + j * L)

    cdef void update(self, double *w, Py_ssize_t i, double coef, const int *y) noexcept nogil:
        cdef Py_ssize_t k, e, K = self.n_labels
        cdef const int *yi = self._states(i)
        cdef Row r = self.X.row(i)
        cdef double mu[4]
        for k in range(K):
            mu[0] = marginal(y[k])
            unary_update_marginals(r, w, K, k, mu, 1, 0 if yi[k] else -1, coef)
        for e in range(self.n_edges):
            self._edge_marginals(y, e, mu)
            table_update_marginals(w + self.pair_off + 4 * e, mu, 4,
                                   2 * yi[self.edges[2 * e]] + yi[self.edges[2 * e + 1]], coef)

    cdef double oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out,
                       double *m_out, double *delta_out, double *work) noexcept nogil:
        cdef double v
        if self.lp is None:
            v = PairwiseMultiLabelStructure.oracle(self, w, i, lam, y_out, m_out, delta_out, work)
            self._encode(y_out)
            return v
        self._lp_oracle(w, i, lam, y_out, work)
        self.margins(w, i, y_out, 1, m_out, work, True)
        delta_out[0] = self.loss(i, y_out)
        return m_out[0] + lam * delta_out[0]

    cdef void _lp_objective(self, const double *w, Py_ssize_t i, double lam, double *c, double *work) noexcept nogil:
        """c[0:K+E]: f + lam * Hamming written in the LP's variables P(y_k = 1), P(y_a = y_b = 1),
        up to a constant (a table's four marginals are linear in its pair's three variables).
        work[0:K]: the unary scores (margins() reuses them)."""
        cdef Py_ssize_t k, e, a, b, K = self.n_labels, E = self.n_edges
        cdef const int *yi = self._states(i)
        cdef const double *P = w + self.pair_off
        cdef double la = lam * self._loss_weight()
        row_gemv(self.X.row(i), w, K, work)
        for k in range(K):
            c[k] = work[k] + (-la if yi[k] else la)
        for e in range(E):
            a = self.edges[2 * e]
            b = self.edges[2 * e + 1]
            c[a] += P[4 * e + 2] - P[4 * e]
            c[b] += P[4 * e + 1] - P[4 * e]
            c[K + e] = P[4 * e] - P[4 * e + 1] - P[4 * e + 2] + P[4 * e + 3]

    cdef void _lp_oracle(self, const double *w, Py_ssize_t i, double lam, int *y_out, double *work) noexcept nogil:
        """The LP relaxation over the local polytope: by max-flow in the kernel (lp.method
        "maxflow"), else by lp (HiGHS; holds the GIL)."""
        cdef Py_ssize_t k, K = self.n_labels, E = self.n_edges
        cdef double *c = work + K
        cdef double *x = c + K + E
        cdef double v
        self._lp_objective(w, i, lam, c, work)
        if self.use_flow:
            flow_lp(K, E, &self.edges[0], c, &self.arc_head[0], &self.adj_ptr[0], &self.adj_arc[0], x,
                     x + K + E)
            for k in range(K + E):
                y_out[k] = <int> (x[k] * MARGINAL_ONE + 0.5)
            return
        with gil:
            try:
                xs = np.asarray(self.lp(np.asarray(<double[:K + E]> c)), dtype=np.float64)
                for k in range(K + E):
                    v = min(max(float(xs[k]), 0.0), 1.0)
                    y_out[k] = <int> (v * MARGINAL_ONE + 0.5)
            except Exception:
                self.n_lp_failures += 1      # no answer: y_i itself
                for k in range(K + E):
                    y_out[k] = self.true_label(i)[k]

    cdef int constrained_oracle(self, const double *w, Py_ssize_t i, double lam, double alpha, double beta,
                                double origin, double scale, int *y_out, double *work) noexcept nogil:
        """The LP of _lp_oracle with the cone's two rows: h = scale m and g = Delta are linear in
        the LP's variables (m = c_f . x + const - f(y_i), g = c_g . x + const), so the cone
        alpha (h + origin) > g >= beta (h + origin) adds two linear inequalities (the strict one
        by a margin of 1e-9 relative; alpha = inf: h + origin > 0 instead). By max-flow in the
        kernel (_flow_constrained), else by HiGHS (holds the GIL)."""
        cdef Py_ssize_t k, e, K = self.n_labels, E = self.n_edges
        cdef const int *yi = self._states(i)
        cdef const double *P = w + self.pair_off
        cdef double *cf = work + K
        cdef double lw = self._loss_weight(), const_f = 0.0, const_g = 0.0, v
        if self.lp is None:
            return -2
        self._lp_objective(w, i, 0.0, cf, work)
        for e in range(E):
            const_f += P[4 * e]
        for k in range(K):
            const_g += lw * yi[k]
        if self.use_flow:
            return self._flow_constrained(i, scale * (const_f - self.score(w, i, self.true_label(i))) + origin,
                                          const_g, lam, alpha, beta, scale, y_out, work)
        with gil:
            try:
                f_true = self.score(w, i, self.true_label(i))
                cfv = np.array(<double[:K + E]> cf)
                cg = np.zeros(K + E)
                for k in range(K):
                    cg[k] = lw * (1.0 - 2.0 * yi[k])
                h0 = scale * (const_f - f_true) + origin       # h + origin = scale cf.x + h0
                rows, lbs = [], []
                if alpha != float("inf"):                      # alpha (h + origin) - g >= eps
                    rows.append(alpha * scale * cfv - cg)
                    lbs.append(const_g - alpha * h0 + 1e-9 * (1.0 + abs(const_g) + abs(alpha * h0)))
                else:                                          # h + origin >= eps
                    rows.append(scale * cfv)
                    lbs.append(-h0 + 1e-9 * (1.0 + abs(h0)))
                rows.append(cg - beta * scale * cfv)           # g - beta (h + origin) >= 0
                lbs.append(beta * h0 - const_g)
                x = self.lp.constrained(scale * cfv + lam * cg, np.array(rows), np.array(lbs))
                if x is None:
                    return 0
                x = np.asarray(x, dtype=np.float64)
                for k in range(K + E):
                    v = min(max(float(x[k]), 0.0), 1.0)
                    y_out[k] = <int> (v * MARGINAL_ONE + 0.5)
                return 1
            except Exception:
                self.n_lp_failures += 1
                return 0

    # The constrained LP by max-flow. Objective and cone read x only through z = (H, G) =
    # (scale m + origin, Delta), linear in x, so they live in the plane: the local polytope's image
    # there is a convex polygon Q whose support points (argmax of u . z) are one max-flow each.
    # The optimum over Q cut by the cone's half-planes is Q's own maximiser when that is in the
    # cone, else it lies on the line of a half-plane that maximiser violates: on that line, Q's
    # chord (found by walking Q's boundary with support queries, as the convex hull search
    # does) clipped by the other half-plane, at one of the clipped chord's ends. Its x is the
    # convex combination of the chord ends' x, a point of the local polytope.

    cdef void _flow_support(self, double uH, double uG, double h0, double g0, double scale, double *x,
                            double *z, double *work) noexcept nogil:
        """x = argmax over the local polytope of uH H + uG G; z = (H, G) of x. work: as in
        _flow_constrained (cf at work + K, cg after it, then the LP objective, then the flow's)."""
        cdef Py_ssize_t k, K = self.n_labels, E = self.n_edges
        cdef const double *cf = work + K
        cdef const double *cg = cf + K + E
        cdef double *c = work + 2 * K + K + E      # then 8 vectors x, then the flow's
        cdef double H = 0.0, G = 0.0
        for k in range(K):
            c[k] = uH * scale * cf[k] + uG * cg[k]
        for k in range(K, K + E):
            c[k] = uH * scale * cf[k]
        flow_lp(K, E, &self.edges[0], c, &self.arc_head[0], &self.adj_ptr[0], &self.adj_arc[0], x,
                 c + (K + E) * 9)
        for k in range(K + E):
            H += cf[k] * x[k]
        for k in range(K):
            G += cg[k] * x[k]
        z[0] = scale * H + h0
        z[1] = G + g0

    cdef bint _flow_chord(self, double nH, double nG, double b, double h0, double g0, double scale,
                          double *x_lo, double *z_lo, double *x_hi, double *z_hi, double *work) noexcept nogil:
        """The chord of Q on the line nH H + nG G = b: its ends along r = (-nG, nH) (lowest, highest
        r . z) with their x; False when the line misses Q."""
        cdef Py_ssize_t L = self.n_labels + self.n_edges, k, step, end
        cdef double *xp = work + 2 * self.n_labels + 2 * L      # after cf, cg, the LP objective
        cdef double *xm = xp + L
        cdef double *xa = xm + L
        cdef double *xb = xa + L
        cdef double *xq = xb + L
        cdef double *tmp
        cdef double zp[2]
        cdef double zm[2]
        cdef double za[2]
        cdef double zb[2]
        cdef double zq[2]
        cdef double sp, sm, sa, sb, sq, uH, uG, theta, sigma, tol, tol_u
        cdef double *x_out
        cdef double *z_out
        self._flow_support(nH, nG, h0, g0, scale, xp, zp, work)
        sp = nH * zp[0] + nG * zp[1] - b
        tol = 1e-10 * (1.0 + fabs(b) + fabs(nH * zp[0]) + fabs(nG * zp[1]))
        if sp < -tol:
            return False
        self._flow_support(-nH, -nG, h0, g0, scale, xm, zm, work)
        sm = nH * zm[0] + nG * zm[1] - b
        if sm > tol:
            return False
        for end in range(2):            # the highest end, then the lowest
            sigma = 1.0 - 2.0 * end
            x_out = x_hi if end == 0 else x_lo
            z_out = z_hi if end == 0 else z_lo
            if sp - sm <= tol:          # Q lies on the line: its ends along r
                self._flow_support(-sigma * nG, sigma * nH, h0, g0, scale, x_out, z_out, work)
                continue
            memcpy(xa, xp, L * sizeof(double))
            memcpy(xb, xm, L * sizeof(double))
            za[0], za[1], sa, zb[0], zb[1], sb = zp[0], zp[1], sp, zm[0], zm[1], sm
            for step in range(64):      # a guard: each step finds a new vertex of Q
                uH, uG = za[1] - zb[1], zb[0] - za[0]       # normal of the segment ab, along sigma r
                if sigma * (-uH * nG + uG * nH) < 0.0:
                    uH, uG = -uH, -uG
                self._flow_support(uH, uG, h0, g0, scale, xq, zq, work)
                tol_u = 1e-10 * (1.0 + fabs(uH * za[0]) + fabs(uG * za[1]))
                if uH * zq[0] + uG * zq[1] <= uH * za[0] + uG * za[1] + tol_u:
                    break               # ab is an edge of Q
                sq = nH * zq[0] + nG * zq[1] - b
                if sq >= 0.0:
                    tmp = xa
                    xa = xq
                    xq = tmp
                    za[0], za[1], sa = zq[0], zq[1], sq
                else:
                    tmp = xb
                    xb = xq
                    xq = tmp
                    zb[0], zb[1], sb = zq[0], zq[1], sq
            theta = sa / (sa - sb) if sa - sb > 0.0 else 0.0
            theta = min(max(theta, 0.0), 1.0)
            for k in range(L):
                x_out[k] = xa[k] + theta * (xb[k] - xa[k])
            z_out[0] = za[0] + theta * (zb[0] - za[0])
            z_out[1] = za[1] + theta * (zb[1] - za[1])
        return True

    cdef int _flow_constrained(self, Py_ssize_t i, double h0, double g0, double lam, double alpha, double beta,
                               double scale, int *y_out, double *work) noexcept nogil:
        """constrained_oracle by max-flow (see above): H = scale cf . x + h0, G = cg . x + g0, cf at
        work + K (written by _lp_objective). Returns 1 (y_out written) or 0 (the cone misses Q).
        work: cf, cg (K), the LP objective, 8 vectors x, then the flow's (workspace_size)."""
        cdef Py_ssize_t K = self.n_labels, E = self.n_edges, L = K + E, k, j, cand
        cdef const int *yi = self._states(i)
        cdef double lw = self._loss_weight()
        cdef double *cg = work + K + L
        cdef double *xbest = work + 2 * K + 7 * L
        cdef double *x_lo = xbest + L
        cdef double *x_hi = x_lo + L
        cdef double zb[2]
        cdef double z_lo[2]
        cdef double z_hi[2]
        cdef double z[2]
        cdef double nH[2]           # the cone's half-planes nH H + nG G >= b
        cdef double nG[2]
        cdef double b[2]
        cdef double best = -INFINITY, v, theta, s_lo, s_hi
        for k in range(K):
            cg[k] = lw * (1.0 - 2.0 * yi[k])
        if alpha != INFINITY:           # alpha H - G >= margin (the strict ray)
            nH[0], nG[0], b[0] = alpha, -1.0, 1e-9 * (1.0 + fabs(g0) + fabs(alpha * h0))
        else:                           # H >= margin (the initial right angle's H > 0)
            nH[0], nG[0], b[0] = 1.0, 0.0, 1e-9 * (1.0 + fabs(h0))
        nH[1], nG[1], b[1] = -beta, 1.0, 0.0      # G - beta H >= 0
        self._flow_support(1.0, lam, h0, g0, scale, xbest, zb, work)
        if not (outside(nH[0], nG[0], b[0], zb) or outside(nH[1], nG[1], b[1], zb)):
            best = zb[0] + lam * zb[1]  # Q's maximiser is in the cone
        else:
            for j in range(2):          # the optimum is on the line of a half-plane zb violates
                if not outside(nH[j], nG[j], b[j], zb):
                    continue
                if not self._flow_chord(nH[j], nG[j], b[j], h0, g0, scale, x_lo, z_lo, x_hi, z_hi, work):
                    continue
                for cand in range(3):   # the chord's ends, and where the other line crosses it
                    if cand < 2:
                        theta = cand
                    else:
                        s_lo = nH[1 - j] * z_lo[0] + nG[1 - j] * z_lo[1] - b[1 - j]
                        s_hi = nH[1 - j] * z_hi[0] + nG[1 - j] * z_hi[1] - b[1 - j]
                        if (s_lo < 0.0) == (s_hi < 0.0):
                            break
                        theta = s_lo / (s_lo - s_hi)
                    z[0] = z_lo[0] + theta * (z_hi[0] - z_lo[0])
                    z[1] = z_lo[1] + theta * (z_hi[1] - z_lo[1])
                    v = z[0] + lam * z[1]
                    if v > best and not (outside(nH[0], nG[0], b[0], z) or outside(nH[1], nG[1], b[1], z)):
                        best = v
                        for k in range(L):
                            xbest[k] = x_lo[k] + theta * (x_hi[k] - x_lo[k])
        if best == -INFINITY:
            return 0
        for k in range(L):
            v = min(max(xbest[k], 0.0), 1.0)
            y_out[k] = <int> (v * MARGINAL_ONE + 0.5)
        return 1

    cdef int n_loss_levels(self, Py_ssize_t i) noexcept nogil:
        return 0 if self.lp is not None else PairwiseMultiLabelStructure.n_loss_levels(self, i)

    cdef Py_ssize_t workspace_size(self) noexcept nogil:
        cdef Py_ssize_t a = PairwiseMultiLabelStructure.workspace_size(self)
        # the LP oracles': unary scores, cf, cg, objective, 8 vectors x (the constrained oracle's),
        # then the flow's capacities and node arrays
        cdef Py_ssize_t b = 2 * self.n_labels + 10 * (self.n_labels + self.n_edges) \
            + 2 * (4 * self.n_labels + 4 * self.n_edges) + 3 * (2 * self.n_labels + 2)
        return a if a > b else b

    cdef void loss_indexed_oracle(self, const double *w, Py_ssize_t i, double *best_m, int *labels,
                                  double *work) noexcept nogil:
        PairwiseMultiLabelStructure.loss_indexed_oracle(self, w, i, best_m, labels, work)
        self._encode_many(labels, <int> self.n_labels + 1)

    cdef int kbest(self, const double *w, Py_ssize_t i, double lam, int kb, int *labels_out,
                   double *values_out, double *work) noexcept nogil:
        if self.lp is not None:
            return Structure.kbest(self, w, i, lam, kb, labels_out, values_out, work)   # none: raises
        cdef int got = PairwiseMultiLabelStructure.kbest(self, w, i, lam, kb, labels_out, values_out, work)
        self._encode_many(labels_out, got)
        return got
