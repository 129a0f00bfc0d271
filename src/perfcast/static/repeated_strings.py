"""How often an x86 ``rep``-prefixed string instruction repeats.

gcc turns copies and zeroing of structs and fixed-size arrays into ``rep movs*`` / ``rep stos*``
with the element count in ``rcx``. Callgrind counts such an instruction once per repetition
and once more for the final test of ``rcx = 0`` (valgrind re-enters the instruction until
``rcx`` is 0), so its count is its block's count times ``rcx + 1``. That value is known
statically only when a constant is moved into ``rcx`` on the only path to the instruction;
``repe`` / ``repne`` comparisons stop at data-dependent places and never have a static count.
"""

from __future__ import annotations

import re

from perfcast.static.binary import BinaryInstruction
from perfcast.static.control_flow import Block

REPEATED_PREFIXES = ("rep ", "repe ", "repz ", "repne ", "repnz ")
"""Mnemonic prefixes (capstone's text) of the instructions that repeat ``rcx`` times."""

_COUNTER = ("rcx", "ecx", "cx", "cl", "ch")
_CONSTANT_MOVE = re.compile(r"^(?:rcx|ecx), (0x[0-9a-f]+|\d+)$")
_COUNTER_NAMED = re.compile(r"\b(?:rcx|ecx|cx|cl|ch)\b")
_READ_ONLY = ("cmp", "test", "push", "bt")  # instructions that only read their first operand
_CLOBBERING = ("syscall", "cpuid", "rdtscp", "loop", "loope", "loopne")
_PREDECESSORS_FOLLOWED = 8  # blocks walked back along a single-predecessor chain


def is_repeated(insn: BinaryInstruction) -> bool:
    """True for a ``rep``/``repe``/``repne``-prefixed string instruction."""
    return insn.mnemonic.startswith(REPEATED_PREFIXES)


def repetitions(blocks: list[Block], block: Block, insn: BinaryInstruction) -> int | str:
    """How many times ``insn`` (a repeated string instruction of ``block``) repeats per run.

    Parameters
    ----------
    blocks : list of Block
        The function's basic blocks.
    block : Block
        The block holding ``insn``.
    insn : BinaryInstruction
        The repeated string instruction.

    Returns
    -------
    int or str
        The constant count in ``rcx``, or why it cannot be read (a sentence naming the
        instruction).
    """
    name = f"{insn.mnemonic} at {insn.address:#x}"
    if not insn.mnemonic.startswith("rep "):
        return f"{name} stops where the data compare, not after a count read from the binary"
    position = block.instructions.index(insn)
    before = block.instructions[:position]
    current = block
    for _ in range(_PREDECESSORS_FOLLOWED):
        for previous in reversed(before):
            if previous.kind == "call":
                return f"{name} repeats rcx times, set before a call that may change it"
            if is_repeated(previous) or previous.mnemonic in _CLOBBERING:
                return (
                    f"{name} repeats rcx times, left by {previous.mnemonic} at "
                    f"{previous.address:#x}"
                )
            if previous.mnemonic in _READ_ONLY:
                continue
            destination = previous.operands.split(",")[0].strip()
            if destination not in _COUNTER and not (
                previous.mnemonic in ("xchg", "cmpxchg", "xadd")
                and _COUNTER_NAMED.search(previous.operands)
            ):
                continue
            constant = _CONSTANT_MOVE.match(previous.operands)
            if previous.mnemonic == "mov" and constant is not None:
                return int(constant.group(1), 0)
            if previous.mnemonic == "xor" and previous.operands in ("ecx, ecx", "rcx, rcx"):
                return 0
            return (
                f"{name} repeats rcx times, computed at {previous.address:#x} "
                f"({previous.mnemonic} {previous.operands}), not a constant"
            )
        if len(current.predecessors) != 1:
            break
        current = blocks[current.predecessors[0]]
        before = current.instructions
    return f"{name} repeats rcx times, which is set on several paths or before the function"
