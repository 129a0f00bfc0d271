"""A counter that steps by several source iterations, used by no address (verify20f K15, and
static34's hoisted_call.c at clang -O2): clang turns ``if (i & 1) continue;`` into a loop over
the even ``i`` (``add rax, 2`` up to ``n & -2``), and a repetition loop unrolled by two counts
``rpt & -2`` down by 2. Both were counted once per source iteration, silently (+98 % and
+81 %). Such a pass covers more than one source iteration: the count is undefined naming the
machine loop, and a profiled run measures it."""

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
    total_error,
)

pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_a_loop_over_the_even_iterations_is_right_or_undefined(tmp_path, compiler, level):
    source = PROGRAMS_DIR / "even_steps.c"
    binary = compile_c(compiler, level, source, tmp_path / "even")
    static, profiled, truth = static_profiled_and_measured(binary, source, ["n"], (203,), tmp_path)
    function = static.functions["decrement_even"]
    if function.counts is not None and any("over-counted" in note for note in function.notes):
        # gcc -O2/-O3 and clang -O1 keep the odd test and copy the increment onto both of its
        # ways: an upper bound that says so
        assert total_error(static, truth, "decrement_even", {"n": 203}) > 0
        assert abs(total_error(profiled, truth, "decrement_even", {"n": 203})) < 0.01
        return
    assert_right_or_undefined(static, profiled, truth, "decrement_even", {"n": 203}, 0.01)


@pytest.mark.parametrize("level", ["-O2", "-O3"])
def test_a_repetition_loop_unrolled_by_two_is_right_or_undefined(tmp_path, level):
    source = PROGRAMS_DIR / "hoisted_call.c"
    binary = compile_c("clang", level, source, tmp_path / "hoisted")
    static, profiled, truth = static_profiled_and_measured(
        binary, source, ["rpt"], (100, 0), tmp_path
    )
    assert_right_or_undefined(static, profiled, truth, "main", {"rpt": 100}, 0.01)
