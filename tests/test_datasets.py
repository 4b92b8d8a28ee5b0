"""The generated NER corpus: well-formed BIO tags, reproducible, unseen names in a held-out draw."""
import pytest

from ssvmlinear.datasets import make_entity_sentences, word_features
from ssvmlinear.metrics import entity_spans


def test_tags_are_well_formed_bio_and_cover_every_type():
    words, tags = make_entity_sentences(300, noise=0.5, random_state=0)
    assert [len(s) for s in words] == [len(t) for t in tags]
    types = set()
    for t in tags:
        strict = entity_spans(t, scheme="IOB2", mode="strict")
        assert strict == entity_spans(t)            # every span well formed
        types |= {kind for kind, _, _ in strict}
    assert types == {"PER", "LOC", "ORG", "MISC"}


def test_reproducible_and_held_out_names_are_new():
    a = make_entity_sentences(50, random_state=3)
    assert a == make_entity_sentences(50, random_state=3)
    train_names = {w for s, t in zip(*make_entity_sentences(500, random_state=0)) for w, g in zip(s, t)
                   if g.endswith("PER")}
    test_names = {w for s, t in zip(*make_entity_sentences(500, random_state=1)) for w, g in zip(s, t)
                  if g.endswith("PER")}
    assert len(test_names - train_names) > len(test_names) // 2


def test_word_features_and_refusal():
    f = word_features(["the", "Oslo", "Marathon"], 1)
    assert f["word.lower()"] == "oslo" and f["-1:word.lower()"] == "the" and f["+1:word.istitle()"]
    with pytest.raises(ValueError, match="noise"):
        make_entity_sentences(1, noise=2)
