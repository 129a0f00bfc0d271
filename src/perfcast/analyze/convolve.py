"""Convolution (PMaC): a signature's operations times a machine profile's rates.

Every basic block's computation time combines its floating-point, memory and instruction
times, which an out-of-order core overlaps, plus the time its mispredicted branches cost::

    time = longest + (1 - overlap) * (sum of the other two) + branch time

with ``longest`` the largest of the three and ``overlap`` the machine's (default 1: the
longest alone counts, as in a roofline; 0 adds them up, the convolution of earlier versions):

* floating-point time: the sum over the block's floating-point kinds of operations divided by
  the machine's rate for that kind;
* memory time: bytes loaded times the load cost per byte plus bytes stored times the store cost
  per byte, where the cost per byte at the block's cumulative hit rates -- first level ``h1``,
  last level ``hc`` (the share of accesses served at or above the last level, as MultiMAPS
  indexes its surface) -- is interpolated between the machine's level bandwidths ``B``::

      cost(h1, hc) = h1 / B_l1 + (hc - h1) / B_ll + (1 - hc) / B_memory

  i.e. each byte is charged at the bandwidth of the level that serves it. Signatures of earlier
  versions (``ll.hit_rate``, the share of first-level misses, ``hl``) are converted first,
  ``hc = h1 + (1 - h1) * hl``, which gives the same cost.

  Where the machine profile has ``stream`` figures, the bytes the last level and memory serve
  are charged by the block's access pattern: a stride-1 stream of ``b``-byte references misses
  the first level once per ``line / b`` references, a strided or random pattern on up to every
  reference. The block's streaming share ``s = (1 - m) / (1 - b / line)`` (bounded to [0, 1];
  ``m = 1 - h1`` its first-level miss rate, ``b`` its bytes per reference) weighs the cost per
  served byte of a stream (from the stride-1 plateau ``S``, whose first-level hit rate is
  ``h_s = 1 - 8 / line`` with the line of the profile's ``D1`` cache or 64 bytes:
  ``max(0, (1 / S - h_s / B_l1) / (1 - h_s))``) against ``1 / B``::

      cost = h1 / B_l1 + (hc - h1) * (s * stream_ll + (1 - s) / B_ll)
                       + (1 - hc) * (s * stream_memory + (1 - s) / B_memory)

* instruction time: the block's executed instructions over the machine's integer instruction
  rate (``core.instructions``; the issue ceiling, which integer and control work meet);
* branch time: ``branch.mispredictions`` times ``core.misprediction_penalty`` (signatures with
  callgrind's branch simulation).

Without ``core`` figures the instruction and branch times are 0 (the result says so).

Block times are summed per function and over the signature (the chosen rank). A signature
without basic blocks (a hand-written one) is convolved kernel by kernel, each kernel taken as
one block of a function of the same name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from perfcast.analyze.extrapolate_interval import count_without_interval, read_intervals
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.io.machine_profile import MachineProfile
from perfcast.static.signature import (
    BLOCK_PREFIX,
    FUNCTION_PREFIX,
    L1_RATE,
    LINE_PREFIX,
    LL_RATE,
    cumulative_hit_rates,
    is_fp_feature,
)

MEMORY_FEATURES = ("bytes.loaded", "bytes.stored")
HIT_RATES = (L1_RATE, LL_RATE)
MISPREDICTIONS = "branch.mispredictions"
#: Bytes per access of the probe's streams (see perfcast.measure.probe).
_PROBE_ACCESS_BYTES = 8
_DEFAULT_LINE = 64
#: An interval reaching further than this share of the time either way is warned about (the
#: accuracy PMaC reports for its predicted times).
UNCERTAIN = 0.05


@dataclass(frozen=True)
class BlockTime:
    """Predicted computation time of one block, in seconds.

    Attributes
    ----------
    kernel, function : str
        The block and the function it belongs to.
    fp_time, memory_time, instruction_time, branch_time : float
        The parts (see the module docstring).
    time : float
        The parts combined with the machine's overlap.
    """

    kernel: str
    function: str
    fp_time: float
    memory_time: float
    instruction_time: float
    branch_time: float
    time: float


def combined_time(
    fp_time: float, memory_time: float, instruction_time: float, branch_time: float, overlap: float
) -> float:
    """``longest + (1 - overlap) * (the other two) + branch_time`` (the module docstring)."""
    shorter, short, longest = sorted((fp_time, memory_time, instruction_time))
    exposed = 0.0 if overlap >= 1.0 else (1.0 - overlap) * (shorter + short)
    return longest + exposed + branch_time


@dataclass
class Convolution:
    """Predicted computation time per block, per function and in total.

    Attributes
    ----------
    machine : str
        The machine profile's name.
    point : dict of str to float
        Where the signature was taken (or extrapolated to).
    blocks : list of BlockTime
        Most expensive first.
    functions : dict of str to float
        Seconds per function, most expensive first.
    total : float
        Seconds of the whole signature.
    warnings : list of str
        Reasons not to trust the figure.
    interval : (float, float) or None
        Where the total may lie given the uncertainty of an extrapolated signature's elements
        (:func:`time_interval`; None for a collected signature).
    """

    machine: str
    point: dict[str, float]
    blocks: list[BlockTime]
    functions: dict[str, float]
    total: float
    warnings: list[str] = field(default_factory=list)
    interval: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "machine": self.machine,
            "point": self.point,
            "total_seconds": self.total,
            "interval_seconds": None if self.interval is None else list(self.interval),
            "functions": [{"function": f, "seconds": t} for f, t in self.functions.items()],
            "blocks": [
                {
                    "kernel": b.kernel,
                    "function": b.function,
                    "seconds": b.time,
                    "fp_seconds": b.fp_time,
                    "memory_seconds": b.memory_time,
                    "instruction_seconds": b.instruction_time,
                    "branch_seconds": b.branch_time,
                }
                for b in self.blocks
            ],
            "warnings": self.warnings,
        }


def line_bytes(machine: MachineProfile) -> int:
    """The first-level cache's line size (64 bytes when the profile gives no caches)."""
    return machine.cache.get("D1", {}).get("line", _DEFAULT_LINE)


