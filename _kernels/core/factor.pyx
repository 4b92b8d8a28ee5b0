# cython: language_level=3
"""Max-product on tree-structured factor graphs (factor.pxd): the lambda-oracle (tree_maxsum), the
oracle by mismatch count (tree_maxsum_by_count, the loss-indexed oracle of Hamming-type losses)
and k-best (tree_kbest). Messages go from children to parents in the tree's order; a path with
square row-major tables takes the SSE2 max-plus step of inner_loops.h, so on a chain these are
Viterbi, the loss-indexed DP and list Viterbi."""
import numpy as np

cdef extern from "inner_loops.h" nogil:
    void ssvm_maxplus_step(const double *prev, const double *tr, double *cur, double *arg, Py_ssize_t K)

cdef double NEG_INF = -1e300


cdef inline Py_ssize_t _ints(Py_ssize_t n) noexcept nogil:
    """Doubles that hold n ints."""
    return (n + 1) // 2


cdef Py_ssize_t _max_card(const FactorTree *t) noexcept nogil:
    cdef Py_ssize_t v, k = 0
    if t.card == NULL:
        return t.n_card
    for v in range(t.n_vars):
        if t.card[v] > k:
            k = t.card[v]
    return k


cdef Py_ssize_t tree_n_states(const FactorTree *t) noexcept nogil:
    if t.card == NULL:
        return t.n_vars * t.n_card
    return t.off[t.n_vars - 1] + t.card[t.n_vars - 1] if t.n_vars > 0 else 0


cdef double tree_score(const FactorTree *t, const double *unary, const int *y) noexcept nogil:
    cdef Py_ssize_t v, p
    cdef double f = 0.0
    for v in range(t.n_vars):
        f += unary[tree_off(t, v) + y[v]]
        p = tree_parent(t, v)
        if p >= 0:
            f += tree_pair(t, v, y[v], y[p])
    return f


cdef void tree_add_hamming(const FactorTree *t, double *B, const int *truth, double a,
                           const double *weight) noexcept nogil:
    cdef Py_ssize_t v, k, o
    cdef double av
    if a == 0.0:
        return
    for v in range(t.n_vars):
        o = tree_off(t, v)
        av = a if weight == NULL else a * weight[v]
        for k in range(tree_card(t, v)):
            if k != truth[v]:
                B[o + k] += av


cdef inline void _message(const FactorTree *t, Py_ssize_t v, Py_ssize_t p, const double *Bv,
                          double *msg, double *arg) noexcept nogil:
    """msg[b] = max_a Bv[a] + table_v(a, b) for every state b of the parent, arg[b] = the lowest
    maximising a."""
    cdef Py_ssize_t Kv = tree_card(t, v), Kp = tree_card(t, p), cs = tree_cs(t, v), ps = tree_ps(t, v)
    cdef const double *T = tree_table(t, v)
    cdef Py_ssize_t a, b, best_a
    cdef double best, val
    if Kv == Kp and cs == Kp and ps == 1:
        ssvm_maxplus_step(Bv, T, msg, arg, Kv)
        return
    for b in range(Kp):
        best = Bv[0] + T[b * ps]
        best_a = 0
        for a in range(1, Kv):
            val = Bv[a] + T[a * cs + b * ps]
            if val > best:
                best = val
                best_a = a
        msg[b] = best
        arg[b] = best_a


cdef Py_ssize_t tree_maxsum_workspace(Py_ssize_t n_vars, Py_ssize_t max_card) noexcept nogil:
    return (n_vars + 1) * max_card


