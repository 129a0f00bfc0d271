"""``?:`` arms and ``&&`` operands outside loops (verify20d H9): both arms of
``int n = argc > 1 ? atoi(argv[1]) : N;`` and the false exits of ``return a && b && c;`` were
counted as if every one ran (silently, at -O0 and -O1). Now, like the ``if`` form, such a block
counts with its part's share (a guard on a parameter, a ``probability`` pragma) or is undefined
naming the condition, and takes its measured count with ``--profile``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sympy

from perfcast.static import analyze

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    static_profiled_and_measured,
)

SOURCE = PROGRAMS_DIR / "operators_outside_loops.c"
N = 30
VALUES = {"n": N, "p": sympy.Rational(1, 3)}  # weighted's flag holds for i % 3 == 0
BUILDS = [(c, level) for c in ("gcc", "clang") for level in ("-O0", "-O1", "-O2")]
PARTS = (":cond@", ":and@", "the condition at")


def test_operands_outside_loops_are_counted_under_their_condition():
    report = analyze([SOURCE], ["n"])
    parts = {c.name: c for c in report.conditions}
    then, otherwise = parts["scaled:cond@16:then"].count, parts["scaled:cond@16:else"].count
    assert then is not None and otherwise is not None
    assert (then + otherwise).subs("n", N) == N  # one arm per call, N calls
    assert then.subs("n", N) == 0 and then.subs("n", 200) == 200
    weighted = parts["weighted:cond@23:then"].count
    assert weighted is not None and {s.name for s in weighted.free_symbols} == {"n", "p"}
    # argc is no parameter: the arm's count is undefined, saying so
    assert parts["main:cond@30:else"].count is None
    assert "argc" in (parts["main:cond@30:else"].undef_reason or "")


@pytest.mark.parametrize(
    ("compiler", "level"),
    [pytest.param(c, o, marks=NEEDS_BOTH_COMPILERS_AND_VALGRIND) for c, o in BUILDS],
)
def test_operand_blocks_are_counted_named_or_measured(tmp_path, compiler, level):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"operators_{compiler}{level}", "-lm")
    static, profiled, truth = static_profiled_and_measured(binary, SOURCE, ["n"], (N,), tmp_path)
    for name in ("within", "scaled", "weighted", "main"):
        function = static.functions[name]
        if function.counts is None:
            assert any(part in (function.undef_reason or "") for part in PARTS), name
        else:
            predicted = function.evaluate(VALUES)["total"]
            assert abs(predicted / truth[name] - 1) < 0.01, (name, predicted, truth[name])
        assert profiled.functions[name].evaluate(VALUES)["total"] == truth[name], name
    # the run-time choice of main is never counted as if both arms ran
    assert static.functions["main"].counts is None
    assert "main:cond@30" in (static.functions["main"].undef_reason or "")
    if level == "-O0":  # the arms' code stays in place: the parameter guard gives the share
        assert static.functions["scaled"].counts is not None
