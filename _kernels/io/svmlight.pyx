# cython: language_level=3
"""svmlight / libsvm text parser: one nogil C pass over a whole file's bytes.

``parse(buf, kind, forbid_zero)`` scans the bytes of a (decompressed) file and returns raw arrays;
``ssvmlinear.io`` turns them into CSR matrices and label arrays and formats error messages. No
Python object is created per line or per token; output buffers are malloc'ed, grown by doubling and
handed to NumPy without a copy. Only typed memoryviews are used (no ``cimport numpy``).

Line grammar (``#`` starts a comment anywhere; blank and comment-only lines are skipped)::

    line    := [labels] [qid:INT] (INDEX:VALUE)*
    labels  := NUMBER (',' NUMBER)*      -- a first token without ':'; absent = empty label set

Whitespace is ASCII space, \\t, \\n, \\v, \\f, \\r (what ``bytes.split()`` splits on). Numbers are
parsed by ``core/parse_numbers.h`` (C ``strtod`` in the "C" locale, correctly rounded on glibc, so
equal to Python's ``float``; hexadecimal floats, NaN and infinities are errors).
"""
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memchr, memcpy, memcmp
from libc.stdint cimport int64_t, int32_t, uint64_t, uint8_t
from libc.math cimport isfinite, signbit
from cython.view cimport array as cvarray

import numpy as np


cdef extern from "parse_numbers.h":
    ctypedef void *ssvm_locale_t
    ssvm_locale_t ssvm_new_c_locale() noexcept nogil
    void ssvm_free_locale(ssvm_locale_t loc) noexcept nogil
    int parse_double "ssvm_parse_double" (const char *s, const char *e, double *out,
                                          ssvm_locale_t loc) noexcept nogil
    bint is_ws "ssvm_is_ws" (char c) noexcept nogil
    bint is_digit "ssvm_is_digit" (char c) noexcept nogil


# kinds (must match ssvmlinear.io)
cdef enum:
    KIND_AUTO = 0
    KIND_MULTICLASS = 1
    KIND_MULTILABEL = 2
    KIND_SEQUENCE = 3

# error codes (messages are written by ssvmlinear.io)
cdef enum:
    E_OK = 0
    E_NOMEM = 1
    E_BAD_LABEL = 2
    E_NONFINITE_LABEL = 3
    E_MISSING_LABEL = 4
    E_MULTI_LABEL = 5
    E_BAD_TOKEN = 6
    E_BAD_INDEX = 7
    E_NEG_INDEX = 8
    E_ZERO_INDEX = 9
    E_BIG_INDEX = 10
    E_UNSORTED = 11
    E_BAD_VALUE = 12
    E_NONFINITE_VALUE = 13
    E_BAD_QID = 14
    E_QID_POSITION = 15
    E_MISSING_QID = 16

# largest raw feature index accepted: columns stay addressable with int32 indices
cdef int64_t MAX_INDEX = 2147483646
cdef int ERR_TOKEN_MAX = 80


cdef struct Parser:
    int kind
    bint forbid_zero
    ssvm_locale_t loc
    # features
    double *data
    int32_t *indices
    int64_t nnz
    int64_t cap_nnz
    # rows (examples)
    int64_t *indptr        # cap_rows + 1
    int64_t *labptr        # cap_rows + 1
    int64_t *qid
    uint8_t *hasqid
    int64_t *lines
    int64_t n_rows
    int64_t cap_rows
    # label values
    double *labels
    int64_t n_lab
    int64_t cap_lab
    # summary
    int64_t lineno
    int64_t max_index
    bint saw_qid
    bint saw_multi
    bint saw_zero
    # error
    int err
    int64_t err_line
    int64_t err_aux
    int err_len
    char err_tok[80]


cdef int parse_int(const char *s, const char *e, int64_t limit, int64_t *out) noexcept nogil:
    """Parse [s, e) as a decimal integer: 0 ok, 1 malformed, 2 negative, 3 above limit."""
    cdef const char *p = s
    cdef bint neg = False
    cdef int64_t v = 0
    if p < e and (p[0] == b'-' or p[0] == b'+'):
        neg = p[0] == b'-'
        p += 1
    if p >= e:
        return 1
    while p < e:
        if not is_digit(p[0]):
            return 1
        if v <= limit:
            v = v * 10 + (p[0] - 48)
        p += 1
    if neg and v != 0:
        return 2
    if v > limit:
        return 3
    out[0] = v
    return 0


