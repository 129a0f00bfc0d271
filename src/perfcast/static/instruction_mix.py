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
  more than the body: ``count + entries``, where entries is the count of the enclosing context.

``attribution="line"`` uses only the line table: each instruction counts as often as the innermost
source kernel whose line range holds its line. It is the naive reading (a loop header's line is
inside the loop's range, so its initialization and guard are over-counted) and serves to measure
what the machine-loop correction buys.

Approximations: a loop is assumed to be entered once per iteration of its enclosing context, and
code under a condition (an ``if`` inside a loop, an error branch in ``main``) is counted as if it
always ran. Loops the compiler versioned, vectorized with a remainder loop, or replaced by library
calls do not match their source counts.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import sympy

from perfcast.errors import InputError
from perfcast.static.binary import Binary, BinaryFunction, BinaryInstruction
from perfcast.static.control_flow import Loop, basic_blocks, natural_loops
from perfcast.static.x86_categories import CATEGORIES

COUNT_KEYS: tuple[str, ...] = (*CATEGORIES, "total", "reads", "writes")
"""Keys of a function's counts: the categories, their total, and memory-operand counts."""


class StaticKernelLike(Protocol):
    """What the instruction mix needs of a kernel of a static report (loop or function)."""

    name: str
    kind: str
    file: str
    line: int
    end_line: int
    depth: int
    function: str
    count: sympy.Expr | None
    undef_reason: str | None


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
    """

    function: str
    counts: dict[str, sympy.Expr] | None
    undef_reason: str | None
    instructions: int

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
) -> InstructionMix:
    """Parametric instruction counts per function and category.

    Parameters
    ----------
    binary : Binary
        From :func:`perfcast.static.binary.read_binary`.
    report : StaticReportLike
        Static report of the sources the binary was built from (kernels with symbolic counts).
    parameters : sequence of str
        Parameter names, in the order generated code takes them; defaults to the symbols found.
    attribution : {"cfg", "line"}
        How instructions are mapped to kernels (module documentation).

    Returns
    -------
    InstructionMix
    """
    if attribution not in ("cfg", "line"):
        raise InputError(f"unknown attribution {attribution!r}: use 'cfg' or 'line'")
    kernels = list(report.kernels)
    source_files = {_normal(k.file) for k in kernels}
    functions_by_name = {k.name: k for k in kernels if k.kind == "function"}
    mixes, unmodeled = {}, {}
    for function in binary.functions.values():
        if not any(_normal(i.file) in source_files for i in function.instructions if i.file):
            continue
        kernel = functions_by_name.get(function.name)
        if kernel is None:
            unmodeled[function.name] = "no function kernel in the static report"
            continue
        loops = [
            k
            for k in kernels
            if k.kind == "loop" and k.function == function.name and _normal(k.file) in source_files
        ]
        mixes[function.name] = _function_mix(function, kernel, loops, attribution)
    symbols = sorted(
        {
            s.name
            for m in mixes.values()
            if m.counts
            for e in m.counts.values()
            for s in e.free_symbols
        }
    )
    names = tuple(parameters) or tuple(symbols)
    unknown = sorted(set(symbols) - set(names))
    if unknown:
        raise InputError(f"counts use symbols that are not parameters: {', '.join(unknown)}")
    return InstructionMix(str(binary.path), names, mixes, unmodeled, attribution)


def _normal(path: str | None) -> str:
    return os.path.realpath(path) if path else ""


class _Undefined(Exception):
    """An instruction's execution count is undefined (carries the reason)."""


def _function_mix(
    function: BinaryFunction,
    kernel: StaticKernelLike,
    loops: list[StaticKernelLike],
    attribution: str,
) -> FunctionMix:
    try:
        if kernel.count is None:
            raise _Undefined(f"function count undefined: {kernel.undef_reason}")
        if attribution == "line":
            counted = [(i, _line_count(i, kernel, loops)) for i in function.instructions]
        else:
            counted = _cfg_counts(function, kernel, loops)
    except _Undefined as reason:
        return FunctionMix(function.name, None, str(reason), len(function.instructions))
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
    return FunctionMix(function.name, counts, None, len(function.instructions))


def _source_chain(insn: BinaryInstruction, loops: list[StaticKernelLike]) -> list[StaticKernelLike]:
    """Source loops whose line range holds the instruction's line, outermost first."""
    if not insn.file or not insn.line:
        return []
    path = _normal(insn.file)
    chain = [k for k in loops if _normal(k.file) == path and k.line <= insn.line <= k.end_line]
    return sorted(chain, key=lambda k: (k.line - k.end_line, k.depth))


def _defined(kernel: StaticKernelLike) -> sympy.Expr:
    if kernel.count is None:
        raise _Undefined(f"count of {kernel.kind} {kernel.name} undefined: {kernel.undef_reason}")
    count = sympy.sympify(kernel.count)
    # one plain Symbol per name, whatever assumptions the report attached
    return count.xreplace({s: sympy.Symbol(s.name) for s in count.free_symbols})


def _line_count(
    insn: BinaryInstruction, function: StaticKernelLike, loops: list[StaticKernelLike]
) -> sympy.Expr:
    chain = _source_chain(insn, loops)
    return _defined(chain[-1] if chain else function)


def _cfg_counts(
    function: BinaryFunction, kernel: StaticKernelLike, loops: list[StaticKernelLike]
) -> list[tuple[BinaryInstruction, sympy.Expr]]:
    blocks = basic_blocks(function)
    machine_loops = natural_loops(blocks)
    # machine loops around each block, outermost first (natural_loops sorts outer loops first)
    around: dict[int, list[Loop]] = defaultdict(list)
    for loop in machine_loops:
        for index in loop.blocks:
            around[index].append(loop)
    source_of = _match_loops(blocks, machine_loops, around, loops)
    function_count = _defined(kernel)
    counted = []
    for block in blocks:
        chain = around[block.index]
        if not chain:
            count = function_count
        else:
            innermost = chain[-1]
            count = _defined(source_of[innermost.header])
            if innermost.exits_at_header and block.index == innermost.header:
                outer = _defined(source_of[chain[-2].header]) if len(chain) > 1 else function_count
                count = count + outer
        counted.extend((insn, count) for insn in block.instructions)
    return counted


def _match_loops(
    blocks: list,
    machine_loops: list[Loop],
    around: dict[int, list[Loop]],
    loops: list[StaticKernelLike],
) -> dict[int, StaticKernelLike]:
    """Machine loop header -> the source loop it implements (vote of its own instructions)."""
    matched = {}
    for loop in machine_loops:
        depth = sum(1 for other in around[loop.header] if other.blocks >= loop.blocks)
        votes: dict[int, int] = defaultdict(int)
        candidates = {}
        for index in loop.blocks:
            if around[index][-1] is not loop:
                continue  # belongs to a nested machine loop
            for insn in blocks[index].instructions:
                chain = _source_chain(insn, loops)
                if len(chain) >= depth:
                    key = id(chain[depth - 1])
                    votes[key] += 1
                    candidates[key] = chain[depth - 1]
        if not votes:
            address = blocks[loop.header].start
            raise _Undefined(
                f"machine loop at {address:#x} has no source loop at depth {depth} "
                "(the static report misses a loop, or the compiler restructured it)"
            )
        matched[loop.header] = candidates[max(votes, key=votes.__getitem__)]
    return matched
