"""The order runs are taken in: interleaved repetition rounds, each randomly shuffled.

Measuring all repetitions of one point back to back would let slow drift of a shared machine
(other jobs, thermal state) show up as a dependence on the parameters. Instead every round
covers every point (and metric mode) once, in a fresh random order; rounds follow each other.
The deterministic modes (valgrind's counts, :data:`~perfcast.measure.spec.DETERMINISTIC_MODES`)
give the same value on every run, so only the first round holds them.
"""

from __future__ import annotations

import random

from perfcast.io.campaign_results import RunKey
from perfcast.measure.draws import Value
from perfcast.measure.spec import DETERMINISTIC_MODES


def plan_runs(
    points: list[tuple[Value, ...]], repetitions: int, modes: tuple[str, ...], seed: int
) -> list[RunKey]:
    """Every point x repetition x mode, in interleaved randomized order; a deterministic mode
    (``instructions``, ``cache``) only in repetition 0.

    Parameters
    ----------
    points : list of tuples
        The parameter points.
    repetitions : int
        Rounds; round ``r`` holds repetition ``r`` of every point and mode (round 0 alone
        the deterministic modes).
    modes : tuple of str
        Metric modes (each a separate run).
    seed : int
        Seed of the shuffle; the same seed gives the same order.

    Returns
    -------
    list of RunKey
        Each key exactly once: ``len(points) * repetitions`` per timed mode,
        ``len(points)`` per deterministic one.
    """
    rng = random.Random(seed)
    order: list[RunKey] = []
    for repetition in range(repetitions):
        repeated = [m for m in modes if repetition == 0 or m not in DETERMINISTIC_MODES]
        round_keys = [RunKey(p, repetition, m) for p in points for m in repeated]
        rng.shuffle(round_keys)
        order.extend(round_keys)
    return order