def streaming_share(l1_hit: float, bytes_per_access: float, line: int) -> float:
    """How much a block's first-level misses look like a stride-1 stream's (0 to 1).

    A stream of ``bytes_per_access``-byte references misses once per ``line`` bytes; a miss
    rate at or below that is all streaming (1), one miss per reference none (0), linear between.
    """
    stream_misses = min(1.0, bytes_per_access / line)
    if stream_misses >= 1.0:
        return 0.0
    return min(1.0, max(0.0, l1_hit / (1.0 - stream_misses)))


def byte_cost(
    machine: MachineProfile, access: str, l1_hit: float, ll_hit: float, streaming: float = 0.0
) -> float:
    """Seconds per byte of ``access`` at the given cumulative hit rates and streaming share
    (see the module docstring); rates are taken into [0, 1] and the last level's to at least
    the first's. Without ``stream`` figures in the profile the streaming share is ignored."""
    l1_hit = min(1.0, max(0.0, l1_hit))
    ll_hit = min(1.0, max(l1_hit, ll_hit))
    l1_cost = 1.0 / machine.bandwidth(access, "l1")
    served = {level: 1.0 / machine.bandwidth(access, level) for level in ("ll", "memory")}
    probe_hit = 1.0 - _PROBE_ACCESS_BYTES / line_bytes(machine)
    for level in served:
        stream = machine.stream_bandwidth(access, level)
        if stream is not None and streaming > 0:
            stream_cost = max(0.0, (1.0 / stream - probe_hit * l1_cost) / (1.0 - probe_hit))
            served[level] = streaming * stream_cost + (1.0 - streaming) * served[level]
    return l1_hit * l1_cost + (ll_hit - l1_hit) * served["ll"] + (1.0 - ll_hit) * served["memory"]


def _function_of(kernel: str) -> str:
    if kernel.startswith(BLOCK_PREFIX):
        return kernel[len(BLOCK_PREFIX) :].rpartition("+")[0] or kernel[len(BLOCK_PREFIX) :]
    return kernel


