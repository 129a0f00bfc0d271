"""Hotspot-profile differences between scales (Marcus, *Techniques for Automated Performance
Analysis*, section 3).

A hotspot profile is the time each kernel takes at one configuration. Two profiles ``a`` and
``b`` (same kernels, same order) are compared three ways:

* Pearson's chi-square test of independence on the 2 x K table of seconds (eq. 12): the
  statistic, ``K - 1`` degrees of freedom and the right-tail probability the paper calls
  ``D'(a, b)``. That probability is near 1 for *similar* profiles, so the difference we report is
  ``1 - p``. The statistic depends on the unit (seconds vs milliseconds), as the paper notes.
* Kendall's tau between the two rankings, ``tau = (C - D) / N`` with ``N = K(K-1)/2`` (the
  paper's definition; a pair tied in both profiles has not changed its order and counts as
  concordant, a pair tied in only one counts as neither), and the distance
  ``D^T = (1 - tau) / 2`` (eq. 13). ``variant="b"`` gives the tie-corrected tau-b.
* The total-variation distance ``0.5 * sum |a/sum(a) - b/sum(b)|`` of the proportions, which
  is unit-free (our addition).

Kernels that are zero in both profiles carry no information and are left out of chi-square.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from perfcast.analyze.exclusive import exclusive_values
from perfcast.analyze.points import doubling_grid, point_matrix
from perfcast.core.errors import InputError
from perfcast.core.experiment import KERNEL, METRIC, VALUE, Experiment
from perfcast.core.function import Model


@dataclass(frozen=True)
class ChiSquare:
    """Chi-square distribution difference of two hotspot profiles."""

    statistic: float
    dof: int
    p_value: float

    @property
    def difference(self) -> float:
        """``1 - p``: near 0 for similar profiles, near 1 for different ones."""
        return 1.0 - self.p_value


def _pair(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise InputError("both hotspot profiles must list the same kernels")
    if np.any(x < 0) or np.any(y < 0) or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise InputError("hotspot profiles must hold finite, non-negative values")
    return x, y


def chi_square_difference(a: Sequence[float], b: Sequence[float]) -> ChiSquare:
    """Pearson's chi-square test of independence of two profiles (paper eq. 12).

    Parameters
    ----------
    a, b : sequence of float
        Seconds (or another count-like unit) per kernel, same kernel order.
    """
    from scipy import stats

    x, y = _pair(a, b)
    keep = (x + y) > 0
    x, y = x[keep], y[keep]
    if len(x) < 2 or x.sum() == 0 or y.sum() == 0:
        return ChiSquare(0.0, max(len(x) - 1, 0), 1.0)
    row_total = x + y
    total = row_total.sum()
    expected_a = row_total * x.sum() / total
    expected_b = row_total * y.sum() / total
    statistic = float(
        np.sum((x - expected_a) ** 2 / expected_a + (y - expected_b) ** 2 / expected_b)
    )
    dof = len(x) - 1
    return ChiSquare(statistic, dof, float(stats.chi2.sf(statistic, dof)))


def kendall_tau(a: Sequence[float], b: Sequence[float], variant: str = "a") -> float:
    """Kendall's rank correlation of two profiles.

    ``variant="a"``: ``(C - D) / N`` over all ``N = K(K-1)/2`` pairs (the paper's tau). A pair
    whose order "has not changed" is concordant, so a pair tied in both profiles counts as
    concordant and a pair tied in only one counts as neither: identical profiles give 1 even
    with ties (tau-a proper would give less). Without ties this is scipy's tau.
    ``variant="b"``: ``(C - D) / sqrt((N - T_a)(N - T_b))`` with ``T`` the pairs tied in one
    profile. Both equal 1 for identical orderings and -1 for reversed ones. Memory grows as
    ``K^2`` (fine for thousands of kernels).
    """
    x, y = _pair(a, b)
    k = len(x)
    if k < 2:
        return 1.0
    i, j = np.triu_indices(k, 1)
    sx = np.sign(x[i] - x[j])
    sy = np.sign(y[i] - y[j])
    pairs = k * (k - 1) / 2
    if variant == "a":
        kept = np.count_nonzero(sx == sy)
        return float(kept - np.count_nonzero(sx * sy < 0)) / pairs
    score = float(np.sum(sx * sy))
    if variant == "b":
        denominator = np.sqrt(float(np.count_nonzero(sx)) * float(np.count_nonzero(sy)))
        return score / denominator if denominator else 1.0
    raise InputError(f"unknown Kendall tau variant {variant!r} (use 'a' or 'b')")


def kendall_distance(a: Sequence[float], b: Sequence[float]) -> float:
    """The paper's ``D^T = (1 - tau) / 2`` in ``[0, 1]`` (eq. 13, tau-a)."""
    return (1.0 - kendall_tau(a, b)) / 2.0


def total_variation(a: Sequence[float], b: Sequence[float]) -> float:
    """Half the L1 distance between the two profiles' proportions, in ``[0, 1]``."""
    x, y = _pair(a, b)
    if x.sum() == 0 or y.sum() == 0:
        return 0.0 if x.sum() == y.sum() else 1.0
    return float(0.5 * np.sum(np.abs(x / x.sum() - y / y.sum())))


@dataclass(frozen=True)
class ProfileStep:
    """The difference between the profiles at two consecutive values of a parameter."""

    parameter: str
    start: float
    end: float
    origin: str
    chi_square: float
    chi_square_dof: int
    chi_square_p: float
    kendall_tau: float
    kendall_distance: float
    total_variation: float

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON."""
        return asdict(self)


@dataclass
class ProfileShift:
    """How the hotspot profile changes along one parameter.

    Attributes
    ----------
    parameter : str
    fixed : dict
        Values of the other parameters.
    kernels : list of str
    values : ndarray, shape (n_values, n_kernels)
        The profiles (measured means, then model predictions beyond the measurements).
    at : ndarray
        Parameter value of each profile.
    origins : list of str
        ``measurements`` or ``models`` per profile.
    steps : list of ProfileStep
        Consecutive comparisons.
    """

    parameter: str
    fixed: dict[str, float]
    kernels: list[str]
    values: np.ndarray
    at: np.ndarray
    origins: list[str]
    steps: list[ProfileStep]

    def most_changed(self) -> dict[str, ProfileStep | None]:
        """The step with the largest change by each measure."""
        if not self.steps:
            return {"chi_square": None, "kendall": None, "total_variation": None}
        return {
            "chi_square": min(self.steps, key=lambda s: (s.chi_square_p, -s.chi_square)),
            "kendall": max(self.steps, key=lambda s: s.kendall_distance),
            "total_variation": max(self.steps, key=lambda s: s.total_variation),
        }

    def to_dict(self, top: int = 10) -> dict[str, Any]:
        """Plain dictionary for JSON; ``top`` kernels' proportions per profile."""
        totals = self.values.sum(axis=1, keepdims=True)
        shares = np.divide(self.values, totals, out=np.zeros_like(self.values), where=totals > 0)
        order = np.argsort(-shares.mean(axis=0))[:top]
        return {
            "parameter": self.parameter,
            "fixed": self.fixed,
            "profiles": [
                {
                    "at": float(v),
                    "origin": o,
                    "top": {self.kernels[k]: float(shares[i, k]) for k in order},
                }
                for i, (v, o) in enumerate(zip(self.at, self.origins, strict=True))
            ],
            "steps": [s.to_dict() for s in self.steps],
            "most_changed": {
                name: None if step is None else {"start": step.start, "end": step.end}
                for name, step in self.most_changed().items()
            },
        }


def compare_profiles(
    a: Sequence[float], b: Sequence[float], parameter: str, start: float, end: float, origin: str
) -> ProfileStep:
    """All three differences between two profiles as one :class:`ProfileStep`."""
    chi = chi_square_difference(a, b)
    tau = kendall_tau(a, b)
    return ProfileStep(
        parameter,
        float(start),
        float(end),
        origin,
        chi.statistic,
        chi.dof,
        chi.p_value,
        tau,
        (1 - tau) / 2,
        total_variation(a, b),
    )


def profile_shift(
    experiment: Experiment,
    parameter: str,
    metric: str,
    models: Sequence[Model] | None = None,
    target: float | None = None,
    fixed: dict[str, float] | None = None,
    inclusive: bool = False,
) -> ProfileShift:
    """Hotspot profiles along ``parameter`` and the differences between consecutive ones.

    Parameters
    ----------
    experiment : Experiment
    parameter : str
        The parameter to move along (usually the scale).
    metric : str
    models : sequence of Model, optional
        When given with ``target``, profiles predicted at doublings beyond the largest measured
        value up to ``target`` extend the measured ones.
    target : float, optional
    fixed : dict, optional
        Values of the other parameters; by default the setting with the most measured values
        of ``parameter`` (the largest such setting on ties).
    inclusive : bool
        The metric's values contain those of the kernels each kernel calls: profiles are made
        of exclusive values (each kernel less its nearest kernel descendants), so that no
        callee counts twice in a profile's proportions.

    Raises
    ------
    InputError
        When the parameter is unknown or fewer than two profiles exist.
    """
    names = list(experiment.parameter_names)
    if parameter not in names:
        raise InputError(
            f"'{parameter}' is not a parameter ({', '.join(names)})", experiment.source
        )
    table = experiment.frame[experiment.frame[METRIC] == metric]
    if table.empty:
        raise InputError(f"no measurements of metric '{metric}'", experiment.source)
    means = table.groupby([*names, KERNEL], sort=True)[VALUE].mean().unstack(KERNEL)
    others = [n for n in names if n != parameter]
    if others:
        levels = means.reset_index()[[*others, parameter]]
        if fixed is None:
            counts = levels.groupby(others)[parameter].nunique()
            best = counts[counts == counts.max()].index.max()
            best = best if isinstance(best, tuple) else (best,)
            fixed = {n: float(v) for n, v in zip(others, best, strict=True)}
        mask = np.ones(len(means), dtype=bool)
        for name, value in fixed.items():
            mask &= np.isclose(means.index.get_level_values(name).to_numpy(dtype=float), value)
        means = means[mask]
        at = means.index.get_level_values(parameter).to_numpy(dtype=float)
    else:
        fixed = {}
        at = means.index.to_numpy(dtype=float)
    kernels = [str(k) for k in means.columns]
    values = means.to_numpy(dtype=float)
    values = np.where(np.isnan(values), 0.0, values)
    origins = ["measurements"] * len(at)
    if models is not None and target is not None and target > at.max():
        by_kernel = {m.kernel: m for m in models}
        grid = doubling_grid(at, target)[len(at) :]
        base = {**fixed, parameter: float(at.max())}
        points = point_matrix(base, models[0].parameters, {parameter: grid})
        predicted = np.zeros((len(grid), len(kernels)))
        for k, kernel in enumerate(kernels):
            if kernel in by_kernel:
                predicted[:, k] = np.maximum(by_kernel[kernel].evaluate(points), 0.0)
        values = np.vstack([values, predicted])
        at = np.concatenate([at, grid])
        origins += ["models"] * len(grid)
    if inclusive:
        values = np.array([exclusive_values(kernels, row) for row in values])
    if len(at) < 2:
        raise InputError(
            f"need profiles at two or more values of '{parameter}' to compare", experiment.source
        )
    steps = [
        compare_profiles(
            values[i],
            values[i + 1],
            parameter,
            at[i],
            at[i + 1],
            "models" if origins[i + 1] == "models" else "measurements",
        )
        for i in range(len(at) - 1)
    ]
    return ProfileShift(parameter, fixed, kernels, values, at, origins, steps)
