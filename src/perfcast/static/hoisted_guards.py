"""The guard of a guarded call the compiler moved out of its loop (issue 20, verify20e J17).

clang -O3 moves the inlined body of a loop-invariant call such as ``if (check) mmul(3, 3, 3);``
out of the loop around it and runs one copy under a test it made (``rpt > 0 && check != 0``).
That copy has no source line, so the share of its ``if`` block cannot come from the lines. The
test before it can still name the guard: when the register it compares holds a source variable
(DWARF location lists, :mod:`perfcast.static.held_variables`) that the condition of an ``if``
in one of the function's loops tests, and that ``if`` block calls a function of the sources,
the copy runs in a call when that guard holds and the loop takes an iteration: the guard's
probability (its block's count over its loop's) times ``Min(1, iterations per call)``. Several
such guards: the largest of their probabilities, said in a note. None: the count is undefined,
naming the block and the guards it may come from (a function without guarded calls in loops
keeps the count in every call with a warning: :mod:`perfcast.static.instruction_mix`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from perfcast.static.binary import BinaryInstruction
from perfcast.static.guard_text import condition_text, if_line, is_else, is_switch, line_text
from perfcast.static.held_variables import HeldValue, tested_variables
from perfcast.static.source_shares import (
    Catalog,
    Place,
    StaticKernelLike,
    UndefinedCount,
    normal_path,
    normalized,
)


@dataclass(frozen=True)
class HoistedGuard:
    """The share of its function's calls a moved block runs in, and the note saying why."""

    share: sympy.Expr
    note: str


def hoisted_guard(
    function: str,
    instructions: Sequence[BinaryInstruction],
    jump: int,
    nonzero_side: bool,
    held: Sequence[HeldValue],
    catalog: Catalog,
    start: int,
    unlined: bool,
) -> HoistedGuard | None:
    """The guard of the block at address ``start`` of ``function`` (outside machine loops),
    which the conditional jump at index ``jump`` of ``instructions`` (the function's code)
    decides; the block runs when the value the jump's ``test`` compares with zero is nonzero
    (``nonzero_side``) or zero.

    A block without any source line (``unlined``) in a function with guarded calls in loops
    raises when no guard ties to it; otherwise a block no guard ties to gives None (a loop's
    own set-up, or code no guarded call can have left).

    Raises
    ------
    UndefinedCount
        When no guard ties to the test of an ``unlined`` block, or a tied guard's count is
        undefined.
    """
    variables = sorted(tested_variables(instructions, jump, held))
    zero_test = _zero_test(instructions, jump)
    calls = _guarded_calls(function, catalog)
    guards = [
        (branch, loop)
        for branch, loop in calls
        if zero_test
        and any(_runs_when(branch, variable, loop) == nonzero_side for variable in variables)
    ]
    moved = (
        f"the block at {start:#x} runs in some calls only, outside the loops, with "
        f"{'no source line' if unlined else 'only the line of a loop'} (code the compiler "
        "moved, such as a guarded call's inlined body hoisted out of its loop)"
    )
    if not guards:
        if not unlined or not calls:
            return None  # a loop's own set-up, or no guarded call it can come from
        tested = ", ".join(variables) if variables else "no source variable the binary names"
        candidates = ", ".join(_where(branch) for branch, _ in calls)
        raise UndefinedCount(
            f"{moved}; it may be the code of a guarded call of {candidates}, but the test "
            f"deciding it compares {tested}, which ties it to none of those guards, so whether "
            "and how often it runs is unknown (a profiled run measures it)"
        )
    shares = [_probability(branch, loop, function, catalog) for branch, loop in guards]
    share = shares[0] if len(shares) == 1 else sympy.Max(*shares)
    named = ", ".join(_where(branch) for branch, _ in guards)
    largest = " (the largest of their probabilities)" if len(shares) > 1 else ""
    return HoistedGuard(
        sympy.expand(share),
        f"{moved}: the test deciding it compares {', '.join(variables)} with zero, as the "
        f"guard of {named} does; counted with that guard's probability{largest} in the calls "
        "whose loop takes an iteration",
    )


