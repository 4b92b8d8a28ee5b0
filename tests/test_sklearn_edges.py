"""scikit-learn's model selection and pipelines with the structured estimators."""
import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GroupKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler

from ssvmlinear import ChainSSVM, load_svmlight_file

from conftest import DATA


@pytest.fixture(scope="module")
def words():
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters_test.svm.gz", n_features=128)
    n = int(lengths[:150].sum())
    return X[:n], y[:n], lengths[:150]


def test_chain_pipeline_scores_with_routed_sequence_ids(words):
    X, y, lengths = words
    ids = np.repeat(np.arange(len(lengths)), lengths)
    with sklearn.config_context(enable_metadata_routing=True):
        est = ChainSSVM(max_iter=30).set_fit_request(sequence_ids=True).set_score_request(sequence_ids=True)
        pipe = make_pipeline(MaxAbsScaler(), est).fit(X, y, sequence_ids=ids)
        direct = ChainSSVM(max_iter=30).fit(MaxAbsScaler().fit_transform(X), y, lengths)
        assert pipe.score(X, y, sequence_ids=ids) == direct.score(MaxAbsScaler().fit_transform(X), y, lengths)
        scores = cross_val_score(est, X, y, cv=GroupKFold(3), params={"sequence_ids": ids, "groups": ids})
    assert scores.shape == (3,) and np.all((scores > 0.3) & (scores <= 1.0))


@pytest.mark.parametrize("call", ["cross_val_score", "pipeline_score"])
def test_chain_without_sequences_says_how_to_route_them(words, call):
    X, y, lengths = words
    if call == "cross_val_score":
        with pytest.raises(ValueError, match="metadata routing"):
            cross_val_score(ChainSSVM(max_iter=5), X, y, cv=2, error_score="raise")
    else:
        pipe = make_pipeline(MaxAbsScaler(), ChainSSVM(max_iter=5)).fit(X, y, chainssvm__lengths=lengths)
        with pytest.raises(ValueError, match=r"set_score_request\(sequence_ids=True\)"):
            pipe.score(X, y)


def test_chain_decision_function_in_a_pipeline(words):
    X, y, lengths = words
    ids = np.repeat(np.arange(len(lengths)), lengths)
    with sklearn.config_context(enable_metadata_routing=True):
        est = ChainSSVM(max_iter=30).set_fit_request(sequence_ids=True)
        est.set_decision_function_request(sequence_ids=True).set_predict_request(sequence_ids=True)
        pipe = make_pipeline(MaxAbsScaler(), est).fit(X, y, sequence_ids=ids)
        S = pipe.decision_function(X, sequence_ids=ids)
        assert np.array_equal(pipe.classes_[S.argmax(axis=1)], pipe.predict(X, sequence_ids=ids))


def test_multilabel_cross_validation_on_a_loaded_file():
    """scikit-learn's model selection refuses a sparse y: label_format="dense" gives the array it takes."""
    from ssvmlinear import MultiLabelSSVM
    path = DATA / "scene_test.svm.gz"
    X, Y = load_svmlight_file(path, kind="multilabel")
    X2, D = load_svmlight_file(path, kind="multilabel", label_format="dense")
    assert isinstance(D, np.ndarray) and D.dtype == np.int8
    np.testing.assert_array_equal(D, Y.toarray())
    from sklearn.model_selection import KFold
    scores = cross_val_score(MultiLabelSSVM(C=0.1), X2, D, cv=KFold(2, shuffle=True, random_state=0),
                             scoring="f1_micro")
    assert scores.shape == (2,) and np.all((scores > 0.2) & (scores <= 1.0))


def test_dense_labels_are_refused_beyond_memory(monkeypatch, tmp_path):
    import ssvmlinear.utils as utils
    path = tmp_path / "wide.svm"
    path.write_text("0,2000000000 1:1\n1 2:1\n")
    monkeypatch.setattr(utils, "available_memory", lambda: 10 ** 9)
    with pytest.raises(ValueError, match=r"wide.svm: a dense label matrix of 2 x 2000000001"):
        load_svmlight_file(path, kind="multilabel", label_format="dense")
    with pytest.raises(ValueError, match="label_format must be 'csr' or 'dense'"):
        load_svmlight_file(path, label_format="lists")
