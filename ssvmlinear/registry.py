"""The solvers and the structures this version trains: one entry each, read by the estimators
(parameter constraints, validation, the driver to run), by the model files (the header fields
and weight blocks of a structure) and by the CLI (-s and -t, their usage text). Nothing else
branches on a solver's or a structure's name: adding one is adding an entry here.
"""
import numbers
from dataclasses import dataclass, field
from typing import Callable


SEARCHES = ("none", "exact", "binary", "bisecting", "angular", "hull", "hull-integral")


# ------------------------------------------------------------------------------------ solvers

# the kinds of a solver's own parameters (solver_constraints turns them into scikit-learn's)
_AT_LEAST_ONE = "integer >= 1"
_POSITIVE = "real > 0"

@dataclass(frozen=True)
class SolverSpec:
    """name: the estimators' `solver=`; cli: ((-s number, loss, usage line), ...), the loss being
    the one that -s number trains (None: any surrogate given by -l); default_for: the losses for
    which this solver is the default when `solver=None`; default_tol: the tol of its own stopping
    rule; accepts: loss name -> an error message or None; run: see _run_sdm; constraints: the solver's own parameters and their kinds,
    every estimator takes them; searches: whether `search=` applies (and -S, with -l)."""
    name: str
    cli: tuple
    default_for: tuple
    default_tol: float
    accepts: Callable
    run: Callable
    constraints: dict = field(default_factory=dict)
    searches: bool = False
    cli_options: dict = field(default_factory=dict)   # ssvm-train flag -> estimator parameter


def _surrogate_problem(loss, convex_only):
    """An error message when `loss` is not a surrogate the search-based solvers train."""
    from .surrogates import parse_surrogate
    if loss == "lse":
        return "loss='lse' is trained by solver='sdcd' or 'cutting-plane'"
    try:
        sur = parse_surrogate(loss)
    except ValueError as e:
        return str(e)
    if convex_only and sur.name == "probloss":
        return ("the cutting plane needs a surrogate convex in the margin; 'probloss' is not (use "
                "'probloss-convex' or solver='pegasos')")
    return None


def _only(*losses):
    def accepts(loss):
        return None if loss in losses else "not available"
    return accepts


# run(estimator, structure, Cs, args, kw, gap_tol, primal): args and kw are what every driver
# takes (solvers.py), gap_tol the relative duality gap the default rule adds (None with an explicit
# tol), primal the estimator's exact primal where it has one (LSE-SDCD checks its gap with it).

def _run_sdm(est, structure, Cs, args, kw, gap_tol, primal):
    from .solvers import fit_sdm
    return fit_sdm(structure, Cs, *args, n_jobs=est.n_jobs, oracle_batch=int(est.oracle_batch),
                   shards=int(getattr(est, "shards", 1)), gap_tol=gap_tol, **kw)


def _run_sdcd(est, structure, Cs, args, kw, gap_tol, primal):
    from .solvers import fit_sdcd
    return fit_sdcd(structure, Cs, *args, exact_violators=bool(getattr(est, "exact_violators", False)),
                    gap_tol=gap_tol, primal=primal, **kw)


def _run_cutting_plane(est, structure, Cs, args, kw, gap_tol, primal):
    from .solvers import fit_cutting_plane
    lse = est.loss == "lse"
    return fit_cutting_plane(structure, Cs, *args, lse=lse, n_jobs=est.n_jobs,
                             exact_violators=bool(getattr(est, "exact_violators", False)),
                             loss="margin" if lse else est.loss, search=est.search, gap_tol=gap_tol, **kw)


def _run_bcfw(est, structure, Cs, args, kw, gap_tol, primal):
    from .solvers import fit_bcfw
    return fit_bcfw(structure, Cs, *args, gap_tol=gap_tol, **kw)