cdef int parse_qid(const char *s, const char *e, int64_t *out) noexcept nogil:
    """Signed decimal qid (at most 18 digits): 0 ok, 1 malformed."""
    cdef const char *p = s
    cdef bint neg = False
    cdef int64_t v = 0
    cdef int nd = 0
    if p < e and (p[0] == b'-' or p[0] == b'+'):
        neg = p[0] == b'-'
        p += 1
    if p >= e:
        return 1
    while p < e:
        if not is_digit(p[0]) or nd >= 18:
            return 1
        v = v * 10 + (p[0] - 48)
        nd += 1
        p += 1
    out[0] = -v if neg else v
    return 0


cdef int fail(Parser *p, int code, const char *t, const char *te, int64_t aux) noexcept nogil:
    cdef Py_ssize_t n = te - t
    if n > ERR_TOKEN_MAX:
        n = ERR_TOKEN_MAX
    if n < 0:
        n = 0
    if n > 0:
        memcpy(p.err_tok, t, n)
    p.err_len = <int>n
    p.err = code
    p.err_line = p.lineno
    p.err_aux = aux
    return code


cdef int grow(void **buf, int64_t *cap, int64_t need, size_t itemsize, int64_t extra) noexcept nogil:
    """Ensure capacity >= need (plus `extra` trailing slots), doubling; 0 ok, 1 out of memory."""
    cdef int64_t c = cap[0]
    cdef void *q
    if need <= c:
        return 0
    while c < need:
        c = c * 2 if c > 0 else 1024
    q = realloc(buf[0], <size_t>(c + extra) * itemsize)
    if q == NULL:
        return 1
    buf[0] = q
    cap[0] = c
    return 0


cdef int grow_nnz(Parser *p) noexcept nogil:
    cdef int64_t c = p.cap_nnz * 2 if p.cap_nnz > 0 else 4096
    cdef void *q
    q = realloc(p.data, <size_t>c * sizeof(double))
    if q == NULL:
        return 1
    p.data = <double *>q
    q = realloc(p.indices, <size_t>c * sizeof(int32_t))
    if q == NULL:
        return 1
    p.indices = <int32_t *>q
    p.cap_nnz = c
    return 0


cdef int grow_rows(Parser *p) noexcept nogil:
    cdef int64_t c = p.cap_rows
    cdef int64_t need = p.n_rows + 1
    cdef void *q
    if need <= c:
        return 0
    c = c * 2 if c > 0 else 1024
    q = realloc(p.indptr, <size_t>(c + 1) * sizeof(int64_t))
    if q == NULL:
        return 1
    p.indptr = <int64_t *>q
    q = realloc(p.labptr, <size_t>(c + 1) * sizeof(int64_t))
    if q == NULL:
        return 1
    p.labptr = <int64_t *>q
    q = realloc(p.qid, <size_t>c * sizeof(int64_t))
    if q == NULL:
        return 1
    p.qid = <int64_t *>q
    q = realloc(p.hasqid, <size_t>c * sizeof(uint8_t))
    if q == NULL:
        return 1
    p.hasqid = <uint8_t *>q
    q = realloc(p.lines, <size_t>c * sizeof(int64_t))
    if q == NULL:
        return 1
    p.lines = <int64_t *>q
    p.cap_rows = c
    return 0


