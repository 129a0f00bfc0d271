"""What keeps the static analysis fast without changing its results (issue 20, speed).

The figures are in benchmarks/optimized_mix.py (``--speed-only``); these tests check the
mechanisms: an analysis leaves no reference cycles for Python's collector to chase, and the
test for a constant range condition gives the decisions ``sympy.simplify`` gave.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import sympy

from perfcast.api import analyze_source
from perfcast.static.symbolic import _constant_value

PROGRAMS = Path(__file__).resolve().parent / "programs"


def test_an_analysis_leaves_no_cyclic_garbage():
    source = PROGRAMS / "cg_csr.c"
    analyze_source([source], ["m"])  # sympy's and libclang's first-use caches
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        report = analyze_source([source], ["m"])
        assert report.kernels
        gc.collect()
        # the unit's cursor tree and the walk's records were freed by reference counting;
        # what is left in cycles are a few small closures (libclang's bindings make some)
        left = {type(thing).__name__ for thing in gc.garbage}
        assert not left & {"KernelRecord", "CallRecord", "Context", "Program", "_Analysis"}
        assert len(gc.garbage) < 2_000
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


n, m = sympy.symbols("n m", integer=True, positive=True)


@pytest.mark.parametrize(
    "expression",
    [
        sympy.Integer(-1),
        sympy.Integer(3),
        n - 1,
        -n,
        (n + 1) ** 2 - n**2 - 2 * n,  # the constant 1, written as a polynomial
        (n + 1) ** 2 - n**2 - 2 * n - 5,  # the constant -4
        n * m - m * n + 2,  # sympy folds this at once
        sympy.floor(n / 2) * 2 - n + 1,  # no polynomial: simplified
        sympy.Max(n, 3) - 3,
        sympy.Mod(n, 3),  # two values at two points: not constant, without simplify
        sympy.Mod(2 * n, 2) + 3,  # the same value at both points: simplified (the constant 3)
        sympy.Min(1, n),  # 1 for every positive n
        sympy.Max(sympy.Symbol("k", integer=True, negative=True), 0),  # 0: k is never above 0
    ],
)
def test_the_constant_test_decides_as_simplify_does(expression):
    simplified = sympy.simplify(expression)
    expected = simplified if simplified.is_number else None
    assert _constant_value(expression) == expected
