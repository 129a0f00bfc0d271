"""Trip counts of machine loops read from their induction register and exit test.

A compiler that vectorizes or unrolls a loop runs its machine loop fewer times than the source
loop: a loop over ``100000`` doubles vectorized with SSE2 steps a byte offset by 16 up to
``800000`` and runs 50000 times. :func:`induction` finds, for a machine loop with a single exit
at a latch (or at the header of a loop whose only latch jumps back unconditionally), the
register the exit test compares, its one update in the loop (``add``, ``sub``, ``inc``,
``dec``, ``lea r, [r + k]``), its value on entry and the bound it is compared with,
as far as the definitions reaching the loop set them to constants (``xor r, r``,
``mov r, imm``, ``lea r, [rip + k]``, ``lea r, [s + k]``, ``mov r, s``, ``add r, k``).
:meth:`Induction.elements_per_iteration` turns the register's step into source iterations per
machine iteration when the register indexes or points into an array whose element size the
loop's packed instructions tell.

Anything else (a bound held in memory, a register a call may change, two exits) gives None: the
caller then keeps the source loop's count or reports the count undefined, never a guess.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from perfcast.static.binary import BinaryInstruction
from perfcast.static.control_flow import Block, Loop

_WIDE = {
    **{f"e{r}": f"r{r}" for r in ("ax", "bx", "cx", "dx", "si", "di", "bp", "sp")},
    **{f"r{n}d": f"r{n}" for n in range(8, 16)},
}
_CALLER_SAVED = frozenset({"rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"})
_NO_DESTINATION = re.compile(r"^(cmp|test|v?u?comis[sd]|bt|push|j\w+|call|ret|nop\w*|endbr64)$")
_IMPLICIT = {
    "mul": {"rax", "rdx"},
    "div": {"rax", "rdx"},
    "idiv": {"rax", "rdx"},
    "cqo": {"rdx"},
    "cdq": {"rdx"},
    "cdqe": {"rax"},
    "cwde": {"rax"},
    "rdtsc": {"rax", "rdx"},
    "cpuid": {"rax", "rbx", "rcx", "rdx"},
    "syscall": {"rax", "rcx", "r11"},
}
_INTEGER = re.compile(r"^-?(0x[0-9a-f]+|\d+)$")
_MEMORY = re.compile(r"\[([^\]]*)\]")
_SIZED_MEMORY = re.compile(r"(\w+) ptr \[([^\]]*)\]")
_LEA_OFFSET = re.compile(r"(?:\w+ ptr )?\[(\w+) ([+-]) (0x[0-9a-f]+|\d+)\]")
_OPERAND_BYTES = {
    "byte": 1,
    "word": 2,
    "dword": 4,
    "qword": 8,
    "xmmword": 16,
    "ymmword": 32,
    "zmmword": 64,
}
_PACKED_SIZE = (
    (re.compile(r"^v?\w*pd$"), 8),
    (re.compile(r"^v?\w*ps$"), 4),
    (re.compile(r"^v?p\w*q$"), 8),
    (re.compile(r"^v?p\w*d$"), 4),
    (re.compile(r"^v?p\w*w$"), 2),
    (re.compile(r"^v?p\w*b$"), 1),
)
_VECTOR_REGISTER = re.compile(r"[xyz]mm\d+")
_STACK = re.compile(r"\[(rsp|rbp|rip)\b")
_PACKED_MOVE = re.compile(r"^v?mov(up[sd]|ap[sd]|dq[au]\w*)$")
_PACKED_CONVERSION = re.compile(r"^v?cvt\w*(p[sdh]|dq|qq|udq)2\w+$")
_PACKED_ARITHMETIC = re.compile(
    r"^v?(f?n?m?(add|sub|mul|div|sqrt|min|max|hadd|hsub)\w*p[sd]|fn?m(add|sub)\w*p[sd]|"
    r"p(add|sub|mull|mulh|mulu|madd|min|max|avg|abs)\w*)$"
)
_STAY = {
    # condition code -> (how the updated register compares with the bound while the loop goes on)
    "jne": "!=",
    "jnz": "!=",
    "jb": "<u",
    "jl": "<",
    "jbe": "<=u",
    "jle": "<=",
    "ja": ">u",
    "jg": ">",
    "jae": ">=u",
    "jge": ">=",
}
_NEGATED = {
    "je": "!=",
    "jz": "!=",
    "jae": "<u",
    "jge": "<",
    "ja": "<=u",
    "jg": "<=",
    "jbe": ">u",
    "jle": ">",
    "jb": ">=u",
    "jl": ">=",
}
_SWAPPED = {"!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_LARGEST_TRIP = 10**13
_FULL_REGISTER = re.compile(r"r([abcd]x|[sd]i|[bs]p|\d+)")


@dataclass(frozen=True)
class Induction:
    """The induction register of a machine loop and what the binary says of its range.

    Attributes
    ----------
    register : str
        64-bit name of the register the exit test compares.
    step : int
        What one iteration adds to it.
    start, bound : int or None
        Its value on entry and the value it is compared with, when straight-line code sets
        them to constants.
    stay : str
        The comparison of the updated register with the bound under which the loop goes on
        (``!=``, ``<``, ``<=``, ``>``, ``>=``; unsigned ones end in ``u``).
    scale : int or None
        The scale the register has in the loop's memory operands (1 for a byte offset or a
        pointer, 8 for an index into doubles), None when it addresses no memory.
    element_size : int or None
        Bytes per element of the loop's packed SIMD instructions (8 for ``mulpd``), None when
        it has none.
    several_per_pass : bool
        Whether the register addresses two or more elements of one array within one step
        (``[rcx + rax]`` and ``[rcx + rax + 8]`` with a step of 32: unrolled copies of the
        body, or fields of one struct), not one element per array (a column walk).
    touched : int or None
        Bytes per pass the loop's memory operands reach through the register used as a byte
        offset or pointer (the union of their ranges), None when some size is not shown.
    distance : int or None
        ``bound - start`` on entry when the two are not constants but differ by one on every
        path (a row pointer and its end, both moved by an enclosing loop), else None.
    strided : bool
        Whether the register is an element index (scale above 1) stepping by more than one
        element in scalar code (no packed SIMD) whose every address through it reaches one
        element per pass: a walk down a column, one source iteration per pass.
    """

    register: str
    step: int
    start: int | None
    bound: int | None
    stay: str
    scale: int | None
    element_size: int | None
    several_per_pass: bool = False
    touched: int | None = None
    distance: int | None = None
    strided: bool = False

    def trip_count(self) -> int | None:
        """Iterations per entry when start and bound are constants or differ by a constant,
        else None.

        Constants are 64-bit values: ``0xfffffffffffffffe`` is -2 (clang -O1 starts a counter
        there and leaves on an unsigned ``jb``: its first update wraps it to 0). Under an
        unsigned test a start below 0 that is still below 0 after the first update leaves at
        once; a range across the sign otherwise is not read.
        """
        comparison = self.stay.rstrip("u")
        step = self.step
        if step == 0:
            return None
        if self.start is not None and self.bound is not None:
            start, bound = _signed_64(self.start), _signed_64(self.bound)
            if self.stay.endswith("u") and (bound < 0 or (start < 0 and step < 0)):
                return None
            if self.stay.endswith("u") and start < 0 and start + step < 0:
                return 1 if comparison in ("<", "<=") else None
            distance = bound - start
        elif self.distance is not None:
            distance = self.distance
        else:
            return None
        if comparison == "!=":
            if distance % step or distance // step < 1:
                return None
            trips = distance // step
        elif comparison in ("<", "<="):
            if step < 0:
                return None
            reach = distance + (1 if comparison == "<=" else 0)
            trips = max(1, -(-reach // step))
        else:
            if step > 0:
                return None
            reach = -distance + (1 if comparison == ">=" else 0)
            trips = max(1, -(-reach // -step))
        return trips if 1 <= trips <= _LARGEST_TRIP else None

    def elements_per_iteration(self) -> int | None:
        """Source iterations (unit-stride elements) one machine iteration covers, or None.

        A register addressing memory with scale 1 is a byte offset or pointer: its step over
        the element size; with a larger scale it is an element index: its step.
        """
        if self.scale is None or self.step <= 0:
            return None
        if self.scale > 1:
            return 1 if self.strided else self.step
        if self.element_size is None or self.step % self.element_size:
            return None
        if self.touched is not None and self.touched < self.step:
            if self.several_per_pass:
                # it strides over data it does not read and reaches two places of one array
                # in a pass: rows of this loop packed together (gcc unrolling a column walk
                # by 2 into one register) or an enclosing loop's lanes with a neighbour's
                # element; the binary does not tell which
                return None
            # the pointer strides over data it does not read: a row per pass, the packed
            # lanes being iterations of an enclosing loop (outer-loop vectorization)
            return 1
        return self.step // self.element_size


def _signed_64(value: int) -> int:
    """A 64-bit register's value read as signed (``2**64 - 2`` is -2)."""
    value %= 1 << 64
    return value - (1 << 64) if value >= 1 << 63 else value


