"""A column walk whose index register steps by a whole row, against callgrind (verify20d H8,
PolyBench gemver with a run-time size).

clang -O1 walks ``a[j][i]`` down a column with an index register stepped by a row of 64
elements (``add r8, 0x40`` addressing ``[rdx + r8*8]``): the step was read as 64 source
iterations per pass (-98 % on ``transposed_product``, also with ``--profile``, the width
being read from the binary). An element index in scalar code that reaches one element of
each array per pass covers one source iteration, whatever its step.
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

SOURCE = PROGRAMS_DIR / "column_products.c"
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_column_walks_are_counted_like_callgrind_or_undefined(tmp_path, compiler, level):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"columns_{compiler}{level}")
    for n in (41, 40):
        static, profiled, truth = static_profiled_and_measured(
            binary, SOURCE, ["n"], (n,), tmp_path
        )
        function = static.functions["transposed_product"]
        if function.counts is None:
            assert "machine loop" in (function.undef_reason or "")
        else:
            assert abs(total_error(static, truth, "transposed_product", {"n": n})) < 0.01, (
                function.notes
            )
        assert abs(total_error(profiled, truth, "transposed_product", {"n": n})) < 0.01


def test_the_single_iteration_path_of_an_unrolled_loop_is_not_counted(tmp_path):
    """clang -O2 unrolls the inner loop by 2 behind ``cmp edi, 1; jne`` (a compiler-made test
    whether the unrolled loop takes a pass at all); the two instructions of the n == 1 path
    (no source line) counted in every outer iteration, as did the way into the loop (+1.3 %
    at n = 23). The way around runs ``1 - Min(1, floor(n/2))`` times per outer iteration."""
    binary = compile_c("clang", "-O2", SOURCE, tmp_path / "columns_clang_O2")
    for n in (23, 1):
        static, _, truth = static_profiled_and_measured(binary, SOURCE, ["n"], (n,), tmp_path)
        function = static.functions["transposed_product"]
        assert abs(total_error(static, truth, "transposed_product", {"n": n})) < 0.01
        assert not any("inconsistent" in note for note in function.notes), function.notes
