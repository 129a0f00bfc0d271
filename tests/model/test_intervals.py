"""Prediction intervals: model-selection inflation and the leave-one-out floor."""

from __future__ import annotations

import dataclasses

import numpy as np

import perfcast
from perfcast.core.function import Factor, Model, Term, Uncertainty
from perfcast.model.fitting.quality import SELECTION_INFLATION
from tests.conftest import synthetic_experiment


def linear_model(uncertainty: Uncertainty) -> Model:
    return Model("k", "time", ("p",), 1.0, (Term(0.5, (Factor("p", 1),)),), None, uncertainty)


def half_width(model: Model, p: float) -> float:
    value, lower, upper = model.predict_interval({"p": [p]})
    return float(np.log(upper[0] / value[0]))  # the relative interval is symmetric in log space


def test_fitted_models_carry_the_inflation_and_a_leave_one_out_error() -> None:
    experiment = synthetic_experiment(
        {"k": lambda p: 1 + 0.1 * p}, {"p": [4, 8, 16, 32, 64]}, noise=0.05
    )
    (model,) = perfcast.fit(experiment).models
    assert model.uncertainty is not None
    assert model.uncertainty.selection_inflation == SELECTION_INFLATION == 16.0
    assert 0 < model.uncertainty.loo_variance < 0.05**2


def test_inflation_widens_the_curve_part_only_more_with_distance() -> None:
    covariance = np.array([[0.0, 0.0], [0.0, 1e-4]])  # the slope alone is uncertain
    plain = linear_model(Uncertainty(covariance, 1e-4, 10))
    inflated = linear_model(dataclasses.replace(plain.uncertainty, selection_inflation=16.0))
    near = half_width(inflated, 4.0) / half_width(plain, 4.0)
    far = half_width(inflated, 256.0) / half_width(plain, 256.0)
    assert 1.0 < near < far < 4.0


def test_leave_one_out_error_is_a_floor_of_the_interval() -> None:
    covariance = np.zeros((2, 2))
    plain = linear_model(Uncertainty(covariance, 1e-6, 10))
    floored = linear_model(dataclasses.replace(plain.uncertainty, loo_variance=0.1**2))
    assert half_width(floored, 8.0) > 50 * half_width(plain, 8.0)
    wide_noise = linear_model(Uncertainty(covariance, 0.2**2, 10, loo_variance=0.1**2))
    assert half_width(wide_noise, 8.0) == half_width(
        linear_model(Uncertainty(covariance, 0.2**2, 10)), 8.0
    )
