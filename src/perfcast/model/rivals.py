"""Model-selection uncertainty: how differently the forms that fit the data extrapolate.

A model's covariance treats its terms as known, and the backtests
(:mod:`perfcast.model.backtest`) measure the search's error on one value fewer: a single,
sometimes lucky, draw. Where several forms fit the measurements about as well (few values, or
a curve bending towards a floor), they part ways beyond the data, and the chosen one is only
one of them. Following the model averaging of Burnham and Anderson ("Model Selection and
Multimodel Inference", 2nd ed., 2002, sec. 4.3: the unconditional variance of an estimate adds
each candidate model's squared distance from it, weighted by the candidate's Akaike weight),
every kernel's data along each parameter is fitted by every PMNF hypothesis of up to two
building blocks, each hypothesis gets its Akaike weight, and the weighted mean square relative
distance between the hypotheses' predictions and the chosen model's, one log step beyond the
largest measured value, becomes a rate per squared log step
(:class:`~perfcast.core.function.SelectionSpread`). The interval centres on the chosen model,
so the distance is taken from its prediction, not from the weighted average.

Choices, none tuned on a benchmark:

- hypotheses: the constant, every building block alone and every pair, each only with fewer
  coefficients than measured values (one that interpolates every value leaves no residual to
  weigh it, and its value beyond the data would set the spread alone) (the one-parameter
  search space of Extra-P, with the decreasing blocks of strong scaling), coefficients of any
  sign: the spread stands for how the data may continue, and measured curves need not follow
  the search's preference for positive terms (a time falling towards a floor is
  ``c - a * p^e``); with several parameters, each parameter's marginal means
  (:func:`~perfcast.model.fitting.candidates.marginal_fit_data`);
- prior: equal mass for each number of terms (0, 1, 2), spread evenly over the hypotheses of
  that size, so that the 1,770 pairs do not outvote the 60 single blocks by their number (the
  multiplicity correction of Scott and Berger, Annals of Statistics 38(5), 2010);
- weights: with repetitions, AIC with the measured (moderated) noise variance, in whose units
  the weighted residual sum of squares is; without, the small-sample AICc of the search
  (:mod:`~perfcast.model.fitting.selection`), the variance estimated from the residuals;
- the step: ``log(largest / next largest)``, the backtest's.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment, Series
from perfcast.core.function import Model, SelectionSpread
from perfcast.model.fitting.blocks import Block, building_blocks, evaluate_blocks
from perfcast.model.fitting.candidates import (
    decreasing_trend,
    marginal_fit_data,
    marginal_means,
)
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.least_squares import PoolMoments
from perfcast.model.fitting.location import NOISE_FLOOR
from perfcast.model.gates import shape_groups

#: Distinct values a parameter needs: the step beyond the largest is measured from the two
#: largest, and one value more leaves a single block something to fit.
MIN_VALUES = 3
#: Kernels weighed at a time: the fits of all 1,830 hypotheses take about 60 kB per kernel.
CHUNK_KERNELS = 512


def selection_spread(models: Sequence[Model], experiment: Experiment, metric: str) -> list[Model]:
    """The models of ``metric`` with each parameter's model-selection spread beyond the data.

    Parameters
    ----------
    models : sequence of Model
        Fitted to ``experiment``'s measurements of ``metric``.
    experiment : Experiment
    metric : str

    Returns
    -------
    list of Model
        Same order; a model's :class:`~perfcast.core.function.Uncertainty` gains one
        :class:`~perfcast.core.function.SelectionSpread` per parameter with at least
        :data:`MIN_VALUES` measured values. Models without uncertainty (and those of other
        metrics) are returned as they are.
    """
    chosen = {m.kernel: m for m in models if m.metric == metric and m.uncertainty is not None}
    found: dict[str, list[SelectionSpread]] = {}
    for series in experiment.series(metric):
        found.update(series_selection_spreads(series, chosen, experiment.source))
    return [
        with_selection(m, found[m.kernel]) if chosen.get(m.kernel) is m and m.kernel in found else m
        for m in models
    ]


def series_selection_spreads(
    series: Series, chosen: Mapping[str, Model], source: str | None
) -> dict[str, list[SelectionSpread]]:
    """The selection spreads of the kernels of ``series`` that have a model in ``chosen``
    (by kernel: models with an uncertainty), by kernel; the step of :func:`selection_spread`
    for one series."""
    rows = np.array([k for k, name in enumerate(series.kernels) if name in chosen], int)
    if len(rows) == 0:
        return {}
    if len(rows) < len(series.kernels):
        names = [series.kernels[k] for k in rows]
        series = dataclasses.replace(series, kernels=names, values=series.values[rows])
    try:
        data = FitData.from_series(series, source)
    except InputError:  # a kernel without a value at a point: the modeler skipped it
        return {}
    return chunk_selection_spreads(data, [chosen[k] for k in series.kernels])


def chunk_selection_spreads(
    data: FitData, models: Sequence[Model], chunk_kernels: int | None = None
) -> dict[str, list[SelectionSpread]]:
    """The selection spreads of the kernels of ``data``, by kernel, each parameter's in turn.

    Parameters
    ----------
    data : FitData
        The statistics of a series (``location="adaptive"``) of the kernels with a model of
        uncertainty, or rows of them (:meth:`FitData.rows`) starting at a multiple of
        ``chunk_kernels``: the rounding of a kernel's figures depends on the kernels weighed
        with it.
    models : sequence of Model
        The kernels' models, in the order of ``data``.
    chunk_kernels : int, optional
        Kernels weighed at a time; :data:`CHUNK_KERNELS` when None.
    """
    from threadpoolctl import threadpool_limits  # here: only fits import it

    size = CHUNK_KERNELS if chunk_kernels is None else chunk_kernels
    found: dict[str, list[SelectionSpread]] = {}
    # One BLAS thread: a product split over more threads rounds differently, and the spreads
    # must not depend on the cores of the machine (a Dask worker has one thread).
    with threadpool_limits(limits=1, user_api="blas"):
        for j, parameter in enumerate(data.series.parameters):
            for start in range(0, len(data.means), size):
                stop = min(start + size, len(data.means))
                part = data.rows(np.arange(start, stop))
                for kernel, (largest, rate) in _spread_along(part, j, models[start:stop]):
                    found.setdefault(kernel, []).append(SelectionSpread(parameter, largest, rate))
    return found


def with_selection(model: Model, spreads: Sequence[SelectionSpread]) -> Model:
    """``model`` with these selection spreads in its uncertainty (which it must have)."""
    assert model.uncertainty is not None
    uncertainty = dataclasses.replace(model.uncertainty, selection=tuple(spreads))
    return dataclasses.replace(model, uncertainty=uncertainty)


def _spread_along(
    data: FitData, j: int, models: Sequence[Model]
) -> list[tuple[str, tuple[float, float]]]:
    """Per kernel of ``data`` with a usable spread along parameter ``j``: ``(largest, rate)``."""
    series = data.series
    if len(series.parameters) == 1:
        xs, marginal = series.points[:, 0], data
        order = np.argsort(xs)
        xs = xs[order]
        marginal = dataclasses.replace(
            data, means=data.means[:, order], weights=data.weights[:, order], location=None
        )
    else:
        xs, marginal = marginal_fit_data(data, j)
    if len(np.unique(xs)) < MIN_VALUES or not xs[0] > 0:
        return []
    largest, below = float(xs[-1]), float(xs[-2])
    step = np.log(largest / below)
    beyond = largest * largest / below
    # The blocks the search offers: the decreasing ones only where the data decrease (or the
    # chosen model took one), as in candidates.allowed_blocks.
    negative = decreasing_trend(xs, marginal.means, marginal) | np.array(
        [_decreasing_factor(m, series.parameters[j]) for m in models], dtype=bool
    )
    predictions = np.zeros((len(models), 0))
    weights = np.zeros((len(models), 0))
    for group in (False, True):
        rows = np.flatnonzero(negative == group)
        if len(rows):
            found = _weighted_predictions(marginal.rows(rows), xs, beyond, building_blocks(group))
            if predictions.shape[1] < found[0].shape[1]:
                width = found[0].shape[1]
                predictions = np.pad(predictions, ((0, 0), (0, width - predictions.shape[1])))
                weights = np.pad(weights, ((0, 0), (0, width - weights.shape[1])))
            predictions[rows, : found[0].shape[1]] = found[0]
            weights[rows, : found[1].shape[1]] = found[1]
    # The fit data hold each kernel's values times 2**-exponent (FitData.exponents).
    reference = np.ldexp(_chosen_beyond(series, j, beyond, models), -data.exponents)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        relative = (predictions - reference[:, None]) / np.abs(reference[:, None])
        mean_square = np.sum(np.where(weights > 0, weights * relative**2, 0.0), axis=1)
    usable = np.isfinite(mean_square) & (reference != 0) & np.isfinite(reference)
    return [
        (series.kernels[k], (largest, float(mean_square[k] / step**2)))
        for k in np.flatnonzero(usable)
    ]


def _decreasing_factor(model: Model, parameter: str) -> bool:
    """Does ``model`` have a term with a negative exponent of ``parameter``?"""
    return any(f.parameter == parameter and f.exponent < 0 for t in model.terms for f in t.factors)


def _weighted_predictions(
    data: FitData, xs: np.ndarray, beyond: float, blocks: tuple[Block, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Every hypothesis of ``blocks``' prediction at ``beyond`` and its Akaike weight,
    shapes (K, H)."""
    pool = evaluate_blocks(blocks, xs)
    at = evaluate_blocks(blocks, np.array([beyond]))[:, 0]
    moments = PoolMoments(pool, data.means, data.weights)
    n_kernels, n_points = data.means.shape
    predictions = [moments.value_mean[:, None]]
    wrss = [moments.constant_wrss()[:, None]]
    sizes = [0]
    for size in (1, 2):
        if n_points <= size + 1:  # as many coefficients as values: it interpolates them and
            break  # cannot be weighed (a wild interpolant would set the spread alone)
        subsets = np.array(list(itertools.combinations(range(len(blocks)), size)), np.intp)
        fit = moments.fit(subsets)
        valid = np.isfinite(fit.wrss) & np.all(np.isfinite(fit.coefficients), axis=2)
        predictions.append(fit.constants + np.sum(fit.coefficients * at[subsets][None], axis=2))
        wrss.append(np.where(valid, fit.wrss, np.inf))
        sizes.append(size)
    counts = [w.shape[1] for w in wrss]
    all_wrss = np.concatenate(wrss, axis=1)
    coefficients = np.concatenate([np.full(c, s + 1) for c, s in zip(counts, sizes, strict=True)])
    log_prior = np.concatenate([np.full(c, -np.log(c)) for c in counts])
    score = _information(all_wrss, coefficients, n_points, data) - 2 * log_prior
    with np.errstate(invalid="ignore"):
        best = np.min(score, axis=1, keepdims=True)
        weights = np.where(np.isfinite(score), np.exp(-(score - best) / 2), 0.0)
    total = weights.sum(axis=1, keepdims=True)
    weights = np.where(total > 0, weights / np.where(total > 0, total, 1.0), 0.0)
    return np.concatenate(predictions, axis=1), weights


