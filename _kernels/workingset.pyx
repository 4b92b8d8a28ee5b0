# cython: language_level=3
"""Working sets shared by the dual solvers (see workingset.pxd)."""
import numpy as np

from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from ssvmlinear._kernels.structure cimport Structure


cdef class WorkingSets:
    """n working sets, initially empty; append() returns -1 when memory runs out."""

    def __cinit__(self):
        self.size = NULL
        self.cap = NULL
        self.label_ints = NULL
        self.block = NULL
        self.n = 0

    def __init__(self, Structure structure):
        cdef Py_ssize_t i, m
        self.st = structure
        self.cache_gram = not structure.cheap_gram
        self.work_arr = np.zeros(max(structure.workspace_size(), 1))
        self.work = &self.work_arr[0]
        m = max(structure.n_examples, 1)
        self.size = <int *> malloc(m * sizeof(int))
        self.cap = <int *> malloc(m * sizeof(int))
        self.label_ints = <Py_ssize_t *> malloc(m * sizeof(Py_ssize_t))
        self.block = <double **> malloc(m * sizeof(double *))
        if not (self.size and self.cap and self.label_ints and self.block):
            raise MemoryError()
        self.n = structure.n_examples
        for i in range(self.n):
            self.size[i] = 0
            self.cap[i] = 0
            self.label_ints[i] = 0
            self.block[i] = NULL

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.block != NULL:
            for i in range(self.n):
                free(self.block[i])
        free(self.size)
        free(self.cap)
        free(self.label_ints)
        free(self.block)

    cdef int find(self, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t L = self.st.label_len(i), t
        cdef int k
        cdef const int *lab = self.labels(i)
        for k in range(self.size[i]):
            t = 0
            while t < L and lab[t] == y[t]:
                t += 1
            if t == L:
                return k
            lab += L
        return -1

    cdef int _grow(self, Py_ssize_t i) noexcept nogil:
        """Double the capacity of V_i (one new block; contents and Gram copied)."""
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef Py_ssize_t old = self.cap[i], new = 2 if old == 0 else 2 * old, n = self.size[i], k, j
        if new > 1000000:  # a working set this large means something else is wrong; report OOM
            return -1
        cdef Py_ssize_t lints = ((new * L + 1) // 2) * 2
        cdef double *b = <double *> malloc((lints // 2 + 3 * new + (new * new if self.cache_gram else 0))
                                           * sizeof(double))
        if b == NULL:
            return -1
        cdef double *a_new = b + lints // 2
        cdef double *g_new = a_new + 3 * new
        if self.block[i] != NULL:
            memcpy(b, self.block[i], n * L * sizeof(int))
            memcpy(a_new, self.alpha(i), n * sizeof(double))
            memcpy(a_new + new, self.loss(i), n * sizeof(double))
            memcpy(a_new + 2 * new, self.aux(i), n * sizeof(double))
            if self.cache_gram:
                for k in range(n):
                    for j in range(n):
                        g_new[k * new + j] = self.gram(i)[k * old + j]
            free(self.block[i])
        self.block[i] = b
        self.cap[i] = <int> new
        self.label_ints[i] = lints
        return 0

    cdef int append(self, Py_ssize_t i, const int *y, double loss) noexcept nogil:
        """Add y to V_i with alpha 0 and its Gram row; returns its position (-1: out of memory)."""
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef Py_ssize_t k = self.size[i], j, c
        if k == self.cap[i] and self._grow(i) < 0:
            return -1
        c = self.cap[i]
        cdef int *lab = self.labels(i)
        cdef double *G = self.gram(i)
        memcpy(lab + k * L, y, L * sizeof(int))
        self.alpha(i)[k] = 0.0
        self.loss(i)[k] = loss
        self.aux(i)[k] = 0.0
        self.size[i] = <int> (k + 1)
        if G != NULL:
            self.st.gram_row(i, lab + k * L, lab, <int> (k + 1), G + k * c, self.work)
            for j in range(k):
                G[j * c + k] = G[k * c + j]
        return <int> k

    cdef void keep(self, Py_ssize_t i, const char *flags) noexcept nogil:
        """Keep the members whose flag is nonzero (order preserved, Gram compacted in place)."""
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef Py_ssize_t n = self.size[i], c = self.cap[i], k, j, kk = 0, jj
        cdef int *lab = self.labels(i)
        cdef double *alpha = self.alpha(i)
        cdef double *loss = self.loss(i)
        cdef double *aux = self.aux(i)
        cdef double *G = self.gram(i)
        for k in range(n):
            if not flags[k]:
                continue
            if kk != k:
                memcpy(lab + kk * L, lab + k * L, L * sizeof(int))
                alpha[kk] = alpha[k]
                loss[kk] = loss[k]
                aux[kk] = aux[k]
            if G != NULL:
                jj = 0
                for j in range(n):
                    if flags[j]:
                        G[kk * c + jj] = G[k * c + j]
                        jj += 1
            kk += 1
        self.size[i] = <int> kk

    # ---------------------------------------------------------------- Python-level access

    def sizes(self):
        return np.array([self.size[i] for i in range(self.n)], dtype=np.int64)

    def add_to_w(self, double[::1] w):
        """w += sum_i sum_k alpha_i(k) dphi_i(y_k)."""
        cdef Py_ssize_t i
        cdef int k
        with nogil:
            for i in range(self.n):
                for k in range(self.size[i]):
                    if self.alpha(i)[k] != 0.0:
                        self.st.update(&w[0], i, self.alpha(i)[k], self.label(i, k))

    def linear_term(self):
        """sum_i sum_k alpha_i(k) Delta_i(y_k)."""
        cdef Py_ssize_t i
        cdef int k
        cdef double s = 0.0
        for i in range(self.n):
            for k in range(self.size[i]):
                s += self.alpha(i)[k] * self.loss(i)[k]
        return s

    def get_state(self):
        """Working sets as plain arrays (for warm starts and pickling)."""
        cdef Py_ssize_t i, t, L
        cdef int k
        labels, alphas, losses = [], [], []
        for i in range(self.n):
            L = self.st.label_len(i)
            labels.append(np.array([self.labels(i)[t] for t in range(self.size[i] * L)], dtype=np.int32))
            alphas.append(np.array([self.alpha(i)[k] for k in range(self.size[i])], dtype=np.float64))
            losses.append(np.array([self.loss(i)[k] for k in range(self.size[i])], dtype=np.float64))
        cat = lambda a, dt: np.concatenate(a).astype(dt) if a else np.zeros(0, dt)
        return dict(sizes=self.sizes(), labels=cat(labels, np.int32), alpha=cat(alphas, np.float64),
                    loss=cat(losses, np.float64))

    def set_state(self, state, const double[::1] scale):
        """Replace the working sets by `state`, alphas multiplied by scale[i]."""
        cdef long long[::1] sizes = np.ascontiguousarray(state["sizes"], dtype=np.int64)
        cdef int[::1] labels = np.ascontiguousarray(state["labels"], dtype=np.int32)
        cdef double[::1] alpha = np.ascontiguousarray(state["alpha"], dtype=np.float64)
        cdef double[::1] loss = np.ascontiguousarray(state["loss"], dtype=np.float64)
        cdef Py_ssize_t i, L, pos = 0, apos = 0
        cdef int k, j
        if sizes.shape[0] != self.n:
            raise ValueError("warm start: the number of examples changed")
        for i in range(self.n):
            L = self.st.label_len(i)
            self.size[i] = 0
            for k in range(<int> sizes[i]):
                j = self.append(i, &labels[pos + k * L], loss[apos + k])
                if j < 0:
                    raise MemoryError()
                self.alpha(i)[j] = alpha[apos + k] * scale[i]
            pos += sizes[i] * L
            apos += sizes[i]