def wide(register: str) -> str:
    """The 64-bit name of a general-purpose register (``eax`` -> ``rax``)."""
    return _WIDE.get(register, register)


def _operands(insn: BinaryInstruction) -> list[str]:
    return [part.strip() for part in insn.operands.split(",")] if insn.operands else []


def written(insn: BinaryInstruction) -> set[str]:
    """General-purpose registers (64-bit names) an instruction may change."""
    if insn.kind in ("call", "noreturn"):
        return set(_CALLER_SAVED)
    changed = set(_IMPLICIT.get(insn.mnemonic, ()))
    operands = _operands(insn)
    if insn.mnemonic in ("xchg", "xadd", "cmpxchg"):
        changed |= {wide(o) for o in operands if "[" not in o}
    elif operands and "[" not in operands[0] and not _NO_DESTINATION.match(insn.mnemonic):
        changed.add(wide(operands[0]))
    string = insn.mnemonic.startswith(("rep", "movs", "stos", "lods", "cmps", "scas"))
    if string and (not operands or any(":[" in o or "[rsi]" in o for o in operands)):
        # a string instruction (not the SSE movsd, which names xmm registers)
        changed |= {"rcx", "rsi", "rdi"}
    return changed


def _integer(text: str) -> int | None:
    return int(text, 0) if _INTEGER.match(text) else None


