"""Predictions of fitted models at configurations nobody has measured yet."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.function import Model
from perfcast.core.points import plain_value


@dataclass(frozen=True)
class Prediction:
    """A model's prediction at one configuration, with its prediction interval."""

    kernel: str
    metric: str
    point: dict[str, float]
    value: float
    lower: float
    upper: float
    level: float
    expression: str

    def to_dict(self) -> dict[str, object]:
        """Plain dictionary for JSON."""
        return {
            "kernel": self.kernel,
            "metric": self.metric,
            "at": {name: plain_value(value) for name, value in self.point.items()},
            "prediction": self.value,
            "lower": self.lower,
            "upper": self.upper,
            "level": self.level,
            "expression": self.expression,
        }


def predict(
    models: Sequence[Model], point: dict[str, float], level: float = 0.95
) -> list[Prediction]:
    """Predict every model at ``point``, most expensive first.

    Parameters
    ----------
    models : sequence of Model
    point : dict
        A value for every parameter of the models.
    level : float
        Probability of the prediction interval.

    Raises
    ------
    InputError
        When the point misses a parameter, names an unknown one, or has a non-positive value.
    """
    predictions = []
    for model in models:
        missing = [p for p in model.parameters if p not in point]
        unknown = [p for p in point if p not in model.parameters]
        if missing or unknown:
            raise InputError(
                f"the models have parameters {', '.join(model.parameters)}; "
                + (f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(unknown)}")
            )
        for name in model.parameters:
            if point[name] <= 0:
                raise InputError(
                    f"parameter '{name}' must be positive to predict, not {point[name]:g}"
                )
        coordinates = np.array([[point[p] for p in model.parameters]])
        value, lower, upper = (float(a[0]) for a in model.predict_interval(coordinates, level))
        predictions.append(
            Prediction(
                model.kernel,
                model.metric,
                dict(point),
                value,
                lower,
                upper,
                level,
                model.expression(),
            )
        )
    return sorted(predictions, key=lambda p: -p.value)
