"""Instruction-mix models of optimized code (issue 20) against callgrind, and analysis speed.

Builds the STREAM-like programs (compile-time sizes even and odd, run-time sizes even and odd),
DGEMM, a PolyBench-style 2-D Jacobi and a CSR conjugate-gradient solver of
``tests/static/programs`` with gcc and clang at -O0..-O3, models each function's instruction
mix from the static counts and the binary's machine loops, runs the binary under
``valgrind --tool=callgrind --dump-instr=yes --skip-plt=no`` and prints, per build, the worst
relative error of a defined function total and the coverage: the share of the program's own measured
instructions that lie in functions with a defined model. Then the same with ``--profile``:
where a static count stops, measured block counts stand in, from callgrind runs at five smaller
sizes modeled over the size (checked at the larger size of the table), or, for sizes fixed at
compile time, from the checked run itself.

Then times the static analysis of the largest C file found here against
``clang -fsyntax-only`` on the same file (the ratio is the figure; both run in this process'
machine state).

Usage: ``.venv/bin/python benchmarks/optimized_mix.py [--compilers gcc clang-16]
[--levels -O0 -O1 -O2 -O3]``
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "static" / "programs"

from perfcast.api import analyze_source, instruction_mix  # noqa: E402
from perfcast.static.binary import read_binary  # noqa: E402
from perfcast.static.callgrind import measured_mix, read_callgrind  # noqa: E402

PYTHON_INCLUDE = f"-I{sysconfig.get_paths()['include']}"
SPEED_FILES = (
    # a 4,097-line CPython extension (wrapt), the largest C file of this machine's Python
    (Path(sys.base_prefix) / "lib/python3.11/site-packages/wrapt/_wrappers.c", [PYTHON_INCLUDE]),
)
FETCHED = (
    # (pip requirement, C file inside the sdist): third-party CPython extensions written by hand
    ("bitarray==3.12.3", "bitarray-3.12.3/bitarray/_bitarray.c"),  # 5,441 lines
    ("regex==2026.11.19", "regex-2026.11.19/src/_regex.c"),  # 26,791 lines
    ("cffi==2.1.1", "cffi-2.1.1/src/c/_cffi_backend.c"),  # 8,027 lines (needs libffi's ffi.h)
)


@dataclass(frozen=True)
class Case:
    """One program build: source, compile flags, model parameters and run arguments.

    ``training`` are the values of the first parameter at which the ``--profile`` runs are
    made (the other parameters keep their values of ``arguments``); none for a program whose
    sizes are fixed at compile time, whose one profiled run is the checked run itself.
    """

    name: str
    source: str
    flags: tuple[str, ...]
    parameters: tuple[str, ...]
    arguments: tuple[int, ...]
    training: tuple[int, ...] = ()


CASES = (
    Case("stream, compile-time n even", "stream_fixed.c", ("-DN=200000",), (), ()),
    Case("stream, compile-time n odd", "stream_fixed.c", ("-DN=200001",), (), ()),
    Case(
        "stream, run-time n even",
        "stream_runtime.c",
        (),
        ("n", "ntimes"),
        (200000, 5),
        (20000, 40000, 60000, 80000, 100000),
    ),
    Case(
        "stream, run-time n odd",
        "stream_runtime.c",
        (),
        ("n", "ntimes"),
        (200001, 5),
        (20001, 40001, 60001, 80001, 100001),
    ),
    Case("dgemm", "dgemm.c", (), ("n",), (120,), (16, 24, 32, 40, 48)),
    Case("dgemm, odd n", "dgemm.c", (), ("n",), (121,), (17, 25, 33, 41, 49)),
    Case("jacobi-2d (macros)", "jacobi2d.c", ("-DN=200", "-DTSTEPS=10"), (), ()),
    Case("CG, CSR matrix", "cg_csr.c", (), ("m", "iters"), (40, 5), (8, 12, 16, 20, 24)),
)


def callgrind(binary: Path, arguments: tuple[int, ...], directory: Path) -> Path:
    """Run the binary under callgrind with per-instruction counts; the output file."""
    out = directory / f"callgrind.{binary.name}.{'_'.join(map(str, arguments)) or 'run'}"
    subprocess.run(
        ["valgrind", "--tool=callgrind", "--dump-instr=yes", "--skip-plt=no"]
        + [f"--callgrind-out-file={out}"]
        + [str(binary), *map(str, arguments)],
        check=True,
        capture_output=True,
    )
    return out


def score(mix, measured: dict, values: dict) -> tuple[float, float, int]:
    """Worst relative error of a defined function total (functions running over 1,000
    instructions), coverage, and the number of functions checked."""
    own = sum(counts["total"] for counts in measured.values()) or 1
    defined, worst, checked = 0, 0.0, 0
    for name, function in mix.functions.items():
        truth = measured.get(name, {}).get("total", 0)
        if function.counts is None:
            continue
        defined += truth
        if truth > 1000:
            predicted = function.evaluate(values)["total"]
            worst = max(worst, abs(predicted / truth - 1))
            checked += 1
    return worst, defined / own, checked


def accuracy(
    compilers: list[str], levels: list[str], directory: Path, cases: tuple[Case, ...] = CASES
) -> list[str]:
    """The Markdown table of errors and coverage per build, static and with ``--profile``."""
    lines = [
        "| program | compiler | level | worst defined total error | coverage | functions "
        "| coverage with --profile | worst error with --profile |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for case in cases:
        source = PROGRAMS / case.source
        report = analyze_source([source], list(case.parameters), list(case.flags))
        values = dict(zip(case.parameters, case.arguments, strict=True))
        modeled = case.parameters[:1] if case.training else ()
        fixed = {name: values[name] for name in case.parameters[1:]} if case.training else {}
        profile_report = analyze_source(
            [source], list(modeled), list(case.flags), values=fixed or None
        )
        for compiler in compilers:
            for level in levels:
                binary = directory / f"{source.stem}_{compiler}{level}{len(case.flags)}"
                binary = binary.with_name(binary.name + "".join(case.flags).replace("=", ""))
                subprocess.run(
                    [compiler, "-g", level, *case.flags, "-o", str(binary), str(source)],
                    check=True,
                    capture_output=True,
                )
                mix = instruction_mix(binary, report, case.parameters)
                checked_run = callgrind(binary, case.arguments, directory)
                measured = measured_mix(read_binary(binary), read_callgrind(checked_run))
                worst, coverage, checked = score(mix, measured, values)
                runs = [
                    (
                        {modeled[0]: size},
                        callgrind(binary, (size, *case.arguments[1:]), directory),
                    )
                    for size in case.training
                ] or [({}, checked_run)]
                with_profile = instruction_mix(binary, profile_report, modeled, profiles=runs)
                worst_profiled, coverage_profiled, _ = score(with_profile, measured, values)
                lines.append(
                    f"| {case.name} | {compiler} | {level} | {100 * worst:.3f} % | "
                    f"{100 * coverage:.1f} % | {checked} | {100 * coverage_profiled:.1f} % | "
                    f"{100 * worst_profiled:.3f} % |"
                )
    return lines


def fetch_sources(directory: Path) -> list[tuple[Path, list[str]]]:
    """Download the sdists of :data:`FETCHED` with pip (network needed; nothing is kept in
    the repository) and return their C files with the flags they need."""
    found = []
    for requirement, member in FETCHED:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
            + ["--no-binary", ":all:", requirement, "-d", str(directory)],
            check=True,
        )
        name = requirement.replace("==", "-")
        with tarfile.open(directory / f"{name}.tar.gz") as archive:
            archive.extractall(directory, filter="data")
        found.append((directory / member, [PYTHON_INCLUDE]))
    return found


def speed(files: list[tuple[Path, list[str]]], repetitions: int = 3) -> list[str]:
    """Static analysis time against clang -fsyntax-only on the same file (best of
    ``repetitions``), as wall-clock and as CPU time (the machine is shared, so wall time of
    the longer run suffers more from other jobs).

    Rows per file: the first full analysis in this process (sympy's caches still cold for
    this file); the full analysis; the lazy analysis of the one function with the most loops
    (``functions=[name]``); a second full run reading the cache; and the command line
    (``perfcast static FILE``, Python start-up and imports included) cold and cached.
    """
    lines = [
        "| file | lines | clang -fsyntax-only wall / CPU | analysis | wall / CPU | "
        "ratio wall | ratio CPU |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    clang = shutil.which("clang") or shutil.which("clang-16")
    for path, flags in files:
        if not path.exists() or clang is None:
            lines.append(f"| {path.name} | - | not on this machine | - | - | - | - |")
            continue
        lines += _speed_rows(path, flags, clang, repetitions)
    return lines


def _speed_rows(path: Path, flags: list[str], clang: str, repetitions: int) -> list[str]:
    """The rows of one file (see :func:`speed`)."""
    syntax = _best(repetitions, lambda: _child([clang, "-fsyntax-only", "-w", *flags, str(path)]))
    reports = []
    first = _own(lambda: reports.append(analyze_source([path], [], flags)))
    full = reports[0]
    loops: dict[str, int] = {}
    for kernel in full.kernels:
        loops[kernel.function] = loops.get(kernel.function, 0) + (kernel.kind == "loop")
    busiest = max(sorted(loops), key=loops.__getitem__)
    count = len(path.read_text(errors="replace").splitlines())
    command = [sys.executable, "-m", "perfcast.cli", "static", str(path)]
    lines = [
        f"| {path.name} | {count} | {syntax[0]:.2f} s / {syntax[1]:.2f} s | full, first in "
        f"this process | {first[0]:.2f} s / {first[1]:.2f} s | {first[0] / syntax[0]:.1f}x | "
        f"{first[1] / syntax[1]:.1f}x |"
    ]
    with tempfile.TemporaryDirectory(prefix="static20-speed-") as scratch:
        cache = Path(scratch)
        modes = {
            "full": lambda: _own(lambda: analyze_source([path], [], flags)),
            f"lazy, one function ({busiest}, {loops[busiest]} loops)": lambda: _own(
                lambda: analyze_source([path], [], flags, functions=[busiest])
            ),
            "full, second run (cache)": lambda: _own(
                lambda: analyze_source([path], [], flags, cache=cache)
            ),
            "command, cold (--no-cache)": lambda: _child([*command, "--no-cache", "--", *flags]),
            "command, second run (cache)": lambda: _child(
                [*command, "--", *flags], {"PERFCAST_CACHE_DIR": scratch}
            ),
        }
        analyze_source([path], [], flags, cache=cache)  # fill the cache
        _child([*command, "--", *flags], {"PERFCAST_CACHE_DIR": scratch})
        for label, measure in modes.items():
            wall, cpu = _best(repetitions, measure)
            lines.append(
                f"| {path.name} | {count} | {syntax[0]:.2f} s / {syntax[1]:.2f} s | {label} | "
                f"{wall:.2f} s / {cpu:.2f} s | {wall / syntax[0]:.1f}x | {cpu / syntax[1]:.1f}x |"
            )
    return lines


def _best(repetitions: int, measure) -> tuple[float, float]:
    """Smallest wall-clock and CPU seconds of ``repetitions`` measurements."""
    runs = [measure() for _ in range(repetitions)]
    return min(wall for wall, _ in runs), min(cpu for _, cpu in runs)


def _own(work) -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``work()`` in this process."""
    start, before = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - start, time.process_time() - before


