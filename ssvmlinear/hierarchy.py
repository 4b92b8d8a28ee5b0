"""Label hierarchies (trees and DAGs) and the node weights alpha of the normalised hierarchical
SVM (choi-thesis ch. 6).

A hierarchy file holds one ``parent child`` pair of integer node ids per line (``#`` starts a
comment). Labels are its leaves. Node ids may be sparse and large: nodes are numbered 0..M-1 in a
topological order (parents before children) and ``ids`` maps them back; nothing is indexed by raw
id. Several roots get one implicit root (id ``None``).
"""
import numpy as np



class Hierarchy:
    """A tree or DAG of M nodes (index 0..M-1, parents before children).

    Attributes: ``ids`` (node id per index; the implicit root, when there is one, is -1 and not a
    file id), ``parents`` / ``children`` (lists of index arrays), ``leaves`` (leaf indices in
    increasing id order: label k is leaves[k]), ``ancestors(l)`` (A(l), the node and all its
    ancestors, sorted), ``depth`` (longest path from a root, in edges), ``is_tree``, ``root``.
    """

    def __init__(self, parents, children, source="<edges>"):
        parents = np.asarray(parents, dtype=np.int64).ravel()
        children = np.asarray(children, dtype=np.int64).ravel()
        if parents.shape != children.shape:
            raise ValueError("parents and children must have the same length")
        self._build(parents, children, source, None)

    @classmethod
    def from_edges(cls, parents, children):
        """The hierarchy of the edges parents[e] -> children[e] (integer node ids)."""
        return cls(parents, children)

    def _build(self, parents, children, source, lines):
        def where(e):
            return f"{source}:{lines[e]}" if lines is not None else f"{source}: edge {e}"
        for e in np.flatnonzero(parents == children)[:1]:
            raise ValueError(f"{where(e)}: node {parents[e]} is its own parent (a self-loop)")
        ids, inv = np.unique(np.concatenate([parents, children]), return_inverse=True)
        E = parents.shape[0]
        p, c = inv[:E], inv[E:]
        pair = np.unique(p * max(len(ids), 1) + c)
        p, c = pair // max(len(ids), 1), pair % max(len(ids), 1)
        n = len(ids)
        indeg = np.bincount(c, minlength=n)
        roots = np.flatnonzero(indeg == 0)
        if n and len(roots) == 0:
            raise ValueError(f"{source}: the hierarchy has no root (every node has a parent): "
                             f"{self._cycle_text(ids, p, c, n)}")
        if len(roots) > 1:       # one implicit root above them
            p = np.concatenate([p, np.full(len(roots), n)])
            c = np.concatenate([c, roots])
            ids = np.concatenate([ids, [-1]])
            n += 1
            indeg = np.bincount(c, minlength=n)
        # Kahn's order, parents before children
        order_ = np.argsort(p, kind="stable")
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(p, minlength=n), out=ptr[1:])
        kids = c[order_]
        deg = indeg.copy()
        topo = list(np.flatnonzero(deg == 0))
        head = 0
        while head < len(topo):
            u = topo[head]
            head += 1
            for v in kids[ptr[u]:ptr[u + 1]]:
                deg[v] -= 1
                if deg[v] == 0:
                    topo.append(v)
        if len(topo) < n:
            raise ValueError(f"{source}: the hierarchy has a cycle: {self._cycle_text(ids, p, c, n)}")
        topo = np.asarray(topo, dtype=np.int64)
        rank = np.empty(n, dtype=np.int64)
        rank[topo] = np.arange(n)
        p, c = rank[p], rank[c]
        self.ids = ids[topo]
        self.n_nodes = n
        self.parents = [[] for _ in range(n)]
        self.children = [[] for _ in range(n)]
        for a, b in zip(p.tolist(), c.tolist()):
            self.parents[b].append(a)
            self.children[a].append(b)
        self.parents = [np.array(sorted(x), dtype=np.int64) for x in self.parents]
        self.children = [np.array(sorted(x), dtype=np.int64) for x in self.children]
        self.is_tree = all(len(x) <= 1 for x in self.parents)
        self.root = 0 if n else -1
        depth = np.zeros(n, dtype=np.int64)
        for v in range(n):
            if len(self.parents[v]):
                depth[v] = depth[self.parents[v]].max() + 1
        self.depth = depth
        leaves = np.array([v for v in range(n) if len(self.children[v]) == 0], dtype=np.int64)
        self.leaves = leaves[np.argsort(self.ids[leaves], kind="stable")]
        self._leaf_of_id = {int(self.ids[v]): k for k, v in enumerate(self.leaves)}
        self._index_of_id = {int(i): v for v, i in enumerate(self.ids)}
        # A(l) for every leaf, as CSR (sorted node indices)
        anc = [None] * n
        for v in range(n):
            s = {v}
            for q in self.parents[v]:
                s |= anc[q]
            anc[v] = s
        self._anc = anc
        lens = np.array([len(anc[v]) for v in self.leaves], dtype=np.int64)
        self.anc_ptr = np.zeros(len(self.leaves) + 1, dtype=np.int64)
        np.cumsum(lens, out=self.anc_ptr[1:])
        self.anc_idx = (np.concatenate([np.array(sorted(anc[v]), dtype=np.int32) for v in self.leaves])
                        if len(self.leaves) else np.zeros(0, dtype=np.int32))
        self.parent_of = np.array([x[0] if len(x) else -1 for x in self.parents], dtype=np.int32)

    @staticmethod
    def _cycle_text(ids, p, c, n):
        """The nodes of one cycle among the edges p -> c, as file ids."""
        succ = {}
        for a, b in zip(p.tolist(), c.tolist()):
            succ.setdefault(a, []).append(b)
        color = {}
        for start in range(n):
            if start in color:
                continue
            stack = [(start, iter(succ.get(start, ())))]
            path = [start]
            color[start] = 1
            while stack:
                u, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    color[u] = 2
                    stack.pop()
                    path.pop()
                    continue
                if color.get(nxt) == 1:
                    cyc = path[path.index(nxt):] + [nxt]
                    return " -> ".join(str(ids[v]) for v in cyc)
                if nxt not in color:
                    color[nxt] = 1
                    stack.append((nxt, iter(succ.get(nxt, ()))))
                    path.append(nxt)
        return "(not found)"

    @property
    def n_leaves(self):
        return len(self.leaves)

    def ancestors(self, v):
        """A(v): node index v and all its ancestors, sorted."""
        return np.array(sorted(self._anc[v]), dtype=np.int64)

    def leaf_index(self, label_ids, source="labels"):
        """Label (leaf) numbers 0..n_leaves-1 of leaf node ids; ValueError naming the first id that
        is an inner node or not in the hierarchy."""
        out = np.empty(len(label_ids), dtype=np.int32)
        for k, lab in enumerate(np.asarray(label_ids).tolist()):
            j = self._leaf_of_id.get(int(lab))
            if j is None:
                what = "an inner node of" if int(lab) in self._index_of_id else "not a node of"
                raise ValueError(f"{source}: label {lab} (example {k}) is {what} the hierarchy; labels must "
                                 "be its leaves")
            out[k] = j
        return out

    def leaf_ids(self, leaf_numbers):
        return self.ids[self.leaves[np.asarray(leaf_numbers)]]

    def edges(self):
        """(parent ids, child ids) of every edge (the implicit root's edges left out)."""
        ps, cs = [], []
        for v in range(self.n_nodes):
            for q in self.parents[v]:
                if self.ids[q] != -1:
                    ps.append(self.ids[q])
                    cs.append(self.ids[v])
        return np.array(ps, dtype=np.int64), np.array(cs, dtype=np.int64)