cdef double tree_maxsum(const FactorTree *t, double *B, int *y, double *work) noexcept nogil:
    # work: the argmax of every child for each state of its parent (n_vars x max_card), a message
    cdef Py_ssize_t j, v, p, b, k, n = t.n_vars, K = _max_card(t)
    cdef double *msg = work + n * K
    cdef double *Bv
    cdef double best, total = 0.0
    for j in range(n):
        v = tree_order(t, j)
        p = tree_parent(t, v)
        if p < 0:
            continue
        _message(t, v, p, B + tree_off(t, v), msg, work + v * K)
        Bv = B + tree_off(t, p)
        for b in range(tree_card(t, p)):
            Bv[b] += msg[b]
    for j in range(n - 1, -1, -1):        # parents before children
        v = tree_order(t, j)
        p = tree_parent(t, v)
        if p >= 0:
            y[v] = <int> work[v * K + y[p]]
            continue
        Bv = B + tree_off(t, v)
        best = Bv[0]
        y[v] = 0
        for k in range(1, tree_card(t, v)):
            if Bv[k] > best:
                best = Bv[k]
                y[v] = <int> k
        total += best
    return total


cdef int* _children(const FactorTree *t, int *first, int *kids) noexcept nogil:
    """Children of every variable in merge order (their order in t.order): kids[first[v]:first[v+1]]."""
    cdef Py_ssize_t j, v, p, n = t.n_vars
    for v in range(n + 1):
        first[v] = 0
    for v in range(n):
        p = tree_parent(t, v)
        if p >= 0:
            first[p + 1] += 1
    for v in range(n):
        first[v + 1] += first[v]
    for j in range(n):
        v = tree_order(t, j)
        p = tree_parent(t, v)
        if p >= 0:
            kids[first[p]] = <int> v
            first[p] += 1
    for v in range(n, 0, -1):          # first[p] now points past p's children: shift back
        first[v] = first[v - 1]
    first[0] = 0
    return kids


cdef Py_ssize_t tree_count_workspace(Py_ssize_t n_vars, Py_ssize_t max_card) noexcept nogil:
    cdef Py_ssize_t L = n_vars + 1, S = n_vars * max_card
    return (S * L                      # A: best per (state, count)
            + 2 * _ints(S * L)         # argK, split per (child, parent state, count)
            + max_card * L + L         # M, conv
            + 2 * _ints(n_vars * L)    # roots: split, state
            + L                        # accumulated roots
            + _ints(4 * n_vars + 2))   # sizes, children lists, count per variable


