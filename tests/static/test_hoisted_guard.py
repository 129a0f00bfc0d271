"""A guarded call moved out of its loop (issue 20, static34; verify20e J17): clang -O3 (and gcc
-O3 for a product it folds to constants) runs the loop-invariant inlined body once, outside the
loop, under a test it made of the loop's bound and the guard's variable, in code with no source
line or only the loop's. The variable that test compares (DWARF location lists) ties the code to
the ``if`` testing it: the code counts with that guard's probability, so probability 0 gives 0
and probability 1 the run's count; code no guard ties to is undefined, never counted as if
unguarded."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast import api
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import NEEDS_TOOLS, PROGRAMS_DIR, compile_c, run_callgrind  # noqa: E402

ANNOTATED = PROGRAMS_DIR / "hoisted_guard.c"  # `#pragma perfcast probability(p_verify)`
NEVER = PROGRAMS_DIR / "hoisted_call.c"  # `#pragma perfcast probability(0)`
pytestmark = NEEDS_TOOLS


def _static_and_truth(source, compiler, level, arguments, values, directory):
    binary = compile_c(compiler, level, source, directory / f"{compiler}{level}")
    run = run_callgrind(binary, arguments, directory)
    truth = measured_mix(read_binary(binary), read_callgrind(run))["main"]["total"]
    report = api.analyze_source([source], sorted(values))
    mix = api.instruction_mix(binary, report, sorted(values), values=values)
    return mix.functions["main"], truth


@pytest.mark.parametrize("verify", [0, 1])
def test_clang_O3_moved_call_counts_with_its_guards_probability(tmp_path, verify):
    function, truth = _static_and_truth(
        ANNOTATED, "clang", "-O3", (5, verify), {"rpt": 5, "p_verify": verify}, tmp_path
    )
    assert function.counts is not None, function.undef_reason
    assert function.evaluate({"rpt": 5, "p_verify": verify})["total"] == truth
    assert "p_verify" in str(function.counts["total"])  # the guard's probability is in the model
    tie = [note for note in function.notes if "main:if@29:then" in note]
    assert tie and "compares verify with zero" in tie[0], function.notes


@pytest.mark.parametrize("compiler", ["clang", "gcc"])
def test_probability_zero_moved_call_contributes_nothing_at_O3(tmp_path, compiler):
    function, truth = _static_and_truth(NEVER, compiler, "-O3", (5, 0), {"rpt": 5}, tmp_path)
    if function.counts is None:
        assert "main:if@31" in function.undef_reason or "guard" in function.undef_reason
        return
    assert function.evaluate({"rpt": 5})["total"] == truth, function.notes


def test_moved_code_no_guard_ties_to_is_undefined_not_counted(tmp_path):
    # the guard `check > 1` is compared with 1, not with zero: nothing ties the moved code
    # to it, so it is undefined (naming the block), and the profile measures it
    source = tmp_path / "greater.c"
    source.write_text(NEVER.read_text().replace("if (check)", "if (check > 1)"))
    function, truth = _static_and_truth(source, "clang", "-O3", (5, 0), {"rpt": 5}, tmp_path)
    if function.counts is not None:
        assert function.evaluate({"rpt": 5})["total"] == truth, function.notes
        return
    assert "runs in some calls only" in function.undef_reason
    binary = tmp_path / "clang-O3"
    report = api.analyze_source([source], ["rpt"])
    run = run_callgrind(binary, (5, 0), tmp_path)
    profiled = api.instruction_mix(binary, report, ["rpt"], profiles=[({"rpt": 5}, run)])
    assert profiled.functions["main"].evaluate({"rpt": 5})["total"] == truth
