"""The scikit-learn side of every estimator: parameter constraints (checked by scikit-learn
before every fit), its validation of the inputs, tags. The estimators are the core models
(ssvmlinear.models) with these."""
from sklearn.base import BaseEstimator

from . import validation
from .params import parameters_section

def constraints_of(params):
    """scikit-learn's _parameter_constraints from the parameters' descriptions (params.Param)."""
    return {p.name: p.sklearn_constraints() for p in params}


class StructuredSSVM(BaseEstimator):
    """scikit-learn's BaseEstimator (get_params/set_params/repr/clone, parameter validation from
    _parameter_constraints) over a core model, whose inputs it checks in scikit-learn's terms."""

    _parameter_constraints = {}
    _checks = validation

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.__doc__ and "{parameters}" in cls.__doc__:      # the Parameters section from the descriptions
            cls.__doc__ = cls.__doc__.replace("{parameters}", parameters_section(cls.params).replace("\n", "\n    "))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # X may be scipy sparse (CSR is the kernels' format; other formats are converted, never densified).
        tags.input_tags.sparse = True
        return tags
