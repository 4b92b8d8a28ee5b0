"""The command lines follow LIBLINEAR's and POSIX's conventions: -h/--help, --version, one-line
usage errors with a hint, the solver list in order."""
import re

import pytest

from ssvmlinear import __version__
from ssvmlinear.cli import train_main, predict_main
from ssvmlinear.datacache import convert_main

COMMANDS = [("ssvm-train", train_main), ("ssvm-predict", predict_main), ("ssvm-convert", convert_main)]


@pytest.mark.parametrize("name, main", COMMANDS)
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_prints_the_usage_on_stdout_and_exits_0(name, main, flag, capsys):
    assert main([flag]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"Usage: {name} ") and err == ""
    assert "-h, --help" in out and "--version" in out


@pytest.mark.parametrize("name, main", COMMANDS)
def test_version(name, main, capsys):
    assert main(["--version"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{name} (ssvmlinear) {__version__}\n" and err == ""


def test_version_agrees_with_the_package_metadata():
    import tomllib, pathlib
    meta = tomllib.loads((pathlib.Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert meta["tool"]["setuptools"]["dynamic"]["version"]["attr"] == "ssvmlinear._version.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+)?", __version__)


@pytest.mark.parametrize("name, main, argv, message", [
    ("ssvm-train", train_main, ["-c", "abc", "train.svm"], "-c must be a finite number > 0, got abc"),
    ("ssvm-train", train_main, ["-x", "train.svm"], "unknown option: -x"),
    ("ssvm-train", train_main, ["-q"], "expected training_set_file [model_file]"),
    ("ssvm-predict", predict_main, ["a", "b"], "expected test_file model_file output_file"),
    ("ssvm-predict", predict_main, ["-z", "a", "b", "c"], "unknown option: -z"),
    ("ssvm-convert", convert_main, ["-x", "a", "b"], "unknown option: -x"),
    ("ssvm-convert", convert_main, ["-t", "tree", "a", "b"], "unknown kind -t tree; expected auto, multiclass, multilabel or sequence"),
    ("ssvm-convert", convert_main, ["a"], "expected svmlight_file output.ssvmdata"),
])
def test_usage_error_is_one_line_and_a_hint(name, main, argv, message, capsys):
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"{name}: {message}\nTry '{name} -h' for more information.\n"


def test_solvers_are_listed_in_order(capsys):
    train_main(["-h"])
    numbers = [int(m) for m in re.findall(r"^\t (\d+) -- ", capsys.readouterr().out, flags=re.M)]
    assert numbers == sorted(numbers) and numbers[0] == 0


def test_cross_validation_of_a_hierarchy_prints_what_predict_prints(capsys):
    from conftest import DATA
    hier, train = DATA / "hier_demo.hier", DATA / "hier_demo_train.svm.gz"
    assert train_main(["-v", "2", "-q", "-m", "20", "-H", str(hier), str(train)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Cross Validation Accuracy = ")
    assert out[1].startswith("Cross Validation Tree-induced error = ")


def test_a_fit_that_does_not_converge_warns_once():
    import warnings
    from ssvmlinear import ConvergenceWarning, MulticlassSSVM
    from conftest import random_multiclass
    X, y = random_multiclass(n=200, d=20, K=5, density=0.3, seed=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        MulticlassSSVM(C=100.0, max_iter=1).fit(X, y)
    convergence = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(convergence) == 1 and "max_iter=1" in str(convergence[0].message)
    assert "relative duality gap" in str(convergence[0].message)


def test_cross_validation_of_a_multilabel_hierarchy_prints_what_predict_prints(tmp_path, capsys):
    """Label-set files on a hierarchy: the folds' measures on the model's columns, as ssvm-predict's."""
    import numpy as np
    from conftest import DATA
    rng = np.random.default_rng(0)
    path = tmp_path / "sets.svm"
    path.write_text("".join(",".join(map(str, sorted(set(rng.choice([101, 102, 103, 104, 105, 106], 2).tolist()))))
                            + "".join(f" {j}:{rng.normal():.3f}" for j in range(1, 6)) + "\n" for _ in range(60)))
    hier = DATA / "hier_demo.hier"
    assert train_main(["-v", "2", "-q", "-m", "20", "-H", str(hier), str(path)]) == 0
    cv = [line.split(" = ")[0] for line in capsys.readouterr().out.splitlines()]
    assert train_main(["-q", "-m", "20", "-H", str(hier), str(path), str(tmp_path / "m")]) == 0
    assert predict_main([str(path), str(tmp_path / "m"), str(tmp_path / "p")]) == 0
    predicted = [line.split(" = ")[0] for line in capsys.readouterr().out.splitlines()]
    assert cv == ["Cross Validation " + name for name in predicted] and "Tree-induced error" in predicted
