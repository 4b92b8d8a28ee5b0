"""The solvers and the structures this version trains: one entry each, read by the estimators
(parameter constraints, validation, the driver to run), by the model files (the header fields
and weight blocks of a structure) and by the CLI (-s and -t, their usage text). Nothing else
branches on a solver's or a structure's name: adding one is adding an entry here.
"""
from dataclasses import dataclass
from typing import Callable


# ------------------------------------------------------------------------------------ solvers

@dataclass(frozen=True)
class SolverSpec:
    """name: the estimators' `solver=` string; solver: "module:Class" of its solvers.Solver
    (imported when needed; the class holds its parameters, default_tol, the losses it accepts
    and how it runs on a cluster: its `distributed`); cli: ((-s number, loss, usage line), ...),
    the loss being the one that -s number trains (None: any surrogate given by -l); default_for:
    the losses for which this solver is the default when `solver=None`. Its ssvm-train flags are
    its parameters' (their descriptions' `flag`)."""
    name: str
    solver: str
    cli: tuple
    default_for: tuple = ()

    def solver_class(self):
        return _import(self.solver)

    @property
    def cli_options(self):
        """ssvm-train flag -> the solver's parameter."""
        return flags_of(self.solver_class().params)


SOLVERS = {s.name: s for s in (
    SolverSpec("sdm", ".solvers.sdm:SDM", cli=((0, "margin", "sequential dual method, margin rescaling (SDM)"),),
               default_for=("margin",)),
    SolverSpec("sdcd", ".solvers.sdcd:SDCD",
               cli=((1, "lse", "sequential dual coordinate descent, linear summed error (LSE-SDCD)"),),
               default_for=("lse",)),
    SolverSpec("cutting-plane", ".solvers.cutting_plane:CuttingPlane",
               cli=((2, None, "one-slack cutting plane, margin rescaling or a convex surrogate (-l, -S)"),
                    (3, "lse", "one-slack cutting plane, linear summed error"))),
    SolverSpec("bcfw", ".solvers.bcfw:BCFW",
               cli=((5, None, "block-coordinate Frank-Wolfe (BCFW), margin rescaling or a surrogate linear\n"
                              "\t      in the margin (-l, -S)"),)),
    SolverSpec("gdmm", ".solvers.gdmm:GDMM",
               cli=((6, "margin", "GDMM with factorwise oracles, margin rescaling (-F: the sublinear\n"
                                  "\t      oracles of chains, multiclass and multi-label)"),)),
    SolverSpec("pegasos", ".solvers.pegasos:Pegasos", cli=((4, None, "Pegasos SGD, any surrogate (-l) and search (-S)"),),
               default_for=("*",)),
)}

# -s number -> (solver, loss it trains, or None for "any surrogate, -l")
SOLVER_TYPES = {number: (s.name, loss) for s in SOLVERS.values() for number, loss, _ in s.cli}


def solver_for_loss(loss):
    """The default solver (`solver=None`) of a loss."""
    for s in SOLVERS.values():
        if loss in s.default_for:
            return s.name
    return next(s.name for s in SOLVERS.values() if "*" in s.default_for)


def make_solver(solver, loss):
    """The solver object of an estimator's `solver` parameter: a Solver as it is, a name's
    default object, None the loss's default solver."""
    if solver is None:
        solver = solver_for_loss(loss)
    if isinstance(solver, str):
        return SOLVERS[solver].solver_class()()
    return solver


def check_solver_loss(solver, loss, owner):
    """The (solver, loss) combinations this version trains (each parameter alone is checked by
    scikit-learn's parameter validation); owner names the estimator in messages."""
    problem = solver.accepts(loss)
    if problem == "not available":
        avail = ", ".join(f"solver={s.name!r} with loss={s.default_for[0]!r}" for s in SOLVERS.values()
                          if s.default_for and s.default_for[0] != "*")
        avail += (", solver='cutting-plane' with 'lse' or a surrogate convex in the margin, solver='pegasos' "
                  "with any surrogate (ssvmlinear.surrogates)")
        raise ValueError(f"{owner}: solver={solver.name!r} with loss={loss!r} is not available in this version of "
                         f"ssvmlinear; available: {avail}.")
    if problem:
        raise ValueError(f"{owner}: {problem}")


# --------------------------------------------------------------------------------- structures

@dataclass(frozen=True)
class StructureSpec:
    """name: the model file's `structure` and the CLI's -t; model: "module:Class" of its core model
    (numpy and scipy only: what ssvm-train and ssvm-predict run); estimator: "module:Class" of its
    scikit-learn estimator (the core model with scikit-learn's validation); both imported when
    needed. file_kind: load_svmlight_file's kind for its data files; model_params: boolean
    parameters written to the model header; blocks: (nr_class, parameters) -> [(block name, rows,
    columns)], the weight blocks after `w`, in file order (their values: the flat weights after the
    unary block); its ssvm-train flags are its model's parameters' (`flag`). On a cluster the model builds its problem
    from the shards (its _shard_problem, run where each shard lives); Model._fit_sharded is the one
    sharded fit."""
    name: str
    model: str
    estimator: str
    file_kind: str
    model_params: tuple = ()
    blocks: Callable = lambda K, params: []
    usage: str = ""

    def model_class(self):
        return _import(self.model)

    @property
    def cli_options(self):
        """ssvm-train flag -> the model's parameter."""
        return flags_of(self.model_class().params)

    def estimator_class(self):
        return _import(self.estimator)


def flags_of(params, shared=("c", "e", "m", "n", "r")):
    """{ssvm-train flag: parameter name} of the descriptions that have a flag of their own (the
    common parameters' flags are the command's, not a structure's or a solver's)."""
    return {p.flag: p.name for p in params if p.flag and p.flag not in shared}


def _import(path):
    import importlib
    module, cls = path.split(":")
    return getattr(importlib.import_module(module, __package__), cls)


def _chain_blocks(K, params):
    return [("transition", K, K)] + ([("start", 1, K), ("end", 1, K)] if params.get("start_end") else [])


def _multilabel_blocks(K, params):
    edges = params.get("edges")
    return [("pairwise", len(edges), 4)] if edges is not None and len(edges) else []


STRUCTURES = {s.name: s for s in (
    StructureSpec("multiclass", ".models.multiclass:MulticlassModel", ".multiclass:MulticlassSSVM", "multiclass"),
    StructureSpec("chain", ".models.chain:ChainModel", ".chain:ChainSSVM", "sequence", ("start_end", "normalize_loss"), _chain_blocks),
    StructureSpec("multilabel", ".models.multilabel:MultiLabelModel", ".multilabel:MultiLabelSSVM", "multilabel", ("normalize_loss",), _multilabel_blocks,
                  usage="independent labels (or pairwise on a forest, -E), Hamming loss; use -B 1 for\n"
                        "\t  per-label bias terms"),
    StructureSpec("hierarchy", ".models.hierarchical:HierarchicalModel", ".hierarchical:HierarchicalSSVM", "auto",
                  usage="single-label classification into the leaves of a tree or DAG of labels\n"
                        "\t  (-H file; -M nhsvm (default), hsvm, shared or flat)"),
)}


def structure_of(model):
    """The registry entry of a fitted core model or estimator (an estimator is its core model
    with scikit-learn's validation: a subclass)."""
    for s in STRUCTURES.values():
        if isinstance(model, s.model_class()):
            return s
    raise TypeError(f"cannot save a {type(model).__name__}")


def structure_for_file_kind(kind):
    return next(s for s in STRUCTURES.values() if s.file_kind == kind)
