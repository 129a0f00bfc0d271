"""Read an x86-64 ELF executable built with ``-g``: functions, DWARF line table, disassembly.

Each instruction of a function defined in a file with line information becomes a
:class:`BinaryInstruction` carrying its address, mnemonic, category, memory accesses, source file
and line, and (for branches) its direct target. Functions without line information (C runtime
start-up code, PLT stubs) are left out.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from pathlib import Path

from capstone import CS_ARCH_X86, CS_GRP_CALL, CS_GRP_JUMP, CS_GRP_RET, CS_MODE_64, Cs
from capstone.x86 import X86_OP_IMM
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from perfcast.errors import InputError
from perfcast.static.x86_categories import category_of, memory_access


@dataclass(frozen=True)
class BinaryInstruction:
    """One machine instruction of a function with its source position.

    Attributes
    ----------
    address, size : int
        Link-time virtual address and length in bytes.
    mnemonic, operands : str
        Capstone's text (Intel syntax).
    category : str
        One of :data:`perfcast.static.x86_categories.CATEGORIES`.
    reads, writes : bool
        Whether an explicit memory operand is read / written.
    file : str or None
        Absolute source path from the line table (None when the row has no file).
    line : int
        Source line (0 when the compiler gave none).
    kind : str
        ``"jump"`` (unconditional), ``"branch"`` (conditional), ``"return"``, ``"call"`` or
        ``""`` for an instruction that falls through.
    target : int or None
        Direct target address of a jump, branch or call.
    """

    address: int
    size: int
    mnemonic: str
    operands: str
    category: str
    reads: bool
    writes: bool
    file: str | None
    line: int
    kind: str = ""
    target: int | None = None

    @property
    def end(self) -> int:
        """Address of the next instruction."""
        return self.address + self.size


@dataclass(frozen=True)
class BinaryFunction:
    """A function symbol of the executable with its disassembled instructions."""

    name: str
    low: int
    high: int
    instructions: tuple[BinaryInstruction, ...]


@dataclass(frozen=True)
class Binary:
    """The functions of an executable that carry DWARF line information."""

    path: Path
    functions: dict[str, BinaryFunction]

    def function_at(self, address: int) -> BinaryFunction | None:
        """The function whose address range holds ``address``."""
        for function in self.functions.values():
            if function.low <= address < function.high:
                return function
        return None


class _LineTable:
    """Address -> (file, line) lookup over all line-table rows of an executable."""

    def __init__(self, rows: list[tuple[int, str | None, int, bool]]) -> None:
        rows.sort(key=lambda row: (row[0], not row[3]))
        self._addresses = [row[0] for row in rows]
        self._rows = rows

    def lookup(self, address: int) -> tuple[str | None, int]:
        index = bisect.bisect_right(self._addresses, address) - 1
        if index < 0 or self._rows[index][3]:  # before the first row or past an end_sequence
            return None, 0
        return self._rows[index][1], self._rows[index][2]


def read_binary(path: str | os.PathLike[str]) -> Binary:
    """Disassemble the functions of an x86-64 ELF executable built with ``-g``.

    Parameters
    ----------
    path : path-like
        The executable (or shared object).

    Returns
    -------
    Binary

    Raises
    ------
    InputError
        When the file is missing, not ELF, not x86-64, or has no DWARF line table.
    """
    path = Path(path)
    try:
        stream = path.open("rb")
    except OSError as error:
        raise InputError(f"cannot open binary: {error.strerror}", str(path)) from error
    with stream:
        try:
            elf = ELFFile(stream)
        except ELFError as error:
            raise InputError(f"not an ELF file: {error}", str(path)) from error
        if elf["e_machine"] != "EM_X86_64":
            raise InputError(f"only x86-64 is supported, not {elf['e_machine']}", str(path))
        if not elf.has_dwarf_info() or elf.get_section_by_name(".debug_line") is None:
            raise InputError("no DWARF line table: build with -g", str(path))
        lines = _read_line_table(elf)
        symbols = _function_symbols(elf)
        functions = _disassemble(elf, symbols, lines)
    return Binary(path, functions)


def _read_line_table(elf: ELFFile) -> _LineTable:
    dwarf = elf.get_dwarf_info()
    rows: list[tuple[int, str | None, int, bool]] = []
    for unit in dwarf.iter_CUs():
        program = dwarf.line_program_for_CU(unit)
        if program is None:
            continue
        top = unit.get_top_DIE()
        comp_dir = (
            _text(top.attributes["DW_AT_comp_dir"].value)
            if "DW_AT_comp_dir" in (top.attributes)
            else ""
        )
        files = _file_names(program, comp_dir)
        for entry in program.get_entries():
            state = entry.state
            if state is None:
                continue
            name = files.get(state.file)
            rows.append((state.address, name, state.line, bool(state.end_sequence)))
    return _LineTable(rows)


def _file_names(program, comp_dir: str) -> dict[int, str]:  # noqa: ANN001 (pyelftools type)
    """File index -> absolute path; DWARF 5 numbers files from 0, earlier versions from 1."""
    header = program.header
    directories = [_text(d) for d in header["include_directory"]]
    first = 0 if header["version"] >= 5 else 1
    if header["version"] < 5:
        directories.insert(0, comp_dir)
    names = {}
    for index, entry in enumerate(header["file_entry"], start=first):
        directory = directories[entry.dir_index] if entry.dir_index < len(directories) else ""
        name = os.path.join(comp_dir, directory, _text(entry.name))
        names[index] = os.path.normpath(name)
    return names


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _function_symbols(elf: ELFFile) -> list[tuple[str, int, int]]:
    table = elf.get_section_by_name(".symtab")
    if table is None:
        raise InputError("the binary has no symbol table (stripped?)", elf.stream.name)
    found = {}
    for symbol in table.iter_symbols():
        if symbol["st_info"]["type"] == "STT_FUNC" and symbol["st_value"] and symbol["st_size"]:
            found[symbol.name] = (
                symbol.name,
                symbol["st_value"],
                symbol["st_value"] + symbol["st_size"],
            )
    return sorted(found.values(), key=lambda item: item[1])


def _disassemble(
    elf: ELFFile, symbols: list[tuple[str, int, int]], lines: _LineTable
) -> dict[str, BinaryFunction]:
    text = elf.get_section_by_name(".text")
    if text is None:
        raise InputError("the binary has no .text section", elf.stream.name)
    code, base = text.data(), text["sh_addr"]
    disassembler = Cs(CS_ARCH_X86, CS_MODE_64)
    disassembler.detail = True
    functions = {}
    for name, low, high in symbols:
        if not base <= low < base + len(code) or lines.lookup(low)[1] == 0:
            continue
        instructions = tuple(
            _instruction(insn, lines)
            for insn in disassembler.disasm(code[low - base : high - base], low)
        )
        if instructions and instructions[-1].end != high:
            raise InputError(
                f"cannot disassemble function {name} past {instructions[-1].end:#x}",
                elf.stream.name,
            )
        functions[name] = BinaryFunction(name, low, high, instructions)
    return functions


def _instruction(insn, lines: _LineTable) -> BinaryInstruction:  # noqa: ANN001 (CsInsn)
    file, line = lines.lookup(insn.address)
    reads, writes = memory_access(insn)
    kind, target = "", None
    if insn.group(CS_GRP_RET):
        kind = "return"
    elif insn.group(CS_GRP_CALL) or insn.group(CS_GRP_JUMP):
        kind = "call" if insn.group(CS_GRP_CALL) else "jump" if insn.mnemonic == "jmp" else "branch"
        operand = insn.operands[0] if len(insn.operands) == 1 else None
        if operand is not None and operand.type == X86_OP_IMM:
            target = operand.imm
    return BinaryInstruction(
        address=insn.address,
        size=insn.size,
        mnemonic=insn.mnemonic,
        operands=insn.op_str,
        category=category_of(insn.mnemonic),
        reads=reads,
        writes=writes,
        file=file,
        line=line,
        kind=kind,
        target=target,
    )
