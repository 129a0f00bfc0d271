"""Strong- and weak-scaling error and divergence metrics (Marcus, *Techniques for Automated
Performance Analysis*, sections 2.1-2.2).

For run times ``M(n)`` at ``n`` processes the scaling errors between ``n1 < n2`` are

* strong (fixed problem): ``alpha = n2/n1 - M(n1)/M(n2)`` (0 when the speed-up is ideal),
* weak (problem grows with ``n``): ``beta = 1 - M(n1)/M(n2)`` (0 when the time stays flat).

Two divergence figures summarize how the error grows with ``n2`` for the smallest ``n1``:

* ``paper_divergence`` -- the paper's ``D' = -corr(n2, error)``, reported as defined. Note that it
  only measures how monotone the trend is: a steadily growing error gives -1, which the paper's
  convention ranks as *better* than a flat, noisy one. It cannot tell linear from exponential.
* :class:`GrowthShape` -- fits ``error = a + b*n2`` and ``error = a + b*exp(c*n2/max n2)``. The
  linear model is the exponential one in the limit ``c -> 0``, so the extra parameter is tested
  with the nested-model F-test, ``F = (RSS_lin - RSS_exp) / (RSS_exp / (k - 3))`` on ``k``
  scales: the growth is *exponential* when ``c > 0`` and the F-test's p-value is below 0.05
  (about 5 % false calls on noisy linear errors), *linear* otherwise. Both fits' R², the
  statistic and p-value are reported, and the efficiency loss ``1 - efficiency`` at the largest
  scale (``alpha * n1/n2`` or ``beta``), the oriented figure :mod:`perfcast.analyze.optimize`
  uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from perfcast.analyze.points import doubling_grid, point_matrix
from perfcast.core.errors import InputError
from perfcast.core.experiment import KERNEL, METRIC, VALUE, Experiment
from perfcast.core.function import Model

STRONG, WEAK = "strong", "weak"
#: How a problem-size parameter is judged: growth with the problem, not process scaling.
PROBLEM_SIZE_SWEEP = "problem-size sweep"


@dataclass(frozen=True)
class ScalingError:
    """The scaling error between ``n1`` and ``n2`` processes."""

    n1: float
    n2: float
    error: float


@dataclass(frozen=True)
class GrowthShape:
    """Whether a scaling error grows linearly or exponentially with ``n2``.

    Attributes
    ----------
    kind : str
        ``linear``, ``exponential``, or ``undetermined`` (fewer than 3 scales).
    linear_slope, linear_intercept : float
        ``error = intercept + slope * n2``.
    linear_r2, exponential_r2 : float or None
        Coefficients of determination of both fits (None when not fitted).
    exponential_rate : float or None
        ``c`` in ``a + b*exp(c * n2 / max(n2))``.
    f_statistic, f_p_value : float or None
        The F-test of the exponential fit's extra parameter (needs 4 or more scales).
    """

    kind: str
    linear_slope: float | None = None
    linear_intercept: float | None = None
    linear_r2: float | None = None
    exponential_rate: float | None = None
    exponential_r2: float | None = None
    f_statistic: float | None = None
    f_p_value: float | None = None


@dataclass
class Scaling:
    """A scaling (set of ``(n1, n2, error)``) with its divergence figures.

    Attributes
    ----------
    mode : str
        ``strong`` (alpha) or ``weak`` (beta).
    origin : str
        ``measurements`` or ``models``.
    fixed : dict
        Values of the other parameters along this scaling.
    scales : ndarray
        The process counts used, ascending.
    times : ndarray
        ``M(n)`` at those counts.
    errors : list of ScalingError
        Every pair ``n1 < n2``.
    paper_divergence : float or None
        ``-corr(n2, error)`` for the smallest ``n1`` (None with fewer than 3 scales or a
        constant error).
    growth : GrowthShape
    efficiency_loss : float
        ``1 - efficiency`` between the smallest and largest scale.
    mean_efficiency_loss : float
        Mean of ``1 - efficiency`` from the smallest scale to every larger one.
    """

    mode: str
    origin: str
    fixed: dict[str, float]
    scales: np.ndarray
    times: np.ndarray
    errors: list[ScalingError] = field(default_factory=list)
    paper_divergence: float | None = None
    growth: GrowthShape = field(default_factory=lambda: GrowthShape("undetermined"))
    efficiency_loss: float = float("nan")
    mean_efficiency_loss: float = float("nan")

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON."""
        return {
            "mode": self.mode,
            "origin": self.origin,
            "fixed": self.fixed,
            "scales": self.scales.tolist(),
            "times": self.times.tolist(),
            "errors": [asdict(e) for e in self.errors],
            "paper_divergence": self.paper_divergence,
            "growth": asdict(self.growth),
            "efficiency_loss": _finite(self.efficiency_loss),
            "mean_efficiency_loss": _finite(self.mean_efficiency_loss),
        }


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def strong_scaling_errors(scales: ArrayLike, times: ArrayLike) -> list[ScalingError]:
    """``alpha(n1, n2) = n2/n1 - M(n1)/M(n2)`` for every pair ``n1 < n2``."""
    n, t = _sorted(scales, times)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = t[:, None] / t[None, :]
    return [
        ScalingError(float(n[i]), float(n[j]), float(n[j] / n[i] - ratio[i, j]))
        for i in range(len(n))
        for j in range(i + 1, len(n))
    ]


