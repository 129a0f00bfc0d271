"""Instruction-mix models (Mira): static execution counts times categorized machine instructions.

Every instruction of an executable built with ``-g`` is attributed, through the DWARF line table
and the loop structure of the machine code, to a kernel of a static report (a source loop or a
function) and counted as often as that kernel's body runs. Summing per function and category gives
a parametric instruction count per function (exclusive of callees, like a profiler's *self* cost).

How often an instruction runs (``attribution="cfg"``, the default):

- the natural loops of the machine code are matched to source loops: a machine loop at nesting
  depth ``k`` stands for the depth-``k`` source loop most of its own instructions' lines fall in;
- an instruction runs as often as the source loop of the innermost machine loop around it, or as
  often as its function when no machine loop contains it. So a loop guard or an index
  initialization on the ``for`` line, placed before the machine loop, counts once per entry;
- the exit test at the top of a ``while``-shaped machine loop (``-O0`` code) runs once per entry
  more than the body: ``count + entries``, where entries is the count of the enclosing context;
- code inlined from another function (DWARF ``DW_TAG_inlined_subroutine``) sits, for matching,
  inside the source loops around its call site, followed by the callee's own loops; a callee loop
  runs per call as often as its static count divided by the callee's count, times the calls at
  that site. The stand-alone copy of an inlined function is reported undefined (how often it runs
  is unknown);
- blocks no path from the entry reaches (alignment padding after a return or after a call of
  ``exit``) never run; nor do the library calls behind an inline ``sqrt``
  (:mod:`perfcast.static.math_fallbacks`), nor a function nothing in the binary reaches
  (:mod:`perfcast.static.references`);
- a ``rep``-prefixed string instruction runs its block's count times ``rcx + 1``, as callgrind
  counts it (:mod:`perfcast.static.repeated_strings`), or is measured, or undefined.

``attribution="line"`` uses only the line table: each instruction counts as often as the innermost
source kernel whose line range holds its line. It is the naive reading (a loop header's line is
inside the loop's range, so its initialization and guard are over-counted) and serves to measure
what the machine-loop correction buys.

Loops: a loop is entered once per iteration of its enclosing context, times the share of the
``if`` blocks between them. A machine loop's passes follow from its source loop's count and
the transformation read from the binary (:mod:`perfcast.static.machine_counts`); a peeled
remainder (:mod:`perfcast.static.epilogues`) counts the iterations the machine loop leaves.
Copies of a loop the compiler made behind a run-time check
(:mod:`perfcast.static.alternatives`), and loops it split or shortened at a condition, are
undefined with the reason, or take their measured counts.

Outside loops, a block some calls skip counts with the share of the innermost ``if`` block
(or ``switch`` body) holding it, or of the ``?:`` arm or ``&&`` / ``||`` operand on the line
of the jump deciding it, or is undefined with a reason naming the guard; with measured
counts (``--profile``) it takes its measured count.

Inside loops, a block some iterations skip counts with the share of the ``if`` block holding
its lines, or else of the construct on the line of the conditional jump that decides it: an
``if`` arm, a ``?:`` arm or a ``&&`` / ``||`` operand (the report's ``conditions``), told
apart by the line table's columns; undefined with the reason when none can be told or its
count is undefined. A jump on a line without such a construct is one the compiler made (a
nested loop's zero-trip test), taken to hold in every iteration.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import sympy

from perfcast.core.errors import InputError
from perfcast.static.alternatives import Alternative, alternatives
from perfcast.static.binary import Binary, BinaryFunction, BinaryInstruction
from perfcast.static.control_flow import (
    Block,
    Loop,
    avoidable,
    basic_blocks,
    dominators,
    doomed,
    natural_loops,
    reachable,
)
from perfcast.static.flow_check import FlowCheck
from perfcast.static.held_variables import HeldVariables
from perfcast.static.hoisted_guards import HoistedGuard, hoisted_guard
from perfcast.static.machine_counts import (
    MachineCounts,
    enclosing_runs,
    header_holds_body,
    machine_width,
    match_loops,
    remainder_counts,
    zero_trip_bypasses,
)
from perfcast.static.machine_trips import induction
from perfcast.static.math_fallbacks import math_fallbacks
from perfcast.static.parameter_domain import check_parameter_values
from perfcast.static.per_entry import EntryScale, entry_scale, held_note
from perfcast.static.repeated_strings import is_repeated, repetitions
from perfcast.static.source_shares import (
    COPY,
    IN_LOOP,
    UNMATCHED,
    Catalog,
    Place,
    StaticKernelLike,
    UndefinedCount,
    jump_of,
    normal_path,
    normalized,
)
from perfcast.static.x86_categories import CATEGORIES, MEMORY_COUNTS

COUNT_KEYS: tuple[str, ...] = (*CATEGORIES, "total", *MEMORY_COUNTS)
"""Keys of a function's counts: the categories, their total, and memory-operand counts."""


class StaticReportLike(Protocol):
    """A static report: its kernels (``perfcast.static.analyze`` returns one)."""

    @property
    def kernels(self) -> Sequence[StaticKernelLike]: ...


@dataclass(frozen=True)
class FunctionMix:
    """Symbolic instruction counts of one function per program run.

    Attributes
    ----------
    function : str
        Function name.
    counts : dict of str to sympy.Expr, or None
        Key of :data:`COUNT_KEYS` -> count; None when a count the function needs is undefined.
    undef_reason : str or None
        Why ``counts`` is None.
    instructions : int
        Number of machine instructions of the function.
    notes : tuple of str
        Known approximations in the counts (e.g. a source loop the compiler versioned into
        several machine loops, each counted as if it ran).
    """

    function: str
    counts: dict[str, sympy.Expr] | None
    undef_reason: str | None
    instructions: int
    notes: tuple[str, ...] = ()

    def evaluate(self, values: dict[str, float]) -> dict[str, float]:
        """Counts at the given parameter values.

        Raises
        ------
        InputError
            When the counts are undefined, a parameter value is missing, or one is negative
            (outside the domain the counts hold in, :mod:`perfcast.static.parameter_domain`).
        """
        if self.counts is None:
            raise InputError(
                f"instruction mix of {self.function} is undefined: {self.undef_reason}"
            )
        symbols = {s.name: s for expr in self.counts.values() for s in expr.free_symbols}
        missing = sorted(set(symbols) - set(values))
        if missing:
            raise InputError(f"no value for parameter(s) {', '.join(missing)} of {self.function}")
        check_parameter_values({name: values[name] for name in symbols}, self.function)
        substitution = {symbols[name]: values[name] for name in symbols}
        return {key: float(expr.subs(substitution)) for key, expr in self.counts.items()}


@dataclass(frozen=True)
class InstructionMix:
    """Instruction-mix models of every function of a binary that has a static kernel.

    Attributes
    ----------
    binary : str
        Path of the executable.
    parameters : tuple of str
        Parameter names the counts are expressions of.
    functions : dict of str to FunctionMix
    unmodeled : dict of str to str
        Functions with line information but no static kernel, with the reason.
    attribution : str
        ``"cfg"`` or ``"line"`` (see the module documentation).
    """

    binary: str
    parameters: tuple[str, ...]
    functions: dict[str, FunctionMix]
    unmodeled: dict[str, str]
    attribution: str


def instruction_mix(
    binary: Binary,
    report: StaticReportLike,
    parameters: Sequence[str] = (),
    attribution: str = "cfg",
    measured: Mapping[tuple[str, str, int], sympy.Expr] | None = None,
    points: Sequence[Mapping[str, float]] = (),
    check_flow: bool = True,
) -> InstructionMix:
    """Parametric instruction counts per function and category.

    Parameters
    ----------
    binary : Binary
        From :func:`perfcast.static.binary.read_binary`.
    report : StaticReportLike
        Static report of the sources the binary was built from (kernels with symbolic counts).
    parameters : sequence of str
        Parameter names, in the order generated code takes them. Other symbols of the counts
        (e.g. one an annotation introduced for an unknown bound) follow, sorted by name.
    attribution : {"cfg", "line"}
        How instructions are mapped to kernels (module documentation).
    measured : mapping, optional
        Counts measured in profiled runs (constants, or models over the parameters), keyed
        ``("block", function, block address)`` or ``("entry", function, address)``
        (:func:`perfcast.static.callgrind.measured_loop_counts`): they stand in where a static
        count is undefined (``cfg`` attribution), and the function's notes say which.
    points : sequence of mapping of str to float, optional
        Parameter values the program was built and run with (those of the profiled runs, else
        the build's): the ``cfg`` counts are checked for flow conservation there
        (:mod:`perfcast.static.flow_check`), and counts that fail are measured instead or
        undefined with the reason. A function whose counts need values not given is checked
        at stand-in values, and a failure is a note.
    check_flow : bool
        False leaves that check out (to measure what it changes).

    Returns
    -------
    InstructionMix
    """
    if attribution not in ("cfg", "line"):
        raise InputError(f"unknown attribution {attribution!r}: use 'cfg' or 'line'")
    catalog = Catalog(
        list(report.kernels),
        list(getattr(report, "branches", ())),
        list(getattr(report, "conditions", ())),
    )
    inlined = {
        frame.callee
        for f in binary.functions.values()
        for i in f.instructions
        for frame in i.inlined
    }
    catalog.inlined = inlined
    called = _direct_call_targets(binary)
    measured = {k: normalized(v) for k, v in (measured or {}).items()}
    flow = FlowCheck.for_binary(binary, points, enabled=check_flow)
    locations = HeldVariables(binary.path)
    mixes, unmodeled = {}, {}
    for function in binary.functions.values():
        if not any(normal_path(i.file) in catalog.files for i in function.instructions if i.file):
            continue
        kernel = catalog.functions.get(function.name)
        source = function.name
        if kernel is None:
            base = function.name.split(".")[0]
            clone = _whole_clone(
                function.name, base, catalog, binary, inlined, measured, low=function.low
            )
            if isinstance(clone, FunctionMix):
                mixes[function.name] = clone
                continue
            copy_of_known = base != function.name and base in catalog.functions
            if (
                clone is None
                and copy_of_known
                and ("entry", function.name, function.low) in (measured)
            ):
                # a part (``f.part.0``: the body gcc outlines when it inlines f's early tests)
                mixes[function.name] = _function_mix(
                    function,
                    catalog,
                    attribution,
                    measured,
                    base,
                    flow,
                    binary.callees,
                    locations,
                )
                continue
            if clone is None:
                unmodeled[function.name] = (
                    f"compiler-made copy of {base} (not modeled)"
                    if base != function.name and base in catalog.functions
                    else "no function kernel in the static report"
                )
                continue
            source = base
        entry_measured = ("entry", function.name, function.low) in measured
        if entry_measured and _calls_folded(function, source, called, inlined, catalog):
            # the source calls it, the binary never does: the profile tells how often it ran
            notes: list[str] = []
            try:
                counted = _all_measured(function, measured, notes)
            except UndefinedCount as undefined:
                mixes[function.name] = FunctionMix(
                    function.name, None, str(undefined), len(function.instructions)
                )
            else:
                mixes[function.name] = _mix_of(function, counted, notes)
            continue
        if not entry_measured and function.name not in inlined and _never_reached(function, binary):
            # no call, jump or held address reaches it: a copy kept after every call was
            # folded into its caller (an inlined function's copy stays undefined below)
            notes = [_never_runs(function, binary, catalog, source)]
            counted = [(insn, sympy.Integer(0)) for insn in function.instructions]
            mixes[function.name] = _mix_of(function, counted, notes)
            continue
        if function.name in inlined and not entry_measured:
            how = "at some call sites" if function.low in called else "at every call site"
            reason = (
                f"{function.name} is inlined {how}: how often this stand-alone copy runs is "
                "unknown (its inlined copies are counted in their callers)"
            )
            mixes[function.name] = FunctionMix(
                function.name, None, reason, len(function.instructions)
            )
            continue
        mixes[function.name] = _function_mix(
            function, catalog, attribution, measured, source, flow, binary.callees, locations
        )
    if not mixes and not unmodeled:
        raise InputError(
            "no function of the binary has line information from the analyzed sources "
            f"({', '.join(sorted(catalog.files)) or 'none'}): build it from them with -g",
            str(binary.path),
        )
    symbols = sorted(
        {
            s.name
            for m in mixes.values()
            if m.counts
            for e in m.counts.values()
            for s in e.free_symbols
        }
    )
    # symbols the report introduced (an annotation standing for an unknown bound) come last
    names = tuple(parameters) + tuple(s for s in symbols if s not in parameters)
    return InstructionMix(str(binary.path), names, mixes, unmodeled, attribution)


