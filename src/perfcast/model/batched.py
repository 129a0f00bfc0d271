"""Weighted least squares for many kernels and many hypotheses at once.

A hypothesis is a constant plus a subset of the terms of a *pool* (the candidate terms evaluated at
the measured points). Per kernel, the weighted moments of the pool (sums of products of every pair
of pool terms, and of each term with the values) are computed once with matrix products; the
normal equations of every subset are then gathered from them instead of being rebuilt per
hypothesis. The constant is eliminated by centering the moments, so a one-term hypothesis is a
division, a two-term one a 2x2 closed form, and larger ones use a Cholesky factorization vectorized
across all kernels and hypotheses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Memory budget for one block of gathered normal equations, in float64 elements.
_BLOCK_ELEMENTS = 16_000_000


@dataclass
class SubsetFit:
    """Fits of many term subsets to many kernels.

    Attributes
    ----------
    constants : ndarray, shape (K, H)
        Fitted constant of each kernel and hypothesis.
    coefficients : ndarray, shape (K, H, s)
        Coefficients of the hypothesis' terms, in the order of its subset; NaN where singular.
    wrss : ndarray, shape (K, H)
        Weighted residual sum of squares; ``inf`` where the fit is singular.
    """

    constants: np.ndarray
    coefficients: np.ndarray
    wrss: np.ndarray


class PoolMoments:
    """Centered weighted moments of a term pool, per kernel.

    Parameters
    ----------
    pool : ndarray, shape (T, P) or (K, T, P)
        Candidate terms evaluated at the points, shared by all kernels or per kernel.
    values : ndarray, shape (K, P)
        Values to fit.
    weights : ndarray, shape (K, P)
        Weight of each point in each kernel's fit (all positive).
    """

    def __init__(self, pool: np.ndarray, values: np.ndarray, weights: np.ndarray):
        shared = pool.ndim == 2
        scale = np.max(np.abs(pool), axis=-1, keepdims=True)
        scale[scale == 0] = 1.0
        scaled = pool / scale
        self.scale = scale[..., 0]  # (T,) or (K, T)
        total_weight = weights.sum(axis=1)  # S0
        weighted_values = weights * values
        if shared:
            n_terms, n_points = scaled.shape
            term_sums = weights @ scaled.T  # (K, T)
            products = (scaled[:, None, :] * scaled[None, :, :]).reshape(-1, n_points)
            cross = (weights @ products.T).reshape(-1, n_terms, n_terms)
            value_sums = weighted_values @ scaled.T
        else:
            term_sums = np.einsum("kp,ktp->kt", weights, scaled)
            cross = np.einsum("kp,ktp,kup->ktu", weights, scaled, scaled)
            value_sums = np.einsum("kp,ktp->kt", weighted_values, scaled)
        value_total = weighted_values.sum(axis=1)
        self.total_weight = total_weight
        self.term_means = term_sums / total_weight[:, None]
        self.value_mean = value_total / total_weight
        self.gram = cross - term_sums[:, :, None] * self.term_means[:, None, :]
        self.rhs = value_sums - term_sums * self.value_mean[:, None]
        self.value_ss = (
            np.einsum("kp,kp->k", weighted_values, values) - value_total * self.value_mean
        )

    def constant_wrss(self) -> np.ndarray:
        """WRSS of the constant-only model, shape (K,)."""
        return np.maximum(self.value_ss, 0.0)

    def fit(self, subsets: np.ndarray) -> SubsetFit:
        """Fit constant + the pool terms of each subset.

        Parameters
        ----------
        subsets : ndarray of int, shape (H, s)
            Indices into the pool, one row per hypothesis, all of the same size ``s >= 1``.

        Returns
        -------
        SubsetFit
        """
        subsets = np.asarray(subsets, dtype=np.intp)
        n_kernels = self.gram.shape[0]
        n_hyp, size = subsets.shape
        constants = np.empty((n_kernels, n_hyp))
        coefficients = np.empty((n_kernels, n_hyp, size))
        wrss = np.empty((n_kernels, n_hyp))
        block = max(1, _BLOCK_ELEMENTS // max(1, n_hyp * size * size))
        for start in range(0, n_kernels, block):
            rows = slice(start, min(start + block, n_kernels))
            gram, rhs = self.gram[rows], self.rhs[rows]
            solution, explained = _solve_subsets(gram, rhs, subsets)
            residual = self.value_ss[rows, None] - explained
            wrss[rows] = np.where(np.isnan(residual), np.inf, np.maximum(residual, 0.0))
            means = self.term_means[rows][:, subsets]
            constants[rows] = self.value_mean[rows, None] - np.einsum(
                "khi,khi->kh", solution, means
            )
            scale = (
                self.scale[subsets][None] if self.scale.ndim == 1 else self.scale[rows][:, subsets]
            )
            coefficients[rows] = solution / scale
        return SubsetFit(constants, coefficients, wrss)


def _solve_subsets(
    gram: np.ndarray, rhs: np.ndarray, subsets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Solve the normal equations of every subset; returns (solution, solution . rhs)."""
    size = subsets.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        if size == 1:
            a = subsets[:, 0]
            diagonal, right = gram[:, a, a], rhs[:, a]
            x = np.where(diagonal > 1e-14, right / diagonal, np.nan)
            return x[..., None], x * right
        if size == 2:
            a, b = subsets[:, 0], subsets[:, 1]
            g00, g01, g11 = gram[:, a, a], gram[:, a, b], gram[:, b, b]
            r0, r1 = rhs[:, a], rhs[:, b]
            det = g00 * g11 - g01 * g01
            det = np.where(det > 1e-12 * g00 * g11, det, np.nan)
            x0 = (g11 * r0 - g01 * r1) / det
            x1 = (g00 * r1 - g01 * r0) / det
            return np.stack([x0, x1], axis=-1), x0 * r0 + x1 * r1
    sub_gram = gram[:, subsets[:, :, None], subsets[:, None, :]]
    sub_rhs = rhs[:, subsets]
    solution = solve_spd(sub_gram, sub_rhs)
    return solution, np.einsum("khi,khi->kh", solution, sub_rhs)


