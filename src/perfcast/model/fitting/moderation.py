"""Per-kernel noise variances moderated towards the level of the whole series (empirical Bayes).

A kernel's noise variance is estimated from its own repetitions: with five points of five
repetitions, 20 degrees of freedom. Under heavy-tailed noise that estimate swings widely (a
kernel whose repetitions caught no spike looks far quieter than it is), and the F-tests that
decide whether a term is worth adding inherit the swing. Kernels of one series are measured the
same way, so their noise levels are related: as in Smyth's moderated t-statistics (limma, 2004),
the kernels' log variances are taken to scatter around a common level, and each kernel's
variance is shrunk towards it with a weight learnt from the data.

The scatter the variances show beyond what sampling alone explains gives the prior's degrees of
freedom ``d0``: none beyond sampling pools the kernels completely, a large excess leaves each
kernel with its own estimate. What sampling alone explains depends on the noise shape (uniform
noise gives steadier variances than Gaussian noise, spiky noise far less steady ones), so it is
simulated for the nearest reference shape of :mod:`perfcast.model.fitting.location` with the series'
layout, rather than taken from the chi-square distribution.

The moderated estimate of kernel ``k`` is ``(d0 * s0**2 + pure_ss_k) / (d0 + pure_dof_k)`` with
``d0 + pure_dof_k`` degrees of freedom.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy import special

from perfcast.model.fitting.location import (
    MIN_KERNELS,
    NOISE_FLOOR,
    draw_reference,
    simulated_kernels,
)


@dataclass(frozen=True)
class NoisePrior:
    """The common noise level of a series' kernels and how much it weighs.

    Attributes
    ----------
    variance : float
        Typical relative noise variance of one repetition, ``s0**2`` (NaN when not estimated).
    dof : float
        Its weight in degrees of freedom, ``d0``: 0 leaves every kernel with its own estimate; at
        most the degrees of freedom of all kernels together (complete pooling).
    """

    variance: float
    dof: float

    def moderate(self, pure_ss: np.ndarray, pure_dof: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Moderated sums of squares and degrees of freedom of kernels with repetitions.

        Kernels without repetitions (``pure_dof == 0``) keep zeros: nothing says their noise was
        measured the same way. So do kernels whose repetitions agree to rounding (variance below
        :data:`NOISE_FLOOR`): no run-time noise gives that, they are deterministic (instruction
        counts beside noisy kernels) and their exact models must stay exact.
        """
        if self.dof == 0:
            return pure_ss.astype(float), pure_dof.astype(float)
        measured = _measured(pure_ss, pure_dof)
        ss = np.where(measured, pure_ss + self.dof * self.variance, pure_ss)
        dof = np.where(measured, pure_dof + self.dof, pure_dof)
        return ss.astype(float), dof.astype(float)


NO_PRIOR = NoisePrior(float("nan"), 0.0)


def _measured(pure_ss: np.ndarray, pure_dof: np.ndarray) -> np.ndarray:
    """Kernels whose repetitions measured run-time noise: some, varying beyond rounding."""
    with np.errstate(invalid="ignore", divide="ignore"):
        variances = pure_ss / pure_dof
    return (pure_dof > 0) & np.isfinite(variances) & (variances > NOISE_FLOOR)


def estimate_prior(
    pure_ss: np.ndarray,
    pure_dof: np.ndarray,
    reference: float | None,
    points: int,
    repetitions: int,
) -> NoisePrior:
    """Fit the common noise level to the kernels' variance estimates.

    Parameters
    ----------
    pure_ss, pure_dof : ndarray, shape (K,)
        Per kernel, the pure-error sum of squares (relative units) and its degrees of freedom.
    reference : float or None
        Nearest reference noise shape (:class:`perfcast.model.fitting.location.NoiseShape`).
    points, repetitions : int
        The series' layout, to simulate how much variance estimates scatter by sampling alone.

    Returns
    -------
    NoisePrior
        :data:`NO_PRIOR` with fewer than ``MIN_KERNELS`` kernels whose repetitions differ by
        more than rounding, or with fewer than three repetitions per point.
    """
    usable = _measured(pure_ss, pure_dof)
    if usable.sum() < MIN_KERNELS or repetitions < 3:
        return NO_PRIOR
    logs = np.log(pure_ss[usable] / pure_dof[usable])
    bias, sampling = log_variance_sampling(reference, points, repetitions)
    excess = logs.var(ddof=1) - sampling
    pooled = float(pure_dof[usable].sum())
    dof = pooled if excess <= 0 else min(2.0 * trigamma_inverse(excess), pooled)
    half = dof / 2.0
    level = logs.mean() - bias + special.digamma(half) - np.log(half)
    return NoisePrior(float(np.exp(level)), float(dof))


@functools.lru_cache(maxsize=256)
def log_variance_sampling(
    reference: float | None, points: int, repetitions: int
) -> tuple[float, float]:
    """Mean and variance of ``log(s**2 / sigma**2)`` for kernels of one true noise level.

    Simulated (fixed seed) with ``points`` x ``repetitions`` draws of the reference shape per
    kernel, ``s**2`` computed as the modelers compute the pure error.
    """
    kernels = simulated_kernels(points, repetitions)
    draws = draw_reference(reference, (kernels, points, repetitions), seed=3)
    sigma2 = 1e-4 * draws.var()
    values = 1.0 + 0.01 * draws
    means = values.mean(axis=2, keepdims=True)
    pure_ss = (((values - means) / means) ** 2).sum(axis=(1, 2))
    variances = pure_ss / (points * (repetitions - 1))
    logs = np.log(variances / sigma2)
    return float(logs.mean()), float(logs.var(ddof=1))


def trigamma_inverse(value: float) -> float:
    """The ``y > 0`` with ``trigamma(y) == value`` (Newton's method, as in limma)."""
    if value > 1e7:
        return 1.0 / np.sqrt(value)
    if value < 1e-6:
        return 1.0 / value
    y = 0.5 + 1.0 / value
    for _ in range(50):
        trigamma = special.polygamma(1, y)
        step = trigamma * (1.0 - trigamma / value) / special.polygamma(2, y)
        y += step
        if -step / y < 1e-8:
            break
    return float(y)