#: suffixes gcc gives a specialized copy of a whole function (constant or scalarized arguments)
_WHOLE_CLONE = re.compile(r"^[A-Za-z_]\w*(\.(constprop|isra)\.\d+)+$")


def _whole_clone(
    name: str,
    base: str,
    catalog: Catalog,
    binary: Binary,
    inlined: set[str],
    measured: Mapping[tuple[str, str, int], sympy.Expr],
    *,
    low: int,
) -> FunctionMix | bool | None:
    """Whether a compiler-made copy stands for its source function: True when it is a whole
    copy (``f.constprop.0``, ``f.isra.0``) and the only code of ``f`` in the binary (no other
    copy, nowhere inlined), so it runs at every call of ``f``; an undefined
    :class:`FunctionMix` naming the other copies when calls are split between copies (unless
    the profile measured this copy's calls); None for other copies (``.part``, ``.cold``)."""
    if base == name or base not in catalog.functions or not _WHOLE_CLONE.match(name):
        return None
    others = sorted(
        other
        for other in binary.functions
        if other != name
        and (other == base or other.split(".")[0] == base)
        and not _never_reached(binary.functions[other], binary)  # it takes no calls
    )
    if not others and base not in inlined:
        return True
    if ("entry", name, low) in measured:
        return True
    where = ", ".join(others) if others else f"inlined copies of {base}"
    return FunctionMix(
        name,
        None,
        f"{name} is a compiler-made copy of {base}, whose calls are split with {where}: "
        "how often this copy runs is unknown",
        len(binary.functions[name].instructions),
    )


def _calls_folded(
    function: BinaryFunction, source: str, called: set[int], inlined: set[str], catalog: Catalog
) -> bool:
    """True when the source calls a function that no instruction of the binary calls, jumps
    to or inlines (LINPACK's ``epslon`` at -O1..-O3: its loop computed when compiling): its
    stand-alone copy does not run at the source's calls, which a profile shows. ``main`` and
    functions the source never calls (entry points, callbacks) are left alone. Without a
    profile such a copy keeps the source's count (whether the source calls it at all, the
    report does not tell here), unless nothing in the binary refers to it at all
    (:func:`_never_reached`): then it never runs."""
    if function.name == "main" or function.low in called or function.name in inlined:
        return False
    kernel = catalog.functions.get(source)
    count = getattr(kernel, "count", None)
    return count is not None and count != 0


def _never_reached(function: BinaryFunction, binary: Binary) -> bool:
    """True when nothing in the binary transfers control to the function: no call or jump to
    it and no copy of its address (:mod:`perfcast.static.references`); never for ``main``."""
    return (
        function.name != "main"
        and binary.referenced is not None
        and function.low not in binary.referenced
    )


def _never_runs(function: BinaryFunction, binary: Binary, catalog: Catalog, source: str) -> str:
    """The note of a function nothing that runs reaches: who still calls it in the binary
    (only code that never runs), and whether the source calls it from ``main`` at all."""
    callers = sorted(
        other.name
        for other in binary.functions.values()
        if other is not function and any(i.target == function.low for i in other.instructions)
    )
    note = str(getattr(catalog.functions.get(source), "note", "") or "")
    why = (
        "the source does not call it from main"
        if "main does not call" in note
        else "the compiler removed every call"
    )
    if callers:
        return (
            f"only {', '.join(callers)}, which never {'runs' if len(callers) == 1 else 'run'}, "
            f"call{'s' if len(callers) == 1 else ''} {function.name} ({why}): this stand-alone "
            "copy never runs"
        )
    return (
        f"nothing in the binary calls {function.name}, jumps to it or holds its address "
        f"({why}): this stand-alone copy never runs"
    )


def _direct_call_targets(binary: Binary) -> set[int]:
    """Addresses called, or tail-jumped to from another function, anywhere in the binary."""
    targets = set()
    for function in binary.functions.values():
        for insn in function.instructions:
            if insn.target is None:
                continue
            leaves = not function.low <= insn.target < function.high
            if insn.kind in ("call", "noreturn") or (insn.kind == "jump" and leaves):
                targets.add(insn.target)
    return targets


def _function_mix(
    function: BinaryFunction,
    catalog: Catalog,
    attribution: str,
    measured: Mapping[tuple[str, str, int], sympy.Expr],
    source: str,
    flow: FlowCheck,
    callees: Mapping[int, str],
    locations: HeldVariables,
) -> FunctionMix:
    """The mix of one function of the binary; ``source`` is the source function its code
    comes from (its own name, or the function a compiler-made whole copy was made of);
    ``flow`` checks the ``cfg`` counts for flow conservation; ``callees`` names the binary's
    call targets; ``locations`` tells which variable a register holds."""
    notes: list[str] = []
    held: list[int] = []  # addresses of code whose count is a constant measured in one run
    held_reasons: list[str] = []
    try:
        entry = ("entry", function.name, function.low)
        try:
            function_count = catalog.function_count(source)
        except UndefinedCount:
            if entry not in measured:
                raise
            function_count = measured[entry]
            held.append(function.low)
            notes.append(f"calls of {function.name}: measured")
        if source != function.name:
            if entry in measured:
                function_count = measured[entry]
                held.append(function.low)
                notes.append(
                    f"calls of {function.name}, a compiler-made copy of {source}: measured"
                )
            else:
                notes.append(
                    f"{function.name} is a compiler-made copy of {source} and its only code in "
                    f"the binary: counted as {source}"
                )
        elif function.name in catalog.inlined and entry in measured:
            function_count = measured[entry]
            held.append(function.low)
            notes.append(f"calls of the stand-alone copy of {function.name}: measured")
        counted: list[tuple[BinaryInstruction, sympy.Expr]]
        copy = source != function.name or function.name in catalog.inlined
        if copy and entry in measured:
            # the source's loop counts are per call of the source function, not of this copy
            counted = _all_measured(function, measured, notes)
            held.extend(insn.address for insn, _ in counted)
        elif attribution == "line":
            counted = []
            for insn in function.instructions:
                chain = catalog.chain(source, insn)
                counted.append((insn, chain[-1].defined() if chain else function_count))
        else:
            from_binary: list[int] = []
            predicted = _cfg_counts(
                function, function_count, catalog, notes, measured, source, callees,
                flow.actual, held, held_reasons, locations, from_binary,
            )  # fmt: skip
            counted = flow.conserved(
                function, predicted, measured, notes, from_source=not from_binary
            )
            held.extend(
                insn.address
                for (insn, before), (_, after) in zip(predicted, counted, strict=True)
                if before != after
            )
            contradicted = _disagreements(function, counted, measured, flow, notes)
            held.extend(
                insn.address
                for (insn, before), (_, after) in zip(counted, contradicted, strict=True)
                if before != after
            )
            counted = contradicted
            notes.extend(_fixed_parameters(source, function_count, counted, catalog, notes))
        counted = _with_repetitions(function, counted, measured, notes)
        held.extend(
            insn.address
            for insn, _ in counted
            if is_repeated(insn) and ("rep", function.name, insn.address) in measured
        )
    except UndefinedCount as reason:
        return FunctionMix(function.name, None, str(reason), len(function.instructions))
    if held and len(flow.actual) <= 1 and all(v.is_number for v in measured.values()):
        # one profiled run: its measured constants stand in the model
        notes.extend(_held_at_run(function, counted, set(held), held_reasons, flow.actual))
    return _mix_of(function, counted, notes)


def _fixed_parameters(
    source: str,
    function_count: sympy.Expr,
    counted: Sequence[tuple[BinaryInstruction, sympy.Expr]],
    catalog: Catalog,
    notes: Sequence[str],
) -> list[str]:
    """A note when the counts of a function's own source loops per call depend on parameters
    its model does not (the binary fixed them when it was compiled: a loop unrolled completely
    at a size known then leaves no machine loop whose count could keep the parameter), unless
    a note already says the model holds at the built values; else nothing."""
    modeled: set[sympy.Symbol] = set()
    for _, count in counted:
        modeled |= count.free_symbols
    source_symbols: set[sympy.Symbol] = set()
    loops = [loop for loop in catalog.loops.get(source, ()) if loop.count is not None]
    for loop in loops:
        per_call = sympy.cancel(normalized(loop.count) / function_count)
        source_symbols |= per_call.free_symbols
    lost = sorted(str(symbol) for symbol in source_symbols - modeled)
    if not lost or any("built value" in note for note in notes):
        return []
    return [
        f"the loops of {source} run a number of times that depends on {', '.join(lost)}, "
        "which the model does not: the binary fixed "
        f"{'it' if len(lost) == 1 else 'them'} when it was compiled (a loop unrolled "
        "completely or a trip count read from it), so the model holds at the built "
        f"value{'s' if len(lost) > 1 else ''} only"
    ]


