"""Measured loop counts carried to other parameter values: per entry of the loop, times its
static entries.

A profiled run gives every block of a statically undefined machine loop its count *in that
run*: a constant. Printed in a model over the parameters, that constant holds at the run's
values only. When the static analysis counts how often the loop is entered (the function is
called ``rpt`` times, the loop entered ``k`` times per call), the count per entry measured in
the run, times the static entries, holds at other values too, provided the count per entry
does not depend on the parameters. That is decided from the source, never assumed:

- the source loop runs a constant number of iterations per entry
  (:meth:`~perfcast.static.source_shares.Catalog.iterations_per_entry` free of symbols);
- every loop, ``if`` block, ``?:`` arm and ``&&`` / ``||`` operand inside it, and every kernel
  of a function inlined into its machine code, has a defined count that is a constant multiple
  of the loop's (or of its function's) count: nothing inside depends on a parameter or on data;
- the static entries, evaluated at each profiled run's values, equal the entries measured in
  that run (the machine loop is entered where the source loop is).

Otherwise the measured counts stay constants, and :func:`held_note` says the model holds at
the profiled values only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sympy

from perfcast.static.control_flow import Block, Loop
from perfcast.static.source_shares import (
    UNMATCHED,
    Catalog,
    Place,
    StaticKernelLike,
    normal_path,
    normalized,
)


@dataclass(frozen=True)
class EntryScale:
    """How the measured block counts of a statically undefined machine loop carry over.

    Attributes
    ----------
    header : int
        Index of the loop's header block.
    static_entries : sympy.Expr or None
        How often the loop is entered per program run, from the source (None when unknown).
    measured_entries : sympy.Expr or None
        How often it was entered in the profiled run (None when the profile does not tell).
    reason : str or None
        Why the counts per entry may depend on the parameters (None when they carry over).
    """

    header: int
    static_entries: sympy.Expr | None
    measured_entries: sympy.Expr | None
    reason: str | None

    def scaled(self, count: sympy.Expr) -> sympy.Expr | None:
        """A block's measured count per entry times the static entries, or None when the
        counts do not carry over."""
        if self.reason is not None or self.static_entries is None:
            return None
        if self.measured_entries is None or not count.is_number:
            return None
        return sympy.expand(count * self.static_entries / self.measured_entries)


def entry_scale(
    loop: Loop,
    place: Place,
    blocks: Sequence[Block],
    function: str,
    low: int,
    measured: Mapping[tuple[str, str, int], sympy.Expr],
    catalog: Catalog,
    points: Sequence[Mapping[str, float]],
) -> EntryScale:
    """How the measured counts of the blocks of ``loop`` (the outermost of the statically
    undefined machine loops around them, implementing source loop ``place``) carry to other
    parameter values.

    Parameters
    ----------
    loop : Loop
        The machine loop.
    place : Place
        The source loop it implements where it runs (key, count per program run).
    blocks : sequence of Block
        The function's basic blocks.
    function : str
        The binary function's name (the key of its measured counts).
    low : int
        Its entry address.
    measured : mapping
        Measured counts (:func:`perfcast.static.callgrind.measured_loop_counts` keys).
    catalog : Catalog
        The static report's kernels.
    points : sequence of mapping of str to float
        Parameter values of the profiled runs.

    Returns
    -------
    EntryScale
    """
    entered = measured_entries(loop, blocks, function, low, measured)
    kernel = catalog.loop_named.get(place.key[1]) if len(place.key) > 1 else None
    if place.key[:1] == (UNMATCHED,) or kernel is None:
        return EntryScale(loop.header, None, entered, "the machine loop has no source loop")
    per_entry = catalog.iterations_per_entry(place.key)
    if per_entry is None or place.count is None:
        reason = f"how often loop {kernel.name} runs per entry is undefined"
        return EntryScale(loop.header, None, entered, f"{reason}: {kernel.undef_reason}")
    if per_entry.free_symbols:
        names = ", ".join(sorted(s.name for s in per_entry.free_symbols))
        reason = f"loop {kernel.name} runs a number of iterations per entry that depends on {names}"
        return EntryScale(loop.header, None, entered, reason)
    if per_entry == 0:
        return EntryScale(loop.header, None, entered, f"loop {kernel.name} never runs")
    static = sympy.expand(sympy.cancel(place.count / per_entry))
    inside = _varying_inside(kernel, catalog) or _varying_inlined(loop, blocks, catalog)
    if inside is not None:
        return EntryScale(loop.header, static, entered, inside)
    if entered is None:
        reason = "the profile does not tell how often the machine loop was entered"
        return EntryScale(loop.header, static, None, reason)
    needed = {s.name for s in static.free_symbols}
    for point in points or [{}]:  # without points, only entries free of parameters are checked
        if not needed <= set(point) or not entered.is_number:
            missing = ", ".join(sorted(needed - set(point))) or "the parameters"
            reason = f"the profiled run gives no value for {missing} to check its entries at"
            return EntryScale(loop.header, static, entered, reason)
        at_run = static.subs({s: sympy.nsimplify(point[s.name]) for s in static.free_symbols})
        if at_run != entered:
            reason = (
                f"the machine loop was entered {entered} times, the source loop {kernel.name} "
                f"{at_run} times at the profiled values"
            )
            return EntryScale(loop.header, static, entered, reason)
    return EntryScale(loop.header, static, entered, None)


def measured_entries(
    loop: Loop,
    blocks: Sequence[Block],
    function: str,
    low: int,
    measured: Mapping[tuple[str, str, int], sympy.Expr],
) -> sympy.Expr | None:
    """How often the profiled run entered ``loop``: the runs of the edges into its header
    from outside it (a block that only leads there, or one whose other successor only it
    leads to), plus the function's calls when the header is its entry; None when the block
    counts do not tell."""
    header = blocks[loop.header]
    total: sympy.Expr = sympy.Integer(0)
    if header.start == low:
        calls = measured.get(("entry", function, low))
        if calls is None:
            return None
        total += calls
    for index in set(header.predecessors) - set(loop.blocks):
        ran = measured.get(("block", function, blocks[index].start))
        if ran is None:
            return None
        others = set(blocks[index].successors) - {loop.header}
        if not others:
            total += ran
            continue
        other = blocks[others.pop()] if len(others) == 1 else None
        if other is None or set(other.predecessors) != {index}:
            return None
        skipped = measured.get(("block", function, other.start))
        if skipped is None:
            return None
        total += ran - skipped
    return total


def held_note(
    starts: Sequence[int], reasons: Sequence[str], point: Mapping[str, float] | None
) -> str:
    """The warning that counts measured in one run are constants of the model: it holds at
    the run's values only."""
    where = ", ".join(f"{name} = {value:g}" for name, value in sorted((point or {}).items()))
    shown = ", ".join(f"{start:#x}" for start in starts[:5])
    more = f" and {len(starts) - 5} more" if len(starts) > 5 else ""
    why = f" ({'; '.join(dict.fromkeys(reasons))})" if reasons else ""
    return (
        f"warning: the counts of blocks at {shown}{more} were measured at "
        f"{where or 'the values of the one profiled run'} only; the model holds at those "
        f"values{why}: profile runs at several values to model them over the parameters"
    )


