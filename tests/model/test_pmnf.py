from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from perfcast.core.errors import InputError
from perfcast.model import fit
from perfcast.model.fitting.blocks import EXTRAP_BUILDING_BLOCKS
from tests.conftest import synthetic_experiment

P_VALUES = [4, 8, 16, 32, 64]
N_VALUES = [10, 20, 30, 40, 50]


def block(exponent, log_exponent):
    return lambda x: x ** float(exponent) * np.log2(x) ** log_exponent


def test_every_building_block_recovered_exactly_without_noise():
    functions = {}
    for i, (e, j) in enumerate(EXTRAP_BUILDING_BLOCKS):
        f = block(e, j)
        scale = f(np.array(64.0))
        functions[f"b{i}"] = lambda x, f=f, scale=scale: 2.0 + 3.0 * f(x) / scale
    models = fit(synthetic_experiment(functions, {"p": P_VALUES}, noise=0.0))
    for model, (e, j) in zip(models, EXTRAP_BUILDING_BLOCKS, strict=True):
        assert len(model.terms) == 1, model.expression()
        assert model.lead_order("p") == (e, j)
        assert model.constant == pytest.approx(2.0, rel=1e-6)


def test_noisy_one_parameter_functions_recovered():
    functions = {
        "quadratic": lambda n: 3.0 + 0.01 * n**2,
        "nlogn": lambda n: 1.0 + 0.5 * n * np.log2(n),
        "sqrt": lambda n: 0.2 + 4.0 * n**0.5,
    }
    experiment = synthetic_experiment(functions, {"n": [16, 32, 64, 128, 256]}, noise=0.02, seed=1)
    models = {m.kernel: m for m in fit(experiment)}
    assert models["quadratic"].lead_order("n") == (2, 0)
    assert models["nlogn"].lead_order("n") == (1, 1)
    assert models["sqrt"].lead_order("n") == (Fraction(1, 2), 0)
    prediction = models["quadratic"].evaluate({"n": [1024.0]})[0]
    assert prediction == pytest.approx(3.0 + 0.01 * 1024**2, rel=0.05)


def test_flat_noisy_kernel_gets_no_terms():
    experiment = synthetic_experiment({"init": lambda p: 5.0 + 0 * p}, {"p": P_VALUES}, noise=0.05)
    (model,) = fit(experiment)
    assert model.terms == ()
    assert model.constant == pytest.approx(5.0, rel=0.03)


def test_strong_scaling_gets_negative_exponent_and_growing_term():
    experiment = synthetic_experiment(
        {"solve": lambda p: 1.0 + 100.0 / p + 2.0 * np.log2(p)},
        {"p": [2, 4, 8, 16, 32, 64, 128]},
        noise=0.005,
        seed=2,
    )
    (model,) = fit(experiment)
    orders = sorted(f.order for t in model.terms for f in t.factors)
    assert orders == [(-1, 0), (0, 1)], model.expression()
    assert model.lead_order("p") == (0, 1)


def test_hidden_decreasing_term_found_when_growing_terms_lack_fit():
    # 1 + 2/p + 3*log2(p) grows at every measured p, so no decreasing trend shows; the growing
    # blocks alone leave a lack of fit, and the second search with 1/p recovers it exactly.
    truth = {"allreduce": lambda p: 1.0 + 2.0 / p + 3.0 * np.log2(p)}
    experiment = synthetic_experiment(truth, {"p": P_VALUES}, noise=0.0)
    assert np.all(np.diff(experiment.series()[0].means[0]) > 0)
    (model,) = fit(experiment)
    orders = sorted(f.order for t in model.terms for f in t.factors)
    assert orders == [(-1, 0), (0, 1)], model.expression()
    assert model.constant == pytest.approx(1.0, rel=1e-6)
    (growing_only,) = fit(experiment, negative_exponents=False)
    assert growing_only.quality.rss > 1e6 * model.quality.rss
    # One exact repetition (deterministic counts): still found.
    single = synthetic_experiment(truth, {"p": P_VALUES}, noise=0.0, repetitions=1)
    (model,) = fit(single)
    assert sorted(f.order for t in model.terms for f in t.factors) == [(-1, 0), (0, 1)]


