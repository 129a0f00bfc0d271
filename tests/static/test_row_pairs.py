"""A column walk whose rows the compiler packs two to a register, against callgrind (verify20c
G7, PolyBench gramschmidt's norm loop).

gcc -O2 unrolls ``for i: norm += a[i][k] * a[i][k]`` by 2 and loads rows ``i`` and ``i + 1``
into one register, its pointer stepping two rows per pass; the step over data the pass does
not read was taken for outer-loop vectorization (one source iteration per pass): +94 % on
``fixed_norms``, also with ``--profile``, with no note. gcc -O3 vectorizes the column loop and
runs the last column's row loop once after it, from a pointer the column loop leaves at the
end of its range; that loop was counted once per column (+175 %, and +92 % on
``run_time_norms`` with a run-time row count). The trip counts now come from the binary (a
pointer and its end that differ by a constant, a register equal to its bound after its loop
exits); a pass that reaches two places of one array while striding over others has no width
the binary tells: undefined, measured with ``--profile``.
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

SOURCE = PROGRAMS_DIR / "row_pairs.c"
ROWS_AT_RUN_TIME = 31
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_column_walks_are_counted_like_callgrind_or_undefined(tmp_path, compiler, level):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"row_pairs_{compiler}{level}")
    static, profiled, truth = static_profiled_and_measured(
        binary, SOURCE, ["m"], (ROWS_AT_RUN_TIME,), tmp_path
    )
    # sizes known at compile time: the trip counts are read from the binary, exactly
    assert abs(total_error(static, truth, "fixed_norms", {"m": ROWS_AT_RUN_TIME})) < 0.01
    assert abs(total_error(profiled, truth, "fixed_norms", {"m": ROWS_AT_RUN_TIME})) < 0.01
    # a run-time row count: within 1 % or undefined naming a machine loop; measured, exact
    run_time = static.functions["run_time_norms"]
    if run_time.counts is None:
        assert "machine loop" in (run_time.undef_reason or "")
    else:
        assert abs(total_error(static, truth, "run_time_norms", {"m": ROWS_AT_RUN_TIME})) < 0.01
    assert abs(total_error(profiled, truth, "run_time_norms", {"m": ROWS_AT_RUN_TIME})) < 0.01


def test_two_rows_per_pass_take_the_trip_count_of_the_binary(tmp_path):
    binary = compile_c("gcc", "-O2", SOURCE, tmp_path / "row_pairs_gcc_O2")
    static, _, truth = static_profiled_and_measured(
        binary, SOURCE, ["m"], (ROWS_AT_RUN_TIME,), tmp_path
    )
    notes = static.functions["fixed_norms"].notes
    # 30 rows, two per pass: 15 passes per column
    assert any("runs 15 times per entry (read from the binary)" in note for note in notes), notes
    assert abs(total_error(static, truth, "fixed_norms", {"m": ROWS_AT_RUN_TIME})) < 0.001
