"""How often each place of the source runs, as the static report tells it.

The catalog maps an instruction's source line (and inlining chain) to the kernels of a
static report around it: loops, ``if`` blocks, ``?:`` arms and ``&&`` / ``||`` operands,
and gives the share of its context's runs that place runs (a probability, a parameter,
or :class:`UndefinedCount` with the reason). :mod:`perfcast.static.instruction_mix` counts
machine instructions with it.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import sympy

from perfcast.static.binary import BinaryInstruction
from perfcast.static.control_flow import Block, reachable
from perfcast.static.guard_text import condition_text, if_line, is_else, is_switch, line_text


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

    @property
    def varying(self) -> bool: ...

    @property
    def step(self) -> int | None: ...

    @property
    def always_entered(self) -> bool: ...


#: first element of the key of a machine loop that implements no source loop of the report
UNMATCHED = "no source loop"


#: key of the share of a block that copies code of every iteration onto one path
COPY = "copy of unconditional code"


#: what decides whether a branch block or condition block runs, and the line of its condition
DECIDED = re.compile(r":(if|cond|and|or)@(\d+)(:\d+)?:(then|else|right)$")


#: key of :meth:`Catalog.block_guard` for code on a source loop's lines
IN_LOOP = ("inside a source loop",)


def normal_path(path: str | None) -> str:
    """A source file's path with symbolic links resolved ("" for no path), for comparing
    the line table's files with the report's."""
    return os.path.realpath(path) if path else ""


class UndefinedCount(Exception):
    """An instruction's execution count is undefined (carries the reason)."""


def normalized(expression: sympy.Expr) -> sympy.Expr:
    """One plain Symbol per name, whatever assumptions the report attached."""
    expression = sympy.sympify(expression)
    return expression.xreplace({s: sympy.Symbol(s.name) for s in expression.free_symbols})


@dataclass(frozen=True)
class Place:
    """A source loop where it runs: in its own function, or inlined along a chain of calls.

    ``count`` is how often its body runs per program run there, or None with ``reason``.
    """

    key: tuple
    count: sympy.Expr | None
    reason: str | None

    def defined(self) -> sympy.Expr:
        if self.count is None:
            raise UndefinedCount(self.reason)
        return self.count


