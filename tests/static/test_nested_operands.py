"""Operands of ``&&`` and ``?:`` nested in an ``if`` block (issue 20, verify20f K9 and K2).

The right operand of ``&&`` in an ``else if`` condition runs only when the left one holds
(gcc -O0 counted it in every run of the else block: +29 % on the reproducer, no note), and
the arms of a data-dependent ``?:`` (the ``MIN`` macro) in an ``if`` arm each run in a share
of that arm's runs (clang -O0 counted both at the arm's count: +19 %, a note only). The same
shapes outside loops (``pick``) and an ``&&`` in an ``if`` nested in another (``nested_and``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast import api
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    BUILDS,
    NEEDS_TOOLS,
    PROGRAMS_DIR,
    compile_c,
    run_callgrind,
)

SOURCE = PROGRAMS_DIR / "nested_operands.c"
VALUES = {"row": 13, "col": 17}
FUNCTIONS = ("corners", "nested_and", "step_min", "pick")
pytestmark = NEEDS_TOOLS


def _mixes(compiler: str, level: str, directory: Path) -> tuple:
    """(static mix, mix with the run as profile, callgrind's total per function)."""
    binary = compile_c(compiler, level, SOURCE, directory / f"nested_{compiler}{level}")
    run = run_callgrind(binary, tuple(VALUES.values()), directory)
    truth = {
        name: counts["total"]
        for name, counts in measured_mix(read_binary(binary), read_callgrind(run)).items()
    }
    report = api.analyze_source([SOURCE], list(VALUES))
    static = api.instruction_mix(binary, report, list(VALUES))
    profiled = api.instruction_mix(binary, report, list(VALUES), profiles=[(VALUES, run)])
    return static, profiled, truth


def _total(mix, name: str) -> float:
    function = mix.functions[name]
    assert function.counts is not None, (name, function.undef_reason)
    return function.evaluate(VALUES)["total"]


def test_gcc_O0_counts_nested_operands_exactly(tmp_path):
    """gcc -O0 keeps every operand in a block of its own: the loops' functions are exact
    (before: corners +14 %, nested_and +12 %, both without a note); ``pick``'s unbraced else
    arm, code of the line after ``else`` run on the outcome of the else-if's ``&&``, is
    undefined naming that condition (its line is also where an if-converting compiler puts
    the whole else-if); with the run as profile all four are exact."""
    static, profiled, truth = _mixes("gcc", "-O0", tmp_path)
    for name in ("corners", "nested_and", "step_min"):
        assert _total(static, name) == truth[name], name
        assert not static.functions[name].notes, name
    pick = static.functions["pick"]
    assert pick.counts is None and "pick:and@58:right" in pick.undef_reason
    for name in FUNCTIONS:
        assert _total(profiled, name) == truth[name], name


def test_clang_O0_conditional_expression_in_an_if_arm_is_undefined_naming_it(tmp_path):
    """clang -O0 branches on the MIN macro's ``?:`` inside ``if (n > 0)``: undefined naming
    the ``?:`` (before: both arms at the if arm's count, +18 % with a note); the ``&&`` in
    the nested if is exact; with the run as profile every function is exact."""
    static, profiled, truth = _mixes("clang", "-O0", tmp_path)
    step = static.functions["step_min"]
    assert step.counts is None
    assert "step_min:cond@48" in step.undef_reason and "guarded by the condition" in (
        step.undef_reason
    )
    pick = static.functions["pick"]
    assert pick.counts is None and "pick:cond@57" in pick.undef_reason
    assert _total(static, "nested_and") == truth["nested_and"]
    for name in FUNCTIONS:
        assert _total(profiled, name) == pytest.approx(truth[name], abs=0.5), name


KNOWN_MISSES = {("clang", "-O2"): {"step_min"}, ("clang", "-O3"): {"step_min"}}
"""Wrong totals with a note only that are not this test's shapes: clang -O2/-O3 turn the MIN
into a vector minimum (no branch left) and the vectorized loop with its remainder, widths
read from the binary, is counted 76 for 59 at col = 17 (a machine-loop miss, reported to
the owners of machine loops). The set is strict: a fix there must drop its entry."""


@pytest.mark.slow
@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_every_build_is_right_or_undefined_or_warned(compiler, level, tmp_path):
    """In every build each function is within 1 % of callgrind, undefined with a reason, or
    carries a ``warning:`` (never a wrong total with a note only, but for KNOWN_MISSES);
    with the run as profile every function is within 1 %."""
    static, profiled, truth = _mixes(compiler, level, tmp_path)
    missed = {}
    for name in FUNCTIONS:
        found = next(n for n in static.functions if n.split(".")[0] == name)
        function = static.functions[found]
        if function.counts is None:
            assert function.undef_reason, found
        elif abs(_total(static, found) / truth[found] - 1) >= 0.01 and not any(
            note.startswith("warning:") for note in function.notes
        ):
            missed[name] = (_total(static, found), truth[found], function.notes)
        assert _total(profiled, found) == pytest.approx(truth[found], rel=0.01), found
    assert set(missed) == KNOWN_MISSES.get((compiler, level), set()), missed