def _held_at_run(
    function: BinaryFunction,
    counted: Sequence[tuple[BinaryInstruction, sympy.Expr]],
    held: set[int],
    reasons: Sequence[str],
    points: Sequence[Mapping[str, float]],
) -> list[str]:
    """The warning naming the blocks (holding a ``held`` address) whose counts are constants
    measured in the one profiled run (at ``points``), if any of them counts something."""
    blocks = [
        block
        for block in basic_blocks(function)
        if any(insn.address in held for insn in block.instructions)
    ]
    inside = {insn.address for block in blocks for insn in block.instructions}
    if not any(count != 0 for insn, count in counted if insn.address in inside):
        return []
    point = points[0] if points else None
    return [held_note([block.start for block in blocks], [r for r in reasons if r], point)]


def _disagreements(
    function: BinaryFunction,
    counted: list[tuple[BinaryInstruction, sympy.Expr]],
    measured: Mapping[tuple[str, str, int], sympy.Expr],
    flow: FlowCheck,
    notes: list[str],
) -> list[tuple[BinaryInstruction, sympy.Expr]]:
    """The counts with the kept static block counts a profiled run contradicts (they differ
    from the block's measured count at a profiled point) measured instead, when the measured
    counts fit the machine control flow together with the rest (a profiled run of this binary
    is the truth there: gcc -O3 starting an outer loop past the iterations whose inner loop is
    empty, clang -O3 entering a loop only under a condition the compiler made); otherwise the
    static counts stay with a warning naming the blocks (the profile may be of another input,
    or its models fitted to several runs miss)."""
    count_of = {insn.address: count for insn, count in counted}
    differing: dict[int, str] = {}
    for block in basic_blocks(function):
        key = ("block", function.name, block.start)
        if key not in measured or not block.instructions:
            continue
        predicted = count_of.get(block.instructions[0].address)
        if predicted is None or predicted == measured[key]:
            continue
        for point in flow.actual:
            values = {
                symbol: point[symbol.name]
                for symbol in predicted.free_symbols | measured[key].free_symbols
                if symbol.name in point
            }
            static, profiled = predicted.subs(values), measured[key].subs(values)
            if not (static.is_number and profiled.is_number):
                continue
            if abs(float(static) - float(profiled)) > max(0.5, 0.01 * abs(float(profiled))):
                where = ",".join(f"{name}={value:g}" for name, value in sorted(point.items()))
                differing[block.start] = (
                    f"{block.start:#x} (static {float(static):,.0f}, measured "
                    f"{float(profiled):,.0f} at {where or 'the profiled run'})"
                )
                break
    if not differing:
        return counted
    shown = ", ".join(list(differing.values())[:5])
    more = f" and {len(differing) - 5} more" if len(differing) > 5 else ""
    block_of = {
        insn.address: block.start for block in basic_blocks(function) for insn in block.instructions
    }
    instead = [
        (insn, measured[("block", function.name, block_of[insn.address])])
        if block_of.get(insn.address) in differing
        else (insn, count)
        for insn, count in counted
    ]
    if flow.holds(function, instead, measured):
        notes.append(
            f"blocks {shown}{more}: counts measured (the profiled runs contradict their static "
            "counts, and the measured counts fit the machine control flow)"
        )
        return instead
    notes.append(
        f"warning: the static counts of blocks {shown}{more} differ from the profile; the "
        "static counts are kept, but they or the measured ones are wrong at that point"
    )
    return counted


def _with_repetitions(
    function: BinaryFunction,
    counted: list[tuple[BinaryInstruction, sympy.Expr]],
    measured: Mapping[tuple[str, str, int], sympy.Expr],
    notes: list[str],
) -> list[tuple[BinaryInstruction, sympy.Expr]]:
    """The counts with each ``rep``-prefixed string instruction counted as callgrind counts it,
    once per repetition and once more for the final test of ``rcx = 0``: its block's count times
    one more than the constant in ``rcx``, else its measured count, else undefined naming it."""
    if not any(is_repeated(insn) for insn, _ in counted):
        return counted
    blocks = basic_blocks(function)
    block_of = {insn.address: block for block in blocks for insn in block.instructions}
    result: list[tuple[BinaryInstruction, sympy.Expr]] = []
    for insn, count in counted:
        if not is_repeated(insn) or count == 0:
            result.append((insn, count))
            continue
        times = repetitions(blocks, block_of[insn.address], insn)
        key = ("rep", function.name, insn.address)
        if isinstance(times, int):
            result.append((insn, sympy.expand(count * (times + 1))))
            notes.append(
                f"{insn.mnemonic} at {insn.address:#x}: rcx = {times} repetitions per run, "
                f"counted {times + 1} times (callgrind also counts the final test of rcx = 0)"
            )
        elif key in measured:
            result.append((insn, measured[key]))
            notes.append(f"{insn.mnemonic} at {insn.address:#x}: repetitions measured ({times})")
        else:
            raise UndefinedCount(times)
    return result


def _mix_of(
    function: BinaryFunction,
    counted: list[tuple[BinaryInstruction, sympy.Expr]],
    notes: list[str],
) -> FunctionMix:
    """The function's counts per category from the count of each of its instructions."""
    multiplicity: dict[str, dict[sympy.Expr, int]] = {key: defaultdict(int) for key in COUNT_KEYS}
    for insn, count in counted:
        multiplicity[insn.category][count] += 1
        multiplicity["total"][count] += 1
        if insn.reads:
            multiplicity["reads"][count] += 1
        if insn.writes:
            multiplicity["writes"][count] += 1
    counts = {
        key: sympy.expand(sum((n * c for c, n in table.items()), sympy.Integer(0)))
        for key, table in multiplicity.items()
    }
    return FunctionMix(function.name, counts, None, len(function.instructions), tuple(notes))


def _all_measured(
    function: BinaryFunction,
    measured: Mapping[tuple[str, str, int], sympy.Expr],
    notes: list[str],
) -> list[tuple[BinaryInstruction, sympy.Expr]]:
    """Every instruction with its block's measured count, for a copy of a function (a
    stand-alone copy of an inlined function, a compiler-made part or clone) whose runs the
    source's counts, made per call of the source function, do not tell."""
    counted: list[tuple[BinaryInstruction, sympy.Expr]] = []
    for block in basic_blocks(function):
        key = ("block", function.name, block.start)
        if key not in measured:
            raise UndefinedCount(f"block at {block.start:#x} of {function.name} was not measured")
        counted.extend((insn, measured[key]) for insn in block.instructions)
    notes.append(
        f"every block of {function.name} counted as measured (a copy whose runs the source's "
        "counts, made per call of the source function, do not tell)"
    )
    return counted


