# cython: language_level=3
"""Token features into CSR rows: sentences of feature dicts (``ssvmlinear.token_features``) and
CRFsuite's text format, a column per feature name by a vocabulary (a dict, grown while fitting)
or by hashing (signed 32-bit MurmurHash3 of the UTF-8 name, seed 0, as scikit-learn's
FeatureHasher).

Feature names and values of a token (a dict): a str value v of name n is the feature "n=v" with
value 1; a number (bool included) is the value of n; a list, tuple or set of str values gives
"n=v" for each; a nested dict {k: x} gives "n:k" (python-crfsuite's nested items) with value x (or
"n:k=x" for a str x). A token may also be a list or tuple of feature names (value 1 each). Zero
values are not stored. Rows are built in C buffers; the only Python objects made per feature are
the "n=v" names a dict's str values ask for (and, reading a CRFsuite file with a vocabulary, the
name to look up).
"""
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memchr
from libc.stdint cimport int64_t, int32_t, uint32_t, uint8_t
from libc.math cimport isfinite

import numpy as np
from collections.abc import Mapping

cdef extern from "parse_numbers.h":
    ctypedef void *ssvm_locale_t
    ssvm_locale_t ssvm_new_c_locale() noexcept nogil
    void ssvm_free_locale(ssvm_locale_t loc) noexcept nogil
    int parse_double "ssvm_parse_double" (const char *s, const char *e, double *out,
                                          ssvm_locale_t loc) noexcept nogil

# columns stay addressable with int32 indices
cdef int64_t MAX_COLUMNS = 2147483647


cdef inline uint32_t _rotl(uint32_t x, int r) noexcept nogil:
    return (x << r) | (x >> (32 - r))


cdef int32_t murmurhash3_32(const uint8_t *key, Py_ssize_t n, uint32_t seed) noexcept nogil:
    """MurmurHash3_x86_32 (Austin Appleby's public-domain hash) as a signed 32-bit integer."""
    cdef uint32_t c1 = <uint32_t>0xcc9e2d51u, c2 = <uint32_t>0x1b873593u
    cdef uint32_t f1 = <uint32_t>0x85ebca6bu, f2 = <uint32_t>0xc2b2ae35u, add = <uint32_t>0xe6546b64u
    cdef uint32_t h = seed, k
    cdef Py_ssize_t i, nblocks = n // 4
    for i in range(nblocks):
        k = (<uint32_t>key[4 * i] | (<uint32_t>key[4 * i + 1] << 8) | (<uint32_t>key[4 * i + 2] << 16)
             | (<uint32_t>key[4 * i + 3] << 24))
        k *= c1
        k = _rotl(k, 15)
        k *= c2
        h ^= k
        h = _rotl(h, 13)
        h = h * 5 + add
    k = 0
    i = nblocks * 4
    if n & 3 == 3:
        k ^= <uint32_t>key[i + 2] << 16
    if n & 3 >= 2:
        k ^= <uint32_t>key[i + 1] << 8
    if n & 3 >= 1:
        k ^= <uint32_t>key[i]
        k *= c1
        k = _rotl(k, 15)
        k *= c2
        h ^= k
    h ^= <uint32_t>n
    h ^= h >> 16
    h *= f1
    h ^= h >> 13
    h *= f2
    h ^= h >> 16
    return <int32_t>h


def murmurhash3(bytes key):
    """The signed 32-bit MurmurHash3 (seed 0) of key (for tests)."""
    return murmurhash3_32(<const uint8_t *>(<const char *>key), len(key), 0)


