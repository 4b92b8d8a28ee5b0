"""Token features by name (the NLP front end), numpy and scipy only: sentences of feature dicts
and CRFsuite's data files into CSR rows, a column per feature name by a vocabulary or by
hashing. ssvmlinear.feature_extraction.SequenceVectorizer is the scikit-learn transformer over
it; ChainSSVM takes sentences of feature dicts directly; ssvm-train reads CRFsuite files."""
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from ._kernels.tokens import Columns, vectorize, parse_crfsuite


class TokenFeatures:
    """Feature name -> column: a vocabulary fitted on the training tokens (sorted names, as
    scikit-learn's DictVectorizer), or hashing into n_features columns (as its FeatureHasher:
    signed 32-bit MurmurHash3, the hash's sign on the value when alternate_sign)."""

    def __init__(self, n_features=None, alternate_sign=True):
        if n_features is not None and not (isinstance(n_features, (int, np.integer))
                                           and 1 <= n_features <= 2**31 - 1):
            raise ValueError(f"n_features must be None (a vocabulary) or an int in 1..2**31 - 1; got {n_features!r}")
        self.n_features = None if n_features is None else int(n_features)
        self.alternate_sign = bool(alternate_sign)
        self.feature_names = None

    @property
    def feature_names(self):
        """The vocabulary's names in column order (None: not fitted, or hashing)."""
        return self._names

    @feature_names.setter
    def feature_names(self, names):
        self._names = None if names is None else list(names)
        self._index = None                   # name -> column, built on first use

    @property
    def hashing(self):
        return self.n_features is not None

    @property
    def n_columns(self):
        return self.n_features if self.hashing else len(self.feature_names)

    def _columns(self, fit):
        if self.hashing:
            return Columns(None, False, self.n_features, self.alternate_sign)
        if fit:
            return Columns({}, True, 0, False)
        if self.feature_names is None:
            raise ValueError("the vocabulary is not fitted")
        return Columns(self.vocabulary, False, 0, False)

    @property
    def vocabulary(self):
        """Name -> column of the fitted vocabulary (kept: transform looks every name up in it)."""
        if self._index is None:
            self._index = {name: j for j, name in enumerate(self._names)}
        return self._index

    def _finish(self, cols, fit, indptr, indices, data):
        """CSR rows; after fitting a vocabulary, its names sorted and the columns renumbered."""
        if fit and not self.hashing:
            names = list(cols.vocabulary)
            order = np.array(sorted(range(len(names)), key=names.__getitem__), dtype=np.int64)
            rank = np.empty(order.shape[0], dtype=np.int32)
            rank[order] = np.arange(order.shape[0], dtype=np.int32)
            indices = rank[indices] if indices.size else indices
            self.feature_names = [names[k] for k in order]
        X = sp.csr_matrix((data, indices, indptr), shape=(indptr.shape[0] - 1, self.n_columns))
        X.sum_duplicates()                   # (also sorts each row's indices)
        return X

    def transform(self, sentences, fit=False):
        """(X, lengths): one CSR row per token of the sentences (lists of feature dicts or of
        feature names), their lengths; fit=True first fits the vocabulary on them."""
        cols = self._columns(fit)
        indptr, indices, data, lengths = vectorize(sentences, cols)
        return self._finish(cols, fit, indptr, indices, data), lengths

    def read_crfsuite(self, raw, name, fit=False):
        """(X, tags, lengths) of a CRFsuite data file's bytes; errors name the file and line."""
        cols = self._columns(fit)
        indptr, indices, data, lengths, tags, error = parse_crfsuite(raw, cols)
        if error is not None:
            code, line, field = error
            raise ValueError(f"{name}:{line}: {_CRFSUITE_MESSAGES[code].format(field=repr(field))}")
        return self._finish(cols, fit, indptr, indices, data), np.array(tags, dtype=object), lengths


_CRFSUITE_MESSAGES = {
    2: "field {field} has more than one ':' (write ':' and '\\' in a name as '\\:' and '\\\\')",
    3: "field {field} has an empty attribute name",
    4: "field {field}: the attribute's value is not a number",
    5: "field {field}: the attribute's value is not finite",
    6: "the label {field} has a ':' value (write ':' in a label as '\\:')",
    7: "declarations ({field}) are not supported",
    8: "NUL byte (a binary file?)",
    9: "field {field} is not UTF-8",
}


def is_token_input(X):
    """Whether X is a list of sentences of tokens given by feature name (dicts, or lists of
    feature names), not a matrix: judged by its first token."""
    if not isinstance(X, (list, tuple)):
        return False
    for sentence in X:
        if not isinstance(sentence, (list, tuple)):
            return False
        if len(sentence):
            token = sentence[0]
            return isinstance(token, Mapping) or (isinstance(token, (list, tuple))
                                                  and all(isinstance(v, str) for v in token))
    return False


def flat_tags(y, lengths, what="y"):
    """The tags of nested y (one sequence of tags per sentence) as one flat array, checked
    against the sentences' lengths."""
    if isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype != object:
        raise ValueError(f"{what} must hold one sequence of tags per sentence (as X holds sentences)")
    try:
        seq_lengths = [len(s) for s in y]
    except TypeError:
        raise ValueError(f"{what} must hold one sequence of tags per sentence (as X holds sentences)") from None
    if len(seq_lengths) != len(lengths) or any(a != b for a, b in zip(seq_lengths, lengths.tolist())):
        raise ValueError(f"{what} must hold one tag per token of each sentence of X: {len(seq_lengths)} tag "
                         f"sequences for {len(lengths)} sentences, or a sequence of another length")
    tags = [t for s in y for t in s]
    out = np.empty(len(tags), dtype=object)
    out[:] = tags
    kinds = {type(t) for t in tags}
    if kinds and all(issubclass(k, str) for k in kinds):
        return out.astype(str)
    if kinds and all(issubclass(k, (int, np.integer)) and not issubclass(k, bool) for k in kinds):
        return out.astype(np.int64)
    return out


def split_tags(flat, lengths):
    """Flat tags back into one list of tags per sentence."""
    values = flat.tolist()
    bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
