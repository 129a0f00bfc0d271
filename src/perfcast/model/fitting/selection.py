"""Search a pool of candidate terms for the best model of every kernel.

Hypotheses are a constant plus 1, 2, ... terms from the pool. All hypotheses of one size are
fitted at once for all kernels (:class:`~perfcast.model.fitting.least_squares.PoolMoments`); the
best of each size competes with the model chosen so far in a forward F-test whose noise estimate
pools the repetitions' scatter (pure error) with the residuals, so a bigger model must earn its
terms against the measured noise. A size is only tried for kernels whose current model still
shows a significant lack of fit.

Every kernel's search is its own (the pool, the hypotheses and the noise prior are decided for
the whole series beforehand), so kernels are searched in chunks of :data:`CHUNK_KERNELS`: the
pool's moments, ``K x T`` arrays, then take memory for one chunk, not for all kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.least_squares import PoolMoments
from perfcast.model.fitting.location import NOISE_FLOOR

#: Kernels searched together; a power of two, so that the chunks' matrix products compute every
#: kernel's moments as one product over all kernels does.
CHUNK_KERNELS = 4096


@dataclass
class Choice:
    """The chosen hypothesis of every kernel.

    Attributes
    ----------
    terms : list of ndarray of int
        Per kernel, indices of the chosen pool terms (empty for a constant model).
    constants : ndarray, shape (K,)
    coefficients : list of ndarray
        Per kernel, the coefficients of the chosen terms.
    wrss : ndarray, shape (K,)
        Weighted residual sum of squares of the chosen hypotheses.
    """

    terms: list[np.ndarray]
    constants: np.ndarray
    coefficients: list[np.ndarray]
    wrss: np.ndarray

    def lacks_fit(self, data: FitData, settings: SearchSettings) -> np.ndarray:
        """Kernels whose chosen model still leaves a significant lack of fit, shape (K,)."""
        dof = data.means.shape[1] - 1 - np.array([len(t) for t in self.terms])
        return lacks_fit(self.wrss, dof, data, settings)

    def replace_rows(self, rows: np.ndarray, other: Choice) -> None:
        """Take kernel ``rows[i]``'s hypothesis from kernel ``i`` of ``other`` (same pool)."""
        for local, kernel in enumerate(rows):
            self.terms[kernel] = other.terms[local]
            self.coefficients[kernel] = other.coefficients[local]
        self.constants[rows] = other.constants
        self.wrss[rows] = other.wrss

    @classmethod
    def concatenate(cls, parts: list[Choice]) -> Choice:
        """The hypotheses of the kernels of ``parts``, in order."""
        return cls(
            [terms for part in parts for terms in part.terms],
            np.concatenate([part.constants for part in parts]),
            [c for part in parts for c in part.coefficients],
            np.concatenate([part.wrss for part in parts]),
        )


@dataclass
class SearchSettings:
    """Knobs of the forward search.

    Attributes
    ----------
    alpha : float
        Family-wise significance level a bigger model's improvement must reach in the F-test;
        the test of the best of ``H`` hypotheses of one size uses ``alpha / H`` (Bonferroni),
        since the best of many candidates improves the fit by chance more than any one does.
    lack_of_fit_alpha : float
        A kernel tries bigger models only while its lack-of-fit p-value is below this.
    positive_terms : bool
        Reject hypotheses with a non-positive term coefficient (cost terms add up).
    """

    alpha: float = 0.05
    lack_of_fit_alpha: float = 0.05
    positive_terms: bool = True


def search(
    data: FitData,
    pool: np.ndarray,
    subsets_by_size: list[np.ndarray],
    allowed: np.ndarray | None,
    settings: SearchSettings,
    chunk: int = CHUNK_KERNELS,
    progress: Callable[[int], None] | None = None,
) -> Choice:
    """Choose a model for every kernel, ``chunk`` kernels at a time.

    Parameters
    ----------
    data : FitData
    pool : ndarray, shape (T, P) or (K, T, P)
        Candidate terms at the points.
    subsets_by_size : list of ndarray
        Element ``s - 1`` holds the hypotheses with ``s`` terms, shape (H_s, s).
    allowed : ndarray of bool, shape (K, T), optional
        Which pool terms each kernel may use.
    settings : SearchSettings
    chunk : int
        Kernels searched together (the choice does not depend on it).
    progress : callable, optional
        Called with the number of kernels of every chunk searched.

    Returns
    -------
    Choice
    """
    n_kernels = data.means.shape[0]
    if n_kernels <= chunk:
        choice = _search_chunk(data, pool, subsets_by_size, allowed, settings)
        if progress is not None:
            progress(n_kernels)
        return choice
    parts = []
    for start in range(0, n_kernels, chunk):
        rows = np.arange(start, min(start + chunk, n_kernels))
        parts.append(
            _search_chunk(
                data.rows(rows),
                pool if pool.ndim == 2 else pool[rows],
                subsets_by_size,
                None if allowed is None else allowed[rows],
                settings,
            )
        )
        if progress is not None:
            progress(len(rows))
    return Choice.concatenate(parts)