cdef class Columns:
    """Feature name -> column: a vocabulary (dict name -> column, grown when `grow`) or hashing
    into n_features columns (alternate_sign: the hash's sign multiplies the value)."""
    cdef public dict vocabulary
    cdef public bint grow
    cdef public int64_t n_features
    cdef public bint alternate_sign

    def __init__(self, vocabulary, bint grow, int64_t n_features, bint alternate_sign):
        self.vocabulary = vocabulary
        self.grow = grow
        self.n_features = n_features
        self.alternate_sign = alternate_sign

    cdef inline int32_t hashed(self, const char *s, Py_ssize_t n, double *value) noexcept nogil:
        cdef int32_t h = murmurhash3_32(<const uint8_t *>s, n, 0)
        cdef int64_t col
        if h == -2147483648:        # abs(-2**31) % n, as FeatureHasher defines it
            col = (2147483647 - (self.n_features - 1)) % self.n_features
        else:
            col = (h if h >= 0 else -h) % self.n_features
        if self.alternate_sign and h < 0:
            value[0] = -value[0]
        return <int32_t>col

    cdef int64_t of_name(self, str name, double *value) except -2:
        """The column of name (-1: not in a fixed vocabulary); value's sign may flip (hashing)."""
        cdef Py_ssize_t n
        cdef const char *s
        if self.vocabulary is None:
            s = PyUnicode_AsUTF8AndSize(name, &n)
            return self.hashed(s, n, value)
        col = self.vocabulary.get(name)
        if col is not None:
            return <int64_t>col
        if not self.grow:
            return -1
        if len(self.vocabulary) >= MAX_COLUMNS:
            raise ValueError(f"more than {MAX_COLUMNS} distinct features; use hashing (n_features)")
        col = len(self.vocabulary)
        self.vocabulary[name] = col
        return <int64_t>col

    cdef int64_t of_bytes(self, const char *s, Py_ssize_t n, double *value) except -2:
        if self.vocabulary is None:
            return self.hashed(s, n, value)
        return self.of_name(PyUnicode_DecodeUTF8(s, n, "strict"), value)


cdef struct Rows:
    int32_t *indices
    double *data
    int64_t nnz
    int64_t cap


cdef int rows_push(Rows *r, int64_t col, double v) except -1:
    cdef int64_t cap
    cdef void *p
    if v == 0.0 or col < 0:
        return 0
    if r.nnz == r.cap:
        cap = max(<int64_t>1024, 2 * r.cap)
        p = realloc(r.indices, cap * sizeof(int32_t))
        if p == NULL:
            raise MemoryError("token features: out of memory")
        r.indices = <int32_t *>p
        p = realloc(r.data, cap * sizeof(double))
        if p == NULL:
            raise MemoryError("token features: out of memory")
        r.data = <double *>p
        r.cap = cap
    r.indices[r.nnz] = <int32_t>col
    r.data[r.nnz] = v
    r.nnz += 1
    return 0


cdef object rows_arrays(Rows *r):
    """(indices, data) as NumPy arrays (copies; the C buffers are freed by the caller)."""
    indices = np.empty(r.nnz, dtype=np.int32)
    data = np.empty(r.nnz, dtype=np.float64)
    cdef int32_t[::1] iv = indices
    cdef double[::1] dv = data
    cdef int64_t k
    for k in range(r.nnz):
        iv[k] = r.indices[k]
        dv[k] = r.data[k]
    return indices, data


cdef int _push_named(Rows *r, Columns cols, str name, double v) except -1:
    cdef double value = v
    cdef int64_t col
    if v == 0.0:
        if cols.grow:          # a fitted vocabulary knows the name, as DictVectorizer's does
            cols.of_name(name, &value)
        return 0
    col = cols.of_name(name, &value)
    return rows_push(r, col, value)


