"""
Objective against time for every solver
=======================================

Every solver records one entry per step in ``objective_curve_`` (the primal objective where it
was measured, NaN elsewhere), ``dual_curve_`` (the dual objective after the step, NaN for
Pegasos, which has no dual) and ``timestamps_`` (seconds since the start of training). Plotting
them against each other compares the solvers on the same problem.

The problem here is the margin-rescaling chain model on the first 1,500 OCR training words at
``C = 0.1``. Each solver gets the same time budget, enforced by a callback: ``callback(model)``
runs after every step, and returning ``False`` stops the fit. With a callback the solvers also
measure the primal objective after each step (the cutting plane after each oracle pass); the
time it takes is in the curves.
"""

# %%
from pathlib import Path
import time

import matplotlib.pyplot as plt
import numpy as np

import ssvmlinear
from ssvmlinear.solvers import BCFW, GDMM, SDM, CuttingPlane, Pegasos


def find_data(name):
    """The path of data/`name` in the repository this example runs from."""
    here = Path(globals().get("__file__", Path.cwd() / "example")).resolve().parent
    for folder in (here, *here.parents, Path.cwd(), *Path.cwd().parents):
        if (folder / "data" / name).is_file():
            return str(folder / "data" / name)
    raise FileNotFoundError(f"data/{name}: run this example inside a clone of the repository")


X, y, lengths = ssvmlinear.load_svmlight_file(find_data("ocr_letters_train.svm.gz"))
n_words = 1500
n_rows = int(lengths[:n_words].sum())
X, y, lengths = X[:n_rows], y[:n_rows], lengths[:n_words]

# %%
# A reference optimum
# -------------------
# SDM with a tight explicit tolerance brackets the optimum between its dual and primal
# objectives.
ref = ssvmlinear.ChainSSVM(C=0.1, solver=SDM(), tol=1e-3, random_state=0).fit(X, y, lengths)
lower, upper = ref.dual_objective_, ref.objective_
print(f"optimum in [{lower:.4f}, {upper:.4f}]")

# %%
# The solvers
# -----------
# A tolerance too small to stop any of them, and a budget of two seconds each.


def time_budget(seconds):
    """A callback that stops the fit once `seconds` have passed since it was made."""
    start = time.perf_counter()
    return lambda model: time.perf_counter() - start < seconds


solvers = {"SDM": SDM(), "cutting plane": CuttingPlane(), "BCFW": BCFW(), "GDMM": GDMM(),
           "Pegasos": Pegasos()}
fits = {}
for name, solver in solvers.items():
    model = ssvmlinear.ChainSSVM(C=0.1, solver=solver, tol=1e-6, max_iter=100_000, random_state=0,
                                 callback=time_budget(2.0))
    fits[name] = model.fit(X, y, lengths)
    print(f"{name:>13s}: {model.n_iter_:4d} passes in {model.timestamps_[-1]:4.2f} s, "
          f"primal {model.objective_:.3f}, dual {model.dual_objective_:.3f}")

# %%
# Suboptimality against time
# --------------------------
# Left: how far the primal objective is above the optimum; right: how far the dual objective is
# below it (both relative). SDM and BCFW raise the dual at every step; the cutting plane's dual
# is that of its working set of constraints; GDMM's is a true dual bound only once its token and
# pair factors agree, so its curve need not be monotone; Pegasos has no dual.
fig, (ax_p, ax_d) = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for name, model in fits.items():
    t, primal, dual = model.timestamps_, model.objective_curve_, model.dual_curve_
    measured = np.isfinite(primal)
    line, = ax_p.plot(t[measured], (primal[measured] - lower) / lower, ".-", label=name)
    if np.isfinite(dual).any():
        ax_d.plot(t, np.maximum((upper - dual) / upper, 1e-7), "-", color=line.get_color(), label=name)
for ax, title in ((ax_p, "(primal - optimum) / optimum"), (ax_d, "(optimum - dual) / optimum")):
    ax.set_yscale("log")
    ax.set_xlabel("seconds")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
ax_p.set_ylim(1e-5, 10)
ax_p.legend()
fig.tight_layout()

# %%
# On this problem SDM reaches a small gap first. The Frank-Wolfe methods (BCFW, GDMM) converge
# as O(1/t) and slow down near the optimum, and Pegasos' stochastic steps slower still. GDMM's
# strength, oracles cheaper than Viterbi, shows with hundreds of tags, not with OCR's 26 (see
# :ref:`sphx_glr_auto_examples_plot_gdmm_tags.py`). The :ref:`solver guide <solvers>` sums
# up which solver to use when.

plt.show()
