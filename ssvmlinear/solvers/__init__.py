"""The solvers: each a class holding its own parameters (solver.Solver) whose runs do one step at
a time, and the one loop that runs any of them (loop.solve). Catalyst (catalyst.py) and CoCoA+
(cocoa.py) wrap the dual solvers that offer their hooks.

Estimators take a solver by name (`solver="sdm"`) or as an object (`solver=SDM(shards=2)`).
"""
from .bcfw import BCFW
from .cutting_plane import CuttingPlane
from .gdmm import GDMM
from .loop import FitResult, GAP_TOL, log_progress, solve
from .pegasos import Pegasos
from .sdcd import SDCD
from .sdm import SDM
from .solver import Solver

__all__ = ["BCFW", "CuttingPlane", "FitResult", "GAP_TOL", "GDMM", "Pegasos", "SDCD", "SDM", "Solver",
           "log_progress", "solve"]