def weak_scaling_errors(scales: ArrayLike, times: ArrayLike) -> list[ScalingError]:
    """``beta(n1, n2) = 1 - M(n1)/M(n2)`` for every pair ``n1 < n2``."""
    n, t = _sorted(scales, times)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = t[:, None] / t[None, :]
    return [
        ScalingError(float(n[i]), float(n[j]), float(1 - ratio[i, j]))
        for i in range(len(n))
        for j in range(i + 1, len(n))
    ]


def _sorted(scales: ArrayLike, times: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(scales, dtype=float)
    t = np.asarray(times, dtype=float)
    if n.shape != t.shape or n.ndim != 1:
        raise InputError("scales and times must be equally long sequences")
    if len(np.unique(n)) != len(n):
        raise InputError("each scale may appear only once in a scaling")
    order = np.argsort(n)
    return n[order], t[order]


def paper_divergence(errors: Sequence[ScalingError], n1: float | None = None) -> float | None:
    """The paper's ``D'_n = -CorrCoef({(n2, error)})`` for one ``n1`` (default: the smallest).

    Returns None when fewer than 3 pairs exist or the correlation is undefined.
    """
    if not errors:
        return None
    n1 = min(e.n1 for e in errors) if n1 is None else n1
    row = [(e.n2, e.error) for e in errors if e.n1 == n1]
    if len(row) < 2:
        return None
    x, y = np.array(row).T
    if np.ptp(x) == 0 or np.ptp(y) <= 1e-12 * max(1.0, float(np.abs(y).max())):
        return None
    return float(-np.corrcoef(x, y)[0, 1])


def _r2(y: np.ndarray, fitted: np.ndarray) -> float:
    total = float(np.sum((y - y.mean()) ** 2))
    return 1.0 if total == 0 else float(1 - np.sum((y - fitted) ** 2) / total)


def growth_shape(n2: Sequence[float], error: Sequence[float], level: float = 0.05) -> GrowthShape:
    """Classify the growth of ``error`` over ``n2``: linear or exponential (F-test, see module)."""
    from scipy import stats

    x = np.asarray(n2, dtype=float)
    y = np.asarray(error, dtype=float)
    if len(x) < 3 or not np.all(np.isfinite(y)):
        return GrowthShape("undetermined")
    slope, intercept = np.polyfit(x, y, 1)
    linear = intercept + slope * x
    shape = GrowthShape("linear", float(slope), float(intercept), _r2(y, linear))
    if len(x) < 4:
        return shape
    rate, rss, fitted = _fit_exponential(x / x.max(), y)
    rss_linear = float(np.sum((y - linear) ** 2))
    floor = 1e-12 * float(np.sum((y - y.mean()) ** 2)) + 1e-300
    gain = max(rss_linear - rss, 0.0)
    statistic = gain / (max(rss, floor) / (len(x) - 3)) if gain > floor else 0.0
    p_value = float(stats.f.sf(statistic, 1, len(x) - 3))
    exponential = rate > 0 and p_value < level
    return GrowthShape(
        "exponential" if exponential else "linear",
        shape.linear_slope,
        shape.linear_intercept,
        shape.linear_r2,
        rate,
        _r2(y, fitted),
        float(statistic),
        p_value,
    )


def _exponential_rss(u: np.ndarray, y: np.ndarray, rate: float) -> tuple[float, np.ndarray]:
    design = np.column_stack([np.ones_like(u), np.exp(rate * u)])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    fitted = design @ coef
    return float(np.sum((y - fitted) ** 2)), fitted


def _fit_exponential(u: np.ndarray, y: np.ndarray) -> tuple[float, float, np.ndarray]:
    """Least squares ``a + b*exp(c*u)`` for ``0 < c <= 60``: a, b are linear given c, so the
    residual is profiled over c on a grid and refined by a bounded scalar search."""
    from scipy.optimize import minimize_scalar

    rates = np.geomspace(0.05, 60.0, 48)
    residuals = [_exponential_rss(u, y, r)[0] for r in rates]
    best = int(np.argmin(residuals))
    low, high = rates[max(best - 1, 0)], rates[min(best + 1, len(rates) - 1)]
    found = minimize_scalar(
        lambda r: _exponential_rss(u, y, r)[0], bounds=(low, high), method="bounded"
    )
    rate = float(found.x) if found.fun <= residuals[best] else float(rates[best])
    rss, fitted = _exponential_rss(u, y, rate)
    return rate, rss, fitted


def scaling_from_times(
    scales: ArrayLike,
    times: ArrayLike,
    mode: str,
    origin: str,
    fixed: Mapping[str, float] | None = None,
) -> Scaling:
    """Errors, divergence and growth shape of one scaling.

    Parameters
    ----------
    scales, times : sequence of float
        Process counts and the run time ``M(n)`` at each.
    mode : {"strong", "weak"}
    origin : str
        Where the times came from, e.g. ``measurements`` or ``models``.
    fixed : mapping, optional
        Values of the other parameters, carried into the result.
    """
    if mode not in (STRONG, WEAK):
        raise InputError(f"scaling mode must be 'strong' or 'weak', not {mode!r}")
    n, t = _sorted(scales, times)
    errors = strong_scaling_errors(n, t) if mode == STRONG else weak_scaling_errors(n, t)
    result = Scaling(mode, origin, dict(fixed or {}), n, t, errors)
    if len(n) < 2:
        return result
    first = [e for e in errors if e.n1 == n[0]]
    losses = np.array([e.error * (n[0] / e.n2 if mode == STRONG else 1.0) for e in first])
    result.efficiency_loss = float(losses[-1])
    result.mean_efficiency_loss = float(losses.mean())
    result.paper_divergence = paper_divergence(errors)
    result.growth = growth_shape([e.n2 for e in first], [e.error for e in first])
    return result


def infer_mode(
    experiment: Experiment, scale: str, metric: str, size: str | None = None
) -> tuple[str, str]:
    """Tell strong from weak scaling; returns ``(mode, reason)``.

    In order: the experiment's ``metadata["scaling"]``; a problem-size parameter that is a
    separate model variable (then per-process work at fixed size shrinks like 1/p: ``strong``,
    unless the size grows in proportion to the scale at every point: ``weak``); otherwise the
    log-log slope of the total measured time over the scale: ``strong`` when the time falls at
    least like ``p^-0.5``, else ``weak``.
    """
    declared = str(experiment.metadata.get("scaling", "")).lower()
    if declared in (STRONG, WEAK):
        return declared, f"declared in the experiment's metadata (scaling={declared})"
    points = experiment.points()
    names = list(experiment.parameter_names)
    p = points[:, names.index(scale)]
    if size is not None:
        ratio = points[:, names.index(size)] / p
        if len(np.unique(p)) > 1 and np.allclose(ratio, ratio[0], rtol=1e-6):
            return WEAK, f"{size} grows in proportion to {scale} at every measured point"
        return STRONG, (
            f"{size} is a separate parameter, so at fixed {size} the work per process "
            f"should shrink like 1/{scale}"
        )
    frame = totals_frame(experiment, metric)
    if frame[scale].nunique() < 2:
        return STRONG, "only one measured scale; assuming strong scaling"
    x, y = np.log(frame[scale].to_numpy(dtype=float)), np.log(frame["time"].to_numpy())
    slope = float(np.polyfit(x, y, 1)[0])
    if slope <= -0.5:
        return STRONG, f"total time falls with {scale} (log-log slope {slope:.2f} <= -0.5)"
    return WEAK, f"total time does not fall with {scale} (log-log slope {slope:.2f} > -0.5)"


def total_times(
    experiment: Experiment, metric: str, kernels: Sequence[str] | None = None
) -> pd.Series:
    """Sum over kernels of the mean over repetitions at each measured point.

    Only points where every selected kernel was measured are kept, so a kernel missing at one
    point does not fake a speed-up. The index is the point (a tuple for several parameters, a
    number for one). Nested call paths are summed as they are: pass exclusive metrics, or
    ``kernels`` naming the inclusive root.
    """
    names = list(experiment.parameter_names)
    table = experiment.frame[experiment.frame[METRIC] == metric]
    if kernels is not None:
        table = table[table[KERNEL].isin(list(kernels))]
    if table.empty:
        raise InputError(f"no measurements of metric '{metric}'", experiment.source)
    means = table.groupby([KERNEL, *names], sort=True)[VALUE].mean().unstack(KERNEL)
    complete = means.dropna()
    if complete.empty:
        complete = means
    return complete.sum(axis=1, min_count=1)


def totals_frame(
    experiment: Experiment, metric: str, kernels: Sequence[str] | None = None
) -> pd.DataFrame:
    """:func:`total_times` as a table with one column per parameter and ``time``."""
    totals = total_times(experiment, metric, kernels)
    names = list(experiment.parameter_names)
    if len(names) > 1:
        return totals.reset_index(name="time")
    return pd.DataFrame({names[0]: totals.index.to_numpy(dtype=float), "time": totals.to_numpy()})


def measured_scalings(
    experiment: Experiment,
    scale: str,
    mode: str,
    metric: str,
    size: str | None = None,
    kernels: Sequence[str] | None = None,
) -> list[Scaling]:
    """Scalings from the measured totals, one per setting of the other parameters.

    Under strong scaling the points of one scaling share every other parameter; under weak
    scaling with a size parameter they share all but the size, which must grow in proportion
    to the scale (points off that line are left out).
    """
    names = list(experiment.parameter_names)
    frame = totals_frame(experiment, metric, kernels)
    held = [n for n in names if n != scale and not (mode == WEAK and n == size)]
    groups = frame.groupby(held, sort=True) if held else [((), frame)]
    result = []
    for _, group in groups:
        fixed = {name: float(group[name].iloc[0]) for name in held}  # shared by the group
        if mode == WEAK and size is not None:
            group = _proportional(group, scale, size)
            if len(group) >= 2:
                fixed[f"{size}/{scale}"] = float(group[size].iloc[0] / group[scale].iloc[0])
        if len(group) >= 2 and group[scale].is_unique:
            result.append(
                scaling_from_times(group[scale], group["time"], mode, "measurements", fixed)
            )
    return result


def _proportional(group: pd.DataFrame, scale: str, size: str) -> pd.DataFrame:
    ratios = (group[size] / group[scale]).round(12)
    # The most common ratio; pandas types index labels as Hashable, these are floats.
    best = cast(float, ratios.value_counts().idxmax())
    return group[np.isclose(ratios, best, rtol=1e-6)]


def modeled_scaling(
    models: Sequence[Model],
    scale: str,
    mode: str,
    target: Mapping[str, float],
    measured_scales: Sequence[float],
    size: str | None = None,
) -> Scaling:
    """The scaling the models predict from the smallest measured scale up to the target.

    The scales are the measured ones followed by doublings up to ``target[scale]``; the other
    parameters sit at the target, except that under weak scaling a size parameter grows in
    proportion to the scale (``size = target[size] * n / target[scale]``).
    """
    if not models:
        raise InputError("no models to evaluate")
    parameters = models[0].parameters
    grid = doubling_grid(measured_scales, target[scale])
    varying: dict[str, np.ndarray] = {scale: grid}
    if mode == WEAK and size is not None:
        varying[size] = target[size] * grid / target[scale]
    points = point_matrix(target, parameters, varying)
    times = np.sum([m.evaluate(points) for m in models], axis=0)
    fixed = {n: float(target[n]) for n in parameters if n not in varying}
    return scaling_from_times(grid, times, mode, "models", fixed)
