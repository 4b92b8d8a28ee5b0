"""Evaluation measures: multi-label ones on 0/1 indicator matrices (dense arrays or scipy sparse),
and entity-level ones on tag sequences.

Indicator matrices: rows are examples, columns labels; any nonzero entry counts as 1. Sparse input stays sparse
(only per-row and per-column counts are formed), so large label spaces are cheap.

- ``subset_accuracy``: fraction of examples whose predicted label set is exactly right.
- ``hamming_loss``: fraction of wrong (example, label) entries.
- ``micro_f1``: F1 of all (example, label) decisions pooled: 2 TP / (2 TP + FP + FN).
- ``macro_f1``: mean over labels of each label's F1.
- ``example_accuracy``: the multi-label papers' "Acc" (Jaccard index averaged over examples):
  mean of |y ∩ ŷ| / |y ∪ ŷ|, counted as 1 when both sets are empty.
- ``entity_scores`` (and ``entity_spans``): entity-level precision, recall and F1 of tag
  sequences (named entities, chunks), by conlleval's rules or strictly by a tagging scheme.

Where a ratio is 0/0 (F1 of a label that is neither present nor predicted, micro-F1 of all-empty
matrices), ``zero_division`` is returned, 0.0 by default as in scikit-learn.
"""
import numpy as np
import scipy.sparse as sp

__all__ = ["subset_accuracy", "hamming_loss", "micro_f1", "macro_f1", "example_accuracy", "entity_scores",
           "entity_spans"]


def _indicator(M, name):
    if sp.issparse(M):
        M = sp.csr_matrix(M, copy=True)
        M.sum_duplicates()
        M.eliminate_zeros()
    else:
        M = np.asarray(M)
        if M.ndim != 2:
            raise ValueError(f"{name} must be a 2-D indicator matrix; got shape {M.shape}")
        M = sp.csr_matrix(M != 0)
    M = sp.csr_matrix((np.ones(M.nnz, dtype=np.int64), M.indices, M.indptr), shape=M.shape)
    return M


def _counts(y_true, y_pred):
    """Per-example |y|, |ŷ|, |y ∩ ŷ| and the two CSR indicators."""
    Y, P = _indicator(y_true, "y_true"), _indicator(y_pred, "y_pred")
    if Y.shape != P.shape:
        raise ValueError(f"y_true has shape {Y.shape} but y_pred has shape {P.shape}")
    inter = np.asarray(Y.multiply(P).sum(axis=1)).ravel()
    return np.diff(Y.indptr), np.diff(P.indptr), inter, Y, P


def _weights(sample_weight, n):
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.shape != (n,):
        raise ValueError(f"sample_weight has shape {sw.shape}; expected ({n},)")
    return sw


def _mean(values, sample_weight):
    if values.shape[0] == 0:
        return 0.0
    return float(np.average(values, weights=_weights(sample_weight, values.shape[0])))


def subset_accuracy(y_true, y_pred, sample_weight=None):
    """Compute the fraction of examples whose predicted label set is exactly right.

    The exact match ratio: an example counts only when every one of its labels is right.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The true 0/1 indicator matrix (any nonzero entry counts as 1).
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The predicted indicator matrix, of the same shape.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Weights of the examples in the mean.

    Returns
    -------
    float
        The (weighted) fraction, between 0 and 1; 0.0 for no example.

    Raises
    ------
    ValueError
        When y_true and y_pred differ in shape or are not 2-D.

    See Also
    --------
    hamming_loss : The fraction of wrong (example, label) entries.
    example_accuracy : Partial credit for partly right label sets.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import subset_accuracy
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    >>> P = np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    >>> subset_accuracy(Y, P)
    0.3333333333333333
    """
    ny, npred, inter, _, _ = _counts(y_true, y_pred)
    return _mean(((ny == inter) & (npred == inter)).astype(np.float64), sample_weight)