class Catalog:
    """The kernels of a static report, indexed for attribution, with cached source chains."""

    def __init__(
        self,
        kernels: list[StaticKernelLike],
        branches: Sequence[StaticKernelLike] = (),
        conditions: Sequence[StaticKernelLike] = (),
    ) -> None:
        self.files = {normal_path(k.file) for k in kernels}
        self.branches: dict[str, list[StaticKernelLike]] = defaultdict(list)
        # the cases of switch statements, for code outside loops only (block_guard)
        self.switches: dict[str, list[StaticKernelLike]] = defaultdict(list)
        for branch in branches:
            (self.switches if is_switch(branch.name) else self.branches)[branch.function].append(
                branch
            )
        # if arms, ?: arms and && / || operands by (function, line of their condition)
        self.decided_at: dict[tuple[str, int], list[StaticKernelLike]] = defaultdict(list)
        # ?: arms and && / || operands outside loops, by (function, line) (operand_share)
        self.decided_outside: dict[tuple[str, int], list[StaticKernelLike]] = defaultdict(list)
        for part in (*branches, *conditions):
            where = DECIDED.search(part.name)
            if where is None:
                continue
            at = (part.function, int(where.group(2)))
            outside = part.kind == "condition" and part.depth == 0
            (self.decided_outside if outside else self.decided_at)[at].append(part)
        self.branch_names = {b.name for b in branches}
        self._guards: dict[tuple, tuple[Guard, ...]] = {}
        self.inlined: set[str] = set()  # functions the binary inlines somewhere
        self.functions = {k.function: k for k in kernels if k.kind == "function"}
        self.functions.update({k.name: k for k in kernels if k.kind == "function"})
        self.loops: dict[str, list[StaticKernelLike]] = defaultdict(list)
        for kernel in kernels:
            if kernel.kind == "loop":
                self.loops[kernel.function].append(kernel)
        self.loop_named = {k.name: k for k in kernels if k.kind == "loop"}
        self._chains: dict[tuple, tuple[Place, ...]] = {}

    def function_count(self, name: str) -> sympy.Expr:
        kernel = self.functions[name]
        if kernel.count is None:
            raise UndefinedCount(f"count of function {name} undefined: {kernel.undef_reason}")
        return normalized(kernel.count)

    def loops_at(self, function: str, file: str | None, line: int) -> list[StaticKernelLike]:
        """Loops of a function whose line range holds the position, outermost first."""
        if not file or not line:
            return []
        path = normal_path(file)
        found = [
            k
            for k in self.loops.get(function, ())
            if normal_path(k.file) == path and k.line <= line <= k.end_line
        ]
        return sorted(found, key=lambda k: (k.line - k.end_line, k.depth))

    def chain(self, function: str, insn: BinaryInstruction) -> tuple[Place, ...]:
        """Source loops around an instruction, outermost first, through its inlined calls."""
        key = (function, insn.inlined, insn.file, insn.line)
        if key not in self._chains:
            self._chains[key], self._guards[key] = self._build_chain(function, insn)
        return self._chains[key]

    def guards(self, function: str, insn: BinaryInstruction) -> tuple[Guard, ...]:
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
        path = normal_path(file)
        found = [
            b
            for b in self.branches.get(function, ())
            if normal_path(b.file) == path
            and b.line <= line <= b.end_line
            and (inside is None or inside.line <= b.line <= b.end_line <= inside.end_line)
            and (not own_code or line > _condition_line(b))
        ]
        return max(found, key=lambda b: (b.line, -b.end_line), default=None)

    def _build_chain(
        self, function: str, insn: BinaryInstruction
    ) -> tuple[tuple[Place, ...], tuple[Guard, ...]]:
        names = [function] + [frame.callee for frame in insn.inlined]
        positions = [(f.call_file, f.call_line) for f in insn.inlined] + [(insn.file, insn.line)]
        chain: list[Place] = []
        guards: list[Guard] = []
        path: tuple = ()
        current = Place((), None, None)  # count of the innermost place so far
        try:
            current = Place((), self.function_count(function), None)
        except UndefinedCount as reason:
            current = Place((), None, str(reason))
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
                guards.append(Guard(len(chain), branch.name, _share(guarded, current)))
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

    def branch_share(self, function: str, insn: BinaryInstruction, loop_name: str) -> Place:
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
            return Place((), sympy.Integer(1), None)
        if inner.name != loop_name:
            # code of a loop nested in it, outside that loop's machine loop (its set-up, or
            # invariant code hoisted before it): the share of the if block of ``loop_name``
            # around the nested loop, when there is one
            inner = next((k for k in loops if k.name == loop_name), None)
            if inner is None:
                return Place((), sympy.Integer(1), None)
            branch = self._branch_around(function, insn, inner)
        else:
            branch = self.branch_at(function, insn.file, insn.line, inner, own_code=True)
        if branch is None:
            return Place((), sympy.Integer(1), None)  # key () : no block of the report
        if branch.count is None:
            return Place(
                (),
                None,
                f"code of block {branch.name} runs in some iterations of {loop_name} only, "
                f"and how many is undefined: {branch.undef_reason}",
            )
        if inner.count is None:
            return Place((), None, f"count of loop {loop_name} undefined: {inner.undef_reason}")
        return _share(
            Place((branch.name,), normalized(branch.count), None),
            Place((branch.name,), normalized(inner.count), None),
        )

    def _branch_around(
        self, function: str, insn: BinaryInstruction, loop: StaticKernelLike
    ) -> StaticKernelLike | None:
        """The innermost ``if`` block directly in source loop ``loop`` (in no loop nested in
        it) whose own code holds the instruction's line. On a nested loop's own line (its
        set-up and zero-trip test), or for a jump out of it (no code of its line), the block
        may start with that loop (an unbraced ``if (c)`` above ``for (...)``): the block's
        condition line is the one in ``loop``, when the nested loops' counts are defined."""
        nested = [k for k in self.loops_at(function, insn.file, insn.line) if k.depth > loop.depth]
        # with the nested loops' counts defined (never empty under the block's condition), a
        # compiler folding their zero-trip test into that condition changes no count
        on_loop_line = all(k.count is not None for k in nested) and (
            insn.kind == "jump" or any(k.line == insn.line for k in nested)
        )
        found = [
            b
            for b in self.branches.get(function, ())
            if normal_path(b.file) == normal_path(insn.file)
            and b.line <= insn.line <= b.end_line
            and loop.line <= b.line <= b.end_line <= loop.end_line
            and insn.line > _condition_line(b)
            and self.loops_at(function, b.file, _condition_line(b) if on_loop_line else b.line)[-1]
            is loop
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
    ) -> Place:
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
        control = jump_of(blocks[deciding]) if deciding is not None else None
        if control is None or not control.file or not control.line:
            return Place((), sympy.Integer(1), None)  # a jump the compiler made, no source
        if control.inlined:
            function = control.inlined[-1].callee
        if not any(
            normal_path(p.file) == normal_path(control.file)
            for p in self.decided_at.get((function, control.line), ())
        ):
            # no if, ?:, && or || on the deciding jump's line: a condition the compiler made
            # (the zero-trip test of a nested loop, a remainder's test), which holds in every
            # iteration when the loops run as the source counts them
            return Place((), sympy.Integer(1), None)
        if not any(i.file and i.line for i in block.instructions):
            return Place(
                (),
                None,
                f"block at {start:#x} runs in some iterations of {loop_name} only, and has no "
                f"source line: which outcome of the condition at line {control.line} it is "
                "cannot be told",
            )
        frames = control.inlined
        line = control.line
        lined = [i for i in block.instructions if i.file and i.line and i.inlined == frames]
        if len(lined) > 1 and lined[-1] is block.instructions[-1] and lined[-1].kind == "jump":
            # an arm's jump back to the code after the if carries that code's line: it is
            # not a copy of that code (gcc -O3's inlined dump loop in PolyBench durbin)
            lined.pop()
        own = {(normal_path(i.file), i.line) for i in lined}
        loops = self.loops_at(function, control.file, line)
        inner = loops[-1] if loops else None
        # the loop's own line: its update and test, which compilers copy into each arm
        header = inner.line if inner is not None else line
        if (
            inner is not None
            and inner.name == loop_name
            and header != line
            and own == {(normal_path(control.file), header)}
            and not any(i.inlined != frames for i in block.instructions if i.line)
            and block.instructions[-1].kind == "branch"
            and deciding is not None
        ):
            # the loop's update and exit test, copied onto a path after the condition
            copied = self._latch_copy_share(function, blocks, index, deciding, inner, control)
            if copied is not None:
                return copied
        elsewhere = sorted(
            n for f, n in own if f != normal_path(control.file) or n not in (line, header)
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
            return Place((COPY,), sympy.Integer(1), None)
        if elsewhere or mixed:
            return Place(
                (),
                None,
                f"block at {start:#x} runs in some iterations of {loop_name} only, under the "
                f"condition at line {line}, and no if block, ?: arm or && / || operand of the "
                f"report holds its code (line {elsewhere[0] if elsewhere else line}; code after "
                "a continue or break, or code the compiler moved)",
            )
        if inner is None or inner.name != loop_name:
            return Place(
                (),
                None,
                f"block at {start:#x} runs in some iterations of {loop_name} only, under the "
                f"condition at line {line}, which is not in that loop's body",
            )
        parts = [
            p
            for p in self.decided_at.get((function, line), ())
            if normal_path(p.file) == normal_path(control.file)
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
                return Place(
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
            return Place(
                (),
                None,
                f"block at {start:#x} runs in some iterations of {loop_name} only, under the "
                f"condition at line {line}, which holds no if, ?:, && or || of the report",
            )
        if inner.count is None:
            return Place((), None, f"count of loop {loop_name} undefined: {inner.undef_reason}")
        undefined = [p for p in parts if p.count is None]
        if undefined:
            return Place(
                (),
                None,
                f"block at {start:#x} runs in some iterations of {loop_name} only, as "
                f"{'one of ' if len(parts) > 1 else ''}{names}, and how many is undefined: "
                f"{undefined[0].undef_reason}",
            )
        counts = {normalized(p.count) for p in parts}
        if len(counts) > 1:
            return Place(
                (),
                None,
                f"block at {start:#x} runs in some iterations of {loop_name} only, as one of "
                f"{names} (the condition at line {line}), which run different numbers of times, "
                "and the binary does not tell which",
            )
        return _share(
            Place((parts[0].name,), counts.pop(), None),
            Place((parts[0].name,), normalized(inner.count), None),
        )

    def decides_operand_in(self, function: str, control: BinaryInstruction, branch: str) -> bool:
        """True when the conditional jump ``control`` is on the line of a ``?:``, ``&&`` or
        ``||`` whose operands lie in the ``if`` block named ``branch`` (the condition of an
        ``else if`` in that else block, or a ``?:`` in a then block): the block it decides
        is one of those operands, or code on their outcome, not the whole block's code."""
        if not control.file or not control.line:
            return False
        if control.inlined:
            function = control.inlined[-1].callee
        around = next((b for b in self.branches.get(function, ()) if b.name == branch), None)
        if around is None:
            return False
        path = normal_path(control.file)
        start = (around.line, int(getattr(around, "column", 0)))
        return any(
            p.kind == "condition"
            and normal_path(p.file) == path
            and normal_path(around.file) == path
            and start <= _span(p)[:2]
            and p.end_line <= around.end_line
            for p in (
                *self.decided_at.get((function, control.line), ()),
                *self.decided_outside.get((function, control.line), ()),
            )
        )

    def _latch_copy_share(
        self,
        function: str,
        blocks: list[Block],
        index: int,
        deciding: int,
        loop: StaticKernelLike,
        control: BinaryInstruction,
    ) -> Place | None:
        """The share of the iterations of ``loop`` in which a block runs that holds only the
        loop's own line and ends in its exit test (its update and test, which compilers copy
        onto the paths after a condition), decided by the jump ``control`` ending block
        ``deciding``: reached only from that jump whose other way is the then block of a
        one-armed ``if`` on that line, it runs when the then block does not; reached from
        several paths, which ones cannot be told (undefined); None otherwise."""
        start = blocks[index].start
        live = reachable(blocks)  # not the padding before the block, which falls into it
        predecessors = [b.index for b in blocks if index in b.successors and b.index in live]
        if len(predecessors) > 1:
            return Place(
                (),
                None,
                f"block at {start:#x} holds only the update and test of {loop.name}, which the "
                f"compiler copied onto the paths after the condition at line {control.line}, "
                "and is reached from several of them: which ones cannot be told (measure it "
                "with --profile)",
            )
        parts = [
            p
            for p in self.decided_at.get((function, control.line), ())
            if normal_path(p.file) == normal_path(control.file)
        ]
        others = [s for s in blocks[deciding].successors if s != index]
        then = parts[0] if len(parts) == 1 and parts[0].name.endswith(":then") else None
        arm_beside = len(others) == 1 and any(
            i.line == control.line and i.inlined == control.inlined and i.kind != "branch"
            for i in blocks[others[0]].instructions
        )
        if then is None or predecessors != [deciding] or not arm_beside:
            return None
        if then.count is None:
            return Place(
                (),
                None,
                f"block at {start:#x} runs in the iterations of {loop.name} that skip "
                f"{then.name}, and how many is undefined: {then.undef_reason}",
            )
        if loop.count is None:
            return Place((), None, f"count of loop {loop.name} undefined: {loop.undef_reason}")
        key = (f"{then.name}:skipped",)
        return _share(
            Place(key, normalized(loop.count - then.count), None),
            Place(key, normalized(loop.count), None),
        )

    def operand_share(
        self, function: str, blocks: list[Block], index: int, deciding: int, compound: bool
    ) -> Place | None:
        """The share of its function's runs in which a block outside loops runs that some
        calls skip, when the conditional jump deciding it (ending block ``deciding``) is on the
        line of a ``?:``, ``&&`` or ``||`` outside loops: that of the arm or operand whose
        source columns hold the block's code. Undefined naming the condition when that part's
        count is undefined, or when the block runs on the outcome of the whole condition
        (``compound``: reached from several of its tests, as the false exit of
        ``return a && b;``) or no part holds it. None when no such condition is on that line
        (or the code is inlined: the guards of its call sites count it)."""
        block = blocks[index]
        control = jump_of(blocks[deciding])
        if control is None or not control.file or not control.line or control.inlined:
            return None
        parts = [
            p
            for p in self.decided_outside.get((function, control.line), ())
            if normal_path(p.file) == normal_path(control.file)
        ]
        if not parts:
            return None
        line = control.line
        text = line_text(control.file, line)
        where = f"the condition at {control.file}:{line}" + (f" (`{text}`)" if text else "")
        held = None if compound else _held_by(block, parts, control, through_calls=True)
        if held is None and not compound:
            held = _other_arm(blocks, index, deciding, parts, control, through_calls=True)
        last = block.instructions[-1]
        tested = [p for p in parts if re.search(r":(and|or)@", p.name)]
        counts = {None if p.count is None else normalized(p.count) for p in tested}
        if held is None and not compound and last.kind == "branch" and last.line == line:
            # the block tests the condition itself (gcc puts a right operand's test at the
            # column of its && or ||): that operand, when the line's operands count alike
            held = tested[0] if len(counts) == 1 else None
        if held is None and not any(i.line for i in block.instructions):
            return Place(
                (parts[0].name,),
                None,
                f"block at {block.start:#x} runs in some calls of {function} only, under "
                f"{where}, and has no source line: which of its parts it is cannot be told "
                "(measure it with --profile)",
            )
        kernel = self.functions.get(function)
        if (
            held is None
            and kernel is not None
            and kernel.count is not None
            and all(
                p.count is not None and sympy.expand(p.count - kernel.count) == 0 for p in parts
            )
        ):
            # every part of the condition runs in every call (an if whose probability pragma
            # fixes its value evaluates each operand): so does the code on its outcome
            return Place((parts[0].name,), sympy.Integer(1), None)
        if held is None:
            names = ", ".join(dict.fromkeys(p.name for p in parts))
            return Place(
                (parts[0].name,),
                None,
                f"block at {block.start:#x} runs in some calls of {function} only, on the "
                f"outcome of {where} ({names}), which the report does not count: give its "
                "probability with `#pragma perfcast probability(...)` before the line, or "
                "measure it with --profile",
            )
        key = (held.name,)
        if held.count is None:
            return Place(
                key,
                None,
                f"block at {block.start:#x} runs in some calls of {function} only, as "
                f"{held.name} of {where}, and how often is undefined ({held.undef_reason}): "
                "give its probability with `#pragma perfcast probability(...)` before the "
                "line, or measure it with --profile",
            )
        if kernel is None or kernel.count is None:
            return Place(key, None, f"count of function {function} undefined")
        return _share(
            Place(key, normalized(held.count), None),
            Place(key, normalized(kernel.count), None),
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
    ) -> Place:
        """The share of the calls of inlined ``function`` in which a block of its code outside
        its loops runs: that of the one ``if`` block of ``function`` holding all its lines
        (its count per call of ``function``), or None naming that block or the lines."""
        found = {self.branch_at(function, file, n, None, own_code=True) for n in lines}
        branch = found.pop() if len(found) == 1 else None
        if branch is None or self.loops_at(function, file, branch.line):
            return Place(
                (),
                None,
                f"block at {start:#x} of {function}, inlined in {loop_name}, runs in some of "
                f"its calls only, and no one if block of {function} outside its loops holds "
                f"its code (lines {', '.join(map(str, lines))})",
            )
        callee = self.functions.get(function)
        if branch.count is None or callee is None or callee.count is None:
            return Place(
                (),
                None,
                f"block at {start:#x} runs in some calls of {function} (inlined in "
                f"{loop_name}) only, as code of block {branch.name}, and how many is "
                f"undefined: {branch.undef_reason or f'count of function {function} undefined'}",
            )
        return _share(
            Place((branch.name,), normalized(branch.count), None),
            Place((branch.name,), normalized(callee.count), None),
        )

    def source_condition(self, function: str, insn: BinaryInstruction) -> bool:
        """True when the instruction is on the line of an ``if`` condition of the source (in
        the function whose code it is): a branch there is the program's, not the compiler's."""
        if insn.inlined:
            function = insn.inlined[-1].callee
        if not insn.file or not insn.line:
            return False
        path = normal_path(insn.file)
        return any(
            normal_path(b.file) == path and insn.line == _condition_line(b)
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
        return sympy.cancel(normalized(loop.count) / normalized(enclosing.count))

    def after_if(self, function: str, insn: BinaryInstruction) -> bool:
        """True when an instruction comes from a line of the body of the function whose code
        it is (not its closing line, the epilogue) on or after the line of one of its ``if``
        statements (code an early return there may skip, or that a line table put on it)."""
        own = insn.inlined[-1].callee if insn.inlined else function
        kernel = self.functions.get(own)
        if kernel is None or not kernel.line < insn.line < kernel.end_line:
            return False
        path = normal_path(insn.file)
        return any(
            normal_path(b.file) == path and (if_line(b.name) or b.line) <= insn.line
            for b in self.branches.get(own, ())
        )

    def block_guard(self, function: str, block: Block) -> Place:
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
        Place
            Key ``(block name,)`` with the share, or None and a reason naming the guard (file,
            line, condition) when that block's count is undefined; key :data:`IN_LOOP` or
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
            path = normal_path(insn.file)
            holding = [
                b
                for b in [*self.branches.get(own, ()), *self.switches.get(own, ())]
                if normal_path(b.file) == path
                and (_first(b) <= position if loops else _first(b) < position)
                and position <= b.end_line
            ]
            branch = max(holding, key=lambda b: (b.line, -b.end_line), default=None)
            if branch is None:
                on_line = [
                    b
                    for b in self.branches.get(own, ())
                    if normal_path(b.file) == path
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
            return Place((condition_line[0].name,), None, _guard_reason(*condition_line))
        if best is None:
            return Place(IN_LOOP if in_loop else (), sympy.Integer(1), None)
        _, branch, insn, own = best
        key = (branch.name,)
        if branch.count is None:
            return Place(key, None, _guard_reason(branch, insn))
        kernel = self.functions.get(own)
        if kernel is None or kernel.count is None:
            return Place(key, None, f"count of function {own} undefined")
        share = _share(
            Place(key, normalized(branch.count), None),
            Place(key, normalized(kernel.count), None),
        ).defined()
        for guard in self.guards(function, insn):  # around the call sites it is inlined through
            if guard.share.count is None:
                return Place(key, None, guard.share.reason)
            share = share * guard.share.count
        return Place(key, sympy.expand(share), None)

    def entry_share(self, function: str, insn: BinaryInstruction, key: tuple) -> Place:
        """The share of the runs of the place enclosing the source loop ``key`` (its enclosing
        source loop, else the function) in which that loop is entered, seen from an
        instruction of the loop: the ``if`` blocks between the two, in the loop's own function
        and around the call sites it is inlined through. None with the reason when a block's
        count is undefined."""
        chain = self.chain(function, insn)
        index = next((i for i, place in enumerate(chain) if place.key == key), None)
        if index is None:
            return Place(key, sympy.Integer(1), None)
        share: sympy.Expr = sympy.Integer(1)
        for guard in self.guards(function, insn):
            if guard.loops == index:  # a call site's block between the enclosing loop and it
                if guard.share.count is None:
                    return Place(key, None, guard.share.reason)
                share = share * guard.share.count
        loop = self.loop_named.get(key[1]) if len(key) > 1 else None
        if loop is None:
            return Place(key, share, None)
        around = [k for k in self.loops_at(loop.function, loop.file, loop.line) if k is not loop]
        outer = around[-1] if around else None
        branch = self.branch_at(loop.function, loop.file, loop.line, outer)
        if branch is None:
            return Place(key, share, None)
        if branch.count is None:
            return Place(
                key,
                None,
                f"source loop {loop.name} is entered only in block {branch.name} (when "
                f"{_guard_condition(branch)}), whose count is undefined: {branch.undef_reason}",
            )
        enclosing = outer if outer is not None else self.functions.get(loop.function)
        if enclosing is None or enclosing.count is None:
            reason = f"count of the region around source loop {loop.name} undefined"
            return Place(key, None, reason)
        ratio = _share(
            Place(key, normalized(branch.count), None),
            Place(key, normalized(enclosing.count), None),
        )
        return Place(key, sympy.expand(share * ratio.defined()), None)


def _first(branch: StaticKernelLike) -> int:
    """The line after which code is inside an if block for :meth:`Catalog.block_guard`: the
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
class Guard:
    """An ``if`` block around a call site that inlined code comes from.

    ``loops`` is how many source loops (of the chain) lie outside it; ``share`` is the part of
    the enclosing place's runs in which the block runs (None with the reason in ``place``).
    """

    loops: int
    name: str
    share: Place


def _share(guarded: Place, enclosing: Place) -> Place:
    """The ratio of a block's count to its enclosing place's count (0 when neither runs)."""
    if guarded.count is None:
        return guarded
    if enclosing.count is None:
        return enclosing
    if guarded.count == 0 or enclosing.count == 0:
        return Place(guarded.key, sympy.Integer(0), None)
    ratio = sympy.cancel(guarded.count / enclosing.count)
    if enclosing.count.has(sympy.Piecewise):
        # A count that is 0 for some parameter values: there the share is 0, not 0/0.
        ratio = sympy.Piecewise((ratio, sympy.Ne(enclosing.count, 0)), (0, True))
    return Place(guarded.key, ratio, None)


def _place(
    path: tuple, loop: StaticKernelLike, callee: StaticKernelLike | None, entry: Place
) -> Place:
    """A loop's count where it runs; an inlined copy runs per call as often as the callee's
    loop runs per call of the callee, times the calls at this site (``entry``)."""
    key = (path, loop.name, loop.line)
    if loop.count is None:
        what = "block" if loop.kind == "branch" else "loop"
        return Place(key, None, f"count of {what} {loop.name} undefined: {loop.undef_reason}")
    count = normalized(loop.count)
    if callee is None:
        return Place(key, count, None)
    if callee.count is None or entry.count is None:
        reason = entry.reason or f"count of function {callee.name} undefined"
        return Place(key, None, reason)
    if callee.count == 0 or entry.count == 0:
        return Place(key, sympy.Integer(0), None)  # never called here: never runs (no 0/0)
    per_call = sympy.cancel(count / normalized(callee.count))
    if sympy.fraction(sympy.together(per_call))[1].free_symbols:
        return Place(
            key,
            None,
            f"loop {loop.name} of {callee.name}, inlined, runs a number of times per call that "
            "depends on the caller",
        )
    return Place(key, sympy.expand(per_call * entry.count), None)


def _held_by(
    block: Block,
    parts: list[StaticKernelLike],
    control: BinaryInstruction,
    through_calls: bool = False,
) -> StaticKernelLike | None:
    """The operand of a ``?:``, ``&&`` or ``||`` whose source columns hold the block's code:
    for each instruction with a column, the innermost operand holding it; the one of those
    that holds the others (an operand whose nested condition the compiler folded into it).
    With ``through_calls``, code inlined from a call of the operand stands at that call's
    line and column. None when no column falls in an operand or the operands found are
    disjoint."""
    spans = {id(p): _span(p) for p in parts if _span(p)[3]}
    found = []
    depth = len(control.inlined)
    for insn in block.instructions:
        file, line, column = insn.file, insn.line, insn.column
        if through_calls and len(insn.inlined) > depth and insn.inlined[:depth] == control.inlined:
            call = insn.inlined[depth]
            file, line, column = call.call_file, call.call_line, call.call_column
        elif insn.inlined != control.inlined:
            continue
        if not column or normal_path(file) != normal_path(control.file):
            continue
        position = (line, column)
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
    block (``} else {``); the line before an unbraced else block that starts on a line of its
    own (``else`` above ``stmt;``), or before one starting with ``else if`` (the inner
    condition's code runs in the else block), whose every line is its own code."""
    where = DECIDED.search(branch.name)
    if where is not None and where.group(4) == "then":
        return min(int(where.group(2)), branch.line)
    if is_else(branch.name):
        text = line_text(getattr(branch, "file", "") or "", branch.line) or ""
        if not re.search(r"\belse\b|^[{}]", text) or re.search(r"\belse\s+if\b", text):
            # also ``} else if (c) {``: c's code runs whenever the else block does
            return branch.line - 1
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
    through_calls: bool = False,
) -> StaticKernelLike | None:
    """The arm of a ``?:`` a block is, when the other way from the deciding jump starts with
    code the columns place in the other arm of that ``?:`` (``through_calls`` as for
    :func:`_held_by`)."""
    others = [s for s in blocks[deciding].successors if s != index]
    if len(others) != 1 or len(blocks[deciding].successors) != 2:
        return None
    held = _held_by(blocks[others[0]], parts, control, through_calls)
    if held is None or not held.name.endswith((":then", ":else")):
        return None
    wanted = held.name[: -len("then")] + ("else" if held.name.endswith(":then") else "then")
    return next((p for p in parts if p.name == wanted), None)


def jump_of(block: Block) -> BinaryInstruction | None:
    """The conditional jump ending a block, with the source line of the block's last lined
    instruction when the jump has none."""
    last = block.instructions[-1]
    if last.line:
        return last
    lined = [i for i in block.instructions if i.file and i.line]
    return lined[-1] if lined else None