cdef void tree_maxsum_by_count(const FactorTree *t, const double *B, const int *truth, double *best,
                               int *labels, double *work) noexcept nogil:
    cdef Py_ssize_t n = t.n_vars, L = n + 1, K = _max_card(t), S = tree_n_states(t)
    cdef Py_ssize_t j, v, p, k, kc, kp, l, lc, lp, Kv, Kp, ov, op, rem, idx, cs, ps
    cdef double *A = work                                   # A[(off(v)+k)*L + l]
    cdef int *argK = <int *> (A + S * L)                    # [(v*K + kp)*L + lc]
    cdef int *split = <int *> (A + S * L + _ints(n * K * L))
    cdef double *M = A + S * L + 2 * _ints(n * K * L)        # [kp*L + lc]
    cdef double *conv = M + K * L
    cdef int *rsplit = <int *> (conv + L)                    # [r*L + l]
    cdef int *rstate = <int *> (conv + L + _ints(n * L))
    cdef double *acc = conv + L + 2 * _ints(n * L)
    cdef int *size = <int *> (acc + L)
    cdef int *first = size + n
    cdef int *kids = first + n + 1
    cdef int *lv = kids + n
    cdef const double *T
    cdef double a, val, bestv
    cdef int e, acc_size = 0, barg
    for v in range(n):
        ov = tree_off(t, v)
        for k in range(tree_card(t, v)):
            e = 1 if k != truth[v] else 0
            for l in range(L):
                A[(ov + k) * L + l] = NEG_INF
            A[(ov + k) * L + e] = B[ov + k]
        size[v] = 1
    _children(t, first, kids)
    for j in range(n):
        v = tree_order(t, j)
        p = tree_parent(t, v)
        if p < 0:
            continue
        Kv = tree_card(t, v)
        Kp = tree_card(t, p)
        ov = tree_off(t, v)
        op = tree_off(t, p)
        T = tree_table(t, v)
        cs = tree_cs(t, v)
        ps = tree_ps(t, v)
        # M[kp][lc] = max over the child's states of its best with lc mismatches + table
        for kp in range(Kp):
            for lc in range(size[v] + 1):
                bestv = NEG_INF
                barg = 0
                for kc in range(Kv):
                    a = A[(ov + kc) * L + lc]
                    if a <= NEG_INF:
                        continue
                    val = a + T[kc * cs + kp * ps]
                    if val > bestv:
                        bestv = val
                        barg = <int> kc
                M[kp * L + lc] = bestv
                argK[(v * K + kp) * L + lc] = barg
        # A_p[kp] (+) M[kp]: max-plus convolution over the counts
        for kp in range(Kp):
            for l in range(size[p] + size[v] + 1):
                conv[l] = NEG_INF
                split[(v * K + kp) * L + l] = 0
            for lp in range(size[p] + 1):
                a = A[(op + kp) * L + lp]
                if a <= NEG_INF:
                    continue
                for lc in range(size[v] + 1):
                    if M[kp * L + lc] <= NEG_INF:
                        continue
                    val = a + M[kp * L + lc]
                    if val > conv[lp + lc]:
                        conv[lp + lc] = val
                        split[(v * K + kp) * L + lp + lc] = <int> lc
            for l in range(size[p] + size[v] + 1):
                A[(op + kp) * L + l] = conv[l]
        size[p] += size[v]
    # the roots, combined in their order in the tree
    for l in range(L):
        acc[l] = NEG_INF
    acc[0] = 0.0
    for j in range(n):
        v = tree_order(t, j)
        if tree_parent(t, v) >= 0:
            continue
        ov = tree_off(t, v)
        for l in range(size[v] + 1):          # M[l] = the root's best with l mismatches
            M[l] = NEG_INF
            rstate[v * L + l] = 0
            for k in range(tree_card(t, v)):
                if A[(ov + k) * L + l] > M[l]:
                    M[l] = A[(ov + k) * L + l]
                    rstate[v * L + l] = <int> k
        for l in range(acc_size + size[v] + 1):
            conv[l] = NEG_INF
            rsplit[v * L + l] = 0
        for lp in range(acc_size + 1):
            if acc[lp] <= NEG_INF:
                continue
            for lc in range(size[v] + 1):
                if M[lc] <= NEG_INF:
                    continue
                val = acc[lp] + M[lc]
                if val > conv[lp + lc]:
                    conv[lp + lc] = val
                    rsplit[v * L + lp + lc] = <int> lc
        acc_size += size[v]
        for l in range(acc_size + 1):
            acc[l] = conv[l]
    for l in range(L):
        best[l] = acc[l]
        if acc[l] <= NEG_INF:
            for v in range(n):
                labels[l * n + v] = -1
            continue
        rem = l
        for j in range(n - 1, -1, -1):
            v = tree_order(t, j)
            if tree_parent(t, v) >= 0:
                continue
            lc = rsplit[v * L + rem]
            labels[l * n + v] = rstate[v * L + lc]
            lv[v] = <int> lc
            rem -= lc
        for j in range(n - 1, -1, -1):        # parents before children: unwind the merges
            v = tree_order(t, j)
            k = labels[l * n + v]
            rem = lv[v]
            for idx in range(first[v + 1] - 1, first[v] - 1, -1):
                p = kids[idx]                    # a child of v
                lc = split[(p * K + k) * L + rem]
                labels[l * n + p] = argK[(p * K + k) * L + lc]
                lv[p] = <int> lc
                rem -= lc


cdef Py_ssize_t tree_kbest_workspace(Py_ssize_t n_vars, Py_ssize_t max_card, int kb) noexcept nogil:
    cdef Py_ssize_t S = n_vars * max_card, m = kb if kb > 0 else 1
    return (S * m + _ints(S)               # lists and their lengths
            + 3 * _ints(S * m)             # per (child, parent state, rank): child state, rank, own rank
            + 3 * _ints(n_vars * m)        # per (root, rank): previous rank, state, rank
            + 2 * m + m                    # merged list, accumulated roots
            + 2 * _ints(m) + _ints(max_card if max_card > m else m)  # merge indices, pointers
            + _ints(4 * n_vars + 2))       # children lists, rank per variable