def _cfg_counts(
    function: BinaryFunction,
    function_count: sympy.Expr,
    catalog: Catalog,
    notes: list[str],
    measured: Mapping[tuple[str, str, int], sympy.Expr],
    source: str,
    callees: Mapping[int, str],
    points: Sequence[Mapping[str, float]] = (),
    held: list[int] | None = None,
    held_reasons: list[str] | None = None,
    locations: HeldVariables | None = None,
    from_binary: list[int] | None = None,
) -> list[tuple[BinaryInstruction, sympy.Expr]]:
    """Every instruction of ``function`` with its count per program run (``cfg``
    attribution). Blocks whose measured count stands in as a constant of one profiled run
    (at ``points``) are appended to ``held``, with why in ``held_reasons`` where known;
    ``locations`` ties code without a source line to the guard it was moved from; the
    blocks whose counts come from what the binary fixed when it was compiled (a trip count,
    vector widths, a remainder, copies chosen at run time) go to ``from_binary``."""
    held = [] if held is None else held
    held_reasons = [] if held_reasons is None else held_reasons
    scales: dict[int, EntryScale] = {}
    per_call: list[int] = []  # measured blocks outside loops counted per call
    blocks = basic_blocks(function)
    live = reachable(blocks)
    position = {insn.address: index for index, insn in enumerate(function.instructions)}
    machine_loops = natural_loops(blocks)
    # machine loops around each block, outermost first (natural_loops sorts outer loops first)
    around: dict[int, list[Loop]] = defaultdict(list)
    for loop in machine_loops:
        for index in loop.blocks:
            around[index].append(loop)
    place_of = match_loops(source, blocks, machine_loops, around, catalog)
    machine_counts = MachineCounts(
        blocks, around, place_of, function_count, catalog, source, points
    )
    runs = machine_counts.counts(machine_loops, notes)
    # remainder copies whose share of the iterations the binary does not tell: measured
    undone: dict[int, str] = {}
    remainders = remainder_counts(source, blocks, around, machine_counts, catalog, notes, undone)
    for index, why in undone.items():
        if ("block", function.name, blocks[index].start) not in measured:
            raise UndefinedCount(why)
    measured_remainders: list[int] = []
    if from_binary is not None:
        from_binary.extend(
            machine_counts.from_binary | set(machine_counts.passes) | set(remainders)
        )
    contradicted = _contradicted(
        machine_loops, runs, machine_counts.from_binary, blocks, measured or {}, function.name
    )
    error_paths = doomed(blocks)
    bypasses = zero_trip_bypasses(blocks, machine_loops, around, runs, machine_counts)
    fallbacks = math_fallbacks(
        blocks, callees, lambda insn: _condition_on_line(catalog, source, insn)
    )
    _note_math_fallbacks(fallbacks, blocks, bool(measured), notes)
    measured_places: set[tuple] = set()
    counted: list[tuple[BinaryInstruction, sympy.Expr]] = []
    copies: list[int] = []  # blocks copying every iteration's code onto one path
    dominating = dominators(blocks)
    chosen = _chosen_at_run_time(
        source, blocks, around, place_of, catalog, live, error_paths, bool(measured)
    )
    if from_binary is not None:
        from_binary.extend(chosen)
    # copies with a run-time trip count keep the machine-loop counts (see _run_time_copies),
    # but for the scalar copy behind an overlap check: block -> the check it lies behind
    assumed: set[int] = set()
    overlapping: dict[int, Alternative] = {}
    for alternative in {id(a): a for a in chosen.values()}.values():
        copies_read = _run_time_copies(
            alternative, catalog, blocks, machine_loops, around, place_of
        )
        if copies_read is None:
            continue
        how, narrower = copies_read
        assumed |= alternative.blocks
        if how == "split" and alternative.compiler_made:
            overlapping.update(dict.fromkeys(alternative.sides[narrower], alternative))
        if how == "both" and not measured:
            notes.append(
                f"{_alternative_reason(alternative, blocks, profiled=True)}: both copies are "
                "counted, the machine loop with the source loop's count and the straight-line "
                "copy once per entry (an upper bound; --profile measures them)"
            )
    # blocks outside machine loops that some calls skip (an error check, a compiler-made
    # test): counted once per call statically, measured with a profile
    under_condition = (
        avoidable(blocks, [b.index for b in blocks if not around[b.index]], error_paths)
        if measured
        else set()
    )
    skipped: list[int] = []
    skipped_calls: list[int] = []  # blocks outside loops counted in every call they may skip
    moved: list[int] = []  # of those, blocks without any source line
    last_resort: str | None = None  # why a block's count is undefined, when no other block is
    # blocks a call may return without running: outside loops, code under a run-time if
    exits = [
        b.index
        for b in blocks
        if b.index in live and b.index not in error_paths and not b.successors
    ]
    guard_of = {index: catalog.block_guard(source, blocks[index]) for index in exits}
    guard_of.update(_last_exit(exits, guard_of, blocks))
    for block in blocks:
        chain = around[block.index]
        conditional: str | None = None  # the source loop whose iterations skip this block
        from_profile = False
        key = ("block", function.name, block.start)
        measured_block = False  # counted from the profile as a whole
        skippable = False  # outside loops, some calls may skip this block
        if block.index not in live or block.index in error_paths:
            # alignment padding after a return or jump, or an error path ending the program
            count = sympy.Integer(0)
        elif block.index in bypasses:
            # the way past a loop that runs no iteration, which its count excludes
            from_profile = key in measured
            count = measured[key] if from_profile else sympy.Integer(0)
            if not from_profile and bypasses[block.index] not in notes:
                notes.append(bypasses[block.index])
        elif block.index in fallbacks:
            # the library call behind an inline sqrt, for a negative or NaN argument only
            from_profile = key in measured
            count = measured[key] if from_profile else sympy.Integer(0)
        elif block.index in chosen and (key in measured or block.index not in assumed):
            # one of two copies of a source loop: the profile tells which ran, nothing else does
            alternative = chosen[block.index]
            if key not in measured:
                # a copy whose machine loops are already undefined (two versions each covering
                # all iterations) keeps that reason; otherwise the check is named
                undefined = (
                    runs[loop.header].reason
                    for loop in machine_loops
                    if loop.header in alternative.blocks and runs[loop.header].count is None
                )
                raise UndefinedCount(
                    next(undefined, None) or _alternative_reason(alternative, blocks)
                )
            count = measured[key]
            from_profile = True
            if ("check", alternative.check) not in measured_places:
                measured_places.add(("check", alternative.check))
                notes.append(
                    f"{_alternative_reason(alternative, blocks, profiled=True)}: block counts "
                    "measured"
                )
        elif block.index in overlapping:
            # the copy for arrays that overlap: no pass when they do not
            from_profile = key in measured
            count = measured[key] if from_profile else sympy.Integer(0)
            note = _overlap_note(overlapping[block.index], blocks, block.index)
            if not from_profile and note not in notes:
                notes.append(note)
        elif block.index in undone:
            count = measured[key]
            from_profile = True
            measured_remainders.append(block.start)
        elif block.index in remainders:
            count = remainders[block.index]
        elif not chain:
            count = function_count
            skippable = any(block.index not in dominating[e] for e in exits)
            reason = (
                catalog.undefined_branch(source, block.instructions)
                if key in measured and not skippable
                else None
            )
            if reason is not None:
                # under an if outside loops whose count is undefined: the profile tells
                count = measured[key]
                measured_block = True
                notes.append(f"block at {block.start:#x}: count measured ({reason})")
            elif block.index in under_condition and key in measured and not skippable:
                count = measured[key]  # code some calls skip: the profile tells how many
                measured_block = True
                skipped.append(block.start)
        elif runs[chain[-1].header].count is None and ("block", function.name, block.start) in (
            measured
        ):
            count = measured["block", function.name, block.start]
            place = runs[chain[-1].header]
            if place.key not in measured_places:
                measured_places.add(place.key)
                notes.append(
                    f"machine loop at {blocks[chain[-1].header].start:#x} (source loop "
                    f"{place.key[1] if len(place.key) > 1 else '?'}): block counts measured "
                    f"(statically undefined: {place.reason})"
                )
            # the outermost of the statically undefined machine loops around the block
            outer = next(
                loop for depth, loop in enumerate(chain)
                if all(runs[inner.header].count is None for inner in chain[depth:])
            )  # fmt: skip
            if outer.header not in scales:
                scales[outer.header] = entry_scale(
                    outer, place_of[outer.header], blocks, function.name, function.low,
                    measured, catalog, points,
                )  # fmt: skip
                scale = scales[outer.header]
                if scale.scaled(count) is not None:
                    notes.append(
                        f"machine loop at {blocks[outer.header].start:#x}: its blocks' counts "
                        f"measured per entry ({scale.measured_entries} entries in the profiled "
                        f"run) times its static entries, {scale.static_entries}"
                    )
            scaled = scales[outer.header].scaled(count)
            if scaled is not None:
                count = scaled
            else:
                held.append(block.start)
                held_reasons.append(scales[outer.header].reason or "")
        elif chain[-1].header in contradicted and key in measured:
            # a trip count read from the binary that the profile contradicts
            count = measured[key]
            from_profile = True
            if ("read", chain[-1].header) not in measured_places:
                measured_places.add(("read", chain[-1].header))
                notes.append(
                    f"machine loop at {blocks[chain[-1].header].start:#x}: the trip count read "
                    "from the binary disagrees with the profile's count: block counts measured"
                )
        else:
            innermost = chain[-1]
            count = runs[innermost.header].defined()
            if machine_counts.rotated(innermost):
                # the header holds the body before the exit test (a rotated loop entered at
                # its header, e.g. gcc -O2 jumping past a one-instruction latch): it runs once
                # per source iteration, the rest of the loop's own code once less per entry
                if block.index != innermost.header and around[block.index][-1] is innermost:
                    count = count - _entries(
                        chain, runs, function_count, place_of, catalog, source, block
                    )
            elif innermost.exits_at_header and block.index == innermost.header:
                count = count + _entries(
                    chain, runs, function_count, place_of, catalog, source, block
                )
            elif (
                innermost.header in machine_counts.source_counted
                or innermost.header in machine_counts.passes
            ) and _after_middle_exit(
                blocks, block.index, innermost, dominating, around, source, place_of, catalog
            ):
                # the loop leaves after its body, in the middle of its code (gcc -O2's flag
                # for a two-pass loop, a rotated loop whose update follows the exit test):
                # the code after that test runs once less per entry that takes a pass
                entries = _entries(chain, runs, function_count, place_of, catalog, source, block)
                if innermost.header in machine_counts.passes:
                    entries = entries * sympy.Min(1, machine_counts.passes[innermost.header])
                count = sympy.expand(count - entries)
            elif any(block.index not in dominating[latch] for latch in innermost.latches):
                # a block some iterations skip: its own code runs in its if block's share
                loop_key = place_of[innermost.header].key
                if len(loop_key) > 2 and loop_key[0] != UNMATCHED:
                    conditional = loop_key[1]
        shares = [sympy.Integer(1)] * len(block.instructions)
        from_profile = from_profile or measured_block
        uniform = False  # the shares already hold the guards of inlined call sites
        if skippable:
            guard = guard_of.get(block.index) or catalog.block_guard(source, block)
            if guard.key == ():
                guard = _other_way(blocks, block, dominating, exits, catalog, source) or guard
            if guard.key in ((), IN_LOOP):  # IN_LOOP: a loop's set-up or zero-trip test
                guard = _operand_guard(blocks, block, live, catalog, source) or guard
            elif guard.key[0] in catalog.branch_names:
                # in an if block, decided by a ?:, && or || inside it (an else-if condition)
                guard = _operand_guard(blocks, block, live, catalog, source, guard.key[0]) or guard
            try:
                shares = [guard.defined()] * len(block.instructions)
                uniform = guard.key not in ((), IN_LOOP)  # the block's guard holds the lot
            except UndefinedCount as reason:
                # the profile tells how often the block ran
                count = _measured_instead(reason, key, block, measured, measured_places, notes)
                from_profile = True
            else:
                passing = (
                    _pass_test_share(
                        blocks,
                        block.index,
                        control,
                        None,
                        around,
                        machine_counts,
                        dominating,
                    )
                    if guard.key in ((), IN_LOOP)
                    and (control := _deciding_branch(blocks, block.index, dominating)) is not None
                    else None
                )
                if passing is not None:
                    # the way into, or around, a loop (its zero-trip test): whether it runs
                    shares = [passing] * len(block.instructions)
                elif guard.key in ((), IN_LOOP) and key in measured:
                    # skipped by some calls, in no if block: the profile tells how many run it
                    count = measured[key]
                    from_profile = True
                elif guard.key == () and any(
                    catalog.after_if(source, insn) for insn in block.instructions
                ):
                    # on no loop's line either, on or after an if's line: code after an early
                    # return (a loop's zero-trip path or a copy of the function's exit is not
                    # said)
                    skipped_calls.append(block.start)
                elif guard.key in ((), IN_LOOP) and _moved_from_loop(block, guard.key):
                    # own code outside the loops with no source line, or only a loop's line,
                    # that some calls skip (clang -O3 hoisting a guarded inlined call out of a
                    # loop, its guard merged into a test it made): the variable that test
                    # compares names the guard
                    unlined = not any(i.file and i.line for i in block.instructions)
                    try:
                        tie = _hoisted_tie(
                            function, blocks, block, dominating, position, locations, catalog,
                            source, unlined,
                        )  # fmt: skip
                    except UndefinedCount as reason:
                        count = _measured_instead(
                            reason, key, block, measured, measured_places, notes
                        )
                        from_profile = True
                    else:
                        if tie is not None:
                            shares = [tie.share] * len(block.instructions)
                            uniform = True
                            if tie.note not in notes:
                                notes.append(tie.note)
                        elif unlined:  # no guarded call it can come from: an upper bound
                            skipped_calls.append(block.start)
                            moved.append(block.start)
        # a conditional block without any source line (a loop's set-up clang left without
        # one) runs as often as the code it alone leads into: that code stands in for it
        lead = _leads_into(blocks, block, dominating) if conditional is not None else None
        stand_ins = [lead] * len(block.instructions) if lead else list(block.instructions)
        if conditional is not None:
            try:
                places = _block_places(
                    block, [catalog.branch_share(source, i, conditional) for i in stand_ins]
                )
                shares = [place.defined() for place in places]
                operand = _operand_in_block(
                    catalog, source, blocks, block.index, places, innermost, dominating, conditional
                )
                if operand is not None:
                    shares = [operand.defined()] * len(block.instructions)
            except UndefinedCount as reason:
                # the profile tells how often the block ran
                count = _measured_instead(reason, key, block, measured, measured_places, notes)
                from_profile = True
            else:
                # skipped by some iterations, yet in no if block of the report by its lines:
                # the arm of a ?:, a && / || operand, or an if block's code on its condition's
                # line; the conditional jump before it tells which. The share of such a part
                # stays; the profile fills an undefined one and replaces the assumptions
                if not any(place.key for place in places) and not _under_call_guard(
                    catalog, source, stand_ins, len(chain)
                ):
                    control = _controlling_branch(blocks, block.index, innermost, dominating)
                    unrolled = _unrolled_exit(source, block, blocks, control, len(chain), catalog)
                    try:
                        if unrolled is not None:
                            raise UndefinedCount(unrolled)
                        decided = catalog.condition_share(
                            source,
                            blocks,
                            block.index,
                            control,
                            conditional,
                            _compound(blocks, block.index, control, innermost, dominating),
                        )
                        varying = (
                            _skipped_by_varying_trip(
                                source, block, blocks, control, conditional, catalog
                            )
                            if decided.key == ()  # else not taken to hold in every iteration
                            else None
                        )
                        if varying is not None and key in measured:
                            raise UndefinedCount(varying)  # the profile tells
                        # said only when no block has a reason of its own (those name the
                        # transformation; this one only the guess it would make)
                        last_resort = last_resort or varying
                        shares = [decided.defined()] * len(block.instructions)
                        passing = (
                            _pass_test_share(
                                blocks,
                                block.index,
                                control,
                                innermost,
                                around,
                                machine_counts,
                                dominating,
                            )
                            if decided.key == () and control is not None
                            else None
                        )
                    except UndefinedCount as reason:
                        count = _measured_instead(
                            reason, key, block, measured, measured_places, notes
                        )
                        from_profile = True
                    else:
                        if passing is not None:
                            # the way into, or around, a nested machine loop taking whole passes
                            shares = [passing] * len(block.instructions)
                        elif decided.key in ((), (COPY,)) and key in measured:
                            # a jump the compiler made (taken to hold in every iteration) or a
                            # copy on both paths: assumptions the profile replaces
                            count = measured[key]
                            from_profile = True
                            shares = [sympy.Integer(1)] * len(block.instructions)
                        elif decided.key == (COPY,):
                            copies.append(block.start)
        if from_profile and not chain and block.index not in undone:
            # (a remainder's count follows the trip count modulo the width: no per-call count)
            every_call = _in_every_call(count, function, function_count, measured, points)
            if every_call is not None:
                count = every_call
                per_call.append(block.start)
        if from_profile and block.start not in held and block.start not in per_call:
            held.append(block.start)
        for insn, stand_in, share in zip(block.instructions, stand_ins, shares, strict=True):
            try:
                for site in () if from_profile or uniform else catalog.guards(source, stand_in):
                    if site.loops >= len(chain):  # inside the innermost machine loop around it
                        share = share * site.share.defined()
            except UndefinedCount as reason:  # inlined code under a guard nobody can count
                counted.append(
                    (insn, _measured_instead(reason, key, block, measured, measured_places, notes))
                )
                if block.start not in held:
                    held.append(block.start)
                continue
            counted.append((insn, count if share == 1 else sympy.expand(count * share)))
    if last_resort is not None:
        raise UndefinedCount(last_resort)
    if measured_remainders:
        notes.append(
            f"warning: blocks at {_addresses(measured_remainders)} finish source loops after "
            "machine loops covering several iterations per pass (how many of the remaining "
            "iterations each runs cannot be read from the binary): counts measured, which "
            "follow the trip count modulo the pass width, so the model holds at the profiled "
            "values only"
        )
    if skipped:
        notes.append(
            f"blocks at {_addresses(skipped)} run under a condition outside loops that some calls "
            "skip: counts measured"
        )
    if per_call:
        notes.append(
            f"blocks at {_addresses(per_call)} outside loops ran in every profiled call or in "
            "none: counted so in every call (a condition on the parameters there would not be "
            "seen)"
        )
    if moved:
        notes.append(
            f"warning: blocks at {_addresses(moved)} outside loops run in some calls only and "
            "have no source line (code the compiler moved, such as a loop's set-up or an "
            "inlined call hoisted out of a loop with its guard merged into a test it made): "
            "counted in every call (an upper bound; --profile measures them)"
        )
    skipped_calls = [start for start in skipped_calls if start not in moved]
    if skipped_calls:
        notes.append(
            f"blocks at {_addresses(skipped_calls)} outside loops run in some calls only, on or "
            "after the line of an if but in no if block (code an early return may skip): counted "
            "in every call (an upper bound; --profile measures them)"
        )
    if copies:
        notes.append(
            f"blocks at {_addresses(copies)} are copies of code that "
            "runs in every loop iteration, which the compiler put on the paths after a "
            "condition: each copy counts in every iteration (their instructions are over-counted "
            "by the iterations that take the other path; --profile measures them)"
        )
    return counted


