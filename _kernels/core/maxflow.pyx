# cython: language_level=3
"""The local-polytope LP of binary labels coupled by pairs, solved exactly by max-flow."""
import numpy as np


# For binary labels coupled by pairs, the LP relaxation over the local polytope equals roof
# duality and is solved exactly by one minimum cut on 2K + 2 nodes (Boros & Hammer 2002;
# Kolmogorov & Rother 2007, QPBO): node p_k stands for x_k = 1 when on the sink side, its twin
# q_k for x_k = 0; every term of the energy -c . x is split in halves over the two copies. A
# maximum flow's source side S gives the half-integral optimum x_k = ([p_k not in S] + [q_k in
# S]) / 2, and each pair takes the bound of its polytope interval that its coefficient prefers.

def flow_topology(Py_ssize_t K, edges):
    """(arc heads, CSR adjacency pointers, adjacency arcs) of the QPBO graph: source 0, sink 1,
    p_k = 2 + k, q_k = 2 + K + k; arc 2j is the j-th forward arc and 2j + 1 its reverse. Per
    label k (j = 4k..4k+3): s->p_k, q_k->t (the cost of x_k = 1), p_k->t, s->q_k (of x_k = 0);
    per pair e = (a, b) (j = 4K + 4e..): q_b->p_a, q_a->p_b (cost of x_a = x_b = 1), p_a->p_b,
    q_b->q_a (cost of x_a = 0, x_b = 1)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    E = edges.shape[0]
    s, t = 0, 1
    p = 2 + np.arange(K)
    q = 2 + K + np.arange(K)
    a, b = edges[:, 0], edges[:, 1]
    tail = np.concatenate([np.stack([np.full(K, s), q, p, np.full(K, s)], 1).ravel(),
                           np.stack([q[b], q[a], p[a], q[b]], 1).ravel()]).astype(np.int64)
    head = np.concatenate([np.stack([p, np.full(K, t), np.full(K, t), q], 1).ravel(),
                           np.stack([p[a], p[b], p[b], q[a]], 1).ravel()]).astype(np.int64)
    n_nodes = 2 * K + 2
    arc_tail = np.stack([tail, head], 1).ravel()          # arc 2j: tail->head, 2j+1: head->tail
    arc_head = np.stack([head, tail], 1).ravel()
    order = np.argsort(arc_tail, kind="stable")
    ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.add.at(ptr, arc_tail + 1, 1)
    return (arc_head.astype(np.int32), np.cumsum(ptr).astype(np.int32), order.astype(np.int32))


cdef double _flow_dfs(int u, double f, const int *head, const int *ptr, const int *adj, double *cap,
                      int *level, int *it, double eps) noexcept nogil:
    cdef int a, v
    cdef double d
    if u == 1:
        return f
    while it[u] < ptr[u + 1]:
        a = adj[it[u]]
        v = head[a]
        if cap[a] > eps and level[v] == level[u] + 1:
            d = _flow_dfs(v, f if f < cap[a] else cap[a], head, ptr, adj, cap, level, it, eps)
            if d > 0.0:
                cap[a] -= d
                cap[a ^ 1] += d
                return d
        it[u] += 1
    return 0.0


cdef int _flow_bfs(int n, const int *head, const int *ptr, const int *adj, const double *cap, int *level,
                   int *queue, double eps) noexcept nogil:
    """Levels from the source over arcs with residual capacity; returns whether the sink is reached."""
    cdef int u, v, j, qh = 0, qt = 0
    for u in range(n):
        level[u] = -1
    level[0] = 0
    queue[qt] = 0
    qt += 1
    while qh < qt:
        u = queue[qh]
        qh += 1
        for j in range(ptr[u], ptr[u + 1]):
            v = head[adj[j]]
            if level[v] < 0 and cap[adj[j]] > eps:
                level[v] = level[u] + 1
                queue[qt] = v
                qt += 1
    return level[1] >= 0


cdef void flow_lp(Py_ssize_t K, Py_ssize_t E, const int *edges, const double *c, const int *head,
                   const int *ptr, const int *adj, double *x, double *work) noexcept nogil:
    """x[0:K+E] = argmax c . x over the local polytope (P(y_k = 1), then P(y_a = y_b = 1) per edge).
    work: 2 (4K + 4E) doubles (capacities) + 3 (2K + 2) ints."""
    cdef Py_ssize_t k, e, n_arcs = 2 * (4 * K + 4 * E)
    cdef int n = <int> (2 * K + 2), u, a, b
    cdef double *cap = work
    cdef int *level = <int *> (work + n_arcs)
    cdef int *queue = level + n
    cdef int *it = queue + n
    cdef double *th = x                 # theta_k(1) (cost of x_k = 1), built in x[0:K]
    cdef double v, big = 0.0, eps, f
    for k in range(n_arcs):
        cap[k] = 0.0
    for k in range(K):
        th[k] = -c[k]
    for e in range(E):
        a = edges[2 * e]
        b = edges[2 * e + 1]
        v = -c[K + e]                   # the energy's x_a x_b coefficient
        if v > 0.0:                     # non-submodular: pay v when both are 1
            cap[2 * (4 * K + 4 * e)] = 0.5 * v
            cap[2 * (4 * K + 4 * e + 1)] = 0.5 * v
        elif v < 0.0:                   # v x_a x_b = v x_b + (-v) (1 - x_a) x_b
            th[b] += v
            cap[2 * (4 * K + 4 * e + 2)] = -0.5 * v
            cap[2 * (4 * K + 4 * e + 3)] = -0.5 * v
    for k in range(K):
        if th[k] > 0.0:
            cap[2 * (4 * k)] = 0.5 * th[k]
            cap[2 * (4 * k + 1)] = 0.5 * th[k]
        elif th[k] < 0.0:
            cap[2 * (4 * k + 2)] = -0.5 * th[k]
            cap[2 * (4 * k + 3)] = -0.5 * th[k]
    for k in range(n_arcs):
        if cap[k] > big:
            big = cap[k]
    eps = 1e-13 * big
    while _flow_bfs(n, head, ptr, adj, cap, level, queue, eps):
        for u in range(n):
            it[u] = ptr[u]
        while True:
            f = _flow_dfs(0, 1e300, head, ptr, adj, cap, level, it, eps)
            if f <= 0.0:
                break
    _flow_bfs(n, head, ptr, adj, cap, level, queue, eps)     # the source side: level >= 0
    for k in range(K):
        x[k] = 0.5 * ((level[2 + k] < 0) + (level[2 + K + k] >= 0))
    for e in range(E):
        a = edges[2 * e]
        b = edges[2 * e + 1]
        if c[K + e] > 0.0:
            x[K + e] = x[a] if x[a] < x[b] else x[b]
        else:
            v = x[a] + x[b] - 1.0
            x[K + e] = v if v > 0.0 else 0.0


def maxflow_lp(c, Py_ssize_t K, edges, topology=None):
    """The local-polytope LP max c . x by max-flow (see flow_lp); x = (P(y_k = 1), pair marginals)."""
    edges32 = np.ascontiguousarray(np.asarray(edges).reshape(-1, 2), dtype=np.int32)
    cdef Py_ssize_t E = edges32.shape[0]
    head, ptr, adj = topology if topology is not None else flow_topology(K, edges32)
    cdef const double[::1] cv = np.ascontiguousarray(c, dtype=np.float64)
    cdef const int[::1] ev = edges32.ravel() if E else np.zeros(1, dtype=np.int32)
    cdef const int[::1] hv = head
    cdef const int[::1] pv = ptr
    cdef const int[::1] av = adj
    x = np.zeros(K + E)
    work = np.zeros(2 * (4 * K + 4 * E) + 3 * (2 * K + 2))
    cdef double[::1] xv = x
    cdef double[::1] wv = work
    flow_lp(K, E, &ev[0], &cv[0], &hv[0], &pv[0], &av[0], &xv[0], &wv[0])
    return x