def _update_step(insn: BinaryInstruction, register: str) -> int | None:
    """The constant an update adds to the register, None when it is no such update."""
    operands = _operands(insn)
    if not operands or wide(operands[0]) != register:
        return None
    if insn.mnemonic in ("inc", "dec") and len(operands) == 1:
        return 1 if insn.mnemonic == "inc" else -1
    if insn.mnemonic in ("add", "sub") and len(operands) == 2:
        amount = _integer(operands[1])
        if amount is None:
            return None
        return amount if insn.mnemonic == "add" else -amount
    if insn.mnemonic == "lea" and len(operands) == 2:
        match = re.fullmatch(r"(?:\w+ ptr )?\[(\w+) ([+-]) (0x[0-9a-f]+|\d+)\]", operands[1])
        if match and wide(match.group(1)) == register:
            amount = int(match.group(3), 0)
            return amount if match.group(2) == "+" else -amount
    return None


def _value_before(
    register: str, blocks: list[Block], block: int, position: int, loop: Loop, depth: int = 0
) -> int | None:
    """The constant the register holds before instruction ``position`` of ``block``, or None.

    Walks back to the definitions that reach the position: every path must give the same
    constant (a path around an enclosing loop that does not change the register adds nothing;
    the loop's own back edges are left out at its header). None when a definition is not a
    constant, a path reaches the function's entry without one, or the search grows too long.
    """
    found = _reaching(register, blocks, block, position, loop, depth, set())
    return found if isinstance(found, int) else None


_CYCLE = "cycle"  # a path that only comes back to blocks already searched: no definition on it


def _agreed(values: set[int]) -> int | str | None:
    """What every way into a block gives: the one value they agree on, :data:`_CYCLE` when no
    way gives one, None when they differ."""
    if not values:
        return _CYCLE
    return values.pop() if len(values) == 1 else None


