"""Every count of the loop-nest corpus against the count measured by running the code.

The corpus (tests/static/corpus) is analysed, an instrumented copy is compiled with gcc and run
at several parameter values, and each exact symbolic count must equal the measured count at
each of them. Kernels that cannot be counted must be undef, with the expected reason.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sympy
from instrument import build, measure

from perfcast.static import analyze, parse_expression

CORPUS = Path(__file__).resolve().parent / "corpus"

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


@dataclass
class Case:
    files: list[str]
    parameters: list[str]
    argv: list[str]
    runs: list[dict[str, int]]
    undef: dict[str, str] = field(default_factory=dict)
    defines: list[str] = field(default_factory=list)
    per_call: set[str] = field(default_factory=set)


def _grid(names, rows):
    return [dict(zip(names, row, strict=True)) for row in rows]


CASES = {
    "triangular": Case(["triangular.c"], ["n"], ["n"], _grid(["n"], [[1], [2], [7], [16]])),
    "trapezoidal": Case(
        ["trapezoidal.c"], ["n", "m"], ["n", "m"], _grid(["n", "m"], [[1, 1], [5, 3], [9, 12]])
    ),
    "strided": Case(["strided.c"], ["n"], ["n"], _grid(["n"], [[1], [2], [7], [12], [31]])),
    "geometric": Case(
        ["geometric.c"],
        ["n"],
        ["n"],
        _grid(["n"], [[1], [2], [3], [8], [9], [27], [100], [1024]]),
    ),
    "guarded": Case(
        ["guarded.c"],
        ["n", "m"],
        ["n", "m"],
        _grid(["n", "m"], [[1, 1], [3, 5], [7, 2], [12, 4], [4, 9]]),
    ),
    "whiledo": Case(
        ["whiledo.c"],
        ["n"],
        ["n"],
        _grid(["n"], [[1], [2], [5], [16], [33]]),
        undef={"main:loop@15": "non-affine update"},
    ),
    "calls": Case(
        ["calls_main.c", "calls_lib.c"],
        ["n", "m"],
        ["n", "m"],
        _grid(["n", "m"], [[1, 1], [4, 3], [10, 7]]),
        undef={"unused:loop@9": "does not trace back"},
        per_call={"unused"},
    ),
    "reach": Case(
        ["reach.c"],
        ["steps", "width", "niter", "TOTAL_KEYS", "NUM_PROCS"],
        ["steps", "width", "niter"],
        _grid(
            ["steps", "width", "niter", "TOTAL_KEYS", "NUM_PROCS"],
            [[3, 10, 5, 1024, 4], [1, 1, 2, 100, 3], [4, 2, 9, 37, 8]],
        ),
        defines=["TOTAL_KEYS", "NUM_PROCS"],
    ),
    "mixed": Case(
        ["mixed.c"],
        ["n", "m"],
        ["n", "m"],
        _grid(["n", "m"], [[1, 1], [2, 5], [7, 3], [10, 12]]),
        undef={"main:loop@47": "no closed form"},
    ),
    "nonaffine": Case(
        ["nonaffine.c"],
        ["n"],
        ["n"],
        _grid(["n"], [[4], [9], [20]]),
        undef={
            "limit": "guard or update of the loop",
            "main:loop@16": "array element",
            "main:loop@20": "call to limit",
            "main:loop@23": "neither affine nor geometric",
            "main:loop@26": "several exits",
            "main:loop@31": "modified in the body",
            "main:loop@37": "not of the form",
        },
    ),
    "annotated": Case(
        ["annotated.c"], ["n"], ["n", "len"], _grid(["n", "len"], [[2, 3], [8, 1], [20, 6]])
    ),
    # Bounds through function-like macros (PolyBench's _PB_N), as benchmark suites write them.
    "polybench_kernels": Case(
        ["polybench_kernels.c"],
        ["n", "m", "tsteps"],
        ["n", "m", "tsteps"],
        _grid(
            ["n", "m", "tsteps"],
            [[1, 1, 1], [2, 3, 1], [3, 2, 2], [5, 4, 2], [9, 7, 3], [13, 10, 2]],
        ),
    ),
    "polybench_idioms": Case(
        ["polybench_idioms.c"],
        ["n", "sweeps"],
        ["n", "sweeps"],
        _grid(["n", "sweeps"], [[1, 1], [2, 1], [3, 2], [5, 3], [10, 2], [17, 4]]),
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_counts_match_measured_counts(name, tmp_path):
    case = CASES[name]
    sources = [CORPUS / f for f in case.files]
    report = analyze(sources, case.parameters)
    kernels = report.kernels + report.branches
    undefined = {k.name: k.undef_reason for k in report.kernels if k.count is None}
    assert set(undefined) == set(case.undef), undefined
    for kernel_name, reason in case.undef.items():
        assert reason in undefined[kernel_name]
    programs: dict[tuple, Path] = {}
    checked = 0
    for run in case.runs:
        flags = [f"-D{d}={run[d]}" for d in case.defines]
        if tuple(flags) not in programs:
            workdir = tmp_path / f"build{len(programs)}"
            workdir.mkdir()
            # only counted kernels: an undef branch written inside a macro has no brace to
            # instrument in the source text
            counted = [k for k in kernels if k.count is not None]
            programs[tuple(flags)] = build(sources, counted, workdir, flags)
        measured = measure(programs[tuple(flags)], [str(run[a]) for a in case.argv], tmp_path)
        values = {sympy.Symbol(p): v for p, v in run.items()}
        for kernel in kernels:
            if kernel.count is None or kernel.function in case.per_call:
                continue
            predicted = kernel.count.subs(values)
            assert predicted.is_Integer, (kernel.name, kernel.count, run)
            # the JSON text of the count reads back to the same numbers
            text = parse_expression(kernel.expression(), report.parameters)
            assert text.subs(values) == predicted
            assert int(predicted) == measured.get(kernel.name, 0), (
                kernel.name,
                str(kernel.count),
                run,
                measured.get(kernel.name, 0),
            )
            checked += 1
    assert checked > 0
    for function in case.per_call:
        kernel = report.kernel(function)
        assert kernel.note and "per call" in kernel.note
