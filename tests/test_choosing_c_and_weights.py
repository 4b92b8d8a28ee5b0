"""Choosing C along a warm-started path (CPathCV, ssvm-train -C), and weights from the command line
(-wi, -W) training what the estimators' class_weight / sample_weight train."""
import re

import numpy as np
import pytest

from ssvmlinear import ChainSSVM, HierarchicalSSVM, MulticlassSSVM, dump_svmlight_file, load_model
from ssvmlinear.cli import train_main
from ssvmlinear.model_selection import CPathCV, c_grid, default_start_C, example_folds
from ssvmlinear.registry import SOLVERS, SOLVER_TYPES

from conftest import random_multiclass, DATA


@pytest.fixture
def multiclass_file(tmp_path):
    X, y = random_multiclass(n=150, d=12, K=3, density=0.5, seed=3)
    y = np.array([2, 5, 9])[y]
    dump_svmlight_file(X, y, tmp_path / "train.svm")
    return tmp_path / "train.svm", X, y


def test_path_scores_are_grid_search_scores_and_choose_its_C():
    from sklearn.model_selection import GridSearchCV, KFold
    X, y = random_multiclass(n=120, d=10, K=3, density=0.5, seed=5)
    Cs = [0.01, 0.1, 1.0, 10.0]
    splits = list(KFold(4, shuffle=True, random_state=0).split(X))
    est = MulticlassSSVM(tol=1e-6, max_iter=100000)          # converged: warm and cold reach one optimum
    path = CPathCV(est, Cs=Cs, cv=splits).fit(X, y)
    grid = GridSearchCV(est, {"C": Cs}, cv=splits).fit(X, y)
    assert path.best_C_ == grid.best_params_["C"]
    np.testing.assert_allclose(path.cv_results_["mean_test_score"], grid.cv_results_["mean_test_score"], atol=1e-12)
    np.testing.assert_array_equal(path.cv_results_["rank_test_score"], grid.cv_results_["rank_test_score"])
    assert path.scores_.shape == (4, 4) and path.best_estimator_.C == path.best_C_
    assert path.score(X, y) == grid.score(X, y)


def test_chain_path_keeps_sequences_whole():
    from ssvmlinear import load_svmlight_file
    X, y, L = load_svmlight_file(DATA / "ocr_letters_test.svm.gz")
    X, y, L = X[:L[:80].sum()], y[:L[:80].sum()], L[:80]
    path = CPathCV(ChainSSVM(), Cs=[0.1, 1.0], cv=3).fit(X, y, L)
    assert path.scores_.shape == (3, 2) and 0 < path.best_score_ <= 1
    rows = np.arange(X.shape[0])
    cut = [(rows[rows >= 5], rows[rows < 5]), (rows[rows < 5], rows[rows >= 5])]     # 5 rows: inside a word
    with pytest.raises(ValueError, match="cuts a sequence"):
        example_folds(X.shape[0], cut, 0, L)


