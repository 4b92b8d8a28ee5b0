# cython: language_level=3
"""The label store (see labels.pxd)."""
import numpy as np

from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memmove
from libc.stdint cimport int64_t
from cpython.pythread cimport (PyThread_allocate_lock, PyThread_free_lock, PyThread_acquire_lock,
                               PyThread_release_lock, WAIT_LOCK)

from ssvmlinear._kernels.structure cimport Structure

cdef extern from "memory_compat.h" nogil:
    void ssvm_release_free_memory()

# A store this large for one example means something else is wrong: report out of memory.
cdef int MAX_LABELS = 1000000
# Freeing a store of at least this many examples hands the heap's free pages back to the system.
cdef Py_ssize_t TRIM_EXAMPLES = 4096
# Arena chunks (in 8-byte words): a new chunk holds a quarter of what the store has, within these
# bounds (small stores stay small; a large one has at most a few dozen chunks), or one big block.
cdef Py_ssize_t MIN_CHUNK_WORDS = 1024
cdef Py_ssize_t MAX_CHUNK_WORDS = 1 << 19
# The solvers compact a store between visits once dead blocks hold this share of the arena's used
# words: its peak stays within 1 + COMPACT_WASTE of its live size, at an amortised copy per word.
cdef double COMPACT_WASTE = 0.25
# compaction frees chunks; when they add up to this many words, the heap's free pages go back too.
cdef Py_ssize_t TRIM_WORDS = 1 << 21


cdef inline long long* _header(double *body) noexcept nogil:
    return <long long *> (body - 1)


