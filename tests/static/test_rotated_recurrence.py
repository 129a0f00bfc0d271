"""A recurrence loop entered below its first block (verify20e J7, PolyBench deriche at gcc
-O1).

gcc -O1 moves the loop-carried copy ``older = old`` of a row recurrence to the top of the
loop and enters the loop below it, at the block with the body and the exit test: the copy runs
``h - 1`` times per row, the rest ``h``. The machine loop's header (the block entered) holds
body code before its exit test, but its code was inlined, and only code of the function itself
was taken for body: the header was counted ``h + 1`` times per row, the copy ``h`` (+0.81 %
static, +0.75 % with ``--profile``, no note); the row loop's ``h <= 0`` path (``jmp`` to the next
row) was counted in every row.
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

SOURCE = PROGRAMS_DIR / "rotated_recurrence.c"
SIZES = {"w": 19, "h": 23}
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_the_recurrence_is_exact_or_undefined(tmp_path, compiler, level):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"recurrence_{compiler}{level}")
    static, profiled, truth = static_profiled_and_measured(
        binary, SOURCE, list(SIZES), tuple(SIZES.values()), tmp_path
    )
    assert_right_or_undefined(static, profiled, truth, "main", SIZES, 0.0002)
