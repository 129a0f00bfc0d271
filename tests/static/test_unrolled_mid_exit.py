"""Loops unrolled with the exit test after the first copy of the body, against callgrind.

For an odd constant trip count clang -O2/-O3 unrolls by 2 or 4 and tests for the end after the
first copy: the header holds that copy and the test, the only latch the other copies, the
induction update and an unconditional jump back. The exit test was looked for at the latch
only, so no trip count was read, and a loop without packed instructions was taken to cover one
source iteration per pass: NAS IS's running sums (511 and 2047 iterations) and PolyBench
covariance's column sums (37 rows) were counted 2 to 4 times over, with no note. The program
``unrolled_mid_exit.c`` has both shapes; every build of it is compared with a callgrind run.
At gcc -O2/-O3 the column sums show a second shape: the outer loop vectorized.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast.static import analyze
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    BUILDS,
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    run_callgrind,
)

SOURCE = PROGRAMS_DIR / "unrolled_mid_exit.c"
REPS = 10
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


def _mix(compiler: str, level: str, directory: Path):
    """(static mix, measured totals per function) of one build."""
    binary = directory / f"unrolled_{compiler}{level}"
    compile_c(compiler, level, SOURCE, binary)
    machine_code = read_binary(binary)
    run = read_callgrind(run_callgrind(binary, (REPS,), directory))
    measured = measured_mix(machine_code, run)
    return instruction_mix(machine_code, analyze([SOURCE], ["reps"]), ["reps"]), measured


def _within_one_percent(mix, measured, name: str) -> None:
    function = mix.functions[name]
    assert function.counts is not None, function.undef_reason
    predicted = function.evaluate({"reps": REPS})["total"]
    truth = measured[name]["total"]
    assert abs(predicted / truth - 1) < 0.01, (name, predicted, truth, function.notes)


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_every_build_counts_the_running_sum_like_callgrind(tmp_path, compiler, level):
    mix, measured = _mix(compiler, level, tmp_path)
    _within_one_percent(mix, measured, "running_sum")
    _within_one_percent(mix, measured, "main")
    _within_one_percent(mix, measured, "column_sums")


def test_the_unrolled_loops_take_the_trip_counts_of_the_binary(tmp_path):
    mix, measured = _mix("clang", "-O2", tmp_path)
    for name, per_entry in (("running_sum", "255"), ("column_sums", "9")):
        notes = mix.functions[name].notes
        assert any(f"runs {per_entry} times per entry (read from the binary)" in n for n in notes)
        _within_one_percent(mix, measured, name)


@pytest.mark.parametrize("level", ["-O2", "-O3"])
def test_outer_loop_vectorization_keeps_one_row_per_inner_pass(tmp_path, level):
    """gcc vectorizes column_sums' outer loop (two columns per pass) and steps the inner loop's
    pointer over rows, 0xf0 bytes it does not read: that step over the element size read as 30
    source iterations per pass (-91.5 % against callgrind, with no note)."""
    mix, measured = _mix("gcc", level, tmp_path)
    notes = mix.functions["column_sums"].notes
    assert not any("(30 per pass)" in note for note in notes), notes
    assert any("runs 15 times per entry (read from the binary)" in note for note in notes)
    _within_one_percent(mix, measured, "column_sums")
