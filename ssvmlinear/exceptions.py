"""Warnings raised by ssvmlinear."""


class ConvergenceWarning(UserWarning):
    """Warning that a fit stopped before its solver converged.

    Raised (as a warning) by fit when the solver reached max_iter before its stopping rule, or
    stopped with a relative duality gap above 5%: the model is usable but may be far from the
    optimum. Raise max_iter, or lower tol. A subclass of UserWarning, filtered with the
    warnings module.

    See Also
    --------
    MulticlassSSVM : Its Notes describe every solver's stopping rule.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from ssvmlinear import ConvergenceWarning, MulticlassSSVM
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0], [0.9, 0.2]])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     clf = MulticlassSSVM(C=100.0, max_iter=1).fit(X, [0, 1, 2, 1])
    >>> any(issubclass(w.category, ConvergenceWarning) for w in caught)
    True
    """
