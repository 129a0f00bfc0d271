"""How far candidate configurations lie from the measured ones: the part of a configuration's
behaviour that the measurements leave open, whatever the model's form.

A fitted model's covariance says what new points teach *if its form is right*. When the form may
be wrong (few points, a target far beyond them, rival forms that disagree there), the points that
correct it are those unlike any measured one. :class:`Coverage` rates that likeness with the
posterior variance of a Gaussian process of unit prior variance over the logarithms of the
parameter values (Matérn kernel, smoothness 3/2), one length scale per parameter: the mean step
between its distinct candidate values. The variance is 1 far from every measured point and 0 at
one; it depends only on where the points lie, not on what was measured there. This is the
quantity Extra-P's measurement point advisor weighs against cost (there with a process fitted to
the measured values).

Given the measured values, the length scales come from the data instead: the multiples of the
mean steps that maximise the marginal likelihood of a process fitted to the logarithms of the
values less their linear trend in the log parameters (a power law), with its variance and a
nugget profiled or fitted alongside (Rasmussen and Williams, "Gaussian Processes for Machine
Learning", 2006, sec. 5.4). Smooth data give long scales: far points then still tell something
about each other. :meth:`Coverage.target_information` rates how much measuring each candidate
would remove of the process's variance at a target configuration.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg, optimize

#: Added to the diagonal of the kernel matrix (a measured point keeps this little variance).
JITTER = 1e-6
#: Candidates rated at once (bounds the memory of the correlation matrices).
BLOCK = 4096
#: Bounds of a fitted length scale, in mean steps between the parameter's distinct values.
SCALE_BOUNDS = (1.0, 20.0)
#: Bounds of the fitted nugget (noise) as a share of the process's variance.
NUGGET_BOUNDS = (1e-6, 1.0)
#: Variance (a share of the prior's) of the observation a candidate adds in
#: :meth:`Coverage.target_information`: a new measurement does not pin the process down exactly.
OBSERVATION_NUGGET = 1e-2


class Coverage:
    """The Gaussian-process variance at each candidate, given the points measured so far.

    Parameters
    ----------
    measured : ndarray, shape (n_points, n_parameters)
        Parameter values already measured.
    candidates : ndarray, shape (n_candidates, n_parameters)
        Parameter values that could be measured. A parameter positive throughout is rated on
        the logarithm of its values, any other on its values.
    values : ndarray, shape (n_points,), optional
        A measured value per row of ``measured`` (for instance the mean of a time). When given,
        positive and at more points than the trend has coefficients plus one, the length
        scales are fitted to them by marginal likelihood; otherwise each is the mean step
        between the parameter's distinct values.
    """

    def __init__(
        self, measured: np.ndarray, candidates: np.ndarray, values: np.ndarray | None = None
    ) -> None:
        together = np.vstack([measured, candidates])
        # Logarithms where a parameter is positive throughout, its values as they are otherwise.
        self._logarithmic = np.all(together > 0, axis=0)
        coordinates = self._coordinates(together)
        self._scales = np.array([_length_scale(column) for column in coordinates.T])
        if values is not None:
            self._scales = self._scales * _fitted_multiples(
                self._coordinates(measured) / self._scales, np.asarray(values, dtype=float)
            )
        self._candidates = self._coordinates(candidates) / self._scales
        self._points = np.unique(self._coordinates(measured) / self._scales, axis=0)

    def _coordinates(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return np.where(self._logarithmic, np.log(np.where(self._logarithmic, values, 1.0)), values)

    def add(self, point: np.ndarray) -> None:
        """Count ``point`` (parameter values) as measured."""
        scaled = self._coordinates(np.asarray(point, dtype=float)[None, :])[0] / self._scales
        if not (np.abs(self._points - scaled).max(axis=1, initial=0.0) < 1e-12).any():
            self._points = np.vstack([self._points, scaled])

    @property
    def length_scales(self) -> np.ndarray:
        """The length scale of each parameter (on the logarithm of its values where positive)."""
        return self._scales.copy()

    def novelty(self) -> np.ndarray:
        """The posterior variance at every candidate, between 0 (measured) and 1 (far away)."""
        if not len(self._points):
            return np.ones(len(self._candidates))
        factor = self._factor()
        novelty = np.empty(len(self._candidates))
        for start in range(0, len(self._candidates), BLOCK):
            block = self._candidates[start : start + BLOCK]
            solved = linalg.solve_triangular(factor, _matern(self._points, block), lower=True)
            novelty[start : start + BLOCK] = 1.0 - np.sum(solved**2, axis=0)
        return np.clip(novelty, 0.0, 1.0)

    def target_information(self, target: np.ndarray) -> tuple[float, np.ndarray]:
        """What measuring each candidate would tell about ``target`` (parameter values).

        Returns
        -------
        variance : float
            The posterior variance at the target now (0 at a measured point, 1 far away).
        reductions : ndarray, shape (n_candidates,)
            How much of it measuring each candidate (one observation of variance
            :data:`OBSERVATION_NUGGET`) would remove: ``cov(t, c)^2 / (var(c) + nugget)``
            under the posterior. Points near the target, and unlike the measured ones, remove
            most.
        """
        scaled = self._coordinates(np.asarray(target, dtype=float)[None, :]) / self._scales
        reductions = np.empty(len(self._candidates))
        if not len(self._points):
            variance = 1.0
            for start in range(0, len(self._candidates), BLOCK):
                block = self._candidates[start : start + BLOCK]
                reductions[start : start + BLOCK] = _matern(scaled, block)[0] ** 2 / (
                    1.0 + OBSERVATION_NUGGET
                )
            return variance, reductions
        factor = self._factor()
        at_target = linalg.solve_triangular(factor, _matern(self._points, scaled), lower=True)
        variance = float(np.clip(1.0 - np.sum(at_target**2), 0.0, 1.0))
        for start in range(0, len(self._candidates), BLOCK):
            block = self._candidates[start : start + BLOCK]
            solved = linalg.solve_triangular(factor, _matern(self._points, block), lower=True)
            own = np.clip(1.0 - np.sum(solved**2, axis=0), 0.0, 1.0)
            shared = _matern(scaled, block)[0] - at_target[:, 0] @ solved
            reductions[start : start + BLOCK] = shared**2 / (own + OBSERVATION_NUGGET)
        return variance, np.minimum(reductions, variance)

    def _factor(self) -> np.ndarray:
        between = _matern(self._points, self._points) + JITTER * np.eye(len(self._points))
        return np.linalg.cholesky(between)


def _length_scale(coordinates: np.ndarray) -> float:
    """The mean step between distinct coordinates; 1 for a single value."""
    distinct = np.unique(coordinates)
    return float(np.ptp(distinct) / (len(distinct) - 1)) if np.ptp(distinct) > 1e-12 else 1.0


def _fitted_multiples(coordinates: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Length-scale multiples (of the mean steps, the unit of ``coordinates``) that maximise the
    marginal likelihood of the log ``values`` less their linear trend; ones where the values do
    not allow a fit (too few, not positive, no variation left)."""
    ones = np.ones(coordinates.shape[1])
    points, inverse = np.unique(coordinates, axis=0, return_inverse=True)
    if not (np.all(np.isfinite(values)) and np.all(values > 0)) or len(values) != len(coordinates):
        return ones
    logs = np.bincount(inverse.ravel(), weights=np.log(values)) / np.bincount(inverse.ravel())
    trend = np.column_stack([np.ones(len(points)), points])
    if len(points) <= trend.shape[1] + 1:
        return ones
    coefficients, *_ = np.linalg.lstsq(trend, logs, rcond=None)
    residuals = logs - trend @ coefficients
    if np.ptp(residuals) < 1e-12:
        return ones

    def cost(parameters: np.ndarray) -> float:
        multiples, nugget = np.exp(parameters[:-1]), np.exp(parameters[-1])
        correlation = _matern(points / multiples, points / multiples)
        correlation += (nugget + JITTER) * np.eye(len(points))
        try:
            factor = np.linalg.cholesky(correlation)
        except np.linalg.LinAlgError:
            return 1e300
        solved = linalg.solve_triangular(factor, residuals, lower=True)
        # Marginal likelihood with the process variance profiled out (up to constants).
        return float(
            len(points) * np.log(np.sum(solved**2) / len(points))
            + 2.0 * np.sum(np.log(np.diag(factor)))
        )

    bounds = [tuple(np.log(SCALE_BOUNDS))] * coordinates.shape[1] + [tuple(np.log(NUGGET_BOUNDS))]
    best = None
    for start in (0.0, np.log(4.0)):  # from the mean step and from a longer scale
        found = optimize.minimize(
            cost,
            np.array([start] * coordinates.shape[1] + [np.log(1e-2)]),
            method="L-BFGS-B",
            bounds=bounds,
        )
        if np.isfinite(found.fun) and (best is None or found.fun < best.fun):
            best = found
    return np.exp(best.x[:-1]) if best is not None else ones


def _matern(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Matérn 3/2 correlations between the rows of ``a`` and of ``b`` (scaled coordinates)."""
    squared = np.zeros((len(a), len(b)))
    for column in range(a.shape[1]):
        squared += (a[:, column, None] - b[None, :, column]) ** 2
    root = np.sqrt(3.0 * squared)
    return (1.0 + root) * np.exp(-root)
