"""A default fit inside Catalyst steers its centres by the slack its oracle passes saw and
measures the exact primal (an oracle pass) only where the stopping decision needs it: the objective
it reports is still the exact primal of the weights it returns, and its gap rule still holds."""
import warnings

import numpy as np
import pytest

from ssvmlinear import ConvergenceWarning, MulticlassSSVM
from ssvmlinear.solvers import catalyst, sdm

from conftest import random_multiclass

C = 100.0


def multiclass_primal(est, X, y):
    """1/2 |W|^2 + C sum_i max_k (Delta + m_k - m_yi): from the model, not from the solver."""
    W = est.coef_
    margins = X @ W.T
    true = np.searchsorted(est.classes_, y)
    K = len(est.classes_)
    loss = np.maximum(0.0, (1.0 - np.eye(K)[true]) + margins - margins[np.arange(len(y)), true][:, None])
    return 0.5 * float(np.sum(W * W)) + C * float(loss.max(axis=1).sum())


@pytest.fixture
def problem():
    X, y = random_multiclass(n=300, d=30, K=5, density=0.3, seed=4)
    assert C * X.multiply(X).sum(axis=1).mean() > catalyst.CATALYST_SCALE   # Catalyst runs
    return X, y


@pytest.fixture
def exact_measurements(monkeypatch):
    calls = []
    measure = sdm.SDMRun.slack_sum

    def counted(run):
        calls.append(1)
        return measure(run)

    monkeypatch.setattr(sdm.SDMRun, "slack_sum", counted)
    return calls


def test_a_default_fit_measures_few_centres_and_reports_the_exact_primal(problem, exact_measurements):
    X, y = problem
    est = MulticlassSSVM(C=C, fit_intercept=False).fit(X, y)
    assert est.converged_
    assert est.objective_ == pytest.approx(multiclass_primal(est, X, y), rel=1e-9)
    assert 0.0 <= est.objective_ - est.dual_objective_ <= 0.01 * est.objective_
    centres = int(np.sum(np.isfinite(est.dual_curve_)))
    assert 1 <= len(exact_measurements) < centres / 2


def test_a_fit_stopped_by_max_iter_reports_the_exact_primal(problem, exact_measurements):
    """The centre that reaches max_iter measures its primal, whatever its predicted gap."""
    X, y = problem
    with pytest.warns(ConvergenceWarning):
        est = MulticlassSSVM(C=C, fit_intercept=False, max_iter=20).fit(X, y)
    assert not est.converged_
    assert est.objective_ == pytest.approx(multiclass_primal(est, X, y), rel=1e-9)
    assert est.dual_objective_ <= est.objective_


def test_watched_fits_measure_every_centre(problem, exact_measurements):
    """With a callback every centre measures its primal (the curve is not filled in by the loop)."""
    X, y = problem
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = MulticlassSSVM(C=C, fit_intercept=False, max_iter=40,
                             callback=lambda e: seen.append(e.current_weights_.copy())).fit(X, y)
    assert len(seen) > 1 and len(exact_measurements) >= len(seen)


@pytest.mark.parametrize("solver, loss", [("sdm", "margin"), ("sdcd", "lse")])
def test_v_from_the_centre_weights_matches_the_sum_over_the_alphas(problem, monkeypatch, solver, loss):
    """Runs whose w tracks v get v from w_k without a pass over the working sets: it must be the
    v that summing alpha dphi gives."""
    X, y = problem
    step = catalyst.CatalystRun.step
    seen = []

    def checked(run, limit):
        out = step(run, limit)
        v = run.kernel.coef.copy()
        run.kernel.recompute_w()
        seen.append(np.max(np.abs(v - run.kernel.coef)) / max(np.max(np.abs(v)), 1e-300))
        return out

    monkeypatch.setattr(catalyst.CatalystRun, "step", checked)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        MulticlassSSVM(C=C, fit_intercept=False, solver=solver, loss=loss, max_iter=60).fit(X, y)
    assert len(seen) > catalyst.RECOMPUTE_EVERY
    assert max(seen) < 1e-10


@pytest.mark.parametrize("solver, loss", [("sdm", "margin"), ("sdcd", "lse")])
def test_a_warm_start_at_the_same_C_stops_at_its_start(problem, solver, loss):
    """A Catalyst fit warm-started from a converged fit of the same problem measures the start
    (the previous model as the first centre, the previous alphas for the dual) and stops there: no
    centre may pull a converged model away before the gap is checked."""
    X, y = problem
    est = MulticlassSSVM(C=C, fit_intercept=False, solver=solver, loss=loss, warm_start=True).fit(X, y)
    assert est.converged_
    coef, objective = est.coef_.copy(), est.objective_
    est.fit(X, y)
    assert est.converged_ and est.n_iter_ == 1
    np.testing.assert_array_equal(est.coef_, coef)
    assert est.objective_ == pytest.approx(objective, rel=1e-12)


def test_a_warm_start_from_a_smaller_C_is_a_fit_of_the_new_problem(problem):
    """Along a path of C: the warm fit's objective is the exact primal of its weights, its dual
    a lower bound of the new optimum (a tight cold fit's), their gap within the default rule,
    and it takes fewer passes than the cold fit."""
    X, y = problem
    warm = MulticlassSSVM(C=C / 2, fit_intercept=False, warm_start=True).fit(X, y)   # a -C grid step
    warm.set_params(C=C).fit(X, y)
    cold = MulticlassSSVM(C=C, fit_intercept=False).fit(X, y)
    best = MulticlassSSVM(C=C, fit_intercept=False, tol=1e-8, max_iter=100000).fit(X, y)
    assert warm.converged_
    assert warm.objective_ == pytest.approx(multiclass_primal(warm, X, y), rel=1e-9)
    assert warm.dual_objective_ <= best.objective_ * (1 + 1e-9)
    assert best.dual_objective_ <= warm.objective_ * (1 + 1e-9)
    assert warm.objective_ - warm.dual_objective_ <= 0.01 * warm.objective_
    assert warm.n_iter_ < cold.n_iter_
