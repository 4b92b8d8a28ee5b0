"""Hierarchical classification (choi-thesis ch. 6): the scikit-learn estimator."""
from sklearn.base import ClassifierMixin, _fit_context

from .base import StructuredSSVM, constraints_of
from .models.hierarchical import HierarchicalModel


class HierarchicalSSVM(ClassifierMixin, StructuredSSVM, HierarchicalModel):
    """Single-label classification into the leaves of a label hierarchy (a tree or a DAG).

    A label l is the set A(l) of the leaf and its ancestors; each node n has a weight row W_n and
    the score of l is sum_{n in A(l)} c_n W_n . x. Minimises
        1/2 ||W||^2 + sum_i C_i max_l [Delta(l, y_i) + f(l) - f(y_i)]
    (or any surrogate / the LSE problem, as every estimator here) with
      - model="hsvm": c_n = 1 (the hierarchical structured SVM, (6.2));
      - model="nhsvm": c_n = sqrt(alpha_n), alpha summing to 1 along every root-to-leaf path
        (the normalised hierarchical SVM, (6.10)); alpha="rho2" minimises sum alpha^2 ((6.6),
        O(M) closed form on trees), "directional" maximises min alpha with alpha_child >= alpha_parent
        ((6.7), an LP), or an array; on a DAG the path sums may lie in [1, T] ((6.8));
      - model="flat": alpha = 1 on the leaves, 0 elsewhere (the flat multiclass model);
      - model="shared": Shared SVM ((6.17)/(6.18), trees): alpha is learned with the weights,
        alternating (a) a fit of V at fixed alpha (c_n = sqrt(alpha_n), U_n = c_n V_n) and (b)
        alpha <- ARGMINALPHATREE(U) (Algorithm 5, O(M)), from alpha="rho2" (or the alpha given),
        until the objective 1/2 sum ||U_n||^2 / alpha_n + C sum loss decreases by at most
        shared_tol relative, or after max_alternations; each fit starts afresh (a new alpha is a
        new feature map: nothing cached from the old one is reused). The task loss must not
        depend on alpha (default "zero-one", (6.17)'s fixed Delta(l, l_i); "hamming", or
        "normalized" with the node weights of the initial alpha, kept fixed).
    task_loss: "hamming" (node Hamming distance of the ancestor sets, (6.2)), "normalized"
    (sqrt of the sum of c_n^2 over their symmetric difference, (6.9)), "normalized-margin"
    ((6.13): the margin divided by that norm, loss 1) or "zero-one"; default hamming for HSVM,
    normalized for NHSVM and flat, zero-one for Shared SVM.

    {parameters}

    Notes
    -----
    Labels y are leaf ids of the hierarchy.

    Attributes: coef_ (n_nodes, n_features), intercept_ (n_nodes,), nodes_ (node id per row of
    coef_; -1 is an implicit root above several roots), alpha_ (n_nodes,), classes_ (the leaf ids),
    hierarchy_ and the solver diagnostics of every estimator.
    """

    _parameter_constraints = constraints_of(HierarchicalModel.params)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """X: (n_samples, n_features); y: the leaf id of every row; sample_weight multiplies C."""
        return HierarchicalModel.fit(self, X, y, sample_weight)

    score = HierarchicalModel.score    # (before ClassifierMixin's in the MRO)
