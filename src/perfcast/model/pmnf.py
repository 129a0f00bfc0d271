"""The default modeler: a search of the performance model normal form (PMNF).

One parameter: every building block ``x^i * log2(x)^j`` (Extra-P's 42, plus decreasing ones for
strong scaling) alone and in pairs. Several parameters: each parameter's candidate factors are
ranked on its marginal means (the means over all other parameters, which keep the parameter's own
factors whatever the other parameters do), led by a pair of blocks where the marginal needs two
(``n/p + p`` falls, then rises, in ``p``); then sums and products of the best candidates of every
parameter are searched together, any number of parameters, in one pass for all kernels.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from perfcast.core.function import Factor, Model
from perfcast.model.base import SeriesModeler
from perfcast.model.fitting.assembly import build_models
from perfcast.model.fitting.blocks import EXTRAP_BUILDING_BLOCKS, Block, evaluate_blocks
from perfcast.model.fitting.candidates import (
    candidate_choices_ahead,
    candidate_factors,
    combine_factors,
    decreasing_trend,
    search_one_parameter,
)
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.selection import Choice, SearchSettings, search
from perfcast.model.settings import check_int

# How many candidate factors of each parameter the multi-parameter search combines.
CANDIDATES_BY_DIMENSION = {2: 8, 3: 2}
# Hypotheses of more than two terms combine only this many best candidates per parameter (their
# number grows with the cube of the pool).
DEEP_CANDIDATES = 3
# Most terms of a multi-parameter hypothesis, and most parameters in one term: beyond these the
# number of hypotheses explodes (six parameters would give C(63, 6) of them).
MAX_TERMS = 4
MAX_TERM_PARAMETERS = 3


class PMNFModeler(SeriesModeler):
    """Fit PMNF models to every kernel of an experiment (registered as ``pmnf``).

    Its search reports every chunk of kernels to :attr:`progress`.

    Parameters
    ----------
    negative_exponents : bool, optional
        True always adds decreasing building blocks (``x^-1``, ...), False never; None (default)
        adds them for the kernels whose data decreases with the parameter and, with one
        parameter, for those the growing blocks leave with a significant lack of fit.
    max_terms : int, optional
        Most terms besides the constant, 1 to 4; default 2 for one parameter, else the number
        of parameters (at least 3).
    candidates : int, optional
        Candidate factors per parameter combined in the multi-parameter search, 1 to 42.
    alpha : float
        Significance level for adding a term, in (0, 1) (smaller: fewer terms under noise).
    positive_terms : bool
        Require positive term coefficients.
    location : str
        How a point's repetitions give its value: ``adaptive`` (default) picks the mean,
        midrange, trimmed mean or median from the noise shape the whole series shows (see
        :mod:`perfcast.model.fitting.location`); or name one of them.

    Attributes
    ----------
    models_ : list of Model
        One model per kernel (and metric), after :meth:`fit`.
    """

    name = "pmnf"
    reports_progress = True

    def __init__(
        self,
        negative_exponents: bool | None = None,
        max_terms: int | None = None,
        candidates: int | None = None,
        alpha: float = 0.05,
        positive_terms: bool = True,
        location: str = "adaptive",
    ):
        self.negative_exponents = negative_exponents
        self.max_terms = max_terms
        self.candidates = candidates
        self.alpha = alpha
        self.positive_terms = positive_terms
        self.location = location
        self._check_common()
        check_int("max_terms", max_terms, 1, MAX_TERMS, optional=True)
        check_int("candidates", candidates, 1, len(EXTRAP_BUILDING_BLOCKS), optional=True)

    def _settings(self) -> SearchSettings:
        return SearchSettings(alpha=self.alpha, positive_terms=self.positive_terms)

    def _model_data(self, data: FitData) -> list[Model]:
        series = data.series
        if len(series.parameters) == 1:
            choice, pool, shapes = self._fit_single_parameter(data)
            kernel_shapes = [shapes] * len(series.kernels)
            kernel_pool = np.broadcast_to(pool, (len(series.kernels), *pool.shape))
        else:
            kernel_pool, kernel_shapes, subsets = self._multi_parameter_space(data)
            choice = search(
                data, kernel_pool, subsets, None, self._settings(), progress=self.progress
            )
        return build_models(data, choice, kernel_pool, kernel_shapes)

    def _choices_ahead(self, data: FitData) -> tuple[int, ...]:
        """Whether any kernel decreases (one parameter), or the choices of
        :func:`candidate_factors` for every parameter (several)."""
        series = data.series
        if len(series.parameters) == 1:
            return (int(decreasing_trend(series.points[:, 0], data.means, data).any()),)
        return tuple(
            choice
            for j in range(len(series.parameters))
            for choice in candidate_choices_ahead(data, j)
        )

    def _fit_single_parameter(self, data: FitData) -> tuple[Choice, np.ndarray, list]:
        """Search the blocks alone and in pairs (see :func:`search_one_parameter`)."""
        x = data.series.points[:, 0]
        decreasing = decreasing_trend(x, data.means, data)
        choice, blocks = search_one_parameter(
            data,
            x,
            decreasing,
            self.negative_exponents,
            self._subsets,
            self._settings(),
            self.progress,
        )
        shapes = [(Factor(data.series.parameters[0], e, j),) for e, j in blocks]
        return choice, evaluate_blocks(blocks, x), shapes

    def _subsets(self, blocks: Sequence[Block]) -> list[np.ndarray]:
        """Hypotheses of 1 to ``max_terms`` (default 2) blocks, by size."""
        return [
            np.array(list(itertools.combinations(range(len(blocks)), size)), dtype=np.intp)
            for size in range(1, (self.max_terms or 2) + 1)
        ]

    def _multi_parameter_space(self, data: FitData):
        series = data.series
        n_params = len(series.parameters)
        n_kernels = len(series.kernels)
        per_parameter = self.candidates or CANDIDATES_BY_DIMENSION.get(n_params, 1)
        candidates = [
            candidate_factors(data, j, per_parameter, self.negative_exponents, self._settings())
            for j in range(n_params)
        ]
        widths = (
            range(1, n_params + 1) if n_params <= MAX_TERMS else range(1, MAX_TERM_PARAMETERS + 1)
        )
        slots = [
            combo
            for size in widths
            for params in itertools.combinations(range(n_params), size)
            for combo in itertools.product(
                *[[(j, r) for r in range(per_parameter)] for j in params]
            )
        ]
        pool, shapes = combine_factors(candidates, slots, n_kernels, len(series.points))
        max_terms = self.max_terms or min(max(3, n_params), MAX_TERMS)
        shallow = [t for t, slot in enumerate(slots) if all(r < DEEP_CANDIDATES for _, r in slot)]
        subsets = [
            np.array(
                list(itertools.combinations(range(len(slots)) if size <= 2 else shallow, size)),
                dtype=np.intp,
            )
            for size in range(1, max_terms + 1)
        ]
        return pool, shapes, subsets
