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
_BLOCK_ELEMENTS = 1_000_000


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


@dataclass
class BestFit:
    """The best hypothesis of each kernel (see :meth:`PoolMoments.best`).

    Attributes
    ----------
    index : ndarray of int, shape (K,)
        Row of the chosen hypothesis in ``subsets`` (meaningless where ``wrss`` is ``inf``).
    wrss : ndarray, shape (K,)
        Its weighted residual sum of squares; ``inf`` where no hypothesis is valid.
    constants : ndarray, shape (K,)
    coefficients : ndarray, shape (K, s)
    """

    index: np.ndarray
    wrss: np.ndarray
    constants: np.ndarray
    coefficients: np.ndarray


class PoolMoments:
    """Centered weighted moments of a term pool, per kernel.

    First-order moments are computed at once; the pool's cross moments (``K x T x T``, the
    expensive part) only when a hypothesis with two or more terms is fitted, and only for the
    kernels at hand (see :meth:`rows`).

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
        scale = np.max(np.abs(pool), axis=-1, keepdims=True)
        scale[scale == 0] = 1.0
        self.pool = pool / scale
        self.scale = scale[..., 0]  # (T,) or (K, T)
        self.values = values
        self.weights = weights
        total_weight = weights.sum(axis=1)
        weighted_values = weights * values
        value_total = weighted_values.sum(axis=1)
        if self.shared:
            term_sums = rows_times(weights, self.pool.T)  # (K, T)
            value_sums = rows_times(weighted_values, self.pool.T)
            squares = rows_times(weights, (self.pool**2).T)
        else:
            term_sums = np.einsum("kp,ktp->kt", weights, self.pool)
            value_sums = np.einsum("kp,ktp->kt", weighted_values, self.pool)
            squares = np.einsum("kp,ktp->kt", weights, self.pool**2)
        self.term_means = term_sums / total_weight[:, None]
        self.value_mean = value_total / total_weight
        self.squares = squares
        self.variances = squares - term_sums * self.term_means  # centered diagonal moments
        self.rhs = value_sums - term_sums * self.value_mean[:, None]
        self.value_ss = (
            np.einsum("kp,kp->k", weighted_values, values) - value_total * self.value_mean
        )

    @property
    def shared(self) -> bool:
        """True when all kernels share one pool."""
        return self.pool.ndim == 2

    def rows(self, kernels: np.ndarray) -> PoolMoments:
        """The moments of a subset of kernels."""
        subset = object.__new__(PoolMoments)
        for name, value in vars(self).items():
            keep = name in ("pool", "scale") and self.shared
            setattr(subset, name, value if keep else value[kernels])
        return subset

    def gram(self) -> np.ndarray:
        """Centered cross moments of the pool terms, shape (K, T, T)."""
        if self.shared:
            n_terms, n_points = self.pool.shape
            products = (self.pool[:, None, :] * self.pool[None, :, :]).reshape(-1, n_points)
            cross = rows_times(self.weights, products.T).reshape(-1, n_terms, n_terms)
        else:
            cross = np.einsum("kp,ktp,kup->ktu", self.weights, self.pool, self.pool)
        means = self.term_means
        total = self.weights.sum(axis=1)[:, None, None]
        return cross - total * means[:, :, None] * means[:, None, :]

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
        n_kernels = self.rhs.shape[0]
        n_hyp, size = subsets.shape
        constants = np.empty((n_kernels, n_hyp))
        coefficients = np.empty((n_kernels, n_hyp, size))
        wrss = np.empty((n_kernels, n_hyp))
        for rows, block, solution, block_wrss in self._blocks(subsets):
            wrss[rows] = block_wrss
            means = block.term_means[:, subsets]
            constants[rows] = block.value_mean[:, None] - np.einsum("khi,khi->kh", solution, means)
            coefficients[rows] = solution / block._term_scale(subsets)
        return SubsetFit(constants, coefficients, wrss)

    def best(
        self, subsets: np.ndarray, allowed: np.ndarray | None = None, positive: bool = False
    ) -> BestFit:
        """The hypothesis of least WRSS per kernel among the valid ones.

        Equivalent to reducing :meth:`fit` over the hypotheses, but memory stays within one
        block of kernels however many kernels and hypotheses there are.

        Parameters
        ----------
        subsets : ndarray of int, shape (H, s)
            Indices into the pool, one row per hypothesis, all of the same size ``s >= 1``.
        allowed : ndarray of bool, shape (K, T), optional
            Which pool terms each kernel may use.
        positive : bool
            Only hypotheses whose term coefficients are all positive are valid.

        Returns
        -------
        BestFit
        """
        subsets = np.asarray(subsets, dtype=np.intp)
        n_kernels = self.rhs.shape[0]
        index = np.empty(n_kernels, dtype=np.intp)
        wrss = np.empty(n_kernels)
        constants = np.empty(n_kernels)
        coefficients = np.empty((n_kernels, subsets.shape[1]))
        for rows, block, solution, block_wrss in self._blocks(subsets):
            scaled = solution / block._term_scale(subsets)
            valid = np.isfinite(block_wrss)
            if positive:
                valid &= np.all(scaled > 0, axis=2)
            if allowed is not None:
                valid &= np.all(allowed[rows][:, subsets], axis=2)
            candidate = np.where(valid, block_wrss, np.inf)
            local = np.arange(len(rows))
            chosen = np.argmin(candidate, axis=1)
            index[rows] = chosen
            wrss[rows] = candidate[local, chosen]
            means = block.term_means[local[:, None], subsets[chosen]]
            constants[rows] = block.value_mean - np.sum(solution[local, chosen] * means, axis=1)
            coefficients[rows] = scaled[local, chosen]
        return BestFit(index, wrss, constants, coefficients)

    def _blocks(self, subsets: np.ndarray):
        """Per block of kernels: (rows, their moments, scaled solutions (k, H, s), WRSS (k, H))."""
        n_kernels = self.rhs.shape[0]
        n_hyp, size = subsets.shape
        step = _block_rows(self, n_hyp, size)
        for start in range(0, n_kernels, step):
            rows = np.arange(start, min(start + step, n_kernels))
            block = self.rows(rows) if len(rows) < n_kernels else self
            if size == 1:
                solution, explained = _solve_singles(block, subsets[:, 0])
            else:
                solution, explained = _solve_subsets(block.gram(), block.rhs, subsets)
            residual = block.value_ss[:, None] - explained
            wrss = np.where(np.isnan(residual), np.inf, np.maximum(residual, 0.0))
            yield rows, block, solution, wrss

    def _term_scale(self, subsets: np.ndarray) -> np.ndarray:
        """Scale of each subset's terms, broadcastable to (K, H, s)."""
        return self.scale[subsets][None] if self.shared else self.scale[:, subsets]


