"""Importing ssvmlinear from a source tree whose kernels are not compiled (the repository root after
`pip install .`): the installed copy is used, or a clear ImportError says what to do."""
import os
import shutil
import subprocess
import sys

import ssvmlinear

INSTALLED = os.path.dirname(os.path.abspath(ssvmlinear.__file__))


def unbuilt_source_tree(tmp_path):
    """A copy of the Python layer with an empty kernels folder, as a fresh clone holds it."""
    pkg = tmp_path / "ssvmlinear"
    pkg.mkdir()
    for name in os.listdir(INSTALLED):
        if name.endswith(".py"):
            shutil.copy(os.path.join(INSTALLED, name), pkg / name)
    (pkg / "_kernels").mkdir()
    (pkg / "_kernels" / "__init__.py").write_text("")
    return tmp_path


def test_source_tree_defers_to_the_installed_copy(tmp_path):
    root = unbuilt_source_tree(tmp_path)
    code = ("import ssvmlinear, numpy as np\n"
            "print(ssvmlinear.__file__)\n"
            "X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.1], [0.1, 1.0]])\n"
            "print(ssvmlinear.MulticlassSSVM(C=1.0).fit(X, [0, 1, 0, 1]).predict(X).tolist())\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(INSTALLED))
    r = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    path, pred = r.stdout.split("\n")[:2]
    assert os.path.realpath(path) == os.path.realpath(os.path.join(INSTALLED, "__init__.py"))
    assert pred == "[0, 1, 0, 1]"


def test_unbuilt_source_tree_without_installed_copy_says_what_to_do(tmp_path):
    root = unbuilt_source_tree(tmp_path)
    # -S: no site-packages, so no installed copy can be found
    r = subprocess.run([sys.executable, "-S", "-c", "import ssvmlinear"], cwd=root, capture_output=True, text=True)
    assert r.returncode != 0
    assert "compiled kernels are missing" in r.stderr and "pip install" in r.stderr


def test_package_and_command_lines_start_without_scikit_learn():
    """`import ssvmlinear`, the usage texts, model files and the data readers load no scikit-learn
    (the estimators load it on first use)."""
    code = ("import contextlib, io, sys\n"
            "import ssvmlinear\n"
            "from ssvmlinear.cli import train_main, predict_main\n"
            "from ssvmlinear.datacache import convert_main\n"
            "import ssvmlinear.model_io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert train_main([]) == 1 and predict_main([]) == 1 and convert_main([]) == 1\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))\n"
            "ssvmlinear.MulticlassSSVM\n"
            "print('sklearn' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["[]", "True"]


BLOCK_SKLEARN = """
import sys
class _NoSklearn:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'sklearn':
            raise ImportError('scikit-learn is blocked in this test')
sys.meta_path.insert(0, _NoSklearn())
"""


def test_command_lines_train_and_predict_every_structure_without_scikit_learn(tmp_path):
    """ssvm-train (also -v) and ssvm-predict run the core models: scikit-learn is never imported."""
    import numpy as np
    rng = np.random.RandomState(0)
    rows = []
    for i in range(40):
        x = rng.rand(3)
        rows.append((int(np.argmax(x)) + 1, x, i // 4 + 1, [k + 1 for k in range(3) if x[k] > 0.5] or [1]))
    feats = [" ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(x)) for _, x, _, _ in rows]
    (tmp_path / "mc.svm").write_text("".join(f"{y} {f}\n" for (y, _, _, _), f in zip(rows, feats)))
    (tmp_path / "seq.svm").write_text("".join(f"{y} qid:{q} {f}\n" for (y, _, q, _), f in zip(rows, feats)))
    (tmp_path / "ml.svm").write_text("".join(f"{','.join(map(str, s))} {f}\n" for (_, _, _, s), f in zip(rows, feats)))
    (tmp_path / "h.txt").write_text("0 4\n0 5\n4 1\n4 2\n5 3\n")
    jobs = [["mc.svm"], ["seq.svm"], ["ml.svm"], ["-H", "h.txt", "mc.svm"], ["-s", "2", "mc.svm"]]
    code = BLOCK_SKLEARN + (
        "from ssvmlinear.cli import train_main, predict_main\n"
        "import os\n"
        "os.chdir(sys.argv[1])\n"
        f"for k, job in enumerate({jobs!r}):\n"
        "    opts, data = job[:-1], job[-1]\n"
        "    assert train_main(['-q'] + opts + [data, f'm{k}']) == 0, job\n"
        "    assert train_main(['-q', '-v', '2'] + opts + [data]) == 0, job\n"
        "    assert predict_main([data, f'm{k}', f'p{k}']) == 0, job\n"
        "print('sklearn' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "False"


def test_setup_installs_every_python_package_of_the_tree():
    """setup.py lists its packages: a new folder of modules must be among them, or a
    non-editable install (pip install ., a wheel) ships without it."""
    import ast
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    if not (root / "setup.py").exists():
        return                      # (an installed copy's tests: nothing to compare)
    tree = ast.parse((root / "setup.py").read_text())
    listed = next(ast.literal_eval(k.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
                  for k in node.keywords if k.arg == "packages")
    on_disk = {".".join(p.parent.relative_to(root).parts) for p in (root / "ssvmlinear").rglob("__init__.py")
               if "_kernels" not in p.parts}
    assert on_disk <= set(listed), sorted(on_disk - set(listed))
