# The one label store: per-example lists of labels with a few doubles per label, used by the dual
# working sets (alpha, loss, aux, and a Gram matrix), the cutting-plane caches (loss, in-constraint
# flag; a ring for margin rescaling), Pegasos' warm-start cache (a ring) -- and the searches compare
# labels the same way. A label of example i is label_len(i) ints whose layout the structure owns
# (an integral labelling, or a relaxed label: per-variable and per-edge marginals); equality is
# the structure's same_label().
#
# All of an example's arrays live in one block (the columns, then the Gram matrix
# G[k, j] = dphi_i(y_k) . dphi_i(y_j), row stride cap[i], computed once when a label enters, then the
# labels, each at an offset the capacity alone gives), so a visit touches one memory block. Blocks
# are carved from a few large chunks (an arena: no allocator header per example); a list that grows
# (capacity x1.5) moves to a new block and leaves its old one as garbage, which maybe_compact()
# reclaims by sliding the live blocks down -- the solvers call it between visits, when no pointer
# into the store is held and no thread appends. Examples are independent:
# threads may append to different examples concurrently (the arena's bump allocation takes a
# lock; a store with a Gram matrix uses its own scratch: one thread).
from cpython.pythread cimport PyThread_type_lock

from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.dataset cimport ssvm_prefetch


cdef class LabelStore:
    cdef Structure st
    cdef Py_ssize_t n
    cdef readonly int n_cols          # doubles kept per label (zero on entry)
    cdef readonly int max_size        # > 0: a ring of this many labels (append replaces the oldest)
    cdef readonly bint with_gram
    cdef readonly tuple col_names
    cdef int *size
    cdef int *cap
    cdef int *ring                    # bounded stores only (max_size > 0): the slot the next append replaces
    cdef double **block               # per example: columns | Gram | labels (after a one-word header)
    cdef double[::1] work_arr         # scratch for gram_row
    cdef double *work
    # the arena: chunks of words (doubles) filled in order; a block is a header word (>= 0: the
    # owning example; < 0: a dead block of -header words) and the example's arrays
    cdef double **chunks
    cdef Py_ssize_t *chunk_used
    cdef Py_ssize_t *chunk_words
    cdef Py_ssize_t n_chunks, max_chunks
    cdef Py_ssize_t arena_words       # words in all chunks
    cdef Py_ssize_t garbage_words     # words in dead blocks
    cdef Py_ssize_t used_words        # words in blocks, live or dead
    cdef PyThread_type_lock lock

    cdef int find(self, Py_ssize_t i, const int *y) noexcept nogil
    # the slot the next append of a new label to example i overwrites, -1 when it grows instead
    cdef int victim(self, Py_ssize_t i) noexcept nogil
    # store y (columns zero, Gram row computed); returns its slot, -1 when memory runs out
    cdef int append(self, Py_ssize_t i, const int *y) noexcept nogil
    # the same with the caller's scratch for the Gram row (threads appending concurrently)
    cdef int append_using(self, Py_ssize_t i, const int *y, double *work) noexcept nogil
    # keep the labels whose flag is nonzero (order preserved, Gram compacted in place)
    cdef void keep(self, Py_ssize_t i, const char *flags) noexcept nogil
    cdef int _grow(self, Py_ssize_t i) noexcept nogil
    cdef Py_ssize_t _block_words(self, Py_ssize_t i, Py_ssize_t cap) noexcept nogil
    cdef double* _take(self, Py_ssize_t words) noexcept nogil
    # compact when dead blocks hold over COMPACT_WASTE of the used words (between visits)
    cdef bint maybe_compact(self) noexcept nogil
    cdef void _compact(self) noexcept nogil
    cdef void _relayout(self, double *dst, const double *src, Py_ssize_t n, Py_ssize_t L,
                        Py_ssize_t old, Py_ssize_t new) noexcept nogil

    cdef inline int* labels(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t c = self.cap[i]
        return <int *> (self.block[i] + (self.n_cols + (c if self.with_gram else 0)) * c)

    cdef inline const int* label(self, Py_ssize_t i, int k) noexcept nogil:
        return self.labels(i) + k * self.st.label_len(i)

    cdef inline double* col(self, Py_ssize_t i, int c) noexcept nogil:
        return self.block[i] + c * self.cap[i]

    cdef inline void cache_block(self, Py_ssize_t i) noexcept nogil:
        """Start loading example i's block into the cache (a hint: a visit ahead)."""
        if self.block[i] != NULL:
            ssvm_prefetch(self.block[i], self._block_words(i, self.cap[i]) * sizeof(double), 1)

    cdef inline double* gram(self, Py_ssize_t i) noexcept nogil:
        if not self.with_gram:
            return NULL
        return self.block[i] + self.n_cols * self.cap[i]


cdef class WorkingSets(LabelStore):
    # The dual solvers' working sets V_i: alpha, task loss and, for a solver that asks (with_aux),
    # a value it keeps per member (aux); the Gram matrix unless the structure's gram() is cheap (cheap_gram: solvers
    # then compute the rows they need).
    cdef inline double* alpha(self, Py_ssize_t i) noexcept nogil:
        return self.col(i, 0)

    cdef inline double* loss(self, Py_ssize_t i) noexcept nogil:
        return self.col(i, 1)

    cdef inline double* aux(self, Py_ssize_t i) noexcept nogil:
        return self.col(i, 2)

    cdef inline int add(self, Py_ssize_t i, const int *y, double loss) noexcept nogil:
        """append() with the label's task loss; alpha and aux 0."""
        return self.add_using(i, y, loss, self.work)

    cdef inline int add_using(self, Py_ssize_t i, const int *y, double loss, double *work) noexcept nogil:
        """add() with the caller's scratch (workspace_size() doubles) for the Gram row."""
        cdef int k = self.append_using(i, y, work)
        if k >= 0:
            self.col(i, 1)[k] = loss
        return k