def _run_gdmm(est, structure, Cs, args, kw, gap_tol, primal):
    from .solvers import fit_gdmm
    return fit_gdmm(structure, Cs, *args, gap_tol=gap_tol, rho=float(getattr(est, "gdmm_rho", 1.0)),
                    eta=float(getattr(est, "gdmm_eta", 0.5)), fmo_subsets=int(getattr(est, "fmo_subsets", 1)), **kw)


def _run_pegasos(est, structure, Cs, args, kw, gap_tol, primal):
    from .solvers import fit_pegasos   # no duality gap: its rule is the primal's relative change
    return fit_pegasos(structure, Cs, *args, loss=est.loss, search=est.search, batch_size=int(est.batch_size),
                       average=bool(est.average), projection=bool(est.projection), n_jobs=est.n_jobs, **kw)


SOLVERS = {s.name: s for s in (
    SolverSpec("sdm", cli=((0, "margin", "sequential dual method, margin rescaling (SDM)"),),
               default_for=("margin",), default_tol=0.1, accepts=_only("margin"), run=_run_sdm,
               constraints={"oracle_batch": _AT_LEAST_ONE, "shards": _AT_LEAST_ONE},
               cli_options={"b": "oracle_batch", "P": "shards"}),
    SolverSpec("sdcd", cli=((1, "lse", "sequential dual coordinate descent, linear summed error (LSE-SDCD)"),),
               default_for=("lse",), default_tol=1e-4, accepts=_only("lse"), run=_run_sdcd),
    SolverSpec("cutting-plane", cli=((2, None, "one-slack cutting plane, margin rescaling or a convex "
                                               "surrogate (-l, -S)"),
                                     (3, "lse", "one-slack cutting plane, linear summed error")),
               default_for=(), default_tol=0.1, searches=True, run=_run_cutting_plane, cli_options={"S": "search"},
               accepts=lambda loss: None if loss == "lse" else _surrogate_problem(loss, convex_only=True)),
    SolverSpec("bcfw", cli=((5, "margin", "block-coordinate Frank-Wolfe, margin rescaling (BCFW)"),),
               default_for=(), default_tol=1e-3, accepts=_only("margin"), run=_run_bcfw),
    SolverSpec("gdmm", cli=((6, "margin", "GDMM with factorwise oracles, margin rescaling (chains; -F for the\n"
                                          "\t      sublinear oracles)"),),
               default_for=(), default_tol=0.01, accepts=_only("margin"), run=_run_gdmm, cli_options={"F": "fmo_subsets"},
               constraints={"gdmm_rho": _POSITIVE, "gdmm_eta": _POSITIVE, "fmo_subsets": _AT_LEAST_ONE}),
    SolverSpec("pegasos", cli=((4, None, "Pegasos SGD, any surrogate (-l) and search (-S)"),),
               default_for=("*",), default_tol=1e-3, searches=True, run=_run_pegasos,
               cli_options={"b": "batch_size", "S": "search"},
               accepts=lambda loss: _surrogate_problem(loss, convex_only=False),
               constraints={"batch_size": _AT_LEAST_ONE, "average": "boolean", "projection": "boolean"}),
)}

# -s number -> (solver, loss it trains, or None for "any surrogate, -l")
SOLVER_TYPES = {number: (s.name, loss) for s in SOLVERS.values() for number, loss, _ in s.cli}


def solver_for_loss(loss):
    """The default solver (`solver=None`) of a loss."""
    for s in SOLVERS.values():
        if loss in s.default_for:
            return s.name
    return next(s.name for s in SOLVERS.values() if "*" in s.default_for)


