"""
Handwritten words with a chain model
====================================

Each OCR word is a sequence of 16 x 8 binary letter images. A :class:`~ssvmlinear.ChainSSVM`
scores a tagging of a word as the sum of one linear score per letter and one learned
*transition* weight per pair of neighbouring tags, and predicts the best tagging by Viterbi.

We train on the words of folds 1-9 and test on fold 0, then look at the learned transition
matrix: the model has picked up English letter pairs on its own.
"""

# %%
# Data
# ----
# The files are in SVM^hmm's format (``tag qid:word f:v ...``, one letter per line), so
# :func:`~ssvmlinear.load_svmlight_file` returns a third array, the number of letters of each
# word. The examples look for the repository's ``data/`` folder from where they run.
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import ssvmlinear


def find_data(name):
    """The path of data/`name` in the repository this example runs from."""
    here = Path(globals().get("__file__", Path.cwd() / "example")).resolve().parent
    for folder in (here, *here.parents, Path.cwd(), *Path.cwd().parents):
        if (folder / "data" / name).is_file():
            return str(folder / "data" / name)
    raise FileNotFoundError(f"data/{name}: run this example inside a clone of the repository")


X, y, lengths = ssvmlinear.load_svmlight_file(find_data("ocr_letters_train.svm.gz"))
X_test, y_test, lengths_test = ssvmlinear.load_svmlight_file(
    find_data("ocr_letters_test.svm.gz"), n_features=X.shape[1])
print(f"{len(lengths)} training words ({X.shape[0]} letters), {len(lengths_test)} test words")

# %%
# Training
# --------
# The default solver for margin rescaling is SDM. ``fit`` takes the word lengths after ``y``.
chain = ssvmlinear.ChainSSVM(C=0.1, random_state=0).fit(X, y, lengths)
print(f"passes {chain.n_iter_}, primal {chain.objective_:.2f}, duality gap {chain.gap_:.3g}")
print(f"letter accuracy {chain.score(X_test, y_test, lengths_test):.3f}, "
      f"word accuracy {chain.sequence_accuracy(X_test, y_test, lengths_test):.3f}")

# %%
# The same letters classified one by one, without transitions, for comparison:
letters = ssvmlinear.MulticlassSSVM(C=0.1, fit_intercept=False, random_state=0).fit(X, y)
print(f"letter accuracy without transitions {letters.score(X_test, y_test):.3f}")

# %%
# A few test words
# ----------------
# Tags 1..26 stand for a..z (the data set leaves out the first, capital letter of every word).
alphabet = np.array(list("abcdefghijklmnopqrstuvwxyz"))
pred = chain.predict(X_test, lengths_test)
starts = np.concatenate([[0], np.cumsum(lengths_test)])
shown = set()
for s, e in zip(starts[:-1], starts[1:]):
    word = "".join(alphabet[y_test[s:e].astype(int) - 1])
    if word not in shown and len(shown) < 8:
        shown.add(word)
        print(f"true {word:>12s}   predicted {''.join(alphabet[pred[s:e].astype(int) - 1])}")

# %%
# The learned transitions
# -----------------------
# ``transition_[a, b]`` is the weight added to a tagging each time tag ``b`` follows tag ``a``.
# Pairs frequent in English get positive weights, rare ones negative weights.
T = chain.transition_
labels = alphabet[chain.classes_.astype(int) - 1]
limit = np.abs(T).max()
fig, ax = plt.subplots(figsize=(6.5, 5.5))
im = ax.imshow(T, cmap="RdBu_r", vmin=-limit, vmax=limit)
ax.set_xticks(range(len(labels)), labels)
ax.set_yticks(range(len(labels)), labels)
ax.set_xlabel("next letter")
ax.set_ylabel("previous letter")
ax.set_title("ChainSSVM transition weights")
fig.colorbar(im, ax=ax, shrink=0.8)
fig.tight_layout()

# %%
# Some letters are followed by almost anything (their whole row is high). Removing every row's
# and column's mean leaves the pairs the model prefers for themselves:
centred = T - T.mean(axis=1, keepdims=True) - T.mean(axis=0, keepdims=True) + T.mean()
order = np.argsort(centred, axis=None)[::-1][:12]
print(" ".join(labels[a] + labels[b] for a, b in zip(*np.unravel_index(order, T.shape))))
q = list(labels).index("q")
print("most likely after q:", labels[np.argmax(T[q])])

plt.show()