def test_warm_start_flag_names_the_solvers_that_resume():
    X, y = random_multiclass(n=100, d=8, K=3, density=0.6, seed=2)
    for name, spec in SOLVERS.items():
        if not spec.solver_class().warm_starts:
            continue
        loss = "lse" if name == "sdcd" else "margin"
        est = MulticlassSSVM(C=0.5, solver=name, loss=loss, warm_start=True, max_iter=5000).fit(X, y)
        cold = MulticlassSSVM(C=0.5, solver=name, loss=loss, max_iter=5000).fit(X, y)
        again = est.fit(X, y)                                   # resumes at its optimum: few passes
        assert again.n_iter_ <= max(2, cold.n_iter_ // 2), name


def test_grid_and_start():
    assert c_grid(0.25).tolist() == [0.25 * 2 ** k for k in range(13)]
    X = np.eye(4) * 2.0                                          # n = 4, max |x|^2 = 4: 1/16
    assert default_start_C(X) == 2.0 ** -4
    assert default_start_C(X, [2, 2]) == 2.0 ** -4              # 2 sequences of |x|^2 = 8: 1/16


def test_cli_search_prints_each_C_and_the_best(multiclass_file, capsys):
    path, X, y = multiclass_file
    assert train_main(["-C", "-v", "3", "-c", "0.125", str(path)]) == 0
    check_search_output(capsys.readouterr().out, "Accuracy", 0.125)


def check_search_output(out, what, start):
    """-C's lines: one per C from `start` ('C = c  Cross Validation <what> = s%'), then the best."""
    lines = out.splitlines()
    rows = [re.fullmatch(rf"C = (\S+)  Cross Validation {re.escape(what)} = (\S+)%", line) for line in lines[:-1]]
    assert all(rows) and len(rows) >= 2 and float(rows[0].group(1)) == start
    best = re.fullmatch(rf"Best C = (\S+)  Cross Validation {re.escape(what)} = (\S+)%", lines[-1])
    assert best and max(float(r.group(2)) for r in rows) == float(best.group(2))


def test_multilabel_path_scores_are_grid_search_scores():
    from sklearn.model_selection import GridSearchCV, KFold
    from ssvmlinear import MultiLabelSSVM
    rng = np.random.default_rng(4)
    X = rng.normal(size=(90, 6))
    Y = (X[:, :3] + 0.5 * rng.normal(size=(90, 3)) > 0).astype(int)
    Cs = [0.03, 0.3, 3.0]
    splits = list(KFold(3, shuffle=True, random_state=0).split(X))
    est = MultiLabelSSVM(tol=1e-7, max_iter=100000)
    path = CPathCV(est, Cs=Cs, cv=splits).fit(X, Y)
    grid = GridSearchCV(est, {"C": Cs}, cv=splits).fit(X, Y)
    np.testing.assert_allclose(path.cv_results_["mean_test_score"], grid.cv_results_["mean_test_score"], atol=1e-12)
    assert path.best_C_ == grid.best_params_["C"]


def test_cli_search_on_label_sets_prints_example_based_accuracy(tmp_path, capsys):
    rng = np.random.default_rng(5)
    lines = []
    for _ in range(60):
        x = rng.normal(size=4)
        labels = [str(k) for k in range(3) if x[k] + 0.3 * rng.normal() > 0] or ["0"]
        lines.append(",".join(labels) + " " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(x)))
    path = tmp_path / "ml.svm"
    path.write_text("\n".join(lines) + "\n")
    assert train_main(["-C", "-v", "3", "-c", "0.25", str(path)]) == 0
    check_search_output(capsys.readouterr().out, "Accuracy (example-based)", 0.25)


def test_cli_search_refuses_solvers_without_warm_start_before_reading(capsys):
    cold = [n for n, (s, _) in SOLVER_TYPES.items() if not SOLVERS[s].solver_class().warm_starts]
    assert cold
    for number in cold:
        assert train_main(["-C", "-s", str(number), "no-such-file.svm"]) == 1
        assert "-C applies to -s 0, 1, 5" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------- weights

def _weights_of(path):
    m = load_model(path)
    return np.concatenate([np.ravel(m.coef_), np.ravel(m.intercept_)])


def test_class_weights_from_the_command_line_train_class_weight(multiclass_file, tmp_path):
    path, X, y = multiclass_file
    model = tmp_path / "m"
    assert train_main(["-q", "-w5", "3", "-w9", "0.5", str(path), str(model)]) == 0
    est = MulticlassSSVM(C=1.0, fit_intercept=False, random_state=1, n_jobs=1,
                         class_weight={5: 3.0, 9: 0.5}).fit(X, y)
    np.testing.assert_array_equal(_weights_of(model), np.concatenate([est.coef_.ravel(), est.intercept_]))
    plain = tmp_path / "plain"
    assert train_main(["-q", str(path), str(plain)]) == 0
    assert not np.array_equal(_weights_of(plain), _weights_of(model))


def test_instance_weights_from_a_file_train_sample_weight(multiclass_file, tmp_path):
    path, X, y = multiclass_file
    w = np.random.default_rng(0).uniform(0.1, 3.0, size=len(y)).round(3)
    (tmp_path / "w.txt").write_text("".join(f"{v}\n" for v in w))
    model = tmp_path / "m"
    assert train_main(["-q", "-W", str(tmp_path / "w.txt"), str(path), str(model)]) == 0
    est = MulticlassSSVM(C=1.0, fit_intercept=False, random_state=1, n_jobs=1).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(_weights_of(model), np.concatenate([est.coef_.ravel(), est.intercept_]))


def test_class_weights_of_a_hierarchy_weigh_its_examples(tmp_path):
    from ssvmlinear import load_svmlight_file, read_hierarchy
    train = DATA / "hier_demo_train.svm.gz"
    model = tmp_path / "m"
    X, y = load_svmlight_file(train)[:2]
    leaf = int(np.unique(y)[0])
    assert train_main(["-q", "-H", str(DATA / "hier_demo.hier"), f"-w{leaf}", "4", str(train), str(model)]) == 0
    h = read_hierarchy(DATA / "hier_demo.hier")
    est = HierarchicalSSVM(hierarchy=h, C=1.0, fit_intercept=False, random_state=1, n_jobs=1)
    est.fit(X, y, sample_weight=np.where(y == leaf, 4.0, 1.0))
    np.testing.assert_array_equal(load_model(model).coef_, est.coef_)