def _moved_from_loop(block: Block, key: tuple) -> bool:
    """Whether a skippable block outside machine loops may be code moved out of a loop: it
    has code of its own, does not leave the function, and has no source line (any key) or
    only a loop's (``IN_LOOP``)."""
    return (
        bool(block.successors)
        and any(i.kind != "jump" for i in block.instructions)
        and (key == IN_LOOP or not any(i.file and i.line for i in block.instructions))
    )


def _hoisted_tie(
    function: BinaryFunction,
    blocks: list[Block],
    block: Block,
    dominating: list[set[int]],
    position: Mapping[int, int],
    locations: HeldVariables | None,
    catalog: Catalog,
    source: str,
    unlined: bool,
) -> HoistedGuard | None:
    """The guard a block moved out of a loop runs under (:func:`hoisted_guard`), from the
    nearest conditional jump dominating it; None for a block on a loop's line not tied to one.

    Raises
    ------
    UndefinedCount
        For a block without a source line that no guard ties to.
    """
    deciding = _deciding_branch(blocks, block.index, dominating)
    if deciding is None or locations is None:
        if not unlined:
            return None
        raise UndefinedCount(
            f"the block at {block.start:#x} has no source line and runs in some calls only, "
            "under no test the binary ties to a guard (a profiled run measures it)"
        )
    jump = blocks[deciding].instructions[-1]
    taken = next((s for s in blocks[deciding].successors if blocks[s].start == jump.target), None)
    on_taken = taken is not None and (taken == block.index or taken in dominating[block.index])
    nonzero_side = on_taken == (jump.mnemonic == "jne")
    return hoisted_guard(
        source,
        function.instructions,
        position[jump.address],
        nonzero_side,
        locations.of_function(function.low),
        catalog,
        block.start,
        unlined,
    )


def _pass_test_share(
    blocks: list[Block],
    index: int,
    control: int,
    loop: Loop | None,
    around: Mapping[int, list[Loop]],
    machine_counts: MachineCounts,
    dominating: list[set[int]],
    depth_left: int = 4,
) -> sympy.Expr | None:
    """The share of the iterations of machine loop ``loop`` (of the calls, for None) in which
    block ``index`` runs when the compiler-made jump ending block ``control`` tests whether a
    machine loop nested in it takes a pass at all: ``Min(1, passes)`` on the way that alone
    leads into the nested loop, ``1 - Min(1, passes)`` on the way around it (clang -O2 skipping
    a loop unrolled by 2 when ``n == 1``, the passes per entry being the same in every entry,
    as the machine loop's count assumes); 1 and 0 when the nested loop's source loop runs in
    every entry (gcc's zero-trip test of ``j = i + 1 <= n`` inside ``i < n``). A jump that
    itself runs in some iterations only (a dispatch after another loop's exit) scales both ways
    by its own share, found the same way up to ``depth_left`` jumps above it. None when the
    jump is not such a test, the block is on neither way, or the passes are not known."""
    successors = blocks[control].successors
    if len(successors) != 2 or len(set(successors)) != 2:
        return None
    depth = len(around[control])
    if (around[control][-1] if depth else None) is not loop:
        return None
    nested_headers = [
        nested
        for nested in machine_counts.passes.keys() | machine_counts.source_counted
        if len(around[nested]) == depth + 1 and around[nested][-1].header == nested
    ]
    after = _after_only_exit(blocks, index, nested_headers, around, machine_counts)
    if after is None:
        after = _only_way_in(blocks, index, loop, nested_headers, dominating, machine_counts)
    if after is not None:
        return after
    for nested in nested_headers:
        chain = around[nested]
        if control in chain[-1].blocks:
            continue
        # the jump decides whether the nested loop runs: one way always reaches its header
        # (within the iteration), the other never does
        entering = [s for s in successors if _always_reaches(blocks, s, nested, loop)]
        if len(entering) != 1:
            continue
        other = next(s for s in successors if s != entering[0])
        taken = _pass_taken(nested, machine_counts)
        if taken is None or _reaches(blocks, other, nested, loop):
            continue
        if entering[0] in dominating[index] and index in dominating[nested]:
            return taken
        way = _way_share(blocks, index, control, entering[0], other, taken, loop, dominating)
        if way is not None:
            return _scaled_by_control(
                way, blocks, control, loop, around, machine_counts, dominating, depth_left
            )
    group = _short_trip_group(blocks, control, loop, nested_headers, around, machine_counts)
    if group is None:
        return None
    way_in, way_around, headers, taken = group
    if way_in in dominating[index] and all(index in dominating[h] for h in headers):
        return taken
    way = _way_share(blocks, index, control, way_in, way_around, taken, loop, dominating)
    if way is None:
        return None
    return _scaled_by_control(
        way, blocks, control, loop, around, machine_counts, dominating, depth_left
    )


def _way_share(
    blocks: list[Block],
    index: int,
    control: int,
    entering: int,
    other: int,
    taken: sympy.Expr,
    loop: Loop | None,
    dominating: list[set[int]],
) -> sympy.Expr | None:
    """Among the runs of the jump ending block ``control``, the share in which block ``index``
    runs: ``taken`` when it is the way in (``entering``, reached only from the jump), its
    complement when it lies on the way around (``other``) that the way in never reaches;
    None otherwise."""
    if index == entering and blocks[index].predecessors == [control]:
        return taken
    if other in dominating[index] and not _reaches(blocks, entering, index, loop):
        return sympy.Integer(1) - taken
    return None


def _scaled_by_control(
    share: sympy.Expr,
    blocks: list[Block],
    control: int,
    loop: Loop | None,
    around: Mapping[int, list[Loop]],
    machine_counts: MachineCounts,
    dominating: list[set[int]],
    depth_left: int,
) -> sympy.Expr:
    """``share`` (of the runs of the jump ending block ``control``) as a share of the
    iterations of ``loop`` (of the calls, for None): times the jump's own share when some
    iterations skip it and that share is a pass test's; ``share`` itself when it is not known
    (the jump taken to run in every iteration, as for parameters of at least 1)."""
    ends = (
        list(loop.latches)
        if loop is not None
        else [b.index for b in blocks if b.instructions[-1].kind == "return"]
    )
    if all(control in dominating[end] for end in ends):
        return share
    depth = len(around[control])
    nested_headers = [
        nested
        for nested in machine_counts.passes.keys() | machine_counts.source_counted
        if len(around[nested]) == depth + 1 and around[nested][-1].header == nested
    ]
    own = _after_only_exit(blocks, control, nested_headers, around, machine_counts)
    if own is None:
        own = _only_way_in(blocks, control, loop, nested_headers, dominating, machine_counts)
    if own is None and depth_left > 0:
        # the nearest jump above it at the same loop depth
        above = next(
            (
                d
                for d in sorted(dominating[control] - {control}, key=lambda d: -len(dominating[d]))
                if blocks[d].instructions[-1].kind == "branch" and len(around[d]) == depth
            ),
            None,
        )
        if above is not None:
            own = _pass_test_share(
                blocks, control, above, loop, around, machine_counts, dominating, depth_left - 1
            )
    return share if own is None else sympy.expand(own * share)