def hamming_loss(y_true, y_pred, sample_weight=None):
    """Compute the fraction of wrong (example, label) entries.

    The mean over examples of the fraction of labels predicted wrongly.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The true 0/1 indicator matrix (any nonzero entry counts as 1).
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The predicted indicator matrix, of the same shape.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Weights of the examples in the mean.

    Returns
    -------
    float
        The loss, between 0 and 1; 0.0 for no example or no label.

    Raises
    ------
    ValueError
        When y_true and y_pred differ in shape or are not 2-D.

    See Also
    --------
    subset_accuracy : The fraction of exactly right label sets.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import hamming_loss
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    >>> P = np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    >>> hamming_loss(Y, P)   # 3 of the 9 entries differ
    0.3333333333333333
    """
    ny, npred, inter, Y, _ = _counts(y_true, y_pred)
    K = Y.shape[1]
    if K == 0:
        return 0.0
    return _mean((ny + npred - 2 * inter) / K, sample_weight)


def micro_f1(y_true, y_pred, zero_division=0.0):
    """Compute the micro-averaged F1 of all (example, label) decisions.

    2 TP / (2 TP + FP + FN), the true and false positives and the false negatives counted over
    all entries pooled.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The true 0/1 indicator matrix (any nonzero entry counts as 1).
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The predicted indicator matrix, of the same shape.
    zero_division : float, default=0.0
        The value returned where the ratio is 0/0.

    Returns
    -------
    float
        The F1, between 0 and 1 (zero_division when both matrices are empty).

    Raises
    ------
    ValueError
        When y_true and y_pred differ in shape or are not 2-D.

    See Also
    --------
    macro_f1 : The mean of the per-label F1.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import micro_f1
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    >>> P = np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    >>> micro_f1(Y, P)   # 3 true positives, 1 false positive, 2 false negatives
    0.6666666666666666
    """
    ny, npred, inter, _, _ = _counts(y_true, y_pred)
    den = float(ny.sum() + npred.sum())
    return 2.0 * float(inter.sum()) / den if den > 0 else float(zero_division)


def macro_f1(y_true, y_pred, zero_division=0.0):
    """Compute the macro-averaged F1: the unweighted mean of the per-label F1.

    The F1 of label k is 2 TP_k / (|true_k| + |pred_k|); a label that is neither present nor
    predicted has F1 = zero_division.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The true 0/1 indicator matrix (any nonzero entry counts as 1).
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The predicted indicator matrix, of the same shape.
    zero_division : float, default=0.0
        The value returned where the ratio is 0/0.

    Returns
    -------
    float
        The mean F1, between 0 and 1 (zero_division when there is no label).

    Raises
    ------
    ValueError
        When y_true and y_pred differ in shape or are not 2-D.

    See Also
    --------
    micro_f1 : The F1 of all decisions pooled.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import macro_f1
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    >>> P = np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    >>> round(macro_f1(Y, P), 4)   # the labels' F1: 1, 0 and 2/3
    0.5556
    """
    _, _, _, Y, P = _counts(y_true, y_pred)
    K = Y.shape[1]
    if K == 0:
        return float(zero_division)
    tp = np.asarray(Y.multiply(P).sum(axis=0), dtype=np.float64).ravel()
    den = (np.bincount(Y.indices, minlength=K) + np.bincount(P.indices, minlength=K)).astype(np.float64)
    f = np.divide(2.0 * tp, den, out=np.full(K, float(zero_division)), where=den > 0)
    return float(f.mean())