def solve_spd(gram: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve many small symmetric positive definite systems ``gram @ x = rhs``.

    Parameters
    ----------
    gram : ndarray, shape (..., k, k)
    rhs : ndarray, shape (..., k)

    Returns
    -------
    ndarray, shape (..., k)
        NaN for systems that are not numerically positive definite.
    """
    k = gram.shape[-1]
    lower = np.zeros_like(gram)
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in range(k):
            diagonal = gram[..., j, j] - np.sum(lower[..., j, :j] ** 2, axis=-1)
            bad = ~(diagonal > 1e-12 * np.abs(gram[..., j, j]))
            diagonal = np.where(bad, np.nan, diagonal)
            lower[..., j, j] = np.sqrt(diagonal)
            for i in range(j + 1, k):
                dot = np.sum(lower[..., i, :j] * lower[..., j, :j], axis=-1)
                lower[..., i, j] = (gram[..., i, j] - dot) / lower[..., j, j]
        forward = np.empty_like(rhs)
        for i in range(k):
            dot = np.sum(lower[..., i, :i] * forward[..., :i], axis=-1)
            forward[..., i] = (rhs[..., i] - dot) / lower[..., i, i]
        solution = np.empty_like(rhs)
        for i in reversed(range(k)):
            dot = np.sum(lower[..., i + 1 :, i] * solution[..., i + 1 :], axis=-1)
            solution[..., i] = (forward[..., i] - dot) / lower[..., i, i]
    return solution


def weighted_residuals(
    designs: np.ndarray, coefficients: np.ndarray, values: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """Weighted residual sum of squares computed directly (no cancellation), shape (K,).

    Parameters
    ----------
    designs : ndarray, shape (K, P, k)
        One chosen design matrix per kernel.
    coefficients : ndarray, shape (K, k)
    values, weights : ndarray, shape (K, P)
    """
    fitted = np.einsum("kpi,ki->kp", designs, coefficients)
    return np.sum(weights * (values - fitted) ** 2, axis=1)