cdef int _merge_heads(const double *vals, const int *cnt, int *ptr, Py_ssize_t n_lists, Py_ssize_t stride,
                      const double *add, Py_ssize_t add_stride, double *best_out) noexcept nogil:
    """The list (among n_lists sorted lists vals[q*stride:], cnt[q] entries, next unread at ptr[q])
    whose head plus add[q * add_stride] (add NULL: plus nothing) is largest (ties: lowest q); -1
    when all are exhausted."""
    cdef Py_ssize_t q
    cdef int bq = -1
    cdef double val, best = NEG_INF
    for q in range(n_lists):
        if ptr[q] < cnt[q]:
            val = vals[q * stride + ptr[q]] + (add[q * add_stride] if add != NULL else 0.0)
            if bq < 0 or val > best:
                best = val
                bq = <int> q
    best_out[0] = best
    return bq


cdef int _sum_lists(const double *a, int na, const double *b, int nb, int kb, double *out, int *ia,
                    int *ib, int *ptr) noexcept nogil:
    """The kb largest a[i] + b[j] of two sorted lists, in decreasing order (ties: lowest i), with
    their (i, j); returns how many."""
    cdef int i, got = 0, bi
    cdef double val, best
    for i in range(na):
        ptr[i] = 0
    while got < kb:
        bi = -1
        best = NEG_INF
        for i in range(na):
            if ptr[i] < nb:
                val = a[i] + b[ptr[i]]
                if bi < 0 or val > best:
                    best = val
                    bi = i
        if bi < 0:
            break
        out[got] = best
        ia[got] = bi
        ib[got] = ptr[bi]
        ptr[bi] += 1
        got += 1
    return got


