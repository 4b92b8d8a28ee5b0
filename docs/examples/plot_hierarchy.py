"""
Classes in a hierarchy
======================

When the classes are the leaves of a tree (or a DAG), :class:`~ssvmlinear.HierarchicalSSVM`
gives every node of the hierarchy a weight vector and scores a leaf by the sum over the leaf
and its ancestors, so that related leaves share the weights of their common ancestors.

``model=`` chooses how the nodes are weighted:

* ``"hsvm"``, the hierarchical structured SVM: every node counts fully;
* ``"nhsvm"``, the normalised hierarchical SVM (the default): node ``n`` counts
  ``sqrt(alpha_n)``, with ``alpha`` summing to one along every root-to-leaf path;
* ``"shared"``: ``alpha`` is learned together with the weights (trees only);
* ``"flat"``: only the leaves count, the multiclass model.

The data is a small instance of an unbalanced synthetic construction from Choi's thesis: a
one-sided binary tree of depth 6 whose deeper leaves have fewer examples, 50 features, 2,000
training and 1,000 test examples.
"""

# %%
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


# The hierarchy file holds one "parent child" pair of node ids per line; the labels are leaf ids.
hierarchy = ssvmlinear.read_hierarchy(find_data("hier_demo.hier"))
X, y = ssvmlinear.load_svmlight_file(find_data("hier_demo_train.svm.gz"))
X_test, y_test = ssvmlinear.load_svmlight_file(find_data("hier_demo_test.svm.gz"), n_features=X.shape[1])
leaves = hierarchy.ids[hierarchy.leaves]
print("leaves:", leaves.tolist())
print("training examples per leaf:", np.unique(y, return_counts=True)[1].tolist())

# %%
# Four models
# -----------
# The tree-induced error of a prediction is the number of nodes in which the ancestor sets of
# the predicted and the true leaf differ (on a tree: the length of the path between them).
results = {}
for model in ("flat", "hsvm", "nhsvm", "shared"):
    est = ssvmlinear.HierarchicalSSVM(hierarchy, model=model, C=1.0).fit(X, y)
    pred = est.predict(X_test)
    results[model] = est
    recall = [np.mean(pred[y_test == leaf] == leaf) for leaf in leaves]
    print(f"{model:>6s}: accuracy {est.score(X_test, y_test):.3f}, tree-induced error "
          f"{est.tree_induced_error(y_test, pred):.3f}, recall per leaf "
          + " ".join(f"{r:.2f}" for r in recall))

# %%
# The node weights
# ----------------
# ``alpha_`` holds one weight per node, in the order of ``nodes_`` (node ids). NHSVM's default,
# ``alpha="rho2"``, minimises the sum of squared weights subject to every root-to-leaf path
# summing to one; Shared SVM learns them. A node's score counts ``sqrt(alpha)``. Right: the test
# accuracy and tree-induced error of the four models.
children = {}
for parent, child in zip(*hierarchy.edges()):
    children.setdefault(int(parent), []).append(int(child))
root = int(hierarchy.ids[hierarchy.root])

pos, next_x = {}, [0]


def place(node, depth):
    """Leaves left to right, each inner node above the middle of its children."""
    kids = children.get(node, [])
    for kid in kids:
        place(kid, depth + 1)
    if kids:
        pos[node] = (np.mean([pos[k][0] for k in kids]), -depth)
    else:
        pos[node] = (next_x[0], -depth)
        next_x[0] += 1


place(root, 0)

fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), gridspec_kw={"width_ratios": [1, 1, 1.1]})
for ax, model in zip(axes[:2], ("nhsvm", "shared")):
    est = results[model]
    alpha = dict(zip(est.nodes_.tolist(), est.alpha_))
    for parent, kids in children.items():
        for kid in kids:
            ax.plot(*np.array([pos[parent], pos[kid]]).T, color="gray", zorder=1)
    for node, (x, yy) in pos.items():
        ax.scatter(x, yy, s=80 + 900 * alpha[node], color="tab:orange", edgecolor="black", zorder=2)
        ax.annotate(f"{node}\n{alpha[node]:.2f}", (x, yy), xytext=(0, -18), textcoords="offset points",
                    ha="center", va="top", fontsize=8)
    ax.set_title(f"alpha_ of {model}")
    ax.margins(0.15, 0.2)
    ax.axis("off")

# test accuracy and tree-induced error of the four models
names = list(results)
accuracy = [results[m].score(X_test, y_test) for m in names]
tie = [results[m].tree_induced_error(y_test, results[m].predict(X_test)) for m in names]
x = np.arange(len(names))
axes[2].bar(x - 0.2, accuracy, 0.4, label="accuracy")
axes[2].bar(x + 0.2, tie, 0.4, label="tree-induced error")
axes[2].set_xticks(x, names)
axes[2].legend(loc="upper left", fontsize=8)
axes[2].set_ylim(0, 1.2)
axes[2].set_title("test set")
fig.tight_layout()

# %%
# Here NHSVM has the best accuracy and the smallest tree-induced error; the recall per leaf
# printed above shows where sharing the ancestors' weights helps: the rare deep leaves 103 and 106
# against the flat model. :doc:`/user_guide/hierarchies` describes the models, the choices of
# alpha and the task losses.

plt.show()