def _after_only_exit(
    blocks: list[Block],
    index: int,
    nested_headers: list[int],
    around: Mapping[int, list[Loop]],
    machine_counts: MachineCounts,
) -> sympy.Expr | None:
    """Whether block ``index`` runs in an iteration, when it is where every exit of a nested
    machine loop goes and nothing else leads to it (the jump back after clang's scalar tail
    loop): once per entry of that loop, ``Min(1, passes)``; None for other blocks."""
    predecessors = blocks[index].predecessors
    for nested in nested_headers:
        body = around[nested][-1].blocks
        if index in body or not predecessors or any(p not in body for p in predecessors):
            continue
        exits = {s for b in body for s in blocks[b].successors if s not in body}
        if exits == {index}:
            return _pass_taken(nested, machine_counts)
    return None


def _only_way_in(
    blocks: list[Block],
    index: int,
    loop: Loop | None,
    nested_headers: list[int],
    dominating: list[set[int]],
    machine_counts: MachineCounts,
) -> sympy.Expr | None:
    """Whether block ``index`` runs in an iteration, when it lies on every way into a nested
    machine loop and leads only into it (the set-up of clang's 8-wide epilogue loop, reached
    both from the short-trip dispatch and after the 16-wide loop): once per entry of that
    loop, ``Min(1, passes)``; None for other blocks."""
    for nested in nested_headers:
        if index in dominating[nested] and _always_reaches(blocks, index, nested, loop):
            return _pass_taken(nested, machine_counts)
    return None


def _short_trip_group(
    blocks: list[Block],
    control: int,
    loop: Loop | None,
    nested_headers: list[int],
    around: Mapping[int, list[Loop]],
    machine_counts: MachineCounts,
) -> tuple[int, int, list[int], sympy.Expr] | None:
    """A jump that decides between several nested machine loops and the rest: a vectorized
    loop's short-trip dispatch (clang's ``cmp len, 8; jae`` sends lengths below 8 past the 16-
    and 8-wide loops straight to the scalar loop). One way always reaches the header of one of
    a group of nested loops that the other way never reaches, so it is taken exactly when one
    of them takes a pass. Returns ``(way in, way around, the group's headers, Min(1, sum of
    their passes taken))``; None when the jump is no such test or a loop's passes are not
    known."""
    successors = blocks[control].successors
    for entering in successors:
        other = next(s for s in successors if s != entering)
        group = [
            nested
            for nested in nested_headers
            if control not in around[nested][-1].blocks
            and not _reaches(blocks, other, nested, loop)
            and _reaches(blocks, entering, nested, loop)
        ]
        if len(group) < 2 or not _always_reaches_one(blocks, entering, set(group), loop):
            continue
        takens = [_pass_taken(nested, machine_counts) for nested in group]
        if any(taken is None for taken in takens):
            continue
        return entering, other, group, sympy.Min(1, sympy.Add(*takens))
    return None


def _after_middle_exit(
    blocks: list[Block],
    index: int,
    loop: Loop,
    dominating: list[set[int]],
    around: Mapping[int, list[Loop]],
    function: str,
    place_of: Mapping[int, Place],
    catalog: Catalog,
) -> bool:
    """True when block ``index`` of machine loop ``loop`` (its own, not a nested loop's) runs
    after the loop's only exit test, which is neither at its header nor at a latch, on every
    way back to the header, and the code before that test holds the source loop's body while
    the code after it holds none (only the loop's own update): the block runs once per pass
    but the last."""
    exiting = [
        b
        for b in loop.blocks
        if not blocks[b].successors or any(s not in loop.blocks for s in blocks[b].successors)
    ]
    if len(exiting) != 1 or around[index][-1] is not loop:
        return False
    test = exiting[0]
    if test == index or test == loop.header or test in loop.latches:
        return False
    if test not in dominating[index] or any(
        index not in dominating[latch] for latch in loop.latches
    ):
        return False
    key = place_of[loop.header].key
    own = [b for b in loop.blocks if around[b][-1] is loop]
    before = [b for b in own if b in dominating[test]]
    after = [b for b in own if test in dominating[b] and b != test]
    # a jump back to the header carries the line of the code it jumps to
    return any(header_holds_body(function, blocks[b], key, catalog) for b in before) and not any(
        header_holds_body(function, _without_final_jump(blocks[b]), key, catalog) for b in after
    )


def _without_final_jump(block: Block) -> Block:
    """The block without its last instruction when that is an unconditional jump."""
    if len(block.instructions) > 1 and block.instructions[-1].kind == "jump":
        return Block(block.index, block.instructions[:-1])
    return block


def _condition_on_line(catalog: Catalog, function: str, insn: BinaryInstruction) -> bool:
    """Whether an ``if``, ``?:``, ``&&`` or ``||`` of the report is on the instruction's line
    (in the function its code comes from, the callee for inlined code)."""
    if not insn.file or not insn.line:
        return False
    owner = insn.inlined[-1].callee if insn.inlined else function
    return any(
        normal_path(part.file) == normal_path(insn.file)
        for part in catalog.decided_at.get((owner, insn.line), ())
    )


def _deciding_branch(blocks: list[Block], index: int, dominating: list[set[int]]) -> int | None:
    """The nearest block dominating block ``index`` that ends in a conditional jump, if any."""
    above = sorted((d for d in dominating[index] if d != index), key=lambda d: -len(dominating[d]))
    return next((d for d in above if blocks[d].instructions[-1].kind == "branch"), None)


def _pass_taken(header: int, machine_counts: MachineCounts) -> sympy.Expr | None:
    """Per entry of the machine loop at block ``header``, whether it takes a pass (1 or 0, an
    expression of the parameters), if known: from its passes per entry, or 1 when it runs one
    source iteration per pass of a source loop that runs in every entry."""
    if header in machine_counts.passes:
        return sympy.Min(1, machine_counts.passes[header])
    key = machine_counts.place_of[header].key
    source_loop = machine_counts.catalog.loop_named.get(key[1]) if len(key) > 1 else None
    if source_loop is not None and source_loop.always_entered:
        return sympy.Integer(1)
    if source_loop is not None and not source_loop.varying:
        # one source iteration per pass, as many in every entry (gcc -O2 tests `n == 1`
        # before an inlined `for (k = 1; k < n; k++)`)
        per_entry = machine_counts.catalog.iterations_per_entry(key)
        if per_entry is not None and header in machine_counts.source_counted:
            return sympy.Min(1, per_entry)
    return None


def _always_reaches(blocks: list[Block], start: int, goal: int, loop: Loop | None) -> bool:
    """True when every path from block ``start`` reaches block ``goal`` before it leaves
    machine loop ``loop``, comes back to its header or returns (None: before it returns)."""
    return _always_reaches_one(blocks, start, {goal}, loop)


def _always_reaches_one(
    blocks: list[Block], start: int, goals: set[int], loop: Loop | None
) -> bool:
    """True when every path from block ``start`` reaches one of the blocks ``goals`` before it
    leaves machine loop ``loop``, comes back to its header or returns (None: before it
    returns)."""
    seen, stack = set(), [start]
    while stack:
        current = stack.pop()
        if current in goals or current in seen:
            continue
        seen.add(current)
        ahead = blocks[current].successors
        if not ahead or (
            loop is not None and any(s not in loop.blocks or s == loop.header for s in ahead)
        ):
            return False
        stack.extend(ahead)
    return True


def _reaches(blocks: list[Block], start: int, goal: int, loop: Loop | None) -> bool:
    """True when a path from block ``start`` reaches block ``goal`` without passing the header
    of machine loop ``loop`` and inside it (within one iteration; None: within one call)."""
    seen, stack = set(), [start]
    while stack:
        current = stack.pop()
        if current == goal:
            return True
        if current in seen:
            continue
        seen.add(current)
        stack.extend(
            s
            for s in blocks[current].successors
            if loop is None or (s in loop.blocks and s != loop.header)
        )
    return False


def _in_every_call(
    count: sympy.Expr,
    function: BinaryFunction,
    function_count: sympy.Expr,
    measured: Mapping[tuple[str, str, int], sympy.Expr],
    points: Sequence[Mapping[str, float]],
) -> sympy.Expr | None:
    """The count of a measured block outside loops that ran in every call of the profiled
    runs, as the function's static count; None when it ran in some calls only (or never), the
    calls were not measured, or the static count of calls disagrees with them."""
    calls = measured.get(("entry", function.name, function.low))
    if calls is None or not calls.is_number or calls == 0 or count != calls:
        return None
    for point in points:
        if not {s.name for s in function_count.free_symbols} <= set(point):
            return None
        values = {s: sympy.nsimplify(point[s.name]) for s in function_count.free_symbols}
        if function_count.subs(values) != calls:
            return None
    return function_count


def _entries(
    chain: list[Loop],
    runs: dict[int, Place],
    function_count: sympy.Expr,
    place_of: Mapping[int, Place],
    catalog: Catalog,
    source: str,
    block: Block,
) -> sympy.Expr:
    """How often the innermost machine loop of ``chain`` (holding ``block``) is entered: the
    runs of the machine loop around it, or the function's count, times the share of the ``if``
    block of that loop's source loop holding the inner source loop (``if (i != 0) for (k ...``
    enters the k loop in the iterations with ``i != 0`` only)."""
    entries = enclosing_runs(chain, runs, function_count)
    lined = next((i for i in block.instructions if i.file and i.line), None)
    if len(chain) < 2 or lined is None:
        return entries
    outer = place_of[chain[-2].header].key
    if len(outer) < 3 or outer[0] == UNMATCHED:
        return entries
    share = catalog.branch_share(source, lined, outer[1]).defined()
    return entries if share == 1 else sympy.expand(sympy.cancel(entries * share))


