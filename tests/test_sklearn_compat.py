"""scikit-learn compatibility: check_estimator, model selection, pipelines, metadata routing."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.base import clone, is_classifier
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler
from sklearn.utils.estimator_checks import check_estimator

from ssvmlinear import ChainSSVM, MulticlassSSVM, MultiLabelSSVM
from ssvmlinear.utils import match_columns

from conftest import random_multiclass


# The sample-weight equivalence checks compare a fit with integer weights to a fit on repeated
# rows at rtol 1e-7: both have the same optimum, but the default stopping rules (SDM's tol=0.1, as
# LIBLINEAR's) stop before that precision. They run below on a fit to tol=1e-10 instead.
SW_EQUIVALENCE = ("check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data")


@pytest.mark.parametrize("est", [MulticlassSSVM(), MultiLabelSSVM(), MultiLabelSSVM(edges="chow-liu")],
                         ids=lambda e: type(e).__name__ + ("-chow-liu" if getattr(e, "edges", None) else ""))
def test_check_estimator(est):
    # Skips left: check_array_api_input (needs SCIPY_ARRAY_API; array_api_support tag is False),
    # MultiLabelSSVM's predict_proba format check (no predict_proba), pandas checks if pandas is absent.
    reason = "the default tol stops short of rtol 1e-7; checked at tol=1e-10 in test_sample_weight_equivalence"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(est, expected_failed_checks={name: reason for name in SW_EQUIVALENCE})


@pytest.mark.parametrize("est", [MulticlassSSVM(tol=1e-10, max_iter=100000), MultiLabelSSVM(tol=1e-10, max_iter=100000)],
                         ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("check", SW_EQUIVALENCE)
def test_sample_weight_equivalence(est, check):
    import sklearn.utils.estimator_checks as checks
    getattr(checks, check)(type(est).__name__, est)


def test_tags_and_is_classifier():
    assert is_classifier(MulticlassSSVM()) and is_classifier(MultiLabelSSVM()) and is_classifier(ChainSSVM())
    tags = MultiLabelSSVM().__sklearn_tags__()
    assert tags.input_tags.sparse and tags.classifier_tags.multi_label and tags.target_tags.multi_output
    assert not tags.classifier_tags.multi_class
    assert MulticlassSSVM().__sklearn_tags__().input_tags.sparse


# ---------------------------------------------------------------- the failures named in the issue

def test_predict_checks_the_number_of_features():
    X, y = random_multiclass(n=40, d=6, K=3, seed=9)
    est = MulticlassSSVM().fit(X, y)
    for bad in (X[:, :4], sp.hstack([X, X[:, :2]]).tocsr()):
        with pytest.raises(ValueError, match="X has \\d+ features, but MulticlassSSVM is expecting 6"):
            est.predict(bad)
        with pytest.raises(ValueError, match="expecting 6 features"):
            est.decision_function(bad)


def test_unfitted_use_raises_not_fitted_error():
    X, y = random_multiclass()
    for est in (MulticlassSSVM(), MultiLabelSSVM()):
        with pytest.raises(NotFittedError):
            est.predict(X)
        with pytest.raises(NotFittedError):
            est.decision_function(X)
    with pytest.raises(NotFittedError):
        ChainSSVM().predict(X, [X.shape[0]])


def test_bad_inputs_rejected():
    X, y = random_multiclass(n=20)
    with pytest.raises(ValueError, match="non-zero"):
        MulticlassSSVM().fit(X, y, sample_weight=np.zeros(20))
    with pytest.raises(ValueError, match="Complex data not supported"):
        MulticlassSSVM().fit(X.toarray() + 1j, y)
    with pytest.raises(ValueError, match="0 feature"):
        MulticlassSSVM().fit(np.zeros((20, 0)), y)
    with pytest.raises(ValueError, match="Unknown label type"):
        MulticlassSSVM().fit(X, np.linspace(0, 1, 20))
    with pytest.raises(ValueError, match="Unknown label type"):
        MultiLabelSSVM().fit(X, np.linspace(0, 1, 20))


def test_column_y_warns_and_fits_like_1d():
    X, y = random_multiclass(n=30)
    with pytest.warns(DataConversionWarning):
        a = MulticlassSSVM().fit(X, y[:, None])
    b = MulticlassSSVM().fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_binary_decision_function_is_1d_positive_for_classes_1():
    X, y = random_multiclass(n=40, K=2, seed=3)
    names = np.array(["neg", "pos"])[y]
    est = MulticlassSSVM().fit(X, names)
    d = est.decision_function(X)
    assert d.shape == (40,)
    S = np.asarray(X @ est.coef_.T) + est.intercept_  # coef_ keeps both Crammer-Singer rows
    np.testing.assert_allclose(d, S[:, 1] - S[:, 0])
    np.testing.assert_array_equal(est.predict(X), np.where(d > 0, "pos", "neg"))


def test_multilabel_1d_binary_y_is_the_one_label_problem():
    X, y = random_multiclass(n=40, K=2, seed=3)
    names = np.array(["neg", "pos"])[y]
    a = MultiLabelSSVM(tol=1e-8, max_iter=10000).fit(X, names)
    b = MultiLabelSSVM(tol=1e-8, max_iter=10000).fit(X, y[:, None])  # indicator of "pos"
    assert list(a.classes_) == ["neg", "pos"] and a.coef_.shape == (1, 6)
    np.testing.assert_allclose(a.coef_, b.coef_)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X)[:, 0])
    np.testing.assert_array_equal(a.predict(X), np.where(b.predict(X)[:, 0] == 1, "pos", "neg"))
    assert a.score(X, names) == np.mean(a.predict(X) == names)
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        MultiLabelSSVM().fit(X, np.arange(40) % 3)


def test_match_columns_keeps_liblinear_convention():
    X, y = random_multiclass(n=40, d=6, K=3, seed=9)
    est = MulticlassSSVM().fit(X, y)
    wider = sp.hstack([X, sp.random(40, 3, density=0.5, random_state=1)]).tocsr()
    np.testing.assert_array_equal(est.predict(match_columns(wider, 6)), est.predict(X))
    narrow = X[:, :4]
    padded = match_columns(narrow, 6)
    assert sp.isspmatrix_csr(padded) and padded.shape == (40, 6)
    np.testing.assert_allclose(est.decision_function(padded),
                               np.asarray(narrow @ est.coef_[:, :4].T) + est.intercept_)
    assert match_columns(X, 6) is X


def test_sparse_stays_sparse(monkeypatch):
    X, y = random_multiclass(n=30)
    est = MulticlassSSVM()

    def no_densify(*a, **k):
        raise AssertionError("densified")
    monkeypatch.setattr(sp.csr_matrix, "toarray", no_densify)
    est.fit(X, y).predict(X)


# ---------------------------------------------------------------- model selection

def _manual_grid(make, Cs, splits, fit, score):
    means = []
    for C in Cs:
        means.append(np.mean([score(fit(make(C), tr), te) for tr, te in splits]))
    return means


def _assert_grid_search_matches_manual(estimator_class, X, y, cv, Cs):
    """GridSearchCV over C gives the scores and the choice of a manual loop over the same folds."""
    gs = GridSearchCV(estimator_class(), {"C": Cs}, cv=cv).fit(X, y)
    ref = _manual_grid(lambda C: estimator_class(C=C), Cs, list(cv.split(X)),
                       lambda e, tr: e.fit(X[tr], y[tr]), lambda e, te: e.score(X[te], y[te]))
    np.testing.assert_allclose(gs.cv_results_["mean_test_score"], ref)
    assert gs.best_params_ == {"C": Cs[int(np.argmax(ref))]}


def test_multiclass_grid_search_cross_val_score_pipeline():
    X, y = random_multiclass(n=90, d=8, K=3, seed=4)
    cv = KFold(3, shuffle=True, random_state=0)
    _assert_grid_search_matches_manual(MulticlassSSVM, X, y, cv, [0.01, 0.1, 10.0])
    splits = list(cv.split(X))
    scores = cross_val_score(make_pipeline(MaxAbsScaler(), MulticlassSSVM(C=0.1)), X, y, cv=cv)
    Xs = MaxAbsScaler().fit(X).transform(X)
    np.testing.assert_allclose(scores, [MulticlassSSVM(C=0.1).fit(MaxAbsScaler().fit(X[tr]).transform(X[tr]), y[tr])
                                        .score(MaxAbsScaler().fit(X[tr]).transform(X[te]), y[te]) for tr, te in splits])
    assert Xs.shape == X.shape


def test_multilabel_grid_search_cross_val_score_pipeline():
    rng = np.random.default_rng(2)
    X = sp.random(80, 8, density=0.5, random_state=2, format="csr")
    Y = (X @ rng.standard_normal((8, 4)) > 0.2).astype(int)
    cv = KFold(4, shuffle=True, random_state=1)
    _assert_grid_search_matches_manual(MultiLabelSSVM, X, Y, cv, [0.01, 1.0])
    splits = list(cv.split(X))
    pipe = make_pipeline(MaxAbsScaler(), MultiLabelSSVM(C=1.0))
    scores = cross_val_score(pipe, X, Y, cv=cv)
    np.testing.assert_allclose(scores, [clone(pipe).fit(X[tr], Y[tr]).score(X[te], Y[te]) for tr, te in splits])


@pytest.fixture
def sequences():
    """Chain data: 30 sequences of 2..6 tokens, 3 tags, with ids as the svmlight qid."""
    rng = np.random.default_rng(5)
    lengths = rng.integers(2, 7, size=30)
    n = int(lengths.sum())
    X = sp.random(n, 10, density=0.4, random_state=5, format="csr")
    W = rng.standard_normal((3, 10))
    y = np.argmax(X @ W.T + 0.3 * rng.standard_normal((n, 3)), axis=1)
    qid = np.repeat(np.arange(100, 130), lengths)
    return X, y, lengths, qid


def test_chain_sequence_ids_equal_lengths(sequences):
    X, y, lengths, qid = sequences
    a = ChainSSVM(C=0.5).fit(X, y, lengths)
    b = ChainSSVM(C=0.5).fit(X, y, sequence_ids=qid)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.predict(X, lengths), b.predict(X, sequence_ids=qid))
    assert a.score(X, y, lengths) == b.score(X, y, sequence_ids=qid)
    with pytest.raises(ValueError, match="either lengths or sequence_ids"):
        ChainSSVM().fit(X, y, lengths, sequence_ids=qid)
    with pytest.raises(ValueError, match="needs lengths or sequence_ids"):
        ChainSSVM().fit(X, y)
    with pytest.raises(ValueError, match="sequence_ids has 3 entries"):
        ChainSSVM().fit(X, y, sequence_ids=qid[:3])


def test_chain_sample_weight_per_sequence_or_per_token(sequences):
    X, y, lengths, qid = sequences
    sw = np.linspace(0.5, 2.0, len(lengths))
    a = ChainSSVM(C=0.5).fit(X, y, lengths, sample_weight=sw)
    b = ChainSSVM(C=0.5).fit(X, y, sequence_ids=qid, sample_weight=np.repeat(sw, lengths))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    with pytest.raises(ValueError, match="sample_weight has 7 entries; expected one per sequence"):
        ChainSSVM().fit(X, y, lengths, sample_weight=np.ones(7))
    bad = np.repeat(sw, lengths)
    bad[1] += 1.0
    with pytest.raises(ValueError, match="constant within each sequence"):
        ChainSSVM().fit(X, y, lengths, sample_weight=bad)


@pytest.fixture
def routing():
    sklearn.set_config(enable_metadata_routing=True)
    yield
    sklearn.set_config(enable_metadata_routing=False)


def _keeps_sequences_whole(splits, qid):
    for tr, te in splits:
        for part in (tr, te):
            ids = set(qid[part])
            assert sum(np.sum(qid == i) for i in ids) == len(part)  # every token of each id


def test_chain_grid_search_keeps_sequences_whole(sequences, routing):
    X, y, lengths, qid = sequences
    cv = GroupKFold(3)
    splits = list(cv.split(X, y, groups=qid))
    _keeps_sequences_whole(splits, qid)
    Cs = [0.01, 0.1, 1.0]
    est = ChainSSVM().set_fit_request(sequence_ids=True).set_score_request(sequence_ids=True)
    gs = GridSearchCV(est, {"C": Cs}, cv=cv).fit(X, y, groups=qid, sequence_ids=qid)
    ref = _manual_grid(lambda C: ChainSSVM(C=C), Cs, splits,
                       lambda e, tr: e.fit(X[tr], y[tr], sequence_ids=qid[tr]),
                       lambda e, te: e.score(X[te], y[te], sequence_ids=qid[te]))
    np.testing.assert_allclose(gs.cv_results_["mean_test_score"], ref)
    assert gs.best_params_ == {"C": Cs[int(np.argmax(ref))]}
    # one argument: groups aliased to sequence_ids
    est2 = ChainSSVM().set_fit_request(sequence_ids="groups").set_score_request(sequence_ids="groups")
    gs2 = GridSearchCV(est2, {"C": Cs}, cv=cv).fit(X, y, groups=qid)
    np.testing.assert_allclose(gs2.cv_results_["mean_test_score"], ref)


def test_chain_cross_val_score_and_pipeline(sequences, routing):
    X, y, lengths, qid = sequences
    cv = GroupKFold(3)
    splits = list(cv.split(X, y, groups=qid))
    chain = ChainSSVM(C=0.1).set_fit_request(sequence_ids=True).set_score_request(sequence_ids=True) \
        .set_predict_request(sequence_ids=True)
    scores = cross_val_score(chain, X, y, cv=cv, params={"groups": qid, "sequence_ids": qid})
    ref = [ChainSSVM(C=0.1).fit(X[tr], y[tr], sequence_ids=qid[tr]).score(X[te], y[te], sequence_ids=qid[te])
           for tr, te in splits]
    np.testing.assert_allclose(scores, ref)
    pipe = make_pipeline(MaxAbsScaler(), clone(chain))
    pipe.fit(X, y, sequence_ids=qid)
    Xs = MaxAbsScaler().fit_transform(X)
    direct = ChainSSVM(C=0.1).fit(Xs, y, sequence_ids=qid)
    np.testing.assert_array_equal(pipe.predict(X, sequence_ids=qid), direct.predict(Xs, sequence_ids=qid))
    assert pipe.score(X, y, sequence_ids=qid) == direct.score(Xs, y, sequence_ids=qid)
    scores = cross_val_score(pipe, X, y, cv=cv, params={"groups": qid, "sequence_ids": qid})
    assert np.all(scores > 0.3)


def test_chain_per_sequence_weight_under_routing_fails_clearly(sequences, routing):
    X, y, lengths, qid = sequences
    est = ChainSSVM().set_fit_request(sequence_ids=True, sample_weight=True) \
        .set_score_request(sequence_ids=True, sample_weight=True)
    with pytest.raises(ValueError, match="expected one per sequence"):
        cross_val_score(est, X, y, cv=GroupKFold(3), error_score="raise",
                        params={"groups": qid, "sequence_ids": qid, "sample_weight": np.ones(len(lengths))})
    # per-token weights (constant within a sequence) are sliced with the rows
    cross_val_score(est, X, y, cv=GroupKFold(3), error_score="raise",
                    params={"groups": qid, "sequence_ids": qid, "sample_weight": np.ones(len(qid))})


def test_cli_predict_keeps_liblinear_width_convention(tmp_path, capsys):
    # the estimators refuse another width; ssvm-predict pads / drops columns as LIBLINEAR
    from ssvmlinear import dump_svmlight_file, save_model
    from ssvmlinear.cli import predict_main
    X, y = random_multiclass(n=40, d=6, K=3, seed=9)
    est = MulticlassSSVM().fit(X, y)
    save_model(est, tmp_path / "m")
    expected = est.predict(X)
    for name, Xt in (("wide", sp.hstack([X, sp.random(40, 3, density=0.5, random_state=1)]).tocsr()),
                     ("narrow", X[:, :4])):
        dump_svmlight_file(Xt, y, tmp_path / name, zero_based=False)
        assert predict_main(["-q", str(tmp_path / name), str(tmp_path / "m"), str(tmp_path / "out")]) == 0
        got = np.loadtxt(tmp_path / "out")
        ref = expected if name == "wide" else est.predict(match_columns(Xt, 6))
        np.testing.assert_array_equal(got, ref)
