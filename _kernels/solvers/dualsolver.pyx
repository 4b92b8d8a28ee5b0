# cython: language_level=3
"""Base of the dual solvers (see dualsolver.pxd): initial point, dual objective, state I/O."""
import numpy as np

from ssvmlinear._kernels.structure cimport Structure
from ssvmlinear._kernels.labels cimport WorkingSets


cdef class DualSolver:
    """Starts at alpha_i(y_i) = C_i, V_i = {y_i} (w = 0), as both SDM and Alg. 2 do."""

    def __init__(self, Structure structure, Cs, unsigned long long seed=0, bint with_aux=False):
        cdef Py_ssize_t i
        self.st = structure
        structure.prepare_gram()
        self.n = structure.n_examples
        self.Cs = np.ascontiguousarray(Cs, dtype=np.float64)
        if self.Cs.shape[0] != self.n:
            raise ValueError("need one C per example")
        self.w = np.zeros(structure.n_weights, dtype=np.float64)
        self.work = np.zeros(max(structure.workspace_size(), 1), dtype=np.float64)
        self.ybuf = np.zeros(max(structure.max_label_len, 1), dtype=np.int32)
        self.order = np.arange(max(self.n, 1), dtype=np.intp)
        self.rng_state = seed
        self.n_oracle_calls = 0
        self.sigma = 1.0
        self.ws = WorkingSets(structure, with_aux)
        for i in range(self.n):
            if self.ws.add(i, structure.true_label(i), 0.0) < 0:
                raise MemoryError()
            self.ws.alpha(i)[0] = self.Cs[i]

    def dual(self):
        """The dual objective to maximise: sum_i sum_y alpha_i(y) Delta(y, y_i) - 1/2 ||w||^2."""
        return self.ws.linear_term() - 0.5 * float(np.dot(self.w, self.w))

    def working_set_sizes(self):
        return self.ws.sizes()

    @property
    def coef(self):
        """The weights: a view that keeps the solver's array alive (no copy of the weight dimension)."""
        return np.asarray(self.w)

    def get_state(self):
        """Dual state as plain arrays (warm starts; estimators keep it picklable)."""
        state = self.ws.get_state()
        state.update(Cs=np.asarray(self.Cs).copy(), rng_state=int(self.rng_state))
        return state

    def set_state(self, state, Cs=None):
        """Restore a dual state, alphas scaled by C_new / C_old (which keeps it feasible)."""
        old = np.asarray(state["Cs"], dtype=np.float64)
        if old.shape[0] != self.n:
            raise ValueError("warm start: the number of examples changed")
        if Cs is not None:
            self.Cs = np.ascontiguousarray(Cs, dtype=np.float64)
        self.ws.set_state(state, np.ascontiguousarray(self.warm_scale(old)))
        self.rng_state = state.get("rng_state", self.rng_state)
        self.recompute_w()

    def warm_scale(self, old):
        """Per example, the factor on the restored alphas for C_old -> C_i: C_i / C_old."""
        return np.divide(np.asarray(self.Cs), old, out=np.zeros(self.n), where=old > 0)

    def release(self):
        """Free the per-example state at the end of a fit: afterwards only coef is valid (it is a
        view of the solver's weights, which the fitted estimator keeps)."""
        self.ws = None
        self.order = None
        self.Cs = None

    def recompute_w(self):
        self.w[:] = 0.0
        self.ws.add_to_w(self.w)
