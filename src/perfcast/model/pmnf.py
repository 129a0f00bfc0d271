"""The default modeler: a search of the performance model normal form (PMNF).

One parameter: every building block ``x^i * log2(x)^j`` (Extra-P's 42, plus decreasing ones for
strong scaling) alone and in pairs. Several parameters: each parameter's candidate factors are
ranked on its marginal means (the means over all other parameters, which keep the parameter's own
factors whatever the other parameters do), led by a pair of blocks where the marginal needs two
(``n/p + p`` falls, then rises, in ``p``); then sums and products of the best candidates of every
parameter are searched together, any number of parameters, in one pass for all kernels.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from perfcast.errors import InputError
from perfcast.experiment import Series
from perfcast.model.base import SeriesModeler
from perfcast.model.batched import PoolMoments
from perfcast.model.data import FitData
from perfcast.model.function import Factor, Model, Term
from perfcast.model.hypotheses import Block, building_blocks, evaluate_blocks
from perfcast.model.location import NOISE_FLOOR
from perfcast.model.quality import assess
from perfcast.model.search import Choice, SearchSettings, search

MIN_VALUES_PER_PARAMETER = 3
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
    """Fit PMNF models to every kernel of an experiment.

    Parameters
    ----------
    negative_exponents : bool, optional
        True always adds decreasing building blocks (``x^-1``, ...), False never; None (default)
        adds them for the kernels whose data decreases with the parameter and, with one
        parameter, for those the growing blocks leave with a significant lack of fit.
    max_terms : int, optional
        Most terms besides the constant; default 2 for one parameter, else the number of
        parameters (at least 3).
    candidates : int, optional
        Candidate factors per parameter combined in the multi-parameter search.
    alpha : float
        Significance level for adding a term (smaller: fewer terms under noise).
    positive_terms : bool
        Require positive term coefficients.
    location : str
        How a point's repetitions give its value: ``adaptive`` (default) picks the mean,
        midrange, trimmed mean or median from the noise shape the whole series shows (see
        :mod:`perfcast.model.location`); or name one of them.

    Attributes
    ----------
    models_ : list of Model
        One model per kernel (and metric), after :meth:`fit`.
    """

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

    def _settings(self) -> SearchSettings:
        return SearchSettings(alpha=self.alpha, positive_terms=self.positive_terms)

    def _fit_series(self, series: Series, source: str | None) -> list[Model]:
        check_points(series, source)
        data = self._fit_data(series, source)
        if len(series.parameters) == 1:
            choice, pool, shapes = self._fit_single_parameter(data)
            kernel_shapes = [shapes] * len(series.kernels)
            kernel_pool = np.broadcast_to(pool, (len(series.kernels), *pool.shape))
        else:
            kernel_pool, kernel_shapes, subsets = self._multi_parameter_space(data)
            choice = search(data, kernel_pool, subsets, None, self._settings())
        return build_models(data, choice, kernel_pool, kernel_shapes)

    def _fit_single_parameter(self, data: FitData) -> tuple[Choice, np.ndarray, list]:
        """Search the blocks alone and in pairs (see :func:`search_one_parameter`)."""
        x = data.series.points[:, 0]
        decreasing = decreasing_trend(x, data.means, data)
        choice, blocks = search_one_parameter(
            data, x, decreasing, self.negative_exponents, self._subsets, self._settings()
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


def search_one_parameter(
    data: FitData,
    x: np.ndarray,
    decreasing: np.ndarray,
    negative_exponents: bool | None,
    subsets_of: Callable[[Sequence[Block]], list[np.ndarray]],
    settings: SearchSettings,
) -> tuple[Choice, tuple[Block, ...]]:
    """Search the building blocks of one parameter (values ``x``) for every kernel of ``data``.

    With ``negative_exponents=None``, a kernel whose data never clearly decreases
    (``decreasing``) first searches the growing blocks only; if its best model still lacks fit,
    it searches again with the decreasing blocks too (``c + a/p + b*log2(p)`` may grow at every
    measured point) and keeps that model when it fits better. Kernels without repetitions keep
    it only when it is exact: their lack of fit cannot be told from noise.

    Returns
    -------
    choice : Choice
        The chosen hypotheses, as indices into ``blocks``.
    blocks : tuple of Block
        The blocks searched (a prefix of ``building_blocks(True)``).
    """
    blocks, allowed = allowed_blocks(negative_exponents, decreasing)
    choice = search(data, evaluate_blocks(blocks, x), subsets_of(blocks), allowed, settings)
    if negative_exponents is None:
        blocks = building_blocks(True)  # the first pass's blocks are a prefix of these
        retry = np.flatnonzero(~decreasing & choice.lacks_fit(data, settings))
        if len(retry):
            pool, subsets = evaluate_blocks(blocks, x), subsets_of(blocks)
            again = search(data.rows(retry), pool, subsets, None, settings)
            better = again.wrss < choice.wrss[retry]
            # Without repetitions nothing tells a lack of fit from noise: take the decreasing
            # blocks only where they make the model exact (deterministic counts).
            exact = again.wrss <= NOISE_FLOOR * len(x)
            better &= (data.pure_dof[retry] > 0) | exact
            choice.replace_rows(retry[better], _rows_of(again, np.flatnonzero(better)))
    return choice, blocks


def _rows_of(choice: Choice, rows: np.ndarray) -> Choice:
    """The hypotheses of some kernels of ``choice``."""
    return Choice(
        [choice.terms[k] for k in rows],
        choice.constants[rows],
        [choice.coefficients[k] for k in rows],
        choice.wrss[rows],
    )


def allowed_blocks(
    negative_exponents: bool | None, decreasing: np.ndarray
) -> tuple[tuple[Block, ...], np.ndarray]:
    """Blocks to search and, per kernel, which of them it may use.

    Parameters
    ----------
    negative_exponents : bool or None
        True: decreasing blocks for every kernel; False: for none; None: for the kernels whose
        data decreases (``decreasing``, shape (K,)).
    """
    negative = negative_exponents is not False and bool(negative_exponents or decreasing.any())
    blocks = building_blocks(negative)
    is_negative = np.array([e < 0 for e, _ in blocks])
    if negative_exponents:
        return blocks, np.ones((len(decreasing), len(blocks)), dtype=bool)
    return blocks, ~is_negative[None, :] | decreasing[:, None]


@dataclass
class CandidateFactors:
    """The best-ranked factors of one parameter for every kernel.

    Attributes
    ----------
    values : ndarray, shape (K, m, P)
        The factors at the measured points.
    shapes : list of list of Factor
        Per kernel, the ``m`` factors, best first.
    """

    values: np.ndarray
    shapes: list[list[Factor]]


def candidate_factors(
    data: FitData,
    j: int,
    count: int,
    negative_exponents: bool | None,
    settings: SearchSettings | None = None,
) -> CandidateFactors:
    """Rank the blocks of parameter ``j`` on its marginal means; keep the best ``count``.

    Blocks rank by how well each alone fits the marginal means. Where two blocks together fit
    significantly better than any one (``n/p + p`` has the marginal ``a/p + b*p``, which falls
    and then rises), that pair is put first: no single block describes such a marginal, so
    neither member need rank high alone.
    """
    series = data.series
    xs, marginal_data = marginal_fit_data(data, j)
    marginal = marginal_data.means
    decreasing = decreasing_trend(xs, marginal, marginal_data)
    blocks, allowed = allowed_blocks(negative_exponents, decreasing)
    singles = np.arange(len(blocks))[:, None]
    fit = PoolMoments(evaluate_blocks(blocks, xs), marginal, marginal_data.weights).fit(singles)
    score = np.where(allowed & (fit.coefficients[:, :, 0] > 0), fit.wrss, np.inf)
    choice, pair_blocks = search_one_parameter(
        marginal_data,
        xs,
        decreasing,
        negative_exponents,
        _singles_and_pairs,
        settings or SearchSettings(),
    )
    # Both are prefixes of building_blocks(True); blocks only the pair search saw rank last.
    missing = len(pair_blocks) - len(blocks)
    if missing > 0:
        blocks = pair_blocks
        score = np.pad(score, ((0, 0), (0, missing)), constant_values=np.inf)
    order = np.argsort(score, axis=1, kind="stable")
    for k, terms in enumerate(choice.terms):
        if len(terms) == 2:  # a pair the marginal needs leads
            order[k] = np.concatenate([terms, order[k][~np.isin(order[k], terms)]])
    top = order[:, :count]
    values = evaluate_blocks(blocks, series.points[:, j])[top]
    factors = [Factor(series.parameters[j], *b) for b in blocks]
    return CandidateFactors(values, [[factors[b] for b in row] for row in top])


def _singles_and_pairs(blocks: Sequence[Block]) -> list[np.ndarray]:
    indices = range(len(blocks))
    return [
        np.array([[b] for b in indices], dtype=np.intp),
        np.array(list(itertools.combinations(indices, 2)), dtype=np.intp),
    ]


class SlotShapes:
    """``shapes[k][t]``: the factors of pool term ``t`` of kernel ``k``, built on demand."""

    def __init__(self, candidates: Sequence[CandidateFactors], slots: Sequence[Slot]):
        self.candidates = candidates
        self.slots = slots

    def __getitem__(self, kernel: int) -> _KernelSlots:
        return _KernelSlots(self, kernel)


class _KernelSlots:
    def __init__(self, shapes: SlotShapes, kernel: int):
        self.shapes, self.kernel = shapes, kernel

    def __getitem__(self, slot: int) -> tuple[Factor, ...]:
        candidates = self.shapes.candidates
        return tuple(candidates[j].shapes[self.kernel][r] for j, r in self.shapes.slots[slot])


Slot = tuple[tuple[int, int], ...]


def combine_factors(
    candidates: Sequence[CandidateFactors], slots: Sequence[Slot], n_kernels: int, n_points: int
) -> tuple[np.ndarray, SlotShapes]:
    """Per-kernel pool of product terms; a slot names ``(parameter, candidate rank)`` pairs."""
    pool = np.ones((n_kernels, len(slots), n_points))
    for t, slot in enumerate(slots):
        for j, r in slot:
            pool[:, t] *= candidates[j].values[:, r]
    return pool, SlotShapes(candidates, slots)


def check_points(series: Series, source: str | None) -> None:
    """Reject data no PMNF model can be fitted to, naming the problem."""
    for j, name in enumerate(series.parameters):
        values = series.points[:, j]
        if np.any(values <= 0):
            raise InputError(
                f"parameter '{name}' has the value {values[values <= 0][0]:g}; PMNF terms "
                "(powers and log2) need positive parameter values",
                source,
            )
        distinct = len(np.unique(values))
        if distinct < MIN_VALUES_PER_PARAMETER:
            raise InputError(
                f"kernel '{series.kernels[0]}' was measured at {distinct} value(s) of '{name}'; "
                f"a model needs at least {MIN_VALUES_PER_PARAMETER} (5 recommended)",
                source,
            )
        if len(series.parameters) > 1:
            xs, _, _ = marginal_means(series.points, np.zeros((1, len(series.points))), j)
            if len(xs) < MIN_VALUES_PER_PARAMETER:
                raise InputError(
                    f"no {MIN_VALUES_PER_PARAMETER} measurements differ in '{name}' alone (the "
                    "other parameters fixed), so its effect cannot be told apart from theirs; "
                    f"measure at least {MIN_VALUES_PER_PARAMETER} values of '{name}' with the "
                    "others held constant",
                    source,
                )


def marginal_means(
    points: np.ndarray, means: np.ndarray, j: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means along parameter ``j``, averaged over the other parameters.

    Uses every combination of the other parameters measured at all values of parameter ``j``
    (a full grid uses them all); when there is none, the line with most values of ``j``.

    Returns
    -------
    xs : ndarray, shape (V,)
        Values of parameter ``j``.
    marginal : ndarray, shape (K, V)
        Mean per kernel and value.
    counts : ndarray, shape (V,)
        How many points each marginal mean averages.
    """
    others = np.delete(points, j, axis=1)
    xs, value_index = np.unique(points[:, j], return_inverse=True)
    _, group_index = np.unique(others, axis=0, return_inverse=True)
    group_index = group_index.ravel()
    n_groups = group_index.max() + 1
    table = np.full((means.shape[0], n_groups, len(xs)), np.nan)
    table[:, group_index, value_index] = means
    present = ~np.isnan(table[0])
    complete = present.all(axis=1)
    if complete.any():
        return xs, table[:, complete, :].mean(axis=1), np.full(len(xs), complete.sum())
    best = int(np.argmax(present.sum(axis=1)))
    keep = present[best]
    return xs[keep], table[:, best, keep], np.ones(keep.sum(), dtype=int)


