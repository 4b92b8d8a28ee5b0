"""Cross-validation for the structured estimators (folds trained in parallel with joblib)."""
import numpy as np
from joblib import Parallel, delayed

from .params import Params


def kfold_indices(n, n_folds, seed=0):
    """Random fold id per example (LIBLINEAR -v: a random permutation split into n_folds parts)."""
    if n_folds < 2:
        raise ValueError(f"n-fold cross validation needs n >= 2; got {n_folds}")
    if n_folds > n:
        raise ValueError(f"n-fold cross validation: {n_folds} folds for {n} examples")
    perm = np.random.default_rng(seed).permutation(n)
    fold = np.empty(n, dtype=np.int64)
    fold[perm] = np.arange(n) % n_folds
    return fold


def fresh_copy(estimator):
    """An unfitted estimator of the same parameters (scikit-learn's clone, without importing it)."""
    return type(estimator)(**estimator.get_params(deep=False))


def fold_copy(estimator, y_train):
    """fresh_copy for one fold's training part: a class_weight dict keeps only the classes that
    part has (LIBLINEAR -v weighs the classes a fold has; a rare class can be missing from one)."""
    est = fresh_copy(estimator)
    weights = est.get_params(deep=False).get("class_weight")
    if isinstance(weights, dict) and not isinstance(y_train, list) and np.ndim(y_train) == 1:
        present = set(np.unique(np.asarray(y_train)).tolist())
        est.set_params(class_weight={k: v for k, v in weights.items() if k in present})
    return est


def cross_val_predict(estimator, X, y, n_folds=5, seed=0, n_jobs=None, lengths=None, return_estimators=False,
                      sample_weight=None):
    """Out-of-fold predictions of a clone of `estimator` trained on the other folds.

    With `lengths` (sequences), whole sequences are assigned to folds. A 2-D (dense or sparse)
    multi-label indicator y gives predictions in the same format. return_estimators: also the
    fitted clones, one per fold: (predictions, estimators). sample_weight: one weight per row,
    each fold fitted with its rows' weights. A class_weight dict weighs the classes each fold's
    training part has."""
    import scipy.sparse as sp
    multilabel = sp.issparse(y) or np.ndim(y) == 2
    if sp.issparse(y):
        y = sp.csr_matrix(y)
    else:
        y = np.asarray(y)
    if lengths is None:
        fold = kfold_indices(X.shape[0], n_folds, seed)
    else:
        lengths = np.asarray(lengths)
        seq_fold = kfold_indices(lengths.shape[0], n_folds, seed)
        fold = np.repeat(seq_fold, lengths)

    def run(k):
        test = np.flatnonzero(fold == k)
        train = np.flatnonzero(fold != k)
        est = fold_copy(estimator, y[train]).set_params(verbose=0)
        kw = {} if sample_weight is None else {"sample_weight": np.asarray(sample_weight)[train]}
        if lengths is None:
            est.fit(X[train], y[train], **kw)
            return test, est.predict(X[test]), est
        est.fit(X[train], y[train], lengths[seq_fold != k], **kw)
        return test, est.predict(X[test], lengths[seq_fold == k]), est

    # Threads: the solver kernels release the GIL, and nothing is pickled.
    results = Parallel(n_jobs=n_jobs, prefer="threads")(delayed(run)(k) for k in range(n_folds))
    fitted = [est for _, _, est in results]
    if multilabel:
        order = np.concatenate([test for test, _, _ in results])
        parts = [p for _, p, _ in results]
        stacked = sp.vstack([sp.csr_matrix(p) for p in parts]).tocsr() if sp.issparse(parts[0]) \
            else np.vstack(parts)
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.shape[0])
        pred = stacked[inverse]
    else:
        pred = np.empty(X.shape[0], dtype=np.asarray(y).dtype)
        for test, p, _ in results:
            pred[test] = p
    return (pred, fitted) if return_estimators else pred


