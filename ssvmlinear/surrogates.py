"""Parsing of ``loss=`` strings into bi-criteria surrogates (see SPEC "Surrogates").

    margin            psi = h + g                     (margin rescaling)
    slack             psi = g (1 + h)                 (slack rescaling)
    beta:B            psi = h g^B + g                 (beta-scaling, 0 <= B <= 1)
    generalized:A,B   psi = h g^B + g^A               (A <= -1 or A >= 0, 0 <= B - A <= 1)
    probloss          psi = 2 g Phi_N(h; 0, 2g/pi)    (ProbLoss)
    probloss-convex   ProbLoss for h <= 0, g + sqrt(g) h beyond (its convex extension)
    microf1           psi = (Delta + m) / (|y| + |y_i|)   (multi-label; chains: the tags other than
                      the outside tag as the sets)
    logloss           psi = g log(1 + e^h)            (loss-scaled log loss)

with h = m(y) = f(y) - f(y_i) and g = Delta(y, y_i). ``lse`` (linear summed error) is a different
dual, trained by LSE-SDCD and the LSE cutting plane, not a bi-criteria surrogate.
"""
from collections import namedtuple

from ssvmlinear._kernels import surrogate as _surrogate

KINDS = {"margin": 0, "slack": 1, "beta": 2, "generalized": 3, "probloss": 4,
         "probloss-convex": 5, "microf1": 6, "logloss": 7}
SURROGATE_NAMES = ("margin", "slack", "beta:B", "generalized:A,B", "probloss", "probloss-convex",
                   "microf1", "logloss")

Surrogate = namedtuple("Surrogate", "name kind alpha beta")


def parse_surrogate(loss):
    """``loss`` string -> Surrogate(name, kind, alpha, beta); ValueError naming the options."""
    if not isinstance(loss, str):
        raise ValueError(f"loss must be a string, got {loss!r}")
    name, _, arg = loss.strip().lower().partition(":")
    if name not in KINDS:
        raise ValueError(f"unknown loss {loss!r}; expected one of {', '.join(SURROGATE_NAMES)} "
                         "(or 'lse')")
    alpha, beta = 1.0, 0.0
    try:
        if name == "beta":
            beta = float(arg)
            if not 0.0 <= beta <= 1.0:
                raise ValueError
        elif name == "generalized":
            a, b = (float(v) for v in arg.split(","))
            if not (a <= -1.0 or a >= 0.0) or not 0.0 <= b - a <= 1.0:
                raise ValueError
            alpha, beta = a, b
        elif arg:
            raise ValueError
    except ValueError:
        want = {"beta": "'beta:B' with 0 <= B <= 1",
                "generalized": "'generalized:A,B' with A <= -1 or A >= 0 and 0 <= B - A <= 1"}
        raise ValueError(f"bad loss {loss!r}; expected {want.get(name, repr(name))}") from None
    return Surrogate(loss, KINDS[name], alpha, beta)


def psi(surrogate, h, g):
    """psi(h, g) of a parsed surrogate (scalar)."""
    return _surrogate.py_psi(surrogate.kind, surrogate.alpha, surrogate.beta, float(h), float(g))[0]