def marginal_fit_data(data: FitData, j: int) -> tuple[np.ndarray, FitData]:
    """The marginal means of parameter ``j`` (see :func:`marginal_means`) as fit data.

    Each marginal mean averages the points of one value of ``j``; it is weighted by its own
    variance, so the search's F-tests hold the marginal against the measured noise as they do
    the points. Returns the values of ``j`` and the data.
    """
    xs, marginal, counts = marginal_means(data.series.points, data.means, j)
    _, point_variance, _ = marginal_means(data.series.points, 1.0 / data.weights, j)
    weights = counts[None, :] / point_variance  # Var(mean of c points) = mean variance / c
    return xs, dataclasses.replace(data, means=marginal, weights=weights, location=None)


def decreasing_trend(x: np.ndarray, means: np.ndarray, data: FitData) -> np.ndarray:
    """Kernels whose values at the smallest ``x`` clearly exceed a later value, shape (K,)."""
    order = np.argsort(x)
    first, rest = means[:, order[0]], means[:, order[1:]]
    noise = np.sqrt(np.nan_to_num(data.noise_variance, nan=0.05**2))
    observations_per_point = data.observations / data.means.shape[1]
    margin = 3.0 * noise / np.sqrt(np.maximum(observations_per_point, 1))
    return first > rest.min(axis=1) * (1.0 + margin)


