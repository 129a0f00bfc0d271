"""Quality gates: the reasons a fitted model should not be trusted as it stands.

:func:`gate_models` checks every model of one metric against its measurements and returns the
models with their :attr:`~perfcast.core.function.Model.warnings`; :func:`extrapolation_warnings`
checks a prediction point against the measured ranges. Each warning is a
:class:`~perfcast.core.function.ModelWarning` with one of these codes:

``poor-fit``
    The model misses the measured means by more than :data:`SMAPE_LIMIT` percent on average
    (SMAPE), or a model with terms explains no more than a constant would (adjusted R² <= 0).
    20 % is beyond the run-to-run noise of ordinary timings (a few percent; 10 % on a busy
    machine), so a model that far off describes something other than the data.
``two-regimes``
    Along one parameter the means follow two different trends: a piecewise power law with one
    breakpoint (each side at least 3 points) fits the logarithms far better than the model
    (F-test at :data:`TWO_REGIME_P`) while the model is off by more than
    :data:`TWO_REGIME_MIN_ERROR` (root mean square of the log error, about 3 %). One model
    cannot describe both ranges: model each on its own (segmented modeling).
``cancelling-terms``
    At some measured point the terms add up to more than :data:`CANCELLATION_RATIO` times the
    largest modeled value: large terms of opposite sign cancel, so the coefficients (such as
    ±1e11) are not meaningful and the model swings wildly outside the measured range.
``few-points``
    A parameter was measured at fewer than :data:`MIN_DISTINCT_VALUES` distinct values, too few
    for the search over exponents to tell its candidate terms apart.
``oversubscribed``
    The measurements' metadata names the machine's core count and the processes (and threads)
    of some points exceed it: those timings include the cost of sharing cores.

These checks never change a model; they only add warnings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import special

from perfcast.core.experiment import Experiment, Series
from perfcast.core.function import Model, ModelWarning

#: Mean symmetric percentage error (SMAPE, percent) above which a model is a poor fit.
SMAPE_LIMIT = 20.0
#: Fewer distinct values of a parameter than this leave the term search underdetermined.
MIN_DISTINCT_VALUES = 5
#: Terms summing (in absolute value) to more than this times the largest model value cancel.
CANCELLATION_RATIO = 10.0
#: Significance of the breakpoint F-test that says "two regimes".
TWO_REGIME_P = 1e-3
#: Root mean square log error of the model below which two regimes are not worth a warning.
TWO_REGIME_MIN_ERROR = 0.03
#: Points per segment of the breakpoint fit (a line in log-log space needs a third to judge).
SEGMENT_POINTS = 3
#: Parameter roles whose product is the number of cores a run occupies.
CORE_ROLES = ("processes", "threads")


def gate_models(models: Sequence[Model], experiment: Experiment, metric: str) -> list[Model]:
    """The models of ``metric`` with the warnings the quality gates raise on each.

    Parameters
    ----------
    models : sequence of Model
        Fitted to ``experiment``'s measurements of ``metric`` (kernels without a model are
        ignored).
    experiment : Experiment
    metric : str

    Returns
    -------
    list of Model
        Same order; a model without warnings is returned as it is.
    """
    by_kernel = {m.kernel: m for m in models if m.metric == metric}
    warned: dict[str, tuple[ModelWarning, ...]] = {}
    for series in experiment.series(metric):
        chosen = [by_kernel[k] for k in series.kernels if k in by_kernel]
        if chosen:
            warned.update(series_gates(chosen, series, series_warnings(series, experiment)))
    return with_warnings(models, warned, metric)


def series_warnings(series: Series, experiment: Experiment) -> list[ModelWarning]:
    """The warnings every model of ``series`` gets: too few values of a parameter, more
    processes than the cores the ``experiment``'s metadata names."""
    roles = {p.name: p.role for p in experiment.parameters}
    return _few_points(series) + _oversubscribed(series, roles, _core_count(experiment.metadata))


def series_gates(
    models: Sequence[Model], series: Series, shared: Sequence[ModelWarning]
) -> dict[str, tuple[ModelWarning, ...]]:
    """The warnings of the models of kernels of ``series`` (any of its kernels, in its
    order), by kernel; models without warnings are left out.

    Parameters
    ----------
    models : sequence of Model
        At most one per kernel of ``series``, in the order of its kernels.
    series : Series
        The measurements as measured (not rescaled).
    shared : sequence of ModelWarning
        :func:`series_warnings` of the series.
    """
    position = {kernel: row for row, kernel in enumerate(series.kernels)}
    rows = [position[m.kernel] for m in models]
    warned: dict[str, tuple[ModelWarning, ...]] = {}
    for model, found in zip(models, _kernel_warnings(models, series, rows), strict=True):
        if shared or found:
            warned[model.kernel] = tuple(found) + tuple(shared)
    return warned


def with_warnings(
    models: Sequence[Model], warned: Mapping[str, Sequence[ModelWarning]], metric: str
) -> list[Model]:
    """``models`` with the ``warned`` warnings of their kernel added (those of ``metric``)."""
    return [
        dataclasses.replace(m, warnings=m.warnings + tuple(warned[m.kernel]))
        if m.kernel in warned and m.metric == metric
        else m
        for m in models
    ]


