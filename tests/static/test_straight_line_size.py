"""Sizes changed by straight-line code before the loops (issue 20, verify20f K4: Rodinia nw's
``max_rows = max_rows + 1;``): an argument or local whose every write is a plain ``=`` among
its function's top-level statements has, at a use, the value of the last write before it
(before: "the argument max_rows is modified in its function", the function undefined); a
write under an ``if`` still leaves the count undefined."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sympy

from perfcast import api

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    NEEDS_TOOLS,
    PROGRAMS_DIR,
    compile_c,
    static_profiled_and_measured,
)

SOURCE = PROGRAMS_DIR / "straight_line_size.c"


def _loops(report, function: str) -> list:
    return [k for k in report.kernels if k.kind == "loop" and k.function == function]


def test_the_last_straight_line_write_before_the_loop_gives_its_bound():
    report = api.analyze_source([SOURCE], ["n"])
    n = sympy.Symbol("n")

    def at(kernel, value: int) -> int:
        assert kernel.count is not None, (kernel.name, kernel.undef_reason)
        return int(kernel.count.subs({s: value for s in kernel.count.free_symbols}))

    outer, inner = _loops(report, "grid")
    assert (at(outer, 29), at(inner, 29)) == (30, 30 * 30)
    assert sympy.sympify(str(outer.count)).free_symbols == {n}
    (thirds,) = _loops(report, "halves")
    assert at(thirds, 29) == 14 * 3
    (guarded,) = _loops(report, "maybe")
    assert guarded.count is None and "m is not traced" in guarded.undef_reason


@pytest.mark.parametrize(("compiler", "level"), [("gcc", "-O0"), ("clang", "-O0")])
@NEEDS_TOOLS[0]
@NEEDS_TOOLS[1]
def test_straight_line_sizes_count_exactly_against_callgrind(compiler, level, tmp_path):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"sizes_{compiler}{level}")
    static, profiled, truth = static_profiled_and_measured(binary, SOURCE, ["n"], (29,), tmp_path)
    for name in ("grid", "halves"):
        function = static.functions[name]
        assert function.counts is not None, function.undef_reason
        assert function.evaluate({"n": 29})["total"] == truth[name], name
        assert profiled.functions[name].evaluate({"n": 29})["total"] == truth[name], name
