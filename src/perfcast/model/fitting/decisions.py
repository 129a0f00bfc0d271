"""Choices that depend on every kernel of a series, for fits of part of a series.

Each kernel's model is its own, but a few choices are made once for a whole series: whether
the decreasing building blocks are searched at all (they are when *any* kernel decreases,
:func:`~perfcast.model.fitting.candidates.allowed_blocks`; the number of hypotheses, and with it
the Bonferroni-corrected tests, depends on it) and the width of the design matrices whose
inverses give the models' covariances (the most terms of any kernel; padding changes the
rounding). A fit of some kernels only, a chunk modeled on another process, must make the
whole series' choices, or its models would differ from those of a fit of the whole series.

Every such choice goes through :func:`series_wide`, which under :func:`series_decisions`
records the value the kernels at hand give (in :attr:`SeriesDecisions.seen`) and returns the
whole series' value (from :attr:`SeriesDecisions.forced`) when known. Each value is the
largest of the kernels' (an "any" is a largest 0 or 1), and the choices a fit makes do not
depend on the data, so the largest of all chunks' values, position by position, are the whole
series' choices.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class SeriesDecisions:
    """The series-wide choices of one fit, in the order they are made.

    Attributes
    ----------
    forced : tuple of int, optional
        The whole series' values (None: the kernels at hand decide).
    seen : list of int
        The values the kernels at hand gave.
    floor : tuple of int, optional
        Without ``forced``: lower bounds of the values (the largest other chunks of the series
        gave so far), so that a chunk decides as the whole series more often.
    used : list of int
        The values the fit followed.
    """

    forced: tuple[int, ...] | None = None
    seen: list[int] = field(default_factory=list)
    floor: tuple[int, ...] | None = None
    used: list[int] = field(default_factory=list)

    def decide(self, value: int) -> int:
        """Record the kernels' own value; return the forced one where there is one, else the
        larger of it and the floor."""
        position = len(self.seen)
        self.seen.append(value)
        if self.forced is not None:
            chosen = self.forced[position]
        elif self.floor is not None and position < len(self.floor):
            chosen = max(value, self.floor[position])
        else:
            chosen = value
        self.used.append(chosen)
        return chosen


_CURRENT: ContextVar[SeriesDecisions | None] = ContextVar("series_decisions", default=None)


def series_wide(value: int) -> int:
    """The series-wide value of a choice whose value for the kernels at hand is ``value``
    (the largest over their kernels): ``value`` itself outside :func:`series_decisions`."""
    decisions = _CURRENT.get()
    return value if decisions is None else decisions.decide(value)


@contextlib.contextmanager
def series_decisions(decisions: SeriesDecisions) -> Iterator[SeriesDecisions]:
    """Make :func:`series_wide` record into (and follow) ``decisions`` within the block."""
    token = _CURRENT.set(decisions)
    try:
        yield decisions
    finally:
        _CURRENT.reset(token)