def _reaching(
    register: str,
    blocks: list[Block],
    block: int,
    position: int,
    loop: Loop,
    depth: int,
    seen: set[int],
) -> int | str | None:
    if depth > 200 or len(seen) > 256:
        return None
    instructions = blocks[block].instructions
    for index in range(position - 1, -1, -1):
        insn = instructions[index]
        if register in written(insn):
            return _evaluate(insn, register, blocks, block, index, loop, depth + 1)
    if position == len(instructions):
        # searched whole; a block searched from a position inside it is searched again from
        # its end when a path comes back to it (its tail may change the register)
        seen.add(block)
    predecessors = [
        p for p in blocks[block].predecessors if not (block == loop.header and p in loop.blocks)
    ]
    if not predecessors:
        return None  # the function's entry: the register holds an argument or garbage
    values: set[int] = set()
    for previous in predecessors:
        if previous in seen:
            continue
        end = len(blocks[previous].instructions)
        equal = _equal_on_edge(blocks, previous, block) if previous not in loop.blocks else None
        if equal is not None and register in equal:
            # left through an equality test: the register holds what it was compared with
            # (when that is a constant; else its own definitions are searched)
            other = equal[1] if equal[0] == register else equal[0]
            compared = _integer(other)
            if compared is None:
                compared = _value_before(other, blocks, previous, end, loop, depth + 1)
            if compared is not None:
                values.add(compared)
                continue
        value = _reaching(register, blocks, previous, end, loop, depth + 1, seen)
        if value is None:
            return None
        if isinstance(value, int):
            values.add(value)
    return _agreed(values)


def _equal_on_edge(blocks: list[Block], previous: int, block: int) -> tuple[str, str] | None:
    """The two operands (64-bit names) of the ``cmp`` that ends block ``previous`` when its
    edge to ``block`` is taken only if they are equal (``jne`` falling through, ``je`` jumping),
    else None."""
    instructions = blocks[previous].instructions
    if len(instructions) < 2 or instructions[-2].mnemonic != "cmp":
        return None
    jump = instructions[-1]
    taken = jump.target == blocks[block].start
    falls_through = not taken and jump.end == blocks[block].start
    if jump.mnemonic in ("jne", "jnz") and falls_through:
        pass
    elif not (jump.mnemonic in ("je", "jz") and taken):
        return None
    operands = _operands(instructions[-2])
    if len(operands) != 2 or any("[" in o for o in operands):
        return None
    return wide(operands[0]), wide(operands[1])


def _difference(
    first: str,
    second: str,
    blocks: list[Block],
    block: int,
    position: int,
    loop: Loop,
    depth: int = 0,
    seen: dict[tuple[int, str, str], int] | None = None,
    offset: int = 0,
) -> int | str | None:
    """``first - second + offset`` before instruction ``position`` of ``block`` when it is the
    same constant on every path (two registers set one from the other, ``lea rdx, [rcx +
    0x1770]``, and moved by the same steps, as a row pointer and its end are by the loop
    around), ``_CYCLE`` for a path that only comes back to where it was with the same
    difference, else None. A register copied from a third (``mov rax, rcx``) is followed as
    that register. The loop's own back edges are left out at its header."""
    seen = {} if seen is None else seen
    if depth > 200 or len(seen) > 256:
        return None
    instructions = blocks[block].instructions
    for index in range(position - 1, -1, -1):
        insn = instructions[index]
        changed = written(insn)
        if first in changed and second in changed:
            return None
        if first not in changed and second not in changed:
            continue
        target, other, sign = (first, second, 1) if first in changed else (second, first, -1)
        step = _update_step(insn, target)
        if step is not None:
            offset += sign * step
            continue
        copied = _copied_from(insn)
        if copied is not None:
            # target = source + k: follow the source register from here on
            source, amount = copied
            offset += sign * amount
            if source == other:
                return offset
            first, second = (source, second) if target == first else (first, source)
            continue
        mine = _evaluate(insn, target, blocks, block, index, loop, depth + 1)
        theirs = _value_before(other, blocks, block, index, loop, depth + 1)
        if mine is None or theirs is None:
            return None
        return offset + sign * (mine - theirs)
    predecessors = [
        p for p in blocks[block].predecessors if not (block == loop.header and p in loop.blocks)
    ]
    if not predecessors:
        return None
    values: set[int] = set()
    for previous in predecessors:
        visit = (previous, first, second)
        if visit in seen:
            if seen[visit] != offset:
                return None
            continue
        seen[visit] = offset
        equal = _equal_on_edge(blocks, previous, block)
        if equal is not None and {first, second} == set(equal):
            values.add(offset)
            continue
        end = len(blocks[previous].instructions)
        value = _difference(first, second, blocks, previous, end, loop, depth + 1, seen, offset)
        if value is None:
            return None
        if isinstance(value, int):
            values.add(value)
    return _agreed(values)


