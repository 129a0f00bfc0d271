"""Rank kernels by predicted cost and growth, and find where one kernel overtakes another.

Crossovers are searched on the geometric path from the largest measured point to the target
(:func:`perfcast.analyze.points.path`): every parameter moves as ``start^(1-s) * end^s``. Among the
``top`` kernels by predicted cost at either end, a kernel *overtakes* another when it costs less
at the start and more at the target; the last sign change of the difference on a 257-point grid
is refined with Brent's method, so the reported crossing is where the order finally flips.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfcast.analyze.exclusive import exclusive_values
from perfcast.analyze.points import path, point_matrix
from perfcast.core.function import Model


@dataclass(frozen=True)
class KernelRank:
    """One kernel's predicted cost at the target and its growth from the reference point.

    Attributes
    ----------
    kernel : str
    predicted : float
        Model value at the target.
    reference : float
        Model value at the largest measured point.
    share : float
        Fraction of the total predicted at the target. For an inclusive metric the total and
        the share come from exclusive predictions (see ``exclusive``), so nothing counts twice.
    growth : float
        ``predicted / reference`` (inf when the reference is not positive).
    cost_rank, growth_rank : int
        1-based positions when sorted by ``predicted`` and by ``growth``, both descending.
    lead : dict of str to str
        Lead-order factor per parameter.
    expression : str
    exclusive : float
        The prediction at the target less those of the kernel's nearest kernel descendants
        (equal to ``predicted`` for an exclusive metric).
    """

    kernel: str
    predicted: float
    reference: float
    share: float
    growth: float
    cost_rank: int
    growth_rank: int
    lead: dict[str, str]
    expression: str
    exclusive: float

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON."""
        return {
            "kernel": self.kernel,
            "predicted": self.predicted,
            "reference": self.reference,
            "share": self.share,
            "growth": self.growth if np.isfinite(self.growth) else None,
            "cost_rank": self.cost_rank,
            "growth_rank": self.growth_rank,
            "lead": self.lead,
            "expression": self.expression,
            "exclusive": self.exclusive,
        }


def rank_kernels(
    models: Sequence[Model],
    target: Mapping[str, float],
    reference: Mapping[str, float],
    inclusive: bool = False,
) -> list[KernelRank]:
    """Kernels sorted by predicted cost at ``target`` (most expensive first).

    With ``inclusive`` (the metric's values contain those of the kernels each kernel calls),
    shares are of the total of exclusive predictions, each kernel's own part.
    """
    if not models:
        return []
    parameters = models[0].parameters
    at_target = np.array([m.evaluate(point_matrix(target, parameters, {}))[0] for m in models])
    at_reference = np.array(
        [m.evaluate(point_matrix(reference, parameters, {}))[0] for m in models]
    )
    own = exclusive_values([m.kernel for m in models], at_target) if inclusive else at_target
    total = float(np.sum(np.maximum(own, 0.0)))
    with np.errstate(divide="ignore", invalid="ignore"):
        growth = np.where(at_reference > 0, at_target / at_reference, np.inf)
    cost_order = np.argsort(-at_target, kind="stable")
    growth_order = np.argsort(-growth, kind="stable")
    cost_rank = np.empty(len(models), dtype=int)
    growth_rank = np.empty(len(models), dtype=int)
    cost_rank[cost_order] = np.arange(1, len(models) + 1)
    growth_rank[growth_order] = np.arange(1, len(models) + 1)
    ranks = [
        KernelRank(
            m.kernel,
            float(at_target[i]),
            float(at_reference[i]),
            max(float(own[i]), 0.0) / total if total > 0 else 0.0,
            float(growth[i]),
            int(cost_rank[i]),
            int(growth_rank[i]),
            {p: m.lead_term(p) for p in parameters},
            m.expression(),
            float(own[i]),
        )
        for i, m in enumerate(models)
    ]
    return [ranks[i] for i in cost_order]


@dataclass(frozen=True)
class Crossover:
    """``overtaking`` becomes more expensive than ``overtaken`` at ``at``.

    Attributes
    ----------
    overtaking, overtaken : str
    at : dict of str to float
        The crossing point on the path.
    fraction : float
        Position on the path, 0 at the start and 1 at the target (in log space).
    value : float
        The common model value there.
    """

    overtaking: str
    overtaken: str
    at: dict[str, float]
    fraction: float
    value: float

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON."""
        return {
            "overtaking": self.overtaking,
            "overtaken": self.overtaken,
            "at": self.at,
            "fraction": self.fraction,
            "value": self.value,
        }


def find_crossovers(
    models: Sequence[Model],
    start: Mapping[str, float],
    target: Mapping[str, float],
    top: int = 25,
    steps: int = 257,
) -> list[Crossover]:
    """Kernels that overtake others between ``start`` and ``target`` (see module doc).

    Returns
    -------
    list of Crossover
        Ordered by where the crossing happens, earliest first.
    """
    from scipy.optimize import brentq

    if len(models) < 2:
        return []
    parameters = models[0].parameters
    grid = path(start, target, parameters, steps)
    values = np.array([m.evaluate(grid) for m in models])  # (K, G)
    candidates = np.union1d(np.argsort(-values[:, 0])[:top], np.argsort(-values[:, -1])[:top])
    sub = values[candidates]
    difference = sub[:, None, :] - sub[None, :, :]  # (C, C, G): a - b
    overtakes = (difference[:, :, 0] < 0) & (difference[:, :, -1] > 0)
    fractions = np.linspace(0.0, 1.0, steps)
    low = np.log([start[n] for n in parameters])
    high = np.log([target[n] for n in parameters])
    result = []
    for a, b in zip(*np.nonzero(overtakes), strict=True):
        d = difference[a, b]
        last = int(np.flatnonzero(d <= 0)[-1])
        model_a, model_b = models[candidates[a]], models[candidates[b]]

        def gap(s: float, ma: Model = model_a, mb: Model = model_b) -> float:
            point = _on_path(low, high, s)
            return float(ma.evaluate(point)[0] - mb.evaluate(point)[0])

        s = brentq(gap, fractions[last], fractions[last + 1], xtol=1e-10)
        point = _on_path(low, high, s)[0]
        at = {n: float(v) for n, v in zip(parameters, point, strict=True) if start[n] != target[n]}
        result.append(
            Crossover(
                model_a.kernel,
                model_b.kernel,
                at,
                float(s),
                float(model_a.evaluate(point[None, :])[0]),
            )
        )
    result.sort(key=lambda c: c.fraction)
    return result


def _on_path(low: np.ndarray, high: np.ndarray, s: float) -> np.ndarray:
    return np.exp(low * (1 - s) + high * s)[None, :]
