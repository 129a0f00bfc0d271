"""Compare two experiments (two machines, two code versions): models and significant changes.

Statistics, per kernel measured in both experiments:

1. At every point measured in both with at least two repetitions on each side, Welch's t-test
   on the logarithms of the repetitions (so the effect is a ratio and multiplicative noise is
   symmetric; raw values when a kernel has non-positive values), one-sided in each direction:
   ``B slower than A`` (regression) and ``B faster`` (improvement). Identical repetitions with a
   difference (deterministic counters) give p = 0, equal ones p = 1.
2. Per kernel and direction, Fisher's method combines the per-point p-values into one.
3. Holm's step-down correction over all kernels and both directions controls the family-wise
   error rate at ``alpha``: two noisy repeats of one experiment report nothing with probability
   at least ``1 - alpha``.
4. A significant kernel counts as a regression (improvement) only when the change is at least
   ``min_effect`` (default 5 %) at some point. *From which scale on*: the smallest point whose
   own test survives Holm's correction within the kernel with that effect size.

Model comparison (when models are given): lead orders, coefficients per term, where the two
models cross on the path from the smallest measured point to the target, and slope and
intercept when both models are linear in a parameter (``a + b*x``, the paper's section 4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from perfcast.analyze.points import path
from perfcast.core.errors import InputError
from perfcast.core.experiment import KERNEL, METRIC, VALUE, Experiment
from perfcast.core.function import Model


def welch_one_sided(
    mean_a: np.ndarray,
    var_a: np.ndarray,
    n_a: np.ndarray,
    mean_b: np.ndarray,
    var_b: np.ndarray,
    n_b: np.ndarray,
) -> np.ndarray:
    """p-values of Welch's t-test that B's mean exceeds A's (vectorized).

    NaN where either side has fewer than two observations.
    """
    from scipy import stats

    se2 = var_a / n_a + var_b / n_b
    difference = mean_b - mean_a
    with np.errstate(divide="ignore", invalid="ignore"):
        t = difference / np.sqrt(se2)
        dof = se2**2 / ((var_a / n_a) ** 2 / (n_a - 1) + (var_b / n_b) ** 2 / (n_b - 1))
        p = stats.t.sf(t, dof)
    exact = se2 == 0
    p = np.where(exact, np.where(difference > 0, 0.0, 1.0), p)
    return np.where((n_a < 2) | (n_b < 2), np.nan, p)


def holm(p_values: ArrayLike) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN stays NaN and does not count as a test)."""
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full_like(p, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    if len(valid) == 0:
        return adjusted
    order = valid[np.argsort(p[valid], kind="stable")]
    m = len(order)
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def fisher(p_values: ArrayLike) -> float:
    """Fisher's combination of independent p-values (NaN ignored; NaN when none)."""
    from scipy import stats

    p = np.asarray(p_values, dtype=float)
    p = p[~np.isnan(p)]
    if len(p) == 0:
        return float("nan")
    statistic = -2.0 * np.sum(np.log(np.clip(p, 1e-300, 1.0)))
    return float(stats.chi2.sf(statistic, 2 * len(p)))


@dataclass
class PointChange:
    """One kernel at one point: the ratio of geometric means B/A and both one-sided p-values."""

    point: dict[str, float]
    ratio: float
    p_slower: float
    p_faster: float
    n_a: int
    n_b: int


@dataclass
class KernelChange:
    """The statistical verdict and model comparison for one kernel.

    Attributes
    ----------
    kernel : str
    verdict : str
        ``regression``, ``improvement``, ``unchanged`` or ``untested`` (no repetitions).
    p_slower, p_faster : float
        Holm-adjusted combined p-values.
    onset : dict or None
        The smallest point from which the change is significant on its own.
    max_ratio, min_ratio : float
        Extreme B/A ratios over the points.
    points : list of PointChange
    models : dict or None
        Model comparison (see module doc).
    """

    kernel: str
    verdict: str
    p_slower: float
    p_faster: float
    onset: dict[str, float] | None
    max_ratio: float
    min_ratio: float
    points: list[PointChange] = field(default_factory=list)
    models: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON."""
        return {
            "kernel": self.kernel,
            "verdict": self.verdict,
            "p_slower": _clean(self.p_slower),
            "p_faster": _clean(self.p_faster),
            "onset": self.onset,
            "max_ratio": _clean(self.max_ratio),
            "min_ratio": _clean(self.min_ratio),
            "points": [
                {
                    "point": c.point,
                    "ratio": _clean(c.ratio),
                    "p_slower": _clean(c.p_slower),
                    "p_faster": _clean(c.p_faster),
                    "repetitions": [c.n_a, c.n_b],
                }
                for c in self.points
            ],
            "models": self.models,
        }


def _clean(value: float) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


@dataclass
class Comparison:
    """Result of :func:`compare_experiments`."""

    metric: str
    alpha: float
    min_effect: float
    kernels: list[KernelChange]
    only_in_a: list[str]
    only_in_b: list[str]

    @property
    def regressions(self) -> list[KernelChange]:
        """Kernels that got significantly slower, worst first."""
        found = [k for k in self.kernels if k.verdict == "regression"]
        return sorted(found, key=lambda k: -k.max_ratio)

    @property
    def improvements(self) -> list[KernelChange]:
        """Kernels that got significantly faster, best first."""
        found = [k for k in self.kernels if k.verdict == "improvement"]
        return sorted(found, key=lambda k: k.min_ratio)

    def summary(self) -> list[str]:
        """One sentence per regression and improvement."""
        lines = []
        for change in self.regressions:
            onset = _point_text(change.onset) if change.onset else "some points"
            lines.append(
                f"{change.kernel} got slower (up to {100 * (change.max_ratio - 1):+.1f} %, "
                f"p = {change.p_slower:.2g}) from {onset} on"
            )
        for change in self.improvements:
            onset = _point_text(change.onset) if change.onset else "some points"
            lines.append(
                f"{change.kernel} got faster (down to {100 * (change.min_ratio - 1):+.1f} %, "
                f"p = {change.p_faster:.2g}) from {onset} on"
            )
        if not lines:
            lines.append(
                f"no significant change (family-wise alpha {self.alpha}, "
                f"minimum effect {100 * self.min_effect:.0f} %)"
            )
        return lines

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON (``perfcast compare --format json``)."""
        return {
            "metric": self.metric,
            "alpha": self.alpha,
            "min_effect": self.min_effect,
            "summary": self.summary(),
            "regressions": [k.kernel for k in self.regressions],
            "improvements": [k.kernel for k in self.improvements],
            "only_in_a": self.only_in_a,
            "only_in_b": self.only_in_b,
            "kernels": [k.to_dict() for k in self.kernels],
        }


def _point_text(point: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in point.items())


def _statistics(experiment: Experiment, metric: str) -> pd.DataFrame:
    names = list(experiment.parameter_names)
    table = experiment.frame[experiment.frame[METRIC] == metric]
    if table.empty:
        raise InputError(f"no measurements of metric '{metric}'", experiment.source)
    positive = table.groupby(KERNEL)[VALUE].transform("min") > 0
    table = table.assign(
        y=np.where(positive, np.log(table[VALUE].clip(lower=1e-300)), table[VALUE])
    )
    grouped = table.groupby([KERNEL, *names], sort=True)
    return pd.DataFrame(
        {
            "mean": grouped["y"].mean(),
            "var": grouped["y"].var(ddof=1),
            "n": grouped["y"].count(),
            "log": grouped[VALUE].min() > 0,
        }
    )


def compare_experiments(
    a: Experiment,
    b: Experiment,
    metric: str | None = None,
    models_a: Sequence[Model] | None = None,
    models_b: Sequence[Model] | None = None,
    alpha: float = 0.05,
    min_effect: float = 0.05,
    target: Mapping[str, float] | None = None,
) -> Comparison:
    """Statistically compare experiment ``b`` against the baseline ``a`` (see module doc).

    Parameters
    ----------
    a, b : Experiment
        Baseline and candidate; they must have the same parameters.
    metric : str, optional
        Defaults to ``time`` or the only metric.
    models_a, models_b : sequence of Model, optional
        Models of both for the model comparison.
    alpha : float
        Family-wise error rate.
    min_effect : float
        Smallest relative change reported.
    target : mapping, optional
        End of the path on which model crossings are searched (default: the largest point
        measured in either experiment).

    Raises
    ------
    InputError
        When the parameters differ or no kernel and point is shared.
    """
    if a.parameter_names != b.parameter_names:
        raise InputError(
            f"the experiments have different parameters ({', '.join(a.parameter_names)} vs "
            f"{', '.join(b.parameter_names)})",
            b.source,
        )
    if metric is None:
        metric = _default_metric(a, b)
    names = list(a.parameter_names)
    stats_a, stats_b = _statistics(a, metric), _statistics(b, metric)
    kernels_a = set(stats_a.index.get_level_values(KERNEL))
    kernels_b = set(stats_b.index.get_level_values(KERNEL))
    joined = stats_a.add_suffix("_a").join(stats_b.add_suffix("_b"), how="inner")
    if joined.empty:
        raise InputError("the experiments share no kernel measured at the same point", b.source)
    joined = _point_tests(joined)
    points = _point_changes(joined, names)
    blocks = _kernel_blocks(joined)
    p_slower, p_faster = joined["p_slower"].to_numpy(), joined["p_faster"].to_numpy()
    combined = np.array([[fisher(p_slower[rows]), fisher(p_faster[rows])] for _, rows in blocks])
    adjusted = holm(combined.ravel()).reshape(combined.shape)
    by_kernel_a = {m.kernel: m for m in models_a or []}
    by_kernel_b = {m.kernel: m for m in models_b or []}
    path_start, path_end = _model_path(a, b, names, target)
    changes = []
    for (kernel, rows), (slower, faster) in zip(blocks, adjusted, strict=True):
        models = None
        if kernel in by_kernel_a and kernel in by_kernel_b:
            models = compare_models(by_kernel_a[kernel], by_kernel_b[kernel], path_start, path_end)
        changes.append(
            _kernel_change(kernel, points[rows], slower, faster, alpha, min_effect, models)
        )
    return Comparison(
        metric,
        alpha,
        min_effect,
        changes,
        sorted(kernels_a - kernels_b),
        sorted(kernels_b - kernels_a),
    )


def _default_metric(a: Experiment, b: Experiment) -> str:
    """``time`` when both experiments measured it, else the first metric they share."""
    shared = [m for m in a.metric_names if m in b.metric_names]
    if not shared:
        raise InputError("the experiments share no metric", b.source)
    return "time" if "time" in shared else shared[0]


def _point_tests(joined: pd.DataFrame) -> pd.DataFrame:
    """``joined`` (statistics of A and B per kernel and point) with ratio and both p-values."""

    def welch(base: str, candidate: str) -> np.ndarray:
        return welch_one_sided(
            joined[f"mean_{base}"].to_numpy(),
            joined[f"var_{base}"].to_numpy(),
            joined[f"n_{base}"].to_numpy(),
            joined[f"mean_{candidate}"].to_numpy(),
            joined[f"var_{candidate}"].to_numpy(),
            joined[f"n_{candidate}"].to_numpy(),
        )

    p_slower, p_faster = welch("a", "b"), welch("b", "a")
    logged = (joined["log_a"] & joined["log_b"]).to_numpy()
    difference = (joined["mean_b"] - joined["mean_a"]).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(logged, np.exp(difference), joined["mean_b"] / joined["mean_a"])
    return joined.assign(ratio=ratio, p_slower=p_slower, p_faster=p_faster)


def _kernel_blocks(joined: pd.DataFrame) -> list[tuple[str, slice]]:
    """Each kernel with its rows in ``joined``, whose index is sorted by kernel."""
    kernel_column = joined.index.get_level_values(KERNEL).to_numpy().astype(str)
    starts = np.flatnonzero(np.r_[True, kernel_column[1:] != kernel_column[:-1]])
    ends = np.r_[starts[1:], len(joined)]
    return [(str(kernel_column[b]), slice(b, e)) for b, e in zip(starts, ends, strict=True)]


def _point_changes(joined: pd.DataFrame, names: list[str]) -> list[PointChange]:
    """One :class:`PointChange` per row of the tested ``joined`` table."""
    point_values = np.column_stack(
        [joined.index.get_level_values(n).to_numpy(dtype=float) for n in names]
    )
    ratio_column = joined["ratio"].to_numpy()
    p_slower, p_faster = joined["p_slower"].to_numpy(), joined["p_faster"].to_numpy()
    counts_a, counts_b = joined["n_a"].to_numpy(), joined["n_b"].to_numpy()
    return [
        PointChange(
            dict(zip(names, map(float, point_values[i]), strict=True)),
            float(ratio_column[i]),
            float(p_slower[i]),
            float(p_faster[i]),
            int(counts_a[i]),
            int(counts_b[i]),
        )
        for i in range(len(joined))
    ]


def _model_path(
    a: Experiment, b: Experiment, names: list[str], target: Mapping[str, float] | None
) -> tuple[dict[str, float], dict[str, float]]:
    """Where model crossings are searched: from the smallest point to ``target`` or the largest."""
    path_start = {
        n: float(min(a.points()[:, i].min(), b.points()[:, i].min())) for i, n in enumerate(names)
    }
    path_end = (
        dict(target)
        if target
        else {
            n: float(max(a.points()[:, i].max(), b.points()[:, i].max()))
            for i, n in enumerate(names)
        }
    )
    return path_start, path_end


def _kernel_change(
    kernel: str,
    points: list[PointChange],
    slower: float,
    faster: float,
    alpha: float,
    min_effect: float,
    models: dict[str, Any] | None,
) -> KernelChange:
    """The verdict on one kernel from its points and its Holm-adjusted combined p-values."""
    verdict, onset = _verdict(points, slower, faster, alpha, min_effect)
    ratios = np.array([c.ratio for c in points])
    return KernelChange(
        kernel,
        verdict,
        float(slower),
        float(faster),
        onset,
        float(np.nanmax(ratios)),
        float(np.nanmin(ratios)),
        points,
        models,
    )


def _verdict(
    points: list[PointChange], slower: float, faster: float, alpha: float, min_effect: float
) -> tuple[str, dict[str, float] | None]:
    if np.isnan(slower) and np.isnan(faster):
        return "untested", None
    for direction, p_kernel in (("regression", slower), ("improvement", faster)):
        if not p_kernel < alpha:
            continue
        if direction == "regression":
            p = np.array([c.p_slower for c in points])
            large = np.array([c.ratio >= 1 + min_effect for c in points])
        else:
            p = np.array([c.p_faster for c in points])
            large = np.array([c.ratio <= 1 / (1 + min_effect) for c in points])
        if not large.any():
            continue
        significant = (holm(p) < alpha) & large
        if significant.any():
            return direction, points[int(np.flatnonzero(significant)[0])].point
        return direction, None
    return "unchanged", None


def compare_models(
    model_a: Model, model_b: Model, start: Mapping[str, float], end: Mapping[str, float]
) -> dict[str, Any]:
    """Lead orders, coefficients, crossings and linear slopes of two models of one kernel."""
    parameters = model_a.parameters
    coefficients: dict[str, list[float | None]] = {"1": [model_a.constant, model_b.constant]}
    for side, model in enumerate((model_a, model_b)):
        for term in model.terms:
            entry = coefficients.setdefault(term.shape_text(), [None, None])
            entry[side] = term.coefficient
    result: dict[str, Any] = {
        "a": model_a.expression(),
        "b": model_b.expression(),
        "lead": {p: [model_a.lead_term(p), model_b.lead_term(p)] for p in parameters},
        "coefficients": coefficients,
        "crossings": model_crossings(model_a, model_b, start, end),
    }
    linear = {}
    for parameter in parameters:
        line_a, line_b = _line(model_a, parameter), _line(model_b, parameter)
        if line_a is not None and line_b is not None:
            linear[parameter] = {
                "intercept": [line_a[0], line_b[0]],
                "slope": [line_a[1], line_b[1]],
            }
    result["linear"] = linear
    return result


def _line(model: Model, parameter: str) -> tuple[float, float] | None:
    if len(model.terms) != 1:
        return None
    (term,) = model.terms
    if len(term.factors) != 1:
        return None
    (factor,) = term.factors
    if factor.parameter != parameter or factor.exponent != 1 or factor.log_exponent != 0:
        return None
    return model.constant, term.coefficient


def model_crossings(
    model_a: Model,
    model_b: Model,
    start: Mapping[str, float],
    end: Mapping[str, float],
    steps: int = 257,
) -> list[dict[str, Any]]:
    """Points on the geometric path from ``start`` to ``end`` where the two models are equal."""
    from scipy.optimize import brentq

    parameters = model_a.parameters
    if all(start[n] == end[n] for n in parameters):
        return []
    grid = path(start, end, parameters, steps)
    gap = model_b.evaluate(grid) - model_a.evaluate(grid)
    low = np.log([start[n] for n in parameters])
    high = np.log([end[n] for n in parameters])

    def difference(s: float) -> float:
        point = np.exp(low * (1 - s) + high * s)[None, :]
        return float(model_b.evaluate(point)[0] - model_a.evaluate(point)[0])

    fractions = np.linspace(0, 1, steps)
    crossings = []
    for i in np.flatnonzero(np.sign(gap[:-1]) * np.sign(gap[1:]) < 0):
        s = brentq(difference, fractions[i], fractions[i + 1], xtol=1e-10)
        point = np.exp(low * (1 - s) + high * s)
        crossings.append(
            {
                "at": {
                    n: float(v)
                    for n, v in zip(parameters, point, strict=True)
                    if start[n] != end[n]
                },
                "b_slower_after": bool(gap[i + 1] > 0),
            }
        )
    return crossings