def _operand_guard(
    blocks: list[Block],
    block: Block,
    live: set[int],
    catalog: Catalog,
    source: str,
    inside: str | None = None,
) -> Place | None:
    """The share of a block outside loops that some calls skip and no ``if`` block holds
    (or, with ``inside``, that the ``if`` block so named holds), when the conditional jumps
    leading to it are on the line of a ``?:``, ``&&`` or ``||`` (inside that block)
    (:meth:`Catalog.operand_share`); None otherwise. Reached from several such jumps of one
    line, it runs on the outcome of the whole condition."""
    entering = [p for p in block.predecessors if p in live]
    jumps = [jump_of(blocks[p]) for p in entering]
    if not entering or any(
        j is None or blocks[p].instructions[-1].kind != "branch"
        for p, j in zip(entering, jumps, strict=True)
    ):
        return None
    if len({(j.file, j.line, j.inlined) for j in jumps if j is not None}) != 1:
        return None
    control = jumps[0]
    if inside is not None and (
        control is None or not catalog.decides_operand_in(source, control, inside)
    ):
        return None
    compound = len(entering) > 1
    return catalog.operand_share(source, blocks, block.index, entering[0], compound)


def _note_math_fallbacks(
    fallbacks: dict[int, str], blocks: list[Block], profiled: bool, notes: list[str]
) -> None:
    """Say which blocks are the library path of an inline-expanded math function."""
    for name in sorted(set(fallbacks.values())):
        starts = [blocks[i].start for i in sorted(fallbacks) if fallbacks[i] == name]
        how = (
            "counts measured"
            if profiled
            else "taken never to run (true when every argument is in the domain; --profile "
            "measures them)"
        )
        notes.append(
            f"blocks at {_addresses(starts)} call the library's {name} only for an argument "
            f"outside its domain (the compiler computes {name} inline and keeps the call to "
            f"set errno): {how}"
        )


def _compound(
    blocks: list[Block], index: int, deciding: int | None, loop: Loop, dominating: list[set[int]]
) -> bool:
    """Whether block ``index`` runs on the outcome of several tests of one source line: it is
    reached from two or more conditional jumps of the deciding jump's line, or the block that
    decides it is itself decided by a jump of that line (``a && b`` materialized as 0 or 1,
    code after the condition)."""
    if deciding is None:
        return False
    control = jump_of(blocks[deciding])
    if control is None:
        return False
    where = (control.file, control.line, control.inlined)

    def same_line(block: int | None) -> bool:
        if block is None:
            return False
        jump = jump_of(blocks[block])
        return (
            jump is not None
            and blocks[block].instructions[-1].kind == "branch"
            and (jump.file, jump.line, jump.inlined) == where
        )

    testing = [p for p in blocks[index].predecessors if p in loop.blocks and same_line(p)]
    if len(testing) > 1:
        return True
    return same_line(_controlling_branch(blocks, deciding, loop, dominating))


def _operand_in_block(
    catalog: Catalog,
    function: str,
    blocks: list[Block],
    index: int,
    places: list[Place],
    loop: Loop,
    dominating: list[set[int]],
    loop_name: str,
) -> Place | None:
    """The share of the iterations of source loop ``loop_name`` in which block ``index`` runs
    when its lines lie in an ``if`` block of the report (``places``) but the jump deciding it
    tests a ``?:``, ``&&`` or ``||`` inside that block: the right operand of ``&&`` in an
    ``else if`` condition, an arm of a ``?:`` in a then block. Those run in a share of the
    block's runs only, which :meth:`Catalog.condition_share` tells (or why it cannot); None
    when no such jump decides the block, or the share found is no part's (a jump the
    compiler made, a copy of code that runs anyway): the if block's share stands."""
    branch = next((place.key[0] for place in places if place.key), None)
    if branch is None:
        return None
    deciding = _controlling_branch(blocks, index, loop, dominating)
    control = jump_of(blocks[deciding]) if deciding is not None else None
    if control is None or not catalog.decides_operand_in(function, control, branch):
        return None
    compound = _compound(blocks, index, deciding, loop, dominating)
    decided = catalog.condition_share(function, blocks, index, deciding, loop_name, compound)
    if decided.count is not None and decided.key in ((), (COPY,)):
        return None
    return decided


def _under_call_guard(
    catalog: Catalog, source: str, instructions: Sequence[BinaryInstruction], depth: int
) -> bool:
    """Whether a block's instructions are inlined code under an ``if`` block around its call
    site, inside the innermost machine loop around it (``depth`` machine loops): that guard's
    share counts them (:meth:`Catalog.guards`)."""
    return any(
        guard.loops >= depth
        for insn in instructions
        if insn.inlined and insn.line
        for guard in catalog.guards(source, insn)
    )


def _leads_into(
    blocks: list[Block], block: Block, dominating: list[set[int]]
) -> BinaryInstruction | None:
    """For a block without any source line that has one successor it dominates (every entry
    of that successor's code from outside comes through it), the successor's first
    instruction with a line; None otherwise."""
    if any(i.file and i.line for i in block.instructions) or len(block.successors) != 1:
        return None
    following = block.successors[0]
    if block.index not in dominating[following]:
        return None
    lined = [i for i in blocks[following].instructions if i.file and i.line]
    return lined[0] if lined else None


def _controlling_branch(
    blocks: list[Block], index: int, loop: Loop, dominating: list[set[int]]
) -> int | None:
    """The conditional jump that decides whether block ``index`` of machine loop ``loop``
    runs in an iteration: the one ending the nearest block of the loop that dominates it and
    from which some path leaves the iteration (to a latch or out of the loop) without it."""
    avoiding: set[int] = set()  # blocks with a path to the end of the iteration avoiding it
    ends = [b for b in loop.blocks if b != index and b in loop.latches]
    ends += [
        b
        for b in loop.blocks
        if b != index and any(s not in loop.blocks for s in blocks[b].successors)
    ]
    stack = list(ends)
    while stack:
        current = stack.pop()
        if current in avoiding:
            continue
        avoiding.add(current)
        stack.extend(
            p
            for p in blocks[current].predecessors
            if p in loop.blocks and p != index and p not in avoiding and current != loop.header
        )
    above = sorted(
        (d for d in dominating[index] if d != index and d in loop.blocks),
        key=lambda d: -len(dominating[d]),
    )
    for candidate in above:
        last = blocks[candidate].instructions[-1]
        if last.kind != "branch":
            continue
        if any(s in avoiding or s not in loop.blocks for s in blocks[candidate].successors):
            return candidate
    return None


def _contradicted(
    machine_loops: list[Loop],
    runs: dict[int, Place],
    from_binary: set[int],
    blocks: list[Block],
    measured: Mapping[tuple, sympy.Expr],
    name: str,
) -> set[int]:
    """Headers of the machine loops counted with a trip count read from the binary whose only
    latch the profile counted differently (both numbers): the binary was read wrongly, and the
    profile's counts stand in."""
    found = set()
    for loop in machine_loops:
        count = runs[loop.header].count if loop.header in runs else None
        if loop.header not in from_binary or len(loop.latches) != 1 or count is None:
            continue
        seen = measured.get(("block", name, blocks[next(iter(loop.latches))].start))
        if seen is None or not count.is_number:
            continue
        value = sympy.sympify(seen)
        if value.is_number and abs(value - count) > 0.5:
            found.add(loop.header)
    return found


def _unrolled_exit(
    function: str,
    block: Block,
    blocks: list[Block],
    deciding: int | None,
    depth: int,
    catalog: Catalog,
) -> str | None:
    """Why a block that some iterations of its machine loop skip has no count, when most of it
    is the body of a source loop nested deeper than the ``depth`` machine loops around it (a
    copy of that loop's body the compiler unrolled) and the jump deciding it is on that loop's
    header line (its exit test) after another copy: gcc -O3 unrolls a triangular loop whose
    largest trip is a constant into a chain of copies each leaving early, and each copy runs in
    the entries with enough iterations only. None otherwise."""
    jump = jump_of(blocks[deciding]) if deciding is not None else None
    if deciding is None or jump is None or not jump.line:
        return None
    body = _body_of_deeper_loop(function, blocks[block.index], depth, catalog)
    if not body:
        return None
    key = max(body, key=body.__getitem__)
    jump_owner = jump.inlined[-1].callee if jump.inlined else function
    if 2 * body[key] <= len(block.instructions) or jump.line != key[2]:
        return None
    if key[1].split(":")[0] != jump_owner:
        return None
    if not _body_of_deeper_loop(function, blocks[deciding], depth, catalog).get(key):
        # the test comes before any copy of the body: the loop's zero-trip guard (a loop the
        # compiler replaced by a library call), which holds whenever the loop runs
        return None
    return (
        f"block at {block.start:#x} is a copy of the body of source loop {key[1]} outside any "
        f"machine loop of it (the loop unrolled), and the exit test at {jump.address:#x} on "
        f"line {jump.line} skips it in some entries: how many entries run it cannot be read "
        "from the binary"
    )


def _skipped_by_varying_trip(
    function: str,
    block: Block,
    blocks: list[Block],
    deciding: int | None,
    loop_name: str,
    catalog: Catalog,
) -> str | None:
    """Why a block that some iterations of source loop ``loop_name`` skip has no count, when
    the jump deciding it is on the line of a loop nested in it whose iterations per entry
    follow an enclosing loop's variable (``for (j = i + 1; j < n; j++)``) and that the report
    does not show to run in every entry (``always_entered``): that is the nested
    loop's zero-trip test, and it skips the block (the loop's set-up) in the entries with no
    iteration, which such a loop has in some iterations (the last ``i``), so "every
    iteration" over-counts. None otherwise (a nested loop with the same iterations in every
    entry runs in all of them or in none)."""
    jump = jump_of(blocks[deciding]) if deciding is not None else None
    around = catalog.loop_named.get(loop_name)
    if jump is None or not jump.line or around is None:
        return None
    owner = jump.inlined[-1].callee if jump.inlined else function
    nested = [
        k
        for k in catalog.loops_at(owner, jump.file, jump.line)
        if k.line == jump.line and k.varying and not k.always_entered and k.name != loop_name
    ]
    if not nested:
        return None
    return (
        f"block at {block.start:#x} is skipped by the test at {jump.address:#x} on the line "
        f"of source loop {nested[-1].name}, whose iterations per entry depend on an enclosing "
        f"loop's variable: it runs in the iterations of {loop_name} in which that loop has an "
        "iteration, and how many have none cannot be read from the binary"
    )


def _body_of_deeper_loop(
    function: str, block: Block, depth: int, catalog: Catalog
) -> dict[tuple, int]:
    """Source loop key -> how many of the block's instructions are the body (a line after its
    header line, in its own function) of that loop, the one at ``depth`` in their chains."""
    body: dict[tuple, int] = defaultdict(int)
    for insn in block.instructions:
        chain = catalog.chain(function, insn)
        if len(chain) <= depth or len(chain[depth].key) < 3:
            continue
        key = chain[depth].key
        owner = insn.inlined[-1].callee if insn.inlined else function
        if insn.line > key[2] and key[1].split(":")[0] == owner:
            body[key] += 1
    return body


