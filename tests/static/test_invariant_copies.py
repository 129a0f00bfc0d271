"""Copies of a repetition loop's body chosen by a loop-invariant test on the length (verify20e
J12: Livermore loops gcc -O2 ``main`` +1.4 %, both copies counted).

Inlined kernels over a run-time ``n`` make gcc and clang test ``n <= 0`` and ``n == 1`` inside
the repetition loop (``for (k = 1; k < n; k++)`` runs no iteration at ``n == 1``) and give each
outcome its own copy of the rest of the body. Each copy was counted in every repetition: +9.4 %
(gcc -O1) and +24 % (clang -O1) at n = 1, +0.2 % at n = 61. A jump that always leads into a
nested loop on one way and never on the other now counts its ways with whether that loop takes
a pass, also for a loop of one iteration per pass whose trip count is the same in every entry
(``Min(1, n - 1)``): exact at every length.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast.api import analyze_source, instruction_mix
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    run_callgrind,
)

SOURCE = PROGRAMS_DIR / "repeated_kernels.c"
PARAMETERS = ["n", "rpt"]
RUNS = [(1, 3), (2, 2), (7, 3), (61, 2)]
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_only_the_copy_the_length_chooses_is_counted(tmp_path, compiler):
    binary_path = compile_c(compiler, "-O1", SOURCE, tmp_path / f"kernels_{compiler}")
    report = analyze_source([SOURCE], PARAMETERS)
    main = instruction_mix(binary_path, report, PARAMETERS).functions["main"]
    assert main.counts is not None, main.undef_reason
    binary = read_binary(binary_path)
    for n, rpt in RUNS:
        run = read_callgrind(run_callgrind(binary_path, (n, rpt), tmp_path))
        truth = measured_mix(binary, run)["main"]["total"]
        assert main.evaluate({"n": n, "rpt": rpt})["total"] == truth, (n, truth)
