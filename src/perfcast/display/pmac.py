"""Text of the trace-extrapolation results: convolutions, extrapolations, machine profiles."""

from __future__ import annotations

from perfcast.analyze.convolve import Convolution
from perfcast.analyze.extrapolate import Extrapolation
from perfcast.core.points import format_point
from perfcast.io.machine_profile import MachineProfile

_SHOWN_BLOCKS = 20


def _seconds(value: float) -> str:
    return f"{value:.6g} s"


def convolution_text(result: Convolution) -> str:
    """Total, per-function and (the most expensive) per-block predicted computation time."""
    lines = [
        f"predicted computation time on {result.machine} at {format_point(result.point)}: "
        f"{_seconds(result.total)}",
    ]
    if result.interval is not None:
        low, high = result.interval
        lines.append(
            f"interval from the extrapolation's uncertainty: {_seconds(low)} to {_seconds(high)}"
        )
    lines += ["", "per function:"]
    width = max((len(f) for f in result.functions), default=8)
    for function, seconds in result.functions.items():
        share = seconds / result.total if result.total > 0 else 0.0
        lines.append(f"  {function:<{width}}  {_seconds(seconds):>14}  {share:6.1%}")
    lines += ["", f"per block (the {min(_SHOWN_BLOCKS, len(result.blocks))} most expensive):"]
    width = max((len(b.kernel) for b in result.blocks[:_SHOWN_BLOCKS]), default=8)
    for block in result.blocks[:_SHOWN_BLOCKS]:
        lines.append(
            f"  {block.kernel:<{width}}  {_seconds(block.time):>14}  "
            f"(fp {_seconds(block.fp_time)}, memory {_seconds(block.memory_time)}, "
            f"instructions {_seconds(block.instruction_time)}, "
            f"branches {_seconds(block.branch_time)})"
        )
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines) + "\n"


def extrapolation_text(result: Extrapolation, shown: int = 30) -> str:
    """The forms chosen (how often each) and the elements with the largest values."""
    counts: dict[str, int] = {}
    for element in result.elements:
        counts[element.form] = counts.get(element.form, 0) + 1
    target = format_point(
        {
            p.name: float(v)
            for p, v in zip(result.signature.parameters, result.signature.points()[0], strict=True)
        }
    )
    lines = [
        f"extrapolated {len(result.elements)} elements to {target}",
        "forms chosen: " + ", ".join(f"{form} {n}" for form, n in sorted(counts.items())),
        "",
    ]
    ranked = sorted(result.elements, key=lambda e: -abs(e.value))[:shown]
    width = max((len(e.kernel) + len(e.feature) + 1 for e in ranked), default=8)
    for element in ranked:
        check = "n/a" if element.validation_error is None else f"{element.validation_error:.2%}"
        name = f"{element.kernel} {element.feature}"
        interval = (
            "interval n/a"
            if element.low is None
            else f"interval {element.low:.6g} to {element.high:.6g}"
        )
        lines.append(
            f"  {name:<{width}}  {element.value:>14.6g}  {element.form:<11}  "
            f"check {check:<7}  {interval}{'  (clamped)' if element.clamped else ''}"
            + (f"  ambiguous: {', '.join(element.ambiguous)}" if element.ambiguous else "")
        )
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines) + "\n"


def machine_text(profile: MachineProfile) -> str:
    """Level bandwidths, floating-point rates and caches of a machine profile."""
    lines = [f"machine {profile.name}"]
    for level, geometry in profile.cache.items():
        lines.append(
            f"  cache {level}: {geometry['size']} bytes, {geometry['associativity']}-way, "
            f"{geometry['line']}-byte lines"
        )
    for access, levels in profile.memory.items():
        figures = ", ".join(f"{level} {gbs:.3g} GB/s" for level, gbs in levels.items())
        lines.append(f"  {access}: {figures}")
    for access, levels in profile.stream.items():
        figures = ", ".join(f"{level} {gbs:.3g} GB/s" for level, gbs in levels.items())
        lines.append(f"  {access} stride-1 stream: {figures}")
    for kind, rate in profile.fp.items():
        lines.append(f"  fp {kind}: {rate:.3g} Gop/s")
    if profile.core:
        lines.append(
            f"  integer instructions: {profile.core['instructions']:.3g} Gop/s; mispredicted "
            f"branch: {profile.core['misprediction_penalty']:.3g} ns"
        )
    lines.append(f"  overlap of fp, memory and instruction time: {profile.overlap:g}")
    # "probe" is free-form in a hand-written profile: only a list of notes is shown.
    probe = profile.extra.get("probe")
    notes = probe.get("notes") if isinstance(probe, dict) else None
    if isinstance(notes, list):
        lines += [f"note: {n}" for n in notes]
    return "\n".join(lines) + "\n"