cdef int parse_range(Parser *p, const char *buf, Py_ssize_t n) noexcept nogil:
    """Parse complete lines of buf[0:n]; buf[n-1] must be '\\n'. Returns 0 or an error code."""
    cdef const char *pos = buf
    cdef const char *end = buf + n
    cdef const char *eol
    cdef const char *lend
    cdef const char *t
    cdef const char *te
    cdef const char *s
    cdef const char *c
    cdef const char *colon
    cdef int kind = p.kind
    cdef int r
    cdef int64_t nlab, idx, prev, q
    cdef double v
    cdef bint first, has_qid, comma
    while pos < end:
        p.lineno += 1
        eol = <const char *>memchr(pos, b'\n', end - pos)
        if eol == NULL:
            eol = end
        lend = <const char *>memchr(pos, b'#', eol - pos)
        if lend == NULL:
            lend = eol
        t = pos
        pos = eol + 1
        while t < lend and is_ws(t[0]):
            t += 1
        if t == lend:
            continue                                    # blank or comment-only line
        te = t
        while te < lend and not is_ws(te[0]):
            te += 1

        # ---- label field
        nlab = 0
        if memchr(t, b':', te - t) == NULL:
            comma = memchr(t, b',', te - t) != NULL
            if comma:
                if kind == KIND_MULTICLASS or kind == KIND_SEQUENCE:
                    return fail(p, E_MULTI_LABEL, t, te, 0)
                p.saw_multi = True
            s = t
            while True:
                c = s
                while c < te and c[0] != b',':
                    c += 1
                r = parse_double(s, c, &v, p.loc)
                if r != 0:
                    return fail(p, E_BAD_LABEL if r == 1 else E_NONFINITE_LABEL, t, te, 0)
                if p.n_lab >= p.cap_lab:
                    if grow(<void **>&p.labels, &p.cap_lab, p.n_lab + 1, sizeof(double), 0):
                        return fail(p, E_NOMEM, t, t, 0)
                p.labels[p.n_lab] = v
                p.n_lab += 1
                nlab += 1
                if c >= te:
                    break
                s = c + 1
            t = te
        else:
            if kind == KIND_MULTICLASS or kind == KIND_SEQUENCE:
                return fail(p, E_MISSING_LABEL, t, te, 0)
            p.saw_multi = True

        # ---- [qid:N] index:value ...
        first = True
        has_qid = False
        q = 0
        prev = -1
        while True:
            while t < lend and is_ws(t[0]):
                t += 1
            if t >= lend:
                break
            te = t
            while te < lend and not is_ws(te[0]):
                te += 1
            if te - t >= 4 and memcmp(t, b"qid:", 4) == 0:
                if not first:
                    return fail(p, E_QID_POSITION, t, te, 0)
                if parse_qid(t + 4, te, &q):
                    return fail(p, E_BAD_QID, t, te, 0)
                has_qid = True
                first = False
                t = te
                continue
            first = False
            colon = <const char *>memchr(t, b':', te - t)
            if colon == NULL:
                return fail(p, E_BAD_TOKEN, t, te, 0)
            r = parse_int(t, colon, MAX_INDEX, &idx)
            if r == 1:
                return fail(p, E_BAD_INDEX, t, te, 0)
            if r == 2:
                return fail(p, E_NEG_INDEX, t, te, 0)
            if r == 3:
                return fail(p, E_BIG_INDEX, t, te, MAX_INDEX)
            if idx == 0:
                if p.forbid_zero:
                    return fail(p, E_ZERO_INDEX, t, te, 0)
                p.saw_zero = True
            if idx <= prev:
                return fail(p, E_UNSORTED, t, te, prev)
            r = parse_double(colon + 1, te, &v, p.loc)
            if r != 0:
                return fail(p, E_BAD_VALUE if r == 1 else E_NONFINITE_VALUE, t, te, 0)
            if p.nnz >= p.cap_nnz:
                if grow_nnz(p):
                    return fail(p, E_NOMEM, t, t, 0)
            p.data[p.nnz] = v
            p.indices[p.nnz] = <int32_t>idx
            p.nnz += 1
            prev = idx
            t = te

        if has_qid:
            p.saw_qid = True
        elif kind == KIND_SEQUENCE:
            return fail(p, E_MISSING_QID, t, t, 0)
        if prev > p.max_index:
            p.max_index = prev
        if grow_rows(p):
            return fail(p, E_NOMEM, t, t, 0)
        p.qid[p.n_rows] = q
        p.hasqid[p.n_rows] = has_qid
        p.lines[p.n_rows] = p.lineno
        p.n_rows += 1
        p.indptr[p.n_rows] = p.nnz
        p.labptr[p.n_rows] = p.n_lab
    return 0


cdef object take(void *ptr, int64_t n, Py_ssize_t itemsize, str fmt, object dtype):
    """Hand a malloc'ed buffer of n items to NumPy without copying (freed with the array)."""
    cdef cvarray arr
    cdef void *q
    if n <= 0 or ptr == NULL:
        free(ptr)
        return np.empty(0, dtype=dtype)
    q = realloc(ptr, <size_t>n * itemsize)                # shrink to fit
    if q != NULL:
        ptr = q
    arr = cvarray(shape=(n,), itemsize=itemsize, format=fmt, mode="c", allocate_buffer=False)
    arr.data = <char *>ptr
    arr.callback_free_data = free
    return np.asarray(arr)


