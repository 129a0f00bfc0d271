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
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

#: Added to the diagonal of the kernel matrix (a measured point keeps this little variance).
JITTER = 1e-6
#: Candidates rated at once (bounds the memory of the correlation matrices).
BLOCK = 4096


class Coverage:
    """The Gaussian-process variance at each candidate, given the points measured so far.

    Parameters
    ----------
    measured : ndarray, shape (n_points, n_parameters)
        Parameter values already measured.
    candidates : ndarray, shape (n_candidates, n_parameters)
        Parameter values that could be measured. A parameter positive throughout is rated on
        the logarithm of its values, any other on its values.
    """

    def __init__(self, measured: np.ndarray, candidates: np.ndarray) -> None:
        together = np.vstack([measured, candidates])
        # Logarithms where a parameter is positive throughout, its values as they are otherwise.
        self._logarithmic = np.all(together > 0, axis=0)
        coordinates = self._coordinates(together)
        self._scales = np.array([_length_scale(column) for column in coordinates.T])
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

    def novelty(self) -> np.ndarray:
        """The posterior variance at every candidate, between 0 (measured) and 1 (far away)."""
        if not len(self._points):
            return np.ones(len(self._candidates))
        between = _matern(self._points, self._points) + JITTER * np.eye(len(self._points))
        factor = np.linalg.cholesky(between)
        novelty = np.empty(len(self._candidates))
        for start in range(0, len(self._candidates), BLOCK):
            block = self._candidates[start : start + BLOCK]
            solved = linalg.solve_triangular(factor, _matern(self._points, block), lower=True)
            novelty[start : start + BLOCK] = 1.0 - np.sum(solved**2, axis=0)
        return np.clip(novelty, 0.0, 1.0)


def _length_scale(coordinates: np.ndarray) -> float:
    """The mean step between distinct coordinates; 1 for a single value."""
    distinct = np.unique(coordinates)
    return float(np.ptp(distinct) / (len(distinct) - 1)) if np.ptp(distinct) > 1e-12 else 1.0


def _matern(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Matérn 3/2 correlations between the rows of ``a`` and of ``b`` (scaled coordinates)."""
    squared = np.zeros((len(a), len(b)))
    for column in range(a.shape[1]):
        squared += (a[:, column, None] - b[None, :, column]) ** 2
    root = np.sqrt(3.0 * squared)
    return (1.0 + root) * np.exp(-root)