def check_solver_loss(solver, loss, search, owner):
    """The (solver, loss, search) combinations this version trains (each parameter alone is
    checked by scikit-learn's parameter validation); owner names the estimator in messages."""
    spec = SOLVERS[solver]
    problem = spec.accepts(loss)
    if problem == "not available":
        avail = ", ".join(f"solver={s.name!r} with loss={s.default_for[0]!r}" for s in SOLVERS.values()
                          if s.default_for and s.default_for[0] != "*")
        avail += (", solver='cutting-plane' with 'lse' or a surrogate convex in the margin, solver='pegasos' "
                  "with any surrogate (ssvmlinear.surrogates)")
        raise ValueError(f"{owner}: solver={solver!r} with loss={loss!r} is not available in this version of "
                         f"ssvmlinear; available: {avail}.")
    if problem:
        raise ValueError(f"{owner}: {problem}")
    if spec.searches and loss == "microf1" and search not in ("exact", "hull"):
        raise ValueError(f"{owner}: loss='microf1' is searched with search='hull' or 'exact' (its g = -(|y| + "
                         f"|y_i|) is negative); got search={search!r}")


def solver_constraints():
    """Every solver's own parameters (each estimator takes all of them) and `search`, in
    scikit-learn's constraint language (built here, so that the registry itself never imports
    scikit-learn: the CLI and the model files read it)."""
    from sklearn.utils._param_validation import Interval, StrOptions
    kinds = {_AT_LEAST_ONE: [Interval(numbers.Integral, 1, None, closed="left")],
             _POSITIVE: [Interval(numbers.Real, 0, None, closed="neither")], "boolean": ["boolean"]}
    out = {"search": [StrOptions(set(SEARCHES))]}
    for s in SOLVERS.values():
        out.update({name: kinds[kind] for name, kind in s.constraints.items()})
    return out


# --------------------------------------------------------------------------------- structures

@dataclass(frozen=True)
class StructureSpec:
    """name: the model file's `structure` and the CLI's -t; estimator: "module:Class" (imported
    when needed); file_kind: load_svmlight_file's kind for its data files; model_params: boolean
    estimator parameters written to the model header; blocks: (nr_class, estimator parameters)
    -> [(block name, rows, columns)], the weight blocks after `w`, in file order (their values:
    the estimator's flat weights after the unary block); cli_options: its ssvm-train flags."""
    name: str
    estimator: str
    file_kind: str
    model_params: tuple = ()
    blocks: Callable = lambda K, params: []
    usage: str = ""
    cli_options: dict = field(default_factory=dict)   # ssvm-train flag -> estimator parameter

    def estimator_class(self):
        import importlib
        module, cls = self.estimator.split(":")
        return getattr(importlib.import_module(module, __package__), cls)


def _chain_blocks(K, params):
    return [("transition", K, K)] + ([("start", 1, K), ("end", 1, K)] if params.get("start_end") else [])


def _multilabel_blocks(K, params):
    edges = params.get("edges")
    return [("pairwise", len(edges), 4)] if edges is not None and len(edges) else []


STRUCTURES = {s.name: s for s in (
    StructureSpec("multiclass", ".multiclass:MulticlassSSVM", "multiclass"),
    StructureSpec("chain", ".chain:ChainSSVM", "sequence", ("start_end", "normalize_loss"), _chain_blocks),
    StructureSpec("multilabel", ".multilabel:MultiLabelSSVM", "multilabel", ("normalize_loss",), _multilabel_blocks,
                  usage="independent labels (or pairwise on a forest, -E), Hamming loss; use -B 1 for\n"
                        "\t  per-label bias terms", cli_options={"E": "edges"}),
    StructureSpec("hierarchy", ".hierarchical:HierarchicalSSVM", "auto",
                  usage="single-label classification into the leaves of a tree or DAG of labels\n"
                        "\t  (-H file; -M nhsvm (default), hsvm, shared or flat)", cli_options={"H": "hierarchy", "M": "model"}),
)}


def structure_of(estimator):
    """The registry entry of a fitted estimator's class."""
    for s in STRUCTURES.values():
        if s.estimator_class() is type(estimator):
            return s
    raise TypeError(f"cannot save a {type(estimator).__name__}")


def structure_for_file_kind(kind):
    return next(s for s in STRUCTURES.values() if s.file_kind == kind)