def parse(const unsigned char[::1] buf, int kind, bint forbid_zero):
    """Parse svmlight bytes.

    Returns ``(err, info, arrays)``. On error ``err`` is a nonzero code, ``info`` is
    ``(line, token_bytes, aux)`` and ``arrays`` is None. On success ``err == 0``, ``info`` is
    ``(n_lines, max_index, saw_qid, saw_multi, saw_zero)`` and ``arrays`` is
    ``(data f8, indices i4, indptr i8, labels f8, labptr i8, qid i8, hasqid u1, lines i8)`` with
    raw (unshifted) feature indices; ``lines`` holds each example's 1-based line number.
    """
    cdef Parser p
    cdef Py_ssize_t n = buf.shape[0]
    cdef Py_ssize_t head = 0
    cdef Py_ssize_t tail_len
    cdef const char *base = NULL
    cdef char *tail = NULL
    cdef int err = 0
    if kind < KIND_AUTO or kind > KIND_SEQUENCE:
        raise ValueError("bad kind code")
    memset_parser(&p)
    p.kind = kind
    p.forbid_zero = forbid_zero
    p.max_index = -1
    p.indptr = <int64_t *>malloc(sizeof(int64_t))
    p.labptr = <int64_t *>malloc(sizeof(int64_t))
    if p.indptr == NULL or p.labptr == NULL:
        free(p.indptr)
        free(p.labptr)
        raise MemoryError()
    p.indptr[0] = 0
    p.labptr[0] = 0
    if n > 0:
        base = <const char *>&buf[0]
    with nogil:
        p.loc = ssvm_new_c_locale()
        head = n
        while head > 0 and base[head - 1] != b'\n':
            head -= 1
        if head > 0:
            err = parse_range(&p, base, head)
        tail_len = n - head
        if err == 0 and tail_len > 0:
            # the last line has no newline: parse a terminated copy (strtod needs a stop byte)
            tail = <char *>malloc(tail_len + 1)
            if tail == NULL:
                err = fail(&p, E_NOMEM, NULL, NULL, 0)
            else:
                memcpy(tail, base + head, tail_len)
                tail[tail_len] = b'\n'
                err = parse_range(&p, tail, tail_len + 1)
                free(tail)
        ssvm_free_locale(p.loc)
    if err != 0:
        free_parser(&p)
        if err == E_NOMEM:
            raise MemoryError("out of memory while parsing svmlight data")
        return err, (p.err_line, p.err_tok[:p.err_len], p.err_aux), None
    arrays = (
        take(p.data, p.nnz, sizeof(double), "d", np.float64),
        take(p.indices, p.nnz, sizeof(int32_t), "i", np.int32),
        take(p.indptr, p.n_rows + 1, sizeof(int64_t), "q", np.int64),
        take(p.labels, p.n_lab, sizeof(double), "d", np.float64),
        take(p.labptr, p.n_rows + 1, sizeof(int64_t), "q", np.int64),
        take(p.qid, p.n_rows, sizeof(int64_t), "q", np.int64),
        take(p.hasqid, p.n_rows, sizeof(uint8_t), "B", np.uint8),
        take(p.lines, p.n_rows, sizeof(int64_t), "q", np.int64),
    )
    info = (p.lineno, p.max_index, bool(p.saw_qid), bool(p.saw_multi), bool(p.saw_zero))
    return 0, info, arrays


cdef void memset_parser(Parser *p) noexcept nogil:
    p.kind = 0
    p.forbid_zero = False
    p.loc = NULL
    p.data = NULL
    p.indices = NULL
    p.nnz = 0
    p.cap_nnz = 0
    p.indptr = NULL
    p.labptr = NULL
    p.qid = NULL
    p.hasqid = NULL
    p.lines = NULL
    p.n_rows = 0
    p.cap_rows = 0
    p.labels = NULL
    p.n_lab = 0
    p.cap_lab = 0
    p.lineno = 0
    p.max_index = -1
    p.saw_qid = False
    p.saw_multi = False
    p.saw_zero = False
    p.err = 0
    p.err_line = 0
    p.err_aux = 0
    p.err_len = 0