def build_models(
    data: FitData,
    choice: Choice,
    pool: np.ndarray,
    shapes: Sequence[Sequence[tuple[Factor, ...]]] | SlotShapes,
) -> list[Model]:
    """Turn the chosen hypotheses into :class:`Model` objects with quality and uncertainty."""
    series = data.series
    n_kernels, n_points = data.means.shape
    width = 1 + max((len(t) for t in choice.terms), default=0)
    designs = np.zeros((n_kernels, n_points, width))
    designs[:, :, 0] = 1.0
    coefficients = np.zeros((n_kernels, width))
    coefficients[:, 0] = choice.constants
    for k, chosen in enumerate(choice.terms):
        designs[k, :, 1 : 1 + len(chosen)] = pool[k, chosen].T
        coefficients[k, 1 : 1 + len(chosen)] = choice.coefficients[k]
    sizes = np.array([1 + len(t) for t in choice.terms])
    assessment = assess(designs, coefficients, sizes, data)
    models = []
    for k, kernel in enumerate(series.kernels):
        terms = tuple(
            Term(float(c), shapes[k][t])
            for t, c in zip(choice.terms[k], choice.coefficients[k], strict=True)
        )
        models.append(
            Model(
                kernel=kernel,
                metric=series.metric,
                parameters=series.parameters,
                constant=float(choice.constants[k]),
                terms=terms,
                quality=assessment.qualities[k],
                uncertainty=assessment.uncertainties[k],
            )
        )
    return models
