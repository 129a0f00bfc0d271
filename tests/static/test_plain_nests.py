"""Unoptimized loop nests whose pass repeats code (verify20e J3: Embench matmult-int, PolyBench
doitgen and correlation at -O0).

gcc -O0 multiplies a row index by a constant with ``shl; add; shl; add``, so a pass of the
inner loop of ``grid[i][j] = draw()`` holds the same source line's ``shl`` and ``add`` twice;
that was taken for an unrolled body ("vectorized, unrolled or versioned", undefined), as was
clang -O0's 3-D index. At -O0 the loop variable lives in a stack slot (or, declared
``register``, in a register of its own) that the loop writes once per pass by the source's step:
one source iteration per pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    BUILDS,
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    static_profiled_and_measured,
    total_error,
)

SOURCE = PROGRAMS_DIR / "plain_nests.c"
ROWS = 11
FUNCTIONS = ("fill_grid", "trace_products", "spread", "column_means")
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_nests_are_exact_or_undefined(tmp_path, compiler, level):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"nests_{compiler}{level}")
    static, profiled, truth = static_profiled_and_measured(
        binary, SOURCE, ["rows"], (ROWS,), tmp_path
    )
    for name in FUNCTIONS:
        if not truth.get(name):
            continue  # inlined everywhere: its copies are counted in main
        function = static.functions[name]
        if level == "-O0":
            assert function.counts is not None, (name, function.undef_reason)
        if function.counts is not None:
            assert abs(total_error(static, truth, name, {"rows": ROWS})) < 0.001, name
        assert abs(total_error(profiled, truth, name, {"rows": ROWS})) < 0.001, name