cdef class LabelStore:
    """n per-example label lists, initially empty, with the named double columns col_names per
    label; max_size > 0 makes each list a ring of that many labels; with_gram keeps the Gram
    matrix of each list's dphi."""

    def __cinit__(self):
        self.size = NULL
        self.cap = NULL
        self.ring = NULL
        self.block = NULL
        self.chunks = NULL
        self.chunk_used = NULL
        self.chunk_words = NULL
        self.n_chunks = self.max_chunks = 0
        self.arena_words = self.garbage_words = self.used_words = 0
        self.lock = NULL
        self.n = 0

    def __init__(self, Structure structure, col_names=(), int max_size=0, bint with_gram=False):
        cdef Py_ssize_t i, m = max(structure.n_examples, 1)
        self.st = structure
        self.col_names = tuple(col_names)
        self.n_cols = len(self.col_names)
        self.max_size = max(max_size, 0)
        self.with_gram = with_gram
        self.work_arr = np.zeros(max(structure.workspace_size(), 1) if with_gram else 1)
        self.work = &self.work_arr[0]
        self.size = <int *> calloc(m, sizeof(int))
        self.cap = <int *> calloc(m, sizeof(int))
        # only a bounded store keeps ring positions (one int per example saved otherwise)
        self.ring = <int *> calloc(m if self.max_size > 0 else 1, sizeof(int))
        self.block = <double **> calloc(m, sizeof(double *))
        self.lock = PyThread_allocate_lock()
        if not (self.size and self.cap and self.ring and self.block and self.lock):
            raise MemoryError()
        self.n = structure.n_examples

    def __dealloc__(self):
        cdef Py_ssize_t c
        for c in range(self.n_chunks):
            free(self.chunks[c])
        free(self.chunks)
        free(self.chunk_used)
        free(self.chunk_words)
        if self.lock != NULL:
            PyThread_free_lock(self.lock)
        free(self.size)
        free(self.cap)
        free(self.ring)
        free(self.block)
        if self.n >= TRIM_EXAMPLES:
            ssvm_release_free_memory()

    cdef int find(self, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef int k
        cdef const int *lab = self.labels(i)
        for k in range(self.size[i]):
            if self.st.same_label(i, lab + k * L, y):
                return k
        return -1

    cdef int victim(self, Py_ssize_t i) noexcept nogil:
        if self.max_size > 0 and self.size[i] == self.max_size:
            return self.ring[i]
        return -1

    cdef Py_ssize_t _block_words(self, Py_ssize_t i, Py_ssize_t cap) noexcept nogil:
        """Words of example i's block at capacity cap, its header included."""
        return (1 + (cap * self.st.label_len(i) + 1) // 2 + self.n_cols * cap
                + (cap * cap if self.with_gram else 0))

    cdef double* _take(self, Py_ssize_t words) noexcept nogil:
        """A block of `words` from the end of the last chunk, or a new chunk (NULL: out of memory)."""
        cdef double *b = NULL
        cdef double **chunks
        cdef Py_ssize_t *sizes
        cdef Py_ssize_t c = self.n_chunks - 1, fresh
        cdef int grown
        PyThread_acquire_lock(self.lock, WAIT_LOCK)
        if c >= 0 and self.chunk_used[c] + words <= self.chunk_words[c]:
            b = self.chunks[c] + self.chunk_used[c]
            self.chunk_used[c] += words
            self.used_words += words
        else:
            if self.n_chunks == self.max_chunks:
                # (each array that grows is kept; the capacity counts only when all three grew)
                fresh = max(8, 2 * self.max_chunks)
                grown = 0
                chunks = <double **> realloc(self.chunks, fresh * sizeof(double *))
                if chunks != NULL:
                    self.chunks = chunks
                    grown += 1
                sizes = <Py_ssize_t *> realloc(self.chunk_used, fresh * sizeof(Py_ssize_t))
                if sizes != NULL:
                    self.chunk_used = sizes
                    grown += 1
                sizes = <Py_ssize_t *> realloc(self.chunk_words, fresh * sizeof(Py_ssize_t))
                if sizes != NULL:
                    self.chunk_words = sizes
                    grown += 1
                if grown == 3:
                    self.max_chunks = fresh
            if self.n_chunks < self.max_chunks:
                fresh = max(words, min(MAX_CHUNK_WORDS, max(MIN_CHUNK_WORDS, self.arena_words // 4)))
                b = <double *> malloc(fresh * sizeof(double))
                if b != NULL:
                    c = self.n_chunks
                    self.chunks[c] = b
                    self.chunk_used[c] = words
                    self.chunk_words[c] = fresh
                    self.n_chunks += 1
                    self.arena_words += fresh
                    self.used_words += words
        PyThread_release_lock(self.lock)
        return b

    cdef int _grow(self, Py_ssize_t i) noexcept nogil:
        """Grow list i's capacity by half (at least 2): a new block, contents and Gram copied, the
        old block left as garbage for compact()."""
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef Py_ssize_t old = self.cap[i], new = 2 if old < 2 else old + (old + 1) // 2
        cdef Py_ssize_t n = self.size[i], words
        if self.max_size > 0 and new > self.max_size:
            new = self.max_size
        if new > MAX_LABELS:
            return -1
        words = self._block_words(i, new)
        cdef double *b = self._take(words)
        if b == NULL:
            return -1
        _header(b + 1)[0] = i
        b = b + 1
        if self.block[i] != NULL:
            self._relayout(b, self.block[i], n, L, old, new)
            words = self._block_words(i, old)
            _header(self.block[i])[0] = -words
            PyThread_acquire_lock(self.lock, WAIT_LOCK)
            self.garbage_words += words
            PyThread_release_lock(self.lock)
        self.block[i] = b
        self.cap[i] = <int> new
        return 0

    cdef void _relayout(self, double *dst, const double *src, Py_ssize_t n, Py_ssize_t L,
                        Py_ssize_t old, Py_ssize_t new) noexcept nogil:
        """Copy a list of n labels (of L ints) from a block body of capacity old to one of capacity
        new: each column, each Gram row, the labels. A new block (growth) does not overlap the old
        one; a block that slides down and shrinks (compaction) moves every piece down, so no piece
        overwrites one still to be moved."""
        cdef Py_ssize_t c, k
        for c in range(self.n_cols):
            memmove(dst + c * new, src + c * old, n * sizeof(double))
        if self.with_gram:
            for k in range(n):
                memmove(dst + (self.n_cols + k) * new, src + (self.n_cols + k) * old, n * sizeof(double))
        memmove(dst + (self.n_cols + (new if self.with_gram else 0)) * new,
                src + (self.n_cols + (old if self.with_gram else 0)) * old, n * L * sizeof(int))

    def compact(self):
        """Compact now if there are dead blocks (tests; the solvers call maybe_compact)."""
        if self.garbage_words == 0:
            return False
        self._compact()
        return True

    cdef bint maybe_compact(self) noexcept nogil:
        if self.garbage_words == 0 or self.garbage_words <= COMPACT_WASTE * self.used_words:
            return False
        self._compact()
        return True

    cdef void _compact(self) noexcept nogil:
        """Reclaim the dead blocks: the live blocks slide down in arena order, each shrunk to its
        list's size plus a third (a dual solver's lists also shed labels), emptied chunks are
        freed. Every pointer into the store is invalid afterwards: call it between visits, with no
        thread appending."""
        cdef Py_ssize_t rc, ro, wc = 0, wo = 0, words, new_words, owner, freed = 0, c, kept = 0
        cdef Py_ssize_t n, old, new
        cdef long long h
        cdef double *src
        cdef double *dst
        for rc in range(self.n_chunks):
            ro = 0
            while ro < self.chunk_used[rc]:
                src = self.chunks[rc] + ro
                h = (<long long *> src)[0]
                if h < 0:
                    ro += -h
                    continue
                owner = <Py_ssize_t> h
                old = self.cap[owner]
                n = self.size[owner]
                new = min(old, max(2, n + (n + 2) // 3))
                if self.max_size > 0:
                    new = old
                words = self._block_words(owner, old)
                new_words = self._block_words(owner, new)
                # the write position never passes the read one, and a block always fits where it is
                while wc < rc and wo + new_words > self.chunk_words[wc]:
                    self.chunk_used[wc] = wo
                    wc += 1
                    wo = 0
                dst = self.chunks[wc] + wo
                if new == old:
                    if dst != src:
                        memmove(dst, src, words * sizeof(double))
                else:
                    (<long long *> dst)[0] = (<long long *> src)[0]
                    self._relayout(dst + 1, src + 1, n, self.st.label_len(owner), old, new)
                    self.cap[owner] = <int> new
                self.block[owner] = dst + 1
                wo += new_words
                ro += words
        if self.n_chunks:
            self.chunk_used[wc] = wo
        # chunks past the write position, and any the write position skipped, are empty
        for c in range(self.n_chunks):
            if c > wc or (c < wc and self.chunk_used[c] == 0):
                free(self.chunks[c])
                freed += self.chunk_words[c]
            else:
                self.chunks[kept] = self.chunks[c]
                self.chunk_used[kept] = self.chunk_used[c]
                self.chunk_words[kept] = self.chunk_words[c]
                kept += 1
        self.n_chunks = kept
        self.arena_words -= freed
        self.garbage_words = 0
        self.used_words = 0
        for c in range(self.n_chunks):
            self.used_words += self.chunk_used[c]
        if freed >= TRIM_WORDS:
            ssvm_release_free_memory()

    def arena_stats(self):
        """(words in chunks, words in use, words in dead blocks, number of chunks)."""
        return self.arena_words, self.used_words, self.garbage_words, self.n_chunks

    cdef int append(self, Py_ssize_t i, const int *y) noexcept nogil:
        return self.append_using(i, y, self.work)

    cdef int append_using(self, Py_ssize_t i, const int *y, double *work) noexcept nogil:
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef Py_ssize_t k, j, c, n
        k = self.victim(i)
        if k >= 0:
            self.ring[i] = <int> ((k + 1) % self.max_size)
        else:
            k = self.size[i]
            if k == self.cap[i] and self._grow(i) < 0:
                return -1
            self.size[i] = <int> (k + 1)
        c = self.cap[i]
        n = self.size[i]
        cdef int *lab = self.labels(i)
        cdef double *G = self.gram(i)
        memcpy(lab + k * L, y, L * sizeof(int))
        for j in range(self.n_cols):
            self.col(i, <int> j)[k] = 0.0
        if G != NULL:
            self.st.gram_row(i, lab + k * L, lab, <int> n, G + k * c, work)
            for j in range(n):
                G[j * c + k] = G[k * c + j]
        return <int> k

    cdef void keep(self, Py_ssize_t i, const char *flags) noexcept nogil:
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef Py_ssize_t n = self.size[i], c = self.cap[i], k, j, kk = 0, jj, q
        cdef int *lab = self.labels(i)
        cdef double *G = self.gram(i)
        cdef double *col
        for k in range(n):
            if not flags[k]:
                continue
            if kk != k:
                memcpy(lab + kk * L, lab + k * L, L * sizeof(int))
                for q in range(self.n_cols):
                    col = self.col(i, <int> q)
                    col[kk] = col[k]
            if G != NULL:
                jj = 0
                for j in range(n):
                    if flags[j]:
                        G[kk * c + jj] = G[k * c + j]
                        jj += 1
            kk += 1
        self.size[i] = <int> kk
        if self.max_size > 0:
            self.ring[i] = 0

    # ---------------------------------------------------------------- Python-level access

    def py_append(self, Py_ssize_t i, const int[::1] y, values=()):
        """append(i, y) with the given column values (tests); returns the slot."""
        cdef int k = self.append(i, &y[0])
        if k < 0:
            raise MemoryError()
        for c, v in enumerate(values):
            self.col(i, c)[k] = v
        return k

    def py_keep(self, Py_ssize_t i, flags):
        cdef signed char[::1] f = np.ascontiguousarray(flags, dtype=np.int8)
        self.keep(i, <const char *> &f[0])

    def py_gram(self, Py_ssize_t i):
        """Example i's Gram matrix (size x size), or None without one."""
        cdef int n = self.size[i], c = self.cap[i], k, j
        if not self.with_gram:
            return None
        return np.array([[self.gram(i)[k * c + j] for j in range(n)] for k in range(n)]).reshape(n, n)


    def sizes(self):
        return np.array(<int[:self.n]> self.size, dtype=np.int64) if self.n else np.zeros(0, np.int64)

    def _rings(self):
        if self.max_size == 0 or self.n == 0:
            return np.zeros(self.n, dtype=np.int64)
        return np.array(<int[:self.n]> self.ring, dtype=np.int64)

    def get_state(self):
        """The lists as plain arrays (warm starts, pickling): sizes (n), labels (concatenated) and
        one array per column."""
        cdef Py_ssize_t i, L, k, pos = 0, lpos = 0
        cdef int c
        sizes = self.sizes()
        cdef const int64_t[::1] sz = sizes
        cdef Py_ssize_t total = 0, total_labels = 0
        for i in range(self.n):
            total += sz[i]
            total_labels += sz[i] * self.st.label_len(i)
        labels_arr = np.empty(total_labels, dtype=np.int32)
        cols_arr = np.empty((self.n_cols, total), dtype=np.float64)
        cdef int[::1] lab = labels_arr
        cdef double[:, ::1] cols = cols_arr
        cdef const int *y
        cdef const double *col
        with nogil:     # one copy per column and label block, no per-example arrays
            for i in range(self.n):
                if sz[i] == 0:
                    continue
                L = self.st.label_len(i)
                y = self.labels(i)
                for k in range(sz[i] * L):
                    lab[lpos + k] = y[k]
                for c in range(self.n_cols):
                    col = self.col(i, c)
                    for k in range(sz[i]):
                        cols[c, pos + k] = col[k]
                lpos += sz[i] * L
                pos += sz[i]
        state = dict(sizes=sizes, labels=labels_arr, ring=self._rings())
        for c in range(self.n_cols):
            state[self.col_names[c]] = cols_arr[c].copy()
        return state

    def load(self, state):
        """Replace the lists by `state` (get_state()): labels, every column it has (others 0) and
        the ring positions, so that a store continues exactly where the saved one left off."""
        sizes, labels, loss, offsets = self.state_offsets(state)
        cdef int[::1] lab = labels
        cdef Py_ssize_t i, L, pos = 0
        cdef int k, j, c
        # the columns the state has, one row each (others stay 0)
        have = np.array([name in state for name in self.col_names], dtype=np.int8)
        cols_arr = np.zeros((self.n_cols, int(sizes.sum())), dtype=np.float64)
        for c, name in enumerate(self.col_names):
            if name in state:
                if np.shape(state[name]) != (cols_arr.shape[1],):
                    raise ValueError(f"state: {name} has {np.size(state[name])} values, {cols_arr.shape[1]} expected")
                cols_arr[c] = state[name]
        cdef const double[:, ::1] cols = cols_arr
        cdef const signed char[::1] has = have
        cdef const int64_t[::1] sz = sizes, off = offsets
        ring_arr = np.ascontiguousarray(state.get("ring", np.zeros(self.n)), dtype=np.int64)
        cdef const int64_t[::1] ring = ring_arr
        for i in range(self.n):
            L = self.st.label_len(i)
            self.size[i] = 0
            if self.max_size > 0:
                self.ring[i] = 0
            for k in range(<int> sz[i]):
                j = self.append(i, &lab[off[i] + k * L])
                if j < 0:
                    raise MemoryError()
                for c in range(self.n_cols):
                    if has[c]:
                        self.col(i, c)[j] = cols[c, pos + k]
            if self.max_size > 0:
                self.ring[i] = <int> ring[i]
            pos += sz[i]

    def state_offsets(self, state, what="state"):
        """Validate `state` (get_state()'s layout) for this structure; returns (sizes, labels, the
        "loss" column (zeros when absent), label offset per example)."""
        sizes = np.ascontiguousarray(state["sizes"], dtype=np.int64)
        labels = np.ascontiguousarray(state["labels"], dtype=np.int32)
        loss = np.ascontiguousarray(state["loss"] if "loss" in state else np.zeros(int(sizes.sum())),
                                    dtype=np.float64)
        if sizes.shape[0] != self.n:
            raise ValueError(f"{what}: one size per example expected ({self.n} examples, {sizes.shape[0]} sizes)")
        lens = np.array([self.st.label_len(i) for i in range(self.n)], dtype=np.int64)
        offsets = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(sizes * lens, out=offsets[1:])
        if offsets[-1] != labels.shape[0] or loss.shape[0] != sizes.sum():
            raise ValueError(f"{what}: sizes, labels and loss disagree")
        return sizes, labels, loss, offsets


cdef class WorkingSets(LabelStore):
    """Working sets of the dual solvers, initially empty; append() returns -1 when memory runs out."""

    def __init__(self, Structure structure, bint with_aux=False):
        LabelStore.__init__(self, structure, ("alpha", "loss", "aux") if with_aux else ("alpha", "loss"), 0,
                            not structure.cheap_gram)

    def add_to_w(self, double[::1] w, const signed char[::1] only=None):
        """w += sum_i sum_k alpha_i(k) dphi_i(y_k) (only: the examples whose flag is nonzero)."""
        cdef Py_ssize_t i
        cdef int k
        cdef bint every = only is None
        with nogil:
            for i in range(self.n):
                if not every and not only[i]:
                    continue
                for k in range(self.size[i]):
                    if self.alpha(i)[k] != 0.0:
                        self.st.update(&w[0], i, self.alpha(i)[k], self.label(i, k))

    def linear_term(self, const signed char[::1] only=None):
        """sum_i sum_k alpha_i(k) Delta_i(y_k) (only: the examples whose flag is nonzero)."""
        cdef Py_ssize_t i
        cdef int k
        cdef double s = 0.0
        cdef const double *alpha
        cdef const double *loss
        cdef bint every = only is None
        with nogil:     # (after every pass of the dual solvers: their gain rule)
            for i in range(self.n):
                if not every and not only[i]:
                    continue
                alpha = self.alpha(i)
                loss = self.loss(i)
                for k in range(self.size[i]):
                    s += alpha[k] * loss[k]
        return s

    def set_state(self, state, const double[::1] scale):
        """Replace the working sets by `state` (get_state()), alphas multiplied by scale[i]."""
        self.load(state)
        self.scale(scale)

    def scale(self, const double[::1] factor):
        """Multiply example i's alphas by factor[i]."""
        cdef Py_ssize_t i
        cdef int k
        for i in range(self.n):
            for k in range(self.size[i]):
                self.alpha(i)[k] *= factor[i]