cdef int _push_token(Rows *r, Columns cols, object token, object where) except -1:
    cdef str name, sub
    if isinstance(token, (list, tuple)):
        for name in token:
            if not isinstance(name, str):
                raise ValueError(f"{where()}: a token given as a list holds feature names (str); "
                                 f"found {type(name).__name__}")
            _push_named(r, cols, name, 1.0)
        return 0
    if not isinstance(token, Mapping):
        raise ValueError(f"{where()}: a token must be a dict of features or a list of feature names; "
                         f"found {type(token).__name__}")
    for key, v in token.items():
        if not isinstance(key, str):
            raise ValueError(f"{where()}: feature names must be str; found {key!r}")
        name = <str>key
        if isinstance(v, str):
            _push_named(r, cols, name + "=" + <str>v, 1.0)
        elif isinstance(v, Mapping):
            for k2, x in v.items():
                if not isinstance(k2, str):
                    raise ValueError(f"{where()}: feature names must be str; found {k2!r} in {name!r}")
                sub = name + ":" + <str>k2
                if isinstance(x, str):
                    _push_named(r, cols, sub + "=" + <str>x, 1.0)
                else:
                    _push_named(r, cols, sub, _value(x, where, sub))
        elif isinstance(v, (list, tuple, set, frozenset)):
            for x in v:
                if not isinstance(x, str):
                    raise ValueError(f"{where()}: feature {name!r}: a list of values holds str; found {x!r}")
                _push_named(r, cols, name + "=" + <str>x, 1.0)
        else:
            _push_named(r, cols, name, _value(v, where, name))
    return 0


cdef double _value(object v, object where, str name) except? -1.0:
    """The value of feature `name`: a finite number (a bool counts as 0 or 1)."""
    cdef double x
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{where()}: feature {name!r} has a value of type {type(v).__name__}; expected a "
                         "str, a number, a bool, a list of str or a dict") from None
    if not isfinite(x):
        raise ValueError(f"{where()}: feature value {v!r} is not finite")
    return x


def vectorize(sentences, Columns cols):
    """Rows of the tokens of `sentences` (an iterable of sentences, each a sequence of tokens):
    returns (indptr int64, indices int32, data float64, lengths int64)."""
    cdef Rows r
    r.indices = NULL
    r.data = NULL
    r.nnz = 0
    r.cap = 0
    indptr = [0]
    lengths = []
    position = [-1, -1]
    where = lambda: f"sentence {position[0]}, token {position[1]}"
    try:
        for s, sentence in enumerate(sentences):
            position[0] = s
            if isinstance(sentence, (str, bytes)) or isinstance(sentence, Mapping):
                raise ValueError(f"sentence {s}: a sentence must be a list of tokens; found {type(sentence).__name__}")
            t = -1
            for t, token in enumerate(sentence):
                position[1] = t
                _push_token(&r, cols, token, where)
                indptr.append(r.nnz)
            lengths.append(t + 1)
        indices, data = rows_arrays(&r)
    finally:
        free(r.indices)
        free(r.data)
    return (np.asarray(indptr, dtype=np.int64), indices, data, np.asarray(lengths, dtype=np.int64))


# ---- CRFsuite's text format ----

cdef enum:
    C_OK = 0
    C_NOMEM = 1
    C_COLON = 2        # a second ':' in a field
    C_EMPTY_NAME = 3
    C_BAD_VALUE = 4
    C_NONFINITE = 5
    C_LABEL_VALUE = 6  # the label field has a ':' value
    C_DECLARATION = 7  # a line starting with '@'
    C_NUL = 8
    C_UTF8 = 9


cdef Py_ssize_t _unescape(const char *s, const char *e, char *out, const char **stop) noexcept nogil:
    """Copy [s, e) up to its first unescaped ':' into out, reading \\: and \\\\ as ':' and '\\';
    *stop points at the ':' (or e). Returns the length written."""
    cdef Py_ssize_t n = 0
    cdef char c
    while s < e:
        c = s[0]
        if c == b':':
            break
        if c == b'\\' and s + 1 < e and (s[1] == b':' or s[1] == b'\\'):
            s += 1
            c = s[0]
        out[n] = c
        n += 1
        s += 1
    stop[0] = s
    return n


