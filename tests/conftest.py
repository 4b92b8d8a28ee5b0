from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

DATA = Path(__file__).resolve().parent.parent / "data"


def random_multiclass(n=30, d=6, K=3, density=0.5, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr", data_rvs=rng.standard_normal)
    W = rng.standard_normal((K, d))
    y = np.argmax(X @ W.T + 0.5 * rng.standard_normal((n, K)), axis=1)
    y[:K] = np.arange(K)  # every class present
    return X.tocsr(), y


@pytest.fixture(scope="session")
def ocr_letters():
    """OCR letters read as independent examples, with each letter's fold."""
    from ssvmlinear import load_svmlight_file
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters.svm.gz", n_features=128)
    folds = np.loadtxt(DATA / "ocr_letters.folds", dtype=np.int64)
    return X, y, np.repeat(folds, lengths)


def pytest_addoption(parser):
    parser.addoption("--matrix-full", action="store_true", default=False,
                     help="test_conformance_matrix.py: every cell of the conformance matrix instead of a seeded sample")
    parser.addoption("--matrix-seed", type=int, default=0, help="test_conformance_matrix.py: the sample's seed")
    parser.addoption("--fuzz-long", action="store_true", default=False,
                     help="test_fuzz.py: 20000 fuzzed inputs per entry point (10^5 in all) instead of the "
                          "fast default subset (SSVM_FUZZ_N=N sets the number per entry point)")