def test_noisy_single_repetitions_keep_the_growing_blocks():
    # Without repetitions a lack of fit cannot be told from noise: the decreasing blocks would
    # only fit the noise, so the growing model stays.
    truth = {f"k{i}": (lambda p, i=i: 1.0 + (i + 1) * p**0.5) for i in range(20)}
    experiment = synthetic_experiment(truth, {"p": P_VALUES}, noise=0.05, repetitions=1, seed=4)
    models = fit(experiment)
    assert models == fit(experiment, negative_exponents=False)


def test_negative_exponents_can_be_switched_off():
    experiment = synthetic_experiment(
        {"solve": lambda p: 1.0 + 100.0 / p}, {"p": P_VALUES}, noise=0.0
    )
    (model,) = fit(experiment, negative_exponents=False)
    assert all(f.exponent >= 0 for t in model.terms for f in t.factors)
    (model,) = fit(experiment, negative_exponents=True)
    assert model.lead_order("p") == (-1, 0)


def test_two_parameter_product_and_sum():
    functions = {
        "product": lambda p, n: 5.0 + 0.002 * n**2 * np.log2(p),
        "sum": lambda p, n: 1.0 + 0.3 * p + 0.01 * n**2,
    }
    experiment = synthetic_experiment(functions, {"p": P_VALUES, "n": N_VALUES}, noise=0.0)
    models = {m.kernel: m for m in fit(experiment)}
    product = models["product"]
    assert len(product.terms) == 1
    assert {f.order for f in product.terms[0].factors} == {(2, 0), (0, 1)}
    assert product.evaluate({"p": [4096.0], "n": [1e4]})[0] == pytest.approx(
        5.0 + 0.002 * 1e8 * 12, rel=1e-6
    )
    summed = models["sum"]
    assert len(summed.terms) == 2
    assert summed.lead_order("p") == (1, 0) and summed.lead_order("n") == (2, 0)


def test_two_parameter_noisy_lead_orders():
    experiment = synthetic_experiment(
        {"k": lambda p, n: 2.0 + 0.01 * n**2 * p},
        {"p": P_VALUES, "n": N_VALUES},
        noise=0.05,
        seed=3,
    )
    (model,) = fit(experiment)
    assert model.lead_order("p") == (1, 0)
    assert model.lead_order("n") == (2, 0)


def test_three_parameters():
    experiment = synthetic_experiment(
        {"k": lambda p, n, q: 1.0 + 0.001 * p * n * q**2},
        {"p": P_VALUES, "n": N_VALUES, "q": [2, 4, 6, 8, 10]},
        noise=0.0,
    )
    (model,) = fit(experiment)
    assert [model.lead_order(x) for x in ("p", "n", "q")] == [(1, 0), (1, 0), (2, 0)]


def term_set(model):
    """The model's terms as sets of (parameter, exponent, log exponent)."""
    return {
        frozenset((f.parameter, f.exponent, f.log_exponent) for f in t.factors) for t in model.terms
    }


# Work divided over the ranks plus a cost growing with them: the marginal over n falls, then
# rises with p, so no single block of p ranks high on it alone.
STRONG_SCALING = {
    "n/p + p": (
        lambda p, n: 0.1 + 3.0 * n / p + 0.5 * p,
        {frozenset({("n", 1, 0), ("p", -1, 0)}), frozenset({("p", 1, 0)})},
    ),
    "n^2/p + p*log2(p)": (
        lambda p, n: 1.0 + 0.01 * n**2 / p + 0.05 * p * np.log2(p),
        {frozenset({("n", 2, 0), ("p", -1, 0)}), frozenset({("p", 1, 1)})},
    ),
    "n/p + log2(p)": (
        lambda p, n: 0.5 + 2.0 * n / p + 0.3 * np.log2(p),
        {frozenset({("n", 1, 0), ("p", -1, 0)}), frozenset({("p", 0, 1)})},
    ),
}


@pytest.mark.parametrize("noise", [0.0, 0.01])
def test_two_parameter_strong_scaling_with_a_growing_cost(noise):
    functions = {name: f for name, (f, _) in STRONG_SCALING.items()}
    experiment = synthetic_experiment(functions, {"p": P_VALUES, "n": N_VALUES}, noise, seed=3)
    for model in fit(experiment):
        assert term_set(model) == STRONG_SCALING[model.kernel][1], model.expression()