def read_hierarchy(path):
    """The Hierarchy of a file of ``parent child`` lines (``#`` comments; blank lines allowed);
    ValueError naming the file and line on a malformed line, a self-loop or a cycle."""
    parents, children, lines = [], [], []
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            text = line.split("#", 1)[0].split()
            if not text:
                continue
            if len(text) != 2:
                raise ValueError(f"{path}:{lineno}: expected 'parent child' (two integer node ids), got "
                                 f"{len(text)} tokens")
            try:
                a, b = int(text[0]), int(text[1])
            except ValueError:
                bad = text[0] if not text[0].lstrip("-").isdigit() else text[1]
                raise ValueError(f"{path}:{lineno}: node id {bad!r} is not an integer") from None
            parents.append(a)
            children.append(b)
            lines.append(lineno)
    if not parents:
        raise ValueError(f"{path}: no 'parent child' line")
    h = Hierarchy.__new__(Hierarchy)
    h._build(np.array(parents, dtype=np.int64), np.array(children, dtype=np.int64), str(path), lines)
    return h


def alpha_rho2(h):
    """The node weights of (6.6) with rho = 2 on a tree: min sum alpha_n^2 s.t. every root-to-leaf
    path sums to 1, alpha >= 0. Closed form, O(M): bottom up, a leaf's cost factor is 1 and an
    inner node's S/(1+S), S the sum of its children's; top down, a node with budget L (the root: 1)
    takes alpha = S/(1+S) L (a leaf: L) and passes L/(1+S) to its children. (A subtree that must
    carry L on every path costs its factor times L^2: a + (L - a) split minimises a^2 + S (L - a)^2
    at a = S L/(1+S).)"""
    if not h.is_tree:
        raise ValueError("alpha_rho2's closed form needs a tree; a DAG needs the convex program (6.6)")
    n = h.n_nodes
    parent = h.parent_of
    depth = h.depth
    factor = np.ones(n)
    S = np.zeros(n)
    leaf = np.array([len(c) == 0 for c in h.children])
    for d in range(int(depth.max()) if n else -1, 0, -1):        # bottom up, a level at a time
        at = np.flatnonzero(depth == d)
        inner = at[~leaf[at]]
        factor[inner] = S[inner] / (1.0 + S[inner])
        np.add.at(S, parent[at], factor[at])
    if n:
        factor[0] = S[0] / (1.0 + S[0]) if not leaf[0] else 1.0
    alpha = np.zeros(n)
    budget = np.zeros(n)
    if n:
        budget[0] = 1.0
    for d in range(0, int(depth.max()) + 1 if n else 0):         # top down
        at = np.flatnonzero(depth == d)
        if d > 0:
            budget[at] = budget[parent[at]] / (1.0 + S[parent[at]])
        alpha[at] = np.where(leaf[at], budget[at], S[at] / (1.0 + S[at]) * budget[at])
    return alpha


def hierarchy_structure(X, leaves, h, coef, task_loss="hamming"):
    """The kernel structure (_kernels/hierarchy.pyx) of a CSRDataset X whose examples are labelled
    with leaf numbers `leaves` of hierarchy h, node coefficients coef (c_n: 1 for HSVM, sqrt(alpha)
    for NHSVM) and a task loss name ("hamming", "normalized", "normalized-margin")."""
    from ._kernels.hierarchy import HierarchyStructure, TASK_LOSSES
    if task_loss not in TASK_LOSSES:
        raise ValueError(f"task_loss must be one of {sorted(TASK_LOSSES)}, got {task_loss!r}")
    parent = h.parent_of if h.is_tree else np.full(h.n_nodes, -1, dtype=np.int32)
    return HierarchyStructure(X, leaves, parent, h.leaves.astype(np.int32), h.anc_ptr, h.anc_idx,
                              np.asarray(coef, dtype=np.float64), h.is_tree, TASK_LOSSES[task_loss])
