"""The Extra-P side end to end (needs benchmarks/.extrap-venv; create it with
``python -m benchmarks.extrap_env``)."""

import pytest

from benchmarks import synthetic
from benchmarks.evaluation import score
from benchmarks.extrap_env import DEFAULT_VENV, EXTRAP_VERSION, installed_version
from benchmarks.tools import extrap_runner

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        installed_version(DEFAULT_VENV) != EXTRAP_VERSION,
        reason="Extra-P environment not created (python -m benchmarks.extrap_env)",
    ),
]


@pytest.mark.parametrize("n_parameters", [1, 2])
def test_extrap_recovers_noiseless_functions(n_parameters):
    rng = synthetic.function_rng(21, n_parameters)
    functions = synthetic.draw_functions(rng, n_parameters, 42 if n_parameters == 1 else 12)
    (kernel_set,) = synthetic.kernel_sets(functions, "g", [0.0], 21, n_parameters)
    run = extrap_runner()(kernel_set)
    result = score(
        kernel_set.truths, run.fits, synthetic.extrapolation_point(("p", "n")[:n_parameters])
    )
    assert result.missing == 0
    assert result.lead_order == 1.0
    assert result.structure == 1.0
    assert result.p90_error < 1e-6
    assert run.seconds > 0


def test_extrap_negative_exponents_reach_strong_scaling_terms():
    functions = synthetic.draw_strong_scaling(synthetic.function_rng(21, 4), 1)
    (kernel_set,) = synthetic.kernel_sets(functions, "strong", [0.0], 21, 4)
    default = extrap_runner()(kernel_set).fits
    negative = extrap_runner(negative_exponents=True)(kernel_set).fits
    assert set(default) == set(negative) == set(kernel_set.kernels)
    # one term per parameter: Extra-P can never hold both the decay and the growth
    assert all(len(fit.terms) <= 1 for fit in negative.values())
    exponents = [e for fit in negative.values() for term in fit.terms for (_, e, _) in term]
    assert any(e < 0 for e in exponents)
    assert all(e >= 0 for fit in default.values() for t in fit.terms for (_, e, _) in t)
