"""The instruction-mix test programs, with static kernels also derived by hand.

Each program lists its kernels as the static analysis reports them: name, kind, line range, depth,
enclosing function, and the symbolic number of times the body runs per program run, derived by hand
from the loop bounds (:func:`hand_report`), to check the clang analysis (:func:`report_for`).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import sympy

from perfcast.static.report import StaticKernel, StaticReport

PROGRAMS_DIR = Path(__file__).resolve().parent / "programs"

CLANG = shutil.which("clang-16") or shutil.which("clang")
"""The clang the builds use (clang-16 where installed)."""

BUILDS = [(c, level) for c in ("gcc", "clang") for level in ("-O0", "-O1", "-O2", "-O3")]
"""Every compiler and optimization level the tests against callgrind cover."""

NEEDS_TOOLS = [
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
    pytest.mark.skipif(CLANG is None or shutil.which("gcc") is None, reason="gcc and clang"),
]
"""Skip marks of a test that needs valgrind, gcc and clang (quick enough for the default run)."""
NEEDS_BOTH_COMPILERS_AND_VALGRIND = [pytest.mark.slow, *NEEDS_TOOLS]
"""``pytestmark`` of a module that builds with gcc and clang and runs callgrind."""


def compile_c(compiler: str, level: str, source: Path, binary: Path, *libraries: str) -> Path:
    """Build ``source`` with ``-g`` (clang also ``-gdwarf-4``, which valgrind reads)."""
    command = [CLANG or "clang", "-gdwarf-4"] if compiler == "clang" else ["gcc"]
    subprocess.run([*command, "-g", level, "-o", str(binary), str(source), *libraries], check=True)
    return binary


@dataclass(frozen=True)
class Program:
    """A test program: source, parameters, how to pass them on the command line, kernels."""

    name: str
    parameters: tuple[str, ...]
    kernels: tuple[tuple, ...]  # (kind, function, line, end_line, depth, count expression)
    sizes: tuple[tuple[int, ...], ...]  # parameter values of the validation runs

    @property
    def source(self) -> Path:
        return PROGRAMS_DIR / f"{self.name}.c"


def hand_report(program: Program) -> StaticReport:
    """The kernels derived by hand from the program's loop bounds (to check the analysis)."""
    symbols = {name: sympy.Symbol(name, positive=True, integer=True) for name in program.parameters}
    kernels = []
    for kind, function, line, end_line, depth, count in program.kernels:
        name = function if kind == "function" else f"{function}:loop@{line}"
        kernels.append(
            StaticKernel(
                name=name,
                kind=kind,
                file=str(program.source),
                line=line,
                end_line=end_line,
                depth=depth,
                function=function,
                parameters=program.parameters,
                count=sympy.sympify(count, locals=symbols),
                undef_reason=None,
            )
        )
    return StaticReport(kernels, diagnostics=[])


def report_for(program: Program) -> StaticReport:
    """The static report of a program, from the clang analysis."""
    from perfcast.static import analyze

    return analyze([program.source], program.parameters)


STREAM = Program(
    "stream",
    ("n", "ntimes"),
    (
        ("function", "main", 6, 40, 0, "1"),
        ("loop", "main", 17, 21, 1, "n"),
        ("loop", "main", 22, 31, 1, "ntimes"),
        ("loop", "main", 23, 24, 2, "ntimes*n"),
        ("loop", "main", 25, 26, 2, "ntimes*n"),
        ("loop", "main", 27, 28, 2, "ntimes*n"),
        ("loop", "main", 29, 30, 2, "ntimes*n"),
        ("loop", "main", 33, 34, 1, "n"),
    ),
    ((10000, 4), (40000, 4), (100000, 4)),
)

DGEMM = Program(
    "dgemm",
    ("n",),
    (
        ("function", "main", 5, 31, 0, "1"),
        ("loop", "main", 14, 18, 1, "n**2"),
        ("loop", "main", 19, 25, 1, "n"),
        ("loop", "main", 20, 25, 2, "n**2"),
        ("loop", "main", 22, 23, 3, "n**3"),
    ),
    ((40,), (80,), (120,)),
)

