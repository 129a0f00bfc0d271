"""Prediction intervals: the leave-one-out floor and the backtested error beyond the
measurements."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from scipy import special

import perfcast
from perfcast.core.function import Backtest, Factor, Model, Term, Uncertainty
from perfcast.model import fit as search
from perfcast.model.backtest import backtest
from tests.conftest import synthetic_experiment


def linear_model(uncertainty: Uncertainty) -> Model:
    return Model("k", "time", ("p",), 1.0, (Term(0.5, (Factor("p", 1),)),), None, uncertainty)


def half_width(model: Model, p: float) -> float:
    value, lower, upper = model.predict_interval({"p": [p]})
    return float(np.log(upper[0] / value[0]))  # the relative interval is symmetric in log space


def test_fitted_models_carry_a_leave_one_out_error_and_a_backtest() -> None:
    experiment = synthetic_experiment(
        {"k": lambda p: 1 + 0.1 * p}, {"p": [4, 8, 16, 32, 64]}, noise=0.05
    )
    (model,) = perfcast.fit(experiment).models
    assert model.uncertainty is not None
    assert 0 < model.uncertainty.loo_variance < 0.05**2
    (extrapolation,) = model.uncertainty.extrapolation
    assert (extrapolation.parameter, extrapolation.largest) == ("p", 64.0)
    assert 0 <= extrapolation.rate_variance < 0.05


def test_backtest_rate_is_the_held_out_log_error_per_log_step() -> None:
    # Held out: each kernel's p=64; the refit sees p <= 32 and predicts 2 * p at p = 64,
    # where the mean of the measurements is 100: rate = log(128 / 100)^2 / log(64 / 32)^2.
    experiment = synthetic_experiment(
        {"k": lambda p: 100.0 * (p == 64) + 2.0 * p * (p < 64)}, {"p": [4, 8, 16, 32, 64]}
    )
    fitted = Model("k", "time", ("p",), 0.0, (Term(2.0, (Factor("p", 1),)),), None, None)
    uncertain = dataclasses.replace(fitted, uncertainty=Uncertainty(np.zeros((2, 2)), 0.0, 3))
    seen: list[float] = []

    def refit(training: perfcast.Experiment) -> list[Model]:
        seen.extend(np.unique(training.points()[:, 0]).tolist())
        return [fitted]

    (model,) = backtest([uncertain], experiment, "time", refit)
    assert seen == [4.0, 8.0, 16.0, 32.0]
    assert model.uncertainty is not None
    (extrapolation,) = model.uncertainty.extrapolation
    expected = np.log(128 / 100) ** 2 / np.log(2) ** 2
    assert extrapolation == Backtest("p", 64.0, pytest.approx(expected, rel=1e-12))


def test_backtested_error_widens_the_interval_beyond_the_largest_value_only() -> None:
    covariance = np.zeros((2, 2))
    plain = linear_model(Uncertainty(covariance, 1e-4, 10))
    rate = 0.01
    backtested = linear_model(
        dataclasses.replace(plain.uncertainty, extrapolation=(Backtest("p", 64.0, rate),))
    )
    for p in (8.0, 64.0):
        assert half_width(backtested, p) == half_width(plain, p)
    quantile = special.stdtrit(10, 0.975)
    for p in (128.0, 1024.0):
        expected = quantile * np.sqrt(1e-4 + rate * np.log(p / 64.0) ** 2)
        assert half_width(backtested, p) == pytest.approx(expected, rel=1e-12)
    assert half_width(backtested, 1024.0) > half_width(backtested, 128.0) > half_width(plain, 128)


def test_leave_one_out_error_is_a_floor_of_the_interval() -> None:
    covariance = np.zeros((2, 2))
    plain = linear_model(Uncertainty(covariance, 1e-6, 10))
    floored = linear_model(dataclasses.replace(plain.uncertainty, loo_variance=0.1**2))
    assert half_width(floored, 8.0) > 50 * half_width(plain, 8.0)
    wide_noise = linear_model(Uncertainty(covariance, 0.2**2, 10, loo_variance=0.1**2))
    assert half_width(wide_noise, 8.0) == half_width(
        linear_model(Uncertainty(covariance, 0.2**2, 10)), 8.0
    )


def test_a_prediction_of_zero_has_the_fitted_curves_spread_not_nan() -> None:
    covariance = np.diag([4e-4, 0.0])
    zero = Model("k", "time", ("p",), 0.0, (Term(0.0, (Factor("p", 1),)),), None, None)
    uncertain = dataclasses.replace(zero, uncertainty=Uncertainty(covariance, 1e-2, 10))
    value, lower, upper = uncertain.predict_interval({"p": [8.0]})
    spread = special.stdtrit(10, 0.975) * 0.02
    assert (value[0], lower[0], upper[0]) == (0.0, pytest.approx(-spread), pytest.approx(spread))
    flat = dataclasses.replace(uncertain, uncertainty=Uncertainty(np.zeros((2, 2)), 1e-2, 10))
    _, lower, upper = flat.predict_interval({"p": [8.0]})
    assert (lower.tolist(), upper.tolist()) == ([0.0], [0.0])


def test_backtest_in_chunks_of_kernels_covers_every_kernel(monkeypatch) -> None:
    functions = {f"k{i}": (lambda p, i=i: (i + 1) * p) for i in range(5)}
    experiment = synthetic_experiment(functions, {"p": [4, 8, 16, 32, 64]}, noise=0.01)
    chunks: list[list[str]] = []

    def refit(training: perfcast.Experiment) -> list[Model]:
        chunks.append(training.kernels)
        return search(training)

    monkeypatch.setattr(perfcast.model.backtest, "CHUNK_KERNELS", 2)
    models = backtest(search(experiment), experiment, "time", refit)
    assert chunks == [["k0", "k1"], ["k2", "k3"], ["k4"]]
    for model in models:
        assert model.uncertainty is not None
        (extrapolation,) = model.uncertainty.extrapolation
        assert extrapolation.largest == 64.0


def test_an_overflowing_point_gives_no_bound_without_numpy_warnings() -> None:
    covariance = np.diag([1e-2, 1e-4])
    cubic = Model("k", "time", ("p",), 1.0, (Term(0.5, (Factor("p", 3),)),), None, None)
    model = dataclasses.replace(cubic, uncertainty=Uncertainty(covariance, 1e-2, 10))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a NumPy RuntimeWarning would fail here
        value, lower, upper = model.predict_interval({"p": [1e200, 10.0]})
    assert value[0] == np.inf and not np.isfinite([lower[0], upper[0]]).any()
    assert np.isfinite([value[1], lower[1], upper[1]]).all() and lower[1] < value[1] < upper[1]