# ------------------------------------------------------------------------- choosing C on a path

# ssvm-train -C: the grid's end (LIBLINEAR's), and how many C values in a row without a better
# cross-validation score end the path early, once it has left the plateau of its first C (small
# C: w near 0, the scores flat for decades of C); past the best, larger C only costs more passes.
MAX_C = 1024.0
PATIENCE = 3
PLATEAU = 0.01


def example_folds(n_examples, cv, seed, lengths=None):
    """One fold id per example (a row, or a sequence when lengths are given) from cv: an int
    (LIBLINEAR -v's random split) or an iterable of (train, test) arrays of row indices whose
    test sets partition the rows (and keep each sequence whole)."""
    if isinstance(cv, (int, np.integer)):
        return kfold_indices(n_examples if lengths is None else len(lengths), int(cv), seed)
    n_rows = n_examples
    fold = np.full(n_rows, -1, dtype=np.int64)
    for k, (_, test) in enumerate(cv):
        test = np.asarray(test, dtype=np.int64)
        if np.any(fold[test] >= 0):
            raise ValueError("cv: the test sets of the splits overlap; a path of C needs test sets that partition "
                             "the examples")
        fold[test] = k
    if np.any(fold < 0):
        raise ValueError("cv: the test sets of the splits do not cover every example")
    if lengths is None:
        return fold
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    per_seq = fold[starts]
    if np.any(np.repeat(per_seq, lengths) != fold):
        raise ValueError("cv: a split cuts a sequence; give each sequence's rows to one test set")
    return per_seq


class _Fold:
    """One fold of a C path: its training and test parts and its estimator, warm-started from the
    previous C's solution."""

    def __init__(self, estimator, X, y, lengths, sample_weight, in_test):
        rows = in_test if lengths is None else np.repeat(in_test, lengths)
        self.train = (X[~rows], _rows(y, ~rows), None if lengths is None else lengths[~in_test],
                      None if sample_weight is None else sample_weight[~rows])
        self.est = fold_copy(estimator, self.train[1]).set_params(warm_start=True, verbose=0)
        self.test = (X[rows], _rows(y, rows), None if lengths is None else lengths[in_test])

    def score_at(self, C):
        X, y, lengths, sw = self.train
        self.est.set_params(C=C)
        kw = {} if sw is None else {"sample_weight": sw}
        self.est.fit(X, y, **kw) if lengths is None else self.est.fit(X, y, lengths, **kw)
        Xt, yt, lt = self.test
        if hasattr(self.est, "score"):          # an estimator's own score (GridSearchCV's default)
            return float(self.est.score(Xt, yt) if lt is None else self.est.score(Xt, yt, lt))
        pred = self.est.predict(Xt) if lt is None else self.est.predict(Xt, lt)     # a core model: accuracy
        return float(np.mean(np.asarray(pred) == np.asarray(yt)))


def _rows(y, mask):
    return y[mask] if not isinstance(y, list) else [v for v, m in zip(y, mask) if m]


def c_path(estimator, X, y, Cs, folds, lengths=None, sample_weight=None, n_jobs=None, patience=None,
           on_score=None, return_states=False):
    """Cross-validation scores along a path of C values: every fold fits at Cs in increasing order,
    each fit warm-started from the fold's previous one (the solvers that keep a dual state start
    there); the folds of one C run in parallel threads.

    Returns (Cs tried, scores of shape (n_folds, n_tried)), and with return_states the folds'
    dual states at the best mean score (None for a solver that keeps none). patience: stop after
    that many C values in a row without a better mean score, once a mean score has exceeded the
    first C's by PLATEAU (None: every C). on_score(C, mean score) is called after each C."""
    Cs = np.sort(np.asarray(Cs, dtype=float))
    fitted = [_Fold(estimator, X, y, lengths, sample_weight, folds == k) for k in range(int(folds.max()) + 1)]
    scores, best, since, states = [], -np.inf, 0, None
    with Parallel(n_jobs=n_jobs, prefer="threads") as parallel:
        for C in Cs:
            scores.append(parallel(delayed(f.score_at)(C) for f in fitted))
            mean = float(np.mean(scores[-1]))
            if on_score is not None:
                on_score(C, mean)
            first = mean if len(scores) == 1 else first
            if mean > best:     # (each fit leaves the state a later one reads: a reference suffices)
                states = [getattr(f.est, "_dual_state", None) for f in fitted]
            best, since = (mean, 0) if mean > best else (best, since + 1)
            if patience is not None and since >= patience and best > first + PLATEAU:
                break
    out = (Cs[:len(scores)], np.asarray(scores).T)
    return out + (states,) if return_states else out


