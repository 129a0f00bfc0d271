"""Fit statistics of chosen models, vectorized across kernels.

RSS, SMAPE and adjusted R² are computed on the per-point means; the cross-validated SMAPE leaves
one point out at a time (closed form through the leverages of the weighted fit); the lack-of-fit
F-test (seed paper ``hybrid-static-dynamic-modeling.md``, eq. 13-14) compares the scatter of the
means around the model with the scatter of the repetitions around their means. The uncertainty
behind prediction intervals holds the coefficient covariance, the noise, the mean square
leave-one-out error (the effect of choosing the terms among many candidates is measured
afterwards, by the backtests of :mod:`perfcast.model.backtest`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from perfcast.core.function import Quality, Uncertainty
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.location import NOISE_FLOOR


@dataclass
class Assessment:
    """Quality and uncertainty of one chosen model per kernel."""

    qualities: list[Quality]
    uncertainties: list[Uncertainty | None]


def assess(
    designs: np.ndarray, coefficients: np.ndarray, sizes: np.ndarray, data: FitData
) -> Assessment:
    """Fit statistics of the models ``designs @ coefficients``.

    Parameters
    ----------
    designs : ndarray, shape (K, P, k)
        Each kernel's design matrix (constant column first), zero-padded to a common width.
    coefficients : ndarray, shape (K, k)
        Zero where padded.
    sizes : ndarray of int, shape (K,)
        How many columns of its design each kernel uses.
    data : FitData

    Returns
    -------
    Assessment
    """
    n_kernels, n_points, _ = designs.shape
    means, weights = data.means, data.weights
    fitted = np.einsum("kpi,ki->kp", designs, coefficients)
    residuals = means - fitted
    rss = np.sum(residuals**2, axis=1)
    wrss = np.sum(weights * residuals**2, axis=1)
    smape = np.mean(_relative_error(residuals, fitted, means), axis=1)

    centered = means - means.mean(axis=1, keepdims=True)
    total = np.sum(centered**2, axis=1)
    dof = n_points - sizes
    with np.errstate(invalid="ignore", divide="ignore"):
        r2 = 1.0 - rss / total
        adj_r2 = 1.0 - (1.0 - r2) * (n_points - 1) / dof
    adj_r2 = np.where((total > 0) & (dof > 0), adj_r2, np.nan)

    inverse = _inverse_gram(designs, weights)
    leverage = weights * np.einsum("kpi,kij,kpj->kp", designs, inverse, designs)
    with np.errstate(invalid="ignore", divide="ignore"):
        loo_residuals = np.where(leverage < 1 - 1e-9, residuals / (1.0 - leverage), np.nan)
    loo_predictions = means - loo_residuals
    loo_variance = _loo_variance(loo_residuals, means)
    cv_smape = np.mean(_relative_error(loo_residuals, loo_predictions, means), axis=1)

    lof_p = _lack_of_fit(wrss, dof, data.pure_ss, data.pure_dof)
    residual_dof = data.observations - sizes
    with np.errstate(invalid="ignore", divide="ignore"):
        sigma2 = np.maximum((data.pure_ss + wrss) / residual_dof, NOISE_FLOOR)

    qualities: list[Quality] = []
    uncertainties: list[Uncertainty | None] = []
    for i in range(n_kernels):
        qualities.append(
            Quality(
                rss=float(rss[i]),
                smape=float(smape[i]),
                adj_r2=_optional(adj_r2[i]),
                cv_smape=_optional(cv_smape[i]),
                lof_p=_optional(lof_p[i]),
            )
        )
        used = inverse[i, : sizes[i], : sizes[i]]
        if residual_dof[i] > 0 and np.all(np.isfinite(used)):
            uncertainties.append(
                Uncertainty(
                    sigma2[i] * used,
                    float(sigma2[i]),
                    int(residual_dof[i]),
                    loo_variance=float(loo_variance[i]),
                )
            )
        else:
            uncertainties.append(None)
    return Assessment(qualities, uncertainties)


def _loo_variance(residuals: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Mean square relative leave-one-out error per kernel, over the points where it is
    defined (0 where it is nowhere)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        relative = (residuals / np.abs(means)) ** 2
    relative = np.where(np.isfinite(relative), relative, np.nan)
    counts = np.sum(np.isfinite(relative), axis=1)
    total = np.nansum(relative, axis=1)
    return np.where(counts > 0, total / np.maximum(counts, 1), 0.0)


def _relative_error(difference: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Symmetric absolute percentage error, 0 where both values are 0."""
    denominator = np.abs(a) + np.abs(b)
    with np.errstate(invalid="ignore", divide="ignore"):
        error = 200.0 * np.abs(difference) / denominator
    return np.where(denominator > 0, error, np.where(np.isnan(difference), np.nan, 0.0))


def _inverse_gram(designs: np.ndarray, weights: np.ndarray) -> np.ndarray:
    scale = np.max(np.abs(designs), axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    scaled = designs / scale
    gram = np.einsum("kp,kpi,kpj->kij", weights, scaled, scaled)
    padded = np.all(designs == 0, axis=1)  # unused columns: keep the matrix invertible
    gram[:, np.arange(gram.shape[1]), np.arange(gram.shape[1])] += padded
    try:
        inverse = np.linalg.inv(gram)
    except np.linalg.LinAlgError:
        inverse = np.linalg.pinv(gram)
    return inverse / scale[:, 0, :, None] / scale[:, 0, None, :]


def _lack_of_fit(
    wrss: np.ndarray, dof: np.ndarray, pure_ss: np.ndarray, pure_dof: np.ndarray
) -> np.ndarray:
    usable = (pure_dof > 0) & (dof > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        pure = np.maximum(pure_ss / np.where(usable, pure_dof, 1), NOISE_FLOOR)
        ratio = (wrss / np.maximum(dof, 1)) / pure
    p = special.fdtrc(np.maximum(dof, 1), np.where(usable, pure_dof, 1), ratio)
    return np.where(usable, p, np.nan)


def _optional(value: float) -> float | None:
    return None if not np.isfinite(value) else float(value)