cdef int tree_kbest(const FactorTree *t, const double *B, int kb, int *labels, double *values,
                    double *work) noexcept nogil:
    cdef Py_ssize_t n = t.n_vars, K = _max_card(t), S = tree_n_states(t)
    cdef Py_ssize_t j, v, p, k, kp, idx, Kv, Kp, ov, op, r, cs, ps
    cdef const double *T
    cdef double *Lval = work                                          # [(off(v)+k)*kb + r]
    cdef int *cnt = <int *> (Lval + S * kb)                           # [off(v)+k]
    cdef int *ck = <int *> (Lval + S * kb + _ints(S))                 # [(c*K + kp)*kb + r]
    cdef int *cr = <int *> (Lval + S * kb + _ints(S) + _ints(n * K * kb))
    cdef int *ci = <int *> (Lval + S * kb + _ints(S) + 2 * _ints(n * K * kb))
    cdef double *base = Lval + S * kb + _ints(S) + 3 * _ints(n * K * kb)
    cdef int *rp = <int *> base                                        # [r*kb + rank]
    cdef int *rk = <int *> (base + _ints(n * kb))
    cdef int *ri = <int *> (base + 2 * _ints(n * kb))
    cdef double *msg = base + 3 * _ints(n * kb)                        # kb
    cdef double *tmp = msg + kb                                        # kb
    cdef double *acc = tmp + kb                                        # kb
    cdef int *mi = <int *> (acc + kb)
    cdef int *mj = <int *> (acc + kb + _ints(kb))
    cdef int *ptr = <int *> (acc + kb + 2 * _ints(kb))
    cdef int *first = <int *> (acc + kb + 2 * _ints(kb) + _ints(K if K > kb else kb))
    cdef int *kids = first + n + 1
    cdef int *rank = kids + n
    cdef int got, q, bq, n_acc, rr, i, nm
    cdef double val
    if kb <= 0 or n == 0:
        return 0
    for v in range(n):
        ov = tree_off(t, v)
        for k in range(tree_card(t, v)):
            Lval[(ov + k) * kb] = B[ov + k]
            cnt[ov + k] = 1
    _children(t, first, kids)
    for j in range(n):
        v = tree_order(t, j)
        p = tree_parent(t, v)
        if p < 0:
            continue
        Kv = tree_card(t, v)
        Kp = tree_card(t, p)
        ov = tree_off(t, v)
        op = tree_off(t, p)
        T = tree_table(t, v)
        cs = tree_cs(t, v)
        ps = tree_ps(t, v)
        for kp in range(Kp):
            # the message: the kb best (child state, child rank) for this parent state; its
            # entries' child states and ranks go straight to ck / cr of this (child, kp) and are
            # then permuted by the merge with the parent's list
            for q in range(Kv):
                ptr[q] = 0
            nm = 0
            while nm < kb:
                bq = _merge_heads(Lval + ov * kb, cnt + ov, ptr, Kv, kb, T + kp * ps, cs, &val)
                if bq < 0:
                    break
                msg[nm] = val
                tmp[nm] = bq              # child state (exact in a double)
                mi[nm] = ptr[bq]          # child rank
                ptr[bq] += 1
                nm += 1
            for q in range(nm):           # keep (state, rank) of each message entry
                rk[q] = <int> tmp[q]      # rk/ri are free until the roots are combined
                ri[q] = mi[q]
            got = _sum_lists(Lval + (op + kp) * kb, cnt[op + kp], msg, nm, kb, tmp, mi, mj, ptr)
            idx = (v * K + kp) * kb
            for r in range(got):
                ci[idx + r] = mi[r]
                ck[idx + r] = rk[mj[r]]
                cr[idx + r] = ri[mj[r]]
                Lval[(op + kp) * kb + r] = tmp[r]
            cnt[op + kp] = got
    # the roots: each root's kb best over its states, combined with the roots before it
    acc[0] = 0.0
    n_acc = 1
    for j in range(n):
        v = tree_order(t, j)
        if tree_parent(t, v) >= 0:
            continue
        Kv = tree_card(t, v)
        ov = tree_off(t, v)
        for q in range(Kv):
            ptr[q] = 0
        nm = 0
        while nm < kb:
            bq = _merge_heads(Lval + ov * kb, cnt + ov, ptr, Kv, kb, NULL, 0, &val)
            if bq < 0:
                break
            msg[nm] = val
            rk[v * kb + nm] = bq
            ri[v * kb + nm] = ptr[bq]
            ptr[bq] += 1
            nm += 1
        got = _sum_lists(acc, n_acc, msg, nm, kb, tmp, mi, mj, ptr)
        for r in range(got):
            rp[v * kb + r] = mi[r]
            acc[r] = tmp[r]
            # the root's (state, rank) of this combined entry: reorder by mj after the loop
            mi[r] = mj[r]
        # (state, rank) of the root for combined rank r = entry mj[r] of its own list
        for r in range(nm):
            tmp[r] = rk[v * kb + r] * 1.0
            msg[r] = ri[v * kb + r] * 1.0
        for r in range(got):
            rk[v * kb + r] = <int> tmp[mi[r]]
            ri[v * kb + r] = <int> msg[mi[r]]
        n_acc = got
    for q in range(n_acc):
        values[q] = acc[q]
        rr = q
        for j in range(n - 1, -1, -1):
            v = tree_order(t, j)
            if tree_parent(t, v) >= 0:
                continue
            labels[q * n + v] = rk[v * kb + rr]
            rank[v] = ri[v * kb + rr]
            rr = rp[v * kb + rr]
        for j in range(n - 1, -1, -1):        # parents before children: unwind the merges
            v = tree_order(t, j)
            k = labels[q * n + v]
            i = rank[v]
            for idx in range(first[v + 1] - 1, first[v] - 1, -1):
                p = kids[idx]
                r = (p * K + k) * kb + i
                labels[q * n + p] = ck[r]
                rank[p] = cr[r]
                i = ci[r]
    return n_acc


# ---------------------------------------------------------------------- Python entry points
# (tests, and callers without a Structure)