def _search_chunk(
    data: FitData,
    pool: np.ndarray,
    subsets_by_size: list[np.ndarray],
    allowed: np.ndarray | None,
    settings: SearchSettings,
) -> Choice:
    """:func:`search` of all kernels of ``data`` at once."""
    n_kernels, n_points = data.means.shape
    moments = PoolMoments(pool, data.means, data.weights)
    wrss = moments.constant_wrss()
    constants = moments.value_mean.copy()
    terms: list[np.ndarray] = [np.empty(0, dtype=np.intp) for _ in range(n_kernels)]
    coefficients: list[np.ndarray] = [np.empty(0) for _ in range(n_kernels)]
    size_now = np.zeros(n_kernels, dtype=int)

    for size, subsets in enumerate(subsets_by_size, start=1):
        if n_points <= size + 1 or len(subsets) == 0:
            break
        active = np.flatnonzero(lacks_fit(wrss, n_points - size_now - 1, data, settings))
        if len(active) == 0:
            break
        fit = moments.rows(active).best(
            subsets, None if allowed is None else allowed[active], settings.positive_terms
        )
        best, best_wrss = fit.index, fit.wrss
        accept = _significant(
            wrss[active],
            best_wrss,
            size - size_now[active],
            data,
            active,
            size,
            settings.alpha / len(subsets),
        )
        for local in np.flatnonzero(accept):
            kernel = active[local]
            terms[kernel] = subsets[best[local]]
            coefficients[kernel] = fit.coefficients[local]
            constants[kernel] = fit.constants[local]
        wrss[active[accept]] = best_wrss[accept]
        size_now[active[accept]] = size
    return Choice(terms, constants, coefficients, wrss)


def lacks_fit(
    wrss: np.ndarray, dof: np.ndarray, data: FitData, settings: SearchSettings
) -> np.ndarray:
    """Kernels whose model (residuals ``wrss`` with ``dof`` degrees of freedom) may improve.

    True where the lack-of-fit F-test against the (moderated) pure error rejects the model at
    ``settings.lack_of_fit_alpha``, or where there are no repetitions to test against; never
    where no residual degree of freedom is left.
    """
    no_replicates = data.pure_dof <= 0
    noise_dof = np.maximum(data.noise_dof, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        pure = np.maximum(data.noise_ss / noise_dof, NOISE_FLOOR)
        ratio = (wrss / np.maximum(dof, 1)) / pure
    p = special.fdtrc(np.maximum(dof, 1), noise_dof, ratio)
    return (no_replicates | (p < settings.lack_of_fit_alpha)) & (dof > 0)


def _significant(
    wrss_now: np.ndarray,
    wrss_new: np.ndarray,
    extra_terms: np.ndarray,
    data: FitData,
    rows: np.ndarray,
    size: int,
    alpha: float,
) -> np.ndarray:
    """Does the bigger model reduce the residuals beyond the noise?

    With repetitions: a forward F-test against the noise they measure. Without: the small-sample
    corrected Akaike criterion (AICc), since three or so residual degrees of freedom make any
    F-test too weak to accept even an obvious trend.
    """
    n_points = data.means.shape[1]
    residual_dof = data.noise_dof[rows] + n_points - size - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        sigma2 = np.maximum((data.noise_ss[rows] + wrss_new) / residual_dof, NOISE_FLOOR)
        ratio = (wrss_now - wrss_new) / extra_terms / sigma2
    critical = special.fdtri(extra_terms, np.maximum(residual_dof, 1), 1.0 - alpha)
    f_test = ratio > critical
    aicc = _aicc(wrss_new, size + 1, n_points) < _aicc(wrss_now, size + 1 - extra_terms, n_points)
    accept = np.where(data.pure_dof[rows] > 0, f_test, aicc)
    return np.isfinite(wrss_new) & (residual_dof > 0) & accept


def _aicc(wrss: np.ndarray, coefficients: np.ndarray | int, n_points: int) -> np.ndarray:
    """AICc of weighted least-squares fits with ``coefficients`` parameters."""
    k = np.asarray(coefficients, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        correction = np.where(n_points - k - 1 > 0, 2 * k * (k + 1) / (n_points - k - 1), np.inf)
        fit = n_points * np.log(np.maximum(wrss / n_points, NOISE_FLOOR))
    return fit + 2 * k + correction