def _copied_from(insn: BinaryInstruction) -> tuple[str, int] | None:
    """``(s, k)`` when the instruction sets its destination to register ``s`` plus ``k``
    (``mov d, s`` gives k = 0, ``lea d, [s + k]`` gives k; not ``rip``), else None."""
    operands = _operands(insn)
    if len(operands) != 2 or insn.kind:
        return None
    if not _FULL_REGISTER.fullmatch(operands[0]):
        return None  # a 32-bit destination cuts the upper half
    if insn.mnemonic == "mov" and _FULL_REGISTER.fullmatch(operands[1]):
        return operands[1], 0
    if insn.mnemonic == "lea":
        match = re.fullmatch(r"\[(\w+)(?: ([+-]) (0x[0-9a-f]+|\d+))?\]", operands[1])
        if match and match.group(1) != "rip":
            amount = int(match.group(3), 0) if match.group(3) else 0
            return wide(match.group(1)), -amount if match.group(2) == "-" else amount
    return None


def _evaluate(
    insn: BinaryInstruction,
    register: str,
    blocks: list[Block],
    block: int,
    index: int,
    loop: Loop,
    depth: int,
) -> int | None:
    operands = _operands(insn)
    if insn.kind or len(operands) != 2:
        return None
    source = operands[1]
    if insn.mnemonic == "xor" and wide(source) == register:
        return 0
    if insn.mnemonic in ("mov", "movabs"):
        value = _integer(source)
        if value is not None:
            return value
        if "[" not in source:
            return _value_before(wide(source), blocks, block, index, loop, depth)
        return None
    step = _update_step(insn, register)
    if step is not None and insn.mnemonic in ("add", "sub"):
        value = _value_before(register, blocks, block, index, loop, depth)
        return None if value is None else value + step
    if insn.mnemonic == "lea":
        match = re.fullmatch(r"\[(\w+)(?: ([+-]) (0x[0-9a-f]+|\d+))?\]", source)
        if match is None:
            return None
        offset = int(match.group(3), 0) if match.group(3) else 0
        offset = -offset if match.group(2) == "-" else offset
        base = wide(match.group(1))
        if base == "rip":
            return insn.end + offset
        value = _value_before(base, blocks, block, index, loop, depth)
        return None if value is None else value + offset
    return None


def _exit_test(blocks: list[Block], loop: Loop) -> tuple[int, str] | None:
    """The block holding the loop's only exit test, and the condition under which it stays.

    The test is in the only latch, or in the header when the only latch jumps back
    unconditionally (a loop unrolled with its exit test after the first copy of the body, or
    a ``while``-shaped loop): there it compares the register before its update.
    """
    exiting = [b for b in loop.blocks if any(s not in loop.blocks for s in blocks[b].successors)]
    if len(exiting) != 1 or len(loop.latches) != 1:
        return None
    if exiting[0] not in loop.latches:
        jump = blocks[next(iter(loop.latches))].instructions[-1]
        if exiting[0] != loop.header or jump.mnemonic != "jmp":
            return None
        if jump.target != blocks[loop.header].start:
            return None
    latch = blocks[exiting[0]]
    last = latch.instructions[-1]
    if last.kind != "branch":
        return None
    target_block = next((s for s in latch.successors if blocks[s].start == last.target), None)
    if target_block == loop.header and last.mnemonic in _STAY:
        return latch.index, _STAY[last.mnemonic]
    if target_block not in loop.blocks and last.mnemonic in _NEGATED:
        return latch.index, _NEGATED[last.mnemonic]
    return None