def block_features(signature: Experiment) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """The blocks' features (mean over repetitions) and the signature's single point.

    Raises
    ------
    InputError
        When the signature holds several points or no block.
    """
    points = signature.points()
    if len(points) != 1:
        raise InputError(
            f"a signature is taken at one point, this one holds {len(points)}; "
            "extrapolate it to one point first",
            signature.source,
            reason="signature-points",
        )
    point = {p.name: float(v) for p, v in zip(signature.parameters, points[0], strict=True)}
    frame = signature.frame
    has_blocks = frame["kernel"].str.startswith(BLOCK_PREFIX).any()
    if has_blocks:
        keep = frame["kernel"].str.startswith(BLOCK_PREFIX)
    else:
        keep = ~frame["kernel"].str.startswith((FUNCTION_PREFIX, LINE_PREFIX))
    means = frame[keep].groupby(["kernel", "metric"], sort=False)["value"].mean()
    blocks: dict[str, dict[str, float]] = {}
    for (kernel, metric), value in zip(means.index.tolist(), means.tolist(), strict=True):
        blocks.setdefault(str(kernel), {})[str(metric)] = float(value)
    if not blocks:
        raise InputError("the signature holds no block", signature.source, reason="no-blocks")
    return blocks, point


def convolve(signature: Experiment, machine: MachineProfile) -> Convolution:
    """Predict the computation time of a signature on a machine.

    Parameters
    ----------
    signature : Experiment
        Features per block at one point (collected or extrapolated).
    machine : MachineProfile
        Bandwidths and floating-point rates.

    Returns
    -------
    Convolution

    Raises
    ------
    InputError
        When a block moves bytes but lacks its hit rates (naming the kernel and feature), or
        the machine lacks the rate of a floating-point kind the signature counts (naming the
        machine file and field).
    """
    signature, converted = cumulative_hit_rates(signature)
    blocks, point = block_features(signature)
    features_present = {name for features in blocks.values() for name in features}
    if not features_present & {*MEMORY_FEATURES} and not any(map(is_fp_feature, features_present)):
        raise InputError(
            "the signature has none of the features a convolution needs "
            "(bytes.loaded, bytes.stored, fp.*)",
            signature.source,
            reason="missing-feature",
            value="bytes.loaded",
        )
    times: list[BlockTime] = []
    warnings: list[str] = []
    negative: set[str] = set()
    out_of_range: set[str] = set()
    for kernel, features in blocks.items():
        if any(v < 0 for n, v in features.items() if n in MEMORY_FEATURES or is_fp_feature(n)):
            negative.add(kernel)
        rates = [features[n] for n in HIT_RATES if n in features]
        if any(not 0.0 <= r <= 1.0 for r in rates) or (len(rates) == 2 and rates[1] < rates[0]):
            out_of_range.add(kernel)
        times.append(_block_time(kernel, features, machine, signature.source))
    times.sort(key=lambda b: (-b.time, b.kernel))
    functions: dict[str, float] = {}
    for block in times:
        functions[block.function] = functions.get(block.function, 0.0) + block.time
    functions = dict(sorted(functions.items(), key=lambda item: (-item[1], item[0])))
    total = sum(b.time for b in times)
    interval = time_interval(blocks, read_intervals(signature), machine, signature.source)
    unbounded = count_without_interval(signature)
    if unbounded:
        warnings.append(
            f"{unbounded} element(s) of the extrapolated signature have no uncertainty estimate: "
            + (
                "the time's interval leaves them out"
                if interval is not None
                else "the time has no interval"
            )
        )
    if interval is not None and total > 0 and math.isfinite(total):
        below, above = (total - interval[0]) / total, (interval[1] - total) / total
        if max(below, above) > UNCERTAIN:
            warnings.append(
                f"the extrapolated signature's uncertainty puts the time between "
                f"{interval[0]:.4g} s and {interval[1]:.4g} s (-{below:.1%} / +{above:.1%}): "
                f"the prediction is not to be trusted to {UNCERTAIN:.0%}"
            )
    if negative:
        warnings.append(
            f"{len(negative)} block(s) count negative bytes or operations (e.g. "
            f"'{min(negative)}'): the signature is not a measured one"
        )
    if out_of_range:
        warnings.append(
            f"{len(out_of_range)} block(s) have hit rates outside [0, 1] or a last-level rate "
            f"below the first-level one (e.g. '{min(out_of_range)}'), taken as the nearest bound"
        )
    if converted:
        warnings.append(
            f"{converted} last-level hit rate(s) of an earlier signature format (share of "
            "first-level misses) were made cumulative"
        )
    if not math.isfinite(total):
        warnings.append(
            "the predicted time is not a finite number: the signature's counts or the "
            "machine's rates are out of range"
        )
    if machine.core:
        warnings.append(
            "computation only: time in libraries (MPI, libc) and communication is not modeled"
        )
    else:
        warnings.append(
            "computation only: time in libraries (MPI, libc), communication, integer work, "
            "instruction issue limits and branch mispredictions is not modeled (the machine "
            "profile has no 'core' figures)"
        )
    return Convolution(machine.name, point, times, functions, total, warnings, interval)


