"""Predictions of fitted models at configurations nobody has measured yet.

A prediction far beyond the measurements carries an ``extrapolation`` warning: a parameter
more than :data:`EXTRAPOLATION_FACTOR` times its largest measured value. Scaling models are
routinely used to extrapolate, but so far out a small error in an exponent grows large, so the
warning states the distance and the width of the prediction interval there. A model without fit
uncertainty (one written by hand, or a fit that left no degree of freedom) gives a prediction
without interval: its bounds are NaN (``null`` in JSON) and a ``no-interval`` warning says why; an
interval whose variance overflows has an infinite bound (``null`` in JSON) and an
``unbounded-interval`` warning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.function import Model, ModelWarning
from perfcast.core.points import plain_value

#: A parameter beyond this many times its largest measured value makes a prediction a far
#: extrapolation.
EXTRAPOLATION_FACTOR = 4.0

NO_INTERVAL = ModelWarning(
    "no-interval",
    "no prediction interval: the model holds no fit uncertainty (it was written without one, "
    "or its fit left no degree of freedom for one)",
)

UNBOUNDED_INTERVAL = ModelWarning(
    "unbounded-interval",
    "the prediction interval is unbounded: its variance overflowed (huge uncertainty values in "
    "the model, or a point far beyond the measurements); a missing bound means no bound",
)


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
    warnings: tuple[ModelWarning, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """Plain dictionary for JSON (``warnings``: a list of ``{"code", "message"}``)."""
        return {
            "kernel": self.kernel,
            "metric": self.metric,
            "at": {name: plain_value(value) for name, value in self.point.items()},
            "prediction": self.value,
            "lower": self.lower,
            "upper": self.upper,
            "level": self.level,
            "expression": self.expression,
            "warnings": [w.to_dict() for w in self.warnings],
        }


def predict(
    models: Sequence[Model],
    point: dict[str, float],
    level: float = 0.95,
    ranges: Mapping[str, tuple[float, float]] | None = None,
) -> list[Prediction]:
    """Predict every model at ``point``, most expensive first.

    Parameters
    ----------
    models : sequence of Model
    point : dict
        A value for every parameter of the models.
    level : float
        Probability of the prediction interval.
    ranges : mapping of str to (float, float), optional
        Smallest and largest measured value of each parameter; a prediction beyond
        :data:`EXTRAPOLATION_FACTOR` times the largest gets an ``extrapolation`` warning.

    Raises
    ------
    InputError
        When the point misses a parameter, names an unknown one, or has a value that is
        not a positive finite number.
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
            value = point[name]
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                raise InputError(
                    f"parameter '{name}' must be a number to predict, not {value!r:.40}"
                )
            if not (math.isfinite(value) and value > 0):
                raise InputError(
                    f"parameter '{name}' must be a positive finite number to predict, not {value:g}"
                )
        coordinates = np.array([[point[p] for p in model.parameters]])
        # A point far enough out overflows the model (inf): said by the unbounded-interval
        # warning below.
        value, lower, upper = (float(a[0]) for a in model.predict_interval(coordinates, level))
        warnings = extrapolation_warnings(point, ranges or {}, value, lower, upper, level)
        if model.uncertainty is None:
            lower = upper = float("nan")
            warnings = (NO_INTERVAL, *warnings)
        elif not np.isfinite([lower, upper]).all():
            warnings = (UNBOUNDED_INTERVAL, *warnings)
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
                warnings,
            )
        )
    return sorted(predictions, key=lambda p: -p.value)


def extrapolation_warnings(
    point: Mapping[str, float],
    ranges: Mapping[str, tuple[float, float]],
    value: float,
    lower: float,
    upper: float,
    level: float,
) -> tuple[ModelWarning, ...]:
    """An ``extrapolation`` warning when a parameter of ``point`` lies more than
    :data:`EXTRAPOLATION_FACTOR` times beyond its largest measured value (none otherwise).

    Parameters
    ----------
    point : mapping of str to float
    ranges : mapping of str to (float, float)
        Smallest and largest measured value of each parameter.
    value, lower, upper : float
        The prediction and its interval at ``point``.
    level : float
        Probability of the interval.
    """
    beyond = [
        (name, point[name] / ranges[name][1], ranges[name][1])
        for name in point
        if name in ranges
        and ranges[name][1] > 0
        and point[name] > EXTRAPOLATION_FACTOR * ranges[name][1]
    ]
    if not beyond:
        return ()
    distances = ", ".join(
        f"{name}={point[name]:g} is {factor:.3g}x the largest measured {name} ({largest:g})"
        for name, factor, largest in beyond
    )
    width = f"{lower:.4g} to {upper:.4g}"
    if np.isnan([lower, upper]).any():  # its variance overflowed
        width = "a range too wide to compute"
    elif value != 0 and np.isfinite([value, lower, upper]).all():
        below, above = (value - lower) / abs(value), (upper - value) / abs(value)
        width += f" (-{_share(below)}, +{_share(above)})"
    return (
        ModelWarning(
            "extrapolation",
            f"far extrapolation: {distances}; the {level:.0%} interval there spans {width} and "
            "holds only if the model's form holds that far",
        ),
    )


def _share(fraction: float) -> str:
    """A relative distance as a percentage, as a factor once it is beyond 1000 %."""
    return f"{fraction:.2%}" if abs(fraction) <= 10 else f"{fraction:.3g}x"
