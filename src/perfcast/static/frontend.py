"""Parse C sources with the clang front end (libclang) and report clang's diagnostics.

Error-severity diagnostics make the input unusable (:class:`~perfcast.core.errors.InputError`);
warnings are kept and shown but do not stop the analysis.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from perfcast.core.errors import InputError, WorkError
from perfcast.static.include_paths import source_include_flags

if TYPE_CHECKING:
    from clang.cindex import TranslationUnit


@dataclass(frozen=True)
class ParsedSource:
    """One parsed translation unit and the compile flags it was parsed with."""

    path: Path
    unit: TranslationUnit
    text: str
    defines: dict[str, str]


def _clang():
    try:
        import clang.cindex as cindex
    except ImportError as error:  # pragma: no cover - depends on the installed extras
        raise InputError(
            "static analysis needs libclang: pip install 'perfcast[static]'"
        ) from error
    return cindex


@cache
def builtin_include_flags() -> tuple[str, ...]:
    """``-isystem`` flags for the compiler's own headers (stddef.h, xmmintrin.h, ...).

    The libclang wheel ships without clang's resource headers. Clang's own are preferred (an
    installed ``clang`` or versioned ``clang-NN``, else an LLVM installation's resource
    directory): gcc's intrinsics headers use builtins clang does not know, so a file using
    SSE intrinsics parses only with clang's. gcc's are the last resort.
    """
    commands = [["clang", "-print-resource-dir"]] + [
        [f"clang-{version}", "-print-resource-dir"] for version in range(21, 13, -1)
    ]
    for command in commands:
        if shutil.which(command[0]) is None:
            continue
        try:
            out = subprocess.run(command, capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        path = Path(out.strip()) / "include"
        if (path / "stddef.h").is_file():
            return ("-isystem", str(path))
    installed = sorted(Path("/usr/lib").glob("llvm-*/lib/clang/*/include/stddef.h"), reverse=True)
    if installed:
        return ("-isystem", str(installed[0].parent))
    if shutil.which("gcc") is not None:
        try:
            command = ["gcc", "-print-file-name=include"]
            out = subprocess.run(command, capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            return ()
        path = Path(out.strip())
        if (path / "stddef.h").is_file():
            return ("-isystem", str(path))
    return ()


def command_line_defines(compile_args: Sequence[str]) -> dict[str, str]:
    """Macros defined by ``-DNAME`` / ``-DNAME=VALUE`` / ``-D NAME=VALUE`` flags."""
    defines: dict[str, str] = {}
    args = list(compile_args)
    for i, arg in enumerate(args):
        if arg == "-D" and i + 1 < len(args):
            text = args[i + 1]
        elif arg.startswith("-D") and len(arg) > 2:
            text = arg[2:]
        else:
            continue
        name, _, value = text.partition("=")
        defines[name] = value if _ else "1"
    return defines


def parse_sources(
    sources: Sequence[str | Path], compile_args: Sequence[str]
) -> tuple[list[ParsedSource], list[str]]:
    """Parse every source; return the units and the non-fatal diagnostics as text.

    Raises
    ------
    InputError
        When a file is missing or clang reports an error (the first one, with the count of
        the others).
    """
    cindex = _clang()
    try:
        index = cindex.Index.create()
    except cindex.LibclangError as error:
        raise WorkError(f"cannot load libclang: {error}") from error
    options = cindex.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    parsed: list[ParsedSource] = []
    warnings: list[str] = []
    defines = command_line_defines(compile_args)
    if any(a.startswith("-fopenmp") for a in compile_args):
        # libclang hides the statements under OpenMP directives; without the flag the pragmas
        # are ignored and the code reads as its sequential version.
        compile_args = [a for a in compile_args if not a.startswith("-fopenmp")]
        warnings.append(
            "note: -fopenmp dropped for the analysis: counts are those of the sequential code "
            "(a parallel region's body counts once, not once per thread)"
        )
    for source in sources:
        path = Path(source)
        if not path.is_file():
            raise InputError("no such source file", path)
        text = path.read_text(errors="replace")
        try:
            arguments = [*compile_args, *source_include_flags(), *builtin_include_flags()]
            unit = index.parse(str(path), args=arguments, options=options)
        except cindex.TranslationUnitLoadError as error:
            raise InputError(f"clang could not parse the file: {error}", path) from error
        errors = []
        for diagnostic in unit.diagnostics:
            message = _format(diagnostic, path)
            if diagnostic.severity >= cindex.Diagnostic.Error:
                errors.append(message)
            elif diagnostic.severity >= cindex.Diagnostic.Warning:
                warnings.append(message)
        if errors:
            raise _first_error(unit, path, len(errors))
        parsed.append(ParsedSource(path, unit, text, defines))
    return parsed, warnings


def _first_error(unit: TranslationUnit, path: Path, count: int) -> InputError:
    """One line about the first of the ``count`` errors clang reports for ``path``: the file
    and line it is in (a header's own, with the chain of includes that reached it)."""
    error = _clang().Diagnostic.Error
    first = next(d for d in unit.diagnostics if d.severity >= error)
    location = first.location
    more = f" (and {count - 1} more errors)" if count > 1 else ""
    message = f"clang: {first.spelling} (column {location.column}){more}"
    if location.file is None or not location.line:
        return InputError(f"clang: {_format(first, path)}{more}", path, value=first.spelling)
    where = Path(location.file.name)
    if where != path:
        message += f"; {include_chain(unit, where)}"
    return InputError(message, where, location.line, value=first.spelling)


def include_chain(unit: TranslationUnit, header: Path) -> str:
    """``included from b.h:3, from a.c:1``: how the translation unit reached a header."""
    parent: dict[str, tuple[str, int]] = {}
    for inclusion in unit.get_includes():
        name = str(inclusion.include.name)
        parent.setdefault(name, (str(inclusion.location.file.name), inclusion.location.line))
    steps, current, seen = [], str(header), set()
    while current in parent and current not in seen:
        seen.add(current)
        current, line = parent[current]
        steps.append(f"{current}:{line}")
    return "included from " + ", from ".join(steps) if steps else "in a header"


def _format(diagnostic, path: Path) -> str:
    location = diagnostic.location
    where = str(location.file.name) if location.file else str(path)
    if location.line:
        where += f":{location.line}:{location.column}"
    return f"{where}: {_severity(diagnostic.severity)}: {diagnostic.spelling}"


def _severity(level: int) -> str:
    return {1: "note", 2: "warning", 3: "error", 4: "fatal error"}.get(level, "note")
