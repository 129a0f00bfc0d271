"""A chained assignment in a for loop's start (issue 20, verify20f K3): ``j = n = 0`` starts j
at the value stored, 0 (before: undefined, "n is not traced to the parameters"); a store that
may change the value (300 into an ``unsigned char``) stays undefined, saying so."""

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

SOURCE = PROGRAMS_DIR / "chained_start.c"


def _loop(report, function: str):
    return next(k for k in report.kernels if k.kind == "loop" and k.function == function)


def test_chained_assignment_starts_the_loop_at_the_stored_value():
    report = api.analyze_source([SOURCE], ["iters"])
    iters = sympy.Symbol("iters")
    chained = _loop(report, "chained")
    assert chained.count is not None, chained.undef_reason
    assert (
        sympy.simplify(chained.count.subs({s: iters for s in chained.count.free_symbols}) - iters)
        == 0
    )
    widened = _loop(report, "widened")
    assert widened.count is not None, widened.undef_reason
    assert widened.count.subs({s: 10 for s in widened.count.free_symbols}) == 8
    narrowed = _loop(report, "narrowed")
    assert narrowed.count is None
    assert "line 30 may change the value it stores" in narrowed.undef_reason


@pytest.mark.parametrize(("compiler", "level"), [("gcc", "-O0"), ("clang", "-O0")])
@NEEDS_TOOLS[0]
@NEEDS_TOOLS[1]
def test_chained_start_is_exact_against_callgrind(compiler, level, tmp_path):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"chained_{compiler}{level}")
    static, profiled, truth = static_profiled_and_measured(
        binary, SOURCE, ["iters"], (40,), tmp_path
    )
    for name in ("chained", "widened"):
        function = static.functions[name]
        assert function.counts is not None, function.undef_reason
        assert function.evaluate({"iters": 40})["total"] == truth[name], name
        assert profiled.functions[name].evaluate({"iters": 40})["total"] == truth[name], name
