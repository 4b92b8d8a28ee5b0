"""Accuracy next to the peer tools, each at its defaults, on the shipped data: README's table.

    python benchmarks/peers.py            # the Markdown table README.md shows (.ci/readme.py checks it)

Rows:
  sequence labeling  OCR words (folds 1-9 -> fold 0): ChainSSVM() vs CRFsuite (python-crfsuite,
                     L-BFGS with its default L2 coefficient c2 = 1), letter accuracy;
  multiclass         OCR letters as independent examples, same split: MulticlassSSVM(fit_intercept=False)
                     vs LIBLINEAR -s 4 (Crammer-Singer, its default C = 1, no bias), accuracy;
  multi-label        scene (train -> test): MultiLabelSSVM(edges="chow-liu") (pairwise labels on
                     a tree) vs LIBLINEAR -s 3 -B 1 per label (independent binary SVMs), micro-F1.
Only accuracies are printed: they do not depend on the machine, so the README can show them and
CI can check them. Times: benchmarks/ocr_chain.py and benchmarks/multiclass_vs_liblinear.py.
Needs the bench extra (liblinear-official, python-crfsuite).
"""
import warnings
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "data"


def ocr():
    from ssvmlinear import load_svmlight_file
    X, y, lengths = load_svmlight_file(DATA / "ocr_letters_train.svm.gz", n_features=128)
    Xt, yt, lengths_t = load_svmlight_file(DATA / "ocr_letters_test.svm.gz", n_features=128)
    return X, y, lengths, Xt, yt, lengths_t


def crfsuite_accuracy(X, y, lengths, Xt, yt, lengths_t):
    import os
    import tempfile
    import pycrfsuite

    def sequences(X, y, lengths):
        starts = np.concatenate([[0], np.cumsum(lengths)])
        for a, b in zip(starts[:-1], starts[1:]):
            items = [{str(j): float(v) for j, v in zip(X.indices[X.indptr[r]:X.indptr[r + 1]],
                                                        X.data[X.indptr[r]:X.indptr[r + 1]])} for r in range(a, b)]
            yield pycrfsuite.ItemSequence(items), [str(int(t)) for t in y[a:b]]

    trainer = pycrfsuite.Trainer(algorithm="lbfgs", verbose=False)
    for xseq, yseq in sequences(X, y, lengths):
        trainer.append(xseq, yseq)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ocr.crfsuite")
        trainer.train(path)
        tagger = pycrfsuite.Tagger()
        tagger.open(path)
        correct = sum(int(p == t) for xseq, yseq in sequences(Xt, yt, lengths_t)
                      for p, t in zip(tagger.tag(xseq), yseq))
        tagger.close()
    return correct / len(yt)


def liblinear_predict(X, y, Xt, options):
    from liblinear import liblinearutil as ll
    model = ll.train(ll.problem(y, X), ll.parameter(options + " -q"))
    pred, _, _ = ll.predict(np.zeros(Xt.shape[0]), Xt, model, "-q")
    return np.asarray(pred)


def main():
    from ssvmlinear import ChainSSVM, MulticlassSSVM, MultiLabelSSVM, load_svmlight_file, micro_f1
    warnings.simplefilter("ignore")
    rows = []
    X, y, lengths, Xt, yt, lengths_t = ocr()
    ours = ChainSSVM().fit(X, y, lengths).score(Xt, yt, lengths_t)
    rows.append(("Sequence labeling: OCR words, letter accuracy", "`ChainSSVM()`", ours,
                 "CRFsuite, L-BFGS", crfsuite_accuracy(X, y, lengths, Xt, yt, lengths_t)))
    ours = MulticlassSSVM(fit_intercept=False).fit(X, y).score(Xt, yt)
    rows.append(("Multiclass: OCR letters alone, accuracy", "`MulticlassSSVM()`", ours,
                 "LIBLINEAR `-s 4`", float(np.mean(liblinear_predict(X, y, Xt, "-s 4") == yt))))
    X, Y = load_svmlight_file(DATA / "scene_train.svm.gz", kind="multilabel")
    Xt, Yt = load_svmlight_file(DATA / "scene_test.svm.gz", kind="multilabel", n_features=X.shape[1])
    ours = micro_f1(Yt, MultiLabelSSVM(edges="chow-liu").fit(X, Y).predict(Xt))
    P = np.column_stack([liblinear_predict(X, Y[:, k].toarray().ravel(), Xt, "-s 3 -B 1")
                         for k in range(Y.shape[1])])
    rows.append(("Multi-label: scene, micro-F1", '`MultiLabelSSVM(edges="chow-liu")`', ours,
                 "LIBLINEAR `-s 3 -B 1` per label", micro_f1(Yt, (P > 0).astype(np.int8))))
    print("| task, measure | ssvmlinear | | peer | |")
    print("|---|---|---|---|---|")
    for task, name, a, peer, b in rows:
        print(f"| {task} | {name} | {100 * a:.2f} % | {peer} | {100 * b:.2f} % |")


if __name__ == "__main__":
    main()
