"""Loop headers and set-up statements written as comma expressions (verify20d H6, Embench edn's
``jpegdct``): ``for (k = 1, m = 0, p = 8; k <= 8; k += 7, m += 1, ...)`` was undefined with "the
loop's initialisation does not assign its variable k", and ``lo = 0, hi = n;`` before a loop left
``hi`` "not traced". The loop variable is assigned in one operand; now the counts follow.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sympy

from perfcast.static import analyze

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    BUILDS,
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    static_profiled_and_measured,
    total_error,
)

SOURCE = PROGRAMS_DIR / "comma_loops.c"
N = 50


def _counts() -> dict[str, sympy.Expr | None]:
    report = analyze([SOURCE], ["n"])
    return {k.name: k.count for k in report.kernels}


def test_comma_initialisation_and_step_give_the_count():
    counts = _counts()
    assert counts["passes:loop@11"] == 2
    assert counts["passes:loop@12"] is not None
    assert counts["passes:loop@12"].subs("n", N) == 2 * N


def test_a_comma_statement_before_a_loop_sets_its_start_and_bound():
    counts = _counts()
    assert counts["walk_pairs:loop@21"] is not None
    assert counts["walk_pairs:loop@21"].subs("n", N) == 25


def test_a_comma_operand_reading_another_operands_write_is_not_taken(tmp_path):
    source = tmp_path / "reads_earlier_operand.c"
    source.write_text(
        "void f(int *v, int n) {\n"
        "    int i, m;\n"
        "    for (m = n, i = m - n; i < n; i++)\n"
        "        v[i] = i;\n"
        "}\n"
    )
    kernel = next(k for k in analyze([source], ["n"]).kernels if k.name == "f:loop@3")
    # i's start reads m as assigned by the first operand; no start is guessed for it
    assert kernel.count is None
    assert "initialisation" in (kernel.undef_reason or "")


@pytest.mark.parametrize(
    "compiler", [pytest.param(c, marks=NEEDS_BOTH_COMPILERS_AND_VALGRIND) for c in ("gcc", "clang")]
)
def test_comma_loops_match_callgrind_unoptimized(tmp_path, compiler):
    binary = compile_c(compiler, "-O0", SOURCE, tmp_path / f"comma_{compiler}")
    static, _, truth = static_profiled_and_measured(binary, SOURCE, ["n"], (N,), tmp_path)
    for name in ("passes", "walk_pairs"):
        function = static.functions[name]
        assert function.counts is not None, function.undef_reason
        assert function.evaluate({"n": N})["total"] == truth[name], name


@pytest.mark.parametrize(
    ("compiler", "level"),
    [pytest.param(*b, marks=NEEDS_BOTH_COMPILERS_AND_VALGRIND) for b in BUILDS],
)
def test_copies_of_a_completely_unrolled_outer_loop_are_right_or_undefined(
    tmp_path, compiler, level
):
    # gcc -O2 unrolls the two passes of `k` completely: one pass in closed form, the other a
    # machine loop of `i` that was counted for both passes (+98 %, silent)
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"comma_{compiler}{level}")
    static, profiled, truth = static_profiled_and_measured(binary, SOURCE, ["n"], (N,), tmp_path)
    function = static.functions["passes"]
    if function.counts is None:
        assert function.undef_reason, function.notes
    else:
        assert abs(total_error(static, truth, "passes", {"n": N})) <= 0.01, function.notes
    assert abs(total_error(profiled, truth, "passes", {"n": N})) <= 0.01
