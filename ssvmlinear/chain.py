"""Sequence labeling (chain) structural SVM: the scikit-learn estimator."""
from sklearn.base import ClassifierMixin, _fit_context

from .base import StructuredSSVM, constraints_of
from .models.chain import ChainModel


class ChainSSVM(ClassifierMixin, StructuredSSVM, ChainModel):
    """Linear-chain structural SVM for sequence labeling.

    A first-order chain model (SVM^hmm's): the score of a tag sequence y of a sequence of tokens
    x_1..x_T is ``f(y) = sum_t (w_{y_t} . x_t + b_{y_t}) + sum_{t>1} T[y_{t-1}, y_t]`` (plus
    start and end scores with start_end), and predict returns its maximiser by Viterbi
    decoding. The task loss is the Hamming loss (divided by the sequence length with
    normalize_loss). Training minimises ``1/2 ||w||^2 + sum_i C_i max_y [Delta(y, y_i) + f(y) -
    f(y_i)]`` over the sequences i (margin rescaling), or the LSE problem, or another surrogate
    given by `loss`. X has one row per token and every method takes the sequences as `lengths`
    or as `sequence_ids`; or X is a list of sentences, each a list of token feature dicts (as
    sklearn-crfsuite takes them: see SequenceVectorizer for how features become columns) with y
    a list of tag lists, and predict returns a list of tag lists.

    {parameters}

    Attributes
    ----------
    coef_ : ndarray of shape (n_tags, n_features)
        The unary weights of every tag.
    intercept_ : ndarray of shape (n_tags,)
        The bias of every tag (zeros when fit_intercept is False, the default).
    transition_ : ndarray of shape (n_tags, n_tags)
        The transition scores, indexed [previous tag, next tag].
    start_ : ndarray of shape (n_tags,)
        With start_end only: the score of each tag as the first of a sequence.
    end_ : ndarray of shape (n_tags,)
        With start_end only: the score of each tag as the last of a sequence.
    classes_ : ndarray of shape (n_tags,)
        The tags, sorted.
    token_features_ : TokenFeatures or None
        Fitted on sentences of feature dicts: the vocabulary of their feature names
        (``token_features_.feature_names``, in the order of coef_'s columns); None when fitted
        on a matrix.
    {fit_attributes}

    See Also
    --------
    MulticlassSSVM : One label per example, without sequences.
    ssvmlinear.feature_extraction.SequenceVectorizer : Token feature dicts into rows.
    ssvmlinear.metrics.entity_scores : Entity-level precision, recall and F1 of predicted tags.
    ssvmlinear.solvers.GDMM : Factorwise oracles, sublinear in the number of tags.

    Notes
    -----
    Solvers: loss="lse" with the default solver selects LSE-SDCD;
    solver=SDCD(exact_violators=True) reaches the full LSE problem instead of its restriction
    to the final working sets. solver=GDMM() decomposes the dual into token and tag-pair
    factors; GDMM(fmo_subsets=nu) with nu > 1 selects its sublinear oracles, which pay with
    many tags (hundreds to thousands). Stopping rules: see MulticlassSSVM.

    Sequences: `lengths` gives the number of tokens of each sequence, in order;
    `sequence_ids` gives one id per row instead (as the svmlight qid), a sequence being a run
    of equal consecutive ids (neighbouring sequences need different ids). Being one entry per
    row, sequence_ids is sliced with X by scikit-learn's model selection: with metadata routing
    (``sklearn.set_config(enable_metadata_routing=True)`` and
    ``ChainSSVM().set_fit_request(sequence_ids=True).set_score_request(sequence_ids=True)``),
    GridSearchCV, cross_val_score and Pipeline work, and a GroupKFold on
    groups=sequence_ids keeps every sequence whole (``set_fit_request(sequence_ids="groups")``
    passes one array for both). sample_weight weighs sequences: one weight per sequence, or
    one per row constant within each sequence (the form that model selection slices
    correctly).

    ChainSSVM is a scikit-learn classifier (score is the token accuracy; X may be sparse) but
    is not checked by check_estimator, whose data have no sequences.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import ChainSSVM
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    >>> y = np.array([0, 1, 0, 1, 1, 0, 1])
    >>> lengths = np.array([4, 3])          # two sequences, of 4 and 3 tokens
    >>> clf = ChainSSVM(C=10.0).fit(X, y, lengths)
    >>> clf.predict(X, lengths)
    array([0, 1, 0, 1, 1, 0, 1])
    >>> clf.coef_.shape, clf.transition_.shape
    ((2, 2), (2, 2))
    >>> ids = np.array([7, 7, 7, 7, 9, 9, 9])   # the same two sequences, as ids
    >>> clf.sequence_accuracy(X, y, sequence_ids=ids)
    1.0

    Sentences of token feature dicts, tags as strings:

    >>> sents = [[{"w": "John"}, {"w": "sleeps"}], [{"w": "Mary"}, {"w": "runs"}]]
    >>> tags = [["B-PER", "O"], ["B-PER", "O"]]
    >>> ChainSSVM(C=10.0).fit(sents, tags).predict([[{"w": "Mary"}, {"w": "sleeps"}]])
    [['B-PER', 'O']]
    """

    _parameter_constraints = constraints_of(ChainModel.params)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, lengths=None, sample_weight=None, *, sequence_ids=None):
        """Fit the model to sequences of tagged tokens.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_tokens, n_features) or ShardedData
            One row per token, the sequences one after the other; sparse input is converted to
            CSR, never densified. X may also be the ShardedData of
            ``ssvmlinear.distributed.load_svmlight_shards(..., kind="sequence")`` (tags and
            sequences included): training then runs where its shards live.
        y : array-like of shape (n_tokens,)
            One tag per token. None only with ShardedData.
        lengths : array-like of int of shape (n_sequences,) or None, default=None
            The number of tokens of each sequence, in order; give this or sequence_ids.
        sample_weight : array-like of shape (n_sequences,) or (n_tokens,) or None, default=None
            Weights of the sequences (they multiply C): one per sequence, or one per row
            constant within each sequence; not all zero.
        sequence_ids : array-like of shape (n_tokens,) or None, default=None
            One id per row instead of lengths: a sequence is a run of equal consecutive ids.

        Returns
        -------
        ChainSSVM
            The fitted estimator.

        Raises
        ------
        ValueError
            For invalid parameters or input, neither or both of lengths and sequence_ids, or
            lengths that do not sum to the number of rows.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import ChainSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
        >>> clf = ChainSSVM().fit(X, ["B", "I", "I", "B", "I"], lengths=[3, 2])
        >>> clf.classes_
        array(['B', 'I'], dtype='<U1')
        """
        return ChainModel.fit(self, X, y, lengths, sample_weight, sequence_ids=sequence_ids)

    score = ChainModel.score      # token accuracy (before ClassifierMixin's in the MRO)