@pytest.mark.parametrize("text, message", [
    ("1\n2\nx\n", r"w.txt:3: a weight must be a finite number >= 0, got 'x'"),
    ("1\n-2\n", r"w.txt:2: a weight must be a finite number >= 0, got '-2'"),
    ("1\ninf\n", r"w.txt:2: a weight must be a finite number >= 0"),
    ("1 2\n", r"w.txt:1: expected one weight, got 2 tokens"),
    ("1\n2\n", r"w.txt: 2 weights for the 150 examples of the data file"),
    ("1\n" * 151, r"w.txt:151: more weights than the 150 examples"),
])
def test_bad_instance_weight_files_name_file_and_line(multiclass_file, tmp_path, capsys, text, message):
    path, _, _ = multiclass_file
    (tmp_path / "w.txt").write_text(text)
    assert train_main(["-q", "-W", str(tmp_path / "w.txt"), str(path), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert re.search(message, err) and err.count("\n") == 1 and not (tmp_path / "m").exists()


def test_class_weights_of_unknown_classes_and_other_structures_are_refused(multiclass_file, tmp_path, capsys):
    path, _, _ = multiclass_file
    assert train_main(["-q", "-w4", "2", str(path), str(tmp_path / "m")]) == 1
    assert "-w4: class 4 does not occur in" in capsys.readouterr().err
    assert train_main(["-q", "-w1", "2", str(DATA / "scene_train.svm.gz"), str(tmp_path / "m")]) == 1
    assert "class weights apply to multiclass, chain and hierarchy data" in capsys.readouterr().err


# ------------------------------------------------------------------ every option, before the data

def _bad_values():
    """(flag, bad value, extra arguments) for every ssvm-train flag that takes a checked value, from
    the descriptions the command line is built from (a flag added later is covered here too)."""
    from ssvmlinear.cli import _train_options
    out = []
    for flag, described in sorted(_train_options().items()):
        param, types = described[0]
        extra = ["-s", types[0]] if types else (["-s", "4"] if flag == "l" else [])
        if flag == "w":
            out.append(("w3", "-1", extra))
        elif param.kind in ("int", "real", "seed"):
            low = param.low if param.low is not None else 0
            out.append((flag, "nan" if param.kind == "real" and param.low is None else str(int(low) - 1), extra))
        elif param.kind == "options" and not param.also:
            out.append((flag, "bogus", extra + (["-H", "missing.hier"] if flag == "M" else [])))
        elif flag in ("t", "l"):
            out.append((flag, "bogus", extra))
    return out


@pytest.mark.parametrize("flag, value, extra", _bad_values())
def test_every_bad_option_value_is_one_line_naming_it_before_any_file_is_read(flag, value, extra, capsys):
    if flag == "n":
        value = "0"
    assert train_main(extra + [f"-{flag}", value, "no-such-file.svm"]) == 1
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith("ssvm-train: ") and f"-{flag}" in first and "no-such-file" not in err, err
    assert "missing.hier" not in err


def test_the_options_covered_are_every_option_with_a_checked_value():
    from ssvmlinear.cli import _train_options
    covered = {flag.rstrip("3") for flag, _, _ in _bad_values()}
    unchecked = {f for f, d in _train_options().items() if d[0][0].kind in ("str", "any", "bool")
                 or d[0][0].kind == "options" and d[0][0].also}          # -E: a name or a file of pairs
    assert covered | unchecked == set(_train_options())
    # files, an address and switches take anything; -t and -l are checked (by name, covered above)
    assert unchecked - covered <= {"W", "H", "E", "-scheduler", "q", "C"}


def test_a_solver_parameter_with_a_flag_is_one_line(monkeypatch, capsys):
    from ssvmlinear.cli import train_usage
    from ssvmlinear.params import Param
    from ssvmlinear.solvers import SDM
    extra = Param("lookahead", "int", 2, "Passes looked ahead.", low=1, flag="Z", metavar="k",
                  cli="passes looked ahead (default 2)")
    monkeypatch.setattr(SDM, "params", SDM.params + (extra,))
    assert "-Z k : -s 0: passes looked ahead (default 2)" in train_usage()
    assert train_main(["-Z", "0", "no-such-file.svm"]) == 1
    assert capsys.readouterr().err.startswith("ssvm-train: -Z must be an integer >= 1, got 0\n")
    assert train_main(["-s", "1", "-Z", "3", "no-such-file.svm"]) == 1
    assert "-Z applies to -s 0" in capsys.readouterr().err


def test_the_seed_error_is_the_cli_s_own(capsys):
    assert train_main(["-r", "-5", "no-such-file.svm"]) == 1
    assert capsys.readouterr().err.startswith("ssvm-train: -r must be an integer in [0, 2**32), got -5\n")


def test_class_weights_of_a_class_missing_from_a_fold_weigh_the_folds_that_have_it(multiclass_file, tmp_path,
                                                                                     capsys):
    """A class with one example is in one fold's test part only: that fold's fit weighs the classes
    it has (LIBLINEAR -v), by cross_val_predict, CPathCV and the command line alike."""
    from ssvmlinear.model_selection import cross_val_predict
    path, X, y = multiclass_file
    y = y.copy()
    y[0] = 7
    est = MulticlassSSVM(class_weight={7: 4.0, 5: 2.0})
    pred = cross_val_predict(est, X, y, n_folds=3)
    assert pred.shape == y.shape
    search = CPathCV(est, Cs=[0.1, 1.0], cv=3).fit(X, y)
    assert search.best_estimator_.class_weight == {7: 4.0, 5: 2.0}
    rare = tmp_path / "rare.svm"
    dump_svmlight_file(X, y, rare)
    assert train_main(["-w7", "4", "-v", "3", str(rare)]) == 0
    assert train_main(["-w7", "4", "-C", "-v", "3", str(rare)]) == 0
    assert "error" not in capsys.readouterr().err


def _merged_start_cases():
    from ssvmlinear import load_svmlight_file
    X, y = random_multiclass(n=150, d=12, K=4, density=0.5, seed=7)
    Xc, yc, L = load_svmlight_file(DATA / "ocr_letters_test.svm.gz")
    n = L[:60].sum()
    return [(MulticlassSSVM, X, y, None, [0.1, 1.0, 10.0]), (ChainSSVM, Xc[:n], yc[:n], L[:60], [0.1, 1.0])]


@pytest.mark.parametrize("case", range(2))
def test_the_folds_merged_state_is_a_feasible_start_of_the_whole_data(case):
    """Each example's dual variables, averaged over the folds that trained on it, sum to its C_i
    and keep every label any fold had; a fit from that start reaches the optimum of a cold fit."""
    from ssvmlinear.model_selection import c_path, merged_fold_state
    cls, X, y, L, Cs = _merged_start_cases()[case]
    folds = example_folds(X.shape[0], 3, 0, L)
    _, scores, states = c_path(cls(), X, y, np.asarray(Cs), folds, L, return_states=True)
    C = Cs[int(np.argmax(scores.mean(axis=0)))]
    merged = merged_fold_state(states, folds, L)
    n = folds.shape[0]
    assert merged["sizes"].shape == (n,) and np.all(merged["sizes"] >= 1)
    owner = np.repeat(np.arange(n), merged["sizes"])
    np.testing.assert_allclose(np.bincount(owner, weights=merged["alpha"], minlength=n), merged["Cs"], rtol=1e-12)
    assert np.all(merged["alpha"] >= 0)
    for k, st in enumerate(states):     # no example has fewer labels than in a fold
        assert np.all(st["sizes"] <= merged["sizes"][folds != k])
    fit_args = (X, y) if L is None else (X, y, L)
    warm = cls(C=C, tol=1e-8, max_iter=100000)
    warm._start_state = merged
    warm.fit(*fit_args)
    cold = cls(C=C, tol=1e-8, max_iter=100000).fit(*fit_args)
    assert warm.objective_ == pytest.approx(cold.objective_, rel=1e-6)


@pytest.mark.parametrize("case", range(2))
def test_the_refit_starts_from_the_folds_and_is_a_default_fit_at_the_best_C(case):
    cls, X, y, L, Cs = _merged_start_cases()[case]
    path = CPathCV(cls(), Cs=Cs, cv=3).fit(X, y, L)
    fit_args = (X, y) if L is None else (X, y, L)
    cold = cls(C=path.best_C_).fit(*fit_args)
    best = path.best_estimator_
    assert best.converged_ and best.C == path.best_C_ and not best.warm_start
    assert best.objective_ - best.dual_objective_ <= 0.01 * best.objective_
    assert best.dual_objective_ <= cold.objective_ * (1 + 1e-9) and cold.dual_objective_ <= best.objective_ * (1 + 1e-9)
    assert best.n_iter_ < cold.n_iter_
