"""The token-feature front end: SequenceVectorizer against scikit-learn's DictVectorizer and
FeatureHasher, and ChainSSVM on sentences of feature dicts = on the vectorized rows."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from sklearn.feature_extraction import DictVectorizer, FeatureHasher

from ssvmlinear import ChainSSVM
from ssvmlinear.feature_extraction import SequenceVectorizer
from ssvmlinear._kernels.tokens import murmurhash3

names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=6)
values = st.one_of(names, st.booleans(), st.integers(-5, 5), st.floats(-1e6, 1e6, allow_nan=False),
                   st.lists(names, max_size=3))
tokens = st.dictionaries(names, values, max_size=6)
sentences = st.lists(st.lists(tokens, max_size=5), min_size=1, max_size=5)


def flat(sents):
    return [tok for s in sents for tok in s]


def same_rows(A, B):
    A, B = sp.csr_matrix(A), sp.csr_matrix(B)
    A.eliminate_zeros()
    B.eliminate_zeros()
    assert A.shape == B.shape
    assert abs(A - B).max() == 0 if A.nnz or B.nnz else True


@settings(max_examples=200, deadline=None)
@given(train=sentences, test=sentences)
def test_vocabulary_equals_dictvectorizer(train, test):
    if not flat(train):
        return
    ours = SequenceVectorizer().fit(train)
    ref = DictVectorizer().fit(flat(train))
    assert ours.feature_names_ == list(ref.feature_names_)
    assert ours.vocabulary_ == ref.vocabulary_
    same_rows(ours.transform(train), ref.transform(flat(train)))
    if flat(test):
        same_rows(ours.transform(test), ref.transform(flat(test)))


@settings(max_examples=200, deadline=None)
@given(sents=sentences, n=st.sampled_from([1, 7, 2**10, 2**20]), alternate=st.booleans())
def test_hashing_equals_featurehasher(sents, n, alternate):
    if not flat(sents):
        return
    # FeatureHasher takes str values and numbers (not lists of str)
    sents = [[{k: v for k, v in tok.items() if not isinstance(v, list)} for tok in s] for s in sents]
    ours = SequenceVectorizer(n_features=n, alternate_sign=alternate).fit_transform(sents)
    ref = FeatureHasher(n_features=n, alternate_sign=alternate).transform(flat(sents))
    same_rows(ours, ref)


def test_murmurhash_equals_scikit_learns():
    from sklearn.utils import murmurhash3_32
    rng = np.random.default_rng(0)
    for n in range(40):
        key = rng.integers(0, 256, size=n, dtype=np.uint8).tobytes()
        assert murmurhash3(key) == murmurhash3_32(key, 0)


def test_lists_of_names_nested_dicts_and_empty_sentences():
    sents = [[["a", "b"], ["b"]], [], [{"p": {"x": 2.0, "y": "z"}}]]
    vec = SequenceVectorizer()
    X = vec.fit_transform(sents)
    assert vec.feature_names_ == ["a", "b", "p:x", "p:y=z"]
    assert X.toarray().tolist() == [[1, 1, 0, 0], [0, 1, 0, 0], [0, 0, 2, 1]]
    assert list(vec.get_feature_names_out()) == vec.feature_names_


@pytest.mark.parametrize("bad, match", [
    ([["word"]], "a token must be a dict"),
    ([[{"a": None}]], "has a value of type NoneType"),
    ([[{"a": float("nan")}]], "not finite"),
    ([[{1: "x"}]], "feature names must be str"),
    ([[{"a": [1]}]], "a list of values holds str"),
    (["not a sentence"], "a sentence must be a list of tokens"),
])
def test_refusals_name_the_sentence_and_token(bad, match):
    with pytest.raises(ValueError, match=match):
        SequenceVectorizer().fit(bad)


def test_sklearn_conventions():
    from sklearn.base import clone
    vec = SequenceVectorizer(n_features=8)
    assert clone(vec).get_params() == {"n_features": 8, "alternate_sign": True}
    with pytest.raises(ValueError, match="n_features"):
        SequenceVectorizer(n_features=0).fit([[{"a": 1}]])
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        SequenceVectorizer().transform([[{"a": 1}]])


def ner_like(n_sentences, seed):
    rng = np.random.default_rng(seed)
    words = {"PER": ["john", "mary", "ann"], "LOC": ["paris", "rome", "oslo"]}
    X, y = [], []
    for _ in range(n_sentences):
        sent, tags = [], []
        for _ in range(rng.integers(1, 8)):
            kind = rng.choice(["O", "PER", "LOC"])
            w = rng.choice(words[kind]) if kind != "O" else rng.choice(["the", "in", "saw", "a"])
            sent.append({"w": str(w), "title": bool(rng.random() < 0.5), "len": float(len(w))})
            tags.append("O" if kind == "O" else f"B-{kind}")
        for t in range(len(sent)):
            if t:
                sent[t]["-1:w"] = sent[t - 1]["w"]
        X.append(sent)
        y.append(tags)
    return X, y


def test_chain_fit_on_sentences_equals_fit_on_their_rows():
    X, y = ner_like(60, 0)
    est = ChainSSVM(C=1.0, random_state=0).fit(X, y)
    rows = SequenceVectorizer().fit_transform(X)
    lengths = [len(s) for s in X]
    ref = ChainSSVM(C=1.0, random_state=0).fit(rows, [t for s in y for t in s], lengths)
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    np.testing.assert_array_equal(est.transition_, ref.transition_)
    pred = est.predict(X)
    assert isinstance(pred, list) and [len(p) for p in pred] == lengths
    assert sum(pred, []) == ref.predict(rows, lengths).tolist()
    assert est.score(X, y) == ref.score(rows, [t for s in y for t in s], lengths)
    assert est.sequence_accuracy(X, y) == ref.sequence_accuracy(rows, [t for s in y for t in s], lengths)
    np.testing.assert_array_equal(est.decision_function(X), ref.decision_function(rows, lengths))
    # rows by the fitted vocabulary work too, with lengths
    assert est.predict(rows, lengths).tolist() == sum(pred, [])


def test_chain_on_sentences_tags_of_any_hashable_type():
    X, y = ner_like(30, 1)
    as_ints = [[{"O": 0, "B-PER": 1, "B-LOC": 2}[t] for t in s] for s in y]
    est = ChainSSVM(C=1.0).fit(X, as_ints)
    assert est.classes_.tolist() == [0, 1, 2]
    assert all(isinstance(t, int) for s in est.predict(X) for t in s)


def test_chain_on_sentences_refusals():
    X, y = ner_like(5, 2)
    with pytest.raises(ValueError, match="pass no lengths"):
        ChainSSVM().fit(X, y, lengths=[len(s) for s in X])
    with pytest.raises(ValueError, match="one tag per token"):
        ChainSSVM().fit(X, y[:-1])
    fitted_on_rows = ChainSSVM().fit(SequenceVectorizer().fit_transform(X), sum(y, []), [len(s) for s in X])
    with pytest.raises(ValueError, match="fitted on a matrix"):
        fitted_on_rows.predict(X)


def test_model_selection_on_sentences_with_a_splitter():
    import pickle
    import warnings
    from sklearn.model_selection import GridSearchCV, KFold
    X, y = ner_like(60, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(ChainSSVM(), {"C": [0.1, 1.0]}, cv=KFold(3)).fit(X, y)
    assert 0.5 < search.best_score_ <= 1.0
    again = pickle.loads(pickle.dumps(search.best_estimator_))
    assert again.predict(X[:3]) == search.best_estimator_.predict(X[:3])