def example_accuracy(y_true, y_pred, sample_weight=None):
    """Compute the example-based accuracy (the Jaccard index averaged over examples).

    The multi-label papers' "Acc": the mean over examples of |y ∩ ŷ| / |y ∪ ŷ|, counted as 1
    when both sets are empty.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The true 0/1 indicator matrix (any nonzero entry counts as 1).
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The predicted indicator matrix, of the same shape.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Weights of the examples in the mean.

    Returns
    -------
    float
        The accuracy, between 0 and 1; 0.0 for no example.

    Raises
    ------
    ValueError
        When y_true and y_pred differ in shape or are not 2-D.

    See Also
    --------
    subset_accuracy : The fraction of exactly right label sets.
    MultiLabelSSVM.score : This measure on a fitted model's predictions.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import example_accuracy
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    >>> P = np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    >>> round(example_accuracy(Y, P), 4)   # 1, 0 and 1/3
    0.4444
    """
    ny, npred, inter, _, _ = _counts(y_true, y_pred)
    union = ny + npred - inter
    acc = np.divide(inter, union, out=np.ones(union.shape[0]), where=union > 0)
    return _mean(acc, sample_weight)


# ---- entity-level scores of tag sequences (named entities, chunks) ----

# Tag prefixes, coded; BILOU's L and U are IOBES's E and S.
_O, _B, _I, _E, _S = range(5)
_PREFIX_CODES = {"B": _B, "I": _I, "E": _E, "S": _S, "L": _E, "U": _S}
# The prefixes each scheme's tags may carry (besides the outside tag O).
SCHEMES = {"IOB1": "BI", "IOB2": "BI", "BIO": "BI", "IOE1": "IE", "IOE2": "IE", "IOE": "IE",
           "IOBES": "BIES", "BILOU": "BILU"}
_CANONICAL = {"BIO": "IOB2", "IOE": "IOE2"}

# Strict mode: a span is an entity only when it is well formed in its scheme (seqeval's strict
# mode, after Ramshaw & Marcus and Ratinov & Roth). Per scheme: the (previous, current, same type)
# patterns that start a span, continue it, and the patterns (last token of the span, next token)
# that close it; None in a pattern's third place is any type, "*" in a prefix place any prefix.
_STRICT = {
    "IOB1": (({(_O, _I, None), (_I, _I, False), (_B, _I, None), (_I, _B, True), (_B, _B, True)}),
             {(_B, _I, True), (_I, _I, True)},
             {(_I, _I, False), (_I, _O, None), (_I, _B, None), (_B, _O, None), (_B, _I, False), (_B, _B, True)}),
    "IOE1": ({(_O, _I, None), (_I, _I, False), (_E, _I, None), (_E, _E, True)},
             {(_I, _I, True), (_I, _E, True)},
             {(_I, _I, False), (_I, _O, None), (_I, _E, False), (_E, _I, True), (_E, _E, True)}),
    "IOB2": ({("*", _B, None)},
             {(_B, _I, True), (_I, _I, True)},
             {(_I, _O, None), (_I, _I, False), (_I, _B, None), (_B, _O, None), (_B, _I, False), (_B, _B, None)}),
    "IOE2": ({(_O, _I, None), (_O, _E, None), (_E, _I, None), (_E, _E, None), (_I, _I, False), (_I, _E, False)},
             {(_I, _E, True), (_I, _I, True)},
             {(_E, "*", None)}),
    "IOBES": ({("*", _B, None), ("*", _S, None)},
              {(_B, _I, True), (_B, _E, True), (_I, _I, True), (_I, _E, True)},
              {(_S, "*", None), (_E, "*", None)}),
}
_STRICT["BILOU"] = _STRICT["IOBES"]


def _parse_tag(tag, allowed):
    """(prefix code, entity type) of a tag 'O' or 'P-TYPE' (P one of `allowed`), else ValueError."""
    if tag == "O":
        return _O, None
    text = str(tag)
    head, dash, kind = text.partition("-")
    if head in allowed and (dash or len(text) == 1):
        return _PREFIX_CODES[head], kind
    raise ValueError(f"tag {tag!r} is not an entity tag: expected O or P-TYPE with P one of "
                     f"{', '.join(allowed)}" + ("" if allowed == "BIESLU" else " (the scheme's prefixes)"))