# CPathCV's refit starts from the folds' merged states with the solvers whose state is one dual
# variable per (example, label) summing to C_i, so that their average is feasible (SDM's).
MERGEABLE_STATES = ("sdm",)


def merged_fold_state(states, folds, lengths=None):
    """A start for a fit on all the examples from the folds' states at one C: each example's dual
    variables averaged over the folds whose training part had it (each fold's sum to C_i, so
    their average does), its labels the union of theirs; the first centre (Catalyst's) the mean
    of the folds' models where every fold has one. folds: the fold id per example (a row, or a
    sequence with lengths); None when a fold kept no state."""
    if not states or any(s is None for s in states):
        return None
    n = folds.shape[0]
    owners, rows, alpha, loss, Cs = [], [], [], [], np.zeros(n)
    width = int(np.max(lengths)) if lengths is not None and len(lengths) else 0
    for k, st in enumerate(states):
        train = np.flatnonzero(folds != k)
        sizes = np.asarray(st["sizes"], dtype=np.int64)
        if sizes.shape[0] != train.shape[0]:
            return None
        g = np.repeat(train, sizes)                       # each entry's example
        lens = lengths[g] if lengths is not None else np.full(g.shape[0], len(st["labels"]) // max(len(g), 1))
        width = max(width, int(lens.max()) if lens.size else 0)
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        owners.append(g)
        rows.append((np.asarray(st["labels"], dtype=np.int64), starts, lens))
        alpha.append(np.asarray(st["alpha"], dtype=np.float64))
        loss.append(np.asarray(st["loss"], dtype=np.float64))
        Cs[train] = np.asarray(st["Cs"], dtype=np.float64)
    g = np.concatenate(owners)
    table = np.full((g.shape[0], width + 1), -1, dtype=np.int64)     # example, its label padded
    table[:, 0] = g
    at = 0
    for labels, starts, lens in rows:
        cols = np.arange(width)
        mask = cols[None, :] < lens[:, None]
        table[at:at + lens.shape[0], 1:][mask] = labels[(starts[:, None] + cols[None, :])[mask]]
        at += lens.shape[0]
    keys, first, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    having = np.bincount(np.concatenate([np.flatnonzero(folds != k) for k in range(len(states))]), minlength=n)
    owner = keys[:, 0]
    merged_alpha = np.bincount(inverse, weights=np.concatenate(alpha), minlength=keys.shape[0]) / having[owner]
    key_lens = lengths[owner] if lengths is not None else np.concatenate([r[2] for r in rows])[first]
    keep = np.arange(width)[None, :] < key_lens[:, None]
    state = dict(sizes=np.bincount(owner, minlength=n).astype(np.int64), labels=keys[:, 1:][keep].astype(np.int32),
                 ring=np.zeros(n, dtype=np.int64), alpha=merged_alpha, loss=np.concatenate(loss)[first], Cs=Cs,
                 rng_state=states[0].get("rng_state", 0))
    centres = [st.get("centre") for st in states]
    if all(c is not None for c in centres):
        state["centre"] = np.mean(centres, axis=0)
    return state


class CPathCV(Params):
    """Choose C by cross-validation along a warm-started path, then refit.

    What ``GridSearchCV(estimator, {"C": Cs}, cv=cv)`` computes, along a path: every fold fits
    the values of C in increasing order, each fit starting from the fold's previous solution (the
    dual state of the solvers that keep one: SDM, LSE-SDCD and BCFW; the cutting plane, GDMM and
    Pegasos, whose first step at 1/lambda erases a starting point, start cold) instead of every
    (fold, C) pair from scratch. ``ssvm-train -C`` runs the same path.

    Parameters
    ----------
    estimator : MulticlassSSVM, ChainSSVM, MultiLabelSSVM or HierarchicalSSVM
        The model whose C is chosen; its other parameters are kept (its own C is not used). A
        ``class_weight`` dict weighs the classes each fold's training part has (a rare class
        may be missing from one).
    Cs : int or array-like of float, default=10
        The values of C; an int n: n values spaced evenly on a log scale from 1e-3 to 1e2.
    cv : int or iterable of (train, test) index arrays, default=5
        An int k: k folds of random examples (of whole sequences for a chain), as ``ssvm-train
        -v k``; or the splits of a scikit-learn splitter (``list(KFold(5).split(X))``), whose test
        sets must partition the rows (and, for a chain, keep each sequence whole).
    n_jobs : int or None, default=None
        Threads: the folds of one C are fitted in parallel (the solvers release the GIL).
    random_state : int, default=0
        The random split of an int cv.
    refit : bool, default=True
        Refit on all the data at the best C (``best_estimator_``), which predict and score use.
        With SDM the refit starts from the folds' dual solutions at that C, each example's
        averaged over the folds that trained on it (a feasible start of the whole problem).

    Attributes
    ----------
    Cs_ : ndarray of shape (n_Cs,)
        The values of C, increasing.
    scores_ : ndarray of shape (n_folds, n_Cs)
        The estimator's score on each fold's test part (its ``score``: accuracy, token accuracy
        for a chain, example-based accuracy for multi-label).
    cv_results_ : dict of ndarray
        As GridSearchCV's: ``param_C``, ``mean_test_score``, ``std_test_score``,
        ``rank_test_score`` and ``split{k}_test_score``.
    best_index_ : int
        The index of the best mean score (the smallest C among ties, as GridSearchCV).
    best_C_ : float
        The chosen C.
    best_score_ : float
        Its mean cross-validation score.
    best_estimator_ : estimator
        The estimator refitted on all the data at best_C_ (refit=True).

    See Also
    --------
    sklearn.model_selection.GridSearchCV : The same search, each fit from scratch.

    Examples
    --------
    >>> import numpy as np
    >>> from ssvmlinear import MulticlassSSVM
    >>> from ssvmlinear.model_selection import CPathCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4)); y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    >>> search = CPathCV(MulticlassSSVM(), Cs=[0.01, 0.1, 1.0], cv=3).fit(X, y)
    >>> search.best_C_ in (0.01, 0.1, 1.0), search.scores_.shape
    (True, (3, 3))
    """

    def __init__(self, estimator, Cs=10, cv=5, n_jobs=None, random_state=0, refit=True):
        self.estimator = estimator
        self.Cs = Cs
        self.cv = cv
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.refit = refit

    def fit(self, X, y, lengths=None, sample_weight=None):
        """Cross-validate every C along the path and refit at the best.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_rows, n_features)
            The examples (one row per token for a chain).
        y : array-like or sparse matrix
            Their labels, as the estimator's fit takes them.
        lengths : array-like of int or None, default=None
            A chain's sequence lengths.
        sample_weight : array-like of shape (n_rows,) or None, default=None
            Per-row weights, sliced with the rows of each fold.

        Returns
        -------
        CPathCV
            This object, fitted.
        """
        import scipy.sparse as sp
        if isinstance(self.Cs, (int, np.integer)):
            if self.Cs < 1:
                raise ValueError(f"CPathCV: Cs must be a positive int or a list of values of C; got {self.Cs!r}")
            Cs = np.logspace(-3, 2, int(self.Cs))
        else:
            Cs = np.asarray(self.Cs, dtype=float).ravel()
            if Cs.size == 0 or not np.all(np.isfinite(Cs) & (Cs > 0)):
                raise ValueError("CPathCV: every value of Cs must be a finite number > 0")
        if sp.issparse(y):
            y = sp.csr_matrix(y)
        elif not isinstance(y, list):
            y = np.asarray(y)
        lengths = None if lengths is None else np.asarray(lengths, dtype=np.int64)
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=float)
        folds = example_folds(X.shape[0], self.cv, self.random_state, lengths)
        self.Cs_, self.scores_, states = c_path(self.estimator, X, y, Cs, folds, lengths, sample_weight, self.n_jobs,
                                                return_states=True)
        mean, std = self.scores_.mean(axis=0), self.scores_.std(axis=0)
        order = np.argsort(-mean, kind="stable")
        rank = np.empty(len(mean), dtype=np.int32)
        rank[order] = np.arange(1, len(mean) + 1)
        for j in range(1, len(mean)):          # ties share the smaller rank (scikit-learn's "min")
            if mean[order[j]] == mean[order[j - 1]]:
                rank[order[j]] = rank[order[j - 1]]
        self.cv_results_ = {"param_C": self.Cs_.copy(), "mean_test_score": mean, "std_test_score": std,
                            "rank_test_score": rank,
                            **{f"split{k}_test_score": self.scores_[k] for k in range(self.scores_.shape[0])}}
        self.best_index_ = int(np.argmax(mean))
        self.best_C_ = float(self.Cs_[self.best_index_])
        self.best_score_ = float(mean[self.best_index_])
        if self.refit:
            est = fresh_copy(self.estimator).set_params(C=self.best_C_)
            if getattr(est, "_solver_name", None) in MERGEABLE_STATES:
                est._start_state = merged_fold_state(states, folds, lengths)
            kw = {} if sample_weight is None else {"sample_weight": sample_weight}
            self.best_estimator_ = est.fit(X, y, **kw) if lengths is None else est.fit(X, y, lengths, **kw)
        return self

    def _best(self, method):
        if not hasattr(self, "best_estimator_"):
            raise AttributeError(f"CPathCV.{method} needs a fit with refit=True")
        return self.best_estimator_

    def predict(self, X, *args, **kwargs):
        """Predict with best_estimator_ (the arguments of its predict)."""
        return self._best("predict").predict(X, *args, **kwargs)

    def decision_function(self, X, *args, **kwargs):
        """Scores of best_estimator_ (the arguments of its decision_function)."""
        return self._best("decision_function").decision_function(X, *args, **kwargs)

    def score(self, X, y, *args, **kwargs):
        """The score of best_estimator_ (the arguments of its score)."""
        return self._best("score").score(X, y, *args, **kwargs)


def default_start_C(X, lengths=None):
    """LIBLINEAR's first C of its search (-C without -c): the power of two at or below
    1 / (n max_i |x_i|^2), where every model is still near w = 0; an example is a row, or the
    rows of a sequence (their squared norms summed)."""
    import scipy.sparse as sp
    sq = np.asarray(X.multiply(X).sum(axis=1) if sp.issparse(X) else np.square(X).sum(axis=1)).ravel()
    if lengths is not None:
        sq = np.add.reduceat(sq, np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)) \
            if len(lengths) else sq
    top = float(sq.max()) if sq.size else 0.0
    if top <= 0:
        return 1.0
    return float(2.0 ** np.floor(np.log2(1.0 / (len(sq) * top))))


def c_grid(start, stop=MAX_C):
    """start, 2 start, 4 start, ... up to stop (LIBLINEAR's -C grid); at least start."""
    return start * 2.0 ** np.arange(max(int(np.floor(np.log2(stop / start))), 0) + 1)