def _varying_inside(loop: StaticKernelLike, catalog: Catalog) -> str | None:
    """Why something inside source loop ``loop`` may run a number of times per iteration
    that depends on a parameter or on data (None when nothing does)."""
    function, path = loop.function, normal_path(loop.file)
    inner = [
        part
        for part in _parts(catalog, function)
        if part is not loop
        and normal_path(part.file) == path
        and loop.line <= part.line <= part.end_line <= loop.end_line
    ]
    return _varying(inner, loop)


def _varying_inlined(loop: Loop, blocks: Sequence[Block], catalog: Catalog) -> str | None:
    """Why code inlined into the machine loop may run a number of times per call that depends
    on a parameter or on data (None when nothing does)."""
    callees = {
        frame.callee
        for index in loop.blocks
        for insn in blocks[index].instructions
        for frame in insn.inlined
    }
    for callee in sorted(callees):
        kernel = catalog.functions.get(callee)
        if kernel is None:
            continue
        reason = _varying(_parts(catalog, callee), kernel)
        if reason is not None:
            return reason
    return None


def _varying(parts: Sequence[StaticKernelLike], around: StaticKernelLike) -> str | None:
    """The first of ``parts`` whose count is undefined or not a constant multiple of that of
    ``around``, as a reason; None when there is none."""
    if around.count is None or around.count == 0:
        return f"the count of {around.name} is undefined"
    for part in parts:
        if part.count is None:
            return f"the count of {part.name} inside it is undefined: {part.undef_reason}"
        ratio = sympy.cancel(normalized(part.count) / normalized(around.count))
        if ratio.free_symbols:
            names = ", ".join(sorted(s.name for s in ratio.free_symbols))
            return f"{part.name} inside it runs a number of times per pass that depends on {names}"
    return None


def _parts(catalog: Catalog, function: str) -> list[StaticKernelLike]:
    """The loops, ``if`` blocks, ``switch`` cases, ``?:`` arms and ``&&`` / ``||`` operands of
    a source function."""
    decided = [
        part
        for (owner, _), found in catalog.decided_at.items()
        if owner == function
        for part in found
    ]
    return [
        *catalog.loops.get(function, ()),
        *catalog.branches.get(function, ()),
        *catalog.switches.get(function, ()),
        *decided,
    ]
