"""Read an x86-64 ELF executable built with ``-g``: functions, DWARF line table, disassembly.

Each instruction of a function defined in a file with line information becomes a
:class:`BinaryInstruction` carrying its address, mnemonic, category, memory accesses, source file
and line, and (for branches) its direct target. Functions without line information (C runtime
start-up code, PLT stubs) are left out.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from capstone import CS_ARCH_X86, CS_GRP_CALL, CS_GRP_JUMP, CS_GRP_RET, CS_MODE_64, Cs
from capstone.x86 import X86_OP_IMM, X86_OP_MEM, X86_REG_RIP
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from perfcast.core.errors import InputError
from perfcast.static.library_calls import NORETURN_CALLS
from perfcast.static.references import referenced_functions
from perfcast.static.x86_categories import category_of, memory_access


@dataclass(frozen=True)
class InlineFrame:
    """A function inlined at a call site (``DW_TAG_inlined_subroutine``).

    Attributes
    ----------
    callee : str
        Name of the inlined function.
    call_file : str or None
        Absolute path of the file holding the call.
    call_line : int
        Line of the call.
    call_column : int
        Column of the call (0 when the compiler gave none); not compared, so that the frames
        of one line's calls compare as before.
    """

    callee: str
    call_file: str | None
    call_line: int
    call_column: int = field(default=0, compare=False)


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
        ``"jump"`` (unconditional), ``"branch"`` (conditional), ``"return"``, ``"call"``,
        ``"noreturn"`` (a call of a function that does not return, such as ``exit``) or ``""``
        for an instruction that falls through.
    target : int or None
        Direct target address of a jump, branch or call.
    inlined : tuple of InlineFrame
        The inlined calls the instruction comes from, outermost first (empty when it belongs to
        the function itself); ``file`` and ``line`` are then in the innermost callee.
    column : int
        Source column from the line table (0 when the compiler gave none).
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
    inlined: tuple[InlineFrame, ...] = ()
    column: int = 0

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
    """The functions of an executable that carry DWARF line information.

    ``callees`` names the addresses calls can reach: every function symbol and PLT stub.
    ``referenced`` holds the entries of the functions anything in the file calls, jumps to
    or holds the address of (:mod:`perfcast.static.references`); None when not known.
    """

    path: Path
    functions: dict[str, BinaryFunction]
    callees: Mapping[int, str] = field(default_factory=dict)
    referenced: frozenset[int] | None = None


class _LineTable:
    """Address -> (file, line) lookup over all line-table rows of an executable (rows:
    address, file, line, end of sequence, column)."""

    def __init__(self, rows: list[tuple[int, str | None, int, bool, int]]) -> None:
        rows.sort(key=lambda row: (row[0], not row[3]))
        self._addresses = [row[0] for row in rows]
        self._rows = rows

    def lookup(self, address: int) -> tuple[str | None, int]:
        index = bisect.bisect_right(self._addresses, address) - 1
        if index < 0 or self._rows[index][3]:  # before the first row or past an end_sequence
            return None, 0
        return self._rows[index][1], self._rows[index][2]

    def column(self, address: int) -> int:
        """The source column of the row holding ``address`` (0 when none)."""
        index = bisect.bisect_right(self._addresses, address) - 1
        if index < 0 or self._rows[index][3]:
            return 0
        return self._rows[index][4]


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
        lines, inlined, noreturn = _read_debug_info(elf)
        symbols = _function_symbols(elf)
        functions = _disassemble(elf, symbols, lines, inlined)
        names = {low: name for name, low, _ in symbols} | _plt_stubs(elf)
        referenced = _reached_functions(elf, [low for _, low, _ in symbols], functions)
    stops = {address for address, name in names.items() if name in noreturn | NORETURN}
    functions = {name: _mark_noreturn(f, stops) for name, f in functions.items()}
    while True:  # a function that can neither return nor jump away ends the program too
        ending = {f.low for f in functions.values() if f.low not in stops and not _leaves(f)}
        if not ending:
            return Binary(path, functions, names, referenced)
        stops |= ending
        functions = {name: _mark_noreturn(f, stops) for name, f in functions.items()}


def _reached_functions(
    elf: ELFFile, lows: list[int], functions: dict[str, BinaryFunction]
) -> frozenset[int]:
    """The entries something can reach (:func:`referenced_functions`), not counting what only
    the code of functions nothing reaches refers to (a function called only by an uncalled
    one, verify20f K12), repeated until nothing more drops out; ``main`` is always reached."""
    covered = [(f.low, f.high) for f in functions.values()]
    main = {f.low for f in functions.values() if f.name == "main"}
    live = list(functions.values())
    while True:
        referenced = referenced_functions(
            elf,
            lows,
            [(i.address, i.size, i.operands) for f in live for i in f.instructions],
            covered,
        )
        reached = [f for f in live if f.low in referenced or f.low in main]
        if len(reached) == len(live):
            return referenced
        live = reached


def _leaves(function: BinaryFunction) -> bool:
    """True when a path of the function may give control back: a return, an indirect jump,
    a jump out of it (a tail call), or a call that returns as its last instruction."""
    for insn in function.instructions:
        if insn.kind == "return":
            return True
        if insn.kind == "jump" and (
            insn.target is None or not function.low <= insn.target < function.high
        ):
            return True
    last = function.instructions[-1] if function.instructions else None
    return last is None or last.kind in ("call", "")


NORETURN = NORETURN_CALLS
"""C library functions that never return (besides those DWARF marks ``DW_AT_noreturn``)."""


def _mark_noreturn(function: BinaryFunction, stops: set[int]) -> BinaryFunction:
    instructions = tuple(
        replace(insn, kind="noreturn") if insn.kind == "call" and insn.target in stops else insn
        for insn in function.instructions
    )
    return replace(function, instructions=instructions)


def _plt_stubs(elf: ELFFile) -> dict[int, str]:
    """PLT stub address -> name of the imported function it jumps to."""
    slots = {}
    for section_name in (".rela.plt", ".rela.dyn"):
        section = elf.get_section_by_name(section_name)
        if section is None or not hasattr(section, "iter_relocations"):
            continue
        symbols = elf.get_section(section["sh_link"])
        if not isinstance(symbols, SymbolTableSection):
            continue
        for relocation in section.iter_relocations():
            if relocation["r_info_sym"]:
                slots[relocation["r_offset"]] = symbols.get_symbol(relocation["r_info_sym"]).name
    disassembler = Cs(CS_ARCH_X86, CS_MODE_64)
    disassembler.detail = True
    stubs = {}
    for section_name in (".plt", ".plt.sec", ".plt.got"):
        section = elf.get_section_by_name(section_name)
        if section is None:
            continue
        previous = None
        for insn in disassembler.disasm(section.data(), section["sh_addr"]):
            operand = insn.operands[0] if insn.group(CS_GRP_JUMP) and insn.operands else None
            if (
                operand is not None
                and operand.type == X86_OP_MEM
                and operand.mem.base == X86_REG_RIP
            ):
                name = slots.get(insn.address + insn.size + operand.mem.disp)
                if name:
                    stubs[insn.address] = name
                    if previous is not None and previous.mnemonic == "endbr64":
                        stubs[previous.address] = name
            previous = insn
    return stubs


_InlineRange = tuple[int, int, tuple[InlineFrame, ...]]


def _read_debug_info(elf: ELFFile) -> tuple[_LineTable, list[_InlineRange], set[str]]:
    """The line table, the address ranges of inlined calls (with their frame chains), and the
    names of functions DWARF marks as not returning."""
    dwarf = elf.get_dwarf_info()
    rows: list[tuple[int, str | None, int, bool, int]] = []
    inlined: list[_InlineRange] = []
    noreturn: set[str] = set()
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
            rows.append(
                (state.address, name, state.line, bool(state.end_sequence), state.column or 0)
            )
        base = top.attributes["DW_AT_low_pc"].value if "DW_AT_low_pc" in top.attributes else 0
        _collect_inlined(top, (), files, dwarf, unit, base, inlined)
        for die in top.iter_children():
            if die.tag == "DW_TAG_subprogram" and "DW_AT_noreturn" in die.attributes:
                noreturn.add(_callee_name(die))
    return _LineTable(rows), inlined, noreturn


def _collect_inlined(die, frames, files, dwarf, unit, base, found) -> None:  # noqa: ANN001
    for child in die.iter_children():
        inner = frames
        if child.tag == "DW_TAG_inlined_subroutine":
            attributes = child.attributes
            frame = InlineFrame(
                _callee_name(child),
                files.get(attributes["DW_AT_call_file"].value)
                if "DW_AT_call_file" in attributes
                else None,
                attributes["DW_AT_call_line"].value if "DW_AT_call_line" in attributes else 0,
                attributes["DW_AT_call_column"].value if "DW_AT_call_column" in attributes else 0,
            )
            inner = (*frames, frame)
            found.extend((low, high, inner) for low, high in _ranges(child, dwarf, unit, base))
        _collect_inlined(child, inner, files, dwarf, unit, base, found)


def _callee_name(die) -> str:  # noqa: ANN001 (pyelftools DIE)
    seen = 0
    while seen < 8:
        if "DW_AT_name" in die.attributes:
            return _text(die.attributes["DW_AT_name"].value)
        for link in ("DW_AT_abstract_origin", "DW_AT_specification"):
            if link in die.attributes:
                die = die.get_DIE_from_attribute(link)
                break
        else:
            break
        seen += 1
    return "?"


def _ranges(die, dwarf, unit, base: int) -> list[tuple[int, int]]:  # noqa: ANN001
    attributes = die.attributes
    if "DW_AT_low_pc" in attributes and "DW_AT_high_pc" in attributes:
        low = attributes["DW_AT_low_pc"].value
        high = attributes["DW_AT_high_pc"]
        return [(low, high.value if high.form == "DW_FORM_addr" else low + high.value)]
    if "DW_AT_ranges" not in attributes:
        return []
    result = []
    entries = dwarf.range_lists().get_range_list_at_offset(
        attributes["DW_AT_ranges"].value, cu=unit
    )
    for entry in entries:
        if hasattr(entry, "base_address"):
            base = entry.base_address
        elif entry.is_absolute:
            result.append((entry.begin_offset, entry.end_offset))
        else:
            result.append((base + entry.begin_offset, base + entry.end_offset))
    return result


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
    if not isinstance(table, SymbolTableSection):
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
    elf: ELFFile,
    symbols: list[tuple[str, int, int]],
    lines: _LineTable,
    inlined: list[_InlineRange],
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
        inside = [r for r in inlined if r[0] < high and r[1] > low]
        instructions = tuple(
            _instruction(insn, lines, _frames_at(insn.address, inside))
            for insn in disassembler.disasm(code[low - base : high - base], low)
        )
        if instructions and instructions[-1].end != high:
            raise InputError(
                f"cannot disassemble function {name} past {instructions[-1].end:#x}",
                elf.stream.name,
            )
        functions[name] = BinaryFunction(name, low, high, instructions)
    return functions


def _frames_at(address: int, ranges: list[_InlineRange]) -> tuple[InlineFrame, ...]:
    """The deepest chain of inlined calls whose range holds the address."""
    best: tuple[InlineFrame, ...] = ()
    for low, high, frames in ranges:
        if low <= address < high and len(frames) > len(best):
            best = frames
    return best


def _instruction(
    insn,  # noqa: ANN001 (CsInsn)
    lines: _LineTable,
    inlined: tuple[InlineFrame, ...],
) -> BinaryInstruction:
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
        inlined=inlined,
        column=lines.column(insn.address) if line else 0,
    )
