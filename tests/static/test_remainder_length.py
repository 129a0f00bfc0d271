"""An inner loop whose length is a remainder (issue 20, verify20f K1: Embench tarfind's
``5 + i % 94``): the range is shown non-empty, since C's ``%`` of a non-negative value lies in
``[0, divisor)`` (before: undefined, "cannot show that the range Mod(i, 94) + 5 >= 0 is
non-empty"); ``9 - i % 4`` under a parameter bound has no closed-form sum and stays undefined,
saying so."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sympy

from perfcast import api
from perfcast.static.symbolic import Level, prove_nonnegative

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    NEEDS_TOOLS,
    PROGRAMS_DIR,
    compile_c,
    static_profiled_and_measured,
)

SOURCE = PROGRAMS_DIR / "remainder_length.c"


def test_a_remainder_by_a_positive_number_is_bounded_by_it():
    i, k = sympy.Dummy("i", integer=True), sympy.Dummy("k", integer=True, nonnegative=True)
    n = sympy.Symbol("n", positive=True, integer=True)
    domain = [
        Level(
            variable=i,
            counter=k,
            value=k,
            trip=n,
            nonempty=(n - 1,),
            strict=False,
            low=sympy.Integer(0),
            high=n - 1,
            step=sympy.Integer(1),
            start=sympy.Integer(0),
            line=1,
        )
    ]
    assert prove_nonnegative(sympy.Mod(i, 94) + 5, domain)
    assert prove_nonnegative(4 - sympy.Mod(i, 5), domain)
    assert not prove_nonnegative(3 - sympy.Mod(i, 5), domain)
    assert not prove_nonnegative(sympy.Mod(i, 94) - 1, domain)


def test_the_remainder_length_is_counted():
    report = api.analyze_source([SOURCE], ["n"])
    inner = next(k for k in report.kernels if k.name.startswith("fill:loop@13"))
    assert inner.count is not None, inner.undef_reason
    assert inner.count == sum(5 + i % 94 for i in range(100))
    nested = next(k for k in report.kernels if k.name.startswith("tail:loop@22"))
    assert nested.count is None and "closed form" in nested.undef_reason


@pytest.mark.parametrize(("compiler", "level"), [("gcc", "-O0"), ("clang", "-O0")])
@NEEDS_TOOLS[0]
@NEEDS_TOOLS[1]
def test_fill_counts_exactly_against_callgrind(compiler, level, tmp_path):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"remainder_{compiler}{level}")
    static, profiled, truth = static_profiled_and_measured(binary, SOURCE, ["n"], (40,), tmp_path)
    function = static.functions["fill"]
    assert function.counts is not None, function.undef_reason
    assert function.evaluate({"n": 40})["total"] == truth["fill"]
    assert profiled.functions["fill"].evaluate({"n": 40})["total"] == truth["fill"]