def looks_like_entity_tags(tags):
    """Whether every tag is 'O' or 'P-TYPE' with P one of B, I, E, S, L, U, and one of them is not
    'O' (the tags entity_scores scores)."""
    tags = list(tags)
    try:
        codes = [_parse_tag(t, "BIESLU")[0] for t in tags if isinstance(t, str)]
    except ValueError:
        return False
    return len(codes) == len(tags) and any(c != _O for c in codes)


def _as_sequences(y, lengths, name):
    """The tag sequences of y: a list of sequences, or one flat array cut by lengths."""
    if lengths is not None:
        flat = np.asarray(y, dtype=object).ravel()
        lengths = np.asarray(lengths, dtype=np.int64)
        if lengths.ndim != 1 or (lengths.size and lengths.min() < 0) or lengths.sum() != flat.shape[0]:
            raise ValueError(f"lengths must be non-negative and sum to the {flat.shape[0]} tags of {name}")
        return np.split(flat, np.cumsum(lengths)[:-1]) if lengths.size else []
    if isinstance(y, str) or not all(isinstance(s, (list, tuple, np.ndarray)) for s in y):
        raise ValueError(f"{name} must be a list of tag sequences (lists of tags), or a flat array of tags "
                         "with lengths")
    return list(y)


def _codes(sequences, allowed):
    """Flat prefix codes and type ids of the sequences, with an O after each sequence (so spans
    never cross sequences), and the type names."""
    prefixes, kinds, names = [], [], {}
    for seq in sequences:
        for tag in seq:
            code, kind = _parse_tag(tag, allowed)
            prefixes.append(code)
            kinds.append(-1 if kind is None else names.setdefault(kind, len(names)))
        prefixes.append(_O)
        kinds.append(-1)
    return np.array(prefixes, dtype=np.int8), np.array(kinds, dtype=np.int64), list(names)


def _conlleval_spans(prefix, kind):
    """Spans (start, end inclusive, type id) by conlleval's chunk rules, vectorised: a chunk ends
    before token i when the previous token is E or S, when a B or I is followed by B, S or O, or
    when the previous token is in a chunk of another type; one starts at B and S, at I or E after
    O, E or S, and wherever the type changes."""
    prev = np.concatenate([[_O], prefix[:-1]])
    prev_kind = np.concatenate([[-1], kind[:-1]])
    changed = kind != prev_kind
    ends = ((prev == _E) | (prev == _S) | (((prev == _B) | (prev == _I)) & np.isin(prefix, (_B, _S, _O)))
            | ((prev != _O) & changed))
    starts = ((prefix == _B) | (prefix == _S) | (np.isin(prev, (_E, _S, _O)) & np.isin(prefix, (_I, _E)))
              | ((prefix != _O) & changed))
    last = np.flatnonzero(ends) - 1          # the chunk's last token
    first_of = np.flatnonzero(starts)
    first = first_of[np.searchsorted(first_of, last, side="right") - 1]
    return np.stack([first, last, kind[last]], axis=1)


def _strict_spans(prefix, kind, scheme):
    """Spans well formed in `scheme` (seqeval's strict mode)."""
    start_p, inside_p, end_p = _STRICT[scheme]

    def match(patterns, p, c, same):
        return any((a == "*" or a == p) and (b == "*" or b == c) and (s is None or s == same)
                   for a, b, s in patterns)

    spans, n, i = [], prefix.shape[0], 0
    p_prev, k_prev = _O, -1
    while i < n:
        c, k = prefix[i], kind[i]
        if c != _O and match(start_p, p_prev, c, k == k_prev):
            j, pp, kk = i + 1, c, k
            while j < n and match(inside_p, pp, prefix[j], prefix[j] != _O and kind[j] == kk):
                pp, kk, j = prefix[j], kind[j], j + 1
            nxt = prefix[j] if j < n else _O
            if match(end_p, pp, nxt, j < n and kind[j] == kk):
                spans.append((i, j - 1, k))
            i = j
            p_prev, k_prev = prefix[i - 1], kind[i - 1]
        else:
            p_prev, k_prev = c, k
            i += 1
    return np.array(spans, dtype=np.int64).reshape(-1, 3)