def _child(command: list[str], environment: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall-clock and CPU seconds of a child process (its output discarded)."""
    start, before = time.perf_counter(), _children_cpu()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(environment or {})}
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - start, _children_cpu() - before


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compilers", nargs="+", default=["gcc", "clang-16"])
    parser.add_argument("--levels", nargs="+", default=["-O0", "-O1", "-O2", "-O3"])
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--speed-only", action="store_true", help="only the analysis-speed table")
    parser.add_argument("--repetitions", type=int, default=3, help="of the speed measurement")
    parser.add_argument(
        "--cases", nargs="+", help="only the programs whose name starts with one of these"
    )
    parser.add_argument(
        "--speed-source",
        action="append",
        default=[],
        metavar="FILE",
        help="also time this C file (with the Python headers on the include path)",
    )
    parser.add_argument(
        "--fetch",
        action="store_true",
        help="download the third-party sdists of FETCHED with pip and time their C files",
    )
    args = parser.parse_args()
    if args.speed_only:
        print("\n".join(_speed_table(args)))
        return
    compilers = [c for c in args.compilers if shutil.which(c)]
    with tempfile.TemporaryDirectory(prefix="optimized-mix-") as scratch:
        directory = Path(scratch)
        cases = tuple(
            case for case in CASES if not args.cases or case.name.startswith(tuple(args.cases))
        )
        print("\n".join(accuracy(compilers, args.levels, directory, cases)))
    if not args.skip_speed:
        print()
        print("\n".join(_speed_table(args)))


def _speed_table(args: argparse.Namespace) -> list[str]:
    files = list(SPEED_FILES) + [(Path(f), [PYTHON_INCLUDE]) for f in args.speed_source]
    with tempfile.TemporaryDirectory(prefix="optimized-mix-sdists-") as scratch:
        if args.fetch:
            files += fetch_sources(Path(scratch))
        return speed(files, args.repetitions)


if __name__ == "__main__":
    main()
