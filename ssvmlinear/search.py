"""lambda-oracle searches for non-additive surrogates, drivable from Python.

The same nogil kernels serve the solvers (through each structure's oracles) and this module
(through Python callables), so users with their own structures can use them::

    res = ssvmlinear.search.maximize("slack", oracle, "angular", constrained_oracle=coracle)
    res.value, res.labels, res.weights, res.n_calls

``oracle(lam)`` returns ``(m, delta, label)`` for a label maximising m + lam * delta, with
m = f(y) - f(y_i) and delta = Delta(y, y_i) >= 0. ``constrained_oracle(lam, alpha, beta)`` returns the
same for the best label with alpha * (1 + m) > delta and beta * (1 + m) <= delta (alpha may be
inf: then only 1 + m > 0 is required), or None when no label qualifies.

Methods: ``none`` (the lambda = 1 oracle), ``binary`` (convex bound, thesis 4.2.2), ``bisecting``
(Alg. 1), ``angular`` (Alg. 2; needs ``constrained_oracle``; exact for slack rescaling and for any
surrogate whose improving labels have 1 + m > 0), ``hull`` (thesis Alg. 4: the optimum over the
convex hull of the labels' (m, delta) points; may be a convex combination of two labels),
``sarawagi`` (Sarawagi & Gupta 2008, thesis 4.2.1; slack rescaling only: golden section over
lambda on a bound tied to the example's slack, here the lambda = 1 oracle's violation). The
solvers additionally offer ``exact`` (loss-indexed enumeration) and ``hull-integral`` (Alg. 4 with
the ban list and k-best oracle), which need structure oracles.
"""
from collections import namedtuple

from ssvmlinear._kernels import search as _search
from ssvmlinear.surrogates import parse_surrogate

METHODS = {"none": 0, "exact": 1, "binary": 2, "bisecting": 3, "angular": 4, "hull": 5,
           "hull-integral": 6, "sarawagi": 7}

SearchResult = namedtuple("SearchResult", "value labels weights n_calls h g")
SearchResult.__doc__ = ("value: the surrogate's value attained; labels/weights: one label with "
                        "weight 1, or two forming a convex combination (None stands for the true "
                        "label y_i); n_calls: oracle calls; (h, g): the point attained.")


def _parse_method(method):
    if method not in METHODS:
        raise ValueError(f"unknown search {method!r}; expected one of {', '.join(METHODS)}")
    return METHODS[method]


def maximize(loss, oracle, method="hull", constrained_oracle=None, max_calls=None, lam0=1.0,
             ratio=1.0):
    """Maximise the surrogate ``loss`` over labels seen only through ``oracle`` (see module doc).

    ``ratio`` < 1 lets the angular and binary searches stop once the incumbent is within that
    factor of their upper bound (the paper uses 0.999); 1 searches to optimality.
    """
    sur = parse_surrogate(loss)
    meth = _parse_method(method)
    if meth in (1, 6):
        raise ValueError(f"search {method!r} needs a structure's loss-indexed / k-best oracle; "
                         "from Python use 'angular' or 'hull'")
    if meth == 4 and constrained_oracle is None:
        raise ValueError("the angular search needs constrained_oracle")
    if meth == 7 and sur.name not in ("slack", "margin"):
        raise ValueError(f"search 'sarawagi' maximises slack rescaling only; got loss {loss!r}")
    if sur.kind == 6:
        raise ValueError("loss 'microf1' is searched through a structure's oracles (MultiLabelSSVM, "
                         "ChainSSVM); its coordinates have no meaning for a generic oracle")
    if max_calls is None:
        max_calls = 200
    if not 0.0 < ratio <= 1.0:
        raise ValueError(f"ratio must lie in (0, 1], got {ratio!r}")
    po = _search.PyOracle(oracle, constrained_oracle, capacity=max(2 * int(max_calls) + 8, 16))
    value, h, g, parts, n_calls = po.run(sur.kind, sur.alpha, sur.beta, meth, float(lam0),
                                         float(ratio), int(max_calls))
    return SearchResult(value, [p[0] for p in parts], [p[1] for p in parts], n_calls, h, g)