cdef class PyTree:
    """A FactorTree over numpy arrays: parent[v] (-1 for roots), card[v], tables[v] (card[v] x
    card[parent[v]], state of v first; None for roots)."""
    cdef FactorTree t
    cdef int[::1] card_, order_, parent_
    cdef Py_ssize_t[::1] off_, tab_off_, cs_, ps_
    cdef double[::1] tables_
    cdef readonly Py_ssize_t n_vars, n_states, max_card

    def __init__(self, parent, card, tables):
        parent = np.ascontiguousarray(parent, dtype=np.int32)
        card = np.ascontiguousarray(card, dtype=np.int32)
        n = parent.shape[0]
        order = post_order(parent)
        self.card_, self.order_, self.parent_ = card, order, parent
        off = np.zeros(n, dtype=np.intp)
        off[1:] = np.cumsum(card)[:-1]
        self.off_ = off
        flat, tab_off = [np.zeros(1)], np.zeros(n, dtype=np.intp)
        pos = 1
        for v in range(n):
            if parent[v] >= 0:
                tb = np.ascontiguousarray(tables[v], dtype=np.float64)
                assert tb.shape == (card[v], card[parent[v]])
                tab_off[v] = pos
                flat.append(tb.ravel())
                pos += tb.size
        self.tables_ = np.concatenate(flat)
        self.tab_off_ = tab_off
        self.cs_ = np.array([card[parent[v]] if parent[v] >= 0 else 0 for v in range(n)], dtype=np.intp)
        self.ps_ = np.ones(n, dtype=np.intp)
        self.t.n_vars = n
        self.t.n_card = 0
        self.t.card = &self.card_[0]
        self.t.off = &self.off_[0]
        self.t.order = &self.order_[0]
        self.t.parent = &self.parent_[0]
        self.t.tables = &self.tables_[0]
        self.t.tab_off = &self.tab_off_[0]
        self.t.cs = &self.cs_[0]
        self.t.ps = &self.ps_[0]
        self.n_vars = n
        self.n_states = int(card.sum())
        self.max_card = int(card.max())

    def score(self, const double[::1] unary, const int[::1] y):
        return tree_score(&self.t, &unary[0], &y[0])

    def maxsum(self, unary, truth=None, double a=0.0):
        """(y, value) of argmax sum_v unary_v(y_v) + a [y_v != truth_v] + pairwise."""
        cdef double[::1] B = np.array(unary, dtype=np.float64)
        cdef int[::1] tr
        if truth is not None:
            tr = np.ascontiguousarray(truth, dtype=np.int32)
            tree_add_hamming(&self.t, &B[0], &tr[0], a, NULL)
        y = np.zeros(self.n_vars, dtype=np.int32)
        cdef int[::1] yv = y
        cdef double[::1] work = np.zeros(tree_maxsum_workspace(self.n_vars, self.max_card))
        v = tree_maxsum(&self.t, &B[0], &yv[0], &work[0])
        return y, v

    def maxsum_by_count(self, unary, truth):
        """(best, labels): best[l], labels[l] for l = 0..n_vars mismatches against truth."""
        cdef double[::1] B = np.array(unary, dtype=np.float64)
        cdef int[::1] tr = np.ascontiguousarray(truth, dtype=np.int32)
        best = np.zeros(self.n_vars + 1)
        labels = np.zeros((self.n_vars + 1) * self.n_vars, dtype=np.int32)
        cdef double[::1] bv = best
        cdef int[::1] lv = labels
        cdef double[::1] work = np.zeros(tree_count_workspace(self.n_vars, self.max_card))
        tree_maxsum_by_count(&self.t, &B[0], &tr[0], &bv[0], &lv[0], &work[0])
        return best, labels.reshape(self.n_vars + 1, self.n_vars)

    def kbest(self, unary, int kb):
        """(labels, values) of the kb best labellings, best first."""
        cdef double[::1] B = np.array(unary, dtype=np.float64)
        labels = np.zeros(max(kb, 1) * self.n_vars, dtype=np.int32)
        values = np.zeros(max(kb, 1))
        cdef int[::1] lv = labels
        cdef double[::1] vv = values
        cdef double[::1] work = np.zeros(tree_kbest_workspace(self.n_vars, self.max_card, kb))
        got = tree_kbest(&self.t, &B[0], kb, &lv[0], &vv[0], &work[0])
        return labels[:got * self.n_vars].reshape(got, self.n_vars), values[:got]


