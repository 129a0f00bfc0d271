"""Sizes fixed when compiling, against callgrind (verify20d H7, verify20c G2b).

With ``-DSIZE=37`` an optimized binary counts its loops to the constant 37, and the trip counts
read from it replaced the source's ``SIZE``: ``main``'s model was ``740*SIZE + 8934`` at gcc
-O2, linear for a quadratic program, right at 37 only. Where two or more machine loops that
alone implement their source loops, one iteration per pass, give the same value for a
parameter (``SIZE - 0 = 37``), the source's counts are kept, with a note that the binary was
built for that value.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sympy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    BUILDS,
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    static_profiled_and_measured,
)

SOURCE = PROGRAMS_DIR / "fixed_sizes.c"
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_main_is_exact_at_the_built_size(tmp_path, compiler, level):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"sizes_{compiler}{level}")
    static, profiled, truth = static_profiled_and_measured(binary, SOURCE, ["SIZE"], (), tmp_path)
    for mix in (static, profiled):
        main = mix.functions["main"]
        if main.counts is None:
            assert mix is static and main.undef_reason
            continue
        assert abs(main.evaluate({"SIZE": 37})["total"] / truth["main"] - 1) < 0.01


def test_the_model_keeps_the_source_counts_in_the_size(tmp_path):
    binary = compile_c("gcc", "-O2", SOURCE, tmp_path / "sizes_gcc_O2")
    static, _, truth = static_profiled_and_measured(binary, SOURCE, ["SIZE"], (), tmp_path)
    main = static.functions["main"]
    assert main.counts is not None, main.undef_reason
    total = sympy.sympify(main.counts["total"])
    assert sympy.degree(total, sympy.Symbol("SIZE")) == 2, total
    assert main.evaluate({"SIZE": 37})["total"] == truth["main"]
    assert any("the binary was compiled for SIZE = 37" in note for note in main.notes)
