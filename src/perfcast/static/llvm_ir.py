"""LLVM IR of C sources: compile with clang, read the functions' basic blocks with llvmlite.

The graph builder (:mod:`perfcast.static.hcfg`) works on the plain structures defined here
(:class:`IRFunction`, :class:`IRBlock`, :class:`IRInstruction`), never on llvmlite objects, so
another front end (a GPU compiler's IR, a different binding) can feed it by producing them.

The IR is produced by ``clang -S -emit-llvm -O1 -g`` with loop unrolling, vectorization and
inlining off: ``-O1`` promotes locals to SSA registers (so memory instructions are the program's
array accesses, not spills of ``-O0``), keeps one loop per source loop, no function absorbs
another's loops, and ``-g`` attaches source lines. Source
lines of loops come from each loop's ``!llvm.loop`` metadata (its first ``DILocation``, the line
of the ``for``/``while`` keyword); lines of functions from their ``DISubprogram``. These metadata
records are read from the IR text, a machine-written format; the C source is never parsed here.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfcast.core.errors import InputError, WorkError
from perfcast.static.include_paths import source_include_flags

COMPILE_FLAGS = (
    "-S",
    "-emit-llvm",
    "-O1",
    "-g",
    "-fno-unroll-loops",
    "-fno-vectorize",
    "-fno-inline",
)
"""Flags giving one IR loop per source loop, each in its own function, with source lines."""

CLANG_NAMES = ("clang-16", "clang")
"""Compilers tried in order when the environment variable ``PERFCAST_CLANG`` is not set."""

_METADATA = re.compile(r"^!(\d+) = (?:distinct )?(.*)$")
_LINE = re.compile(r"\bline: (\d+)")
_REFERENCES = re.compile(r"!(\d+)")
_ATTACHMENT = re.compile(r"!(dbg|llvm\.loop|prof) !(\d+)")
_WEIGHTS = re.compile(r'!"branch_weights"((?:, i32 \d+)+)')

_SCALAR_BYTES = {"double": 8, "float": 4, "half": 2, "fp128": 16, "x86_fp80": 16, "ptr": 8}


@dataclass(frozen=True)
class IRInstruction:
    """One instruction: opcode, identities of its result and operands, and what it touches.

    ``identity`` and ``operands`` are opaque integers naming values (equal integers, same value);
    ``callee`` is the called function's name for calls; ``access_bytes`` the size of the value a
    load or store moves (0 otherwise); ``address`` the operand holding the address it accesses;
    ``constants`` the integer constants among the operands of an ``icmp`` (trip counts).
    """

    opcode: str
    identity: int
    operands: tuple[int, ...]
    callee: str = ""
    access_bytes: int = 0
    address: int | None = None
    line: int | None = None
    constants: tuple[int, ...] = ()


@dataclass(frozen=True)
class IRBlock:
    """A basic block: its instructions, successors (block indices) and branch metadata.

    ``successors`` are in branch order (true target first for a conditional branch);
    ``branch_weights`` are the profile counts of a ``!prof`` attachment in that order, if any;
    ``loop_line`` is the source line of the loop whose latch branch ends this block, if any.
    """

    index: int
    name: str
    identity: int
    instructions: tuple[IRInstruction, ...]
    successors: tuple[int, ...]
    branch_weights: tuple[int, ...] | None = None
    loop_line: int | None = None


@dataclass(frozen=True)
class IRFunction:
    """A defined function: name, source line and blocks (entry first)."""

    name: str
    line: int | None
    blocks: tuple[IRBlock, ...]
    arguments: tuple[int, ...] = field(default=())


def find_clang() -> str:
    """The clang executable: ``$PERFCAST_CLANG``, else the first of :data:`CLANG_NAMES` found.

    Raises
    ------
    WorkError
        When no clang is installed.
    """
    return _find_tool(
        "PERFCAST_CLANG", CLANG_NAMES, "no clang found to compile C to LLVM IR (install clang-16)"
    )


def _find_tool(variable: str, names: Sequence[str], missing: str) -> str:
    """The program the environment ``variable`` names, else the first of ``names`` installed;
    WorkError with ``missing`` when there is none."""
    named = os.environ.get(variable)
    if named:
        if shutil.which(named) is None:
            raise WorkError(f"{variable} names '{named}', which is not installed")
        return named
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise WorkError(missing)


def compile_to_ir(
    source: str | Path,
    flags: Sequence[str] = (),
    *,
    extra_flags: Sequence[str] = (),
) -> str:
    """Compile one C file to textual LLVM IR.

    Parameters
    ----------
    source : str or Path
        The C file.
    flags : sequence of str
        Further clang flags (``-D``, ``-I``, ...).
    extra_flags : sequence of str
        Flags appended after :data:`COMPILE_FLAGS` and ``flags`` (instrumentation).

    Returns
    -------
    str
        The IR text.

    Raises
    ------
    InputError
        When the file does not exist or clang rejects it (with the compiler's message).
    """
    path = Path(source)
    if not path.is_file():
        raise InputError("no such C file", path, reason="missing-file")
    with tempfile.TemporaryDirectory(prefix="perfcast-ir-") as folder:
        output = Path(folder) / "out.ll"
        command = [
            find_clang(),
            *COMPILE_FLAGS,
            *source_include_flags(),
            *flags,
            *extra_flags,
            str(path),
            "-o",
            str(output),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            message = done.stderr.strip() or f"clang exited with status {done.returncode}"
            raise InputError(
                f"does not compile:\n{message}", path, reason="compile-error", value=message
            )
        if not output.is_file():  # a linker input by its suffix, or -fsyntax-only
            raise InputError(
                "clang made no code of it: not a C file by its name (.c), or a flag stops "
                "clang before code generation",
                path,
                reason="compile-error",
                value=done.stderr.strip(),
            )
        return output.read_text(encoding="utf-8", errors="replace")  # file names: any bytes


PROFDATA_NAMES = ("llvm-profdata-16", "/usr/lib/llvm-16/bin/llvm-profdata", "llvm-profdata")
"""``llvm-profdata`` programs tried in order (its version must match clang's)."""


def _find_profdata() -> str:
    return _find_tool(
        "PERFCAST_LLVM_PROFDATA",
        PROFDATA_NAMES,
        "no llvm-profdata found to read branch profiles (install llvm-16)",
    )


def profiled_ir(
    source: str | Path,
    flags: Sequence[str] = (),
    arguments: Sequence[str] = (),
    timeout: float = 600.0,
) -> str:
    """IR of a C program annotated with the branch counts of one instrumented run.

    The program (it needs ``main``) is built with ``-fprofile-instr-generate``, run once with
    ``arguments``, its raw profile merged with ``llvm-profdata``, and the IR compiled again with
    ``-fprofile-instr-use``: every conditional branch then carries ``!prof`` branch weights
    (the counts plus one).

    Raises
    ------
    InputError
        When the program does not compile or exits with an error.
    WorkError
        When the profiling tools are missing.
    """
    path = Path(source)
    if not path.is_file():
        raise InputError("no such C file", path, reason="missing-file")
    with tempfile.TemporaryDirectory(prefix="perfcast-profile-") as name:
        folder = Path(name)
        binary, raw, merged = folder / "program", folder / "run.profraw", folder / "run.profdata"
        command = [find_clang(), "-O1", "-fprofile-instr-generate", *flags, str(path)]
        built = subprocess.run(
            [*command, "-o", str(binary), "-lm"], capture_output=True, text=True, check=False
        )
        if built.returncode != 0:
            message = built.stderr.strip() or f"clang exited with status {built.returncode}"
            raise InputError(
                f"does not build for profiling:\n{message}", path, reason="compile-error"
            )
        environment = {**os.environ, "LLVM_PROFILE_FILE": str(raw)}
        try:
            ran = subprocess.run(
                [str(binary), *arguments],
                capture_output=True,
                text=True,
                errors="replace",  # the program may print any bytes
                check=False,
                env=environment,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as error:
            raise InputError(
                f"the profiled run took longer than {timeout:.0f} s", path, reason="run-failed"
            ) from error
        if ran.returncode != 0 or not raw.exists():
            tail = ran.stderr.strip()[-500:]
            raise InputError(
                f"the profiled run exited with status {ran.returncode}: {tail}",
                path,
                reason="run-failed",
            )
        done = subprocess.run(
            [_find_profdata(), "merge", "-o", str(merged), str(raw)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise WorkError(f"llvm-profdata could not merge the profile: {done.stderr.strip()}")
        return compile_to_ir(path, flags, extra_flags=[f"-fprofile-instr-use={merged}"])


def _address(value: object) -> int:
    return int(ctypes.cast(value._ptr, ctypes.c_void_p).value or 0)  # type: ignore[attr-defined]


def _metadata(text: str) -> dict[int, str]:
    table: dict[int, str] = {}
    for line in text.splitlines():
        if line.startswith("!"):
            match = _METADATA.match(line)
            if match:
                table[int(match.group(1))] = match.group(2)
    return table


def _line_of(metadata: dict[int, str], number: int) -> int | None:
    record = metadata.get(number, "")
    match = _LINE.search(record) if record.startswith(("!DILocation", "!DISubprogram")) else None
    return int(match.group(1)) if match else None


def _loop_line(metadata: dict[int, str], number: int) -> int | None:
    """The first DILocation of a loop's metadata node: where the loop starts."""
    record = metadata.get(number, "")
    for reference in _REFERENCES.findall(record):
        line = _line_of(metadata, int(reference))
        if line is not None:
            return line
    return None


def _bytes_of(type_text: str) -> int:
    type_text = type_text.strip()
    if type_text.startswith("<") and " x " in type_text:
        count, _, element = type_text.strip("<>").partition(" x ")
        return int(count) * _bytes_of(element)
    if type_text.startswith("i") and type_text[1:].isdigit():
        return max(1, int(type_text[1:]) // 8)
    return _SCALAR_BYTES.get(type_text, 8)


def _integer_constants(operands: list[Any]) -> tuple[int, ...]:
    values = []
    for operand in operands:
        if operand.is_constant and str(operand.type).startswith("i"):
            try:
                value = operand.get_constant_value(signed_int=True)
            except (ValueError, RuntimeError):
                continue
            if isinstance(value, int):
                values.append(value)
    return tuple(values)


def _attachments(text: str) -> dict[str, int]:
    return {kind: int(number) for kind, number in _ATTACHMENT.findall(text)}


def parse_ir(text: str, source: str | Path = "<ir>") -> list[IRFunction]:
    """The defined functions of an IR module, as plain structures.

    Parameters
    ----------
    text : str
        Textual LLVM IR (as :func:`compile_to_ir` returns).
    source : str or Path
        Name of the C file, for error messages.

    Returns
    -------
    list of IRFunction
        In module order, declarations left out.
    """
    import llvmlite.binding as llvm

    try:
        module = llvm.parse_assembly(text)
    except RuntimeError as error:
        raise InputError(f"LLVM cannot read the IR: {error}", source, reason="bad-ir") from error
    metadata = _metadata(text)
    heads, bodies = _function_texts(text)
    functions = []
    for function in module.functions:
        if function.is_declaration:
            continue
        line = _line_of(metadata, _attachments(heads.get(function.name, "")).get("dbg", -1))
        blocks = list(function.blocks)
        lines = bodies.get(function.name, [])
        if len(lines) != sum(1 for block in blocks for _ in block.instructions):
            lines = []  # the text does not line up with the instructions: no metadata then
        at = iter(lines)
        index_of = {_address(block): index for index, block in enumerate(blocks)}
        parsed = [
            _block(block, index, index_of, metadata, at) for index, block in enumerate(blocks)
        ]
        arguments = tuple(_address(argument) for argument in function.arguments)
        functions.append(IRFunction(function.name, line, tuple(parsed), arguments))
    return functions


def _function_texts(text: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Each defined function's ``define`` line and its instruction lines, in order.

    Metadata attachments (``!dbg``, ``!llvm.loop``, ``!prof``) are read from these lines of the
    IR as written, whose metadata numbers are the module's; llvmlite prints a single
    instruction with numbers of its own. Calls of ``llvm.dbg.*`` intrinsics are left out, as
    newer LLVM versions read them as debug records rather than instructions.
    """
    heads: dict[str, str] = {}
    bodies: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("define "):
            name = line.split("@", 1)[1].split("(", 1)[0].strip('"')
            heads[name] = line
            current = bodies.setdefault(name, [])
        elif line.startswith("}"):
            current = None
        elif current is not None and line.startswith("  ") and not line.lstrip().startswith(";"):
            stripped = line.strip()
            if stripped.startswith(("call void @llvm.dbg.", "#dbg_")):
                continue
            current.append(stripped)
    return heads, bodies


def _block(
    block: object,
    index: int,
    index_of: dict[int, int],
    metadata: dict[int, str],
    lines: Iterator[str],
) -> IRBlock:
    instructions = []
    terminator = None
    for instruction in block.instructions:  # type: ignore[attr-defined]
        opcode = instruction.opcode
        operands = list(instruction.operands)
        attached = _attachments(next(lines, ""))
        callee = ""
        access = 0
        address = None
        if opcode == "call":
            callee = operands[-1].name if operands else ""
            if callee.startswith("llvm.dbg."):
                continue
        elif opcode == "load":
            access = _bytes_of(str(instruction.type))
            address = _address(operands[0])
        elif opcode == "store":
            access = _bytes_of(str(operands[0].type))
            address = _address(operands[1])
        constants = _integer_constants(operands) if opcode == "icmp" else ()
        instructions.append(
            IRInstruction(
                opcode=opcode,
                identity=_address(instruction),
                operands=tuple(_address(operand) for operand in operands),
                callee=callee,
                access_bytes=access,
                address=address,
                line=_line_of(metadata, attached.get("dbg", -1)),
                constants=constants,
            )
        )
        terminator = (instruction, operands, attached)
    successors: tuple[int, ...] = ()
    weights = None
    loop_line = None
    if terminator is not None:
        instruction, operands, attached = terminator
        targets = [index_of[_address(op)] for op in operands if _address(op) in index_of]
        if instruction.opcode == "br" and len(targets) == 2:
            targets = [targets[1], targets[0]]  # LLVM keeps a branch's targets false-first
        successors = tuple(targets)
        if "prof" in attached:
            found = _WEIGHTS.search(metadata.get(attached["prof"], ""))
            if found:
                weights = tuple(int(part.split()[-1]) for part in found.group(1).split(",")[1:])
        if "llvm.loop" in attached:
            loop_line = _loop_line(metadata, attached["llvm.loop"])
    return IRBlock(
        index=index,
        name=block.name or f"bb{index}",  # type: ignore[attr-defined]
        identity=_address(block),
        instructions=tuple(instructions),
        successors=successors,
        branch_weights=weights,
        loop_line=loop_line,
    )
