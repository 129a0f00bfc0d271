"""From chosen hypotheses to :class:`~perfcast.core.function.Model` objects, and the check every
modeler makes of a series' points before it searches.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import Series
from perfcast.core.function import Factor, Model, Term
from perfcast.model.fitting.candidates import SlotShapes, marginal_means
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.quality import assess
from perfcast.model.fitting.selection import Choice

MIN_VALUES_PER_PARAMETER = 3


def check_points(series: Series, source: str | None) -> None:
    """Reject data no PMNF model can be fitted to, naming the problem."""
    for j, name in enumerate(series.parameters):
        values = series.points[:, j]
        if np.any(values <= 0):
            raise InputError(
                f"parameter '{name}' has the value {values[values <= 0][0]:g}; PMNF terms "
                "(powers and log2) need positive parameter values",
                source,
            )
        distinct = len(np.unique(values))
        if distinct < MIN_VALUES_PER_PARAMETER:
            raise InputError(
                f"kernel '{series.kernels[0]}' was measured at {distinct} value(s) of '{name}'; "
                f"a model needs at least {MIN_VALUES_PER_PARAMETER} (5 recommended)",
                source,
            )
        if len(series.parameters) > 1:
            xs, _, _ = marginal_means(series.points, np.zeros((1, len(series.points))), j)
            if len(xs) < MIN_VALUES_PER_PARAMETER:
                raise InputError(
                    f"no {MIN_VALUES_PER_PARAMETER} measurements differ in '{name}' alone (the "
                    "other parameters fixed), so its effect cannot be told apart from theirs; "
                    f"measure at least {MIN_VALUES_PER_PARAMETER} values of '{name}' with the "
                    "others held constant",
                    source,
                )


def build_models(
    data: FitData,
    choice: Choice,
    pool: np.ndarray,
    shapes: Sequence[Sequence[tuple[Factor, ...]]] | SlotShapes,
) -> list[Model]:
    """Turn the chosen hypotheses into :class:`Model` objects with quality and uncertainty."""
    series = data.series
    n_kernels, n_points = data.means.shape
    width = 1 + max((len(t) for t in choice.terms), default=0)
    designs = np.zeros((n_kernels, n_points, width))
    designs[:, :, 0] = 1.0
    coefficients = np.zeros((n_kernels, width))
    coefficients[:, 0] = choice.constants
    for k, chosen in enumerate(choice.terms):
        designs[k, :, 1 : 1 + len(chosen)] = pool[k, chosen].T
        coefficients[k, 1 : 1 + len(chosen)] = choice.coefficients[k]
    sizes = np.array([1 + len(t) for t in choice.terms])
    assessment = assess(designs, coefficients, sizes, data)
    models = []
    for k, kernel in enumerate(series.kernels):
        terms = tuple(
            Term(float(c), shapes[k][t])
            for t, c in zip(choice.terms[k], choice.coefficients[k], strict=True)
        )
        models.append(
            Model(
                kernel=kernel,
                metric=series.metric,
                parameters=series.parameters,
                constant=float(choice.constants[k]),
                terms=terms,
                quality=assessment.qualities[k],
                uncertainty=assessment.uncertainties[k],
            )
        )
    return models
