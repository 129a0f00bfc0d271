"""Command-line part of instruction-mix models: ``--binary a.out`` on top of the static analysis.

:func:`add_binary_arguments` adds the options to a parser that already has ``sources`` (positional
source files) and ``param`` (``--param NAME``, repeated); :func:`run_binary` runs the work.
The kernels come from ``perfcast.static.analyze`` on the sources, or from a static report JSON
(``--report``) written earlier.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import sympy

from perfcast.core.errors import InputError, WorkError
from perfcast.static.binary import read_binary
from perfcast.static.instruction_mix import COUNT_KEYS, InstructionMix, instruction_mix
from perfcast.static.mix_output import mix_to_json, mix_to_python
from perfcast.static.report import StaticKernel, StaticReport, parse_expression

BINARY_OPTIONS = ("binary", "report", "attribution", "mix_json", "mix_python")
"""Names of the attributes :func:`add_binary_arguments` adds to the parsed arguments."""


def add_binary_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--binary``, ``--report``, ``--attribution``, ``--mix-json`` and ``--mix-python``."""
    group = parser.add_argument_group("instruction-mix models (Mira)")
    group.add_argument(
        "--binary", type=Path, help="ELF executable built with -g from the sources: model its mix"
    )
    group.add_argument(
        "--report",
        type=Path,
        help="static report JSON to take the kernel counts from instead of analyzing the sources",
    )
    group.add_argument(
        "--attribution",
        choices=("cfg", "line"),
        default="cfg",
        help="map instructions to kernels through machine loops (cfg, default) or lines only",
    )
    group.add_argument("--mix-json", type=Path, help="write the instruction-mix models as JSON")
    group.add_argument(
        "--mix-python", type=Path, help="write the models as an importable Python module"
    )


def run_binary(args: argparse.Namespace) -> int:
    """Build the instruction-mix models of ``args.binary`` and print or write them.

    ``args`` carries :data:`BINARY_OPTIONS`, ``sources`` (list of paths), ``param`` (list of
    names or None) and optionally ``compile_args`` (clang flags).
    """
    parameters = tuple(args.param or ())
    if args.report is not None:
        report: Any = read_report_json(args.report)
    else:
        if not args.sources:
            raise InputError("give the source files of the binary, or --report")
        report = _analyze(args.sources, parameters, tuple(getattr(args, "compile_args", ()) or ()))
    mix = instruction_mix(read_binary(args.binary), report, parameters, args.attribution)
    if args.mix_json is not None:
        args.mix_json.write_text(json.dumps(mix_to_json(mix), indent=2) + "\n")
    if args.mix_python is not None:
        args.mix_python.write_text(mix_to_python(mix))
    sys.stdout.write(mix_text(mix))
    return 0


def _analyze(sources: list[str], parameters: tuple[str, ...], compile_args: tuple[str, ...]) -> Any:
    try:
        from perfcast.static import analyze
    except ImportError as error:
        raise WorkError(
            "the source analysis (perfcast.static.analyze) is not available; pass --report"
        ) from error
    return analyze(sources, parameters, compile_args=compile_args)


def mix_text(mix: InstructionMix) -> str:
    """Plain-text table: per function, each non-zero count expression."""
    lines = [f"instruction mix of {mix.binary} (attribution: {mix.attribution})"]
    for name, function in mix.functions.items():
        lines.append(f"{name}  ({function.instructions} instructions)")
        if function.counts is None:
            lines.append(f"  undef: {function.undef_reason}")
            continue
        for key in COUNT_KEYS:
            expression = function.counts[key]
            if expression != 0:
                lines.append(f"  {key:<14} {sympy.sstr(expression)}")
        lines.extend(f"  note: {note}" for note in function.notes)
    for name, reason in sorted(mix.unmodeled.items()):
        lines.append(f"{name}  not modeled: {reason}")
    return "\n".join(lines) + "\n"


def read_report_json(path: Path) -> StaticReport:
    """Read the kernels of a static report JSON (``perfcast static --format json``).

    Each kernel needs ``name``, ``kind``, ``file``, ``line``, ``end_line``, ``function`` and
    ``expression`` (null when undefined) or ``undef_reason``.

    Raises
    ------
    InputError
        Naming the file and the kernel, when the file is not such a report.
    """
    try:
        data = json.loads(path.read_text())
    except OSError as error:
        raise InputError(f"cannot read static report: {error.strerror}", str(path)) from error
    except json.JSONDecodeError as error:
        raise InputError(f"not JSON: {error.msg}", str(path), error.lineno) from error
    if not isinstance(data, dict) or not isinstance(data.get("kernels"), list):
        raise InputError("a static report needs a 'kernels' list", str(path))
    kernels = []
    for number, entry in enumerate(data["kernels"], start=1):
        try:
            expression = entry.get("expression")
            parameters = tuple(str(p) for p in entry.get("parameters", ()))
            kernels.append(
                StaticKernel(
                    name=str(entry["name"]),
                    kind=str(entry["kind"]),
                    file=str(entry["file"]),
                    line=int(entry["line"]),
                    end_line=int(entry["end_line"]),
                    depth=int(entry.get("depth", 0)),
                    function=str(entry.get("function") or entry["name"]),
                    parameters=parameters,
                    count=None if expression is None else parse_expression(expression, parameters),
                    undef_reason=entry.get("undef_reason"),
                )
            )
        except (KeyError, TypeError, ValueError, AttributeError, sympy.SympifyError) as error:
            raise InputError(f"kernel {number}: malformed ({error!r})", str(path)) from error
    return StaticReport(kernels, diagnostics=[])
