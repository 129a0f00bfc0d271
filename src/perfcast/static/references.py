"""Which functions of an executable anything can reach: calls, jumps, or a held address.

A function's code runs only when something transfers control to it: a direct call or jump,
or an indirect one through its address, which then appears somewhere in the file: as an
immediate or a ``rip``-relative operand of an instruction (``lea rdi, [rip + f]``), as a
word of a data section (a table of function pointers, ``.init_array``), as the addend of a
dynamic relocation (the same in a position-independent executable), or as an exported
symbol (another module may call it). A function none of these names is code the compiler
kept although it removed every call (it folded the result of a call into its caller, or
inlined every call site): that stand-alone copy never runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from capstone import CS_ARCH_X86, CS_MODE_64, Cs
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection
from elftools.elf.sections import SymbolTableSection

_SHF_ALLOC = 0x2
_SHF_EXECINSTR = 0x4
_RIP_RELATIVE = re.compile(r"\[rip ([+-]) (0x[0-9a-f]+|\d+)\]")
_NUMBER = re.compile(r"(?<![\w\[])(0x[0-9a-f]+|\d+)\b")


def referenced_functions(
    elf: ELFFile,
    function_lows: Iterable[int],
    instructions: Iterable[tuple[int, int, str]],
    covered: list[tuple[int, int]],
) -> frozenset[int]:
    """The entry addresses among ``function_lows`` that the executable refers to.

    Parameters
    ----------
    elf : ELFFile
        The executable.
    function_lows : iterable of int
        Entry addresses of its functions.
    instructions : iterable of (int, int, str)
        Address, size and operand text of the instructions already disassembled.
    covered : list of (int, int)
        Address ranges those instructions cover; the rest of the executable sections is
        disassembled here.

    Returns
    -------
    frozenset of int
        The entries called, jumped to, or whose address the code or data holds.
    """
    lows = set(function_lows)
    found: set[int] = set()
    for address, size, operands in (*instructions, *_other_code(elf, covered)):
        found |= _operand_addresses(address + size, operands) & lows
    for section in elf.iter_sections():
        flags = section["sh_flags"]
        if isinstance(section, RelocationSection):
            for relocation in section.iter_relocations():
                if relocation.is_RELA() and relocation["r_addend"] in lows:
                    found.add(relocation["r_addend"])
        elif isinstance(section, SymbolTableSection) and section.name == ".dynsym":
            found |= {s["st_value"] for s in section.iter_symbols()} & lows
        elif (
            flags & _SHF_ALLOC and not flags & _SHF_EXECINSTR and section["sh_type"] != "SHT_NOBITS"
        ):
            data = section.data()
            words = (int.from_bytes(data[i : i + 8], "little") for i in range(0, len(data) - 7, 8))
            found |= set(words) & lows
    return frozenset(found)


def _operand_addresses(end: int, operands: str) -> set[int]:
    """Addresses an instruction's operand text names: immediates (call and jump targets
    among them) and ``rip``-relative locations (relative to the next instruction)."""
    found = set()
    for sign, value in _RIP_RELATIVE.findall(operands):
        offset = int(value, 0)
        found.add(end + offset if sign == "+" else end - offset)
    for value in _NUMBER.findall(_RIP_RELATIVE.sub("", operands)):
        found.add(int(value, 0))
    return found


def _other_code(elf: ELFFile, covered: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """Address, size and operand text of the instructions of the executable sections outside
    the ``covered`` ranges (start-up code, functions without line information)."""
    disassembler = Cs(CS_ARCH_X86, CS_MODE_64)
    found = []
    ranges = sorted(covered)
    for section in elf.iter_sections():
        if not section["sh_flags"] & _SHF_EXECINSTR or section["sh_type"] == "SHT_NOBITS":
            continue
        data, base = section.data(), section["sh_addr"]
        for low, high in _gaps(base, base + len(data), ranges):
            position = low
            while position < high:  # past a byte that decodes to nothing, go on after it
                stopped = position
                code = data[position - base : high - base]
                for address, size, _, operands in disassembler.disasm_lite(code, position):
                    found.append((address, size, operands))
                    stopped = address + size
                position = stopped if stopped > position else position + 1
    return found


def _gaps(low: int, high: int, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``[low, high)`` that no range of the sorted ``ranges`` covers."""
    gaps, position = [], low
    for start, end in ranges:
        if end <= position or start >= high:
            continue
        if start > position:
            gaps.append((position, start))
        position = max(position, end)
    if position < high:
        gaps.append((position, high))
    return gaps
