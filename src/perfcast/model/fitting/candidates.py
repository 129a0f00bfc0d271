"""Predictor generation shared by the modelers: which building blocks a kernel may use, the
one-parameter search of blocks alone and in pairs, marginal means of one parameter over the
others, the candidate factors ranked on them, and product terms combined from those factors.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from perfcast.core.function import Factor
from perfcast.model.fitting.blocks import Block, building_blocks, evaluate_blocks
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.decisions import series_wide
from perfcast.model.fitting.least_squares import PoolMoments
from perfcast.model.fitting.location import NOISE_FLOOR
from perfcast.model.fitting.selection import Choice, SearchSettings, search


def search_one_parameter(
    data: FitData,
    x: np.ndarray,
    decreasing: np.ndarray,
    negative_exponents: bool | None,
    subsets_of: Callable[[Sequence[Block]], list[np.ndarray]],
    settings: SearchSettings,
    progress: Callable[[int], None] | None = None,
) -> tuple[Choice, tuple[Block, ...]]:
    """Search the building blocks of one parameter (values ``x``) for every kernel of ``data``.

    With ``negative_exponents=None``, a kernel whose data never clearly decreases
    (``decreasing``) first searches the growing blocks only; if its best model still lacks fit,
    it searches again with the decreasing blocks too (``c + a/p + b*log2(p)`` may grow at every
    measured point) and keeps that model when it fits better. Kernels without repetitions keep
    it only when it is exact: their lack of fit cannot be told from noise. ``progress`` is
    called with the kernels of every chunk of the first pass (see :func:`search`).

    Returns
    -------
    choice : Choice
        The chosen hypotheses, as indices into ``blocks``.
    blocks : tuple of Block
        The blocks searched (a prefix of ``building_blocks(True)``).
    """
    blocks, allowed = allowed_blocks(negative_exponents, decreasing)
    pool = evaluate_blocks(blocks, x)
    choice = search(data, pool, subsets_of(blocks), allowed, settings, progress=progress)
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
    anywhere = bool(series_wide(int(decreasing.any())))  # any kernel of the whole series
    negative = negative_exponents is not False and bool(negative_exponents or anywhere)
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
    xs, marginal_data, decreasing = marginal_trend(data, j)
    marginal = marginal_data.means
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


def marginal_trend(data: FitData, j: int) -> tuple[np.ndarray, FitData, np.ndarray]:
    """The marginal means of parameter ``j`` as fit data (:func:`marginal_fit_data`) and the
    kernels whose marginal clearly decreases (:func:`decreasing_trend`), shape (K,)."""
    xs, marginal_data = marginal_fit_data(data, j)
    return xs, marginal_data, decreasing_trend(xs, marginal_data.means, marginal_data)


def candidate_choices_ahead(data: FitData, j: int) -> tuple[int, ...]:
    """The series-wide choices :func:`candidate_factors` of parameter ``j`` makes, known from
    the statistics alone (:mod:`perfcast.model.fitting.decisions`): whether any kernel's
    marginal decreases, once for the ranking of the blocks and once for the pair search."""
    anywhere = int(marginal_trend(data, j)[2].any())
    return anywhere, anywhere


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