def post_order(parent):
    """Variables children-before-parents (each tree's nodes by decreasing depth first), for a
    forest given by parent indices; raises ValueError on a cycle."""
    parent = np.asarray(parent)
    n = parent.shape[0]
    depth = np.full(n, -1)
    for v in range(n):
        path = []
        u = v
        while u >= 0 and depth[u] < 0:
            if len(path) > n:
                raise ValueError("the parent array has a cycle")
            path.append(u)
            u = parent[u]
        d = depth[u] if u >= 0 else -1
        for u in reversed(path):
            d += 1
            depth[u] = d
    return np.ascontiguousarray(np.argsort(-depth, kind="stable"), dtype=np.int32)



# Relaxed labels' unit (factor.pxd), for Python callers
MARGINAL_ONE_VALUE = MARGINAL_ONE


cdef class FactorGraph:
    """A structure's per-example factor decomposition (factor.pxd): domain variables (a shared
    unary block over K states, each variable and its successor sharing one K x K table) or binary
    variables (one unary column each, per-edge 2 x 2 tables over a graph common to the examples)."""

    def __init__(self, structure, CSRDataset X, var_ptr, truth, loss_weight, Py_ssize_t K, bint binary,
                 Py_ssize_t table_off, Py_ssize_t n_weights, edges=None, Py_ssize_t head_off=-1,
                 Py_ssize_t tail_off=-1):
        var_ptr = np.ascontiguousarray(var_ptr, dtype=np.int64)
        truth = np.ascontiguousarray(truth, dtype=np.int32).ravel()
        loss_weight = np.ascontiguousarray(loss_weight, dtype=np.float64)
        n = var_ptr.shape[0] - 1
        if n < 0 or loss_weight.shape[0] != n:
            raise ValueError("FactorGraph: need n_examples + 1 variable offsets and a loss weight per example")
        if truth.shape[0] != var_ptr[n]:
            raise ValueError(f"FactorGraph: {truth.shape[0]} true states for {var_ptr[n]} variables")
        edges = np.zeros((0, 2), dtype=np.int32) if edges is None else np.asarray(edges, dtype=np.int32).reshape(-1, 2)
        if binary:
            if not np.array_equal(var_ptr, np.arange(n + 1, dtype=np.int64) * K) or X.n_rows != n:
                raise ValueError("FactorGraph: binary variables are K per example, one row of X each")
            if edges.shape[0] and (edges.min() < 0 or edges.max() >= K):
                raise ValueError("FactorGraph: an edge outside the example's variables")
        else:
            if edges.shape[0] or X.n_rows != var_ptr[n]:
                raise ValueError("FactorGraph: domain variables are one row of X each, paired along the example")
            if table_off < 0 and not np.array_equal(var_ptr, np.arange(n + 1, dtype=np.int64)):
                raise ValueError("FactorGraph: domain variables without a pair table are one per example")
            if truth.shape[0] and (truth.min() < 0 or truth.max() >= K):
                raise ValueError("FactorGraph: a true state outside 0..K-1")
        self.structure = structure
        self.X = X
        self.n_examples = n
        self.n_vars = var_ptr[n]
        self.K = K
        self.binary = binary
        self.n_weights = n_weights
        self.table_off = table_off
        self.head_off = head_off
        self.tail_off = tail_off
        self.var_ptr = var_ptr
        self.truth = truth
        self.loss_weight = loss_weight
        self.n_edges = edges.shape[0]
        self.edge_a = np.ascontiguousarray(edges[:, 0])
        self.edge_b = np.ascontiguousarray(edges[:, 1])

    @property
    def edges(self):
        """The pairwise factors of binary variables (E x 2 local indices)."""
        return np.stack([np.asarray(self.edge_a), np.asarray(self.edge_b)], 1)
