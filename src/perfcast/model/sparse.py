"""Sparse modeler: EPMNF predictors plus interaction terms, chosen by LASSO.

The predictors (seed paper ``hybrid-static-dynamic-modeling.md``, eq. 6-7) are every building
block of every parameter plus products of 2, 3 and 4 factors over distinct parameters. Products
use each parameter's best-ranked factors (ranked on its marginal means), which keeps the set in the
hundreds instead of the ``42^w`` of all combinations. A positive LASSO path (LARS) of every kernel's
weighted data screens them: the first predictors to enter the path form a small per-kernel pool,
whose subsets are then refitted by least squares and chosen by the same forward F-tests as the
PMNF search (:mod:`perfcast.model.fitting.selection`), all kernels at once. LASSO alone picks
poor supports among strongly correlated predictors such as ``x^2`` and ``x^(9/4)``; the refit
fixes that.
"""

from __future__ import annotations

import itertools

import numpy as np
from sklearn.linear_model import lars_path

from perfcast.core.function import Factor, Model
from perfcast.core.progress import ProgressBar
from perfcast.model.base import SeriesModeler
from perfcast.model.fitting.assembly import build_models
from perfcast.model.fitting.blocks import EXTRAP_BUILDING_BLOCKS, evaluate_blocks
from perfcast.model.fitting.candidates import (
    allowed_blocks,
    candidate_choices_ahead,
    candidate_factors,
    combine_factors,
    decreasing_trend,
    marginal_means,
)
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.selection import SearchSettings, search
from perfcast.model.settings import check_int

MAX_INTERACTION = 4
# Bounds of the exhaustive refit: C(screened, max_terms) hypotheses per kernel.
MAX_SCREENED = 16
MAX_TERMS = 6