def _kernel_warnings(
    models: Sequence[Model], series: Series, rows: Sequence[int]
) -> list[list[ModelWarning]]:
    """Poor fit, cancelling terms and two regimes, per model."""
    means = series.means[rows]
    fitted, magnitude = _evaluate(models, series.points)
    found = [_poor_fit(model) for model in models]
    with np.errstate(over="ignore", invalid="ignore"):  # beyond a double: not flagged here
        largest = np.max(np.abs(fitted), axis=1)
        worst = np.argmax(np.where(np.isfinite(magnitude), magnitude, -1.0), axis=1)
        cancelling = np.take_along_axis(magnitude, worst[:, None], axis=1)[:, 0]
        flagged = np.isfinite(cancelling) & ~(cancelling <= CANCELLATION_RATIO * largest)
    for row in np.flatnonzero(flagged).tolist():
        if models[row].terms:
            point = int(worst[row])
            found[row].append(_cancelling(series, fitted[row, point], cancelling[row], point))
    for row, warning in _two_regimes(series, means, fitted).items():
        found[row].append(warning)
    return found


def shape_groups(
    models: Sequence[Model], points: np.ndarray
) -> list[tuple[list[int], np.ndarray, np.ndarray]]:
    """The unsegmented ``models`` grouped by their terms, so that a group shares one design
    matrix: per group the models' indices, their coefficients (constant first, one row per
    model) and the design at ``points`` (:meth:`Model.design`)."""
    by_shape: dict[tuple[tuple[Any, ...], ...], list[int]] = {}
    for i, model in enumerate(models):
        if not model.segments:
            by_shape.setdefault(tuple(t.factors for t in model.terms), []).append(i)
    return [
        (
            members,
            np.array(
                [[models[i].constant] + [t.coefficient for t in models[i].terms] for i in members]
            ),
            models[members[0]].design(points),
        )
        for members in by_shape.values()
    ]


