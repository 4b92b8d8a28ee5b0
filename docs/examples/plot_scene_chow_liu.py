"""
Multi-label scenes with a Chow-Liu tree of labels
=================================================

Each image of the *scene* data set (Boutell et al., 2004) carries one or more of six labels. An
independent :class:`~ssvmlinear.MultiLabelSSVM` scores every label on its own; with
``edges="chow-liu"`` the model also learns a 2 x 2 table of weights for every pair of labels on
the *Chow-Liu tree* of the training labels (the maximum spanning tree of their pairwise mutual
information), and decodes by exact max-product on that tree.
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


# Y is a CSR 0/1 indicator matrix, one column per label
X, Y = ssvmlinear.load_svmlight_file(find_data("scene_train.svm.gz"))
X_test, Y_test = ssvmlinear.load_svmlight_file(find_data("scene_test.svm.gz"), n_features=X.shape[1])
print(f"{X.shape[0]} training images, {X.shape[1]} features, {Y.shape[1]} labels; "
      f"labels per image: {Y.sum(axis=1).mean():.2f} on average")

# %%
# Independent labels against the tree
# -----------------------------------
models = {
    "independent": ssvmlinear.MultiLabelSSVM(C=0.1, random_state=0),
    "Chow-Liu tree": ssvmlinear.MultiLabelSSVM(C=0.1, edges="chow-liu", random_state=0),
}
for name, model in models.items():
    P = model.fit(X, Y).predict(X_test)
    print(f"{name:>14s}: subset accuracy {ssvmlinear.subset_accuracy(Y_test, P):.3f}  "
          f"Hamming loss {ssvmlinear.hamming_loss(Y_test, P):.4f}  "
          f"micro-F1 {ssvmlinear.micro_f1(Y_test, P):.3f}  Acc {model.score(X_test, Y_test):.3f}")

tree = models["Chow-Liu tree"]
print("tree edges (label positions):", tree.edges_.tolist())

# %%
# What the tree is built from
# ---------------------------
# The mutual information of every pair of labels on the training set; the tree keeps the
# heaviest pairs that form no cycle.
Yd = Y.toarray().astype(bool)
K = Yd.shape[1]
mi = np.zeros((K, K))
for a in range(K):
    for b in range(K):
        if a != b:
            for va in (0, 1):
                for vb in (0, 1):
                    p_ab = np.mean((Yd[:, a] == va) & (Yd[:, b] == vb))
                    p_a, p_b = np.mean(Yd[:, a] == va), np.mean(Yd[:, b] == vb)
                    if p_ab > 0:
                        mi[a, b] += p_ab * np.log(p_ab / (p_a * p_b))

# %%
# The learned pairwise tables
# ---------------------------
# ``pairwise_[e, s, t]`` is added to the score when the edge's first label is in state ``s``
# and its second in state ``t``. Its *interaction* ``P[1,1] - P[1,0] - P[0,1] + P[0,0]`` is
# positive when the model favours the two labels together (or both absent), negative when it
# favours one without the other.
P = tree.pairwise_
interaction = P[:, 1, 1] - P[:, 1, 0] - P[:, 0, 1] + P[:, 0, 0]

fig, (ax_mi, ax_tree) = plt.subplots(1, 2, figsize=(10, 5))
np.fill_diagonal(mi, np.nan)
im = ax_mi.imshow(mi, cmap="viridis")
for a, b in tree.edges_:
    for r, c in ((a, b), (b, a)):
        ax_mi.add_patch(plt.Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor="red", lw=2))
ax_mi.set_xticks(range(K))
ax_mi.set_yticks(range(K))
ax_mi.set_xlabel("label")
ax_mi.set_ylabel("label")
ax_mi.set_title("mutual information (tree edges in red)")
fig.colorbar(im, ax=ax_mi, shrink=0.8)

# the tree drawn by depth from label 0 (breadth-first), one column per depth
neighbours = {k: [] for k in range(K)}
for a, b in tree.edges_:
    neighbours[a].append(b)
    neighbours[b].append(a)
depth, queue = {}, []
for root in range(K):                      # (a forest: one search per component)
    if root not in depth:
        depth[root] = 0
        queue.append(root)
    while queue:
        node = queue.pop(0)
        for other in neighbours[node]:
            if other not in depth:
                depth[other] = depth[node] + 1
                queue.append(other)
pos = {}
for d in sorted(set(depth.values())):
    level = [k for k in range(K) if depth[k] == d]
    for j, k in enumerate(level):
        pos[k] = np.array([d, j - (len(level) - 1) / 2])
limit = np.abs(interaction).max()
for (a, b), value in zip(tree.edges_, interaction):
    xy = np.array([pos[a], pos[b]])
    ax_tree.plot(*xy.T, color="tab:red" if value > 0 else "tab:blue", lw=1 + 7 * abs(value) / limit, zorder=1)
    ax_tree.annotate(f"{value:+.2f}", xy.mean(axis=0), ha="center", va="center", fontsize=9,
                     bbox=dict(boxstyle="round", fc="white", ec="none"))
for k, xy in pos.items():
    ax_tree.scatter(*xy, s=900, color="white", edgecolor="black", zorder=2)
    ax_tree.annotate(str(k), xy, ha="center", va="center", fontsize=12, zorder=3)
ax_tree.margins(0.15)
ax_tree.axis("off")
ax_tree.set_title("Chow-Liu tree: learned interactions\n(blue: favours one label without the other)")
fig.tight_layout()

plt.show()
