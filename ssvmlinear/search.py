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

This module is also the one home of the searches' set-up for the solvers: which searches exist
(METHODS), which (surrogate, search) pairs a solver trains (surrogate_problem), what a structure
must offer for a search (structure_problem), and how a fit's objective is measured
(SearchSetup.measure): every solver and the conformance matrix read it.
"""
from collections import namedtuple

from ssvmlinear.surrogates import parse_surrogate

METHODS = {"none": 0, "exact": 1, "binary": 2, "bisecting": 3, "angular": 4, "hull": 5,
           "hull-integral": 6, "sarawagi": 7}
# the searches that return one label (a corner of the dual): all but the hull's relaxation
LABEL_SEARCHES = tuple(m for m in METHODS if m != "hull")
# surrogates psi(m, Delta) = b(Delta) + s(Delta) m, whose labels are fixed corners of the dual
LINEAR_SURROGATES = ("margin", "slack", "beta", "generalized")
# The angular search stops once its incumbent is within this factor of its bound (the paper's).
ANGULAR_RATIO = 0.999
# A solver's search makes at most this many oracle calls.
MAX_CALLS = 50

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
    from ssvmlinear._kernels import search as _search
    po = _search.PyOracle(oracle, constrained_oracle, capacity=max(2 * int(max_calls) + 8, 16))
    value, h, g, parts, n_calls = po.run(sur.kind, sur.alpha, sur.beta, meth, float(lam0),
                                         float(ratio), int(max_calls))
    return SearchResult(value, [p[0] for p in parts], [p[1] for p in parts], n_calls, h, g)


def run_on_structure(oracle, w, i, loss, method, lam0=1.0, ratio=1.0, max_calls=MAX_CALLS, scale=1.0, warm=()):
    """One search of example i through a structure's oracle (_kernels.search.StructureOracle), the
    surrogate and the search given by name; returns dict(value, h, g, labels, weights, n_calls)."""
    sur = parse_surrogate(loss)
    return oracle.run(w, i, sur.kind, sur.alpha, sur.beta, _parse_method(method), lam0, ratio, max_calls, scale,
                      warm, method)


# ------------------------------------------------------------------ the solvers' set-up

def surrogate_problem(loss, search, convex=False, linear=False):
    """An error message when a search-based solver does not train `loss` with `search`, else
    None. convex: the solver needs a surrogate convex in the margin (the cutting plane, BCFW);
    linear: one linear in the margin whose labels are corners of the dual (BCFW)."""
    if loss == "lse":
        return "loss='lse' is trained by solver='sdcd' or 'cutting-plane'"
    try:
        sur = parse_surrogate(loss)
    except ValueError as e:
        return str(e)
    if convex and sur.name == "probloss":
        return ("the cutting plane and BCFW need a surrogate convex in the margin; 'probloss' is not (use "
                "'probloss-convex' or solver='pegasos')")
    if linear and sur.name.partition(":")[0] not in LINEAR_SURROGATES:
        return (f"BCFW trains margin rescaling and the surrogates linear in the margin (slack, beta:B, "
                f"generalized:A,B); got loss={loss!r} (use solver='pegasos' or 'cutting-plane')")
    if sur.name == "margin":
        return None
    if search == "sarawagi" and sur.name != "slack":
        return f"search='sarawagi' maximises slack rescaling only (loss='slack'); got loss={loss!r}"
    if sur.name == "microf1" and search not in ("exact", "hull"):
        return (f"loss='microf1' is searched with search='hull' or 'exact' (its g = -(|y| + |y_i|) is "
                f"negative); got search={search!r}")
    return None


def _structure_name(structure):
    return getattr(structure, "description", None) or type(structure).__name__


def structure_problem(structure, loss, search, exact_violators=False):
    """An error message when `structure` lacks what `search` needs for `loss`, else None: the
    exact search enumerates loss values (a loss-indexed oracle), hull-integral asks for the k best
    labels, the angular search for the constrained oracle (or the loss-indexed one, which realises
    it), LSE with exact_violators every violating label (the k best). Checked before any work."""
    if structure.n_examples == 0 or not hasattr(structure, "py_kbest"):   # (a cluster's shards: checked
        return None                                                        # where they live)
    name = _structure_name(structure)
    if loss == "lse" and exact_violators and not structure.supports_kbest():
        return (f"exact_violators=True enumerates every violating label (the k best labels), which {name} "
                f"does not offer; use exact_violators=False (the violators the oracle finds)")
    if loss in ("margin", "lse"):
        return None
    sur = parse_surrogate(loss)
    if sur.name == "microf1":
        if not structure.offers_microf1:
            return f"loss='microf1' is not defined on {name} (its labels are not label sets)"
        return None
    if search == "exact" and not structure.supports_loss_indexed():
        return (f"search='exact' enumerates the labels by loss value, which {name} cannot; use "
                f"search='hull' (exact on a relaxation's convex label set) or 'angular'")
    if search == "hull-integral" and not structure.supports_kbest():
        return f"search='hull-integral' needs the k best labels, which {name} does not offer; use search='hull'"
    # the loss-indexed oracle realises the angular search's constrained oracle too
    if search == "angular" and not structure.supports_loss_indexed() and not structure.supports_constrained():
        return f"search='angular' needs a constrained oracle, which {name} does not offer; use search='hull'"
    return None


class SearchSetup(namedtuple("SearchSetup", "surrogate method ratio max_calls microf1")):
    """How a solver searches a surrogate's most violating labels: the parsed surrogate, the
    search's METHODS number, its stopping ratio, its call budget and whether it is Micro-F1's."""

    @classmethod
    def of(cls, loss, search, max_calls=MAX_CALLS):
        sur = parse_surrogate(loss)
        return cls(sur, METHODS[search], ANGULAR_RATIO if search == "angular" else 1.0, int(max_calls),
                   sur.name == "microf1")

    @property
    def kernel_args(self):
        """(kind, alpha, beta, method, ratio, max_calls): the kernels' search arguments."""
        s = self.surrogate
        return s.kind, s.alpha, s.beta, self.method, self.ratio, self.max_calls

    def measure_method(self, structure):
        """(method, ratio) of the search that finds each example's surrogate loss exactly: the
        hull search for itself (its problem is the surrogate over the convex hull of the labels'
        (m, Delta) points), else the exact search where the structure has a loss-indexed oracle
        (or Micro-F1's own), the hull search on a relaxation (its labels' points form a convex
        set), else the training search itself."""
        if self.method == METHODS["hull"]:
            return self.method, 1.0
        if structure.supports_loss_indexed() or self.microf1:
            return METHODS["exact"], 1.0
        if getattr(structure, "convex_labels", False):
            return METHODS["hull"], 1.0
        return self.method, self.ratio

    def measures_exactly(self, structure):
        """Whether the training search itself finds the true loss of every example."""
        return (self.method, self.ratio) == self.measure_method(structure)

    def measure(self, structure, Cs):
        """w -> sum_i C_i loss_i(w), each loss by measure_method's search."""
        import numpy as np
        from ssvmlinear._kernels.cuttingplane import SurrogatePass
        method, ratio = self.measure_method(structure)
        s = self.surrogate
        passer = SurrogatePass(structure, np.ascontiguousarray(Cs, dtype=np.float64),
                               np.array([0, structure.n_examples], dtype=np.int64), s.kind, s.alpha, s.beta,
                               method, ratio, self.max_calls, self.microf1)
        return lambda w: passer.run(w, np.zeros_like(w))[1]