def test_decay_hidden_under_a_growing_marginal_is_found():
    # The marginal in p, 0.5 + 60*p^(-1/3) + 20*log2(p), grows at every measured p: only the
    # retry through the decreasing blocks finds the pair.
    experiment = synthetic_experiment(
        {"k": lambda p, n: 0.5 + 2.0 * n * p ** (-1 / 3) + 20.0 * np.log2(p)},
        {"p": P_VALUES, "n": N_VALUES},
    )
    (model,) = fit(experiment)
    assert term_set(model) == {
        frozenset({("n", 1, 0), ("p", Fraction(-1, 3), 0)}),
        frozenset({("p", 0, 1)}),
    }


def test_three_parameter_strong_scaling_with_a_growing_cost():
    experiment = synthetic_experiment(
        {"k": lambda p, n, q: 0.1 + 0.3 * n * q / p + 0.5 * p},
        {"p": P_VALUES, "n": N_VALUES, "q": [2, 4, 6, 8, 10]},
        noise=0.01,
        seed=3,
    )
    (model,) = fit(experiment)
    assert term_set(model) == {
        frozenset({("n", 1, 0), ("q", 1, 0), ("p", -1, 0)}),
        frozenset({("p", 1, 0)}),
    }


def test_quality_figures_match_direct_computation():
    experiment = synthetic_experiment(
        {"k": lambda n: 2.0 + 0.5 * n}, {"n": [10, 20, 30, 40, 50, 60]}, noise=0.05, seed=4
    )
    (model,) = fit(experiment)
    table = experiment.to_frame()
    means = table.groupby("n")["value"].mean()
    fitted = model.evaluate({"n": means.index.to_numpy()})
    residual = means.to_numpy() - fitted
    assert model.quality.rss == pytest.approx(np.sum(residual**2))
    smape = np.mean(200 * np.abs(residual) / (np.abs(fitted) + np.abs(means.to_numpy())))
    assert model.quality.smape == pytest.approx(smape)
    # Lack-of-fit F-test on relative deviations, 6 points, 2 coefficients, 5 repetitions each.
    values = table.pivot_table(index="n", columns="repetition", values="value").to_numpy()
    mean = values.mean(axis=1)
    pure = np.sum(((values - mean[:, None]) / mean[:, None]) ** 2) / (6 * 4)
    lack = np.sum(5 * (residual / mean) ** 2) / (6 - 2)
    assert model.quality.lof_p == pytest.approx(stats.f.sf(lack / pure, 4, 24), rel=1e-6)


def test_prediction_interval_covers_truth_at_nominal_rate():
    truth = lambda n: 1.0 + 0.02 * n**2  # noqa: E731
    functions = {f"k{i}": truth for i in range(200)}
    experiment = synthetic_experiment(functions, {"n": [8, 16, 24, 32, 40]}, noise=0.05, seed=5)
    models = fit(experiment)
    inside = 0
    rng = np.random.default_rng(6)
    for model in models:
        _, low, high = model.predict_interval({"n": [40.0]}, level=0.9)
        new = truth(40.0) * (1 + rng.uniform(-0.05, 0.05))
        inside += low[0] <= new <= high[0]
    assert 0.8 <= inside / len(models) <= 1.0


def test_non_positive_parameter_is_rejected():
    experiment = synthetic_experiment({"k": lambda p: p + 1.0}, {"p": [0, 1, 2, 3]})
    with pytest.raises(InputError, match="positive"):
        fit(experiment)


def test_too_few_points_are_rejected():
    experiment = synthetic_experiment({"k": lambda p: p + 1.0}, {"p": [2, 4]})
    with pytest.raises(InputError, match="at least 3"):
        fit(experiment)


def test_parameters_varying_together_are_rejected(testdata):
    from perfcast.io import read_experiment

    experiment = read_experiment(testdata / "extrap/text/two_parameter_4.txt")
    with pytest.raises(InputError, match="cannot be told apart"):
        fit(experiment)


def test_five_parameters_stay_tractable_and_exact():
    grid = {name: [2, 4, 8, 16, 32] for name in "abcde"}
    experiment = synthetic_experiment(
        {"k": lambda a, b, c, d, e: 1.0 + 0.1 * a * b + 0.01 * c**2 + 0 * d + 0 * e},
        grid,
        noise=0.01,
        repetitions=2,
    )
    (model,) = fit(experiment)
    assert [model.lead_order(x) for x in "abcde"] == [(1, 0), (1, 0), (2, 0), (0, 0), (0, 0)]
