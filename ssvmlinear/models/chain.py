"""The sequence labeling (chain) model, numpy and scipy only."""

import numpy as np

from .. import checks
from .base import Model, common_params
from ..params import Param
from .._kernels.dataset import CSRDataset
from .._kernels.chain import ChainStructure
from ..token_features import TokenFeatures, is_token_input, flat_tags, split_tags
from ..utils import class_weight_vector


def check_lengths(lengths, n_rows):
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.integer):
        raise ValueError("lengths must be a 1-D integer array (one entry per sequence)")
    if lengths.size and lengths.min() < 1:
        raise ValueError("every sequence must have at least one token")
    if lengths.sum() != n_rows:
        raise ValueError(f"lengths sum to {lengths.sum()} but X has {n_rows} rows (tokens)")
    return lengths.astype(np.int64)


# decision_function's (sequences x K x K) temporaries hold at most this many entries: a bound on
# memory, not a speed trade-off (tests/test_chain_decision_function.py checks chunked = whole)
MAX_MARGINAL_ENTRIES = 1 << 22


def sequence_lengths(lengths, sequence_ids, n_rows, method="fit"):
    """The lengths of the sequences given by `lengths` (one entry per sequence) or by
    `sequence_ids` (one id per row; a sequence is a run of equal consecutive ids, as the svmlight
    qid), exactly one of them."""
    if (lengths is None) == (sequence_ids is None):
        if lengths is None:
            raise ValueError(f"ChainSSVM.{method} needs lengths or sequence_ids (the sequences of X's rows); "
                             "inside a Pipeline, GridSearchCV or cross_val_score pass sequence_ids (one id "
                             "per row) by scikit-learn's metadata routing: "
                             "sklearn.set_config(enable_metadata_routing=True), "
                             f"ChainSSVM().set_{method}_request(sequence_ids=True), then "
                             "params={'sequence_ids': ids} (with GroupKFold and 'groups': ids to keep "
                             "sequences whole)")
        raise ValueError(f"ChainSSVM.{method}: pass either lengths or sequence_ids, not both")
    if lengths is not None:
        return check_lengths(lengths, n_rows)
    ids = np.asarray(sequence_ids)
    if ids.ndim != 1 or ids.shape[0] != n_rows:
        raise ValueError(f"sequence_ids has {ids.shape[0] if ids.ndim == 1 else ids.shape} entries; "
                         f"expected one per row of X ({n_rows})")
    starts = np.flatnonzero(np.concatenate([[True], ids[1:] != ids[:-1]]))
    return np.diff(np.append(starts, n_rows)).astype(np.int64)


def refuse_lengths(lengths, sequence_ids, method):
    if lengths is not None or sequence_ids is not None:
        raise ValueError(f"ChainSSVM.{method}: X holds sentences (lists of tokens), which give the sequences; "
                         "pass no lengths or sequence_ids")


def sequence_weights(sample_weight, lengths, n_rows, check=checks):
    """Per-sequence weights from one weight per sequence or one per row (constant within each
    sequence: the form model selection slices with the rows); not all zero. check: the checks
    module (ssvmlinear.checks, or the estimators' ssvmlinear.validation)."""
    n_seq = lengths.shape[0]
    if sample_weight is not None and np.ndim(sample_weight) == 1 and len(sample_weight) == n_rows != n_seq:
        sw = check.check_sample_weight(sample_weight, n_rows)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        first = sw[starts]
        if not np.array_equal(np.repeat(first, lengths), sw):
            raise ValueError("a per-row sample_weight must be constant within each sequence "
                             "(ChainSSVM weighs whole sequences)")
        return first
    if sample_weight is not None and np.ndim(sample_weight) == 1 and len(sample_weight) != n_seq:
        raise ValueError(f"sample_weight has {len(sample_weight)} entries; expected one per sequence "
                         f"({n_seq}) or one per row of X ({n_rows}, constant within each sequence)")
    return check.check_sample_weight(sample_weight, n_seq)


