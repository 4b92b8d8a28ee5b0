"""Multiclass structural SVM (Crammer-Singer formulation): the scikit-learn estimator."""
from sklearn.base import ClassifierMixin, _fit_context

from .base import StructuredSSVM, constraints_of
from .models.multiclass import MulticlassModel


class MulticlassSSVM(ClassifierMixin, StructuredSSVM, MulticlassModel):
    """Linear multiclass structural SVM (Crammer & Singer; LIBLINEAR ``-s 4``'s problem).

    Minimises  1/2 ||W||^2 + sum_i C_i max_y [Delta(y, y_i) + w_y . x_i - w_{y_i} . x_i]
    with the 0/1 loss Delta, C_i = C * sample_weight_i * class_weight[y_i].

    {parameters}

    Notes
    -----
    Stopping rules (tol): SDM stops after a pass in which every example's KKT violation is <= tol
    (LIBLINEAR's; default 0.1); LSE-SDCD after an oracle pass in which no example's sum of squared
    dual changes, divided by C_i, exceeds tol (the paper's; 1e-4); the cutting plane when the most
    violated one-slack constraint is violated by at most tol * sum_i C_i (svm_struct's; 0.1);
    BCFW and GDMM when the block gaps are <= tol times the dual (1e-3, 0.01); Pegasos after an
    epoch that changed the primal by at most tol relative (1e-3). tol=None adds a relative
    duality gap <= 1% to the rule at its default tolerance (Pegasos has no dual: its rule only).
    A fit that stops with a relative gap above 5% warns (ConvergenceWarning). fit_intercept
    follows scikit-learn (True); ssvm-train follows LIBLINEAR (no bias unless -B 1).

    Memory: the CSR data (never densified), a few vectors of the weight dimension
    (n_features x n_classes doubles), and the dual working sets: per member 28 bytes (label, dual
    variable, loss and one solver value), by doubling capacity; multiclass working sets keep no
    Gram matrix (its entries cost O(1)). SDM's sets stay small (margin rescaling); LSE-SDCD's hold
    every class that violates, up to all K classes at small C (28 n K bytes). The LSE objective
    is evaluated in blocks of rows, never as an n x K array.

    Attributes
    ----------
    coef_ (n_classes, n_features), intercept_ (n_classes,) -- one row per class also for two classes
    (the Crammer-Singer model has a weight vector per class) --, classes_, n_features_in_, n_iter_ (passes),
    objective_ (primal), dual_objective_, gap_, objective_curve_, dual_curve_,
    timestamps_, n_oracle_calls_, working_set_size_ (sum_i |V_i|), converged_, oracle_seconds_
    (SDM and the cutting plane: wall-clock seconds of the oracle phase).

    A scikit-learn classifier (ClassifierMixin: score is the mean accuracy). Its one tag of its own,
    input_tags.sparse (from StructuredSSVM): X may be scipy sparse and stays sparse. X must have
    the training number of columns in predict and decision_function (ssvmlinear.utils.match_columns
    applies LIBLINEAR's convention for test files that are wider or narrower).
    """

    _parameter_constraints = constraints_of(MulticlassModel.params)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """X: (n_samples, n_features), sparse or dense; y: one label per row (a column vector warns);
        sample_weight: one weight per row (multiplies C; not all zero). X may also be the
        ShardedData of ssvmlinear.distributed.load_svmlight_shards (labels included): training
        then runs where its shards live."""
        return MulticlassModel.fit(self, X, y, sample_weight)
