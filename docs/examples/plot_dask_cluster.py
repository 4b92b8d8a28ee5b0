"""
Training on a Dask cluster
==========================

With the ``distributed`` extra installed (``pip install "ssvmlinear[distributed]"``), training
runs on the workers of a `Dask <https://distributed.dask.org>`_ cluster.
:func:`ssvmlinear.distributed.load_svmlight_shards` has every worker parse its own part of an
uncompressed svmlight file (or map it from an ``ssvm-convert`` cache) and keep it; ``fit`` and
``predict`` take the handle it returns in place of ``(X, y)``, and only weight vectors travel
afterwards.

Here the "cluster" is a :class:`~distributed.LocalCluster` of two workers running as threads
of this process, on the scene multi-label data; a real cluster is used the same way with
``Client("tcp://scheduler:8786")``.
"""

# %%
import gzip
from pathlib import Path
import shutil
import tempfile
import warnings

import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster

import ssvmlinear
from ssvmlinear.distributed import load_svmlight_shards
from ssvmlinear.solvers import CuttingPlane


def find_data(name):
    """The path of data/`name` in the repository this example runs from."""
    here = Path(globals().get("__file__", Path.cwd() / "example")).resolve().parent
    for folder in (here, *here.parents, Path.cwd(), *Path.cwd().parents):
        if (folder / "data" / name).is_file():
            return str(folder / "data" / name)
    raise FileNotFoundError(f"data/{name}: run this example inside a clone of the repository")


# %%
# The data
# --------
# Shard ``k`` is the ``k``-th part of the file's bytes, so the rows of a shard are consecutive
# lines. The scene training file is sorted by label, which would give each worker different
# labels; we write it uncompressed twice, once in file order and once with its lines shuffled.
with gzip.open(find_data("scene_train.svm.gz"), "rt") as f:
    lines = f.readlines()
workdir = Path(tempfile.mkdtemp())
sorted_path, shuffled_path = workdir / "scene_sorted.svm", workdir / "scene_shuffled.svm"
order = np.random.default_rng(0).permutation(len(lines))
with open(sorted_path, "w") as f:
    f.writelines(lines)
with open(shuffled_path, "w") as f:
    f.writelines(lines[i] for i in order)

# %%
# The cluster and the shards
# --------------------------
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
client = Client(cluster)
data = load_svmlight_shards(client, shuffled_path, kind="multilabel")
print(f"{len(data.n_rows)} shards of {data.n_rows} rows, {data.n_features} features, "
      f"labels {data.classes.tolist()}")

# %%
# SDM on the cluster
# ------------------
# SDM (the default solver) runs as CoCoA+ on a cluster: each worker makes passes of SDM over its
# shard against its own copy of the weights, and the rounds combine them. It stops by the same
# rule as in one process.
on_cluster = ssvmlinear.MultiLabelSSVM(C=0.1, random_state=0).fit(data)
X, Y = ssvmlinear.load_svmlight_file(shuffled_path)
in_process = ssvmlinear.MultiLabelSSVM(C=0.1, random_state=0).fit(X, Y)
for name, model in (("cluster", on_cluster), ("one process", in_process)):
    print(f"{name:>11s}: {model.n_iter_:3d} passes, primal {model.objective_:.3f}, "
          f"dual {model.dual_objective_:.3f}")

# %%
# Prediction takes the shards too, and returns the predictions in file order; the model itself
# is an ordinary fitted estimator:
X_test, Y_test = ssvmlinear.load_svmlight_file(find_data("scene_test.svm.gz"), n_features=X.shape[1])
print("training rows predicted on the workers:", on_cluster.predict(data).shape)
print(f"test Acc {on_cluster.score(X_test, Y_test):.3f} (cluster), "
      f"{in_process.score(X_test, Y_test):.3f} (one process)")

# %%
# The one-slack cutting plane sums its constraint over the shards in a fixed order, so on the
# cluster it trains the single-process model, to rounding:
cp_cluster = ssvmlinear.MultiLabelSSVM(C=0.1, solver=CuttingPlane()).fit(data)
cp_process = ssvmlinear.MultiLabelSSVM(C=0.1, solver=CuttingPlane()).fit(X, Y)
print(f"cutting plane: primal {cp_cluster.objective_:.6f} (cluster), {cp_process.objective_:.6f} "
      f"(one process); largest weight difference {np.abs(cp_cluster.coef_ - cp_process.coef_).max():.1e}")

# %%
# Shards in file order
# --------------------
# CoCoA+'s local steps are scaled down by the number of shards, so it needs more passes than one
# process, and many more when the shards hold different parts of the problem. The curves
# ``dual_curve_`` and ``timestamps_`` hold the dual objective after every step (a pass in one
# process, a round of CoCoA+ on the cluster) and its time; here on the shuffled and on the
# sorted file (stopped at 300 passes):
sorted_data = load_svmlight_shards(client, sorted_path, kind="multilabel")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ssvmlinear.ConvergenceWarning)
    on_sorted = ssvmlinear.MultiLabelSSVM(C=0.1, max_iter=300, random_state=0).fit(sorted_data)

fig, ax = plt.subplots(figsize=(6.5, 4))
for name, model in (("one process", in_process), ("cluster, shuffled file", on_cluster),
                    ("cluster, file sorted by label", on_sorted)):
    ax.plot(model.timestamps_, model.dual_curve_, ".-", label=f"{name} ({model.n_iter_} passes)")
ax.axhline(in_process.objective_, color="gray", ls=":", label="primal objective (one process)")
ax.set_xlabel("seconds")
ax.set_ylabel("dual objective")
ax.set_ylim(0.5 * in_process.dual_objective_, 1.05 * in_process.objective_)
ax.legend()
ax.grid(alpha=0.3)
fig.tight_layout()

# %%
# Shuffle the lines of a file sorted by label before training on a cluster. On data this small
# one process is faster; the cluster is for data that one machine cannot hold or parse quickly.
client.close()
cluster.close()
shutil.rmtree(workdir)

plt.show()
