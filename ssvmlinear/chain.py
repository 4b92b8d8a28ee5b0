"""Sequence labeling (chain) structural SVM: the scikit-learn estimator."""
from sklearn.base import ClassifierMixin, _fit_context

from .base import StructuredSSVM, constraints_of
from .models.chain import ChainModel


class ChainSSVM(ClassifierMixin, StructuredSSVM, ChainModel):
    """Linear-chain structural SVM for sequence labeling (SVM^hmm's model, first order).

    phi(x, y) = sum_t x_t (x) e_{y_t} + transition counts (K x K) [+ start/end tag indicators];
    loss: Hamming (optionally divided by the sequence length). Problems (per sequence weight C_i):
      loss="margin" (solver "sdm"):  1/2||w||^2 + sum_i C_i max_y [Delta(y, y_i) + f(y) - f(y_i)]
      loss="lse"    (solver "sdcd"): 1/2||w||^2 + sum_i C_i sum_y max(0, Delta(y, y_i) + f(y) - f(y_i))
    Setting loss="lse" with the default solver selects LSE-SDCD; solver=SDCD(exact_violators=True)
    reaches the full LSE problem instead of its restriction to the final working sets.
    solver=GDMM() decomposes the dual into token and tag-pair factors; GDMM(fmo_subsets=nu) with
    nu > 1 selects its sublinear oracles, which pay with many tags (hundreds to thousands).

    {parameters}

    Notes
    -----
    Stopping rules: see MulticlassSSVM.
    fit(X, y, lengths, sample_weight=None): X has one row per token, y one tag per token, lengths
    the number of tokens of each sequence (in order). Instead of lengths, every method takes
    sequence_ids=: one id per row (as the svmlight qid), a sequence being a run of equal
    consecutive ids (neighbouring sequences need different ids). Being one entry per row,
    scikit-learn's model selection slices it with X, so with metadata routing
    (sklearn.set_config(enable_metadata_routing=True);
    ChainSSVM().set_fit_request(sequence_ids=True).set_score_request(sequence_ids=True)) GridSearchCV,
    cross_val_score and Pipeline work, and a GroupKFold on groups=sequence_ids keeps every sequence
    whole (aliasing, set_fit_request(sequence_ids="groups"), passes one array for both). sample_weight
    weighs sequences: one weight per sequence, or one per row constant within each sequence (the form
    that model selection slices correctly; a per-sequence array is not sliced and fails in the folds
    with a clear error). ChainSSVM is a scikit-learn classifier (tags: input_tags.sparse) but not
    checked by check_estimator, whose data have no sequences. Attributes: coef_ (n_tags, n_features), intercept_ (n_tags,),
    transition_ (n_tags, n_tags) indexed [previous, next], start_/end_ (n_tags,) when enabled,
    classes_ (the tags), and the solver diagnostics of MulticlassSSVM.
    """

    _parameter_constraints = constraints_of(ChainModel.params)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, lengths=None, sample_weight=None, *, sequence_ids=None):
        """lengths: tokens per sequence, or sequence_ids: one id per row; sample_weight: one weight
        per sequence, or one per row constant within each sequence (multiplies C). X may also be
        the ShardedData of ssvmlinear.distributed.load_svmlight_shards(..., kind="sequence")
        (tags and sequences included): training then runs where its shards live."""
        return ChainModel.fit(self, X, y, lengths, sample_weight, sequence_ids=sequence_ids)

    score = ChainModel.score      # token accuracy (before ClassifierMixin's in the MRO)