def entity_spans(tags, scheme=None, mode="conlleval"):
    """Find the entities (chunks) of one tag sequence.

    An entity is a run of tokens of one type, read from tags such as B-PER, I-PER by CoNLL's
    conlleval rules or strictly by a tagging scheme's (as entity_scores reads them).

    Parameters
    ----------
    tags : sequence of str
        The tags of one sequence: 'O' or 'P-TYPE', P a prefix of the scheme.
    scheme : {'IOB1', 'IOB2', 'BIO', 'IOE1', 'IOE2', 'IOE', 'IOBES', 'BILOU'} or None, default=None
        The tagging scheme: its prefixes are the only ones allowed. None allows B, I, E, S, L
        and U (L read as E, U as S); only with mode='conlleval'.
    mode : {'conlleval', 'strict'}, default='conlleval'
        'conlleval': CoNLL's conlleval rules, which read ill-formed spans (an I after O, a type
        change inside a span) as entities. 'strict': only spans well formed in `scheme` are
        entities.

    Returns
    -------
    list of tuple (str, int, int)
        (type, first token, last token) of each entity, in order.

    See Also
    --------
    entity_scores : Precision, recall and F1 of the entities.

    Examples
    --------
    >>> from ssvmlinear.metrics import entity_spans
    >>> entity_spans(["B-PER", "I-PER", "O", "I-LOC", "B-LOC"])
    [('PER', 0, 1), ('LOC', 3, 3), ('LOC', 4, 4)]
    >>> entity_spans(["B-PER", "I-PER", "O", "I-LOC", "B-LOC"], scheme="IOB2", mode="strict")
    [('PER', 0, 1), ('LOC', 4, 4)]
    """
    allowed, scheme = _check_scheme(scheme, mode)
    prefix, kind, names = _codes([list(tags)], allowed)
    spans = _conlleval_spans(prefix, kind) if mode == "conlleval" else _strict_spans(prefix, kind, scheme)
    return [(names[k], int(a), int(b)) for a, b, k in spans.tolist()]


def _check_scheme(scheme, mode):
    if mode not in ("conlleval", "strict"):
        raise ValueError(f"mode must be 'conlleval' or 'strict'; got {mode!r}")
    if scheme is None:
        if mode == "strict":
            raise ValueError("mode='strict' needs a scheme (IOB1, IOB2/BIO, IOE1, IOE2/IOE, IOBES or BILOU)")
        return "BIESLU", None
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)} or None; got {scheme!r}")
    return SCHEMES[scheme], _CANONICAL.get(scheme, scheme)


