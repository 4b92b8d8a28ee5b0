"""LSE-SDCD's explicit tolerance inside Catalyst (C R^2 > 10): a tol looser than the default
never takes more passes than the default fit (the default fit's relative gap rule stops it too),
and the fit converges with the gap that rule asks for."""
import warnings

import pytest

from ssvmlinear import ChainSSVM, ConvergenceWarning
from ssvmlinear.solvers import SDCD

from test_convergence_large_c import random_chains


@pytest.mark.parametrize("C", [1.0, 10.0])
@pytest.mark.parametrize("factor", [2.0, 10.0])
def test_a_looser_explicit_tol_takes_no_more_passes_than_the_default_fit(C, factor):
    X, y, lengths = random_chains(n_seq=60, seed=1)
    default = ChainSSVM(C=C, loss="lse", solver="sdcd").fit(X, y, lengths)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = ChainSSVM(C=C, loss="lse", solver="sdcd", tol=factor * SDCD.default_tol).fit(X, y, lengths)
    assert default.converged_ and est.converged_
    assert est.n_iter_ <= default.n_iter_
    assert 0 <= est.gap_ <= 0.01 * est.objective_

