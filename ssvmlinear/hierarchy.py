"""Label hierarchies (trees and DAGs) and the node weights alpha of the normalised hierarchical
SVM (choi-thesis ch. 6).

A hierarchy file holds one ``parent child`` pair of integer node ids per line (``#`` starts a
comment). Labels are its leaves. Node ids may be sparse and large: nodes are numbered 0..M-1 in a
topological order (parents before children) and ``ids`` maps them back; nothing is indexed by raw
id. Several roots get one implicit root (id -1, which no node of such a hierarchy may use).
"""
import numpy as np

from .io import read_int_pairs



def _csr(src, dst, n):
    """Per node of src, its dst entries sorted: (ptr, idx)."""
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    o = np.argsort(src * max(n, 1) + dst)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, np.asarray(dst)[o].astype(np.int64)


def _gather(ptr, idx, rows):
    """The concatenated idx[ptr[r]:ptr[r+1]] of the rows."""
    starts, ends = ptr[rows], ptr[rows + 1]
    lens = ends - starts
    if lens.sum() == 0:
        return np.zeros(0, dtype=np.int64)
    offs = np.repeat(starts - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
    return idx[np.arange(lens.sum()) + offs]


class _Rows:
    """rows[v]: the sorted index array of node v (parents or children), from CSR."""

    def __init__(self, ptr, idx):
        self.ptr, self.idx = ptr, idx

    def __getitem__(self, v):
        return self.idx[self.ptr[v]:self.ptr[v + 1]]

    def __len__(self):
        return len(self.ptr) - 1


class Hierarchy:
    """A label hierarchy: a tree or a directed acyclic graph of integer node ids.

    Built from its edges parents[e] -> children[e]; the labels are its leaves. Node ids may be
    sparse and large: the M nodes are numbered 0..M-1 (their index) in a topological order,
    parents before children, and ``ids`` maps indices back to ids. Several roots get one
    implicit root above them, of id -1. Repeated edges count once.

    Parameters
    ----------
    parents : array-like of int
        The parent node id of every edge.
    children : array-like of int
        The child node id of every edge (the same length as parents).
    source : str, default='<edges>'
        The name error messages give the edges (read_hierarchy gives the file's).

    Attributes
    ----------
    ids : ndarray of shape (n_nodes,)
        The node id of every index (-1 for an implicit root).
    n_nodes : int
        The number of nodes M (an implicit root included).
    leaves : ndarray of shape (n_leaves,)
        The indices of the leaves, by increasing id: label k is the leaf leaves[k].
    parents : sequence of ndarray
        parents[v]: the sorted indices of the parents of node index v.
    children : sequence of ndarray
        children[v]: the sorted indices of the children of node index v.
    parent_of : ndarray of shape (n_nodes,)
        The (first) parent index of every node, -1 for the root.
    depth : ndarray of shape (n_nodes,)
        The longest path from the root to every node, in edges.
    is_tree : bool
        Whether every node has at most one parent.
    root : int
        The index of the root (0), -1 for an empty hierarchy.

    Raises
    ------
    ValueError
        For a self-loop, a cycle, parents and children of different lengths, or the id -1 in a
        hierarchy with several roots.

    See Also
    --------
    read_hierarchy : The hierarchy of a file of ``parent child`` lines.
    HierarchicalSSVM : Classification into the leaves of a hierarchy.

    Examples
    --------
    >>> from ssvmlinear import Hierarchy
    >>> h = Hierarchy(parents=[10, 10, 20], children=[20, 30, 40])
    >>> h.n_nodes, h.n_leaves, h.is_tree
    (4, 2, True)
    >>> h.ids[h.leaves]          # the labels: leaf ids
    array([30, 40])
    >>> h.ids[h.ancestors(3)]    # the leaf 40 and its ancestors
    array([10, 20, 40])
    """

    def __init__(self, parents, children, source="<edges>"):
        parents = np.asarray(parents, dtype=np.int64).ravel()
        children = np.asarray(children, dtype=np.int64).ravel()
        if parents.shape != children.shape:
            raise ValueError("parents and children must have the same length")
        self._build(parents, children, source, None)

    @classmethod
    def from_edges(cls, parents, children):
        """Build the hierarchy of the edges parents[e] -> children[e].

        Parameters
        ----------
        parents : array-like of int
            The parent node id of every edge.
        children : array-like of int
            The child node id of every edge.

        Returns
        -------
        Hierarchy
            The hierarchy, as Hierarchy(parents, children).

        Examples
        --------
        >>> from ssvmlinear import Hierarchy
        >>> Hierarchy.from_edges([0, 0], [1, 2]).n_leaves
        2
        """
        return cls(parents, children)

    def _build(self, parents, children, source, lines):
        # vectorised (numpy per level, never a Python loop over nodes): 10^6 nodes in about a second
        def where(e):
            return f"{source}:{lines[e]}" if lines is not None else f"{source}: edge {e}"
        for e in np.flatnonzero(parents == children)[:1]:
            raise ValueError(f"{where(e)}: node {parents[e]} is its own parent (a self-loop)")
        ids, inv = np.unique(np.concatenate([parents, children]), return_inverse=True)
        E = parents.shape[0]
        n = len(ids)
        pair = np.unique(inv[:E] * max(n, 1) + inv[E:])          # repeated edges count once
        p, c = pair // max(n, 1), pair % max(n, 1)
        indeg = np.bincount(c, minlength=n)
        roots = np.flatnonzero(indeg == 0)
        if n and len(roots) == 0:
            raise ValueError(f"{source}: the hierarchy has no root (every node has a parent): "
                             f"{self._cycle_text(ids, p, c, n)}")
        if len(roots) > 1:       # one implicit root above them
            for e in np.flatnonzero((parents == -1) | (children == -1))[:1]:
                raise ValueError(f"{where(e)}: node id -1 names the implicit root above the hierarchy's "
                                 f"{len(roots)} roots; use another id")
            p = np.concatenate([p, np.full(len(roots), n)])
            c = np.concatenate([c, roots])
            ids = np.concatenate([ids, [-1]])
            n += 1
            indeg = np.bincount(c, minlength=n)
        # Kahn's algorithm a level at a time: level = longest path from the root
        ch_ptr, ch_idx = _csr(p, c, n)
        level = np.full(n, -1, dtype=np.int64)
        left = indeg.copy()
        frontier = np.flatnonzero(left == 0)
        depth = 0
        order = []
        single_parent = bool(indeg.max(initial=0) <= 1)     # a tree: no node reached twice
        while frontier.size:
            level[frontier] = depth
            order.append(frontier)
            kids = _gather(ch_ptr, ch_idx, frontier)
            if single_parent:
                left[kids] -= 1
                frontier = kids
            else:
                left -= np.bincount(kids, minlength=n)
                frontier = np.unique(kids[left[kids] == 0])
            depth += 1
        if np.any(level < 0):
            raise ValueError(f"{source}: the hierarchy has a cycle: {self._cycle_text(ids, p, c, n)}")
        topo = np.concatenate(order) if order else np.zeros(0, dtype=np.int64)
        rank = np.empty(n, dtype=np.int64)
        rank[topo] = np.arange(n)
        p, c = rank[p], rank[c]
        self.ids = ids[topo]
        self.n_nodes = n
        self.depth = level[topo]
        self._par_ptr, self._par_idx = _csr(c, p, n)     # sorted per node
        self._ch_ptr, self._ch_idx = _csr(p, c, n)
        self.parents = _Rows(self._par_ptr, self._par_idx)
        self.children = _Rows(self._ch_ptr, self._ch_idx)
        n_par = np.diff(self._par_ptr)
        self.is_tree = bool(np.all(n_par <= 1))
        self.root = 0 if n else -1
        self.parent_of = np.full(n, -1, dtype=np.int32)
        has = n_par > 0
        self.parent_of[has] = self._par_idx[self._par_ptr[:-1][has]]
        leaves = np.flatnonzero(np.diff(self._ch_ptr) == 0)
        self.leaves = leaves[np.argsort(self.ids[leaves], kind="stable")]
        self._sorted_ids = np.argsort(self.ids, kind="stable")
        # A(l) of every leaf, as CSR of sorted node indices
        if self.is_tree:
            # walk every leaf up at once, one level per step; |A(l)| = depth(l) + 1 and the s-th
            # ancestor up has the (len - 1 - s)-th smallest index (parents are numbered first)
            lens = self.depth[self.leaves] + 1
            self.anc_ptr = np.zeros(len(self.leaves) + 1, dtype=np.int64)
            np.cumsum(lens, out=self.anc_ptr[1:])
            self.anc_idx = np.zeros(int(self.anc_ptr[-1]), dtype=np.int32)
            cur = self.leaves.astype(np.int64)
            who = np.arange(len(self.leaves))
            step = 0
            while cur.size:
                self.anc_idx[self.anc_ptr[who] + lens[who] - 1 - step] = cur
                up = self.parent_of[cur]
                keep = up >= 0
                cur, who = up[keep].astype(np.int64), who[keep]
                step += 1
        else:
            sets = [np.array(sorted(self._ancestor_set(v)), dtype=np.int32) for v in self.leaves]
            self.anc_ptr = np.zeros(len(self.leaves) + 1, dtype=np.int64)
            np.cumsum([len(a) for a in sets], out=self.anc_ptr[1:])
            self.anc_idx = np.concatenate(sets) if sets else np.zeros(0, dtype=np.int32)

    def _ancestor_set(self, v):
        seen = {int(v)}
        stack = [int(v)]
        while stack:
            u = stack.pop()
            for q in self.parents[u].tolist():
                if q not in seen:
                    seen.add(q)
                    stack.append(q)
        return seen

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
        """The number of leaves (labels).

        Examples
        --------
        >>> from ssvmlinear import Hierarchy
        >>> Hierarchy([0, 0, 1, 1], [1, 2, 3, 4]).n_leaves
        3
        """
        return len(self.leaves)

    def ancestors(self, v):
        """Return A(v): a node and all its ancestors.

        Parameters
        ----------
        v : int
            A node index (not an id).

        Returns
        -------
        ndarray of shape (n_ancestors,)
            The node indices of v and of all its ancestors, sorted (the root first).

        Examples
        --------
        >>> from ssvmlinear import Hierarchy
        >>> h = Hierarchy([0, 0, 1, 1], [1, 2, 3, 4])
        >>> h.ids[h.ancestors(4)]
        array([0, 1, 4])
        """
        return np.array(sorted(self._ancestor_set(v)), dtype=np.int64)

    def _lookup(self, label_ids):
        """Node index of each id (-1 when it is not a node)."""
        q = np.asarray(label_ids, dtype=np.int64)
        pos = np.searchsorted(self.ids[self._sorted_ids], q)
        pos = np.minimum(pos, max(self.n_nodes - 1, 0))
        idx = self._sorted_ids[pos] if self.n_nodes else np.zeros(len(q), dtype=np.int64)
        return np.where(self.n_nodes and self.ids[idx] == q, idx, -1) if self.n_nodes else np.full(len(q), -1)

    def leaf_index(self, label_ids, source="labels"):
        """Return the label numbers of leaf ids.

        Parameters
        ----------
        label_ids : array-like of int
            Node ids, each a leaf of the hierarchy.
        source : str, default='labels'
            What the ids are, for error messages.

        Returns
        -------
        ndarray of shape (n_ids,)
            The label (leaf) number 0..n_leaves-1 of every id, int32.

        Raises
        ------
        ValueError
            Naming the first id that is an inner node or not a node of the hierarchy.

        See Also
        --------
        Hierarchy.leaf_ids : The inverse map.

        Examples
        --------
        >>> from ssvmlinear import Hierarchy
        >>> h = Hierarchy([0, 0, 1, 1], [1, 2, 3, 4])
        >>> h.leaf_index([4, 2])
        array([2, 0], dtype=int32)
        """
        label_ids = np.asarray(label_ids)
        node = self._lookup(label_ids)
        is_leaf = np.zeros(self.n_nodes + 1, dtype=bool)
        is_leaf[self.leaves] = True
        leaf_no = np.full(self.n_nodes + 1, -1, dtype=np.int32)
        leaf_no[self.leaves] = np.arange(len(self.leaves), dtype=np.int32)
        bad = np.flatnonzero((node < 0) | ~is_leaf[node])
        if bad.size:
            k = int(bad[0])
            lab = label_ids.tolist()[k]
            what = "an inner node of" if node[k] >= 0 else "not a node of"
            raise ValueError(f"{source}: label {lab} (example {k}) is {what} the hierarchy; labels must be its leaves")
        return leaf_no[node].astype(np.int32)

    def leaf_ids(self, leaf_numbers):
        """Return the leaf ids of label numbers.

        Parameters
        ----------
        leaf_numbers : array-like of int
            Label (leaf) numbers, 0..n_leaves-1.

        Returns
        -------
        ndarray of shape (n_numbers,)
            The node id of every leaf.

        See Also
        --------
        Hierarchy.leaf_index : The inverse map.

        Examples
        --------
        >>> from ssvmlinear import Hierarchy
        >>> h = Hierarchy([0, 0, 1, 1], [1, 2, 3, 4])
        >>> h.leaf_ids([2, 0])
        array([4, 2])
        """
        return self.ids[self.leaves[np.asarray(leaf_numbers)]]

    def edges(self):
        """Return the edges of the hierarchy as node ids.

        Returns
        -------
        parents : ndarray of shape (n_edges,)
            The parent id of every edge.
        children : ndarray of shape (n_edges,)
            The child id of every edge (the implicit root's edges are left out; repeated edges
            appear once).

        Examples
        --------
        >>> from ssvmlinear import Hierarchy
        >>> Hierarchy([10, 10, 20], [20, 30, 40]).edges()
        (array([10, 10, 20]), array([20, 30, 40]))
        """
        child = np.repeat(np.arange(self.n_nodes), np.diff(self._par_ptr))
        par = self._par_idx
        keep = self.ids[par] != -1
        return self.ids[par[keep]].astype(np.int64), self.ids[child[keep]].astype(np.int64)


def read_hierarchy(path):
    r"""Read a label hierarchy from a file of ``parent child`` lines.

    Every line holds the integer ids of a parent and one of its children; ``#`` starts a
    comment and blank lines are allowed. The labels of the hierarchy are its leaves.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    Hierarchy
        The tree or DAG of the file's edges.

    Raises
    ------
    ValueError
        Naming the file and line, for a malformed line, a self-loop or a cycle, or a file
        without any edge.

    See Also
    --------
    Hierarchy : The same from arrays of edges.

    Examples
    --------
    >>> import os
    >>> import tempfile
    >>> from ssvmlinear import read_hierarchy
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "hierarchy.txt")
    ...     with open(path, "w") as f:
    ...         _ = f.write("# parent child\n0 1\n0 2\n1 3\n1 4\n")
    ...     h = read_hierarchy(path)
    >>> h.n_nodes, h.ids[h.leaves]
    (5, array([2, 3, 4]))
    """
    parents, children, lines = read_int_pairs(path, "parent child", "node id")
    if not parents.size:
        raise ValueError(f"{path}: no 'parent child' line")
    h = Hierarchy.__new__(Hierarchy)
    h._build(parents, children, str(path), lines)
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
    leaf = np.diff(h._ch_ptr) == 0
    levels = _levels_of(h)
    factor = np.ones(n)
    S = np.zeros(n)
    for at in reversed(levels):              # bottom up, a level at a time
        inner = at[~leaf[at]]
        factor[inner] = S[inner] / (1.0 + S[inner])
        up = parent[at]
        np.add.at(S, up[up >= 0], factor[at][up >= 0])
    alpha = np.zeros(n)
    budget = np.zeros(n)
    for d, at in enumerate(levels):          # top down
        budget[at] = 1.0 if d == 0 else budget[parent[at]] / (1.0 + S[parent[at]])
        alpha[at] = np.where(leaf[at], budget[at], S[at] / (1.0 + S[at]) * budget[at])
    return alpha


def _levels_of(h):
    """Node indices grouped by depth, root level first."""
    by_depth = np.argsort(h.depth, kind="stable")
    cuts = np.searchsorted(h.depth[by_depth], np.arange(int(h.depth.max()) + 2 if h.n_nodes else 1))
    return [by_depth[cuts[d]:cuts[d + 1]] for d in range(len(cuts) - 1)]


def alpha_shared(h, sqnorms):
    """ARGMINALPHATREE (choi-thesis Algorithm 5): the alpha minimising sum_n ||U_n||^2 / alpha_n
    s.t. sum_{A(l)} alpha <= 1 for every leaf, alpha >= 0 ((6.23)), on a tree, in O(M).

    Reading taken (the printed algorithm disagrees with its derivation (6.24)-(6.26): it sets a
    leaf's share E to 0 and takes alpha = sqrt(L_p E_n), which gives alpha = 0 at the leaves):
    the subtree of n with budget l costs F_n / l, where a leaf's F is N_n = ||U_n||^2 and an inner
    node's (sqrt(N_n) + sqrt(S))^2, S = the sum of its children's F, at the share
    E_n = sqrt(N_n) / (sqrt(N_n) + sqrt(S)) of the budget for n itself (a leaf takes all of it,
    E = 1; an empty subtree E = 0); top down, alpha_n = B_n E_n and each child's budget is
    B_n (1 - E_n), the root's budget 1. Minimum value: F_root."""
    if not h.is_tree:
        raise ValueError("Shared SVM's alpha (Algorithm 5) needs a tree; the thesis applies it to trees only")
    N = np.asarray(sqnorms, dtype=np.float64)
    n = h.n_nodes
    parent = h.parent_of
    leaf = np.diff(h._ch_ptr) == 0
    levels = _levels_of(h)
    F = np.zeros(n)
    E = np.zeros(n)
    S = np.zeros(n)
    for at in reversed(levels):              # bottom up
        lf, inner = at[leaf[at]], at[~leaf[at]]
        F[lf] = N[lf]
        E[lf] = 1.0
        root_n, root_s = np.sqrt(N[inner]), np.sqrt(S[inner])
        tot = root_n + root_s
        F[inner] = tot ** 2
        E[inner] = np.divide(root_n, tot, out=np.zeros_like(tot), where=tot > 0)
        up = parent[at]
        np.add.at(S, up[up >= 0], F[at][up >= 0])
    alpha = np.zeros(n)
    budget = np.zeros(n)
    for d, at in enumerate(levels):          # top down
        budget[at] = 1.0 if d == 0 else budget[parent[at]] * (1.0 - E[parent[at]])
        alpha[at] = budget[at] * E[at]
    return alpha, float(F[0]) if n else 0.0


def hierarchy_structure(X, leaves, h, coef, task_loss="hamming", loss_coef=None):
    """The kernel structure (_kernels/structures/hierarchy.pyx) of a CSRDataset X whose examples are labelled
    with leaf numbers `leaves` of hierarchy h, node coefficients coef (c_n: 1 for HSVM, sqrt(alpha)
    for NHSVM), a task loss name (TASK_LOSSES) and the node coefficients of the normalised losses
    (default coef)."""
    from ._kernels.hierarchy import HierarchyStructure, TASK_LOSSES
    if task_loss not in TASK_LOSSES:
        raise ValueError(f"task_loss must be one of {sorted(TASK_LOSSES)}, got {task_loss!r}")
    parent = h.parent_of if h.is_tree else np.full(h.n_nodes, -1, dtype=np.int32)
    return HierarchyStructure(X, leaves, parent, h.leaves.astype(np.int32), h.anc_ptr, h.anc_idx,
                              np.asarray(coef, dtype=np.float64), h.is_tree, TASK_LOSSES[task_loss], loss_coef)


class DagLP:
    """The LP relaxation of (6.22) on a DAG, for the multi-label oracle: lp(r) maximises r . z
    over z in [0, 1]^M with z_child <= z_parent on every edge, z_n <= sum of its children's z
    for every inner node and at least one leaf (sum of leaf z >= 1). HiGHS through
    scipy.optimize.linprog; the constraint matrix is built once. integer(r): the same program in
    0/1 (scipy.optimize.milp), the prediction's fallback when the LP answer is fractional.
    Picklable (rebuilt from the hierarchy's edges)."""

    def __init__(self, h):
        import scipy.sparse as sp
        self.h = h
        M = h.n_nodes
        child = np.repeat(np.arange(M), np.diff(h._par_ptr))
        E = child.shape[0]
        edge = sp.csr_matrix((np.concatenate([np.ones(E), -np.ones(E)]),
                              (np.concatenate([np.arange(E), np.arange(E)]), np.concatenate([child, h._par_idx]))),
                             shape=(E, M))
        inner = np.flatnonzero(np.diff(h._ch_ptr) > 0)
        kids = np.repeat(np.arange(M), np.diff(h._par_ptr))      # each edge's child, by parent
        need = sp.csr_matrix((np.concatenate([np.ones(len(inner)), -np.ones(E)]),
                              (np.concatenate([np.searchsorted(inner, inner), np.searchsorted(inner, h._par_idx)]),
                               np.concatenate([inner, kids]))), shape=(len(inner), M))
        leaf = sp.csr_matrix((-np.ones(h.n_leaves), (np.zeros(h.n_leaves, dtype=np.int64), h.leaves)), shape=(1, M))
        self.A = sp.vstack([edge, need, leaf]).tocsr()
        self.b = np.concatenate([np.zeros(E + len(inner)), [-1.0]])

    def __call__(self, r):
        from scipy.optimize import linprog
        res = linprog(-np.asarray(r, dtype=np.float64), A_ub=self.A, b_ub=self.b, bounds=(0, 1), method="highs")
        if res.status != 0:
            raise RuntimeError(res.message)
        return res.x

    def integer(self, r):
        from scipy.optimize import LinearConstraint, milp
        res = milp(-np.asarray(r, dtype=np.float64), constraints=LinearConstraint(self.A, -np.inf, self.b),
                   integrality=np.ones(self.h.n_nodes), bounds=(0, 1))
        if res.status != 0:
            raise RuntimeError(res.message)
        return np.rint(res.x)

    def __reduce__(self):
        return (DagLP, (self.h,))


def multilabel_hierarchy_structure(X, leaf_sets, h, coef):
    """The multi-label kernel structure of a CSRDataset X whose examples are labelled with leaf
    sets (a CSR or dense (n, n_leaves) indicator over leaf numbers): on a tree, the O(M) dynamic
    program; on a DAG, the LP relaxation of (6.22) with relaxed labels (it holds the GIL)."""
    import scipy.sparse as sp
    from ._kernels.hierarchy import HierarchyMultiLabelStructure
    Y = sp.csr_matrix(leaf_sets)
    if Y.shape[0] and np.any(np.diff(Y.indptr) == 0):
        raise ValueError(f"example {int(np.flatnonzero(np.diff(Y.indptr) == 0)[0])} has no label; hierarchical "
                         "multi-label examples need at least one leaf")
    Z = ((Y @ _leaf_incidence(h)).toarray() > 0).astype(np.int32)
    coef = np.asarray(coef, dtype=np.float64)
    is_leaf = (np.diff(h._ch_ptr) == 0).astype(np.int32)
    if h.is_tree:
        return HierarchyMultiLabelStructure(X, Z, is_leaf, coef, parent=h.parent_of)
    return HierarchyMultiLabelStructure(X, Z, is_leaf, coef, lp=DagLP(h))


def _leaf_incidence(h):
    """The leaves x nodes 0/1 matrix of the ancestor sets (scipy CSR)."""
    import scipy.sparse as sp
    return sp.csr_matrix((np.ones(h.anc_idx.shape[0]), h.anc_idx, h.anc_ptr), shape=(h.n_leaves, h.n_nodes))


def alpha_qp(h, T=1.0):
    """(6.6) with rho = 2 on any DAG: min sum alpha^2 s.t. 1 <= sum_{A(l)} alpha <= T per leaf l,
    alpha >= 0 ((6.8); T = 1: every path sums to 1). Solved in the dual, which is smooth with
    bounds only: with A the leaves x nodes ancestor incidence, alpha = max(0, A^T (mu - nu)) and
    max_{mu, nu >= 0} sum mu - T sum nu - 1/2 |max(0, A^T (mu - nu))|^2 (T = 1: one free
    multiplier per leaf), by L-BFGS-B on sparse A. O(nnz(A)) per iteration, so hierarchies of
    thousands of nodes take seconds. The answer is scaled up to the lower bound where the solver's
    tolerance leaves a path sum just below 1."""
    from scipy.optimize import minimize
    A = _leaf_incidence(h)
    L = h.n_leaves
    AT = A.T.tocsr()
    split = T > 1.0

    def alpha_of(z):
        lam = z[:L] - z[L:] if split else z
        return np.maximum(AT @ lam, 0.0)

    def negdual(z):
        a = alpha_of(z)
        s = A @ a
        if split:
            f = -(z[:L].sum() - T * z[L:].sum()) + 0.5 * (a @ a)
            g = np.concatenate([s - 1.0, T - s])
        else:
            f = -z.sum() + 0.5 * (a @ a)
            g = s - 1.0
        return f, g
    z0 = np.zeros(2 * L if split else L)
    bounds = [(0, None)] * (2 * L) if split else None
    res = minimize(negdual, z0, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 20000, "maxfun": 40000, "ftol": 1e-15, "gtol": 1e-11, "maxcor": 20})
    a = alpha_of(res.x)
    s = A @ a
    lo, hi = float(s.min()) if L else 1.0, float(s.max()) if L else 1.0
    if lo > 0:
        a = a / min(lo, 1.0)
        hi /= min(lo, 1.0)
    tol = 1e-6
    if not (lo > 0 and np.all(np.abs(A @ a - 1.0) <= tol) if not split else lo > 0 and hi <= T * (1 + tol)):
        raise RuntimeError(f"alpha (6.6) did not converge: {res.message} (path sums {lo:.6g}..{hi:.6g})")
    return a


