"""Where a point's repetitions put its value: a location estimator matched to the noise.

The mean of the repetitions is the best estimate only for Gaussian-like noise. Bounded noise
(tightly controlled runs, quantised timers) is estimated better by the midrange, the average of
the smallest and largest repetition; heavy-tailed noise (OS jitter, a run hit by a noisy
neighbour) by the median or a trimmed mean. With five repetitions the right choice cuts the
variance of a point by up to 30 % (uniform noise) or 85 % (rare large spikes), and that variance is
what decides which of two neighbouring scaling terms fits better.

One kernel's repetitions are too few to tell the noise shape, but a series holds many kernels
measured the same way. ``adaptive`` pools them: every repetition's relative deviation from its
point's mean, scaled to unit variance per kernel (the multiplicative noise model: one noise level
per kernel), gives a pooled kurtosis. A family of reference shapes (uniform and generalized normal
distributions, from bounded to heavy-tailed) is simulated with the same number of points and
repetitions; the nearest reference decides the estimator, and the mean stays unless the data
rule out Gaussian noise (kurtosis more than two standard errors from the normal reference's) or
fewer than ten kernels show any spread.

Every estimator comes with its variance relative to the noise variance of one repetition
(``1/n`` for the mean of ``n``), so points are weighted and tested consistently whichever is used.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

ESTIMATORS = ("mean", "midrange", "trimmed", "median")
LOCATIONS = ("adaptive", *ESTIMATORS)
#: The estimators in words.
DESCRIPTIONS = {
    "mean": "mean",
    "midrange": "midrange (middle of smallest and largest)",
    "trimmed": "mean without the smallest and the largest",
    "median": "median",
}
#: Reference noise shapes: ``None`` is uniform, a number the shape of a generalized normal
#: distribution (2 is Gaussian, 1 Laplace, below 1 heavier tails); ordered by kurtosis.
REFERENCE_SHAPES: tuple[float | None, ...] = (None, 6.0, 4.0, 3.0, 2.0, 1.5, 1.0, 0.7, 0.5)
GAUSSIAN = 2.0
#: How far (in standard errors) the pooled kurtosis must lie from the Gaussian reference's before
#: another estimator than the mean is used.
EVIDENCE = 2.0
#: Fewest kernels with differing repetitions whose pooled kurtosis and its standard error are
#: trusted; fewer keep the mean.
MIN_KERNELS = 10
#: Smallest relative noise variance taken for noise (1e-6 relative noise): kernels whose
#: repetitions vary less are deterministic (counts; the rest is floating-point rounding), say
#: nothing about the noise shape, and elsewhere keep exact data from making every tiny
#: improvement "significant".
NOISE_FLOOR = 1e-12
#: A different estimator must cut the variance of the mean by at least this fraction.
MIN_GAIN = 0.05
#: Values drawn per reference shape to simulate its pooled kurtosis (at most 4,000 kernels).
SIMULATED_VALUES = 200_000
SIMULATED_SAMPLES = 20_000


@dataclass(frozen=True)
class NoiseShape:
    """What the pooled repetitions of a series say about the shape of its noise.

    Attributes
    ----------
    kurtosis : float
        Pooled kurtosis of the per-kernel standardized deviations (NaN without repetitions).
    standard_error : float
        Its standard error over kernels.
    kernels : int
        Kernels with repetitions that differ.
    points, repetitions : int
        The layout the references were simulated with: points per kernel and the most common
        number of repetitions of a point.
    reference : float or None
        Shape of the nearest reference distribution (generalized normal; None: uniform).
    """

    kurtosis: float
    standard_error: float
    kernels: int
    points: int
    repetitions: int
    reference: float | None

    @property
    def description(self) -> str:
        """The nearest reference in words, e.g. ``"uniform"`` or ``"generalized normal 1.5"``."""
        if self.reference is None:
            return "uniform"
        if self.reference == GAUSSIAN:
            return "Gaussian"
        return f"generalized normal {self.reference:g}"


@dataclass(frozen=True)
class Location:
    """The location estimate of every point of a series.

    Attributes
    ----------
    estimator : str
        One of :data:`ESTIMATORS`.
    values : ndarray, shape (K, P)
        The estimates.
    variance_factors : ndarray, shape (K, P)
        Variance of each estimate divided by the noise variance of one repetition.
    shape : NoiseShape
        What the repetitions say about the noise (the adaptive choice's evidence; the variance
        factors of a given estimator other than the mean come from its nearest reference).
    """

    estimator: str
    values: np.ndarray
    variance_factors: np.ndarray
    shape: NoiseShape

    @property
    def note(self) -> str | None:
        """How the point values were taken, in words, when not as the mean of repetitions."""
        if self.estimator == "mean":
            return None
        shape = self.shape
        evidence = (
            f"; the noise of {shape.kernels} kernels looks {shape.description}"
            if shape.kernels > 1 and shape.reference != GAUSSIAN
            else ""
        )
        estimator = DESCRIPTIONS[self.estimator]
        return f"point values: the {estimator} of each point's repetitions{evidence}"


def locate(values: np.ndarray, method: str = "adaptive") -> Location:
    """Estimate every point's value from its repetitions.

    Parameters
    ----------
    values : ndarray, shape (K, P, R)
        Repetitions, NaN where a point has fewer than ``R``; every point has at least one.
    method : {"adaptive", "mean", "midrange", "trimmed", "median"}
        The estimator, or ``adaptive`` to choose it from the pooled noise shape. ``trimmed``
        drops the smallest and the largest repetition.

    Returns
    -------
    Location
    """
    if method not in LOCATIONS:
        raise ValueError(f"unknown location estimator '{method}'; choose one of {LOCATIONS}")
    counts = np.sum(~np.isnan(values), axis=2)
    shape = noise_shape(values, counts)
    estimator = choose_estimator(shape) if method == "adaptive" else method
    if estimator == "mean":  # exact for any noise shape, no simulation needed
        factors = 1.0 / np.maximum(counts, 1)
    else:
        factors = np.ones(counts.shape)
        for n in np.unique(counts):
            factors[counts == n] = relative_variance(shape.reference, int(n))[estimator]
    return Location(estimator, estimate(values, counts, estimator), factors, shape)


def estimate(values: np.ndarray, counts: np.ndarray, estimator: str) -> np.ndarray:
    """One estimator over the repetitions (last axis, NaN-padded), shape ``values.shape[:-1]``."""
    if estimator == "mean":
        return np.nanmean(values, axis=-1)
    if estimator == "median":
        return np.nanmedian(values, axis=-1)
    ordered = np.sort(values, axis=-1)  # NaN last
    low = ordered[..., 0]
    high = np.take_along_axis(ordered, np.maximum(counts - 1, 0)[..., None], axis=-1)[..., 0]
    if estimator == "midrange":
        return 0.5 * (low + high)
    inner = np.nansum(ordered, axis=-1) - low - high
    with np.errstate(invalid="ignore", divide="ignore"):
        trimmed = inner / (counts - 2)
    return np.where(counts > 2, trimmed, np.nanmean(values, axis=-1))


def noise_shape(values: np.ndarray, counts: np.ndarray) -> NoiseShape:
    """Pool the relative deviations of all kernels into a kurtosis and find the nearest shape."""
    kurtosis = _kernel_kurtosis(values, counts)
    usable = kurtosis[np.isfinite(kurtosis)]
    points, repetitions = counts.shape[1], _typical(counts)
    if len(usable) < MIN_KERNELS or repetitions < 3:
        nan = float("nan")
        return NoiseShape(nan, nan, len(usable), points, repetitions, GAUSSIAN)
    pooled = float(usable.mean())
    error = float(usable.std(ddof=1) / np.sqrt(len(usable)))
    nearest = _nearest_reference(pooled, points, repetitions)
    return NoiseShape(pooled, error, len(usable), points, repetitions, nearest)


def _nearest_reference(kurtosis: float, points: int, repetitions: int) -> float | None:
    """The reference shape whose simulated pooled kurtosis is nearest to ``kurtosis``.

    The references are ordered by kurtosis, so a bisection simulates four or five of them
    instead of all nine.
    """

    def simulated(index: int) -> float:
        return reference_kurtosis(REFERENCE_SHAPES[index], points, repetitions)

    low, high = 0, len(REFERENCE_SHAPES) - 1
    while high - low > 1:
        middle = (low + high) // 2
        if simulated(middle) < kurtosis:
            low = middle
        else:
            high = middle
    nearest = min((low, high), key=lambda index: abs(simulated(index) - kurtosis))
    return REFERENCE_SHAPES[nearest]


def choose_estimator(shape: NoiseShape) -> str:
    """The estimator of least variance for ``shape``; the mean unless the evidence is clear."""
    if not np.isfinite(shape.kurtosis):
        return "mean"
    gaussian = reference_kurtosis(GAUSSIAN, shape.points, shape.repetitions)
    if abs(shape.kurtosis - gaussian) <= EVIDENCE * shape.standard_error:
        return "mean"
    factors = relative_variance(shape.reference, shape.repetitions)
    best = min(ESTIMATORS, key=factors.__getitem__)
    return best if factors[best] < (1.0 - MIN_GAIN) * factors["mean"] else "mean"


def _kernel_kurtosis(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per kernel: kurtosis of the deviations from the point means, relative and unit-variance.

    NaN for kernels without repetitions or whose repetitions agree to :data:`NOISE_FLOOR`.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.nansum(values, axis=2, keepdims=True) / counts[:, :, None]
        correction = np.sqrt(counts / (counts - 1.0))[:, :, None]
        deviations = (values - means) / np.abs(means) * correction
        usable = np.isfinite(deviations)
        deviations = np.where(usable, deviations, 0.0)
        number = usable.sum(axis=(1, 2))
        variance = (deviations**2).sum(axis=(1, 2)) / number
        kurtosis = (deviations**4).sum(axis=(1, 2)) / number / variance**2
    return np.where((number > 0) & (variance > NOISE_FLOOR), kurtosis, np.nan)


def _typical(counts: np.ndarray) -> int:
    """The most common number of repetitions of a point."""
    numbers, frequency = np.unique(counts, return_counts=True)
    return int(numbers[np.argmax(frequency)])


def draw_reference(reference: float | None, size: tuple[int, ...], seed: int) -> np.ndarray:
    """Unit-scale draws of a reference shape: uniform on [-1, 1] or generalized normal."""
    rng = np.random.default_rng(seed)
    if reference is None:
        return rng.uniform(-1.0, 1.0, size)
    # |X|^shape of a generalized normal is Gamma(1/shape)-distributed; the sign is a fair coin.
    magnitude = rng.gamma(1.0 / reference, size=size) ** (1.0 / reference)
    return np.where(rng.random(size) < 0.5, -magnitude, magnitude)


def simulated_kernels(points: int, repetitions: int) -> int:
    """How many kernels of ``points`` x ``repetitions`` a simulation of a series' statistic
    draws: :data:`SIMULATED_VALUES` values, at least 100 and at most 4,000 kernels."""
    return int(np.clip(SIMULATED_VALUES // (points * repetitions), 100, 4000))


@functools.lru_cache(maxsize=256)
def reference_kurtosis(reference: float | None, points: int, repetitions: int) -> float:
    """Expected pooled kurtosis of kernels with ``points`` x ``repetitions`` noisy values.

    Simulated (fixed seed) exactly as :func:`noise_shape` measures data: deviations from the
    point means, corrected for the lost degree of freedom, scaled to unit variance per kernel.
    """
    kernels = simulated_kernels(points, repetitions)
    noise = 1.0 + 0.01 * draw_reference(reference, (kernels, points, repetitions), seed=1)
    counts = np.full((kernels, points), repetitions)
    return float(np.nanmean(_kernel_kurtosis(noise, counts)))


@functools.lru_cache(maxsize=256)
def relative_variance(reference: float | None, repetitions: int) -> dict[str, float]:
    """Variance of each estimator of ``repetitions`` values over the variance of one value."""
    if repetitions <= 2:
        return dict.fromkeys(ESTIMATORS, 1.0 / max(repetitions, 1))
    sample = draw_reference(reference, (SIMULATED_SAMPLES, repetitions), seed=2)
    counts = np.full(SIMULATED_SAMPLES, repetitions)
    spread = sample.var()
    factors = {e: float(estimate(sample, counts, e).var() / spread) for e in ESTIMATORS}
    return factors | {"mean": 1.0 / repetitions}