def induction(blocks: list[Block], loop: Loop, own: Collection[int]) -> Induction | None:
    """The induction register of a machine loop with a single exit test, or None.

    Parameters
    ----------
    blocks : list of Block
        The function's basic blocks (:func:`perfcast.static.control_flow.basic_blocks`).
    loop : Loop
        One of its natural loops.
    own : collection of int
        The loop's blocks outside the loops nested in it (where its memory operands and packed
        instructions are read).

    Returns
    -------
    Induction or None
    """
    found = _exit_test(blocks, loop)
    if found is None:
        return None
    latch_index, stay = found
    tested_before_update = latch_index not in loop.latches  # the test is in the header
    latch = blocks[latch_index].instructions
    position = len(latch) - 2
    while position >= 0 and latch[position].mnemonic in ("nop",):
        position -= 1
    if position < 0:
        return None
    test = latch[position]
    operands = _operands(test)
    bound_operand: str | None
    if test.mnemonic == "cmp" and len(operands) == 2:
        first, second = wide(operands[0]), wide(operands[1])
        register, bound_operand = first, second
        if _integer(second) is None and "[" not in second and "[" not in first:
            register, bound_operand = _choose_register(blocks, loop, first, second)
            if register == second:
                stay = _SWAPPED[stay.rstrip("u")] + ("u" if stay.endswith("u") else "")
    elif _update_step(test, wide(operands[0]) if operands else "") is not None:
        register, bound_operand = wide(operands[0]), "0"
    else:
        return None
    if "[" in register or "[" in bound_operand:
        return None
    updates = [
        (block, index)
        for block in loop.blocks
        for index, insn in enumerate(blocks[block].instructions)
        if register in written(insn)
    ]
    if len(updates) != 1:
        return None
    update_block, update_index = updates[0]
    step = _update_step(blocks[update_block].instructions[update_index], register)
    if step is None:
        step = _chained_step(blocks[update_block].instructions, update_index, register)
    if tested_before_update:
        # updated in the latch after the header's test: the latch runs once per value that
        # passes the test, which is what trip_count counts for a test after the update
        if step is None or update_block not in loop.latches:
            return None
    elif step is None or update_block != latch_index or update_index > position:
        return None
    bound = _integer(bound_operand)
    if bound is None:
        if any(bound_operand in written(i) for b in loop.blocks for i in blocks[b].instructions):
            return None
        bound = _value_before(bound_operand, blocks, loop.header, 0, loop)
    start = _value_before(register, blocks, loop.header, 0, loop)
    distance = None
    if (start is None or bound is None) and _integer(bound_operand) is None:
        found_distance = _difference(bound_operand, register, blocks, loop.header, 0, loop)
        distance = found_distance if isinstance(found_distance, int) else None
    if start is not None and bound is not None:
        distance = bound - start
    if tested_before_update and distance is not None and distance * step <= 0:
        return None  # the body may not run at all: no count from here
    reached = _reached(blocks, own, register, (update_block, update_index, step))
    scale = _scale(blocks, own, register)
    strided = (
        scale is not None
        and scale > 1
        and abs(step) > 1
        and not packed(blocks, own)
        and _one_place_each(blocks, own, register)
    )
    return Induction(
        register,
        step,
        start,
        bound,
        stay,
        scale,
        _size(blocks, own),
        several_per_pass=_several_per_pass(reached, step),
        touched=_touched(reached),
        distance=distance,
        strided=strided,
    )


def _chained_step(
    instructions: Sequence[BinaryInstruction], index: int, register: str
) -> int | None:
    """The step of an update through a second register: ``lea s, [r + d]`` earlier in the
    block, then ``lea r, [s + c]`` (gcc's unrolled loops), is ``c + d``; None otherwise."""
    update = _operands(instructions[index])
    if instructions[index].mnemonic != "lea" or len(update) != 2:
        return None
    match = _LEA_OFFSET.fullmatch(update[1])
    if match is None:
        return None
    helper = wide(match.group(1))
    if helper == register:
        return None
    for position in range(index - 1, -1, -1):
        insn = instructions[position]
        if helper not in written(insn):
            continue
        operands = _operands(insn)
        if insn.mnemonic != "lea" or len(operands) != 2:
            return None
        first = _LEA_OFFSET.fullmatch(operands[1])
        if first is None or wide(first.group(1)) != register:
            return None
        return _signed(first) + _signed(match)
    return None