class ChainModel(Model):
    """The chain model's core (ChainSSVM without scikit-learn): see ChainSSVM."""
    params = common_params(fit_intercept=False) + (
        Param("start_end", "bool", False, "Add start and end transition weights."),
        Param("normalize_loss", "bool", False, "The Hamming loss divided by the sequence length."),
        Param("outside_tag", "any", "O", "The tag outside every entity, for loss='microf1': the Micro-F1 "
              "surrogate scores the (token, tag) pairs of the other tags, as entity F1 counts them. A tag "
              "of y; unused by the other losses.", type_text="object"),
        Param("class_weight", "options", None, "Weighs the Hamming loss per tag: a mistake on a token whose true "
              "tag is k costs class_weight[k] ({tag: weight}; 'balanced': n_tokens / (K count of the tag); "
              "unnamed tags 1). For loss='margin', with every solver but GDMM.", options=("balanced",),
              none=True, also=("dict",), type_text="dict, 'balanced' or None"),
    )


    def __init__(self, C=1.0, solver=None, loss="margin", tol=None, max_iter=1000, fit_intercept=False,
                 intercept_scaling=1.0, start_end=False, normalize_loss=False, outside_tag="O",
                 n_jobs=None, random_state=None, verbose=0, warm_start=False, callback=None, class_weight=None):
        self.C = C
        self.solver = solver
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.start_end = start_end
        self.normalize_loss = normalize_loss
        self.outside_tag = outside_tag
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.callback = callback
        self.class_weight = class_weight

    def _check_class_weight(self):
        """Per-tag loss weights need the Hamming loss of margin rescaling and a solver that calls
        the oracle (GDMM decomposes the loss by token without them): refused before any work."""
        if self.class_weight is None:
            return
        if self.loss != "margin":
            raise ValueError(f"{type(self).__name__}: class_weight weighs the Hamming loss of margin rescaling; "
                             f"loss={self.loss!r} has no per-tag weights (use loss='margin')")
        if self._solver_name == "gdmm":
            raise ValueError(f"{type(self).__name__}: class_weight is not available with solver='gdmm' (its "
                             "factorwise steps decompose the unweighted Hamming loss); use another solver")

    def fit(self, X, y=None, lengths=None, sample_weight=None, *, sequence_ids=None):
        """lengths: tokens per sequence, or sequence_ids: one id per row; sample_weight: one weight
        per sequence, or one per row constant within each sequence (multiplies C). X may also be
        the ShardedData of ssvmlinear.distributed.load_svmlight_shards(..., kind="sequence")
        (tags and sequences included): training then runs where its shards live."""
        self._check_parameters()
        self._check_class_weight()
        from ..distributed import ShardedData
        if isinstance(X, ShardedData):
            if self.class_weight is not None:
                raise ValueError(f"{type(self).__name__}: class_weight with sharded data is not supported")
            return self._fit_sharded(X, sample_weight)
        features = None
        if is_token_input(X):          # sentences of feature dicts: a vocabulary of their names
            refuse_lengths(lengths, sequence_ids, "fit")
            features = TokenFeatures()
            X, lengths = features.transform(X, fit=True)
            y = flat_tags(y, lengths)
        X, y = self._checks.check_csr(X, self, y)
        self._checks.check_class_labels(y)
        lengths = sequence_lengths(lengths, sequence_ids, X.shape[0])  # >= 1 sequence: X has >= 1 row
        classes, y_idx = np.unique(y, return_inverse=True)
        Cs = self.C * sequence_weights(sample_weight, lengths, X.shape[0], self._checks)
        bias = float(self.intercept_scaling) if self.fit_intercept else -1.0
        tag_weights = None if self.class_weight is None else class_weight_vector(self.class_weight, classes, y_idx)
        structure = ChainStructure(CSRDataset(X, bias), y_idx, lengths, classes.shape[0], bool(self.start_end),
                                   bool(self.normalize_loss), self._outside_index(classes), tag_weights)
        # (the working sets keep each label's loss: a warm start needs the same loss weights)
        w = self._solve(structure, Cs, ("chain", self._solver_name, self.loss, getattr(self._solver(), 'exact_violators', False), X.shape, bias, tuple(classes.tolist()), self.start_end,
                                        self.normalize_loss, tuple(lengths.tolist()),
                                        None if tag_weights is None else tuple(tag_weights.tolist())))
        self._set_weights(w, X.shape[1], classes, bias)
        self.token_features_ = features
        return self._finish_fit()

    def _outside_index(self, classes):
        """The index of outside_tag in classes for loss='microf1' (-1 for the other losses)."""
        if self.loss != "microf1":
            return -1
        where = [k for k, c in enumerate(classes.tolist()) if c == self.outside_tag]
        if not where:
            raise ValueError(f"loss='microf1' needs outside_tag={self.outside_tag!r} (the tag outside every "
                             f"entity) among the tags of y: {', '.join(map(repr, classes.tolist()[:10]))}"
                             + (", ..." if len(classes) > 10 else ""))
        return where[0]

    def _shard_problem(self, data):
        bias = float(self.intercept_scaling) if self.fit_intercept else -1.0
        structures = data.map(_shard_structure, data.classes, data.n_features, bias, bool(self.start_end),
                              bool(self.normalize_loss), self._outside_index(data.classes))
        return structures, data.map(_shard_Cs, self.C), data.classes, bias, None

    def _set_weights(self, w, n_features, classes, bias):
        K = classes.shape[0]
        n_cols = n_features + (1 if bias > 0 else 0)
        U = w[:n_cols * K].reshape(n_cols, K)
        self.classes_ = classes
        self.n_features_in_ = n_features
        self._bias = bias
        self.coef_ = np.ascontiguousarray(U[:n_features].T)
        self.intercept_ = bias * U[n_features].copy() if bias > 0 else np.zeros(K)
        off = n_cols * K
        self.transition_ = w[off:off + K * K].reshape(K, K).copy()
        if self.start_end:
            self.start_ = w[off + K * K:off + K * K + K].copy()
            self.end_ = w[off + K * K + K:off + K * K + 2 * K].copy()

    def _weight_vector(self):
        """The flat weights in the kernel's layout (unary feature-major, transitions, start/end)."""
        U = self.coef_.T
        if self._bias > 0:
            U = np.vstack([U, self.intercept_ / self._bias])
        parts = [U.ravel(), self.transition_.ravel()]
        if self.start_end:
            parts += [self.start_, self.end_]
        return np.ascontiguousarray(np.concatenate(parts))

    def _token_rows(self, X, lengths, sequence_ids, method):
        """X given as sentences of feature dicts: (its rows by the fitted vocabulary, their
        lengths, True); any other X: (X, lengths, False)."""
        if not is_token_input(X):
            return X, lengths, False
        refuse_lengths(lengths, sequence_ids, method)
        if getattr(self, "token_features_", None) is None:
            raise ValueError(f"ChainSSVM.{method}: X holds sentences of token features, but the model was fitted "
                             "on a matrix of rows (fit it on sentences of feature dicts to use them)")
        X, lengths = self.token_features_.transform(X)
        return X, lengths, True

    def _structure_for(self, X, lengths, sequence_ids, method):
        self._check_fitted()
        X, lengths, _ = self._token_rows(X, lengths, sequence_ids, method)
        X = self._checks.check_csr(X, self, reset=False)
        lengths = sequence_lengths(lengths, sequence_ids, X.shape[0], method)
        dummy = np.zeros(X.shape[0], dtype=np.int32)
        return ChainStructure(CSRDataset(X, self._bias), dummy, lengths, self.classes_.shape[0],
                              bool(self.start_end), bool(self.normalize_loss)), lengths

    def predict(self, X, lengths=None, *, sequence_ids=None):
        """Predict the tag of every token by Viterbi decoding of its sequence.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_tokens, n_features) or ShardedData
            One row per token, with the training number of columns; a ShardedData is decoded
            shard by shard where its shards live.
        lengths : array-like of int of shape (n_sequences,) or None, default=None
            The number of tokens of each sequence, in order; give this or sequence_ids.
        sequence_ids : array-like of shape (n_tokens,) or None, default=None
            One id per row instead of lengths: a sequence is a run of equal consecutive ids.

        Returns
        -------
        ndarray of shape (n_tokens,)
            One tag of classes_ per token: the tag sequence of highest score of every sequence.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import ChainSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
        >>> y = np.array([0, 1, 0, 1, 1])
        >>> clf = ChainSSVM(C=10.0).fit(X, y, lengths=[3, 2])
        >>> clf.predict(X, lengths=[3, 2])
        array([0, 1, 0, 1, 1])
        """
        from ..distributed import ShardedData, decode_all
        if isinstance(X, ShardedData):
            self._check_fitted()
            w = X.client.scatter(self._weight_vector(), broadcast=True)
            idx = X.client.gather(X.map(_shard_predict, self.classes_, self.n_features_in_, self._bias,
                                        bool(self.start_end), bool(self.normalize_loss), w))
            return self.classes_[np.concatenate(idx)]
        st, lengths = self._structure_for(X, lengths, sequence_ids, "predict")
        tags = self.classes_[decode_all(st, self._weight_vector(), self.n_jobs)]
        return split_tags(tags, lengths) if is_token_input(X) else tags

    def decision_function(self, X, lengths=None, *, sequence_ids=None):
        """Per-token tag scores: the max-marginals of the sequence score.

        ``scores[t, k]`` is the score of the best tag sequence of token t's sequence that gives
        token t the tag ``classes_[k]`` (its unary scores, transitions and start/end scores), so
        that ``classes_[scores.argmax(axis=1)]`` is the Viterbi labelling that ``predict``
        returns (up to ties), and ``scores[t].max()`` is the best sequence's score.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_tokens, n_features)
            One row per token, the sequences one after the other.
        lengths : array-like of int, optional
            The number of tokens of each sequence, in order (or `sequence_ids`).
        sequence_ids : array-like of shape (n_tokens,), optional
            One id per row; a sequence is a run of equal consecutive ids.

        Returns
        -------
        ndarray of shape (n_tokens, n_tags)
            The scores, columns in the order of ``classes_``.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import ChainSSVM
        >>> X = np.eye(3)[[0, 1, 2, 0, 1, 2]]
        >>> y = np.array([0, 1, 2, 0, 1, 2])
        >>> est = ChainSSVM(C=10.0).fit(X, y, lengths=[3, 3])
        >>> S = est.decision_function(X, lengths=[3, 3])
        >>> S.shape
        (6, 3)
        >>> bool((est.classes_[S.argmax(axis=1)] == est.predict(X, lengths=[3, 3])).all())
        True
        """
        self._check_fitted()
        X, lengths, tokens = self._token_rows(X, lengths, sequence_ids, "decision_function")
        X = self._checks.check_csr(X, self, reset=False)
        lengths = lengths if tokens else sequence_lengths(lengths, sequence_ids, X.shape[0], "decision_function")
        U = np.asarray(X @ self.coef_.T) + self.intercept_
        A = self.transition_
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        fwd = U.copy()                     # best score of a prefix ending in each tag (unaries included)
        bwd = np.zeros_like(U)             # best score of the suffix after each tag
        if self.start_end and len(lengths):
            fwd[starts] += self.start_
            bwd[starts + lengths - 1] += self.end_
        # position by position over every sequence at once, in chunks of sequences
        chunk = max(1, MAX_MARGINAL_ENTRIES // max(A.size, 1))
        for lo in range(0, len(lengths), chunk):
            s, L = starts[lo:lo + chunk], lengths[lo:lo + chunk]
            for t in range(1, int(L.max()) if len(L) else 0):
                on = L > t
                cur = s[on] + t
                fwd[cur] += np.max(fwd[cur - 1][:, :, None] + A[None], axis=1)
                back = s[on] + L[on] - 1 - t        # positions counted from each sequence's end
                bwd[back] = np.max(A[None] + (U[back + 1] + bwd[back + 1])[:, None, :], axis=2)
        return fwd + bwd

    def score(self, X, y, lengths=None, sample_weight=None, *, sequence_ids=None):
        """Return the token accuracy on the given sequences.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_tokens, n_features)
            One row per token.
        y : array-like of shape (n_tokens,)
            The true tag of every token.
        lengths : array-like of int of shape (n_sequences,) or None, default=None
            The number of tokens of each sequence, in order; give this or sequence_ids.
        sample_weight : array-like of shape (n_sequences,) or (n_tokens,) or None, default=None
            Weights of the sequences, as in fit (every token weighs as its sequence).
        sequence_ids : array-like of shape (n_tokens,) or None, default=None
            One id per row instead of lengths: a sequence is a run of equal consecutive ids.

        Returns
        -------
        float
            The fraction of tokens whose tag is predicted (weighted by sample_weight).

        See Also
        --------
        ChainSSVM.sequence_accuracy : The fraction of sequences without a mistake.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import ChainSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
        >>> y = np.array([0, 1, 0, 1, 1])
        >>> clf = ChainSSVM(C=10.0).fit(X, y, lengths=[3, 2])
        >>> clf.score(X, [0, 1, 0, 1, 0], lengths=[3, 2])
        0.8
        """
        from ..distributed import decode_all
        st, lengths = self._structure_for(X, lengths, sequence_ids, "score")
        y = flat_tags(y, lengths) if is_token_input(X) else np.asarray(y)
        correct = self.classes_[decode_all(st, self._weight_vector(), self.n_jobs)] == y
        weights = None if sample_weight is None else np.repeat(
            sequence_weights(sample_weight, lengths, correct.shape[0], self._checks), lengths)
        return float(np.average(correct, weights=weights))

    def sequence_accuracy(self, X, y, lengths=None, *, sequence_ids=None):
        """Return the fraction of sequences predicted without a single mistake.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_tokens, n_features)
            One row per token.
        y : array-like of shape (n_tokens,)
            The true tag of every token.
        lengths : array-like of int of shape (n_sequences,) or None, default=None
            The number of tokens of each sequence, in order; give this or sequence_ids.
        sequence_ids : array-like of shape (n_tokens,) or None, default=None
            One id per row instead of lengths: a sequence is a run of equal consecutive ids.

        Returns
        -------
        float
            The fraction of sequences whose every tag is predicted (1.0 for no sequence).

        See Also
        --------
        ChainSSVM.score : The token accuracy.

        Examples
        --------
        >>> import numpy as np
        >>> from ssvmlinear import ChainSSVM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
        >>> y = np.array([0, 1, 0, 1, 1])
        >>> clf = ChainSSVM(C=10.0).fit(X, y, lengths=[3, 2])
        >>> clf.sequence_accuracy(X, [0, 1, 0, 1, 0], lengths=[3, 2])
        0.5
        """
        from ..distributed import decode_all
        st, lengths = self._structure_for(X, lengths, sequence_ids, "sequence_accuracy")
        y = flat_tags(y, lengths) if is_token_input(X) else np.asarray(y)
        wrong = self.classes_[decode_all(st, self._weight_vector(), self.n_jobs)] != y
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        return float(np.mean(np.add.reduceat(wrong, starts) == 0)) if len(lengths) else 1.0


# ShardedData: per-shard work on the worker that holds the shard (whole sequences)
def _shard_structure(part, classes, n_features, bias, start_end, normalize_loss, outside=-1):
    from ..distributed import widened
    y_idx = np.searchsorted(classes, part["y"]).astype(np.int32)
    return ChainStructure(CSRDataset(widened(part["X"], n_features), bias), y_idx, part["lengths"],
                          classes.shape[0], start_end, normalize_loss, outside)


def _shard_Cs(part, C):
    return np.full(part["lengths"].shape[0], float(C))


def _shard_predict(part, classes, n_features, bias, start_end, normalize_loss, w):
    st = _shard_structure(dict(part, y=np.full(part["y"].shape[0], classes[0])), classes, n_features, bias,
                          start_end, normalize_loss)
    from ..parallel import predict_structure
    return predict_structure(st, w, 1)