CG = Program(
    "cg",
    ("n", "iters"),
    (
        ("function", "matvec", 7, 14, 0, "iters"),
        ("loop", "matvec", 8, 13, 1, "iters*n"),
        ("loop", "matvec", 10, 11, 2, "iters*n**2"),
        ("function", "dot", 16, 21, 0, "2*iters + 1"),
        ("loop", "dot", 18, 19, 1, "(2*iters + 1)*n"),
        ("function", "axpy", 23, 26, 0, "2*iters"),
        ("loop", "axpy", 24, 25, 1, "2*iters*n"),
        ("function", "xpay", 28, 31, 0, "iters"),
        ("loop", "xpay", 29, 30, 1, "iters*n"),
        ("function", "cg_solve", 33, 56, 0, "1"),
        ("loop", "cg_solve", 37, 41, 1, "n"),
        ("loop", "cg_solve", 43, 51, 1, "iters"),
        ("function", "main", 58, 80, 0, "1"),
        ("loop", "main", 68, 73, 1, "n"),
        ("loop", "main", 69, 70, 2, "n**2"),
    ),
    ((30, 10), (60, 10), (90, 20)),
)

PROGRAMS = (STREAM, DGEMM, CG)


def build(program: Program, directory: Path, optimization: str = "-O1") -> Path:
    """Compile a program with ``gcc -g`` at the given optimization level."""
    binary = directory / f"{program.name}{optimization.replace('-', '_')}"
    subprocess.run(
        ["gcc", "-g", optimization, "-o", str(binary), str(program.source)],
        check=True,
        capture_output=True,
        text=True,
    )
    return binary


def run_callgrind(binary: Path, arguments: tuple[int, ...], directory: Path) -> Path:
    """Run the binary under callgrind with per-instruction counts; returns the output file."""
    out = directory / f"callgrind.{binary.name}.{'_'.join(map(str, arguments))}"
    subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--dump-instr=yes",
            "--skip-plt=no",
            f"--callgrind-out-file={out}",
            str(binary),
            *map(str, arguments),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


def static_profiled_and_measured(
    binary_path: Path,
    source: Path,
    parameters: list[str],
    arguments: tuple[int, ...],
    directory: Path,
) -> tuple:
    """(static mix, mix with one callgrind run as profile, callgrind's total per function)."""
    from perfcast.static import analyze
    from perfcast.static.binary import read_binary
    from perfcast.static.callgrind import measured_loop_counts, measured_mix, read_callgrind
    from perfcast.static.instruction_mix import instruction_mix

    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, arguments, directory))
    report = analyze([source], parameters)
    static = instruction_mix(binary, report, parameters)
    measured = dict(measured_loop_counts(binary, profile))
    profiled = instruction_mix(binary, report, parameters, measured=measured)
    truth = {name: counts["total"] for name, counts in measured_mix(binary, profile).items()}
    return static, profiled, truth


def total_error(mix, truth: dict[str, int], function: str, values: dict[str, int]) -> float:
    """Relative error of a function's predicted total at ``values`` against callgrind's total
    (the function's counts must be defined)."""
    found = mix.functions[function]
    assert found.counts is not None, found.undef_reason
    return found.evaluate(values)["total"] / truth[function] - 1


def assert_right_or_undefined(
    static, profiled, truth: dict[str, int], name: str, values: dict[str, int], tolerance: float
) -> None:
    """Function ``name``'s static total is within ``tolerance`` of callgrind's or undefined with
    a reason, and its total with the run as profile is within ``tolerance``."""
    function = static.functions[name]
    if function.counts is None:
        assert function.undef_reason, name
    else:
        assert abs(total_error(static, truth, name, values)) < tolerance, (name, function.notes)
    assert abs(total_error(profiled, truth, name, values)) < tolerance, name