def _block_rows(moments: PoolMoments, n_hyp: int, size: int) -> int:
    """Kernels per block so that the gathered systems stay within the memory budget."""
    n_terms = moments.pool.shape[-2]
    per_kernel = max(n_hyp * size * size, n_terms * n_terms if size > 1 else 0, 1)
    return max(1, _BLOCK_ELEMENTS // per_kernel)


def _solve_singles(moments: PoolMoments, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One-term hypotheses: a division per kernel and term."""
    diagonal, right = moments.variances[:, terms], moments.rhs[:, terms]
    # A term (nearly) constant over the weighted points cannot be told from the constant.
    degenerate = ~(diagonal > 1e-12 * moments.squares[:, terms])
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.where(degenerate, np.nan, right / diagonal)
    return x[..., None], x * right


def _solve_subsets(
    gram: np.ndarray, rhs: np.ndarray, subsets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Solve the normal equations of every subset; returns (solution, solution . rhs)."""
    size = subsets.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
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


def rows_times(rows: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``rows @ matrix``, every row's product the same whichever other rows come along.

    BLAS multiplies a matrix of several rows (``gemm``) with another rounding than a single
    row (``gemv``), and a kernel's moments must not depend on how many kernels are fitted with
    it (a chunk of a series, a cluster worker's share): a single row is multiplied as a
    matrix of two.
    """
    if rows.shape[0] == 1:
        return (np.concatenate([rows, rows]) @ matrix)[:1]
    return rows @ matrix


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
