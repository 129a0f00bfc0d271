"""The order runs are taken in: interleaved repetition rounds, each randomly shuffled.

Measuring all repetitions of one point back to back would let slow drift of a shared machine
(other jobs, thermal state) show up as a dependence on the parameters. Instead every round
covers every point (and metric mode) once, in a fresh random order; rounds follow each other.
"""

from __future__ import annotations

import random

from perfcast.io.campaign_results import RunKey
from perfcast.measure.ranges import Number


def plan_runs(
    points: list[tuple[Number, ...]], repetitions: int, modes: tuple[str, ...], seed: int
) -> list[RunKey]:
    """Every point x repetition x mode, in interleaved randomized order.

    Parameters
    ----------
    points : list of tuples
        The parameter points.
    repetitions : int
        Rounds; round ``r`` holds repetition ``r`` of every point and mode.
    modes : tuple of str
        Metric modes (each a separate run).
    seed : int
        Seed of the shuffle; the same seed gives the same order.

    Returns
    -------
    list of RunKey
        ``len(points) * repetitions * len(modes)`` keys, each exactly once.
    """
    rng = random.Random(seed)
    order: list[RunKey] = []
    for repetition in range(repetitions):
        round_keys = [RunKey(p, repetition, m) for p in points for m in modes]
        rng.shuffle(round_keys)
        order.extend(round_keys)
    return order