def _signed(match: re.Match[str]) -> int:
    amount = int(match.group(3), 0)
    return amount if match.group(2) == "+" else -amount


def _choose_register(blocks: list[Block], loop: Loop, first: str, second: str) -> tuple[str, str]:
    """Of two compared registers, the one the loop updates is the induction register."""
    changed = {r for b in loop.blocks for i in blocks[b].instructions for r in written(i)}
    if second in changed and first not in changed:
        return second, first
    return first, second


def _scale(blocks: list[Block], own: Collection[int], register: str) -> int | None:
    """The scale the register has in the loop's memory operands (the smallest seen)."""
    scales = []
    for block in own:
        for insn in blocks[block].instructions:
            if insn.mnemonic == "lea":
                continue
            for inside in _MEMORY.findall(insn.operands):
                terms = [t.strip() for t in re.split(r"[+-]", inside)]
                for term in terms:
                    name, _, factor = term.partition("*")
                    if wide(name.strip()) == register:
                        scales.append(int(factor, 0) if factor else 1)
    return min(scales) if scales else None


def _one_place_each(blocks: list[Block], own: Collection[int], register: str) -> bool:
    """True when every memory operand that uses ``register`` scaled (``[rdx + r8*8]``) reaches,
    with its other terms, one displacement only: one element of each array per pass."""
    places: dict[tuple[str, ...], set[int]] = defaultdict(set)
    for block in own:
        for insn in blocks[block].instructions:
            if insn.mnemonic == "lea":
                continue
            for inside in _MEMORY.findall(insn.operands):
                terms = [t.strip() for t in re.split(r"(?=[+-])", inside.replace(" ", ""))]
                names = [t.lstrip("+-").partition("*")[0] for t in terms]
                if register not in (wide(n) for n in names):
                    continue
                others = tuple(sorted(wide(n) for n in names if not _INTEGER.match(n)))
                places[others].add(sum(int(t, 0) for t in terms if _INTEGER.match(t.lstrip("+"))))
    return bool(places) and all(len(seen) == 1 for seen in places.values())


def _reached(
    blocks: list[Block], own: Collection[int], register: str, update: tuple[int, int, int]
) -> list[tuple[tuple[str, ...], int, int | None]]:
    """The loop's memory operands that use ``register`` unscaled: the other terms of the
    address, the displacement from the register's value at the start of the pass and the
    size in bytes (None when the operand shows none).

    ``update`` is the block and position of the register's update and its step: an operand
    after it in that block addresses ``displacement + step`` from the start of the pass
    (gcc's ``add rax, 0x190`` then ``movlpd xmm0, [rax - 0x190]`` reads the pass's first
    element)."""
    update_block, update_index, step = update
    found = []
    for block in own:
        for position, insn in enumerate(blocks[block].instructions):
            if insn.mnemonic == "lea":
                continue
            shift = step if block == update_block and position > update_index else 0
            for size_name, inside in _SIZED_MEMORY.findall(insn.operands):
                terms = [t.strip() for t in re.split(r"(?=[+-])", inside.replace(" ", ""))]
                names = [wide(t.lstrip("+-")) for t in terms]
                if register not in names:
                    continue
                offset = shift + sum(int(t, 0) for t in terms if _INTEGER.match(t.lstrip("+")))
                others = tuple(
                    sorted(
                        n
                        for n, t in zip(names, terms, strict=True)
                        if n != register and not _INTEGER.match(t.lstrip("+"))
                    )
                )
                found.append((others, offset, _OPERAND_BYTES.get(size_name)))
    return found


def _touched(reached: list[tuple[tuple[str, ...], int, int | None]]) -> int | None:
    """Bytes the operands reach per pass: the union of ``[displacement, displacement + size)``
    (None when an operand shows no size, or there is none)."""
    if not reached or any(size is None for _, _, size in reached):
        return None
    covered, end = 0, None
    for low, high in sorted((offset, offset + (size or 0)) for _, offset, size in reached):
        if end is None or low >= end:
            covered += high - low
            end = high
        elif high > end:
            covered += high - end
            end = high
    return covered


