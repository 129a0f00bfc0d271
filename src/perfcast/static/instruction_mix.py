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
  ``exit``) never run.

``attribution="line"`` uses only the line table: each instruction counts as often as the innermost
source kernel whose line range holds its line. It is the naive reading (a loop header's line is
inside the loop's range, so its initialization and guard are over-counted) and serves to measure
what the machine-loop correction buys.

Approximations: a loop is assumed to be entered once per iteration of its enclosing context, and
code under a condition (an ``if`` inside a loop, an error branch in ``main``) is counted as if it
always ran. Loops the compiler versioned, vectorized with a remainder loop, or replaced by library
calls do not match their source counts; when one source loop becomes several machine loops the
function's ``notes`` say so. The exception among conditional code is a peeled remainder: body
code after a loop unrolled by 2 (:mod:`perfcast.static.epilogues`) counts the iterations the
machine loop leaves, ``C - 2*floor(C/2)`` per entry; after wider passes it is undefined.

Inside loops, a block some iterations skip counts with the share of the ``if`` block holding
its lines, or else of the construct on the line of the conditional jump that decides it: an
``if`` arm, a ``?:`` arm or a ``&&`` / ``||`` operand (the report's ``conditions``), told
apart by the line table's columns; undefined with the reason when none can be told or its
count is undefined. A jump on a line without such a construct is one the compiler made (a
nested loop's zero-trip test), taken to hold in every iteration.
"""

from __future__ import annotations

import os
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
from perfcast.static.epilogues import conditional_successors
from perfcast.static.guard_text import condition_text, if_line, is_else, is_switch, line_text
from perfcast.static.machine_trips import Induction, induction, packed
from perfcast.static.x86_categories import CATEGORIES, MEMORY_COUNTS

COUNT_KEYS: tuple[str, ...] = (*CATEGORIES, "total", *MEMORY_COUNTS)
"""Keys of a function's counts: the categories, their total, and memory-operand counts."""


class StaticKernelLike(Protocol):
    """What the instruction mix needs of a kernel of a static report (loop or function).

    Read-only, so that frozen dataclasses such as :class:`perfcast.static.StaticKernel` qualify.
    """

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def file(self) -> str: ...

    @property
    def line(self) -> int: ...

    @property
    def end_line(self) -> int: ...

    @property
    def depth(self) -> int: ...

    @property
    def function(self) -> str: ...

    @property
    def count(self) -> sympy.Expr | None: ...

    @property
    def undef_reason(self) -> str | None: ...


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
            When the counts are undefined or a parameter value is missing.
        """
        if self.counts is None:
            raise InputError(
                f"instruction mix of {self.function} is undefined: {self.undef_reason}"
            )
        symbols = {s.name: s for expr in self.counts.values() for s in expr.free_symbols}
        missing = sorted(set(symbols) - set(values))
        if missing:
            raise InputError(f"no value for parameter(s) {', '.join(missing)} of {self.function}")
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

    Returns
    -------
    InstructionMix
    """
    if attribution not in ("cfg", "line"):
        raise InputError(f"unknown attribution {attribution!r}: use 'cfg' or 'line'")
    catalog = _Catalog(
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
    measured = {k: _normalized(v) for k, v in (measured or {}).items()}
    mixes, unmodeled = {}, {}
    for function in binary.functions.values():
        if not any(_normal(i.file) in catalog.files for i in function.instructions if i.file):
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
                mixes[function.name] = _function_mix(function, catalog, attribution, measured, base)
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
            except _Undefined as undefined:
                mixes[function.name] = FunctionMix(
                    function.name, None, str(undefined), len(function.instructions)
                )
            else:
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
        mixes[function.name] = _function_mix(function, catalog, attribution, measured, source)
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


#: first element of the key of a machine loop that implements no source loop of the report
_UNMATCHED = "no source loop"

#: key of the share of a block that copies code of every iteration onto one path
_COPY = "copy of unconditional code"

#: what decides whether a branch block or condition block runs, and the line of its condition
_DECIDED = re.compile(r":(if|cond|and|or)@(\d+)(:\d+)?:(then|else|right)$")

#: key of :meth:`_Catalog.block_guard` for code on a source loop's lines
_IN_LOOP = ("inside a source loop",)

#: suffixes gcc gives a specialized copy of a whole function (constant or scalarized arguments)
_WHOLE_CLONE = re.compile(r"^[A-Za-z_]\w*(\.(constprop|isra)\.\d+)+$")


def _whole_clone(
    name: str,
    base: str,
    catalog: _Catalog,
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
        if other != name and (other == base or other.split(".")[0] == base)
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
    function: BinaryFunction, source: str, called: set[int], inlined: set[str], catalog: _Catalog
) -> bool:
    """True when the source calls a function that no instruction of the binary calls, jumps
    to or inlines (LINPACK's ``epslon`` at -O1..-O3: its loop computed when compiling): its
    stand-alone copy does not run at the source's calls, which a profile shows. ``main`` and
    functions the source never calls (entry points, callbacks) are left alone. Without a
    profile such a copy keeps the source's count (whether the source calls it at all, the
    report does not tell here)."""
    if function.name == "main" or function.low in called or function.name in inlined:
        return False
    kernel = catalog.functions.get(source)
    count = getattr(kernel, "count", None)
    return count is not None and count != 0


def _normal(path: str | None) -> str:
    return os.path.realpath(path) if path else ""


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


class _Undefined(Exception):
    """An instruction's execution count is undefined (carries the reason)."""


def _normalized(expression: sympy.Expr) -> sympy.Expr:
    """One plain Symbol per name, whatever assumptions the report attached."""
    expression = sympy.sympify(expression)
    return expression.xreplace({s: sympy.Symbol(s.name) for s in expression.free_symbols})


@dataclass(frozen=True)
class _Place:
    """A source loop where it runs: in its own function, or inlined along a chain of calls.

    ``count`` is how often its body runs per program run there, or None with ``reason``.
    """

    key: tuple
    count: sympy.Expr | None
    reason: str | None

    def defined(self) -> sympy.Expr:
        if self.count is None:
            raise _Undefined(self.reason)
        return self.count


class _Catalog:
    """The kernels of a static report, indexed for attribution, with cached source chains."""

    def __init__(
        self,
        kernels: list[StaticKernelLike],
        branches: Sequence[StaticKernelLike] = (),
        conditions: Sequence[StaticKernelLike] = (),
    ) -> None:
        self.files = {_normal(k.file) for k in kernels}
        self.branches: dict[str, list[StaticKernelLike]] = defaultdict(list)
        # the cases of switch statements, for code outside loops only (block_guard)
        self.switches: dict[str, list[StaticKernelLike]] = defaultdict(list)
        for branch in branches:
            (self.switches if is_switch(branch.name) else self.branches)[branch.function].append(
                branch
            )
        # if arms, ?: arms and && / || operands by (function, line of their condition)
        self.decided_at: dict[tuple[str, int], list[StaticKernelLike]] = defaultdict(list)
        for part in (*branches, *conditions):
            where = _DECIDED.search(part.name)
            if where is not None:
                self.decided_at[(part.function, int(where.group(2)))].append(part)
        self._guards: dict[tuple, tuple[_Guard, ...]] = {}
        self.inlined: set[str] = set()  # functions the binary inlines somewhere
        self.functions = {k.function: k for k in kernels if k.kind == "function"}
        self.functions.update({k.name: k for k in kernels if k.kind == "function"})
        self.loops: dict[str, list[StaticKernelLike]] = defaultdict(list)
        for kernel in kernels:
            if kernel.kind == "loop":
                self.loops[kernel.function].append(kernel)
        self.loop_named = {k.name: k for k in kernels if k.kind == "loop"}
        self._chains: dict[tuple, tuple[_Place, ...]] = {}

    def function_count(self, name: str) -> sympy.Expr:
        kernel = self.functions[name]
        if kernel.count is None:
            raise _Undefined(f"count of function {name} undefined: {kernel.undef_reason}")
        return _normalized(kernel.count)

    def loops_at(self, function: str, file: str | None, line: int) -> list[StaticKernelLike]:
        """Loops of a function whose line range holds the position, outermost first."""
        if not file or not line:
            return []
        path = _normal(file)
        found = [
            k
            for k in self.loops.get(function, ())
            if _normal(k.file) == path and k.line <= line <= k.end_line
        ]
        return sorted(found, key=lambda k: (k.line - k.end_line, k.depth))

    def chain(self, function: str, insn: BinaryInstruction) -> tuple[_Place, ...]:
        """Source loops around an instruction, outermost first, through its inlined calls."""
        key = (function, insn.inlined, insn.file, insn.line)
        if key not in self._chains:
            self._chains[key], self._guards[key] = self._build_chain(function, insn)
        return self._chains[key]

    def guards(self, function: str, insn: BinaryInstruction) -> tuple[_Guard, ...]:
        """The ``if`` blocks around the call sites an inlined instruction comes from."""
        self.chain(function, insn)
        return self._guards[(function, insn.inlined, insn.file, insn.line)]

    def branch_at(
        self,
        function: str,
        file: str | None,
        line: int,
        inside: StaticKernelLike | None,
        own_code: bool = False,
    ) -> StaticKernelLike | None:
        """The innermost branch block of a function holding the position, within the loop
        ``inside`` (the innermost loop holding it) when there is one. With ``own_code``, only
        blocks whose own code can be on that line: not the line of their ``if`` condition (a
        then block's first line, or the line before an unbraced one), nor an else block's
        first line."""
        if not file or not line:
            return None
        path = _normal(file)
        found = [
            b
            for b in self.branches.get(function, ())
            if _normal(b.file) == path
            and b.line <= line <= b.end_line
            and (inside is None or inside.line <= b.line <= b.end_line <= inside.end_line)
            and (not own_code or line > _condition_line(b))
        ]
        return max(found, key=lambda b: (b.line, -b.end_line), default=None)

    def _build_chain(
        self, function: str, insn: BinaryInstruction
    ) -> tuple[tuple[_Place, ...], tuple[_Guard, ...]]:
        names = [function] + [frame.callee for frame in insn.inlined]
        positions = [(f.call_file, f.call_line) for f in insn.inlined] + [(insn.file, insn.line)]
        chain: list[_Place] = []
        guards: list[_Guard] = []
        path: tuple = ()
        current = _Place((), None, None)  # count of the innermost place so far
        try:
            current = _Place((), self.function_count(function), None)
        except _Undefined as reason:
            current = _Place((), None, str(reason))
        for level, (name, (file, line)) in enumerate(zip(names, positions, strict=True)):
            callee = self.functions.get(name) if level else None
            if level and callee is None:
                path += ((name, file, line),)
                continue  # inlined function without a kernel (a library header's): no loops
            entry = current
            loops = self.loops_at(name, file, line)
            for loop in loops:
                current = _place(path, loop, callee, entry)
                chain.append(current)
            branch = self.branch_at(name, file, line, loops[-1] if loops else None)
            if level < len(insn.inlined) and branch is not None:
                # the call site of the next inlined frame lies in an if block: its code runs
                # as often as that block, a share of the enclosing place's runs
                guarded = _place(path, branch, callee, entry)
                guards.append(_Guard(len(chain), branch.name, _share(guarded, current)))
                current = guarded
            path += ((name, file, line),)
        return tuple(chain), tuple(guards)

    def undefined_branch(
        self, function: str, instructions: Sequence[BinaryInstruction]
    ) -> str | None:
        """Why the count of one of the instructions (of code outside machine loops) is
        undefined: the reason of the innermost ``if`` block holding its line (past the block's
        first line, which the condition shares) when that block's count is undefined, else
        None."""
        for insn in instructions:
            owner = insn.inlined[-1].callee if insn.inlined else function
            branch = self.branch_at(owner, insn.file, insn.line, None)
            if branch is not None and insn.line > branch.line and branch.count is None:
                return f"count of block {branch.name} undefined: {branch.undef_reason}"
        return None

    def branch_share(self, function: str, insn: BinaryInstruction, loop_name: str) -> _Place:
        """The share of the iterations of source loop ``loop_name`` in which an instruction
        runs: that of the innermost ``if`` block holding its line inside the loop, in the
        function whose code it is (the innermost inlined one); 1 outside any block or on the
        block's first line (there the condition's code and the block's share one line); None
        with the reason when the block's count is undefined."""
        if insn.inlined:
            function = insn.inlined[-1].callee  # the code of the innermost inlined function
        loops = self.loops_at(function, insn.file, insn.line)
        inner = loops[-1] if loops else None
        if inner is None:
            return _Place((), sympy.Integer(1), None)
        if inner.name != loop_name:
            # code of a loop nested in it, outside that loop's machine loop (its set-up, or
            # invariant code hoisted before it): the share of the if block of ``loop_name``
            # around the nested loop, when there is one
            inner = next((k for k in loops if k.name == loop_name), None)
            if inner is None:
                return _Place((), sympy.Integer(1), None)
            branch = self._branch_around(function, insn, inner)
        else:
            branch = self.branch_at(function, insn.file, insn.line, inner, own_code=True)
        if branch is None:
            return _Place((), sympy.Integer(1), None)  # key () : no block of the report
        if branch.count is None:
            return _Place(
                (),
                None,
                f"code of block {branch.name} runs in some iterations of {loop_name} only, "
                f"and how many is undefined: {branch.undef_reason}",
            )
        if inner.count is None:
            return _Place((), None, f"count of loop {loop_name} undefined: {inner.undef_reason}")
        return _share(
            _Place((branch.name,), _normalized(branch.count), None),
            _Place((branch.name,), _normalized(inner.count), None),
        )

    def _branch_around(
        self, function: str, insn: BinaryInstruction, loop: StaticKernelLike
    ) -> StaticKernelLike | None:
        """The innermost ``if`` block directly in source loop ``loop`` (in no loop nested in
        it) whose own code holds the instruction's line."""
        found = [
            b
            for b in self.branches.get(function, ())
            if _normal(b.file) == _normal(insn.file)
            and b.line <= insn.line <= b.end_line
            and loop.line <= b.line <= b.end_line <= loop.end_line
            and insn.line > _condition_line(b)
            and self.loops_at(function, b.file, b.line)[-1] is loop
        ]
        return max(found, key=lambda b: (b.line, -b.end_line), default=None)

    def condition_share(
        self,
        function: str,
        blocks: list[Block],
        index: int,
        deciding: int | None,
        loop_name: str,
        compound: bool = False,
    ) -> _Place:
        """The share of the iterations of source loop ``loop_name`` in which a block runs that
        some iterations skip and no ``if`` block of the report holds by its lines: one whose
        code lies on the line of the condition that decides it (``control``, the conditional
        jump before it), an arm of a ``?:``, the right operand of ``&&`` / ``||``, or an ``if``
        block whose code the compiler put on the condition's line. The share of the one part
        of that line it can be; None with the reason when none, several with different counts,
        or one whose count is undefined. ``deciding`` is the block ending in that jump;
        ``compound`` says that the block runs on the outcome of several tests of that line
        (the value of a ``&&`` / ``||``, or the code after it), which can only be the body
        of an ``if`` whose condition it is."""
        block = blocks[index]
        start = block.start
        control = _jump_of(blocks[deciding]) if deciding is not None else None
        if control is None or not control.file or not control.line:
            return _Place((), sympy.Integer(1), None)  # a jump the compiler made, no source
        if control.inlined:
            function = control.inlined[-1].callee
        if not any(
            _normal(p.file) == _normal(control.file)
            for p in self.decided_at.get((function, control.line), ())
        ):
            # no if, ?:, && or || on the deciding jump's line: a condition the compiler made
            # (the zero-trip test of a nested loop, a remainder's test), which holds in every
            # iteration when the loops run as the source counts them
            return _Place((), sympy.Integer(1), None)
        if not any(i.file and i.line for i in block.instructions):
            return _Place(
                (),
                None,
                f"block at {start:#x} runs in some iterations of {loop_name} only, and has no "
                f"source line: which outcome of the condition at line {control.line} it is "
                "cannot be told",
            )
        frames = control.inlined
        line = control.line
        own = {
            (_normal(i.file), i.line)
            for i in block.instructions
            if i.file and i.line and i.inlined == frames
        }
        loops = self.loops_at(function, control.file, line)
        inner = loops[-1] if loops else None
        # the loop's own line: its update and test, which compilers copy into each arm
        header = inner.line if inner is not None else line
        elsewhere = sorted(
            n for f, n in own if f != _normal(control.file) or n not in (line, header)
        )
        mixed = any(i.inlined != frames for i in block.instructions if i.line)
        if frames and inner is None and elsewhere and not mixed:
            return self._inlined_block_share(function, control.file, elsewhere, start, loop_name)
        last = block.instructions[-1]
        tested = last.line if last.kind == "branch" else None
        if (
            elsewhere
            and not mixed
            and inner is not None
            and inner.name == loop_name
            and all(
                self._unconditional(function, control.file, n, inner, n == tested)
                for n in elsewhere
            )
        ):
            # a copy of code that runs in every iteration, put by the compiler on one of the
            # paths after the condition (tail duplication)
            return _Place((_COPY,), sympy.Integer(1), None)
        if elsewhere or mixed:
            return _Place(
                (),
                None,
                f"block at {start:#x} runs in some iterations of {loop_name} only, under the "
                f"condition at line {line}, and no if block, ?: arm or && / || operand of the "
                f"report holds its code (line {elsewhere[0] if elsewhere else line}; code after "
                "a continue or break, or code the compiler moved)",
            )
        if inner is None or inner.name != loop_name:
            return _Place(
                (),
                None,
                f"block at {start:#x} runs in some iterations of {loop_name} only, under the "
                f"condition at line {line}, which is not in that loop's body",
            )
        parts = [
            p
            for p in self.decided_at.get((function, line), ())
            if _normal(p.file) == _normal(control.file)
        ]
        held = _held_by(block, parts, control)
        if held is None and deciding is not None:
            held = _other_arm(blocks, index, deciding, parts, control)
        last = block.instructions[-1]
        if held is not None:
            parts = [held]  # the columns of the line table tell which operand the code is
        elif compound:
            tests = last.kind == "branch" and last.line == line
            parts = [] if tests else [p for p in parts if p.kind == "branch"]
            if not parts:
                return _Place(
                    (),
                    None,
                    f"block at {start:#x} runs in some iterations of {loop_name} only, on the "
                    f"outcome of several tests of the condition at line {line} (a && or ||), "
                    "whose count the report does not hold",
                )
        elif last.kind == "branch" and last.line == line and any(p.kind != "branch" for p in parts):
            # the block tests a condition itself: an operand of ?:, && or ||, not an if body
            parts = [p for p in parts if p.kind != "branch"]
        names = ", ".join(p.name for p in parts)
        if not parts:
            return _Place(
                (),
                None,
                f"block at {start:#x} runs in some iterations of {loop_name} only, under the "
                f"condition at line {line}, which holds no if, ?:, && or || of the report",
            )
        if inner.count is None:
            return _Place((), None, f"count of loop {loop_name} undefined: {inner.undef_reason}")
        undefined = [p for p in parts if p.count is None]
        if undefined:
            return _Place(
                (),
                None,
                f"block at {start:#x} runs in some iterations of {loop_name} only, as "
                f"{'one of ' if len(parts) > 1 else ''}{names}, and how many is undefined: "
                f"{undefined[0].undef_reason}",
            )
        counts = {_normalized(p.count) for p in parts}
        if len(counts) > 1:
            return _Place(
                (),
                None,
                f"block at {start:#x} runs in some iterations of {loop_name} only, as one of "
                f"{names} (the condition at line {line}), which run different numbers of times, "
                "and the binary does not tell which",
            )
        return _share(
            _Place((parts[0].name,), counts.pop(), None),
            _Place((parts[0].name,), _normalized(inner.count), None),
        )

    def _unconditional(
        self, function: str, file: str | None, line: int, loop: StaticKernelLike, tests: bool
    ) -> bool:
        """Whether code on ``line`` runs in every iteration of source loop ``loop`` in the
        source: directly in its body, in no if block, ?: or && / || operand, nor nested loop;
        with ``tests`` (the code ends in a conditional jump of that line), the condition of
        an ``if`` on that line counts too."""
        loops = self.loops_at(function, file, line)
        if not loops or loops[-1] is not loop:
            return False
        if self.branch_at(function, file, line, loop, own_code=True) is not None:
            return False
        parts = self.decided_at.get((function, line), ())
        return not parts or (tests and all(p.kind == "branch" for p in parts))

    def _inlined_block_share(
        self, function: str, file: str | None, lines: list[int], start: int, loop_name: str
    ) -> _Place:
        """The share of the calls of inlined ``function`` in which a block of its code outside
        its loops runs: that of the one ``if`` block of ``function`` holding all its lines
        (its count per call of ``function``), or None naming that block or the lines."""
        found = {self.branch_at(function, file, n, None, own_code=True) for n in lines}
        branch = found.pop() if len(found) == 1 else None
        if branch is None or self.loops_at(function, file, branch.line):
            return _Place(
                (),
                None,
                f"block at {start:#x} of {function}, inlined in {loop_name}, runs in some of "
                f"its calls only, and no one if block of {function} outside its loops holds "
                f"its code (lines {', '.join(map(str, lines))})",
            )
        callee = self.functions.get(function)
        if branch.count is None or callee is None or callee.count is None:
            return _Place(
                (),
                None,
                f"block at {start:#x} runs in some calls of {function} (inlined in "
                f"{loop_name}) only, as code of block {branch.name}, and how many is "
                f"undefined: {branch.undef_reason or f'count of function {function} undefined'}",
            )
        return _share(
            _Place((branch.name,), _normalized(branch.count), None),
            _Place((branch.name,), _normalized(callee.count), None),
        )

    def source_condition(self, function: str, insn: BinaryInstruction) -> bool:
        """True when the instruction is on the line of an ``if`` condition of the source (in
        the function whose code it is): a branch there is the program's, not the compiler's."""
        if insn.inlined:
            function = insn.inlined[-1].callee
        if not insn.file or not insn.line:
            return False
        path = _normal(insn.file)
        return any(
            _normal(b.file) == path and insn.line == _condition_line(b)
            for b in self.branches.get(function, ())
        )

    def iterations_per_entry(self, key: tuple) -> sympy.Expr | None:
        """Iterations of source loop ``key`` per entry: its count over that of the loop or
        function around it (None when either is undefined)."""
        loop = self.loop_named.get(key[1]) if len(key) > 1 else None
        if loop is None or loop.count is None:
            return None
        around = [k for k in self.loops_at(loop.function, loop.file, loop.line) if k is not loop]
        enclosing = around[-1] if around else self.functions.get(loop.function)
        if enclosing is None or enclosing.count is None or enclosing.count == 0:
            return None
        return sympy.cancel(_normalized(loop.count) / _normalized(enclosing.count))

    def after_if(self, function: str, insn: BinaryInstruction) -> bool:
        """True when an instruction comes from a line of the body of the function whose code
        it is (not its closing line, the epilogue) on or after the line of one of its ``if``
        statements (code an early return there may skip, or that a line table put on it)."""
        own = insn.inlined[-1].callee if insn.inlined else function
        kernel = self.functions.get(own)
        if kernel is None or not kernel.line < insn.line < kernel.end_line:
            return False
        path = _normal(insn.file)
        return any(
            _normal(b.file) == path and (if_line(b.name) or b.line) <= insn.line
            for b in self.branches.get(own, ())
        )

    def block_guard(self, function: str, block: Block) -> _Place:
        """The share of its function's runs in which a block outside every machine loop runs,
        when some calls skip it: that of the innermost ``if`` block (of the report's
        ``branches``) holding one of its instructions. Its instructions run equally often, so
        the instruction inlined deepest, then in the innermost block, decides; the ``if``
        blocks around the call sites it is inlined through count too. An instruction on the
        ``if``'s own line shares it with the condition's code and says nothing (on the first
        line of an else block, with the end of the then block); one on a source loop's line
        (a loop's guard or set-up) stands for where the loop lies. A block no ``if`` block
        holds, with code on the line of an ``if`` whose count is undefined, is undefined too.

        Returns
        -------
        _Place
            Key ``(block name,)`` with the share, or None and a reason naming the guard (file,
            line, condition) when that block's count is undefined; key :data:`_IN_LOOP` or
            ``()`` with share 1 when no ``if`` block holds the code (on a loop's lines, or
            nowhere: code after an early return, a ``?:`` arm).
        """
        best: tuple | None = None
        condition_line: tuple[StaticKernelLike, BinaryInstruction] | None = None
        in_loop = False
        for insn in block.instructions:
            own = insn.inlined[-1].callee if insn.inlined else function
            if not insn.file or not insn.line:
                continue
            position = insn.line
            loops = self.loops_at(own, insn.file, insn.line)
            if loops:
                in_loop = True
                position = loops[0].line  # the outermost loop lies where its statement starts
            path = _normal(insn.file)
            holding = [
                b
                for b in [*self.branches.get(own, ()), *self.switches.get(own, ())]
                if _normal(b.file) == path
                and (_first(b) <= position if loops else _first(b) < position)
                and position <= b.end_line
            ]
            branch = max(holding, key=lambda b: (b.line, -b.end_line), default=None)
            if branch is None:
                on_line = [
                    b
                    for b in self.branches.get(own, ())
                    if _normal(b.file) == path
                    and not is_else(b.name)
                    and if_line(b.name) == insn.line <= b.end_line
                    and b.count is None
                ]
                if on_line and condition_line is None and not loops:
                    condition_line = (on_line[0], insn)
                continue
            rank = (len(insn.inlined), branch.line, -branch.end_line)
            if best is None or rank > best[0]:
                best = (rank, branch, insn, own)
        if best is None and condition_line is not None:
            # skipped by some calls, on the line of an if whose count is undefined (a one-line
            # `if (c) f();`, a macro's if, the later terms of `a && b`): its then code, or
            # condition code that runs as often as part of it, either way undefined
            return _Place((condition_line[0].name,), None, _guard_reason(*condition_line))
        if best is None:
            return _Place(_IN_LOOP if in_loop else (), sympy.Integer(1), None)
        _, branch, insn, own = best
        key = (branch.name,)
        if branch.count is None:
            return _Place(key, None, _guard_reason(branch, insn))
        kernel = self.functions.get(own)
        if kernel is None or kernel.count is None:
            return _Place(key, None, f"count of function {own} undefined")
        share = _share(
            _Place(key, _normalized(branch.count), None),
            _Place(key, _normalized(kernel.count), None),
        ).defined()
        for guard in self.guards(function, insn):  # around the call sites it is inlined through
            if guard.share.count is None:
                return _Place(key, None, guard.share.reason)
            share = share * guard.share.count
        return _Place(key, sympy.expand(share), None)

    def entry_share(self, function: str, insn: BinaryInstruction, key: tuple) -> _Place:
        """The share of the runs of the place enclosing the source loop ``key`` (its enclosing
        source loop, else the function) in which that loop is entered, seen from an
        instruction of the loop: the ``if`` blocks between the two, in the loop's own function
        and around the call sites it is inlined through. None with the reason when a block's
        count is undefined."""
        chain = self.chain(function, insn)
        index = next((i for i, place in enumerate(chain) if place.key == key), None)
        if index is None:
            return _Place(key, sympy.Integer(1), None)
        share: sympy.Expr = sympy.Integer(1)
        for guard in self.guards(function, insn):
            if guard.loops == index:  # a call site's block between the enclosing loop and it
                if guard.share.count is None:
                    return _Place(key, None, guard.share.reason)
                share = share * guard.share.count
        loop = self.loop_named.get(key[1]) if len(key) > 1 else None
        if loop is None:
            return _Place(key, share, None)
        around = [k for k in self.loops_at(loop.function, loop.file, loop.line) if k is not loop]
        outer = around[-1] if around else None
        branch = self.branch_at(loop.function, loop.file, loop.line, outer)
        if branch is None:
            return _Place(key, share, None)
        if branch.count is None:
            return _Place(
                key,
                None,
                f"source loop {loop.name} is entered only in block {branch.name} (when "
                f"{_guard_condition(branch)}), whose count is undefined: {branch.undef_reason}",
            )
        enclosing = outer if outer is not None else self.functions.get(loop.function)
        if enclosing is None or enclosing.count is None:
            reason = f"count of the region around source loop {loop.name} undefined"
            return _Place(key, None, reason)
        ratio = _share(
            _Place(key, _normalized(branch.count), None),
            _Place(key, _normalized(enclosing.count), None),
        )
        return _Place(key, sympy.expand(share * ratio.defined()), None)


def _first(branch: StaticKernelLike) -> int:
    """The line after which code is inside an if block for :meth:`_Catalog.block_guard`: the
    ``if``'s own line for a then block (an unbraced arm may start on the next line), the line
    the block starts on for an else block (``} else {`` ends the then block's code too)."""
    return branch.line if is_else(branch.name) else (if_line(branch.name) or branch.line)


def _guard_condition(branch: StaticKernelLike) -> str:
    """Where and what the guard of an if block is: ``the condition of the if at F:L (C) holds``
    (``does not hold`` for an else block; the case taken for the cases of a switch)."""
    line = if_line(branch.name) or branch.line
    text = condition_text(branch.file, line)
    expanded = None if text else line_text(branch.file, line)  # an if a macro expands to
    shown = f" ({text})" if text else f" (in the expansion of `{expanded}`)" if expanded else ""
    if is_switch(branch.name):
        return f"its case of the switch at {branch.file}:{line}{shown} is taken"
    holds = "does not hold" if is_else(branch.name) else "holds"
    return f"the condition of the if at {branch.file}:{line}{shown} {holds}"


def _guard_reason(branch: StaticKernelLike, insn: BinaryInstruction) -> str:
    """Why code of an if block outside loops cannot be counted: the guard's place and text."""
    return (
        f"code at {insn.file}:{insn.line}, in block {branch.name}, runs only when "
        f"{_guard_condition(branch)}, and how "
        f"often is undefined ({branch.undef_reason}): give its probability with `#pragma "
        "perfcast probability(...)` before the if, or measure it with --profile"
    )


@dataclass(frozen=True)
class _Guard:
    """An ``if`` block around a call site that inlined code comes from.

    ``loops`` is how many source loops (of the chain) lie outside it; ``share`` is the part of
    the enclosing place's runs in which the block runs (None with the reason in ``place``).
    """

    loops: int
    name: str
    share: _Place


def _share(guarded: _Place, enclosing: _Place) -> _Place:
    """The ratio of a block's count to its enclosing place's count (0 when neither runs)."""
    if guarded.count is None:
        return guarded
    if enclosing.count is None:
        return enclosing
    if guarded.count == 0 or enclosing.count == 0:
        return _Place(guarded.key, sympy.Integer(0), None)
    return _Place(guarded.key, sympy.cancel(guarded.count / enclosing.count), None)


def _place(
    path: tuple, loop: StaticKernelLike, callee: StaticKernelLike | None, entry: _Place
) -> _Place:
    """A loop's count where it runs; an inlined copy runs per call as often as the callee's
    loop runs per call of the callee, times the calls at this site (``entry``)."""
    key = (path, loop.name, loop.line)
    if loop.count is None:
        what = "block" if loop.kind == "branch" else "loop"
        return _Place(key, None, f"count of {what} {loop.name} undefined: {loop.undef_reason}")
    count = _normalized(loop.count)
    if callee is None:
        return _Place(key, count, None)
    if callee.count is None or entry.count is None:
        reason = entry.reason or f"count of function {callee.name} undefined"
        return _Place(key, None, reason)
    if callee.count == 0 or entry.count == 0:
        return _Place(key, sympy.Integer(0), None)  # never called here: never runs (no 0/0)
    per_call = sympy.cancel(count / _normalized(callee.count))
    if sympy.fraction(sympy.together(per_call))[1].free_symbols:
        return _Place(
            key,
            None,
            f"loop {loop.name} of {callee.name}, inlined, runs a number of times per call that "
            "depends on the caller",
        )
    return _Place(key, sympy.expand(per_call * entry.count), None)


def _function_mix(
    function: BinaryFunction,
    catalog: _Catalog,
    attribution: str,
    measured: Mapping[tuple[str, str, int], sympy.Expr],
    source: str,
) -> FunctionMix:
    """The mix of one function of the binary; ``source`` is the source function its code
    comes from (its own name, or the function a compiler-made whole copy was made of)."""
    notes: list[str] = []
    try:
        entry = ("entry", function.name, function.low)
        try:
            function_count = catalog.function_count(source)
        except _Undefined:
            if entry not in measured:
                raise
            function_count = measured[entry]
            notes.append(f"calls of {function.name}: measured")
        if source != function.name:
            if entry in measured:
                function_count = measured[entry]
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
            notes.append(f"calls of the stand-alone copy of {function.name}: measured")
        counted: list[tuple[BinaryInstruction, sympy.Expr]]
        copy = source != function.name or function.name in catalog.inlined
        if copy and entry in measured:
            # the source's loop counts are per call of the source function, not of this copy
            counted = _all_measured(function, measured, notes)
        elif attribution == "line":
            counted = []
            for insn in function.instructions:
                chain = catalog.chain(source, insn)
                counted.append((insn, chain[-1].defined() if chain else function_count))
        else:
            counted = _cfg_counts(function, function_count, catalog, notes, measured, source)
    except _Undefined as reason:
        return FunctionMix(function.name, None, str(reason), len(function.instructions))
    return _mix_of(function, counted, notes)


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
            raise _Undefined(f"block at {block.start:#x} of {function.name} was not measured")
        counted.extend((insn, measured[key]) for insn in block.instructions)
    notes.append(
        f"every block of {function.name} counted as measured (a copy whose runs the source's "
        "counts, made per call of the source function, do not tell)"
    )
    return counted


def _cfg_counts(
    function: BinaryFunction,
    function_count: sympy.Expr,
    catalog: _Catalog,
    notes: list[str],
    measured: Mapping[tuple[str, str, int], sympy.Expr],
    source: str,
) -> list[tuple[BinaryInstruction, sympy.Expr]]:
    blocks = basic_blocks(function)
    live = reachable(blocks)
    machine_loops = natural_loops(blocks)
    # machine loops around each block, outermost first (natural_loops sorts outer loops first)
    around: dict[int, list[Loop]] = defaultdict(list)
    for loop in machine_loops:
        for index in loop.blocks:
            around[index].append(loop)
    place_of = _match_loops(source, blocks, machine_loops, around, catalog)
    machine_counts = _MachineCounts(blocks, around, place_of, function_count, catalog, source)
    runs = machine_counts.counts(machine_loops, notes)
    remainders = _remainder_counts(source, blocks, around, machine_counts, catalog, notes)
    error_paths = doomed(blocks)
    measured_places: set[tuple] = set()
    counted: list[tuple[BinaryInstruction, sympy.Expr]] = []
    copies: list[int] = []  # blocks copying every iteration's code onto one path
    dominating = dominators(blocks)
    chosen = _chosen_at_run_time(
        source, blocks, around, place_of, catalog, live, error_paths, bool(measured)
    )
    # copies with a run-time trip count keep the machine-loop counts (see _run_time_copies)
    assumed: set[int] = set()
    for alternative in {id(a): a for a in chosen.values()}.values():
        how = _run_time_copies(alternative, catalog, blocks, machine_loops, around, place_of)
        if how is None:
            continue
        assumed |= alternative.blocks
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
                raise _Undefined(next(undefined, None) or _alternative_reason(alternative, blocks))
            count = measured[key]
            from_profile = True
            if ("check", alternative.check) not in measured_places:
                measured_places.add(("check", alternative.check))
                notes.append(
                    f"{_alternative_reason(alternative, blocks, profiled=True)}: block counts "
                    "measured"
                )
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
        else:
            innermost = chain[-1]
            count = runs[innermost.header].defined()
            body_first = (
                innermost.exits_at_header
                and innermost.header in machine_counts.source_counted
                and _header_holds_body(
                    source, blocks[innermost.header], place_of[innermost.header].key, catalog
                )
            )
            if body_first:
                # the header holds the body before the exit test (a rotated loop entered at
                # its header, e.g. gcc -O2 jumping past a one-instruction latch): it runs once
                # per source iteration, the rest of the loop's own code once less per entry
                if block.index != innermost.header and around[block.index][-1] is innermost:
                    count = count - _enclosing_runs(chain, runs, function_count)
            elif innermost.exits_at_header and block.index == innermost.header:
                count = count + _enclosing_runs(chain, runs, function_count)
            elif any(block.index not in dominating[latch] for latch in innermost.latches):
                # a block some iterations skip: its own code runs in its if block's share
                loop_key = place_of[innermost.header].key
                if len(loop_key) > 2 and loop_key[0] != _UNMATCHED:
                    conditional = loop_key[1]
        shares = [sympy.Integer(1)] * len(block.instructions)
        from_profile = from_profile or measured_block
        uniform = False  # the shares already hold the guards of inlined call sites
        if skippable:
            guard = guard_of.get(block.index) or catalog.block_guard(source, block)
            if guard.key == ():
                guard = _other_way(blocks, block, dominating, exits, catalog, source) or guard
            try:
                shares = [guard.defined()] * len(block.instructions)
                uniform = guard.key not in ((), _IN_LOOP)  # the block's guard holds the lot
            except _Undefined as reason:
                if key not in measured:
                    raise
                count = measured[key]  # the profile tells how often the block ran
                from_profile = True
                if key not in measured_places:
                    measured_places.add(key)
                    notes.append(f"block at {block.start:#x}: count measured ({reason})")
            else:
                if guard.key in ((), _IN_LOOP) and key in measured:
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
            except _Undefined as reason:
                if key not in measured:
                    raise
                count = measured[key]  # the profile tells how often the block ran
                from_profile = True
                if key not in measured_places:
                    measured_places.add(key)
                    notes.append(f"block at {block.start:#x}: count measured ({reason})")
            else:
                if not any(place.key for place in places):
                    # skipped by some iterations, yet in no if block of the report by its
                    # lines: the arm of a ?:, a && / || operand, or an if block's code on
                    # its condition's line; the conditional jump before it tells which
                    if key in measured:
                        count = measured[key]
                        from_profile = True
                    elif not _under_call_guard(catalog, source, stand_ins, len(chain)):
                        control = _controlling_branch(blocks, block.index, innermost, dominating)
                        decided = catalog.condition_share(
                            source,
                            blocks,
                            block.index,
                            control,
                            conditional,
                            _compound(blocks, block.index, control, innermost, dominating),
                        )
                        shares = [decided.defined()] * len(block.instructions)
                        if decided.key == (_COPY,):
                            copies.append(block.start)
        for insn, stand_in, share in zip(block.instructions, stand_ins, shares, strict=True):
            try:
                for site in () if from_profile or uniform else catalog.guards(source, stand_in):
                    if site.loops >= len(chain):  # inside the innermost machine loop around it
                        share = share * site.share.defined()
            except _Undefined as reason:
                if key not in measured:
                    raise
                if key not in measured_places:  # inlined code under a guard nobody can count
                    measured_places.add(key)
                    notes.append(f"block at {block.start:#x}: count measured ({reason})")
                counted.append((insn, measured[key]))
                continue
            counted.append((insn, count if share == 1 else sympy.expand(count * share)))
    if skipped:
        starts = ", ".join(f"{start:#x}" for start in skipped[:5])
        more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
        notes.append(
            f"blocks at {starts}{more} run under a condition outside loops that some calls "
            "skip: counts measured"
        )
    if skipped_calls:
        starts = ", ".join(f"{start:#x}" for start in skipped_calls[:5])
        more = f" and {len(skipped_calls) - 5} more" if len(skipped_calls) > 5 else ""
        notes.append(
            f"blocks at {starts}{more} outside loops run in some calls only, on or after the "
            "line of an if but in no if block (code an early return may skip): counted in every "
            "call (an upper bound; --profile measures them)"
        )
    if copies:
        starts = ", ".join(f"{start:#x}" for start in copies[:5])
        notes.append(
            f"blocks at {starts}{' and more' if len(copies) > 5 else ''} are copies of code that "
            "runs in every loop iteration, which the compiler put on the paths after a "
            "condition: each copy counts in every iteration (their instructions are over-counted "
            "by the iterations that take the other path; --profile measures them)"
        )
    return counted


def _register(operand: str) -> str:
    """A general-purpose register operand by its 64-bit name (``edx`` -> ``rdx``, ``r8d`` ->
    ``r8``); other operands unchanged."""
    name = operand.strip()
    if re.fullmatch(r"e[a-d]x|e[sd]i|e[bs]p", name):
        return "r" + name[1:]
    if re.fullmatch(r"r\d+[dwb]", name):
        return name[:-1]
    return name


def _held_by(
    block: Block, parts: list[StaticKernelLike], control: BinaryInstruction
) -> StaticKernelLike | None:
    """The operand of a ``?:``, ``&&`` or ``||`` whose source columns hold the block's code:
    for each instruction with a column, the innermost operand holding it; the one of those
    that holds the others (an operand whose nested condition the compiler folded into it).
    None when no column falls in an operand or the operands found are disjoint."""
    spans = {id(p): _span(p) for p in parts if _span(p)[3]}
    found = []
    for insn in block.instructions:
        if not insn.column or insn.inlined != control.inlined:
            continue
        if _normal(insn.file) != _normal(control.file):
            continue
        position = (insn.line, insn.column)
        holding = [
            p for p in parts if id(p) in spans and spans[id(p)][:2] <= position < spans[id(p)][2:]
        ]
        if holding:
            found.append(max(holding, key=lambda p: (spans[id(p)][:2], _negated(spans[id(p)][2:]))))
    if not found:
        return None
    outer = min(found, key=lambda p: (spans[id(p)][:2], _negated(spans[id(p)][2:])))
    first, last = spans[id(outer)][:2], spans[id(outer)][2:]
    inside = all(first <= spans[id(p)][:2] and spans[id(p)][2:] <= last for p in found)
    return outer if inside else None


def _condition_line(branch: StaticKernelLike) -> int:
    """The last line of an ``if`` block that is its condition's code, not its own: the if's
    line for a then block (an unbraced one starts on the next line), the first line of an else
    block (``} else {``)."""
    where = _DECIDED.search(branch.name)
    if where is not None and where.group(4) == "then":
        return min(int(where.group(2)), branch.line)
    return branch.line


def _span(part: StaticKernelLike) -> tuple[int, int, int, int]:
    """Where a condition block's code lies: first line and column, last line and the column
    past its end (0 when the report gives no columns)."""
    return (
        part.line,
        int(getattr(part, "column", 0)),
        part.end_line,
        int(getattr(part, "end_column", 0)),
    )


def _negated(position: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(-value for value in position)


def _other_arm(
    blocks: list[Block],
    index: int,
    deciding: int,
    parts: list[StaticKernelLike],
    control: BinaryInstruction,
) -> StaticKernelLike | None:
    """The arm of a ``?:`` a block is, when the other way from the deciding jump starts with
    code the columns place in the other arm of that ``?:``."""
    others = [s for s in blocks[deciding].successors if s != index]
    if len(others) != 1 or len(blocks[deciding].successors) != 2:
        return None
    held = _held_by(blocks[others[0]], parts, control)
    if held is None or not held.name.endswith((":then", ":else")):
        return None
    wanted = held.name[: -len("then")] + ("else" if held.name.endswith(":then") else "then")
    return next((p for p in parts if p.name == wanted), None)


def _compound(
    blocks: list[Block], index: int, deciding: int | None, loop: Loop, dominating: list[set[int]]
) -> bool:
    """Whether block ``index`` runs on the outcome of several tests of one source line: it is
    reached from two or more conditional jumps of the deciding jump's line, or the block that
    decides it is itself decided by a jump of that line (``a && b`` materialized as 0 or 1,
    code after the condition)."""
    if deciding is None:
        return False
    control = _jump_of(blocks[deciding])
    if control is None:
        return False
    where = (control.file, control.line, control.inlined)

    def same_line(block: int | None) -> bool:
        if block is None:
            return False
        jump = _jump_of(blocks[block])
        return (
            jump is not None
            and blocks[block].instructions[-1].kind == "branch"
            and (jump.file, jump.line, jump.inlined) == where
        )

    testing = [p for p in blocks[index].predecessors if p in loop.blocks and same_line(p)]
    if len(testing) > 1:
        return True
    return same_line(_controlling_branch(blocks, deciding, loop, dominating))


def _jump_of(block: Block) -> BinaryInstruction | None:
    """The conditional jump ending a block, with the source line of the block's last lined
    instruction when the jump has none."""
    last = block.instructions[-1]
    if last.line:
        return last
    lined = [i for i in block.instructions if i.file and i.line]
    return lined[-1] if lined else None


def _under_call_guard(
    catalog: _Catalog, source: str, instructions: Sequence[BinaryInstruction], depth: int
) -> bool:
    """Whether a block's instructions are inlined code under an ``if`` block around its call
    site, inside the innermost machine loop around it (``depth`` machine loops): that guard's
    share counts them (:meth:`_Catalog.guards`)."""
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


def _block_places(block: Block, places: list[_Place]) -> list[_Place]:
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


def _other_way(
    blocks: list[Block],
    block: Block,
    dominating: list[set[int]],
    exits: list[int],
    catalog: _Catalog,
    source: str,
) -> _Place | None:
    """The share of the calls that run a block no ``if`` block explains, when it is one way of
    a two-way branch whose other way is an ``if`` block of known share and nothing else leads
    to either (code after `if (c) return;` whose return jumps to a shared epilogue): the
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
    if taken.key in ((), _IN_LOOP) or taken.count is None:
        return None
    share: sympy.Expr = sympy.Integer(1)
    if any(parent.index not in dominating[e] for e in exits):  # the branch itself is skipped
        decided = catalog.block_guard(source, parent)
        if decided.key in ((), _IN_LOOP) or decided.count is None:
            return None
        share = decided.count
    return _Place(("the other way",), sympy.expand(share - taken.count), None)


def _last_exit(
    exits: list[int], guard_of: dict[int, _Place], blocks: list[Block]
) -> dict[int, _Place]:
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
    if any(g.key == _IN_LOOP or g.count is None for g in others):
        return {}
    rest = sympy.expand(1 - sum((g.count for g in others if g.count is not None), sympy.S.Zero))
    return {unexplained[0]: _Place(("the other exits",), rest, None)}


def _chosen_at_run_time(
    function: str,
    blocks: list[Block],
    around: dict[int, list[Loop]],
    place_of: dict[int, _Place],
    catalog: _Catalog,
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
    catalog: _Catalog,
    blocks: list[Block],
    machine_loops: list[Loop],
    around: dict[int, list[Loop]],
    place_of: dict[int, _Place],
) -> str | None:
    """How the counts of copies with a run-time trip count treat them, or None when every
    machine loop of the copies has a constant trip count (or there is none: straight-line
    copies), which are counted in full per entry each: both copies, the silent double count.

    ``"shared"``: both copies are machine loops, one with a run-time count, of different widths;
    their counts give the source loop's iterations to them widest first, as for a vector loop
    and its remainder loop (the path of arrays that do not overlap; :class:`_MachineCounts`
    notes it). Copies of equal widths (whole versions of a loop nest) would give one of them
    every iteration: None.
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
        # (clang's fallback loop starts where the shared first iteration left it)
        return None
    widths: list[set[int | None]] = [set(), set()]
    run_time = False
    for side, loops in enumerate(sides):
        for loop in loops:
            own = {b for b in loop.blocks if around[b][-1] is loop}
            found = induction(blocks, loop, own)
            run_time = run_time or found is None or found.trip_count() is None
            widths[side].add(_width(found, blocks, own))
    if not run_time:
        return None
    if not all(sides):
        return "both"
    # copies taking as many iterations per pass cannot be a vector loop and its remainder
    # loop: sharing the iterations would give one of them all (gcc -O3 versions a whole nest)
    wider = [max((w for w in side if w is not None), default=None) for side in widths]
    return "shared" if None not in wider and wider[0] != wider[1] else None


def _body_loop(function: str, block: Block, catalog: _Catalog) -> tuple | None:
    """Key of the source loop whose body most of the block's instructions are: the innermost
    loop around each instruction, unless the instruction carries that loop's header line (a
    guard, an induction update) in the loop's own function."""
    votes: dict[tuple, int] = defaultdict(int)
    for insn in block.instructions:
        chain = catalog.chain(function, insn)
        if not chain:
            continue
        key = chain[-1].key
        if len(key) < 3 or key[0] == _UNMATCHED:
            continue
        in_own_function = len(key[0]) == len(insn.inlined)
        if in_own_function and insn.line <= key[2]:
            continue  # the loop's header line (or before it): no body code
        votes[key] += 1
    if not votes:
        return None
    key = max(votes, key=votes.__getitem__)
    return key if 2 * votes[key] > len(block.instructions) else None


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


@dataclass(frozen=True)
class _Remainder:
    """Source iterations per entry the machine loops of a source loop leave undone
    (``iterations``), the width of the last of those loops, the loops, and the count of the
    context they are entered from (``entry``)."""

    iterations: sympy.Expr
    width: int
    loops: tuple[Loop, ...]
    entry: _Place


class _MachineCounts:
    """How often the body of each machine loop runs: its source loop's count, corrected by the
    trip count or the elements per iteration the binary shows (vectorization, unrolling).

    Machine loops that implement one source loop side by side (a vector loop and its scalar
    remainder loop) share its iterations: each takes ``floor(remaining / k)`` passes of ``k``
    source iterations per entry, widest first, and leaves the rest to the next.
    """

    def __init__(
        self,
        blocks: list[Block],
        around: dict[int, list[Loop]],
        place_of: dict[int, _Place],
        function_count: sympy.Expr,
        catalog: _Catalog,
        function: str,
    ) -> None:
        self.blocks = blocks
        self.catalog = catalog
        self.function = function
        self.around = around
        self.place_of = place_of
        self.function_count = _Place((), function_count, None)
        # (enclosing machine loop header or None, source loop key) -> what the source loop's
        # machine loops leave undone (filled by counts)
        self.remainders: dict[tuple, _Remainder] = {}
        # headers of machine loops counted with their source loop's count (no trip count read
        # from the binary, one source iteration per pass)
        self.source_counted: set[int] = set()

    def _own(self, loop: Loop) -> set[int]:
        """The loop's blocks that no loop nested in it holds."""
        return {b for b in loop.blocks if self.around[b][-1] is loop}

    def _outer(self, loop: Loop) -> Loop | None:
        chain = self.around[loop.header]
        return chain[-2] if len(chain) > 1 else None

    def _one_after_another(
        self, group: list[Loop], widths: dict[int, int]
    ) -> tuple[Loop, Loop] | None:
        """Two machine loops of the group of which the second is reached from the first's
        exit without going round an enclosing loop (copies in sequence, not alternatives
        behind one test), covers at least as many source iterations per pass (a remainder
        loop is narrower than the loop before it), and both do work of the body; or None."""
        if len(group) < 2:
            return None
        outer = self._outer(group[0])
        stop = outer.header if outer is not None else None
        for loop in group:
            seen: set[int] = set()
            stack = [
                s for b in loop.blocks for s in self.blocks[b].successors if s not in loop.blocks
            ]
            while stack:
                current = stack.pop()
                if current in seen or current == stop:
                    continue
                seen.add(current)
                stack.extend(self.blocks[current].successors)
            for other in group:
                if (
                    other is not loop
                    and other.header in seen
                    and widths[other.header] >= widths[loop.header]
                    and self._works(loop, other)
                ):
                    return loop, other
        return None

    def _bound_chosen(self, loop: Loop, key: tuple) -> BinaryInstruction | None:
        """The conditional move before a machine loop that writes a register its exit test
        compares (gcc -O3 runs `for (i < n) x += i < m && ...` to min(n, m)), when a
        condition inside the source loop ``key`` has a count with a minimum or maximum (a
        test of the loop variable); None otherwise."""
        source = self.catalog.loop_named.get(key[1]) if len(key) > 1 else None
        if source is None:
            return None
        parts = [
            p
            for (function, line), found in self.catalog.decided_at.items()
            if function == self.function and source.line < line <= source.end_line
            for p in found
        ]
        if not any(p.count is not None and p.count.has(sympy.Min, sympy.Max) for p in parts):
            return None
        compared: set[str] = set()
        for latch in loop.latches:
            tail = self.blocks[latch].instructions[-2:]
            if len(tail) == 2 and tail[-1].kind == "branch" and tail[0].mnemonic == "cmp":
                compared |= {_register(o) for o in tail[0].operands.split(",")}
        if not compared:
            return None
        before = dominators(self.blocks)[loop.header] - loop.blocks
        for index in sorted(before, reverse=True):
            for insn in reversed(self.blocks[index].instructions):
                if insn.mnemonic.startswith("cmov") and _register(insn.operands.split(",")[0]) in (
                    compared
                ):
                    return insn
        return None

    def _works(self, *loops: Loop) -> bool:
        """Whether each machine loop's own code holds work of the loop body: a line other
        than a source loop's header line, or inlined code. (A loop that only tests a
        loop-invariant condition each pass and jumps into its copy is unswitching, not a
        split: gcc -O2 makes such an empty copy of an outer loop for ``n <= 0``.)"""
        headers = {k.line for k in self.catalog.loops.get(self.function, ())}
        return all(
            any(
                insn.inlined or (insn.line and insn.line not in headers)
                for b in self._own(loop)
                for insn in self.blocks[b].instructions
            )
            for loop in loops
        )

    def counts(self, machine_loops: list[Loop], notes: list[str]) -> dict[int, _Place]:
        """Machine loop header -> the count of its body per program run (or why undefined)."""
        runs: dict[int, _Place] = {}
        siblings: dict[tuple, list[Loop]] = defaultdict(list)
        for loop in machine_loops:
            outer = self._outer(loop)
            siblings[(outer.header if outer else None, self.place_of[loop.header].key)].append(loop)
        for loop in machine_loops:  # outer loops first: an entry count is known when needed
            if loop.header in runs:
                continue
            outer = self._outer(loop)
            group = siblings[(outer.header if outer else None, self.place_of[loop.header].key)]
            entry = runs[outer.header] if outer else self.function_count
            source_entry = self.place_of[outer.header] if outer else self.function_count
            counted, left = self._group(group, entry, source_entry, notes)
            runs.update(counted)
            if left is not None:
                key = (outer.header if outer else None, self.place_of[loop.header].key)
                self.remainders[key] = _Remainder(left[0], left[1], tuple(group), entry)
        return runs

    def _width(self, found: Induction | None, own: set[int], key: tuple) -> int | None:
        """Iterations of source loop ``key`` one pass covers (:func:`_width`), unless the
        packed code of the pass is mostly the body of a source loop nested in ``key`` that the
        compiler unrolled completely (gcc -O3's row loop around a packed row): its lanes are
        iterations of that loop, and the pass covers ``step / (element size x that loop's
        iterations per entry)`` iterations of ``key`` (None when that does not divide)."""
        width = _width(found, self.blocks, own)
        if width is None or width <= 1 or found is None or found.element_size is None:
            return width
        votes: dict[tuple, int] = defaultdict(int)
        total = 0
        for index in own:
            for insn in self.blocks[index].instructions:
                total += 1
                chain = self.catalog.chain(self.function, insn)
                keys = [place.key for place in chain]
                if key in keys and keys.index(key) < len(keys) - 1:
                    votes[keys[keys.index(key) + 1]] += 1
        inner = max(votes, key=votes.__getitem__, default=None)
        if inner is None or 2 * votes[inner] <= total:
            return width
        per_entry = self.catalog.iterations_per_entry(inner)
        if per_entry is None or not per_entry.is_number:
            return None
        span = found.element_size * int(per_entry)
        return found.step // span if span > 0 and found.step % span == 0 else None

    def _entry_share(self, loop: Loop, place: _Place) -> _Place:
        """The share of its enclosing runs in which the source loop of a machine loop is
        entered (see :meth:`_Catalog.entry_share`), from the loop's first instruction that
        belongs to it."""
        for index in sorted(self._own(loop)):
            for insn in self.blocks[index].instructions:
                if any(p.key == place.key for p in self.catalog.chain(self.function, insn)):
                    return self.catalog.entry_share(self.function, insn, place.key)
        return _Place(place.key, sympy.Integer(1), None)

    def _group(
        self, group: list[Loop], entry: _Place, source_entry: _Place, notes: list[str]
    ) -> tuple[dict[int, _Place], tuple[sympy.Expr, int] | None]:
        """Counts of the machine loops of one source loop, and, when they take passes of
        known widths, the iterations per entry they leave and the width of the last."""
        place = self.place_of[group[0].header]
        if place.key[:1] == (_UNMATCHED,):  # no source loop: nothing to derive a count from
            return {loop.header: place for loop in group}, None
        name = place.key[1] if len(place.key) > 1 else "?"
        own = {loop.header: self._own(loop) for loop in group}
        found = {loop.header: induction(self.blocks, loop, own[loop.header]) for loop in group}
        trips = {h: i.trip_count() if i else None for h, i in found.items()}
        if entry.count is None:
            return {loop.header: _Place(place.key, None, entry.reason) for loop in group}, None
        per_entry = None
        if place.count is not None and source_entry.count is not None:
            per_entry = sympy.cancel(place.count / source_entry.count)
        if all(t is not None for t in trips.values()):
            versions = self._versions(group, found, trips, own, per_entry, name)
            if versions is not None:
                return {loop.header: _Place(place.key, None, versions) for loop in group}, None
            # a trip count is per entry of the loop: entered only under an if, it runs in that
            # block's share of the enclosing runs
            share = self._entry_share(group[0], place)
            if share.count is None:
                return {loop.header: _Place(place.key, None, share.reason) for loop in group}, None
            result = {}
            for loop in group:
                trip = trips[loop.header]
                runs = sympy.expand(trip * share.count * entry.count)
                result[loop.header] = _Place(place.key, runs, None)
                if per_entry != trip * share.count:
                    notes.append(
                        f"machine loop at {self.blocks[loop.header].start:#x} runs {trip} times "
                        f"per entry (read from the binary), source loop {name} "
                        f"{_per_entry_text(per_entry)}: vectorized, unrolled or split"
                    )
            return result, None
        if place.count is None or per_entry is None:
            return {loop.header: place for loop in group}, None
        widths = {
            loop.header: self._width(found[loop.header], own[loop.header], place.key)
            for loop in group
        }
        chosen = self._bound_chosen(group[0], place.key) if len(group) == 1 else None
        if chosen is not None and not per_entry.has(sympy.Min, sympy.Max):
            reason = (
                f"the exit test of machine loop at {self.blocks[group[0].header].start:#x} "
                f"compares with a bound chosen by {chosen.mnemonic} at {chosen.address:#x} "
                f"before it, and a condition in source loop {name} limits its iterations: the "
                "compiler shortened the loop to a minimum or maximum, which the source count "
                f"{per_entry} does not have"
            )
            return {group[0].header: _Place(place.key, None, reason)}, None
        if len(group) == 1 and widths[group[0].header] == 1:
            if entry.count is not None and sympy.expand(entry.count - source_entry.count) != 0:
                # entered as often as the enclosing machine loop runs, which differs from the
                # enclosing source loop's count (an outer loop vectorized around it)
                runs = sympy.expand(per_entry * entry.count)
                return {group[0].header: _Place(place.key, runs, None)}, None
            self.source_counted.add(group[0].header)
            return {group[0].header: _Place(place.key, place.count, None)}, None
        unknown = [h for h, k in widths.items() if k is None]
        if unknown:
            reason = (
                f"machine loop at {self.blocks[unknown[0]].start:#x} implements source loop "
                f"{name} (vectorized, unrolled or versioned), and how many source iterations "
                "one of its passes covers cannot be read from the binary"
            )
            return {loop.header: _Place(place.key, None, reason) for loop in group}, None
        known = {h: k for h, k in widths.items() if k is not None}
        following = self._one_after_another(group, known)
        if following is not None:
            # a loop entered after another's exit that is no narrower (so no remainder of it)
            # runs further iterations of the source loop: gcc -O3 splits a loop at a condition
            # on its variable (`if (i < 10)`), and how the iterations divide is not in the binary
            first, second = (self.blocks[loop.header].start for loop in following)
            reason = (
                f"machine loops at {first:#x} and {second:#x} implement source loop {name} one "
                "after the other, the second no narrower than the first: the compiler split the "
                "loop (at a condition on its variable), and how its iterations divide between "
                "them cannot be read from the binary"
            )
            return {loop.header: _Place(place.key, None, reason) for loop in group}, None
        remaining = per_entry
        result = {}
        ordered = sorted(group, key=lambda item: -known[item.header])
        for loop in ordered:
            width = known[loop.header]
            passes = sympy.floor(remaining / width) if width > 1 else remaining
            result[loop.header] = _Place(place.key, sympy.expand(passes * entry.count), None)
            remaining = remaining - width * passes
        starts = ", ".join(
            f"{self.blocks[loop.header].start:#x} ({known[loop.header]} per pass)"
            for loop in ordered
        )
        notes.append(
            f"source loop {name} is implemented by {len(group)} machine loop"
            f"{'s' if len(group) > 1 else ''} ({starts}; "
            "vectorized, unrolled, split or versioned; widths read from the binary): each takes "
            "floor(remaining / width) passes per entry, which assumes every entry runs the same "
            "number of iterations and versions run one after the other"
        )
        last = known[ordered[-1].header]
        return result, (sympy.expand(remaining), last) if last > 1 else None

    def _versions(
        self,
        group: list[Loop],
        found: dict[int, Induction | None],
        trips: dict[int, int | None],
        own: dict[int, set[int]],
        per_entry: sympy.Expr | None,
        name: str,
    ) -> str | None:
        """Why the machine loops of source loop ``name`` cannot all be counted, when two of them
        each cover all its iterations per entry: copies of the whole loop of which the program
        picks one at run time (versions behind an alias or alignment check), or a loop split
        in two; the binary's trip counts do not tell which runs. ``per_entry``, the source
        loop's iterations per entry, when a number, must be what they cover (machine loops of
        inner loops attributed to an outer source loop by their lines are no versions)."""
        covered: dict[int, int] = {}
        for loop in group:
            width = self._width(
                found[loop.header], own[loop.header], self.place_of[loop.header].key
            )
            trip = trips[loop.header]
            if width is None or trip is None:
                return None
            covered[loop.header] = trip * width
        seen: dict[int, int] = {}
        for header, iterations in covered.items():
            whole = per_entry is None or not per_entry.is_number or per_entry == iterations
            if iterations > 1 and iterations in seen and whole:
                return (
                    f"machine loops at {self.blocks[seen[iterations]].start:#x} and "
                    f"{self.blocks[header].start:#x} each cover all {iterations} iterations of "
                    f"source loop {name} per entry: versions of which one runs (an alias or "
                    "alignment check at run time) or a split loop, which the binary does not tell"
                )
            seen[iterations] = header
        return None


def _remainder_counts(
    function: str,
    blocks: list[Block],
    around: dict[int, list[Loop]],
    machine_counts: _MachineCounts,
    catalog: _Catalog,
    notes: list[str],
) -> dict[int, sympy.Expr]:
    """Counts of the blocks holding peeled remainder iterations of unrolled loops.

    A block that runs under a condition after the machine loops of a source loop, inside the
    same enclosing machine loop, and whose instructions are mostly the source loop's body
    (lines after its header line, not inlined) is a copy of the body finishing the iterations
    the machine loops leave (:mod:`perfcast.static.epilogues`). When the last machine loop
    covers 2 source iterations per pass, that is 0 or 1 iteration per entry: the block runs
    ``remaining`` times per entry. With wider passes several copies share up to ``width - 1``
    iterations in an order the binary does not tell: the count is undefined, with that reason.
    """
    found: dict[int, sympy.Expr] = {}
    for (outer, key), left in machine_counts.remainders.items():
        chain_of_outer = around[outer] if outer is not None else []
        enclosing = next((loop for loop in chain_of_outer if loop.header == outer), None)
        region = enclosing.blocks if enclosing else None
        depth = len(chain_of_outer)
        for index in sorted(conditional_successors(blocks, left.loops, region, outer)):
            chain = around[index]
            if (chain[-1].header if chain else None) != outer:
                continue
            if not _is_body_copy(function, blocks[index], depth, key, catalog):
                continue
            name = key[1] if len(key) > 1 else "?"
            start = blocks[index].start
            if left.width != 2:
                raise _Undefined(
                    f"block at {start:#x} finishes source loop {name} after machine loops "
                    f"covering {left.width} iterations per pass: how many of the up to "
                    f"{left.width - 1} remaining iterations it runs cannot be read from the binary"
                )
            found[index] = sympy.expand(left.entry.defined() * left.iterations)
            notes.append(
                f"block at {start:#x} runs the remainder of source loop {name} (unrolled by 2, "
                f"read from the binary): {left.iterations} times per entry"
            )
    return found


def _enclosing_runs(
    chain: list[Loop], runs: dict[int, _Place], function_count: sympy.Expr
) -> sympy.Expr:
    """How often the innermost machine loop of ``chain`` is entered: the runs of the machine
    loop around it, else the function's count."""
    return runs[chain[-2].header].defined() if len(chain) > 1 else function_count


def _header_holds_body(function: str, block: Block, key: tuple, catalog: _Catalog) -> bool:
    """True when the block holds code of the body of source loop ``key`` (a line after the
    loop's own, in the loop, not inlined), not only its condition."""
    line = key[2] if len(key) > 2 else None
    if line is None:
        return False
    return any(
        not insn.inlined
        and insn.line > line
        and any(place.key == key for place in catalog.chain(function, insn))
        for insn in block.instructions
    )


def _is_body_copy(function: str, block: Block, depth: int, key: tuple, catalog: _Catalog) -> bool:
    """True when most instructions of the block are the body of the source loop ``key`` at
    machine depth ``depth``: lines after its header line, in its own function."""
    line = key[2] if len(key) > 2 else None
    if line is None:
        return False
    body = 0
    for insn in block.instructions:
        chain = catalog.chain(function, insn)
        in_loop = len(chain) > depth and chain[depth].key == key
        if in_loop and not insn.inlined and insn.line > line:
            body += 1
    return 2 * body > len(block.instructions)


def _width(found: Induction | None, blocks: list[Block], own: set[int]) -> int | None:
    """Source iterations one pass of a machine loop covers: from its induction register, else 1
    for a loop without packed SIMD instructions, unless its pointer moves several elements per
    pass and reaches more than one of them; else None (unknown)."""
    width = found.elements_per_iteration() if found is not None else None
    if width is not None:
        return width
    if packed(blocks, own):
        return None
    if found is not None and found.scale == 1 and found.several_per_pass:
        # a pointer or byte offset moving several elements per pass and reaching more than one
        # of them in scalar code: unrolled copies of the body, or fields of one struct; the
        # binary does not tell (one element per array is a strided walk: one iteration)
        return None
    return 1


def _per_entry_text(per_entry: sympy.Expr | None) -> str:
    if per_entry is None:
        return "has no defined count"
    return f"{per_entry} times per entry"


def _match_loops(
    function: str,
    blocks: list,
    machine_loops: list[Loop],
    around: dict[int, list[Loop]],
    catalog: _Catalog,
) -> dict[int, _Place]:
    """Machine loop header -> the source loop it implements (vote of its own instructions)."""
    matched = {}
    for loop in machine_loops:
        depth = sum(1 for other in around[loop.header] if other.blocks >= loop.blocks)
        votes: dict[tuple, int] = defaultdict(int)
        candidates = {}
        for index in loop.blocks:
            if around[index][-1] is not loop:
                continue  # belongs to a nested machine loop
            for insn in blocks[index].instructions:
                chain = catalog.chain(function, insn)
                if len(chain) >= depth:
                    place = chain[depth - 1]
                    votes[place.key] += 1
                    candidates[place.key] = place
        if not votes:
            # undefined, unless a profile measured its blocks
            address = blocks[loop.header].start
            matched[loop.header] = _Place(
                (_UNMATCHED, address),
                None,
                f"machine loop at {address:#x} has no source loop at depth {depth} "
                "(the static report misses a loop, or the compiler restructured it)",
            )
            continue
        voted = candidates[max(votes, key=votes.__getitem__)]
        matched[loop.header] = _tested_loop(function, blocks, loop, depth, catalog) or voted
    return matched


def _tested_loop(
    function: str, blocks: list, loop: Loop, depth: int, catalog: _Catalog
) -> _Place | None:
    """The source loop nested deeper than ``depth`` whose header line the exit test at the end
    of a latch is on (the compare and the conditional branch back), or None: when the compiler
    fully unrolls an outer source loop, the machine loops of its inner loops sit at a smaller
    depth than their source loops (NAS EP's batch loop at clang -O3: four copies of the inner
    loops, each one machine loop at depth 1), and the vote by depth would take them for the
    outer loop. An unconditional jump back proves nothing: a rotated outer loop's may carry
    an inner loop's line (PolyBench lu at gcc -O2)."""
    for latch in loop.latches:
        test = blocks[latch].instructions[-2:]
        if len(test) < 2 or test[-1].kind != "branch":
            continue  # an unconditional jump back carries any line (a rotated outer loop's)
        lines = {insn.line for insn in test}
        if len(lines) != 1:
            continue
        chain = catalog.chain(function, test[-1])
        deeper = [p for p in chain[depth:] if len(p.key) > 2 and p.key[2] == test[-1].line]
        if deeper:
            return deeper[-1]
    return None
