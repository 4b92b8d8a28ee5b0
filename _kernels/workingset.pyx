# cython: language_level=3
"""Working sets shared by the dual solvers (see workingset.pxd)."""
import numpy as np

from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy

from ssvmlinear._kernels.structure cimport Structure


cdef class WorkingSets:
    """n working sets, initially empty; append() returns -1 when memory runs out."""

    def __cinit__(self):
        self.size = NULL
        self.cap = NULL
        self.lab = NULL
        self.alpha = NULL
        self.loss = NULL
        self.gram = NULL
        self.n = 0

    def __init__(self, Structure structure):
        cdef Py_ssize_t i, m
        self.st = structure
        m = max(structure.n_examples, 1)
        self.size = <int *> malloc(m * sizeof(int))
        self.cap = <int *> malloc(m * sizeof(int))
        self.lab = <int **> malloc(m * sizeof(int *))
        self.alpha = <double **> malloc(m * sizeof(double *))
        self.loss = <double **> malloc(m * sizeof(double *))
        self.gram = <double **> malloc(m * sizeof(double *))
        if not (self.size and self.cap and self.lab and self.alpha and self.loss and self.gram):
            raise MemoryError()
        self.n = structure.n_examples
        for i in range(self.n):
            self.size[i] = 0
            self.cap[i] = 0
            self.lab[i] = NULL
            self.alpha[i] = NULL
            self.loss[i] = NULL
            self.gram[i] = NULL

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.lab != NULL:
            for i in range(self.n):
                free(self.lab[i])
                free(self.alpha[i])
                free(self.loss[i])
                free(self.gram[i])
        free(self.size)
        free(self.cap)
        free(self.lab)
        free(self.alpha)
        free(self.loss)
        free(self.gram)

    cdef int find(self, Py_ssize_t i, const int *y) noexcept nogil:
        cdef Py_ssize_t L = self.st.label_len(i), t
        cdef int k
        cdef const int *lab
        for k in range(self.size[i]):
            lab = self.lab[i] + k * L
            t = 0
            while t < L and lab[t] == y[t]:
                t += 1
            if t == L:
                return k
        return -1

    cdef int _grow(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef int old = self.cap[i], new = 2 if self.cap[i] == 0 else 2 * self.cap[i], k, j
        cdef int *lab = <int *> realloc(self.lab[i], new * L * sizeof(int))
        if lab == NULL:
            return -1
        self.lab[i] = lab
        cdef double *a = <double *> realloc(self.alpha[i], new * sizeof(double))
        if a == NULL:
            return -1
        self.alpha[i] = a
        cdef double *l = <double *> realloc(self.loss[i], new * sizeof(double))
        if l == NULL:
            return -1
        self.loss[i] = l
        cdef double *g = <double *> malloc(new * new * sizeof(double))
        if g == NULL:
            return -1
        for k in range(self.size[i]):
            for j in range(self.size[i]):
                g[k * new + j] = self.gram[i][k * old + j]
        free(self.gram[i])
        self.gram[i] = g
        self.cap[i] = new
        return 0

    cdef int append(self, Py_ssize_t i, const int *y, double loss) noexcept nogil:
        """Add y to V_i with alpha 0 and its Gram row; returns its position (-1: out of memory)."""
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef int k = self.size[i], j, c
        if k == self.cap[i] and self._grow(i) < 0:
            return -1
        c = self.cap[i]
        memcpy(self.lab[i] + k * L, y, L * sizeof(int))
        self.alpha[i][k] = 0.0
        self.loss[i][k] = loss
        self.size[i] = k + 1
        for j in range(k + 1):
            self.gram[i][k * c + j] = self.st.gram(i, self.lab[i] + k * L, self.lab[i] + j * L)
            self.gram[i][j * c + k] = self.gram[i][k * c + j]
        return k

    cdef void keep(self, Py_ssize_t i, const char *flags) noexcept nogil:
        """Keep the members whose flag is nonzero (order preserved, Gram compacted in place)."""
        cdef Py_ssize_t L = self.st.label_len(i)
        cdef int n = self.size[i], c = self.cap[i], k, j, kk = 0, jj
        cdef double *G = self.gram[i]
        for k in range(n):
            if not flags[k]:
                continue
            if kk != k:
                memcpy(self.lab[i] + kk * L, self.lab[i] + k * L, L * sizeof(int))
                self.alpha[i][kk] = self.alpha[i][k]
                self.loss[i][kk] = self.loss[i][k]
            jj = 0
            for j in range(n):
                if flags[j]:
                    G[kk * c + jj] = G[k * c + j]
                    jj += 1
            kk += 1
        self.size[i] = kk

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
                    if self.alpha[i][k] != 0.0:
                        self.st.update(&w[0], i, self.alpha[i][k], self.label(i, k))

    def linear_term(self):
        """sum_i sum_k alpha_i(k) Delta_i(y_k)."""
        cdef Py_ssize_t i
        cdef int k
        cdef double s = 0.0
        for i in range(self.n):
            for k in range(self.size[i]):
                s += self.alpha[i][k] * self.loss[i][k]
        return s

    def get_state(self):
        """Working sets as plain arrays (for warm starts and pickling)."""
        cdef Py_ssize_t i, t, L
        cdef int k
        labels, alphas, losses = [], [], []
        for i in range(self.n):
            L = self.st.label_len(i)
            labels.append(np.array([self.lab[i][t] for t in range(self.size[i] * L)], dtype=np.int32))
            alphas.append(np.array([self.alpha[i][k] for k in range(self.size[i])], dtype=np.float64))
            losses.append(np.array([self.loss[i][k] for k in range(self.size[i])], dtype=np.float64))
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
                self.alpha[i][j] = alpha[apos + k] * scale[i]
            pos += sizes[i] * L
            apos += sizes[i]
