"""
Named entities from token feature dicts, next to sklearn-crfsuite
=================================================================

Taggers in Python are usually trained the way sklearn-crfsuite trains them: every sentence is a
list of tokens, every token a dict of features (the word lower-cased, its suffix, whether it
is capitalised, its neighbours' words, ...), and the tags are strings such as ``B-PER``,
``I-PER`` and ``O``. :class:`~ssvmlinear.ChainSSVM` takes exactly these lists. We tag a
generated corpus of persons, locations, organisations and events, score the entities as
CoNLL's conlleval does (:func:`~ssvmlinear.metrics.entity_scores`), and train sklearn-crfsuite
on the same features beside it.
"""

# %%
# A corpus and its features
# -------------------------
# :func:`~ssvmlinear.datasets.make_entity_sentences` fills sentence templates with names drawn
# from syllables, so the test sentences hold names never seen in training: the tagger has to
# read context and word shape. :func:`~ssvmlinear.datasets.word_features` is the classic set of
# token features of sklearn-crfsuite's tutorial.
import time

import matplotlib.pyplot as plt
import numpy as np

from ssvmlinear import ChainSSVM
from ssvmlinear.datasets import make_entity_sentences, word_features
from ssvmlinear.metrics import entity_scores

train_words, train_tags = make_entity_sentences(2000, random_state=0)
test_words, test_tags = make_entity_sentences(1000, random_state=1)


def sentence_features(words):
    return [word_features(words, i) for i in range(len(words))]


X_train = [sentence_features(s) for s in train_words]
X_test = [sentence_features(s) for s in test_words]
print(" ".join(f"{w}/{t}" for w, t in zip(train_words[0], train_tags[0])))
print(X_train[0][0])

# %%
# Training and tagging
# --------------------
# ``fit`` builds a vocabulary of the feature names (string values become ``name=value``
# indicators) and ``predict`` returns one list of tags per sentence.
t0 = time.perf_counter()
tagger = ChainSSVM(C=0.1).fit(X_train, train_tags)
ssvm_seconds = time.perf_counter() - t0
predicted = tagger.predict(X_test)
print(" ".join(f"{w}/{t}" for w, t in zip(test_words[0], predicted[0])))
print(f"{len(tagger.token_features_.feature_names)} features, fit in {ssvm_seconds:.2f} s, "
      f"token accuracy {tagger.score(X_test, test_tags):.4f}")

# %%
# Entity-level scores
# -------------------
# A predicted entity counts only when its type and both ends are right.
scores = entity_scores(test_tags, predicted)
for name, s in scores.items():
    print(f"{name:10s} precision {s['precision']:.3f}  recall {s['recall']:.3f}  "
          f"F1 {s['f1-score']:.3f}  ({s['support']} entities)")

# %%
# The same features in sklearn-crfsuite
# -------------------------------------
# A linear-chain CRF trained by L-BFGS (its default L2 coefficient) on the very same lists.
try:
    import sklearn_crfsuite
except ImportError:            # (pip install sklearn-crfsuite)
    sklearn_crfsuite = None
results = {"ChainSSVM": (scores, ssvm_seconds)}
if sklearn_crfsuite is not None:
    t0 = time.perf_counter()
    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.0, c2=1.0).fit(X_train, train_tags)
    crf_seconds = time.perf_counter() - t0
    results["sklearn-crfsuite"] = (entity_scores(test_tags, crf.predict(X_test)), crf_seconds)
for tool, (s, seconds) in results.items():
    print(f"{tool:17s} entity F1 {s['micro avg']['f1-score']:.4f}  fit {seconds:.2f} s")

# %%
# F1 per entity type
# ------------------
types = [t for t in scores if not t.endswith(" avg")]
fig, ax = plt.subplots(figsize=(6, 3))
width = 0.8 / len(results)
for k, (tool, (s, _)) in enumerate(results.items()):
    ax.bar(np.arange(len(types)) + k * width, [s[t]["f1-score"] for t in types], width, label=tool)
ax.set_xticks(np.arange(len(types)) + width * (len(results) - 1) / 2, types)
ax.set_ylim(0.8, 1.0)
ax.set_ylabel("entity F1")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
