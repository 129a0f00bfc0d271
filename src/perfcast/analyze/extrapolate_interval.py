"""How far an extrapolated signature element may be off, and when its extrapolation is ambiguous.

Every extrapolated element gets an interval at the target, the hull of two estimates:

* the **backtest band**: the chosen form's rolling-origin error (its relative error predicting
  the largest measured points from the smaller ones, :func:`perfcast.analyze.extrapolate.
  choose_form`) grown with the distance to the target. That error was measured one step beyond
  the data (from the second largest core count to the largest); the target lies ``horizon``
  such steps beyond, ``log(target / largest) / log(largest / second largest)`` (at least 1),
  and the band is ``value * (1 +- min(error, 1) * horizon)``: errors of a form that misses the
  trend grow with the distance it extrapolates. An error above 1 (100 %, e.g. a count predicted
  where it fell to 0) says no more than that the check failed: it counts as 1.
* the **spread of the plausible forms**: every canonical form whose validation error is within
  :data:`PLAUSIBLE_FACTOR` times the chosen one's, or :data:`PLAUSIBLE_MARGIN` above it (the
  data cannot tell these forms apart), evaluated at the target and clamped to the feature's
  range. A form that failed its check (error above 1) is not plausible, whatever the others'.

Rates derived from miss counts take their interval from the miss counts' intervals
(:func:`perfcast.analyze.extrapolate.derive_hit_rates`). An element fitted by PMNF has the
backtest band only, and none when PMNF had too few points to be checked.

An element's extrapolation is **ambiguous** (said per element, and warned about for the
influential blocks: PMaC's rule, more than 0.1 % of the memory operations, or of the
floating-point operations for a block without memory operations) when

* a count is 0 at some core counts and not at others, other than a count that stops (non-zero
  then 0) or one that starts late and is fitted from where it runs
  (:func:`perfcast.analyze.extrapolate.running_regime`): a change of regime no form follows;
* the series is not monotone (it rises and falls by more than :data:`MONOTONE_TOLERANCE` of its
  largest value): a law of the core count that changes inside the measured range;
* the plausible forms disagree at the target by more than :data:`DISAGREEMENT` of the value
  (the issue's accuracy target for an element): the data do not decide the answer.

The intervals travel with the extrapolated signature (``metadata["extrapolated"]["intervals"]``,
a list of ``[kernel, feature, low, high]``) so that a later convolution of the written file
(:func:`perfcast.analyze.convolve.convolve`) turns them into an interval of the time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.static.signature import BLOCK_PREFIX, is_count_feature, is_fp_feature

#: A form is plausible when its validation error is at most this many times the chosen one's ...
PLAUSIBLE_FACTOR = 2.0
#: ... or at most this much above it (relative error: two exact fits differ by rounding only).
PLAUSIBLE_MARGIN = 0.01
#: Plausible forms disagreeing by more than this share of the value make an element ambiguous.
DISAGREEMENT = 0.10
#: A validation error above this (100 %) is a failed check: no larger band, not plausible.
FAILED = 1.0
#: Rises and falls smaller than this share of a series' largest value are not a change of trend.
MONOTONE_TOLERANCE = 0.01
#: A block is influential above this share of the memory (else floating-point) operations.
INFLUENCE = 0.001

ZERO_AT_SOME = "zero at some core counts only"
NOT_MONOTONE = "not monotone in the core count"
FORMS_DISAGREE = "plausible forms disagree by {spread:.0%}"


def horizon(p: np.ndarray, at: float) -> float:
    """How many backtest steps the target lies beyond the data (at least 1).

    Parameters
    ----------
    p : numpy.ndarray
        The core counts fitted, sorted.
    at : float
        The target.
    """
    if len(p) < 2 or p[-1] <= p[-2] or at <= p[-1]:
        return 1.0
    return max(1.0, math.log(at / p[-1]) / math.log(p[-1] / p[-2]))


def is_plausible(error: float, best: float) -> bool:
    """Whether a form with validation ``error`` is as plausible as the chosen one's ``best``."""
    return error <= min(FAILED, max(PLAUSIBLE_FACTOR * best, best + PLAUSIBLE_MARGIN))


def element_interval(
    value: float,
    backtest_error: float | None,
    steps: float,
    alternatives: Iterable[float],
    bounds: tuple[float, float],
) -> tuple[float, float] | None:
    """The hull of the backtest band around ``value`` and the plausible forms' predictions.

    Parameters
    ----------
    value : float
        The extrapolated (clamped) value.
    backtest_error : float or None
        The chosen form's relative validation error (None: not checked).
    steps : float
        :func:`horizon` of the target.
    alternatives : iterable of float
        The plausible forms' predictions at the target (clamped).
    bounds : (float, float)
        The feature's range.

    Returns
    -------
    (float, float) or None
        None when nothing estimates the uncertainty (no check and no alternative) or a figure
        is not finite.
    """
    ends = [value, *alternatives]
    checked = backtest_error is not None and math.isfinite(backtest_error)
    if backtest_error is not None and checked:
        width = abs(value) * min(backtest_error, FAILED) * steps
        ends += [value - width, value + width]
    if not checked and len(ends) == 1:
        return None
    if not all(math.isfinite(e) for e in ends):
        return None
    low, high = bounds
    return max(min(ends), low), min(max(ends), high)


