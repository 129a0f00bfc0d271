"""Random draws of a campaign's parameter points (a campaign with ``runs = N``).

Learning run-time models wants many scattered inputs rather than a grid. A parameter of such a
campaign is one of

* a range ``{min = 1, max = 1000, log = true}``: integers when ``min`` and ``max`` are both
  integers, otherwise real numbers (rounded to :data:`SIGNIFICANT_DIGITS` significant digits,
  so the value a command receives is the value recorded); ``log = true`` draws uniformly in
  the logarithm (``min`` must then be above 0);
* a list of words, ``["tree", "direct"]``: a category, each word equally likely;
* a list of numbers or a range string as in a grid campaign: one of its values, each equally
  likely.

:func:`draw_points` draws the points from a seeded generator one after another, so the same
seed gives the same points, and a larger ``runs`` keeps the points of a smaller one and adds
more. Points are distinct: a repeated draw is drawn again.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from perfcast.measure.ranges import Number, RangeError, parse_values

#: Significant digits kept of a drawn real number.
SIGNIFICANT_DIGITS = 6
#: Keys of a range table.
RANGE_KEYS = ("min", "max", "log")
#: Draws allowed per requested point before the space is called too small for ``runs``.
ATTEMPTS_PER_POINT = 100

Value = int | float | str


@dataclass(frozen=True)
class DrawRange:
    """A parameter drawn from an interval.

    Attributes
    ----------
    low, high : int or float
        The bounds, both included.
    log : bool
        Uniform in the logarithm rather than in the value.
    """

    low: Number
    high: Number
    log: bool = False

    @property
    def integral(self) -> bool:
        """Whether draws are integers (both bounds are)."""
        return isinstance(self.low, int) and isinstance(self.high, int)

    def draw(self, rng: random.Random) -> Number:
        """One value from ``rng``."""
        if self.integral:
            if not self.log:
                return rng.randint(int(self.low), int(self.high))
            # log-uniform over the integers: k has the weight log((k + 1) / k)
            value = math.exp(rng.uniform(math.log(self.low), math.log(self.high + 1)))
            return min(int(value), int(self.high))
        if self.log:
            value = math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        elif math.isinf(self.high - self.low):
            # the width overflows a double: rng.uniform would give only +-inf, clamped to a bound
            share = rng.random()
            value = self.low * (1.0 - share) + self.high * share
        else:
            value = rng.uniform(self.low, self.high)
        rounded = float(f"{value:.{SIGNIFICANT_DIGITS}g}")
        return min(max(rounded, float(self.low)), float(self.high))

    def to_dict(self) -> dict[str, Any]:
        """The range as the keys of its table."""
        return {"min": self.low, "max": self.high, "log": self.log}


#: What one parameter of a drawn campaign takes values from: a range or a list of choices.
DrawSpace = DrawRange | tuple[Value, ...]


def parse_draw_space(raw: object) -> DrawSpace:
    """The space one parameter is drawn from.

    Parameters
    ----------
    raw : mapping, list or str
        A ``{min, max, log}`` table, a list of words, or the values of a grid parameter.

    Raises
    ------
    RangeError
        On unknown keys, bounds that are no finite numbers, ``min >= max``, ``log`` with a
        bound not above 0, an empty or repeated word, or bad grid values.
    """
    if isinstance(raw, Mapping):
        return _range(raw)
    if isinstance(raw, list) and raw and all(isinstance(item, str) for item in raw):
        words = [item.strip() for item in raw]
        if not all(words):
            raise RangeError("an empty category name")
        repeated = {w for w in words if words.count(w) > 1}
        if repeated:
            raise RangeError(f"category {sorted(repeated)[0]!r} appears twice")
        return tuple(words)
    return tuple(parse_values(raw))


def _range(raw: Mapping[str, Any]) -> DrawRange:
    unknown = [key for key in raw if key not in RANGE_KEYS]
    if unknown:
        raise RangeError(f"unknown key '{unknown[0]}' in a range (known: min, max, log)")
    if "min" not in raw or "max" not in raw:
        raise RangeError("a range needs both min and max")
    bounds = []
    for key in ("min", "max"):
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RangeError(f"{key} must be a number, not {value!r}")
        if not math.isfinite(value):
            raise RangeError(f"{key} must be a finite number, not {value!r}")
        bounds.append(value)
    low, high = bounds
    if not low < high:
        raise RangeError(f"min ({low}) must be less than max ({high})")
    log = raw.get("log", False)
    if not isinstance(log, bool):
        raise RangeError(f"log must be true or false, not {log!r}")
    if log and low <= 0:
        raise RangeError(f"a log range must have min above 0, not {low}")
    return DrawRange(low, high, log)


def space_to_data(space: DrawSpace) -> dict[str, Any] | list[Value]:
    """The space as JSON-able data (a range table or the list of choices)."""
    return space.to_dict() if isinstance(space, DrawRange) else list(space)


def draw_points(
    spaces: Mapping[str, DrawSpace], runs: int, seed: int
) -> tuple[tuple[Value, ...], ...]:
    """``runs`` distinct points, each parameter drawn from its space in declaration order.

    Parameters
    ----------
    spaces : mapping of str to DrawSpace
        Each parameter's space.
    runs : int
        How many points.
    seed : int
        Seed of the generator: the same seed gives the same points, and the first ``k`` points
        of a larger ``runs`` are those of ``runs = k``.

    Raises
    ------
    RangeError
        When fewer than ``runs`` distinct points turn up in ``ATTEMPTS_PER_POINT * runs``
        draws (the space is too small).
    """
    rng = random.Random(seed)
    points: list[tuple[Value, ...]] = []
    seen: set[tuple[Value, ...]] = set()
    for _ in range(ATTEMPTS_PER_POINT * runs):
        if len(points) == runs:
            break
        point = tuple(
            space.draw(rng) if isinstance(space, DrawRange) else rng.choice(space)
            for space in spaces.values()
        )
        if point not in seen:
            seen.add(point)
            points.append(point)
    if len(points) < runs:
        raise RangeError(
            f"only {len(points)} distinct points turned up in {ATTEMPTS_PER_POINT * runs} "
            f"draws; the parameter space is too small for runs = {runs}"
        )
    return tuple(points)
