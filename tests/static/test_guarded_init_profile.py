"""Straight-line code under a data guard outside loops takes its measured count with --profile.

``guarded_init.c`` has NAS randlc's one-time set-up: ``if (ready == 0) {...; for (...) ...;
ready = 1;}`` in a function called n times. The guard's count is undefined, so the function is
without a profile; with one, only the blocks of machine loops took measured counts and the rest
of the guarded code counted at every call (NAS IS's randlc +14 % to +38 %). Now a block
outside machine loops that some calls skip (it does not dominate every exit of the machine
code) takes the share of the innermost ``if`` block holding one of its instructions, and when
that block's count is undefined, or no source line tells (gcc -O2 puts the set-up on the
return's line), its measured count. Without a profile the function is undefined naming the
guard, also when clang -O2 folds the guarded loop away (straight-line code only).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast.static import analyze
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_loop_counts, measured_mix, read_callgrind
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    run_callgrind,
)

SOURCE = PROGRAMS_DIR / "guarded_init.c"
CALLS = 1000
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


def _next(compiler: str, level: str, directory: Path):
    """(static mix of ``next``, the same with the run as profile, measured total)."""
    binary = directory / f"guarded_{compiler}{level}"
    compile_c(compiler, level, SOURCE, binary)
    machine_code = read_binary(binary)
    run = read_callgrind(run_callgrind(binary, (CALLS,), directory))
    report = analyze([SOURCE], ["n"])
    static = instruction_mix(machine_code, report, ["n"]).functions["next"]
    measured = measured_loop_counts(machine_code, run)
    profiled = instruction_mix(machine_code, report, ["n"], measured=measured).functions["next"]
    return static, profiled, measured_mix(machine_code, run)["next"]["total"]


@pytest.mark.parametrize(
    ("compiler", "level"),
    [
        ("gcc", "-O0"),
        ("gcc", "-O1"),
        ("gcc", "-O2"),  # the set-up on the return's line: its block is the guard's (the CFG)
        ("clang", "-O0"),
        ("clang", "-O1"),
        ("clang", "-O2"),  # the guarded loop folded away: straight-line code only
        ("clang", "-O3"),
    ],
)
def test_the_guarded_set_up_takes_its_measured_count(tmp_path, compiler, level):
    static, profiled, truth = _next(compiler, level, tmp_path)
    assert profiled.counts is not None, profiled.undef_reason
    assert abs(profiled.evaluate({"n": CALLS})["total"] / truth - 1) < 0.01
    assert any("count measured" in note and "(ready == 0)" in note for note in profiled.notes)
    # undefined without a profile, naming the guard (its loop's, or its straight-line code's)
    assert static.counts is None
    assert "ready is not traced" in static.undef_reason
    assert f"{SOURCE}:11 (ready == 0) holds" in static.undef_reason


def test_gcc_o2_set_up_on_the_line_of_the_return(tmp_path):
    # no source line tells that this code is guarded (verify20b F4); the control flow does:
    # a block outside loops that some calls skip takes its measured count (static23)
    _, profiled, truth = _next("gcc", "-O2", tmp_path)
    assert abs(profiled.evaluate({"n": CALLS})["total"] / truth - 1) < 0.01
