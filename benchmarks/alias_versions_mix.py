"""Loops with and without possible overlap against callgrind, static and with ``--profile``.

For each program of ``tests/static/programs`` given (default: ``alias_versions.c`` with n = 100,
reps = 10, ``versioned_loops.c`` and ``versioned_nest.c`` with n = 41), built with gcc and
clang-16 at -O0..-O3 (``-g``; clang also ``-gdwarf-4``), run once under ``valgrind
--tool=callgrind --dump-instr=yes --skip-plt=no``, prints per function that ran: the measured
total, the static prediction's error (or the reason it is undefined) and the error with that
run as the profile. A line ends in ``!!`` when a defined total is more than 1 % off.

Usage: ``PYTHONPATH=src nice -n 19 .venv/bin/python benchmarks/alias_versions_mix.py
[--program FILE PARAMS VALUES ...]`` (``PARAMS`` and ``VALUES`` comma-separated, ``-`` for none).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from perfcast.static import analyze
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_loop_counts, measured_mix, read_callgrind
from perfcast.static.instruction_mix import FunctionMix, instruction_mix

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "static" / "programs"
DEFAULT = [
    (PROGRAMS / "alias_versions.c", ("n", "reps"), (100, 10)),
    (PROGRAMS / "versioned_loops.c", (), ()),
    (PROGRAMS / "versioned_nest.c", ("n",), (41,)),
]


def _error(mix: FunctionMix, values: dict[str, int], measured: int) -> str:
    if mix.counts is None:
        return f"undefined: {(mix.undef_reason or '')[:100]}"
    error = mix.evaluate(values)["total"] / measured - 1
    return f"{100 * error:+.3f} %" + (" !!" if abs(error) > 0.01 else "")


def _check(source: Path, parameters: tuple[str, ...], values: tuple[int, ...], work: Path) -> None:
    report = analyze([source], list(parameters))
    at = dict(zip(parameters, values, strict=True))
    for compiler in ("gcc", "clang-16"):
        for level in ("-O0", "-O1", "-O2", "-O3"):
            binary_path = work / f"{source.stem}_{compiler}{level}"
            debug = ["-gdwarf-4"] if "clang" in compiler else []
            subprocess.run(
                [compiler, "-g", *debug, level, "-o", str(binary_path), str(source)], check=True
            )
            out = work / f"callgrind.{binary_path.name}"
            subprocess.run(
                ["valgrind", "--tool=callgrind", "--dump-instr=yes", "--skip-plt=no"]
                + [f"--callgrind-out-file={out}", str(binary_path), *map(str, values)],
                check=True,
                capture_output=True,
            )
            binary = read_binary(binary_path)
            profile = read_callgrind(out)
            measured = measured_mix(binary, profile)
            static = instruction_mix(binary, report, parameters).functions
            counts = measured_loop_counts(binary, profile)
            profiled = instruction_mix(binary, report, parameters, measured=counts).functions
            for name in sorted(static):
                total = measured.get(name, {}).get("total", 0)
                if not total:
                    continue
                print(
                    f"| {source.stem} | {compiler} {level} | {name} | {total:,} | "
                    f"{_error(static[name], at, total)} | {_error(profiled[name], at, total)} |"
                )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", nargs=3, action="append", metavar=("FILE", "PARAMS", "VALUES"))
    arguments = parser.parse_args(argv)
    programs = DEFAULT
    if arguments.program:
        programs = [
            (
                Path(file),
                tuple(p for p in names.split(",") if p and p != "-"),
                tuple(int(v) for v in values.split(",") if v and v != "-"),
            )
            for file, names, values in arguments.program
        ]
    print("| program | build | function | measured | static | with --profile |")
    print("|---|---|---|---:|---|---|")
    with tempfile.TemporaryDirectory(prefix="alias-versions-") as work:
        for source, parameters, values in programs:
            _check(source, parameters, values, Path(work))
    print(f"\n`{' '.join(['benchmarks/alias_versions_mix.py', *(argv or sys.argv[1:])])}`")


if __name__ == "__main__":
    main()
