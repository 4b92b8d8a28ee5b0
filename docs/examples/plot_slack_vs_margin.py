"""
Slack rescaling against margin rescaling
========================================

A structural SVM charges every example the largest *surrogate* ``psi(h, g)`` over the wrong
labels ``y``, with ``h = f(y) - f(y_i)`` the score margin of ``y`` over the true label and
``g = Delta(y, y_i)`` its task loss:

* margin rescaling, ``loss="margin"``: ``psi = g + h``, the loss added to the margin;
* slack rescaling, ``loss="slack"``: ``psi = g (1 + h)``, the loss scales the margin violation.

Slack rescaling ignores a label that is already beaten by a margin of 1 however large its loss,
while margin rescaling keeps pushing on labels of large loss. Its loss-augmented inference is
not an ordinary one: the solvers find the most violating label by a *search* over calls of a
structure's oracle (``search=``, see :mod:`ssvmlinear.search`).

We compare both on the multi-label scene data (the task loss is the Hamming loss), trained by
the one-slack cutting plane with the exact search, over a range of ``C``.
"""

# %%
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import ssvmlinear
from ssvmlinear.solvers import CuttingPlane
from ssvmlinear.surrogates import parse_surrogate, psi


def find_data(name):
    """The path of data/`name` in the repository this example runs from."""
    here = Path(globals().get("__file__", Path.cwd() / "example")).resolve().parent
    for folder in (here, *here.parents, Path.cwd(), *Path.cwd().parents):
        if (folder / "data" / name).is_file():
            return str(folder / "data" / name)
    raise FileNotFoundError(f"data/{name}: run this example inside a clone of the repository")


# %%
# The two surrogates
# ------------------
# For a wrong label with task loss ``g``, the surrogate as a function of its margin ``h``
# (the example's loss is the largest over the labels, and at least 0):
h = np.linspace(-2.5, 1.0, 200)
fig, ax = plt.subplots(figsize=(6, 4))
for loss, style in (("margin", "-"), ("slack", "--")):
    sur = parse_surrogate(loss)
    for g, color in ((1, "tab:blue"), (2, "tab:orange"), (4, "tab:green")):
        ax.plot(h, [max(0.0, psi(sur, v, g)) for v in h], style, color=color,
                label=f"{loss}, g = {g}")
ax.set_xlabel("margin h = f(y) - f(y_i)")
ax.set_ylabel("max(0, psi(h, g))")
ax.legend(ncol=2, fontsize=8)
ax.grid(alpha=0.3)
fig.tight_layout()

# %%
# Training
# --------
# ``loss="slack"`` needs a solver that searches: the cutting plane (for surrogates convex in
# ``h``) or Pegasos (any surrogate). ``fit_intercept`` (the default) gives every label a bias.
X, Y = ssvmlinear.load_svmlight_file(find_data("scene_train.svm.gz"))
X_test, Y_test = ssvmlinear.load_svmlight_file(find_data("scene_test.svm.gz"), n_features=X.shape[1])

Cs = [0.003, 0.01, 0.03, 0.1, 0.3, 1.0]
scores = {loss: {"Hamming loss": [], "subset accuracy": [], "Acc": []} for loss in ("margin", "slack")}
for loss in scores:
    for C in Cs:
        model = ssvmlinear.MultiLabelSSVM(C=C, loss=loss, solver=CuttingPlane(search="exact")).fit(X, Y)
        P = model.predict(X_test)
        scores[loss]["Hamming loss"].append(ssvmlinear.hamming_loss(Y_test, P))
        scores[loss]["subset accuracy"].append(ssvmlinear.subset_accuracy(Y_test, P))
        scores[loss]["Acc"].append(ssvmlinear.example_accuracy(Y_test, P))
        if C == Cs[0]:
            empty = np.mean(np.asarray(P.sum(axis=1)).ravel() == 0)
            print(f"{loss:>6s}, C = {C}: {100 * empty:.0f}% of the test images get no label")
    best = int(np.argmax(scores[loss]["Acc"]))
    print(f"{loss:>6s}: best Acc {scores[loss]['Acc'][best]:.3f} at C = {Cs[best]}")

# %%
# Test scores against C
# ---------------------
fig, axes = plt.subplots(1, 3, figsize=(11, 3.5))
for ax, measure in zip(axes, ("Hamming loss", "subset accuracy", "Acc")):
    for loss, style in (("margin", "o-"), ("slack", "s--")):
        ax.plot(Cs, scores[loss][measure], style, label=loss)
    ax.set_xscale("log")
    ax.set_xlabel("C")
    ax.set_title(measure)
    ax.grid(alpha=0.3)
axes[0].legend()
fig.tight_layout()

# %%
# At small ``C`` slack rescaling is much better here: margin rescaling leaves most test images
# without any label. Near their best ``C`` the two are close. Slack rescaling costs more per
# iteration: a search of several oracle calls per example instead of one call.

plt.show()
