"""Which source variable a register of a function holds, from the DWARF location lists.

An optimizing compiler keeps a local variable in a register over address ranges and says so in
``DW_AT_location`` (``DW_OP_reg3`` — the variable is in rbx — or ``DW_OP_breg0 0;
DW_OP_stack_value`` — its value is rax plus 0). :func:`tested_variables` uses that to name the
source variables the test before a conditional jump compares: a test the compiler made out of a
source guard (clang -O3 moving a guarded, loop-invariant inlined call out of its loop and
merging the guard into a test of its own) can then be tied to the ``if`` that tests the same
variable (:mod:`perfcast.static.instruction_mix`). The locations are read once per binary, on
first use.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from elftools.dwarf.dwarf_expr import DWARFExprParser
from elftools.dwarf.locationlists import BaseAddressEntry, LocationEntry, LocationParser
from elftools.elf.elffile import ELFFile

from perfcast.static.binary import BinaryInstruction

#: 64-bit names of the general-purpose registers by DWARF number (x86-64 psABI)
DWARF_REGISTERS = (
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
    "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
)  # fmt: skip

#: registers a call may change (x86-64 System V: caller-saved)
CALL_CLOBBERED = frozenset({"rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"})

#: instructions whose first operand is read, not written
READ_ONLY = re.compile(r"^(cmp|test|push|j|call|ret|nop|bt$|ucomis|comis)")


@dataclass(frozen=True)
class HeldValue:
    """A source variable whose value is in a register over ``[low, high)``."""

    variable: str
    low: int
    high: int
    register: str


def register_family(operand: str) -> str | None:
    """The 64-bit name of a general-purpose register operand (``eax``, ``ax``, ``al`` ->
    ``rax``; ``r8d`` -> ``r8``), None for any other operand."""
    name = operand.strip()
    legacy = re.fullmatch(r"[re]?([abcd])[xlh]|[re]?(si|di|bp|sp)l?", name)
    if legacy:
        return "r" + (legacy.group(1) + "x" if legacy.group(1) else legacy.group(2))
    numbered = re.fullmatch(r"(r(?:[89]|1[0-5]))[dwb]?", name)
    return numbered.group(1) if numbered else None


class HeldVariables:
    """The location lists of one executable's variables, read on first use.

    Parameters
    ----------
    path : Path
        The executable (built with ``-g``).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._by_function: dict[int, list[HeldValue]] | None = None

    def of_function(self, low: int) -> list[HeldValue]:
        """The register locations of the variables (and inlined parameters) of the function
        starting at ``low``; empty when the debug information gives none or cannot be read."""
        if self._by_function is None:
            try:
                self._by_function = _read_locations(self.path)
            except Exception:  # noqa: BLE001 - unreadable locations tie nothing, never fail
                self._by_function = {}
        return self._by_function.get(low, [])


def tested_variables(
    instructions: Sequence[BinaryInstruction], jump: int, held: Sequence[HeldValue]
) -> set[str]:
    """The source variables whose value the compare before the conditional jump at index
    ``jump`` of ``instructions`` (a function's code in address order) tests: a register
    operand of a ``test`` or ``cmp`` right before it that, going back from there, holds a
    variable's value at the end of one of its location ranges with no write to the register in
    between (a ``mov eax, eax`` zero-extension keeps the value)."""
    if jump < 1 or instructions[jump - 1].mnemonic not in ("test", "cmp"):
        return set()
    compare = jump - 1
    registers = {register_family(o) for o in instructions[compare].operands.split(",")}
    found: set[str] = set()
    for register in sorted(r for r in registers if r is not None):
        position = compare
        while position >= 0:
            address = instructions[position].address
            found |= {
                h.variable for h in held if h.register == register and h.low <= address < h.high
            }
            if position < compare and _writes(instructions[position], register):
                break
            position -= 1
    return found


def _writes(insn: BinaryInstruction, register: str) -> bool:
    """Whether the instruction may change the register's value (a call, a write to its first
    operand other than a zero-extending move onto itself)."""
    if insn.kind == "call":
        return register in CALL_CLOBBERED
    operands = [o.strip() for o in insn.operands.split(",")]
    if not operands or READ_ONLY.match(insn.mnemonic):
        return False
    if register_family(operands[0]) != register:
        return False
    return not (insn.mnemonic == "mov" and len(operands) == 2 and operands[0] == operands[1])


def _read_locations(path: Path) -> dict[int, list[HeldValue]]:
    with path.open("rb") as stream:
        elf = ELFFile(stream)
        dwarf = elf.get_dwarf_info()
        locations = LocationParser(dwarf.location_lists())
        expressions = DWARFExprParser(dwarf.structs)
        found: dict[int, list[HeldValue]] = defaultdict(list)
        for unit in dwarf.iter_CUs():
            top = unit.get_top_DIE()
            base = top.attributes["DW_AT_low_pc"].value if "DW_AT_low_pc" in top.attributes else 0
            for die in top.iter_children():
                if die.tag != "DW_TAG_subprogram" or "DW_AT_low_pc" not in die.attributes:
                    continue
                low = die.attributes["DW_AT_low_pc"].value
                for variable in _variables(die):
                    attribute = variable.attributes["DW_AT_location"]
                    entries = locations.parse_from_attribute(
                        attribute, unit["version"], die=variable
                    )
                    if not isinstance(entries, list):
                        continue  # one expression for the whole scope: a stack slot, mostly
                    name = _name(variable)
                    start = base
                    for entry in entries:
                        if isinstance(entry, BaseAddressEntry):
                            start = entry.base_address
                        elif isinstance(entry, LocationEntry):
                            register = _register_of(expressions.parse_expr(entry.loc_expr))
                            if register is None:
                                continue
                            offset = 0 if entry.is_absolute else start
                            found[low].append(
                                HeldValue(
                                    name,
                                    offset + entry.begin_offset,
                                    offset + entry.end_offset,
                                    register,
                                )
                            )
        return dict(found)


def _variables(die):  # noqa: ANN001, ANN202 - pyelftools DIEs
    for child in die.iter_children():
        if (
            child.tag in ("DW_TAG_variable", "DW_TAG_formal_parameter")
            and "DW_AT_location" in child.attributes
        ):
            yield child
        yield from _variables(child)


def _name(die) -> str:  # noqa: ANN001 - pyelftools DIE
    for _ in range(8):
        if "DW_AT_name" in die.attributes:
            value = die.attributes["DW_AT_name"].value
            return value.decode() if isinstance(value, bytes) else str(value)
        if "DW_AT_abstract_origin" not in die.attributes:
            break
        die = die.get_DIE_from_attribute("DW_AT_abstract_origin")
    return "?"


def _register_of(operations: list) -> str | None:
    """The register an expression names: ``DW_OP_regN`` alone, or ``DW_OP_bregN 0`` followed
    by ``DW_OP_stack_value`` (the value is the register's)."""
    names = [op.op_name for op in operations]
    first = operations[0] if operations else None
    if first is None:
        return None
    number = re.fullmatch(r"DW_OP_(b?)reg(\d+)", first.op_name)
    if number is None or int(number.group(2)) >= len(DWARF_REGISTERS):
        return None
    register = DWARF_REGISTERS[int(number.group(2))]
    if not number.group(1):
        return register if len(names) == 1 else None
    if names[1:] == ["DW_OP_stack_value"] and first.args and first.args[0] == 0:
        return register
    return None
