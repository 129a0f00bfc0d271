"""Conditional code inside loops against callgrind (issue 20, static24).

Builds the test programs with conditions inside loops (``tests/static/programs/``:
``branch_in_loop.c``, ``conditions_in_loop.c``, ``guards_in_loops.c``) with gcc and clang at
-O0..-O3 (``-g``; clang also ``-gdwarf-4`` for valgrind 3.19), runs each once under
``valgrind --tool=callgrind --dump-instr=yes --skip-plt=no`` and prints, per function, the
measured total and the static prediction (its error, or ``undefined`` with the start of the
reason), and the prediction with that run as profile. A row is *silent* when the prediction is
defined and more than 1 % off. Instruction counts only, no times.

``annotated()`` of ``conditions_in_loop.c`` is evaluated at ``p`` = the share of iterations its
data condition held (the program prints it).

Usage: ``PYTHONPATH=src nice -n 19 .venv/bin/python benchmarks/conditions_mix.py [--levels ...]``
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

from perfcast.static import analyze
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_loop_counts, measured_mix, read_callgrind
from perfcast.static.instruction_mix import FunctionMix, instruction_mix

PROGRAMS = Path(__file__).resolve().parents[1] / "tests" / "static" / "programs"
CASES = (
    ("branch_in_loop", ("n",), (1000,), ("main", "filter", "folded")),
    (
        "conditions_in_loop",
        ("n", "m"),
        (1000, 100),
        ("early", "window", "prefix", "annotated", "unannotated"),
    ),
    ("guards_in_loops", ("n",), (4096,), ("descents", "series")),
)


def _shown(function: FunctionMix | None, values: dict[str, float], truth: int) -> str:
    if function is None:
        return "absent"
    if function.counts is None:
        return f"undefined ({(function.undef_reason or '')[:70]}...)"
    used = {s.name for expr in function.counts.values() for s in expr.free_symbols}
    predicted = function.evaluate({k: v for k, v in values.items() if k in used})["total"]
    error = 100 * (predicted / truth - 1) if truth else float("nan")
    silent = " SILENT" if abs(error) > 1 else ""
    return f"{predicted:,.0f} ({error:+.2f} %){silent}"


def _case(name, parameters, sizes, functions, compiler, level, directory: Path) -> list[str]:
    source = PROGRAMS / f"{name}.c"
    binary_path = directory / f"{name}_{compiler}{level}"
    debug = ["-gdwarf-4"] if "clang" in compiler else []
    subprocess.run([compiler, "-g", *debug, level, "-o", str(binary_path), str(source)], check=True)
    out = directory / f"{binary_path.name}.callgrind"
    run = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--dump-instr=yes",
            "--skip-plt=no",
            f"--callgrind-out-file={out}",
            str(binary_path),
            *map(str, sizes),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    values: dict[str, float] = dict(zip(parameters, map(float, sizes), strict=True))
    if name == "conditions_in_loop":
        values["p"] = int(run.stdout.split()[0]) / sizes[0]
    binary = read_binary(binary_path)
    profile = read_callgrind(out)
    report = analyze([source], list(parameters))
    static = instruction_mix(binary, report, list(parameters))
    measured = dict(measured_loop_counts(binary, profile))
    profiled = instruction_mix(binary, report, list(parameters), measured=measured)
    truth = measured_mix(binary, profile)
    rows = []
    for function in functions:
        total = truth[function]["total"]
        rows.append(
            f"| {name}.c `{function}` | {compiler} | {level} | {total:,} | "
            f"{_shown(static.functions.get(function), values, total)} | "
            f"{_shown(profiled.functions.get(function), values, total)} |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compilers", nargs="+", default=["gcc", "clang-16"])
    parser.add_argument("--levels", nargs="+", default=["-O0", "-O1", "-O2", "-O3"])
    arguments = parser.parse_args()
    print("| function | compiler | level | measured | static | with --profile |")
    print("|---|---|---|---:|---|---|")
    with tempfile.TemporaryDirectory(prefix="conditions-mix-") as temporary:
        for case in CASES:
            for compiler in arguments.compilers:
                if shutil.which(compiler) is None:
                    continue
                for level in arguments.levels:
                    for row in _case(*case, compiler, level, Path(temporary)):
                        print(row, flush=True)


if __name__ == "__main__":
    main()
