"""Solvers as objects (ssvmlinear.solvers) and the one loop every solver runs in."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from ssvmlinear import ChainSSVM, MulticlassSSVM, MultiLabelSSVM
from ssvmlinear.registry import SOLVERS
from ssvmlinear.solvers import BCFW, GDMM, SDCD, SDM, CuttingPlane, Pegasos, Solver


def multiclass_data(n=120, d=10, K=3, seed=0):
    rng = np.random.RandomState(seed)
    X = sp.random(n, d, density=0.4, format="csr", random_state=rng)
    y = np.asarray(X @ rng.randn(d, K)).argmax(axis=1)
    return X, y


def chain_data(n_seq=20, d=6, K=3, seed=0):
    rng = np.random.RandomState(seed)
    lengths = rng.randint(2, 6, n_seq)
    X = sp.random(int(lengths.sum()), d, density=0.5, format="csr", random_state=rng)
    y = np.asarray(X @ rng.randn(d, K)).argmax(axis=1)
    return X, y, lengths


def test_every_registered_solver_is_a_solver_class_with_its_registry_name():
    for name, spec in SOLVERS.items():
        cls = spec.solver_class()
        assert issubclass(cls, Solver) and cls.name == name
        solver = cls()
        assert cls(**solver.get_params()).get_params() == solver.get_params()
        assert solver.distributed in (None, "cocoa", "one-slack")


def test_a_name_and_the_default_object_train_the_same_model():
    X, y = multiclass_data()
    by_name = MulticlassSSVM(C=0.5, solver="sdm").fit(X, y)
    by_object = MulticlassSSVM(C=0.5, solver=SDM()).fit(X, y)
    np.testing.assert_array_equal(by_name.coef_, by_object.coef_)
    assert by_name.objective_ == by_object.objective_


def test_estimators_show_only_structure_and_common_parameters():
    for est in (MulticlassSSVM(), ChainSSVM(), MultiLabelSSVM()):
        params = est.get_params()
        for knob in ("oracle_batch", "shards", "batch_size", "average", "projection", "search",
                     "gdmm_rho", "gdmm_eta", "fmo_subsets", "exact_violators"):
            assert knob not in params


def test_clone_and_grid_search_reach_solver_parameters():
    X, y = multiclass_data()
    est = MulticlassSSVM(solver=SDM(oracle_batch=4))
    copy = clone(est)
    assert copy.solver is not est.solver and copy.solver.oracle_batch == 4
    assert est.get_params()["solver__oracle_batch"] == 4
    est.set_params(solver__oracle_batch=8)
    assert est.solver.oracle_batch == 8
    search = GridSearchCV(MulticlassSSVM(solver=SDM()), {"solver__oracle_batch": [1, 16]}, cv=2).fit(X, y)
    assert search.best_params_["solver__oracle_batch"] in (1, 16)
    assert search.best_estimator_.solver.oracle_batch == search.best_params_["solver__oracle_batch"]


@pytest.mark.parametrize("solver, message", [
    (SDM(oracle_batch=0), "SDM: oracle_batch must be an integer >= 1; got 0"),
    (SDM(shards=1.5), "SDM: shards must be an integer >= 1; got 1.5"),
    (GDMM(rho=-1.0), "GDMM: rho must be a finite number > 0"),
    (Pegasos(search="fast"), "Pegasos: search must be one of"),
    (CuttingPlane(inactive_after=0), "CuttingPlane: inactive_after must be an integer >= 1"),
    (SDCD(exact_violators="yes"), "SDCD: exact_violators must be True or False"),
])
def test_a_bad_solver_parameter_is_one_line_naming_solver_and_parameter(solver, message):
    X, y = multiclass_data()
    loss = "lse" if isinstance(solver, SDCD) else "slack" if isinstance(solver, Pegasos) else "margin"
    with pytest.raises(ValueError, match=message):
        MulticlassSSVM(solver=solver, loss=loss).fit(X, y)


def test_set_params_refuses_an_unknown_solver_parameter():
    with pytest.raises(ValueError, match="invalid parameter .shard. for SDM"):
        SDM().set_params(shard=2)


def test_repr_shows_the_changed_parameters():
    assert repr(SDM()) == "SDM()"
    assert repr(GDMM(fmo_subsets=8)) == "GDMM(fmo_subsets=8)"
    assert "solver=SDM(shards=2)" in repr(ChainSSVM(solver=SDM(shards=2)))


CHAIN_SOLVERS = [(SDM(), "margin"), (SDCD(), "lse"), (CuttingPlane(), "margin"), (CuttingPlane(), "lse"),
                 (BCFW(), "margin"), (GDMM(), "margin"), (Pegasos(), "margin")]


@pytest.mark.parametrize("solver, loss", CHAIN_SOLVERS, ids=lambda p: repr(p))
def test_one_loop_gives_every_solver_the_same_curves_and_callback(solver, loss):
    """Curves of one entry per step (primal where measured, dual, seconds), the callback after
    every step with current_weights_ set, and a callback stop recorded as not converged."""
    X, y, lengths = chain_data()
    seen = []

    def callback(est):
        seen.append(est.current_weights_.copy())
        return len(seen) < 3

    est = ChainSSVM(C=1.0, solver=solver, loss=loss, callback=callback, max_iter=10000).fit(X, y, lengths)
    assert len(est.objective_curve_) == len(est.dual_curve_) == len(est.timestamps_) >= 3
    assert np.all(np.diff(est.timestamps_) >= 0)
    assert len(seen) == 3 and not est.converged_
    assert all(w.shape == seen[0].shape for w in seen)
    measured = np.isfinite(est.objective_curve_)
    assert measured.any()                      # a callback watches: the primal is measured
    if not isinstance(solver, Pegasos):        # (no dual)
        assert np.isfinite(est.dual_curve_).all()
        assert np.all(est.dual_curve_[measured] <= est.objective_curve_[measured] + 1e-9)


def test_parameter_descriptions_agree_with_scikit_learns_validation():
    """One description per parameter: its own check (the core models', ssvm-train's) accepts
    exactly what the scikit-learn constraints built from it accept, on values users pass."""
    from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints
    from ssvmlinear.models.base import COMMON_PARAMS
    values = [None, True, False, 0, 1, -1, 2.5, np.int64(3), np.float32(0.5), float("inf"), float("nan"), "sdm",
              "margin", "auto", SDM(), np.random.RandomState(0), np.random.default_rng(0), print]
    for param in COMMON_PARAMS:
        for value in values:
            try:
                validate_parameter_constraints({param.name: param.sklearn_constraints()}, {param.name: value},
                                               caller_name="test")
                sklearn_ok = True
            except InvalidParameterError:
                sklearn_ok = False
            if param.kind == "real" and isinstance(value, float) and not np.isfinite(value):
                assert not param.accepts(value)     # (ours refuses inf and nan: they overflow the objective)
                continue
            assert param.accepts(value) == sklearn_ok, (param.name, value)
