"""The last element of an odd row after a loop unrolled by 2, inlined into its caller, against
callgrind (verify20d H10, PolyBench mvt with a run-time size).

clang -O2 unrolls ``fill_rows``' j loop by 2 inside ``main`` and runs one more copy of the body
behind ``test r8, r8; je`` when ``n`` is odd. That copy was recognised as the loop's remainder
only in a function of its own: inlined, its instructions carry the inlined call, and the test
for the body's code took them for another function's. It counted once per row (+2.2 % at
n = 62, where it never runs); it now runs ``n - 2*floor(n/2)`` times per row.
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
)

SOURCE = PROGRAMS_DIR / "odd_tail.c"
ALLOCATOR = PROGRAMS_DIR / "unrolled_chain_alloc.c"
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_even_and_odd_rows_are_counted_like_callgrind(tmp_path, compiler, level):
    binary = tmp_path / f"odd_tail_{compiler}{level}"
    compile_c(compiler, level, SOURCE, binary, str(ALLOCATOR))
    for n in (62, 43):
        static, profiled, truth = static_profiled_and_measured(
            binary, SOURCE, ["n"], (n,), tmp_path
        )
        for mix in (static, profiled):
            main = mix.functions["main"]
            if main.counts is None:
                assert mix is static and main.undef_reason
                continue
            assert abs(main.evaluate({"n": n})["total"] / truth["main"] - 1) < 0.01, main.notes


def test_the_odd_element_is_the_remainder_of_the_unrolled_loop(tmp_path):
    binary = tmp_path / "odd_tail_clang_O2"
    compile_c("clang", "-O2", SOURCE, binary, str(ALLOCATOR))
    static, _, _ = static_profiled_and_measured(binary, SOURCE, ["n"], (62,), tmp_path)
    notes = static.functions["main"].notes
    assert any("runs the remainder of source loop fill_rows:loop@" in note for note in notes)
