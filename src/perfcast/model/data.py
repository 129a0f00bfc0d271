"""What a modeler needs from a :class:`~perfcast.experiment.Series`: means, weights, noise."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perfcast.errors import InputError
from perfcast.experiment import Series

# Smallest relative noise variance assumed, so exact data does not make every tiny improvement
# "significant" (1e-6 relative noise).
NOISE_FLOOR = 1e-12


@dataclass
class FitData:
    """Per-kernel statistics of one series, all arrays over kernels ``K`` and points ``P``.

    The noise model is multiplicative: each repetition is ``f(x) * (1 + e)`` with ``e`` of
    constant variance, so points are weighted by ``repetitions / mean**2``, and a weighted
    residual sum of squares is in units of relative variance.

    Attributes
    ----------
    series : Series
        The data.
    means : ndarray, shape (K, P)
        Mean over repetitions.
    weights : ndarray, shape (K, P)
        ``repetitions / max(|mean|, floor)**2``.
    pure_ss : ndarray, shape (K,)
        Weighted within-point (pure error) sum of squares over all repetitions.
    pure_dof : ndarray, shape (K,)
        Its degrees of freedom, ``sum(repetitions - 1)``.
    observations : ndarray, shape (K,)
        Number of repetitions over all points.
    """

    series: Series
    means: np.ndarray
    weights: np.ndarray
    pure_ss: np.ndarray
    pure_dof: np.ndarray
    observations: np.ndarray

    @classmethod
    def from_series(cls, series: Series, source: str | None = None) -> FitData:
        """Compute the statistics; rejects non-finite values and kernels with no data."""
        values = series.values
        counts = series.repetitions
        empty = np.argwhere(counts == 0)
        if len(empty):
            kernel, point = empty[0]
            raise InputError(
                f"kernel '{series.kernels[kernel]}' has no value at point "
                f"{_point_text(series, point)}",
                source,
            )
        means = series.means
        magnitude = np.abs(means)
        floor = 1e-9 * np.maximum(magnitude.max(axis=1, keepdims=True), 1e-300)
        scale = np.maximum(magnitude, floor)
        weights = counts / scale**2
        deviations = (values - means[:, :, None]) / scale[:, :, None]
        pure_ss = np.nansum(deviations**2, axis=(1, 2))
        pure_dof = np.sum(counts - 1, axis=1)
        return cls(series, means, weights, pure_ss, pure_dof, counts.sum(axis=1))

    @property
    def noise_variance(self) -> np.ndarray:
        """Relative noise variance of one repetition from the pure error, shape (K,).

        NaN where there is no repetition to estimate it from.
        """
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.pure_dof > 0, self.pure_ss / self.pure_dof, np.nan)


def _point_text(series: Series, point: int) -> str:
    return ", ".join(
        f"{n}={v:g}" for n, v in zip(series.parameters, series.points[point], strict=True)
    )
