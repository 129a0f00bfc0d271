"""What similar tuned kernels predict about a new kernel's configurations (warm start).

A warm start knows, for each of a few tuned kernels similar to the new one, the configurations
it measured and how far each was from that kernel's best. :class:`TransferPrior` turns them into
one prediction per configuration of the new kernel's space: the similarity-weighted mean of each
neighbour's log ratio ``log(value / best)``. A neighbour that measured the configuration (after
adapting it to this space) contributes that measurement; one that did not contributes an additive
estimate from its measurements sharing each parameter value, never better than the second best
ratio it measured (what it did not measure is not known to be as good as its best). Only
ratios to each neighbour's own best enter, so kernels of very different run times weigh alike.

During the search the prior is corrected by the new kernel's own measurements
(:func:`transfer_pick`): the residual ``log(value) - prior`` is modelled as a constant plus one
effect per parameter value (ridge regression), so a parameter that matters differently for this
kernel than for its neighbours is learnt from a few contrasting evaluations while the rest of
the ranking still comes from the neighbours. The continuation exploits: a parameter value the
kernel has not measured keeps the neighbours' estimate, so a value they rank low is reached only
when the better ranked ones are used up or measured worse.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Config = Mapping[str, str]


def _key(config: Config) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((name, str(value)) for name, value in config.items()))


@dataclass(frozen=True)
class _Neighbour:
    weight: float
    measured: dict[tuple[tuple[str, str], ...], float]
    effects: dict[tuple[str, str], float]
    mean: float
    floor: float

    def predict(self, config: Config) -> float:
        known = self.measured.get(_key(config))
        if known is not None:
            return known
        additive = self.mean + sum(
            self.effects.get((name, str(value)), self.mean) - self.mean
            for name, value in config.items()
        )
        return max(additive, self.floor)


@dataclass(frozen=True)
class TransferPrior:
    """Predicted ``log(value / best)`` of configurations, from similar tuned kernels.

    Build it with :meth:`from_neighbours`.
    """

    neighbours: tuple[_Neighbour, ...]

    @classmethod
    def from_neighbours(
        cls,
        neighbours: Sequence[tuple[float, Sequence[tuple[dict[str, Any], float]]]],
        adapt: Callable[[dict[str, Any]], dict[str, str]],
    ) -> TransferPrior | None:
        """The prior of ``(similarity, [(configuration, value), ...])`` per neighbour.

        Parameters
        ----------
        neighbours : sequence of (float, sequence of (mapping, float))
            Each similar kernel's similarity in [0, 1] and its successful measurements
            (positive values, lower is better).
        adapt : callable
            Maps a neighbour's configuration onto this space (``TuningSpace.adapt``).

        Returns
        -------
        TransferPrior or None
            None when no neighbour has a positive similarity and a positive measurement.
        """
        built = []
        for similarity, measurements in neighbours:
            values = [(adapt(c), v) for c, v in measurements if v > 0 and math.isfinite(v)]
            if similarity <= 0 or not values:
                continue
            best = min(v for _, v in values)
            measured: dict[tuple[tuple[str, str], ...], float] = {}
            sums: dict[tuple[str, str], list[float]] = {}
            for config, value in values:
                ratio = math.log(value / best)
                key = _key(config)
                measured[key] = min(ratio, measured.get(key, math.inf))
                for item in key:
                    sums.setdefault(item, []).append(ratio)
            effects = {item: sum(r) / len(r) for item, r in sums.items()}
            mean = sum(measured.values()) / len(measured)
            floor = min((r for r in measured.values() if r > 0), default=0.0)
            built.append(_Neighbour(similarity, measured, effects, mean, floor))
        return cls(tuple(built)) if built else None

    def predict(self, config: Config) -> float:
        """Similarity-weighted mean of the neighbours' predicted log ratios (0 = their best)."""
        total = sum(n.weight for n in self.neighbours)
        return sum(n.weight * n.predict(config) for n in self.neighbours) / total

    def ranked(self, configurations: Sequence[dict[str, str]]) -> list[dict[str, str]]:
        """``configurations`` best predicted first (ties keep their order)."""
        return sorted(configurations, key=self.predict)


RIDGE = 0.1
"""Ridge penalty of the correction's per-value effects (in squared log-ratio units)."""


def transfer_pick(
    prior: TransferPrior,
    tried: Sequence[tuple[dict[str, str], float]],
    untried: Sequence[dict[str, str]],
) -> dict[str, str]:
    """The untried configuration with the lowest prior corrected by this kernel's measurements.

    The correction is a ridge regression of the residuals ``log(value) - prior`` on one
    indicator per parameter value (centred, so only differences between values matter);
    values this kernel has not measured get no correction.

    Parameters
    ----------
    prior : TransferPrior
        What the similar kernels predict.
    tried : sequence of (mapping, float)
        This kernel's successful measurements so far (positive values).
    untried : sequence of mapping
        Candidates (not empty).

    Returns
    -------
    mapping
        One of ``untried``.
    """
    if len(tried) < 2:
        return min(untried, key=prior.predict)
    items = sorted({item for config, _ in tried for item in _key(config)})
    column = {item: i for i, item in enumerate(items)}
    design = np.zeros((len(tried), len(items)))
    residuals = np.empty(len(tried))
    for row, (config, value) in enumerate(tried):
        for item in _key(config):
            design[row, column[item]] = 1.0
        residuals[row] = math.log(max(value, 1e-300)) - prior.predict(config)
    design -= design.mean(axis=0)
    residuals -= residuals.mean()
    gram = design.T @ design + RIDGE * np.eye(len(items))
    effects = np.linalg.solve(gram, design.T @ residuals)

    def predicted(config: Config) -> float:
        correction = sum(effects[column[item]] for item in _key(config) if item in column)
        return prior.predict(config) + float(correction)

    return min(untried, key=predicted)
