"""The location estimator of a point's repetitions, fixed or matched to the noise shape."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from perfcast.cli import main
from perfcast.io import write_experiment
from perfcast.model import fit
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.location import draw_reference, estimate, locate, relative_variance
from tests.conftest import synthetic_experiment

NAN = np.nan


def noisy(draw, kernels: int, seed: int = 0) -> np.ndarray:
    """``kernels`` x 5 points x 5 repetitions of values 10..50 with relative noise ``draw``."""
    rng = np.random.default_rng(seed)
    exact = 10.0 * np.arange(1, 6)
    return exact[None, :, None] * (1.0 + draw(rng, (kernels, 5, 5)))


def uniform(rng, size):
    return rng.uniform(-0.05, 0.05, size)


def gaussian(rng, size):
    return rng.normal(0.0, 0.03, size)


def spikes(rng, size):
    """Small Gaussian jitter; one repetition in ten delayed by an exponential amount."""
    return rng.normal(0.0, 0.01, size) + (rng.random(size) < 0.1) * rng.exponential(0.2, size)


def test_estimators_on_padded_repetitions():
    values = np.array([[[1.0, 2.0, 9.0, NAN], [4.0, 1.0, 3.0, 2.0], [5.0, NAN, NAN, NAN]]])
    counts = np.array([[3, 4, 1]])
    assert estimate(values, counts, "mean") == pytest.approx(np.array([[4.0, 2.5, 5.0]]))
    assert estimate(values, counts, "midrange") == pytest.approx(np.array([[5.0, 2.5, 5.0]]))
    assert estimate(values, counts, "median") == pytest.approx(np.array([[2.0, 2.5, 5.0]]))
    assert estimate(values, counts, "trimmed") == pytest.approx(np.array([[2.0, 2.5, 5.0]]))


@pytest.mark.parametrize(
    ("draw", "expected", "reference"),
    [(uniform, "midrange", None), (gaussian, "mean", 2.0), (spikes, "median", 0.5)],
)
def test_adaptive_choice_follows_the_noise_shape(draw, expected, reference):
    location = locate(noisy(draw, kernels=100))
    assert location.estimator == expected
    assert location.shape.reference == reference
    assert location.shape.kernels == 100


def test_too_little_evidence_keeps_the_mean():
    for kernels in (1, 9):
        few = locate(noisy(uniform, kernels=kernels))
        assert few.estimator == "mean"
        assert np.isnan(few.shape.kurtosis)
    exact = locate(np.full((10, 5, 5), 3.0))
    assert exact.estimator == "mean"
    assert exact.values == pytest.approx(np.full((10, 5), 3.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one repetition per point: nothing to pool, no warning
        single = locate(np.arange(1.0, 51.0).reshape(10, 5, 1))
    assert single.estimator == "mean"
    assert single.variance_factors == pytest.approx(np.ones((10, 5)))


def test_deterministic_kernels_say_nothing_about_the_noise_shape():
    # Counts that agree to floating-point rounding beside twenty noisy kernels: only the noisy
    # ones are pooled, so the shape is the same as theirs alone.
    counts = noisy(lambda rng, size: rng.integers(-1, 2, size) * 2.2e-16, kernels=30, seed=1)
    timings = noisy(uniform, kernels=20)
    alone = locate(timings).shape
    both = locate(np.concatenate([timings, counts])).shape
    assert both.kernels == alone.kernels == 20
    assert both.kurtosis == alone.kurtosis
    assert both.reference is alone.reference is None


def test_variance_factors_match_theory():
    # Mean of n: 1/n exactly. Midrange of n uniforms: 2/((n+1)(n+2)) over a variance of 1/3.
    assert relative_variance(None, 5)["mean"] == 1.0 / 5
    assert relative_variance(None, 5)["midrange"] == pytest.approx(6.0 / 42.0, rel=0.03)
    # Median of Gaussians: about pi/2 times the mean's variance for moderate n.
    assert relative_variance(2.0, 9)["median"] == pytest.approx(1.47 / 9, rel=0.05)
    location = locate(noisy(uniform, kernels=50))
    assert location.variance_factors == pytest.approx(np.full((50, 5), 6.0 / 42.0), rel=0.03)


def test_unknown_estimator_is_rejected():
    with pytest.raises(ValueError, match="unknown location estimator 'mode'"):
        locate(noisy(uniform, kernels=2), "mode")


def test_fit_data_uses_the_estimate_and_weights_it():
    experiment = synthetic_experiment(
        {f"k{i}": (lambda p, i=i: 1.0 + i * p) for i in range(1, 41)},
        {"p": [2, 4, 8, 16, 32]},
        noise=0.05,
        seed=3,
    )
    (series,) = experiment.series()
    data = FitData.from_series(series)
    assert data.location.estimator == "midrange"
    low, high = np.nanmin(series.values, axis=2), np.nanmax(series.values, axis=2)
    assert data.means == pytest.approx((low + high) / 2)
    assert data.weights == pytest.approx(1.0 / (data.location.variance_factors * data.means**2))
    mean_data = FitData.from_series(series, location="mean")
    assert mean_data.means == pytest.approx(series.means)
    assert mean_data.weights == pytest.approx(5.0 / series.means**2)


def test_adaptive_estimate_recovers_terms_more_often_under_bounded_noise():
    # Kernels c + 0.2 p^e with neighbouring exponents e: under uniform noise the midrange tells
    # them apart more often than the mean does.
    exponents = [0.5, 2 / 3, 0.75, 1.0, 1.25, 4 / 3]
    truths = {
        f"k{i}": (lambda p, e=exponents[i % 6], c=1.0 + (i % 5): c + 0.2 * p**e) for i in range(60)
    }
    experiments = [
        synthetic_experiment(truths, {"p": [4, 8, 16, 32, 64]}, noise=0.05, seed=seed)
        for seed in range(3)
    ]

    def right(location: str) -> int:
        return sum(
            float(m.lead_order("p")[0]) == pytest.approx(exponents[int(m.kernel[1:]) % 6])
            for experiment in experiments
            for m in fit(experiment, location=location)
        )

    assert right("adaptive") >= right("mean") + 8  # 111 vs 93 of 180


def test_command_line_says_when_points_are_not_means(tmp_path, capsys):
    experiment = synthetic_experiment(
        {f"k{i}": (lambda p, i=i: 1.0 + i * p) for i in range(1, 41)},
        {"p": [2, 4, 8, 16, 32]},
        noise=0.05,
        seed=3,
    )
    path = tmp_path / "exp.csv"
    write_experiment(experiment, path)
    assert main(["model", str(path)]) == 0
    assert capsys.readouterr().err == (
        "point values: the midrange (middle of smallest and largest) of each point's "
        "repetitions; the noise of 40 kernels looks uniform (--location mean for means)\n"
    )
    assert main(["model", str(path), "--location", "mean"]) == 0
    assert "point values" not in capsys.readouterr().err


def test_command_line_option(tmp_path, capsys):
    experiment = synthetic_experiment(
        {"a": lambda p: 2.0 + p, "b": lambda p: 1.0 + p**2}, {"p": [1, 2, 4, 8, 16]}, 0.02, seed=1
    )
    path = tmp_path / "exp.csv"
    write_experiment(experiment, path)
    assert main(["model", str(path), "--location", "median", "--format", "json"]) == 0
    assert '"kernel": "b"' in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main(["model", str(path), "--location", "mode"])
    assert exit_info.value.code == 2


@pytest.mark.parametrize("shape", [0.5, 1.0, 2.0, 8.0])
def test_reference_draws_follow_the_generalized_normal(shape):
    draws = draw_reference(shape, (200_000,), seed=5)
    reference = stats.gennorm(shape)
    assert draws.mean() == pytest.approx(0.0, abs=0.02 * reference.std())
    assert draws.var() == pytest.approx(reference.var(), rel=0.05)
    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    np.testing.assert_allclose(
        np.quantile(draws, levels), reference.ppf(levels), atol=0.02 * reference.std()
    )
    assert stats.kstest(draws[:5000], reference.cdf).pvalue > 1e-3