def _zero_test(instructions: Sequence[BinaryInstruction], jump: int) -> bool:
    """Whether the jump at ``jump`` is ``je`` / ``jne`` after ``test r, r`` (a value compared
    with zero)."""
    if jump < 1 or instructions[jump].mnemonic not in ("je", "jne"):
        return False
    compare = instructions[jump - 1]
    operands = [o.strip() for o in compare.operands.split(",")]
    return compare.mnemonic == "test" and len(operands) == 2 and operands[0] == operands[1]


def _runs_when(branch: StaticKernelLike, variable: str, loop: StaticKernelLike) -> bool | None:
    """True when the if block runs exactly when ``variable`` is nonzero, False when exactly when
    it is zero (``if (v)``, ``if (v != 0)``, ``if (!v)``, ``if (v == 0)``, then or else
    block), None otherwise or when the variable is one of its loop's (on the loop's line)."""
    if re.search(rf"\b{re.escape(variable)}\b", line_text(loop.file, loop.line) or ""):
        return None
    text = condition_text(branch.file, if_line(branch.name) or branch.line) or ""
    plain = text.replace(" ", "")
    while plain.startswith("(") and plain.endswith(")"):
        plain = plain[1:-1]
    if plain in (variable, f"{variable}!=0", f"0!={variable}"):
        nonzero = True
    elif plain in (f"!{variable}", f"{variable}==0", f"0=={variable}"):
        nonzero = False
    else:
        return None
    return nonzero != is_else(branch.name)


def _guarded_calls(
    function: str, catalog: Catalog
) -> list[tuple[StaticKernelLike, StaticKernelLike]]:
    """If blocks in loops of ``function`` whose lines call a function of the sources, each with
    the innermost loop around it."""
    callees = {name for name in catalog.functions if name != function}
    call = re.compile(r"\b(" + "|".join(map(re.escape, sorted(callees))) + r")\s*\(")
    found = []
    for branch in catalog.branches.get(function, ()):
        if is_switch(branch.name) or not callees:
            continue
        loops = [
            loop
            for loop in catalog.loops.get(function, ())
            if normal_path(loop.file) == normal_path(branch.file)
            and loop.line <= branch.line <= branch.end_line <= loop.end_line
        ]
        if not loops:
            continue
        text = "\n".join(
            line_text(branch.file, line) or "" for line in range(branch.line, branch.end_line + 1)
        )
        if call.search(text):
            found.append((branch, max(loops, key=lambda loop: (loop.line, -loop.end_line))))
    return found


def _where(branch: StaticKernelLike) -> str:
    line = if_line(branch.name) or branch.line
    text = condition_text(branch.file, line)
    return f"{branch.name} (`if ({text})` at {branch.file}:{line})"


def _probability(
    branch: StaticKernelLike, loop: StaticKernelLike, function: str, catalog: Catalog
) -> sympy.Expr:
    """The guard's probability per iteration of its loop, times whether the loop takes an
    iteration in a call (``Min(1, iterations per call)``)."""
    for kernel in (branch, loop):
        if kernel.count is None:
            raise UndefinedCount(
                f"the block without a source line is tied to the guard of {_where(branch)}, "
                f"whose count is undefined ({kernel.undef_reason}): give its probability with "
                "`#pragma perfcast probability(...)` before the if, or measure it in a profiled run"
            )
    loop_count = normalized(loop.count)
    if loop_count == 0:
        return sympy.Integer(0)
    probability = sympy.cancel(normalized(branch.count) / loop_count)
    calls = Place((), catalog.function_count(function), None).defined()
    if calls == 0:
        return sympy.Integer(0)
    per_call = sympy.cancel(loop_count / calls)
    return probability * sympy.Min(1, per_call)