def _information(
    wrss: np.ndarray, coefficients: np.ndarray, n_points: int, data: FitData
) -> np.ndarray:
    """AIC with the measured noise where there are repetitions, else AICc; shape (K, H)."""
    noise = data.noise_variance
    known = np.isfinite(noise) & (data.noise_dof > 0)
    # The weighted residual sum of squares is in units of one repetition's relative variance.
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        score = wrss / np.maximum(np.where(known, noise, 1.0), NOISE_FLOOR)[:, None]
        score += 2 * coefficients
        unknown = np.flatnonzero(~known)
        if len(unknown):  # no repetitions: the variance is estimated from the residuals
            residual = n_points - coefficients - 1
            correction = np.where(
                residual > 0, 2 * coefficients * (coefficients + 1) / residual, np.inf
            )
            fit = n_points * np.log(np.maximum(wrss[unknown] / n_points, NOISE_FLOOR))
            score[unknown] = fit + 2 * coefficients + correction
    return score


def _chosen_beyond(series: Series, j: int, beyond: float, models: Sequence[Model]) -> np.ndarray:
    """Each chosen model's marginal value along parameter ``j`` at ``beyond``, shape (K,)."""
    points = series.points.copy()
    points[:, j] = beyond
    if len(series.parameters) == 1:
        points = points[:1]  # every point is the same one
    values = _evaluate_all(models, points)
    if len(series.parameters) == 1:
        return values[:, 0]
    _, marginal, _ = marginal_means(series.points, values, j)
    return np.asarray(marginal[:, -1], dtype=float)


def _evaluate_all(models: Sequence[Model], points: np.ndarray) -> np.ndarray:
    """Every model at ``points``, shape (K, P); models of the same terms share one design."""
    values = np.empty((len(models), len(points)))
    for i, model in enumerate(models):
        if model.segments:
            values[i] = model.evaluate(points)
    for members, coefficients, design in shape_groups(models, points):
        with np.errstate(over="ignore", invalid="ignore"):
            values[members] = coefficients @ design.T
    return values
