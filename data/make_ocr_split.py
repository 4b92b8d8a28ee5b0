"""Regenerate ocr_letters_train.svm.gz (words of folds 1-9) and ocr_letters_test.svm.gz (fold 0)
from ocr_letters.svm.gz and ocr_letters.folds (the "large" split of the benchmarks)."""
from pathlib import Path

import numpy as np

from ssvmlinear import load_svmlight_file, dump_svmlight_file

HERE = Path(__file__).resolve().parent

X, y, lengths = load_svmlight_file(HERE / "ocr_letters.svm.gz", n_features=128)
folds = np.loadtxt(HERE / "ocr_letters.folds", dtype=np.int64)
for name, words in (("train", folds != 0), ("test", folds == 0)):
    tokens = np.repeat(words, lengths)
    dump_svmlight_file(X[tokens], y[tokens], HERE / f"ocr_letters_{name}.svm.gz", lengths=lengths[words])