def entity_scores(y_true, y_pred, *, lengths=None, scheme=None, mode="conlleval", zero_division=0.0):
    """Compute entity-level precision, recall and F1, per entity type and averaged.

    An entity is a span of tokens with a type, read from tags such as B-PER, I-PER (IOB2) by
    CoNLL's conlleval rules, or strictly by a scheme's; a predicted entity counts only when its
    type, first and last token all match a true one. As seqeval and conlleval report.

    Parameters
    ----------
    y_true : list of sequences of str, or array-like of shape (n_tokens,)
        The true tags: a list of tag sequences, or every token's tag, the sequences one after
        the other, with `lengths`.
    y_pred : list of sequences of str, or array-like of shape (n_tokens,)
        The predicted tags, in the same form and shape.
    lengths : array-like of int or None, default=None
        The number of tokens of each sequence, when the tags are given flat.
    scheme : {'IOB1', 'IOB2', 'BIO', 'IOE1', 'IOE2', 'IOE', 'IOBES', 'BILOU'} or None, default=None
        The tagging scheme (its prefixes are the only ones allowed); None allows B, I, E, S, L
        and U (L read as E, U as S) with mode='conlleval'.
    mode : {'conlleval', 'strict'}, default='conlleval'
        'conlleval' reads ill-formed spans as conlleval does; 'strict' counts only spans well
        formed in `scheme` (seqeval's mode='strict').
    zero_division : float, default=0.0
        The value of a ratio 0/0 (precision without predicted entities, recall without true ones).

    Returns
    -------
    dict
        One entry per entity type (of the true or the predicted entities), sorted, then 'micro avg'
        (all entities pooled) and 'macro avg' (the mean over types); each a dict with
        'precision', 'recall', 'f1-score' and 'support' (the number of true entities), as
        scikit-learn's ``classification_report(..., output_dict=True)``.

    Raises
    ------
    ValueError
        For a tag that is neither O nor an entity tag of the scheme, sequences of different
        lengths, or an unknown scheme or mode.

    See Also
    --------
    entity_spans : The entities of one sequence.
    ChainSSVM : Trains a tagger.

    Examples
    --------
    >>> from ssvmlinear.metrics import entity_scores
    >>> y_true = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-ORG"]]
    >>> y_pred = [["B-PER", "I-PER", "O", "O"], ["O", "B-LOC"]]
    >>> s = entity_scores(y_true, y_pred)
    >>> sorted(s)
    ['LOC', 'ORG', 'PER', 'macro avg', 'micro avg']
    >>> s["micro avg"]["precision"], s["micro avg"]["recall"], s["PER"]["f1-score"]
    (0.5, 0.3333333333333333, 1.0)
    """
    allowed, scheme = _check_scheme(scheme, mode)
    true_seqs, pred_seqs = _as_sequences(y_true, lengths, "y_true"), _as_sequences(y_pred, lengths, "y_pred")
    if len(true_seqs) != len(pred_seqs) or any(len(a) != len(b) for a, b in zip(true_seqs, pred_seqs)):
        raise ValueError("y_true and y_pred must hold sequences of the same lengths")
    found = []
    for seqs in (true_seqs, pred_seqs):
        prefix, kind, names = _codes(seqs, allowed)
        spans = _conlleval_spans(prefix, kind) if mode == "conlleval" else _strict_spans(prefix, kind, scheme)
        found.append((spans, names))
    types = sorted({names[k] for spans, names in found for k in set(spans[:, 2].tolist())})
    index = {t: j for j, t in enumerate(types)}
    keyed = []
    for spans, names in found:         # (first, last, type) on the shared type numbering
        remap = np.array([index.get(n, -1) for n in names] + [0], dtype=np.int64)
        keyed.append(np.stack([spans[:, 0], spans[:, 1], remap[spans[:, 2]]], axis=1)
                     if spans.size else np.zeros((0, 3), dtype=np.int64))
    true_spans, pred_spans = keyed
    rows = np.concatenate([true_spans, pred_spans])
    _, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    hit = counts[inverse.reshape(-1)][:true_spans.shape[0]] == 2   # spans are unique within each side
    T = len(types)
    n_true = np.bincount(true_spans[:, 2], minlength=T)
    n_pred = np.bincount(pred_spans[:, 2], minlength=T)
    n_hit = np.bincount(true_spans[hit, 2], minlength=T)

    def scores(tp, n_p, n_t):
        p = tp / n_p if n_p else float(zero_division)
        r = tp / n_t if n_t else float(zero_division)
        f = 2 * p * r / (p + r) if p + r > 0 else (float(zero_division) if not (n_p or n_t) else 0.0)
        return {"precision": float(p), "recall": float(r), "f1-score": float(f), "support": int(n_t)}

    report = {t: scores(int(n_hit[j]), int(n_pred[j]), int(n_true[j])) for j, t in enumerate(types)}
    report["micro avg"] = scores(int(n_hit.sum()), int(n_pred.sum()), int(n_true.sum()))
    report["macro avg"] = {key: (float(np.mean([report[t][key] for t in types])) if types else float(zero_division))
                           for key in ("precision", "recall", "f1-score")}
    report["macro avg"]["support"] = int(n_true.sum())
    return report
