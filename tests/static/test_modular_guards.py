"""Guards testing a remainder of loop variables (issue 20, PolyBench's dump loops): the count of
``v % m == r`` over a loop is exact, and so is ``(B*i + j) % m == r`` over a full nest
``0 <= i < A, 0 <= j < B`` (the flattened index); ``!=`` and plain values are the complement.
Checked against enumeration of the iterations, and per function against callgrind on real gcc
and clang builds: every defined total within 1 % or undefined.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import sympy

from perfcast.static import analyze
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind
from perfcast.static.instruction_mix import instruction_mix
from perfcast.static.symbolic import (
    Level,
    Negation,
    Piece,
    Residue,
    Undefined,
    sum_over_levels,
    total,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import BUILDS, CLANG, PROGRAMS_DIR, compile_c, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "modular_guards.c"
FUNCTIONS = ("dump_flat", "dump_rows", "skip_some", "odd_offsets", "main")
N = sympy.Symbol("n", integer=True, positive=True)

needs_tools = pytest.mark.skipif(
    shutil.which("valgrind") is None or shutil.which("gcc") is None,
    reason="valgrind and gcc are needed",
)


def _level(name: str, start: int, step: int, trip: sympy.Expr) -> Level:
    """An additive loop level ``start, start + step, ...`` of ``trip`` iterations."""
    variable = sympy.Dummy(name, integer=True)
    counter = sympy.Dummy("k", integer=True, nonnegative=True)
    last = start + step * (trip - 1)
    return Level(
        variable=variable,
        counter=counter,
        value=start + step * counter,
        trip=trip,
        nonempty=(trip - 1,),
        strict=False,
        low=sympy.Min(start, last),
        high=sympy.Max(start, last),
        step=sympy.Integer(step),
        start=sympy.Integer(start),
        line=1,
    )


def _count(levels: list[Level], guards: list, n: int) -> int:
    return int(total(sum_over_levels(levels, guards, [Piece(sympy.Integer(1))])).subs(N, n))


@pytest.mark.parametrize(
    ("start", "step", "modulus", "remainder", "offset"),
    [(0, 1, 20, 0, 0), (3, 1, 7, 2, 0), (0, 2, 3, 0, 1), (5, -1, 4, 1, 0), (0, 2, 4, 1, 0)],
)
def test_one_level_remainder_counts_match_enumeration(start, step, modulus, remainder, offset):
    trip = N if step > 0 else N + 1  # the descending loop runs from 5 down to 5 - n
    level = _level("i", start, step, trip)
    guard = Residue(level.variable + offset, modulus, remainder)
    for n in (1, 2, 7, 20, 21, 60, 61):
        values = [start + step * k for k in range(int(trip.subs(N, n)))]
        hits = sum(1 for v in values if (v + offset) % modulus == remainder)
        assert _count([level], [guard], n) == hits, (n, hits)
        assert _count([level], [Negation((guard,))], n) == len(values) - hits


def test_flattened_index_of_a_full_nest_is_counted():
    outer, inner = _level("i", 0, 1, N), _level("j", 0, 1, N)
    guard = Residue(N * outer.variable + inner.variable, 20, 0)
    for n in (1, 3, 20, 59, 60):
        assert _count([outer, inner], [guard], n) == (n * n - 1) // 20 + 1


def test_remainder_over_unrelated_levels_stays_undefined():
    outer, inner = _level("i", 0, 1, N), _level("j", 0, 1, N)
    guard = Residue(3 * outer.variable + inner.variable, 20, 0)  # 3 != the inner trip n
    with pytest.raises(Undefined, match="flattened index"):
        sum_over_levels([outer, inner], [guard], [Piece(sympy.Integer(1))])


@pytest.fixture(scope="module")
def report():
    return analyze([SOURCE], ["n"])


def _check_build(compiler: str, level: str, tmp_path: Path, report, n: int) -> list[str]:
    """Compare every function with callgrind; returns the names with a defined total."""
    binary_path = compile_c(compiler, level, SOURCE, tmp_path / f"modular_{compiler}{level}")
    binary = read_binary(binary_path)
    truth = measured_mix(binary, read_callgrind(run_callgrind(binary_path, (n,), tmp_path)))
    mix = instruction_mix(binary, report, ["n"])
    defined = []
    for name in FUNCTIONS:
        function = mix.functions[name]
        if function.counts is None:
            assert "Mod(" not in (function.undef_reason or ""), function.undef_reason
            continue
        predicted = function.evaluate({"n": n})["total"]
        measured = truth.get(name, {}).get("total", 0)
        assert abs(predicted - measured) <= 0.01 * measured, (name, predicted, measured)
        defined.append(name)
    return defined


@needs_tools
def test_remainder_guards_are_exact_at_O0(tmp_path, report):
    defined = _check_build("gcc", "-O0", tmp_path, report, 60)
    assert set(defined) == set(FUNCTIONS)


@needs_tools
def test_a_loop_that_never_runs_gives_zero_not_nan(tmp_path, report):
    """skip_some's loop starts at 3: at n = 3 it is empty, its share of the block is 0."""
    defined = _check_build("gcc", "-O0", tmp_path, report, 3)
    assert "skip_some" in defined


@needs_tools
@pytest.mark.slow
@pytest.mark.parametrize(("compiler", "level"), [b for b in BUILDS if b != ("gcc", "-O0")])
def test_every_defined_total_is_within_one_percent(tmp_path, report, compiler, level):
    if compiler == "clang" and CLANG is None:
        pytest.skip("clang is not installed")
    defined = _check_build(compiler, level, tmp_path, report, 61)
    if compiler == "gcc":  # gcc keeps each guard's block on its line: something is counted
        assert defined, (compiler, level)