cdef void free_parser(Parser *p) noexcept nogil:
    free(p.data)
    free(p.indices)
    free(p.indptr)
    free(p.labptr)
    free(p.qid)
    free(p.hasqid)
    free(p.lines)
    free(p.labels)
    p.data = NULL
    p.indices = NULL
    p.indptr = NULL
    p.labptr = NULL
    p.qid = NULL
    p.hasqid = NULL
    p.lines = NULL
    p.labels = NULL


# ------------------------------------------------------------------------------------- writing

from cpython.conversion cimport PyOS_double_to_string
from cpython.mem cimport PyMem_Free
from cpython.bytes cimport PyBytes_FromStringAndSize


cdef struct OutBuf:
    char *buf
    Py_ssize_t n
    Py_ssize_t cap


cdef int out_reserve(OutBuf *o, Py_ssize_t extra) except -1:
    cdef Py_ssize_t c = o.cap
    cdef void *q
    if o.n + extra <= c:
        return 0
    while c < o.n + extra:
        c = c * 2 if c > 0 else 65536
    q = realloc(o.buf, <size_t>c)
    if q == NULL:
        raise MemoryError()
    o.buf = <char *>q
    o.cap = c
    return 0


cdef int out_int(OutBuf *o, int64_t v) except -1:
    cdef char tmp[24]
    cdef int k = 0
    cdef uint64_t u
    out_reserve(o, 24)
    if v < 0:
        o.buf[o.n] = b'-'
        o.n += 1
        u = <uint64_t>(-(v + 1)) + 1
    else:
        u = <uint64_t>v
    while True:
        tmp[k] = <char>(48 + u % 10)
        k += 1
        u //= 10
        if u == 0:
            break
    while k > 0:
        k -= 1
        o.buf[o.n] = tmp[k]
        o.n += 1
    return 0


cdef int out_double(OutBuf *o, double v) except -1:
    """Python's shortest round-trip repr of v without a trailing '.0' (1.0 -> '1')."""
    cdef char *s
    cdef Py_ssize_t k
    if v == v and -1e15 < v < 1e15 and v == <double><int64_t>v and not signbit(v):
        return out_int(o, <int64_t>v)
    s = PyOS_double_to_string(v, b'r', 0, 0, NULL)
    try:
        k = 0
        while s[k] != 0:
            k += 1
        if k >= 2 and s[k - 2] == b'.' and s[k - 1] == b'0':
            k -= 2
        out_reserve(o, k)
        memcpy(o.buf + o.n, s, k)
        o.n += k
    finally:
        PyMem_Free(s)
    return 0


def format_lines(list prefixes, const int64_t[::1] indptr, const int64_t[::1] indices,
                 const double[::1] data, int64_t base):
    """Text of svmlight lines: ``prefixes[i]`` (bytes) then `` idx:val`` for each nonzero of row i.

    ``idx = indices[k] + base``; values are written with Python's shortest round-trip repr
    (integral values without '.0'). Returns bytes.
    """
    cdef Py_ssize_t n = len(prefixes)
    cdef Py_ssize_t i, k
    cdef bytes pre
    cdef OutBuf o
    if indptr.shape[0] != n + 1:
        raise ValueError("indptr must have len(prefixes) + 1 entries")
    cdef int64_t nnz = min(indices.shape[0], data.shape[0])
    for i in range(n):
        if indptr[i] < 0 or indptr[i] > indptr[i + 1] or indptr[i + 1] > nnz:
            raise ValueError("indptr must be non-decreasing within the data")
    o.buf = NULL
    o.n = 0
    o.cap = 0
    try:
        for i in range(n):
            pre = prefixes[i]
            out_reserve(&o, len(pre) + 1)
            if len(pre):
                memcpy(o.buf + o.n, <const char *>pre, len(pre))
                o.n += len(pre)
            for k in range(indptr[i], indptr[i + 1]):
                out_reserve(&o, 1)
                o.buf[o.n] = b' '
                o.n += 1
                out_int(&o, indices[k] + base)
                out_reserve(&o, 1)
                o.buf[o.n] = b':'
                o.n += 1
                out_double(&o, data[k])
            out_reserve(&o, 1)
            o.buf[o.n] = b'\n'
            o.n += 1
        return PyBytes_FromStringAndSize(o.buf, o.n)
    finally:
        free(o.buf)