def _block_places(block: Block, places: list[Place]) -> list[Place]:
    """The shares of a conditional block's instructions, those without a source line (line 0:
    a jump or a spill the compiler added, or code it merged from several lines) taking that of
    the nearest instruction of the block that has one: every instruction of a basic block runs
    as often as the others, and a line-0 jump back to the loop's header at the end of an ``if``
    block counted in every iteration (clang -O2: +5.5 % on a ten-iteration guard)."""
    lined = [i for i, insn in enumerate(block.instructions) if insn.file and insn.line]
    if not lined:
        return places
    keyed = {places[i].count for i in lined if places[i].key}
    if len(keyed) == 1:
        # a block of one if block's code and code of lines around it (the condition's line,
        # tail-duplicated code after the block) runs as often as the block
        inside = next(places[i] for i in lined if places[i].key)
        return [inside] * len(places)
    result = []
    for index, (insn, place) in enumerate(zip(block.instructions, places, strict=True)):
        if insn.file and insn.line:
            result.append(place)
            continue
        before = [i for i in lined if i < index]
        result.append(places[before[-1] if before else lined[0]])
    return result


def _measured_instead(
    reason: UndefinedCount,
    key: tuple,
    block: Block,
    measured: Mapping[tuple, sympy.Expr],
    measured_places: set[tuple],
    notes: list[str],
) -> sympy.Expr:
    """The measured count of a block whose count the source cannot give (said once per block
    in ``notes``); without one, ``reason`` is raised again."""
    if key not in measured:
        raise reason
    if key not in measured_places:
        measured_places.add(key)
        notes.append(f"block at {block.start:#x}: count measured ({reason})")
    return measured[key]


def _addresses(starts: Sequence[int]) -> str:
    """The first five block addresses, and how many more."""
    shown = ", ".join(f"{start:#x}" for start in starts[:5])
    return shown + (f" and {len(starts) - 5} more" if len(starts) > 5 else "")


def _other_way(
    blocks: list[Block],
    block: Block,
    dominating: list[set[int]],
    exits: list[int],
    catalog: Catalog,
    source: str,
) -> Place | None:
    """The share of the calls that run a block no ``if`` block explains, when it is one way of
    a two-way branch whose other way is an ``if`` block of known share and nothing else leads
    to either (code after `if (c) return;` whose return jumps to a common epilogue): the
    branch's share less the other way's. None when that does not hold, or for inlined code
    (the guards of its call sites count it)."""
    if len(block.predecessors) != 1:
        return None
    parent = blocks[block.predecessors[0]]
    if parent.instructions[-1].kind != "branch" or len(parent.successors) != 2:
        return None
    other = blocks[next(s for s in parent.successors if s != block.index)]
    if other.predecessors != [parent.index]:
        return None
    if any(i.inlined for b in (block, parent, other) for i in b.instructions):
        return None
    taken = catalog.block_guard(source, other)
    if taken.key in ((), IN_LOOP) or taken.count is None:
        return None
    share: sympy.Expr = sympy.Integer(1)
    if any(parent.index not in dominating[e] for e in exits):  # the branch itself is skipped
        decided = catalog.block_guard(source, parent)
        if decided.key in ((), IN_LOOP) or decided.count is None:
            return None
        share = decided.count
    return Place(("the other way",), sympy.expand(share - taken.count), None)


def _last_exit(
    exits: list[int], guard_of: dict[int, Place], blocks: list[Block]
) -> dict[int, Place]:
    """The share of the calls that leave through the one exit block no ``if`` block explains
    (a copy of the function's return the compiler made), when every other exit lies in an
    ``if`` block of known share: each call leaves through exactly one exit, so it takes the
    rest. Nothing when that does not hold or the function has an indirect jump (its
    successors are unknown)."""
    if any(b.instructions[-1].kind == "jump" and b.instructions[-1].target is None for b in blocks):
        return {}
    unexplained = [index for index in exits if guard_of[index].key == ()]
    others = [guard_of[index] for index in exits if guard_of[index].key != ()]
    if len(unexplained) != 1 or not others:
        return {}
    if any(g.key == IN_LOOP or g.count is None for g in others):
        return {}
    rest = sympy.expand(1 - sum((g.count for g in others if g.count is not None), sympy.S.Zero))
    return {unexplained[0]: Place(("the other exits",), rest, None)}


def _chosen_at_run_time(
    function: str,
    blocks: list[Block],
    around: dict[int, list[Loop]],
    place_of: dict[int, Place],
    catalog: Catalog,
    live: set[int],
    error_paths: set[int],
    profiled: bool = False,
) -> dict[int, Alternative]:
    """Block -> the compiler-made check it lies behind, for the blocks of two copies of one
    source loop of which a run-time check picks one (:mod:`perfcast.static.alternatives`).
    With a profile (``profiled``) also copies under any two-way branch (clang duplicates an
    inlined callee's loops into both arms of the caller's ``if``): their blocks are measured."""
    ignored = {b.index for b in blocks if b.index not in live} | error_paths
    # branches on the line of a source if are the program's conditions (their arms count
    # with the if block's share), not compiler-made checks
    programs = {
        b.index
        for b in blocks
        if b.instructions[-1].kind == "branch"
        and catalog.source_condition(function, b.instructions[-1])
    }
    found = alternatives(
        blocks,
        around,
        {header: place.key for header, place in place_of.items()},
        lambda block: _body_loop(function, block, catalog),
        ignored,
        programs,
        any_condition=profiled,
    )
    return {index: alternative for alternative in found for index in alternative.blocks}


def _run_time_copies(
    alternative: Alternative,
    catalog: Catalog,
    blocks: list[Block],
    machine_loops: list[Loop],
    around: dict[int, list[Loop]],
    place_of: dict[int, Place],
) -> tuple[str, int] | None:
    """How the counts of copies with a run-time trip count treat them, with the side of the
    narrower copy, or None when every machine loop of the copies has a constant trip count
    (or there is none: straight-line copies), which are counted in full per entry each: both
    copies, the silent double count.

    ``"split"``: both copies are machine loops, one with a run-time count, of different widths.
    The wider copy is the vector loop, which runs when the arrays do not overlap; the machine
    counts give the source loop's iterations to it and to the code after it. The narrower copy
    only ever runs instead of it (it is no remainder: the vector side never reaches it), so
    for arrays that do not overlap it runs no pass (the caller counts it 0 and says so).
    Copies of equal widths (whole versions of a loop nest) would give one of them every
    iteration: None.
    ``"both"``: one copy is straight-line code (a library call), counted once per entry on top
    of the machine loop's count: an upper bound. Copies of a source loop whose length per entry
    is a constant are None whatever the binary shows (straight-line code is that loop
    unrolled; a trip count it does not show depends on the path).
    """
    sides = [
        [
            loop
            for loop in machine_loops
            if loop.header in side and place_of[loop.header].key == alternative.loop
        ]
        for side in alternative.sides
    ]
    per_entry = catalog.iterations_per_entry(alternative.loop)
    if per_entry is not None and per_entry.is_number:
        # a loop of fixed length: a trip count the binary does not show is only path-dependent
        # (clang's fallback loop starts where the common first iteration left it)
        return None
    widths: list[set[int | None]] = [set(), set()]
    run_time = False
    source = catalog.loop_named.get(alternative.loop[1]) if len(alternative.loop) > 1 else None
    for side, loops in enumerate(sides):
        for loop in loops:
            own = {b for b in loop.blocks if around[b][-1] is loop}
            found = induction(blocks, loop, own)
            run_time = run_time or found is None or found.trip_count() is None
            step = source.step if source else 1
            widths[side].add(machine_width(found, blocks, own, loop.header, step))
    if not run_time:
        return None
    if not all(sides):
        return "both", 0 if not sides[0] else 1
    # copies taking as many iterations per pass cannot be a vector loop and its remainder
    # loop: sharing the iterations would give one of them all (gcc -O3 versions a whole nest)
    wider = [max((w for w in side if w is not None), default=None) for side in widths]
    if wider[0] is None or wider[1] is None or wider[0] == wider[1]:
        return None
    return "split", 0 if wider[0] < wider[1] else 1


def _body_loop(function: str, block: Block, catalog: Catalog) -> tuple | None:
    """Key of the source loop whose body most of the block's instructions are: the innermost
    loop around each instruction, unless the instruction carries that loop's header line (a
    guard, an induction update) in the loop's own function."""
    votes: dict[tuple, int] = defaultdict(int)
    for insn in block.instructions:
        chain = catalog.chain(function, insn)
        if not chain:
            continue
        key = chain[-1].key
        if len(key) < 3 or key[0] == UNMATCHED:
            continue
        in_own_function = len(key[0]) == len(insn.inlined)
        if in_own_function and insn.line <= key[2]:
            continue  # the loop's header line (or before it): no body code
        votes[key] += 1
    if not votes:
        return None
    key = max(votes, key=votes.__getitem__)
    return key if 2 * votes[key] > len(block.instructions) else None


def _overlap_note(alternative: Alternative, blocks: list[Block], member: int) -> str:
    """The note on the copy of a loop (the side holding block ``member``) that runs only for
    arrays that overlap, counted 0."""
    branch = blocks[alternative.check].instructions[-1]
    name = alternative.loop[1] if len(alternative.loop) > 1 else "?"
    side = next(side for side in alternative.sides if member in side)
    return (
        f"source loop {name} is versioned by the compiler behind a run-time overlap check at "
        f"line {branch.line} (branch at {branch.address:#x}): the narrower copy at "
        f"{blocks[min(side)].start:#x} runs instead of the vector copy only when the arrays "
        "overlap, and is counted 0 (arrays that do not overlap; --profile measures it)"
    )


def _alternative_reason(
    alternative: Alternative, blocks: list[Block], profiled: bool = False
) -> str:
    """Why the copies behind a run-time check cannot be counted from the binary."""
    branch = blocks[alternative.check].instructions[-1]
    name = alternative.loop[1] if len(alternative.loop) > 1 else "?"
    first, second = (blocks[min(side)].start for side in alternative.sides)
    if alternative.compiler_made:
        text = (
            f"source loop {name} is versioned by the compiler behind a run-time check at line "
            f"{branch.line} (branch at {branch.address:#x}): the copies at {first:#x} and "
            f"{second:#x} are alternatives of which one runs per entry (an alias or alignment "
            "check)"
        )
    else:
        text = (
            f"source loop {name} is copied into both sides of the branch at line {branch.line} "
            f"(branch at {branch.address:#x}): the copies at {first:#x} and {second:#x} run "
            "in the shares of that condition"
        )
    if profiled:
        return text
    return f"{text}, which the binary does not tell (--profile measures it)"