def alpha_directional(h, T=1.0):
    """(6.7): max min_n alpha_n s.t. sum_{A(l)} alpha = 1 (DAG relaxation (6.8): between 1 and T),
    alpha >= 0 and the directional constraints alpha_n >= alpha_p for every parent p of n; an LP
    (HiGHS through scipy.optimize.linprog, sparse). Among the optima, the one of least sum."""
    import scipy.sparse as sp
    from scipy.optimize import linprog
    M = h.n_nodes
    A = _leaf_incidence(h)
    child = np.repeat(np.arange(M), np.diff(h._par_ptr))       # alpha_p - alpha_v <= 0 per edge
    r = child.shape[0]
    D = sp.csr_matrix((np.concatenate([np.ones(r), -np.ones(r)]),
                       (np.concatenate([np.arange(r), np.arange(r)]), np.concatenate([h._par_idx, child]))),
                      shape=(r, M + 1))
    Tm = sp.hstack([-sp.eye(M), sp.csr_matrix(np.ones((M, 1)))])            # t - alpha_n <= 0
    ub_parts, b_ub = [D, Tm], [np.zeros(r), np.zeros(M)]
    Ai = sp.hstack([A, sp.csr_matrix((h.n_leaves, 1))])
    if T > 1.0:
        ub_parts += [-Ai, Ai]
        b_ub += [-np.ones(h.n_leaves), np.full(h.n_leaves, T)]
        eq = dict()
    else:
        eq = dict(A_eq=Ai, b_eq=np.ones(h.n_leaves))
    A_ub, b_ub = sp.vstack(ub_parts).tocsr(), np.concatenate(b_ub)
    c = np.zeros(M + 1)
    c[M] = -1.0
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=[(0, None)] * (M + 1), method="highs", **eq)
    if res.status != 0:
        raise RuntimeError(f"alpha (6.7): {res.message}")
    t = res.x[M]
    # second stage: keep min alpha = t, take the smallest total weight (a unique, spread solution)
    c2 = np.concatenate([np.ones(M), [0.0]])
    bounds = [(0, None)] * M + [(t * (1 - 1e-9), None)]
    res2 = linprog(c2, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs", **eq)
    x = res2.x if res2.status == 0 else res.x
    return np.maximum(x[:M], 0.0)


def node_alpha(h, alpha="rho2", T=1.5):
    """The node weights: "rho2" ((6.6), closed form on trees, the generic solver on DAGs with the
    relaxation (6.8) at T), "directional" ((6.7); DAGs with (6.8) at T), "leaves" (1 on the leaves:
    the flat model) or an array of M non-negative weights (node index order)."""
    if isinstance(alpha, str):
        if alpha == "rho2":
            return alpha_rho2(h) if h.is_tree else alpha_qp(h, T)
        if alpha == "directional":
            return alpha_directional(h, 1.0 if h.is_tree else T)
        if alpha == "leaves":
            a = np.zeros(h.n_nodes)
            a[h.leaves] = 1.0
            return a
        raise ValueError(f"alpha must be 'rho2', 'directional', 'leaves' or an array; got {alpha!r}")
    a = np.asarray(alpha, dtype=np.float64).ravel()
    if a.shape[0] != h.n_nodes or np.any(a < 0) or not np.all(np.isfinite(a)):
        raise ValueError(f"alpha must hold {h.n_nodes} non-negative weights (one per node), got {a.shape[0]}")
    return a


def as_hierarchy(hierarchy):
    """A Hierarchy from a Hierarchy, a file path or an (parents, children) pair of id arrays."""
    if isinstance(hierarchy, Hierarchy):
        return hierarchy
    if isinstance(hierarchy, (str, bytes)) or hasattr(hierarchy, "__fspath__"):
        return read_hierarchy(hierarchy)
    if isinstance(hierarchy, (tuple, list)) and len(hierarchy) == 2:
        return Hierarchy.from_edges(*hierarchy)
    raise ValueError("hierarchy must be a Hierarchy, a file path or a (parents, children) pair of node id arrays; "
                     f"got {type(hierarchy).__name__}")
