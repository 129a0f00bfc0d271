"""What a modeler needs from a :class:`~perfcast.core.experiment.Series`: means, weights, noise."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import Series
from perfcast.model.fitting.location import Location, locate
from perfcast.model.fitting.moderation import NO_PRIOR, NoisePrior, estimate_prior

SAFE_MAGNITUDES = (1e-100, 1e100)
"""Kernels whose largest absolute value lies in this range are fitted without rescaling."""


@dataclass
class FitData:
    """Per-kernel statistics of one series, all arrays over kernels ``K`` and points ``P``.

    The noise model is multiplicative: each repetition is ``f(x) * (1 + e)`` with ``e`` of
    constant variance. A point's value is its repetitions' location estimate (the mean, or the
    midrange, trimmed mean or median when the pooled noise shape favours it; see
    :mod:`perfcast.model.fitting.location`), weighted by ``1 / (variance_factor * value**2)``
    (for the mean ``repetitions / mean**2``), so a weighted residual sum of squares is in units of
    the relative noise variance of one repetition.

    Attributes
    ----------
    series : Series
        The data.
    means : ndarray, shape (K, P)
        Location estimate of every point (the mean unless ``location`` says otherwise).
    weights : ndarray, shape (K, P)
        ``1 / (variance_factor * max(|means|, floor)**2)``.
    pure_ss : ndarray, shape (K,)
        Weighted within-point (pure error) sum of squares over all repetitions.
    pure_dof : ndarray, shape (K,)
        Its degrees of freedom, ``sum(repetitions - 1)``.
    observations : ndarray, shape (K,)
        Number of repetitions over all points.
    location : Location or None
        How ``means`` were estimated, for the whole series (None for derived data such as
        marginal means).
    prior : NoisePrior
        The series' common noise level, towards which :attr:`noise_ss` and :attr:`noise_dof`
        moderate each kernel's pure error (:mod:`perfcast.model.fitting.moderation`).
    exponents : ndarray of int, shape (K,)
        Each kernel's values in :attr:`series` are the measured ones times ``2**-exponent``
        (see :func:`scale_exponents`); models multiply their coefficients back.
    """

    series: Series
    means: np.ndarray
    weights: np.ndarray
    pure_ss: np.ndarray
    pure_dof: np.ndarray
    observations: np.ndarray
    location: Location | None = None
    prior: NoisePrior = NO_PRIOR
    exponents: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=int))

    @classmethod
    def from_series(
        cls, series: Series, source: str | None = None, location: str = "adaptive"
    ) -> FitData:
        """Compute the statistics; rejects non-finite values and kernels with no data.

        Parameters
        ----------
        series : Series
        source : str, optional
            File the series came from, for error messages.
        location : str
            Location estimator of the points (:data:`perfcast.model.fitting.location.LOCATIONS`).
        """
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
        exponents = scale_exponents(values)
        if exponents.any():
            values = np.ldexp(values, -exponents[:, None, None])
            series = dataclasses.replace(series, values=values)
        estimate = locate(values, location)
        magnitude = np.abs(estimate.values)
        largest = magnitude.max(axis=1, keepdims=True)
        # An all-zero kernel has no scale of its own: any positive one gives the exact fit 0.
        floor = 1e-9 * np.where(largest > 0, np.maximum(largest, 1e-300), 1.0)
        scale = np.maximum(magnitude, floor)
        weights = 1.0 / (estimate.variance_factors * scale**2)
        deviations = (values - series.means[:, :, None]) / scale[:, :, None]
        pure_ss = np.nansum(deviations**2, axis=(1, 2))
        pure_dof = np.sum(counts - 1, axis=1)
        observations = counts.sum(axis=1)
        shape = estimate.shape
        prior = estimate_prior(pure_ss, pure_dof, shape.reference, shape.points, shape.repetitions)
        return cls(
            series,
            estimate.values,
            weights,
            pure_ss,
            pure_dof,
            observations,
            estimate,
            prior,
            exponents,
        )

    def rows(self, kernels: np.ndarray) -> FitData:
        """The statistics of some kernels only (indices into ``series.kernels``)."""
        series = dataclasses.replace(
            self.series,
            kernels=[self.series.kernels[k] for k in kernels],
            values=self.series.values[kernels],
        )
        return FitData(
            series,
            self.means[kernels],
            self.weights[kernels],
            self.pure_ss[kernels],
            self.pure_dof[kernels],
            self.observations[kernels],
            self.location,
            self.prior,
            self.exponents[kernels],
        )

    @functools.cached_property
    def _moderated(self) -> tuple[np.ndarray, np.ndarray]:
        return self.prior.moderate(self.pure_ss, self.pure_dof)

    @property
    def noise_ss(self) -> np.ndarray:
        """Pure-error sums of squares moderated towards the series' noise level, shape (K,)."""
        return self._moderated[0]

    @property
    def noise_dof(self) -> np.ndarray:
        """Degrees of freedom of :attr:`noise_ss`, shape (K,); 0 without repetitions."""
        return self._moderated[1]

    @property
    def noise_variance(self) -> np.ndarray:
        """Moderated relative noise variance of one repetition, shape (K,).

        NaN where there is no repetition to estimate it from.
        """
        ss, dof = self._moderated
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(dof > 0, ss / dof, np.nan)


def scale_exponents(values: np.ndarray) -> np.ndarray:
    """Per kernel, the power of two its values are divided by before fitting, shape (K,).

    Kernels whose largest absolute value lies within :data:`SAFE_MAGNITUDES` are fitted as
    measured (exponent 0: results for ordinary data stay exactly as they were); any other kernel
    is brought to a largest absolute value in [0.5, 1), so that squares, weights and Gram
    matrices of values between 1e-300 and 1e300 neither overflow nor underflow. Dividing by a
    power of two is exact, and so is multiplying the coefficients back.

    Parameters
    ----------
    values : ndarray, shape (K, P, R)
        Every repetition, NaN where there is none (each kernel has at least one value).
    """
    with np.errstate(invalid="ignore"):
        largest = np.nanmax(np.abs(values), axis=(1, 2))
    low, high = SAFE_MAGNITUDES
    outside = (largest > 0) & ((largest < low) | (largest > high))
    exponents: np.ndarray = np.where(outside, np.frexp(largest)[1], 0)
    return exponents


def _point_text(series: Series, point: int) -> str:
    return ", ".join(
        f"{n}={v:g}" for n, v in zip(series.parameters, series.points[point], strict=True)
    )
