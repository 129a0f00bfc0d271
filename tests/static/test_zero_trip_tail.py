"""The way past a loop that runs no iteration (verify20c/verify20d G1, Embench crc32's
``benchmark_body`` at gcc -O1).

Before a loop ``for (i = 0; i < rounds; i++)`` gcc and clang test ``rounds`` once and jump past
the loop when it is not positive; gcc -O1 gives that jump its own copy of the code after the
loop (``and eax, 0x7fff; ret``). That copy was counted in every call: +5.7 % on ``repeat``
at gcc -O1, +7.1 % at clang -O1, +2 to +3 % on ``sum_twice`` (a loop to ``2 * n``), no note.
The loop's count per entry is at least 1 for parameters of at least 1, so the copy never runs.
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
    assert_right_or_undefined,
    compile_c,
    static_profiled_and_measured,
)

SOURCE = PROGRAMS_DIR / "zero_trip_tail.c"
ROUNDS = 5
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_the_way_past_a_loop_is_not_counted(tmp_path, compiler, level):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"zero_trip_{compiler}{level}")
    static, profiled, truth = static_profiled_and_measured(
        binary, SOURCE, ["rounds"], (ROUNDS,), tmp_path
    )
    for name in ("repeat", "sum_twice"):
        assert_right_or_undefined(static, profiled, truth, name, {"rounds": ROUNDS}, 0.001)


def test_the_note_names_the_copy_and_the_loop(tmp_path):
    binary = compile_c("gcc", "-O1", SOURCE, tmp_path / "zero_trip_gcc_O1")
    static, _, _ = static_profiled_and_measured(binary, SOURCE, ["rounds"], (ROUNDS,), tmp_path)
    notes = static.functions["repeat"].notes
    assert any("runs only when source loop repeat:loop@" in note for note in notes), notes
