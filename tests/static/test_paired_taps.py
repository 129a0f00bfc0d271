"""Loops stepping by 2 and a counter started below zero, against callgrind (verify20d H2,
Embench edn's ``fir_no_red_ld``).

``paired_filter`` computes two outputs per pass of ``for (j = 0; j < outputs; j += 2)`` over
32 taps taken two at a time. Two silent errors, both also with ``--profile``:

- an element index stepping by 2 (``out[j]`` with ``j += 2``) was read as 2 source iterations
  per pass, though each source iteration steps by 2 too: -50 % at gcc -O1/-O2, clang -O1/-O3
  with a run-time ``outputs``; the width is now the index's step over the source loop's;
- clang -O1 starts the tap counter at ``0xfffffffffffffffe`` and leaves on an unsigned
  ``jb``: the first update wraps it to 0, 16 passes, read as 1 (-95 % with the first error).
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

SOURCE = PROGRAMS_DIR / "paired_taps.c"
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_paired_outputs_are_counted_like_callgrind_or_undefined(tmp_path, compiler, level):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"taps_{compiler}{level}")
    for outputs in (100, 62):
        static, profiled, truth = static_profiled_and_measured(
            binary, SOURCE, ["outputs"], (outputs,), tmp_path
        )
        function = static.functions["paired_filter"]
        if function.counts is None:
            assert "machine loop" in (function.undef_reason or "")
        else:
            assert abs(total_error(static, truth, "paired_filter", {"outputs": outputs})) < 0.01, (
                function.notes
            )
        assert abs(total_error(profiled, truth, "paired_filter", {"outputs": outputs})) < 0.01


def test_a_counter_started_below_zero_wraps_under_an_unsigned_test(tmp_path):
    binary = compile_c("clang", "-O1", SOURCE, tmp_path / "taps_clang_O1")
    static, profiled, truth = static_profiled_and_measured(
        binary, SOURCE, ["outputs"], (100,), tmp_path
    )
    assert abs(total_error(static, truth, "paired_filter", {"outputs": 100})) < 0.001
    assert abs(total_error(profiled, truth, "paired_filter", {"outputs": 100})) < 0.001