def _block_time(
    kernel: str, features: dict[str, float], machine: MachineProfile, source: str | None
) -> BlockTime:
    """One block's parts and their combination (the module docstring)."""
    fp_time = sum(
        count / machine.fp_rate(name[len("fp.") :])
        for name, count in features.items()
        if is_fp_feature(name) and count > 0
    )
    moved = {name: features.get(name, 0.0) for name in MEMORY_FEATURES}
    memory_time = instruction_time = branch_time = 0.0
    if machine.core:
        instruction_time = features.get("instructions", 0.0) / (machine.core["instructions"] * 1e9)
        branch_time = features.get(MISPREDICTIONS, 0.0) * (
            machine.core["misprediction_penalty"] * 1e-9
        )
    if any(moved.values()):
        missing = [name for name in HIT_RATES if name not in features]
        if missing:
            raise InputError(
                f"kernel '{kernel}' moves data but has no feature '{missing[0]}'",
                source,
                reason="missing-feature",
                value=missing[0],
            )
        l1_hit, ll_hit = features[L1_RATE], features[LL_RATE]
        references = features.get("loads", 0.0) + features.get("stores", 0.0)
        streaming = 0.0
        if references > 0:
            per_reference = sum(moved.values()) / references
            streaming = streaming_share(l1_hit, per_reference, line_bytes(machine))
        for name, access in zip(MEMORY_FEATURES, ("load", "store"), strict=True):
            memory_time += moved[name] * byte_cost(machine, access, l1_hit, ll_hit, streaming)
    total_time = combined_time(fp_time, memory_time, instruction_time, branch_time, machine.overlap)
    return BlockTime(
        kernel, _function_of(kernel), fp_time, memory_time, instruction_time, branch_time,
        total_time,
    )  # fmt: skip


def time_interval(
    blocks: dict[str, dict[str, float]],
    intervals: dict[tuple[str, str], tuple[float, float]],
    machine: MachineProfile,
    source: str | None = None,
) -> tuple[float, float] | None:
    """The total time's interval from the elements' intervals (None without any).

    Each block is convolved at its costly corner (every count at the top of its interval,
    every hit rate at the bottom) and at its cheap corner (the reverse); the block's interval
    is the hull of these and its nominal time, and the blocks' intervals add up (the worst
    case: every block's errors in the same direction).

    Parameters
    ----------
    blocks : dict
        Features per block (:func:`block_features`).
    intervals : dict
        ``(kernel, feature) -> (low, high)``
        (:func:`perfcast.analyze.extrapolate_interval.read_intervals`).
    machine : MachineProfile
    source : str, optional
        Where the signature came from, for error messages.
    """
    if not intervals:
        return None
    low = high = 0.0
    for kernel, features in blocks.items():
        corners = [features]
        for costly in (True, False):
            corner = dict(features)
            for name in features:
                bounds = intervals.get((kernel, name))
                if bounds is not None:
                    upper = costly != (name in HIT_RATES)  # fewer hits cost more
                    corner[name] = bounds[1] if upper else bounds[0]
            corners.append(corner)
        block_times = [_block_time(kernel, c, machine, source).time for c in corners]
        low += min(block_times)
        high += max(block_times)
    return low, high
