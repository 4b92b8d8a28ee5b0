"""
Choosing C by cross-validation
==============================

The estimators are scikit-learn estimators, so :class:`~sklearn.model_selection.GridSearchCV`
chooses ``C`` as it would for any classifier. For a chain model the folds must keep every
word whole: :class:`~ssvmlinear.ChainSSVM` takes ``sequence_ids`` (one id per row, like the
svmlight ``qid``) instead of ``lengths``, and with scikit-learn's metadata routing the grid
search slices those ids with the rows of each fold.

The OCR data ships with the ten folds of its usual protocol (``data/ocr_letters.folds``: one
fold per word). To keep this example quick we search on the words of folds 0-2, with those
three folds as the cross-validation splits.
"""

# %%
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import sklearn
from sklearn.model_selection import GridSearchCV, PredefinedSplit

import ssvmlinear


def find_data(name):
    """The path of data/`name` in the repository this example runs from."""
    here = Path(globals().get("__file__", Path.cwd() / "example")).resolve().parent
    for folder in (here, *here.parents, Path.cwd(), *Path.cwd().parents):
        if (folder / "data" / name).is_file():
            return str(folder / "data" / name)
    raise FileNotFoundError(f"data/{name}: run this example inside a clone of the repository")


X, y, lengths = ssvmlinear.load_svmlight_file(find_data("ocr_letters.svm.gz"))
word_fold = np.loadtxt(find_data("ocr_letters.folds"), dtype=int)
word = np.repeat(np.arange(len(lengths)), lengths)     # the word of every row (letter)
fold = word_fold[word]
keep = fold <= 2
X, y, word, fold = X[keep], y[keep], word[keep], fold[keep]
print(f"{len(np.unique(word))} words, {X.shape[0]} letters, in folds {np.unique(fold).tolist()}")

# %%
# The grid search
# ---------------
# ``set_fit_request`` and ``set_score_request`` ask for ``sequence_ids`` in ``fit`` and
# ``score`` (token accuracy); :class:`~sklearn.model_selection.PredefinedSplit` uses the given
# folds. ``return_train_score`` keeps the training accuracy too.
sklearn.set_config(enable_metadata_routing=True)
chain = ssvmlinear.ChainSSVM(random_state=0)
chain.set_fit_request(sequence_ids=True).set_score_request(sequence_ids=True)
Cs = [0.01, 0.03, 0.1, 0.3, 1.0]
search = GridSearchCV(chain, {"C": Cs}, cv=PredefinedSplit(fold), return_train_score=True)
search.fit(X, y, sequence_ids=word)
sklearn.set_config(enable_metadata_routing=False)
print("best:", search.best_params_, f"cross-validated letter accuracy {search.best_score_:.4f}")

# %%
# Accuracy against C
# ------------------
results = search.cv_results_
fig, ax = plt.subplots(figsize=(6, 4))
for split, marker in (("train", "s--"), ("test", "o-")):
    mean, std = results[f"mean_{split}_score"], results[f"std_{split}_score"]
    ax.errorbar(Cs, mean, yerr=std, fmt=marker, capsize=3,
                label="training folds" if split == "train" else "held-out fold")
ax.axvline(search.best_params_["C"], color="gray", ls=":")
ax.set_xscale("log")
ax.set_xlabel("C")
ax.set_ylabel("letter accuracy")
ax.legend()
ax.grid(alpha=0.3)
fig.tight_layout()

# %%
# Larger ``C`` fits the training words ever better while the held-out accuracy levels off and
# then drops. ``fit`` takes longer as ``C`` grows; ``mean_fit_time`` shows it:
print("  ".join(f"C = {C}: {t:.2f} s" for C, t in zip(Cs, results["mean_fit_time"])))

# %%
# The refitted best model is ``search.best_estimator_``. Solver parameters are searched the
# same way, through the solver object: ``{"solver__oracle_batch": [1, 16]}`` with
# ``ChainSSVM(solver=SDM())``.

plt.show()