def parse_crfsuite(const unsigned char[::1] buf, Columns cols):
    """Parse a CRFsuite data file's bytes: one token a line (its label, then tab-separated
    attributes `name` or `name:value`; \\: and \\\\ escape ':' and '\\' in names), a blank line
    ending a sequence, "\\r\\n" line ends accepted. Returns (indptr, indices, data, lengths,
    labels (a list of str), error) where error is None or (code, 1-based line, field text)."""
    cdef const char *p = <const char *>&buf[0] if buf.shape[0] else NULL
    cdef const char *end = p + buf.shape[0]
    cdef const char *line_end
    cdef const char *f
    cdef const char *fe
    cdef const char *stop
    cdef const char *q
    cdef Py_ssize_t n, longest = 1
    cdef int64_t lineno = 0, seq_len = 0, col
    cdef double value
    cdef int err = C_OK, r
    cdef Rows rows
    cdef char *scratch = NULL
    cdef ssvm_locale_t loc = ssvm_new_c_locale()
    rows.indices = NULL
    rows.data = NULL
    rows.nnz = 0
    rows.cap = 0
    indptr = [0]
    lengths = []
    labels = []
    bad = b""
    if buf.shape[0]:
        q = p
        while q < end:                      # the longest line bounds every field's unescaped copy
            line_end = <const char *>memchr(q, b'\n', end - q)
            if line_end == NULL:
                line_end = end
            longest = max(longest, line_end - q)
            q = line_end + 1
    scratch = <char *>malloc(longest + 1)
    try:
        if scratch == NULL:
            raise MemoryError("CRFsuite reader: out of memory")
        while p < end and err == C_OK:
            lineno += 1
            line_end = <const char *>memchr(p, b'\n', end - p)
            if line_end == NULL:
                line_end = end
            fe = line_end
            if fe > p and fe[-1] == b'\r':
                fe -= 1
            if memchr(p, 0, fe - p) != NULL:
                err = C_NUL
                break
            if fe == p:                      # a blank line ends the sequence
                if seq_len:
                    lengths.append(seq_len)
                    seq_len = 0
                p = line_end + 1
                continue
            if p[0] == b'@':
                err = C_DECLARATION
                bad = (<bytes>p[:min(fe - p, 60)])
                break
            # the label: the first field
            f = p
            q = <const char *>memchr(f, b'\t', fe - f)
            if q == NULL:
                q = fe
            n = _unescape(f, q, scratch, &stop)
            if stop != q:
                err = C_LABEL_VALUE
                bad = (<bytes>f[:min(q - f, 60)])
                break
            try:
                labels.append(PyUnicode_DecodeUTF8(scratch, n, "strict"))
            except UnicodeDecodeError:
                err = C_UTF8
                bad = (<bytes>f[:min(q - f, 60)])
                break
            f = q
            while f < fe:
                f += 1                       # the tab
                q = <const char *>memchr(f, b'\t', fe - f)
                if q == NULL:
                    q = fe
                if q == f:                   # consecutive tabs: CRFsuite skips them
                    continue
                n = _unescape(f, q, scratch, &stop)
                value = 1.0
                if stop != q:
                    if memchr(stop + 1, b':', q - stop - 1) != NULL:
                        err = C_COLON
                    else:
                        r = parse_double(stop + 1, q, &value, loc)
                        err = C_BAD_VALUE if r == 1 else C_NONFINITE if r == 2 else C_OK
                    if err != C_OK:
                        bad = (<bytes>f[:min(q - f, 60)])
                        break
                if n == 0:
                    err = C_EMPTY_NAME
                    bad = (<bytes>f[:min(q - f, 60)])
                    break
                try:
                    if value != 0.0:
                        col = cols.of_bytes(scratch, n, &value)
                        rows_push(&rows, col, value)
                    elif cols.grow:
                        cols.of_bytes(scratch, n, &value)
                except UnicodeDecodeError:
                    err = C_UTF8
                    bad = (<bytes>f[:min(q - f, 60)])
                    break
                f = q
            if err != C_OK:
                break
            indptr.append(rows.nnz)
            seq_len += 1
            p = line_end + 1
        if err == C_OK and seq_len:
            lengths.append(seq_len)
        indices, data = rows_arrays(&rows)
    finally:
        free(scratch)
        free(rows.indices)
        free(rows.data)
        ssvm_free_locale(loc)
    error = None if err == C_OK else (err, lineno, bad.decode("utf-8", "replace"))
    return (np.asarray(indptr, dtype=np.int64), indices, data, np.asarray(lengths, dtype=np.int64), labels,
            error)
