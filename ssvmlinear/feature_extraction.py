"""SequenceVectorizer: sentences of token feature dicts into the rows ChainSSVM trains on."""
import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .token_features import TokenFeatures


class SequenceVectorizer(TransformerMixin, BaseEstimator):
    """Turn sentences of token features into sparse rows, one per token.

    The front end of sklearn-crfsuite and python-crfsuite users: a sentence is a list of
    tokens, a token a dict of features such as ``{"word.lower()": "paris", "word.istitle()":
    True, "-1:word": "in"}``. A str value v of feature f becomes the indicator feature "f=v"
    (value 1), a number or a bool is the value of f, a list of str values gives "f=v" for each,
    and a nested dict ``{f: {k: x}}`` gives "f:k" with value x (python-crfsuite's nested items). A
    token may also be a list of feature names (each with value 1). Columns come from a
    vocabulary of the names seen by fit, sorted (scikit-learn's DictVectorizer), or, with
    n_features, from hashing the names (its FeatureHasher: no vocabulary kept, unseen names
    welcome). The rows are built in compiled code: no Python runs per token beyond the dicts
    given.

    Parameters
    ----------
    n_features : int or None, default=None
        None: a fitted vocabulary, one column per feature name seen by fit (names unseen at
        transform are ignored). An int: hash every name into this many columns.
    alternate_sign : bool, default=True
        With hashing: the sign of the name's hash multiplies its value, so that collisions
        cancel in expectation (as FeatureHasher).

    Attributes
    ----------
    vocabulary_ : dict
        Feature name -> column (vocabulary only).
    feature_names_ : list of str
        The feature names in column order (vocabulary only).

    See Also
    --------
    ChainSSVM : Takes the sentences directly (it fits a vocabulary of their names).
    sklearn.feature_extraction.DictVectorizer : The same columns for independent samples.

    Notes
    -----
    The sequences of the rows are the sentences: pass ``lengths=[len(s) for s in sentences]``
    to ChainSSVM with the rows.

    Examples
    --------
    >>> from ssvmlinear.feature_extraction import SequenceVectorizer
    >>> sentences = [[{"w": "John", "title": True}, {"w": "runs"}], [{"w": "Mary", "title": True}]]
    >>> vec = SequenceVectorizer()
    >>> X = vec.fit_transform(sentences)
    >>> X.shape, vec.feature_names_
    ((3, 4), ['title', 'w=John', 'w=Mary', 'w=runs'])
    >>> X.toarray()
    array([[1., 1., 0., 0.],
           [0., 0., 0., 1.],
           [1., 0., 1., 0.]])
    >>> SequenceVectorizer(n_features=16).fit_transform(sentences).shape
    (3, 16)
    """

    _parameter_constraints = {
        "n_features": [Interval(numbers.Integral, 1, 2**31 - 1, closed="both"), None],
        "alternate_sign": ["boolean"],
    }

    def __init__(self, n_features=None, alternate_sign=True):
        self.n_features = n_features
        self.alternate_sign = alternate_sign

    def _features(self):
        return TokenFeatures(self.n_features, self.alternate_sign)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the vocabulary of the feature names (nothing to learn with hashing).

        Parameters
        ----------
        X : list of list of dict or of list of str
            The sentences: lists of tokens, each a dict of features or a list of feature names.
        y : None
            Ignored.

        Returns
        -------
        SequenceVectorizer
            The fitted transformer.
        """
        self._fit_transform(X)
        return self

    def _fit_transform(self, X):
        features = self._features()
        rows, _ = features.transform(X, fit=True)
        self._token_features = features
        if not features.hashing:
            self.feature_names_ = list(features.feature_names)
            self.vocabulary_ = features.vocabulary
        self.n_features_out_ = rows.shape[1]
        return rows

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Learn the vocabulary and return the rows of the tokens of X.

        Parameters
        ----------
        X : list of list of dict or of list of str
            The sentences: lists of tokens, each a dict of features or a list of feature names.
        y : None
            Ignored.

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n_tokens, n_columns)
            One row per token, the sentences one after the other.
        """
        return self._fit_transform(X)

    def transform(self, X):
        """Return the rows of the tokens of X.

        Parameters
        ----------
        X : list of list of dict or of list of str
            The sentences: lists of tokens, each a dict of features or a list of feature names.

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n_tokens, n_columns)
            One row per token, the sentences one after the other; names outside the vocabulary
            are ignored.
        """
        check_is_fitted(self, "_token_features")
        return self._token_features.transform(X)[0]

    def get_feature_names_out(self, input_features=None):
        """Return the names of the columns.

        Parameters
        ----------
        input_features : None
            Ignored.

        Returns
        -------
        ndarray of str
            The vocabulary's names in column order; with hashing, "hash0", "hash1", ...
        """
        check_is_fitted(self, "_token_features")
        if self._token_features.hashing:
            return np.array([f"hash{j}" for j in range(self.n_features)], dtype=object)
        return np.array(self.feature_names_, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.dict = True
        return tags
