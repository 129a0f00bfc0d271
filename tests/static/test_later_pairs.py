"""The set-up of an inner loop with no iteration in some outer iterations (verify20e J1,
Embench nbody's energy).

``for (j = i + 1; j < n; j++)`` has no iteration when ``i = n - 1``; clang -O1..-O3 test that
before the inner loop's set-up, which then runs in ``n - 1`` of the ``n`` outer iterations. The
test, on the inner loop's line, was taken for a zero-trip test that holds in every iteration:
the set-up was counted ``n`` times (+0.85 % here, +8.1 % with nbody's errno call, no note). A
nested loop whose iterations follow the outer variable has entries with none: the block's
count is undefined naming the test, and measured with ``--profile``.
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

SOURCE = PROGRAMS_DIR / "later_pairs.c"
POINTS = 9
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_pairs_are_exact_or_undefined(tmp_path, compiler, level):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"pairs_{compiler}{level}")
    static, profiled, truth = static_profiled_and_measured(
        binary, SOURCE, ["n"], (POINTS,), tmp_path
    )
    # every count of this function is exact when defined
    assert_right_or_undefined(static, profiled, truth, "pair_energy", {"n": POINTS}, 0.001)