_SCALED_INDEX = re.compile(
    r"\[(?P<base>\w+) \+ (?P<index>\w+)\*(?P<scale>[248])"
    r"(?: (?P<sign>[-+]) (?P<disp>0x[0-9a-f]+|\d+))?\]"
)


def several_by_scaled_index(blocks: list[Block], own: Collection[int]) -> bool:
    """True when a register the loop steps by a constant ``k`` (``|k| > 1``, one update per
    pass) indexes one array (same base and scale) at two displacements less than ``k``
    elements apart: the pass holds unrolled copies of the body (clang -O2's recurrence
    unrolled by two reads ``[rcx + r11*8]`` and ``[rcx + r11*8 + 8]`` and leaves on a register
    derived from ``r11``, which the induction search does not read), so one pass is not one
    iteration. A strided walk (one element per array per pass) is not."""
    steps: dict[str, int | None] = {}
    places: dict[tuple[str, str, int], set[int]] = defaultdict(set)
    for block in own:
        for insn in blocks[block].instructions:
            for register in written(insn):
                step = _update_step(insn, register)
                steps[register] = step if register not in steps else None
            for match in _SCALED_INDEX.finditer(insn.operands):
                displacement = int(match["disp"], 0) if match["disp"] else 0
                if match["sign"] == "-":
                    displacement = -displacement
                key = (wide(match["base"]), wide(match["index"]), int(match["scale"]))
                places[key].add(displacement)
    for (_, index, scale), seen in places.items():
        step = steps.get(index)
        if step is None or abs(step) <= 1 or len(seen) < 2:
            continue
        if max(seen) - min(seen) < abs(step) * scale:
            return True
    return False


def _several_per_pass(reached: list[tuple[tuple[str, ...], int, int | None]], step: int) -> bool:
    """True when the operands reach two elements of one array (same other terms,
    displacements closer than one step) in one pass: unrolled copies or struct fields."""
    displacements: dict[tuple[str, ...], set[int]] = {}
    for others, offset, _ in reached:
        displacements.setdefault(others, set()).add(offset)
    return any(
        len(seen) > 1 and max(seen) - min(seen) < abs(step) for seen in displacements.values()
    )


def _vector_elements(blocks: list[Block], own: Collection[int]) -> tuple[bool, int | None]:
    """Whether the blocks move or compute packed SIMD data, and the bytes per element their
    packed arithmetic tells (None when it tells none or several sizes).

    Zeroing idioms (``xorps x, x``) and packed logic (``andpd`` for ``fabs``) occur in scalar
    code and are not counted; a packed move to or from memory outside the stack frame
    (``movups``) marks vector code whose element size it does not tell.
    """
    vector, sizes = False, set()
    for block in own:
        for insn in blocks[block].instructions:
            operands = _operands(insn)
            if not any(_VECTOR_REGISTER.fullmatch(o) for o in operands):
                continue
            if _PACKED_MOVE.match(insn.mnemonic):
                # a spill to the stack frame or a constant is no array access
                vector = vector or any("[" in o and not _STACK.search(o) for o in operands)
                continue
            if _PACKED_CONVERSION.match(insn.mnemonic):
                vector = True
                sizes |= {4, 8}  # a conversion between element sizes: the step tells neither
                continue
            if not _PACKED_ARITHMETIC.match(insn.mnemonic):
                continue
            for pattern, size in _PACKED_SIZE:
                if pattern.match(insn.mnemonic):
                    vector = True
                    sizes.add(size)
                    break
    return vector, next(iter(sizes)) if len(sizes) == 1 else None


def _size(blocks: list[Block], own: Collection[int]) -> int | None:
    return _vector_elements(blocks, own)[1]


def packed(blocks: list[Block], own: Collection[int]) -> bool:
    """True when the blocks move or compute packed SIMD data (a vectorized loop's)."""
    return _vector_elements(blocks, own)[0]