def ambiguities(
    feature: str,
    p: np.ndarray,
    y: np.ndarray,
    fitted_from: float,
    spread: float,
) -> list[str]:
    """The reasons an element's extrapolation is ambiguous (the module docstring).

    Parameters
    ----------
    feature : str
        The element's feature.
    p, y : numpy.ndarray
        The whole series, sorted by ``p``.
    fitted_from : float
        The smallest core count the chosen form was fitted from (larger than ``p[0]`` for a
        count fitted from where it starts running).
    spread : float
        The plausible forms' spread at the target relative to the value.
    """
    reasons = []
    if is_count_feature(feature):
        zero = y[p >= fitted_from] == 0
        stops = bool(zero[int(np.argmax(zero)) :].all())  # non-zero, then 0 from some count on
        if zero.any() and not zero.all() and not stops:
            reasons.append(ZERO_AT_SOME)
    scale = float(np.max(np.abs(y))) if len(y) else 0.0
    steps = np.diff(y)
    steps = steps[np.abs(steps) > MONOTONE_TOLERANCE * scale]
    if len(steps) and steps.min() < 0 < steps.max():
        reasons.append(NOT_MONOTONE)
    if spread > DISAGREEMENT:
        reasons.append(FORMS_DISAGREE.format(spread=spread))
    return reasons


def influential_kernels(blocks: Mapping[str, Mapping[str, float]]) -> set[str]:
    """The blocks with more than :data:`INFLUENCE` of the memory operations (blocks without
    memory operations: of the floating-point operations), PMaC's rule.

    Parameters
    ----------
    blocks : mapping
        Features per kernel at one core count.
    """
    memory = {k: v.get("loads", 0.0) + v.get("stores", 0.0) for k, v in blocks.items()}
    flops = {k: sum(x for m, x in v.items() if is_fp_feature(m)) for k, v in blocks.items()}
    total_memory, total_flops = sum(memory.values()), sum(flops.values())
    chosen = set()
    for kernel in blocks:
        if memory[kernel] > 0:
            if memory[kernel] > INFLUENCE * total_memory:
                chosen.add(kernel)
        elif flops[kernel] > INFLUENCE * total_flops:
            chosen.add(kernel)
    return chosen


def largest_point_blocks(
    series: Mapping[tuple[str, str], tuple[np.ndarray, np.ndarray]],
) -> dict[str, dict[str, float]]:
    """Each kernel's features at the largest core count measured (where it ran there), of the
    basic blocks when the series has them, else of every kernel."""
    largest = max(float(ps.max()) for ps, _ in series.values())
    has_blocks = any(kernel.startswith(BLOCK_PREFIX) for kernel, _ in series)
    blocks: dict[str, dict[str, float]] = {}
    for (kernel, feature), (ps, ys) in series.items():
        if has_blocks and not kernel.startswith(BLOCK_PREFIX):
            continue
        at_largest = ys[ps == largest]
        if len(at_largest):
            blocks.setdefault(kernel, {})[feature] = float(at_largest[0])
    return blocks


def intervals_metadata(
    intervals: Iterable[tuple[str, str, float, float]],
) -> list[list[str | float]]:
    """The intervals as stored in an extrapolated signature's metadata."""
    return [[kernel, feature, low, high] for kernel, feature, low, high in intervals]


def read_intervals(signature: Experiment) -> dict[tuple[str, str], tuple[float, float]]:
    """The element intervals an extrapolated signature carries (empty for a collected one).

    Raises
    ------
    InputError
        When ``metadata.extrapolated.intervals`` is not a list of ``[kernel, feature, low,
        high]`` with ``low <= high`` finite numbers (naming the file and the entry).
    """
    extrapolated = signature.metadata.get("extrapolated")
    if not isinstance(extrapolated, Mapping) or "intervals" not in extrapolated:
        return {}
    stored = extrapolated["intervals"]
    field = "metadata.extrapolated.intervals"
    if not isinstance(stored, Sequence) or isinstance(stored, str):
        raise InputError(f"'{field}' must be a list", signature.source, reason="bad-interval")
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for number, entry in enumerate(stored):
        if not _is_interval(entry):
            raise InputError(
                f"'{field}[{number}]' must be [kernel, feature, low, high] with finite "
                "numbers low <= high",
                signature.source,
                reason="bad-interval",
                value=entry if isinstance(entry, (str, int, float)) else str(entry)[:80],
            )
        kernel, feature, low, high = entry
        out[(kernel, feature)] = (float(low), float(high))
    return out


def count_without_interval(signature: Experiment) -> int:
    """How many elements of an extrapolated signature have no interval (0 for a collected one).

    Raises
    ------
    InputError
        When ``metadata.extrapolated.without_interval`` is not a whole number of at least 0.
    """
    extrapolated = signature.metadata.get("extrapolated")
    if not isinstance(extrapolated, Mapping):
        return 0
    count = extrapolated.get("without_interval", 0)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise InputError(
            "'metadata.extrapolated.without_interval' must be a whole number of at least 0",
            signature.source,
            reason="bad-interval",
            value=count if isinstance(count, (str, int, float)) else str(count)[:80],
        )
    return count


def _is_interval(entry: object) -> bool:
    if not isinstance(entry, Sequence) or isinstance(entry, str) or len(entry) != 4:
        return False
    kernel, feature, low, high = entry
    numbers = all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        for v in (low, high)
    )
    return isinstance(kernel, str) and isinstance(feature, str) and numbers and low <= high
