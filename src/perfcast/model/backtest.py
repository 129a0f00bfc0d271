"""Backtests of extrapolation: how far the model search gets off beyond the measurements.

A model's covariance treats its terms as known, but the search chose them among many, and a
neighbouring form that fits the measurements as well can extrapolate differently. Rather than
guess how much wider that makes a prediction interval, perfcast measures it on the data: for
each parameter, the same search runs again on the measurements without each kernel's largest
value of the parameter and predicts that value. The log error there, per log distance of the
step, estimates how far the chosen exponent may be off (a model whose exponent is off by ``d``
misses by about ``d * log(x / largest)`` at ``x``), and the interval grows accordingly beyond
the largest measured value (:class:`~perfcast.core.function.Backtest`).

A parameter with fewer than :data:`MIN_BACKTEST_VALUES` measured values is not backtested (the
search on one value fewer could not tell its terms apart); such models already carry a
``few-points`` warning.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Backtest, Model

#: Distinct values a parameter needs before one is held out: three left for the search.
MIN_BACKTEST_VALUES = 4
#: Kernels refitted at a time: the held-back copy of the data and its models stay small
#: beside the experiment (200,000 kernels at once raised a fit's peak memory by a third).
#: What the search pools over kernels (noise shape, location estimator) is then pooled over
#: a chunk; experiments with fewer kernels are backtested whole.
CHUNK_KERNELS = 32_768


def backtest(
    models: Sequence[Model],
    experiment: Experiment,
    metric: str,
    refit: Callable[[Experiment], Sequence[Model]],
) -> list[Model]:
    """The models of ``metric`` with each parameter's backtested extrapolation error.

    Parameters
    ----------
    models : sequence of Model
        Fitted to ``experiment``'s measurements of ``metric``.
    experiment : Experiment
    metric : str
    refit : callable
        Runs the search that made ``models`` on another experiment (of the same metric) and
        returns its models; kernels it cannot model are simply absent.

    Returns
    -------
    list of Model
        Same order; a model's :class:`~perfcast.core.function.Uncertainty` gains one
        :class:`~perfcast.core.function.Backtest` per parameter backtested for its kernel.
        Models without uncertainty (and those of other metrics) are returned as they are.
    """
    found: dict[str, list[Backtest]] = {}
    for start in range(0, len(experiment.kernels), CHUNK_KERNELS):
        found.update(
            block_backtests(experiment, metric, refit, range(start, start + CHUNK_KERNELS))
        )
    return with_backtests(models, found, metric)


def block_backtests(
    experiment: Experiment,
    metric: str,
    refit: Callable[[Experiment], Sequence[Model]],
    kernels: range | None = None,
    parameters: Sequence[str] | None = None,
) -> dict[str, list[Backtest]]:
    """The backtests along ``parameters`` (all when None) of the kernels at positions
    ``kernels`` of the experiment (all when None), refitted together: the step of
    :func:`backtest` for one block of :data:`CHUNK_KERNELS` kernels.

    Returns
    -------
    dict of str to list of Backtest
        By kernel, in the order of the parameters; kernels without any backtest are absent.
    """
    chosen = range(len(experiment.kernels)) if kernels is None else kernels
    found: dict[str, list[Backtest]] = {}
    for parameter in experiment.parameter_names if parameters is None else parameters:
        for kernel, extrapolation in _backtest_parameter(
            experiment, metric, parameter, chosen, refit
        ):
            found.setdefault(kernel, []).append(extrapolation)
    return found


def with_backtests(
    models: Sequence[Model], found: Mapping[str, Sequence[Backtest]], metric: str
) -> list[Model]:
    """``models`` with the backtests ``found`` for their kernel added to their uncertainty
    (models of ``metric`` that have one)."""
    return [
        dataclasses.replace(
            m,
            uncertainty=dataclasses.replace(
                m.uncertainty, extrapolation=m.uncertainty.extrapolation + tuple(found[m.kernel])
            ),
        )
        if m.metric == metric and m.uncertainty is not None and m.kernel in found
        else m
        for m in models
    ]


def _backtest_parameter(
    experiment: Experiment,
    metric: str,
    parameter: str,
    kernels: range,
    refit: Callable[[Experiment], Sequence[Model]],
) -> list[tuple[str, Backtest]]:
    """Per kernel (of those at positions ``kernels``) backtested along ``parameter``: its
    extrapolation error there."""
    split = experiment.split_largest(parameter, metric, kernels)
    if split is None:
        return []
    training, held_out = split
    try:
        predictors = {m.kernel: m for m in refit(training) if m.metric == metric}
    except InputError:  # no kernel can be modeled with a value fewer
        return []
    column = experiment.parameter_names.index(parameter)
    below: dict[str, float] = {}  # each kernel's largest value left in the training data
    for series in training.series(metric):
        values = np.unique(series.points[:, column])
        if len(values) >= MIN_BACKTEST_VALUES - 1:
            below.update(dict.fromkeys(series.kernels, float(values[-1])))
    result = []
    for held in held_out.series(metric):
        largest = float(held.points[0, column])
        means = held.means
        for row, kernel in enumerate(held.kernels):
            if kernel not in predictors or not largest > below.get(kernel, largest) > 0:
                continue
            error = _log_error(predictors[kernel].evaluate(held.points), means[row])
            if error is not None:
                step = np.log(largest / below[kernel])
                result.append((kernel, Backtest(parameter, largest, error / step**2)))
    return result


def _log_error(predicted: np.ndarray, measured: np.ndarray) -> float | None:
    """Mean square log ratio of prediction to measurement where both are positive, else the
    mean square relative error where the measurement is not 0; None where neither is defined."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        positive = (predicted > 0) & (measured > 0)
        if positive.any():
            return float(np.mean(np.log(predicted[positive] / measured[positive]) ** 2))
        usable = (measured != 0) & np.isfinite(predicted)
        if usable.any():
            relative = (predicted[usable] - measured[usable]) / np.abs(measured[usable])
            return float(np.mean(relative**2))
    return None
