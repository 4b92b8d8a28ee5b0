"""Entity-level scores against seqeval (conlleval's rules, and its strict mode per scheme)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ssvmlinear.metrics import entity_scores, entity_spans, looks_like_entity_tags, SCHEMES

seqeval_metrics = pytest.importorskip("seqeval.metrics")
seqeval_scheme = pytest.importorskip("seqeval.scheme")

TYPES = ["PER", "LOC", "ORG"]


def tags_of(scheme):
    prefixes = SCHEMES[scheme] if scheme else "BIES"
    return ["O"] + [f"{p}-{t}" for p in prefixes for t in TYPES]


def sequences(scheme):
    tag = st.sampled_from(tags_of(scheme))
    return st.lists(st.lists(tag, min_size=0, max_size=12), min_size=1, max_size=6)


def paired(scheme):
    """Two lists of sequences of the same lengths."""
    return sequences(scheme).flatmap(lambda a: st.tuples(
        st.just(a), st.tuples(*[st.lists(st.sampled_from(tags_of(scheme)), min_size=len(s), max_size=len(s))
                                for s in a]).map(list)))


def reference(y_true, y_pred, scheme, mode):
    kw = {} if mode == "conlleval" else {"mode": "strict", "scheme": getattr(seqeval_scheme, scheme)}
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return seqeval_metrics.classification_report(y_true, y_pred, output_dict=True, zero_division=0, **kw)


def assert_same(ours, ref):
    ref = {k: v for k, v in ref.items() if k != "weighted avg"}
    assert sorted(ours) == sorted(ref)
    for key in ref:
        for measure in ("precision", "recall", "f1-score", "support"):
            assert ours[key][measure] == pytest.approx(ref[key][measure], abs=1e-12), (key, measure)


@pytest.mark.parametrize("scheme", [None, "IOB1", "IOB2", "IOE1", "IOE2", "IOBES"])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_conlleval_rules_equal_seqeval(scheme, data):
    y_true, y_pred = data.draw(paired(scheme))
    if not any(t != "O" for s in y_true + y_pred for t in s):
        return                        # seqeval's report needs one entity
    assert_same(entity_scores(y_true, y_pred, scheme=scheme), reference(y_true, y_pred, None, "conlleval"))


@pytest.mark.parametrize("scheme", ["IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU"])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_strict_mode_equals_seqeval(scheme, data):
    y_true, y_pred = data.draw(paired(scheme))
    ref = reference(y_true, y_pred, scheme, "strict")
    if not [k for k in ref if not k.endswith(" avg")]:
        return                        # no well-formed entity anywhere: seqeval's report is empty
    assert_same(entity_scores(y_true, y_pred, scheme=scheme, mode="strict"), ref)


@settings(max_examples=100, deadline=None)
@given(seqs=sequences("BILOU"))
def test_bilou_reads_l_and_u_as_iobes_e_and_s(seqs):
    as_iobes = [[t.replace("L-", "E-").replace("U-", "S-") for t in s] for s in seqs]
    for a, b in zip(seqs, as_iobes):
        assert entity_spans(a) == entity_spans(b)
        assert entity_spans(a, "BILOU", "strict") == entity_spans(b, "IOBES", "strict")


def test_spans_against_seqeval_get_entities():
    from seqeval.metrics.sequence_labeling import get_entities
    rng = np.random.default_rng(0)
    tags = tags_of(None)
    for _ in range(300):
        seq = list(rng.choice(tags, size=rng.integers(0, 15)))
        assert entity_spans(seq) == get_entities(seq)


def test_flat_tags_with_lengths_equal_the_nested_form():
    y_true = [["B-PER", "I-PER", "O"], ["B-LOC"], []]
    y_pred = [["B-PER", "O", "O"], ["B-LOC"], []]
    flat = entity_scores(sum(y_true, []), np.array(sum(y_pred, [])), lengths=[3, 1, 0])
    assert flat == entity_scores(y_true, y_pred)
    assert flat["micro avg"]["precision"] == 0.5 and flat["LOC"]["f1-score"] == 1.0


def test_an_entity_never_crosses_sequences():
    assert entity_scores([["B-PER"], ["I-PER"]], [["B-PER"], ["I-PER"]])["PER"]["support"] == 2


def test_refusals():
    with pytest.raises(ValueError, match="'PER' is not an entity tag"):
        entity_scores([["PER"]], [["O"]])
    with pytest.raises(ValueError, match="'E-PER' is not an entity tag"):
        entity_scores([["E-PER"]], [["O"]], scheme="IOB2")
    with pytest.raises(ValueError, match="needs a scheme"):
        entity_scores([["B-PER"]], [["O"]], mode="strict")
    with pytest.raises(ValueError, match="scheme must be one of"):
        entity_scores([["B-PER"]], [["O"]], scheme="XYZ")
    with pytest.raises(ValueError, match="same lengths"):
        entity_scores([["B-PER", "O"]], [["O"]])
    with pytest.raises(ValueError, match="sum to the 2 tags"):
        entity_scores(["B-PER", "O"], ["O", "O"], lengths=[1])
    with pytest.raises(ValueError, match="list of tag sequences"):
        entity_scores(["B-PER", "O"], ["O", "O"])


def test_zero_division_and_no_entities():
    s = entity_scores([["O", "O"]], [["O", "O"]], zero_division=1.0)
    assert s["micro avg"] == {"precision": 1.0, "recall": 1.0, "f1-score": 1.0, "support": 0}
    assert entity_scores([["B-PER"]], [["O"]])["PER"] == {"precision": 0.0, "recall": 0.0, "f1-score": 0.0,
                                                          "support": 1}


def test_looks_like_entity_tags():
    assert looks_like_entity_tags(["O", "B-PER", "I-PER"])
    assert looks_like_entity_tags(["O", "U-LOC", "L-LOC"])
    assert not looks_like_entity_tags(["O"])
    assert not looks_like_entity_tags(["a", "b"])
    assert not looks_like_entity_tags([1, 2])
