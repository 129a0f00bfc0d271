"""Compiler-made alternatives: two copies of one source loop behind a run-time check.

A compiler that cannot prove two pointers apart may version a loop: it tests at run time whether
the arrays overlap and branches to a vector copy of the loop or to a scalar one. Exactly one of
them runs per entry, and the source does not show the test. clang at -O3, given a trip count
fixed at compile time, even writes the vector copy as straight-line code, so the binary holds one
machine loop (the scalar fallback) and, on the other side of the check, the whole loop unrolled::

    check:  if (in + M <= out || out + M <= in) goto vector
    scalar: loop: body; i += 2; if (i != M) goto loop; return     <- runs only if they overlap
    vector: body x M/2 (packed, no loop); return                   <- runs otherwise

Counting each copy as the source loop's count (or once per entry for straight-line code) counts
both alternatives. :func:`alternatives` finds such checks from the control flow alone: a
conditional branch outside the loop's machine loops whose two sides each hold code of the same
source loop's body that the other side cannot reach. The definition keeps apart the code that
runs on one path around a loop and is no alternative:

- a zero-trip guard or a loop-rotation copy of the header test (``if (n > 0)`` before a rotated
  loop) has loop code on one side only, and the header test carries the loop's header line, not
  body lines;
- a peeled prologue or a remainder after an unrolled or vectorized loop (:mod:`epilogues`) lies on
  the same path as the main loop: one reaches the other, so neither is exclusive to one side of a
  branch; code both sides reach (a remainder loop shared by the vector path and a short-trip path)
  is not exclusive either;
- a loop split in two (gcc splits ``for (t...) if (t < k) ...`` at ``k``) skips its first part
  when that part is empty: both sides go on to the second machine loop of the same source loop.
  A machine loop of the source loop that both sides reach means the sides are parts of one run of
  the loop, so the check is no alternative (straight-line code both reach, such as an iteration
  clang peels before testing the overlap flag again, does not count: it runs once either way);
- a check of the trip count against a constant (gcc's ``n == 1`` and clang's ``n < 6`` before
  a vectorized loop send short loops to the scalar copy) chooses by the count, not by the
  data: only branches that compare two registers (array bounds), or a flag set from such a
  comparison, are taken as checks; the machine-loop counts assume the long-loop path there;
- a branch inside one of the loop's own machine loops (an ``if`` in the body, the arm of ``?:``)
  chooses between parts of one iteration, not between copies of the loop: such branches are left
  out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from perfcast.static.binary import BinaryInstruction
from perfcast.static.control_flow import Block, Loop
from perfcast.static.machine_trips import written


@dataclass(frozen=True)
class Alternative:
    """Two copies of one source loop, of which a run-time check picks one.

    Attributes
    ----------
    check : int
        Index of the block ending in the conditional branch.
    loop : tuple
        Key of the source loop both sides implement.
    sides : tuple of frozenset of int
        The blocks only one side of the check reaches (before the paths join again), per side.
    compiler_made : bool
        Whether the branch compares array bounds (an overlap check); False for a branch of the
        program's own that the compiler duplicated the loop under (found with ``any_condition``).
    """

    check: int
    loop: tuple
    sides: tuple[frozenset[int], frozenset[int]]
    compiler_made: bool = True

    @property
    def blocks(self) -> frozenset[int]:
        """Every block that runs on one side only."""
        return self.sides[0] | self.sides[1]


def alternatives(
    blocks: list[Block],
    around: Mapping[int, list[Loop]],
    loop_of: Mapping[int, tuple],
    body_of: Callable[[Block], tuple | None],
    ignored: Collection[int] = (),
    not_checks: Collection[int] = (),
    any_condition: bool = False,
) -> list[Alternative]:
    """The run-time checks of a function that choose between two copies of one source loop.

    Parameters
    ----------
    blocks : list of Block
        The function's basic blocks.
    around : mapping of int to list of Loop
        Block index -> the machine loops holding it, outermost first.
    loop_of : mapping of int to tuple
        Machine loop header -> key of the source loop it implements (a machine loop on one
        side of a check is code of that loop whatever its lines).
    body_of : callable
        Block -> key of the source loop whose body most of the block's instructions are (lines
        after the loop's header line), or None.
    ignored : collection of int
        Blocks that never run or end the program (padding, error paths): no side of a check.
    not_checks : collection of int
        Blocks whose branch is known to be the program's own condition (on the line of a source
        ``if``): they lie on sides but are no checks.
    any_condition : bool
        Also take branches that compare no addresses and those of ``not_checks`` (a loop the
        compiler copied into both arms of the program's ``if``): for measured counts, where
        only which blocks are copies matters, not why.

    Returns
    -------
    list of Alternative
        One per check, in block order; a block lies on a side of at most one check (the first).
    """
    skip = set(ignored)
    body: dict[int, tuple] = {}
    for block in blocks:
        key = body_of(block) if block.index not in skip else None
        if key is not None:
            body[block.index] = key
    found: list[Alternative] = []
    claimed: set[int] = set()
    for block in blocks:
        successors = list(dict.fromkeys(block.successors))
        if len(successors) != 2 or block.index in skip or block.index in claimed:
            continue
        compiler_made = block.index not in not_checks and _compares_addresses(blocks, block.index)
        if not compiler_made and not any_condition:
            continue
        chain = around.get(block.index, [])
        region = chain[-1].blocks if chain else None
        stop = chain[-1].header if chain else None
        test = _zero_test(block, plain=False) or _flag_test(block)
        target = block.instructions[-1].target
        reached = []
        for start in successors:
            # the register the check tested is zero on this side when the branch jumps on zero
            # and this is its target, or jumps on non-zero and this is the fall-through
            known = None if test is None else (test[0], test[1] == (blocks[start].start == target))
            reached.append(_forward(blocks, start, block.index, region, stop, skip, known))
        sides = (reached[0] - reached[1], reached[1] - reached[0])
        # the source loops each side holds code of: body copies, and machine loops
        loops = [
            {body[i] for i in side if i in body} | {loop_of[i] for i in side if i in loop_of}
            for side in sides
        ]
        own_loops = {loop_of[loop.header] for loop in chain}
        # a machine loop both sides reach runs after either: the sides are parts of one
        # execution of the source loop (a split loop, a peeled or short-trip path), no copies
        shared = {loop_of[i] for i in reached[0] & reached[1] if i in loop_of}
        common = sorted((loops[0] & loops[1]) - own_loops - shared, key=repr)
        if not common:
            continue
        found.append(
            Alternative(
                block.index,
                common[0],
                (frozenset(sides[0]), frozenset(sides[1])),
                compiler_made,
            )
        )
        claimed.update(sides[0] | sides[1])
    return found


def _forward(
    blocks: list[Block],
    start: int,
    check: int,
    region: frozenset[int] | None,
    stop: int | None,
    skip: set[int],
    known: tuple[str, bool] | None = None,
) -> set[int]:
    """Blocks reached from ``start`` without coming back to the check or to the enclosing
    machine loop's header, and without leaving that loop.

    ``known`` is what the check's branch decided, ``(register, whether it is zero)``: a later
    branch that tests the same register, unchanged since, goes the same way (clang tests an
    overlap flag twice around code both copies share), so only its matching edge is followed.
    """
    if start in (check, stop) or start in skip:
        return set()
    if region is not None and start not in region:
        return set()
    seen = {(start, known is not None)}
    work = [(start, known is not None)]
    while work:
        index, valid = work.pop()
        successors = blocks[index].successors
        if valid and known is not None:
            decided = _decided(blocks, index, known)
            if decided is not None:
                successors = [decided]
            valid = not any(known[0] in _written(insn) for insn in blocks[index].instructions)
        for successor in successors:
            if successor in (check, stop) or successor in skip:
                continue
            if region is not None and successor not in region:
                continue
            if (successor, valid) not in seen:
                seen.add((successor, valid))
                work.append((successor, valid))
    return {index for index, _ in seen}


def _compares_addresses(blocks: list[Block], index: int) -> bool:
    """True when the block's branch depends on a comparison of two registers (the bounds of two
    arrays: an overlap check) rather than of one value with constants (a trip-count threshold,
    ``n == 1`` or ``n < 6``, which sends short loops to the scalar copy).

    Follows the registers the last flag-setting instruction reads back through the block and its
    single predecessors: a ``setcc`` (a flag materialized from an earlier comparison) or an
    instruction combining two different registers (``cmp rdi, rax``, ``sub rax, rsi``) means
    addresses are compared.
    """
    block = blocks[index]
    instructions = list(block.instructions[:-1])
    position = next(
        (
            i
            for i in range(len(instructions) - 1, -1, -1)
            if instructions[i].mnemonic in _FLAG_SETTERS
        ),
        None,
    )
    if position is None:
        return False
    wanted = _registers(instructions[position])
    if instructions[position].mnemonic != "test" and len(wanted) > 1:
        return True
    earlier = instructions[:position]
    current = index
    for _ in range(4):  # the block and up to three earlier places the registers come from
        for insn in reversed(earlier):
            changed = _written(insn) & wanted
            if not changed:
                continue
            if insn.mnemonic.startswith("set"):
                return True
            sources = _registers(insn, sources_only=True)
            if len(sources) > 1 and insn.mnemonic in (
                "cmp",
                "sub",
                "lea",
                "add",
                "or",
                "and",
                "xor",
            ):
                return True
            wanted = (wanted - changed) | sources
        if not wanted:
            return False
        predecessors = blocks[current].predecessors
        if len(predecessors) == 1:
            current = predecessors[0]
            earlier = list(blocks[current].instructions)
            continue
        # several ways in (the header of a loop the check lies in): clang computes the overlap
        # flag once before the loop and tests it in every pass; follow it when every way in
        # sees the same instruction set it
        found = _only_definition(blocks, current, wanted)
        if found is None:
            return False
        current, at = found
        earlier = list(blocks[current].instructions[: at + 1])
    return False


def _only_definition(
    blocks: list[Block], index: int, registers: set[str]
) -> tuple[int, int] | None:
    """``(block, position)`` of the one instruction that last writes any of ``registers`` on
    every way into block ``index``; None when the ways see different ones, or one of them
    reaches the function's entry (an argument) without such an instruction. Blocks nothing
    jumps to other than the entry (alignment padding) are no way in."""
    found: set[tuple[int, int]] = set()
    seen: set[int] = set()
    work = list(blocks[index].predecessors)
    if not work:
        return None
    while work:
        current = work.pop()
        if current in seen:
            continue
        seen.add(current)
        if len(seen) > 64:
            return None
        instructions = blocks[current].instructions
        at = next(
            (
                i
                for i in range(len(instructions) - 1, -1, -1)
                if _written(instructions[i]) & registers
            ),
            None,
        )
        if at is not None:
            found.add((current, at))
        elif not blocks[current].predecessors:
            if current == 0:
                return None
        else:
            work.extend(blocks[current].predecessors)
    return found.pop() if len(found) == 1 else None


def _registers(insn: BinaryInstruction, sources_only: bool = False) -> set[str]:
    """General-purpose registers an instruction names (those it reads, with ``sources_only``:
    a ``mov``'s or ``lea``'s destination is left out)."""
    operands = [part.strip() for part in insn.operands.split(",")] if insn.operands else []
    if sources_only and insn.mnemonic in ("mov", "movsxd", "movzx", "lea") and operands:
        operands = operands[1:]
    names = set()
    for operand in operands:
        for name in re.findall(r"[a-z][a-z0-9]*", operand.replace(" ptr", "")):
            family = _family(name)
            if family in _GENERAL:
                names.add(family)
    return names


#: 64-bit general-purpose registers (the families :func:`_family` maps names to)
_GENERAL = frozenset(
    {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp"} | {f"r{n}" for n in range(8, 16)}
)


def _zero_test(block: Block, plain: bool) -> tuple[str, bool, int] | None:
    """``(register, jumps when zero, index of the flag-setting instruction)`` for a block ending
    in ``je``/``jne`` on the zero flag of a register: set by ``test r, r`` or, unless ``plain``,
    by the result of ``or``/``and`` into ``r``."""
    last = block.instructions[-1]
    if last.kind != "branch" or last.mnemonic not in _ZERO_BRANCHES:
        return None
    for position in range(len(block.instructions) - 2, -1, -1):
        insn = block.instructions[position]
        if insn.mnemonic not in _FLAG_SETTERS:
            continue
        operands = [part.strip() for part in insn.operands.split(",")]
        if len(operands) != 2 or "[" in operands[0]:
            return None
        same = insn.mnemonic == "test" and operands[0] == operands[1]
        result = not plain and insn.mnemonic in ("or", "and")
        if same or result:
            return _family(operands[0]), _ZERO_BRANCHES[last.mnemonic], position
        return None
    return None


def _flag_test(block: Block) -> tuple[str, bool, int] | None:
    """Like :func:`_zero_test` for ``cmp r8, 1`` before ``je``/``jne`` where the byte register
    holds a flag (0 or 1) set in the block by ``setcc``, or by ``or``/``and`` of such flags
    (clang: ``setae dl; setbe al; or al, dl; cmp al, 1; jne <scalar>``): the jump on
    ``r8 != 1`` is the jump on ``r8 == 0``."""
    last = block.instructions[-1]
    if last.kind != "branch" or last.mnemonic not in _ZERO_BRANCHES:
        return None
    position = len(block.instructions) - 2
    if position < 0 or block.instructions[position].mnemonic != "cmp":
        return None
    operands = [part.strip() for part in block.instructions[position].operands.split(",")]
    if len(operands) != 2 or operands[1] != "1" or not _BYTE_REGISTER.match(operands[0]):
        return None
    flags: set[str] = set()  # byte registers known to hold 0 or 1 at this point
    for insn in block.instructions[:position]:
        parts = [part.strip() for part in insn.operands.split(",")] if insn.operands else []
        if not parts or not _BYTE_REGISTER.match(parts[0]):
            flags -= {_family(r) for r in _written(insn)}
            continue
        target = _family(parts[0])
        combined = insn.mnemonic in ("or", "and") and all(_family(p) in flags for p in parts)
        if insn.mnemonic.startswith("set") or combined:
            flags.add(target)
        else:
            flags.discard(target)
    register = _family(operands[0])
    if register not in flags:
        return None
    return register, not _ZERO_BRANCHES[last.mnemonic], position


def _decided(blocks: list[Block], index: int, known: tuple[str, bool]) -> int | None:
    """The successor a block's branch takes when it tests the known register, unchanged in the
    block before the test; None when its branch is not such a test."""
    block = blocks[index]
    test = _zero_test(block, plain=True)
    if test is None or test[0] != known[0] or len(block.successors) != 2:
        return None
    if any(known[0] in _written(insn) for insn in block.instructions[: test[2]]):
        return None
    taken = next(
        (s for s in block.successors if blocks[s].start == block.instructions[-1].target), None
    )
    if taken is None:
        return None
    other = next(s for s in block.successors if s != taken)
    return taken if known[1] == test[1] else other


def _written(insn: BinaryInstruction) -> set[str]:
    return {_family(register) for register in written(insn)}


def _family(register: str) -> str:
    """The 64-bit register a name is part of (``al``, ``ax``, ``eax`` -> ``rax``)."""
    numbered = re.match(r"^r(\d+)[dwb]?$", register)
    if numbered:
        return f"r{numbered.group(1)}"
    legacy = re.match(r"^[re]?([abcd])[xlh]$", register)
    if legacy:
        return f"r{legacy.group(1)}x"
    pointer = re.match(r"^[re]?(si|di|bp|sp)l?$", register)
    if pointer:
        return f"r{pointer.group(1)}"
    return register


#: byte registers (``al``, ``sil``, ``r8b``)
_BYTE_REGISTER = re.compile(r"^(?:[abcd]l|[sd]il|[bs]pl|r\d+b)$")

#: conditional jumps on the zero flag -> whether they jump when it is set (the value is zero)
_ZERO_BRANCHES = {"je": True, "jz": True, "jne": False, "jnz": False}

#: instructions that set the zero flag (the last one before a branch decides it)
_FLAG_SETTERS = frozenset(
    {"test", "cmp", "or", "and", "xor", "add", "sub", "inc", "dec", "neg", "shl", "shr", "sar"}
)