class SparseModeler(SeriesModeler):
    """LASSO over EPMNF predictors and their interactions, refitted by least squares
    (registered as ``sparse``).

    Parameters
    ----------
    interaction_candidates : int
        Best-ranked factors per parameter used to build interaction terms, 1 to 42.
    max_interaction : int
        Most factors in one interaction term (2 to 4).
    screened : int
        Predictors per kernel kept from the LASSO path for the exhaustive refit, 1 to 16.
    max_terms : int
        Most terms besides the constant, 1 to 6.
    alpha : float
        Significance level for adding a term in the refit, in (0, 1).
    negative_exponents : bool, optional
        As in :class:`~perfcast.model.pmnf.PMNFModeler`.
    positive_terms : bool
        Restrict the LASSO to positive coefficients.
    location : str
        As in :class:`~perfcast.model.pmnf.PMNFModeler`.

    Attributes
    ----------
    models_ : list of Model
        One model per kernel, after :meth:`fit`.
    predictors_ : int
        Size of the predictor set of the last series fitted (in this process: not set when
        the kernels were modeled in chunks elsewhere).
    """

    name = "sparse"

    def __init__(
        self,
        interaction_candidates: int = 3,
        max_interaction: int = MAX_INTERACTION,
        screened: int = 8,
        max_terms: int = 4,
        alpha: float = 0.05,
        negative_exponents: bool | None = None,
        positive_terms: bool = True,
        location: str = "adaptive",
    ):
        self.interaction_candidates = interaction_candidates
        self.max_interaction = max_interaction
        self.screened = screened
        self.max_terms = max_terms
        self.alpha = alpha
        self.negative_exponents = negative_exponents
        self.positive_terms = positive_terms
        self.location = location
        self._check_common()
        check_int("interaction_candidates", interaction_candidates, 1, len(EXTRAP_BUILDING_BLOCKS))
        check_int("max_interaction", max_interaction, 2, MAX_INTERACTION)
        check_int("screened", screened, 1, MAX_SCREENED)
        check_int("max_terms", max_terms, 1, MAX_TERMS)

    def _model_data(self, data: FitData) -> list[Model]:
        pool, shapes, allowed = self._predictors(data)
        self.predictors_ = pool.shape[1]
        progress = ProgressBar(len(pool), unit="kernels screened")
        screened = []
        for k in range(len(pool)):
            screened.append(self._screen(data, k, pool[k], allowed[k]))
            progress.advance()
        progress.close()
        order = np.stack(screened)
        kept = np.take_along_axis(pool, order[:, :, None], axis=1)
        kept_shapes = [[shapes[k][t] for t in row] for k, row in enumerate(order)]
        subsets = [
            np.array(list(itertools.combinations(range(order.shape[1]), size)), dtype=np.intp)
            for size in range(1, min(self.max_terms, order.shape[1]) + 1)
        ]
        settings = SearchSettings(alpha=self.alpha, positive_terms=self.positive_terms)
        choice = search(data, kept, subsets, None, settings)
        return build_models(data, choice, kept, kept_shapes)

    @staticmethod
    def _decreasing(data: FitData, j: int) -> np.ndarray:
        """Kernels whose means along parameter ``j`` (over the others) clearly decrease."""
        xs, marginal, _ = marginal_means(data.series.points, data.means, j)
        return decreasing_trend(xs, marginal, data)

    def _choices_ahead(self, data: FitData) -> tuple[int, ...]:
        """Whether any kernel decreases along each parameter, then, with several parameters,
        the choices of :func:`candidate_factors` for every parameter."""
        n_params = len(data.series.parameters)
        ahead = tuple(int(self._decreasing(data, j).any()) for j in range(n_params))
        if n_params == 1:
            return ahead
        return ahead + tuple(c for j in range(n_params) for c in candidate_choices_ahead(data, j))

    def _predictors(self, data: FitData):
        """Per-kernel predictor pool: all blocks of every parameter, then interactions."""
        series = data.series
        n_kernels, n_points = data.means.shape
        pools, allowed = [], []
        shapes: list[list[tuple[Factor, ...]]] = [[] for _ in range(n_kernels)]
        for j, name in enumerate(series.parameters):
            decreasing = self._decreasing(data, j)
            blocks, permitted = allowed_blocks(self.negative_exponents, decreasing)
            pools.append(
                np.broadcast_to(
                    evaluate_blocks(blocks, series.points[:, j]), (n_kernels, len(blocks), n_points)
                )
            )
            allowed.append(permitted)
            for k in range(n_kernels):
                shapes[k].extend((Factor(name, *b),) for b in blocks)
        n_params = len(series.parameters)
        if n_params > 1:
            count = self.interaction_candidates
            candidates = [
                candidate_factors(data, j, count, self.negative_exponents) for j in range(n_params)
            ]
            slots = [
                combo
                for width in range(2, min(self.max_interaction, n_params) + 1)
                for params in itertools.combinations(range(n_params), width)
                for combo in itertools.product(*[[(j, r) for r in range(count)] for j in params])
            ]
            products, product_shapes = combine_factors(candidates, slots, n_kernels, n_points)
            pools.append(products)
            allowed.append(np.ones((n_kernels, len(slots)), dtype=bool))
            for k in range(n_kernels):
                shapes[k].extend(product_shapes[k][t] for t in range(len(slots)))
        return np.concatenate(pools, axis=1), shapes, np.concatenate(allowed, axis=1)

    def _screen(self, data: FitData, k: int, pool: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """Indices of the first ``screened`` predictors entering kernel ``k``'s LASSO path."""
        y, w = data.means[k], data.weights[k]
        share = w / w.sum()
        columns = np.flatnonzero(allowed)
        design = pool[columns].T
        root = np.sqrt(share)
        scaled_x = (design - share @ design) * root[:, None]
        norms = np.linalg.norm(scaled_x, axis=0)
        usable = norms > 1e-12 * max(norms.max(), 1e-300)
        scaled_x = scaled_x[:, usable] / norms[usable]
        scaled_y = (y - share @ y) * root
        _, _, path = lars_path(
            scaled_x, scaled_y, method="lasso", positive=self.positive_terms,
            max_iter=2 * self.screened,
        )  # fmt: skip
        entered = np.flatnonzero(np.any(path != 0, axis=1))
        first_step = np.argmax(path[entered] != 0, axis=1)
        ranked = list(columns[usable][entered[np.argsort(first_step, kind="stable")]])
        # Fill up with the predictors most correlated with the data, so every kernel's pool
        # has the same size.
        correlation = np.abs(scaled_x.T @ scaled_y)
        for index in columns[usable][np.argsort(-correlation, kind="stable")]:
            if len(ranked) >= self.screened:
                break
            if index not in ranked:
                ranked.append(index)
        return np.array(ranked[: self.screened], dtype=np.intp)