def _evaluate(models: Sequence[Model], points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each model's values at ``points`` and the sum of its terms' absolute values there, shape
    (n_models, n_points) each; models of the same terms share one design matrix."""
    fitted = np.empty((len(models), len(points)))
    magnitude = np.empty_like(fitted)
    for i, model in enumerate(models):
        if model.segments:  # each point by its segment's model
            index = model.segment_index(points)
            for j, segment in enumerate(model.segments):
                rows = np.flatnonzero(index == j)
                part_fitted, part_magnitude = _evaluate([segment.model], points[rows])
                fitted[i, rows], magnitude[i, rows] = part_fitted[0], part_magnitude[0]
    for members, coefficients, design in shape_groups(models, points):
        with np.errstate(over="ignore", invalid="ignore"):
            fitted[members] = coefficients @ design.T
            magnitude[members] = np.abs(coefficients) @ np.abs(design).T
    return fitted, magnitude


def _poor_fit(model: Model) -> list[ModelWarning]:
    quality = model.quality
    if quality is None:
        return []
    if np.isfinite(quality.smape) and quality.smape > SMAPE_LIMIT:
        return [
            ModelWarning(
                "poor-fit",
                f"the model misses the measured means by {quality.smape:.0f} % on average "
                f"(SMAPE above {SMAPE_LIMIT:.0f} %)",
            )
        ]
    if model.terms and quality.adj_r2 is not None and quality.adj_r2 <= 0:
        return [
            ModelWarning(
                "poor-fit",
                f"adjusted R² is {quality.adj_r2:.2f}: the terms explain no more than a constant",
            )
        ]
    return []


def _cancelling(series: Series, value: float, magnitude: float, worst: int) -> ModelWarning:
    where = _point_text(series.parameters, series.points[worst])
    return ModelWarning(
        "cancelling-terms",
        f"terms of opposite sign cancel: at {where} they add up to ±{magnitude:.3g} for a value "
        f"of {value:.3g}; the coefficients are ill-determined and the model unreliable outside "
        "the measured range",
    )


def _few_points(series: Series) -> list[ModelWarning]:
    warnings = []
    for j, name in enumerate(series.parameters):
        distinct = len(np.unique(series.points[:, j]))
        if distinct < MIN_DISTINCT_VALUES:
            warnings.append(
                ModelWarning(
                    "few-points",
                    f"'{name}' was measured at {distinct} values; the term search needs at "
                    f"least {MIN_DISTINCT_VALUES} to tell its candidates apart",
                )
            )
    return warnings


def _core_count(metadata: Mapping[str, Any]) -> int | None:
    """The machine's core count from experiment metadata (a campaign's ``machine.cores``, or
    ``cores`` at the top level of imported metadata)."""
    machine = metadata.get("machine")
    for source in (machine if isinstance(machine, Mapping) else {}, metadata):
        cores = source.get("cores")
        if isinstance(cores, int | float) and not isinstance(cores, bool) and cores >= 1:
            return int(cores)
    return None


def _oversubscribed(
    series: Series, roles: Mapping[str, str | None], cores: int | None
) -> list[ModelWarning]:
    columns = [j for j, name in enumerate(series.parameters) if roles.get(name) in CORE_ROLES]
    if cores is None or not columns:
        return []
    occupied = np.prod(series.points[:, columns], axis=1)
    over = np.flatnonzero(occupied > cores)
    if not len(over):
        return []
    names = "*".join(series.parameters[j] for j in columns)
    shown = "; ".join(_point_text(series.parameters, series.points[i]) for i in over[:4])
    more = f" and {len(over) - 4} more" if len(over) > 4 else ""
    return [
        ModelWarning(
            "oversubscribed",
            f"measured with more processes ({names}) than the machine's {cores} cores at "
            f"{shown}{more}: those timings include waiting for a core",
        )
    ]


def _two_regimes(series: Series, means: np.ndarray, fitted: np.ndarray) -> dict[int, ModelWarning]:
    """The models (by row) whose data follows two trends along a parameter."""
    found: dict[int, ModelWarning] = {}
    for j, name in enumerate(series.parameters):
        for line in _lines(series.points, j):
            x = series.points[line, j]
            f_ratio, p_value, breakpoint = _breakpoint_test(x, means[:, line], fitted[:, line])
            for i in np.flatnonzero(p_value < TWO_REGIME_P):
                if int(i) in found:
                    continue
                below, above = x[breakpoint[i] - 1], x[breakpoint[i]]
                found[int(i)] = ModelWarning(
                    "two-regimes",
                    f"the measurements follow two trends along '{name}', one up to "
                    f"{name}={below:g} and another from {name}={above:g} (a fit with a break "
                    f"there is far better: F = {f_ratio[i]:.3g}); one model cannot describe both: "
                    "model each range on its own (segmented modeling)",
                )
    return found


def _lines(points: np.ndarray, j: int) -> list[np.ndarray]:
    """Index arrays of the points that differ only in parameter ``j``, sorted along it; only
    lines long enough for two segments."""
    others = np.delete(points, j, axis=1)
    _, groups = np.unique(others, axis=0, return_inverse=True)
    lines = []
    for group in np.unique(groups):
        members = np.flatnonzero(groups.ravel() == group)
        members = members[np.argsort(points[members, j], kind="stable")]
        if len(members) >= 2 * SEGMENT_POINTS:
            lines.append(members)
    return lines


def _breakpoint_test(
    x: np.ndarray, means: np.ndarray, fitted: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """F ratio, its p-value and the best breakpoint (index of the first point of the second
    segment) of a two-segment power law against the model, per kernel, in log space.

    Kernels with a non-positive mean or model value, or a model within
    :data:`TWO_REGIME_MIN_ERROR`, get p-value 1.
    """
    n_kernels, m = means.shape
    log_x = np.log(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_y = np.log(means)
        model_error = np.sum((log_y - np.log(fitted)) ** 2, axis=1)
    usable = np.all(means > 0, axis=1) & np.all(fitted > 0, axis=1) & np.isfinite(model_error)
    log_y = np.where(usable[:, None], log_y, 0.0)
    breakpoints = range(SEGMENT_POINTS, m - SEGMENT_POINTS + 1)
    segmented = np.stack(
        [
            _line_rss(log_x[:b], log_y[:, :b]) + _line_rss(log_x[b:], log_y[:, b:])
            for b in breakpoints
        ],
        axis=1,
    )
    best = np.argmin(segmented, axis=1)
    piecewise = np.maximum(segmented[np.arange(n_kernels), best], 1e-12 * m)
    extra, residual_dof = 3, m - 4  # two more coefficients and the breakpoint; four coefficients
    with np.errstate(divide="ignore", invalid="ignore"):
        f_ratio = ((model_error - piecewise) / extra) / (piecewise / residual_dof)
    material = usable & (np.sqrt(model_error / m) > TWO_REGIME_MIN_ERROR) & (f_ratio > 0)
    p_value = np.where(
        material, special.fdtrc(extra, residual_dof, np.where(material, f_ratio, 0.0)), 1.0
    )
    return f_ratio, p_value, best + SEGMENT_POINTS


def _line_rss(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Residual sum of squares of a least-squares line through each row of ``y`` over ``x``."""
    dx = x - x.mean()
    dy = y - y.mean(axis=1, keepdims=True)
    sxx = float(np.sum(dx**2))
    sxy = dy @ dx
    rss: np.ndarray = np.sum(dy**2, axis=1) - (sxy**2 / sxx if sxx > 0 else 0.0)
    return np.maximum(rss, 0.0)


def _point_text(names: Sequence[str], values: np.ndarray) -> str:
    return ",".join(f"{name}={value:g}" for name, value in zip(names, values, strict=True))


__all__ = [
    "CANCELLATION_RATIO",
    "MIN_DISTINCT_VALUES",
    "SMAPE_LIMIT",
    "TWO_REGIME_MIN_ERROR",
    "TWO_REGIME_P",
    "gate_models",
]
