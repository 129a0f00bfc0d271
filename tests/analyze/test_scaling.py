import numpy as np
import pytest

from perfcast.analyze.scaling import (
    growth_shape,
    infer_mode,
    measured_scalings,
    modeled_scaling,
    paper_divergence,
    scaling_from_times,
    strong_scaling_errors,
    weak_scaling_errors,
)
from perfcast.core.errors import InputError
from tests.analyze.synthetic import experiment, model

P = [1, 2, 4, 8]


def test_strong_scaling_errors_match_hand_computation():
    errors = strong_scaling_errors(P, [8.0, 4.4, 2.6, 1.8])
    table = {(e.n1, e.n2): e.error for e in errors}
    # alpha = n2/n1 - M(n1)/M(n2), worked out as fractions by hand
    expected = {
        (1, 2): 2 / 11,
        (1, 4): 12 / 13,
        (1, 8): 32 / 9,
        (2, 4): 4 / 13,
        (2, 8): 14 / 9,
        (4, 8): 5 / 9,
    }
    assert table.keys() == expected.keys()
    for pair, value in expected.items():
        assert table[pair] == pytest.approx(value, rel=1e-12)


def test_weak_scaling_errors_match_hand_computation():
    errors = weak_scaling_errors(P, [1.0, 1.1, 1.25, 1.5])
    table = {(e.n1, e.n2): e.error for e in errors}
    expected = {
        (1, 2): 1 / 11,
        (1, 4): 0.2,
        (1, 8): 1 / 3,
        (2, 4): 0.12,
        (2, 8): 4 / 15,
        (4, 8): 1 / 6,
    }
    for pair, value in expected.items():
        assert table[pair] == pytest.approx(value, rel=1e-12)


def test_ideal_scaling_has_zero_error_and_no_divergence():
    scaling = scaling_from_times(P, [8.0, 4.0, 2.0, 1.0], "strong", "test")
    assert all(e.error == pytest.approx(0.0) for e in scaling.errors)
    assert scaling.paper_divergence is None  # correlation of a constant is undefined
    assert scaling.efficiency_loss == pytest.approx(0.0)


def test_paper_divergence_and_efficiency_loss():
    scaling = scaling_from_times(P, [8.0, 4.4, 2.6, 1.8], "strong", "test")
    n2, err = np.array([2, 4, 8]), np.array([2 / 11, 12 / 13, 32 / 9])
    assert scaling.paper_divergence == pytest.approx(-np.corrcoef(n2, err)[0, 1])
    # efficiency at 8 = (8/1.8)/8, loss = 1 - that = 4/9
    assert scaling.efficiency_loss == pytest.approx(4 / 9)
    assert paper_divergence(scaling.errors, n1=2) == pytest.approx(-1.0)  # two points


def test_growth_shape_tells_linear_from_exponential():
    x = np.array([2, 4, 8, 16, 32, 48, 64], dtype=float)
    linear = growth_shape(x, 0.3 + 0.1 * x)
    assert linear.kind == "linear"
    assert linear.linear_slope == pytest.approx(0.1)
    assert linear.linear_r2 == pytest.approx(1.0)
    exponential = growth_shape(x, 0.02 * np.exp(x / 12))
    assert exponential.kind == "exponential"
    assert exponential.exponential_r2 > 0.999 > exponential.linear_r2
    assert exponential.exponential_rate == pytest.approx(64 / 12, rel=1e-3)
    noisy = growth_shape(x, 0.3 + 0.1 * x + np.random.default_rng(1).normal(0, 0.05, len(x)))
    assert noisy.kind == "linear"
    assert growth_shape(x[:2], x[:2]).kind == "undetermined"
    assert exponential.f_p_value < 1e-6 and linear.f_p_value == pytest.approx(1.0)


def test_noisy_linear_errors_are_rarely_called_exponential():
    x = np.array([2, 4, 8, 16, 32, 64], dtype=float)
    rng = np.random.default_rng(5)
    calls = [growth_shape(x, 0.1 * x + rng.normal(0, 0.5, len(x))).kind for _ in range(200)]
    # the F-test at 5 %: about 10 false calls expected; 20 is beyond 3 standard deviations
    assert calls.count("exponential") <= 20


def test_measured_scaling_from_an_experiment():
    exp = experiment({"a": lambda p: 6.0 / p, "b": lambda p: 2.0 + 0 * p}, {"p": P}, repetitions=3)
    (scaling,) = measured_scalings(exp, "p", "strong", "time")
    totals = 6.0 / np.array(P) + 2.0
    assert scaling.times == pytest.approx(totals)
    first = {e.n2: e.error for e in scaling.errors if e.n1 == 1}
    assert first[8] == pytest.approx(8 - totals[0] / totals[3])


def test_weak_scaling_with_a_size_parameter_pairs_proportional_points():
    exp = experiment(
        {"a": lambda p, n: n / p * (1 + 0.1 * np.log2(p))},
        {"p": [1, 2, 4], "n": [100, 200, 400]},
        repetitions=2,
    )
    scalings = measured_scalings(exp, "p", "weak", "time", size="n")
    (scaling,) = scalings
    assert scaling.scales.tolist() == [1, 2, 4]
    assert scaling.fixed == {"n/p": 100.0}
    assert scaling.times == pytest.approx([100, 110, 120])


def test_infer_mode():
    strong = experiment({"a": lambda p: 10.0 / p}, {"p": P}, repetitions=1)
    weak = experiment({"a": lambda p: 1.0 + 0.01 * p}, {"p": P}, repetitions=1)
    declared = experiment({"a": lambda p: 10.0 / p}, {"p": P}, 1, metadata={"scaling": "weak"})
    assert infer_mode(strong, "p", "time")[0] == "strong"
    assert infer_mode(weak, "p", "time")[0] == "weak"
    assert infer_mode(declared, "p", "time") == (
        "weak",
        "declared in the experiment's metadata (scaling=weak)",
    )


def test_modeled_scaling_extends_to_the_target():
    models = [model("a", ["p"], 0.0, (8.0, {"p": (-1, 0)})), model("b", ["p"], 1.0)]
    scaling = modeled_scaling(models, "p", "strong", {"p": 64.0}, P)
    assert scaling.scales.tolist() == [1, 2, 4, 8, 16, 32, 64]
    assert scaling.times[-1] == pytest.approx(8 / 64 + 1)
    assert scaling.origin == "models"


def test_bad_mode_and_duplicate_scales_are_input_errors():
    with pytest.raises(InputError, match="strong"):
        scaling_from_times(P, [1, 1, 1, 1], "medium", "test")
    with pytest.raises(InputError, match="once"):
        strong_scaling_errors([1, 1], [1, 2])
