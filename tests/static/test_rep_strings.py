"""``rep``-prefixed string instructions counted as callgrind counts them (issue 20, F23).

gcc -O1..-O3 turn struct copies and the zeroing of fixed-size arrays into ``rep movsq`` /
``rep stosq`` with the element count moved into ``rcx``. Callgrind counts such an instruction
``rcx + 1`` times per run (each repetition and the final test of ``rcx = 0``); it was counted
once (LINPACK's ``main`` -8.8 %, here -69 % to -82 %). Now the count is read from the constant
in ``rcx``; a run-time ``rcx`` (a ``memcpy`` of ``n`` doubles inlined as ``rep movsb``) makes the
function undefined naming the instruction, and ``--profile`` gives the measured count.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast.static import analyze
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_loop_counts, measured_mix, read_callgrind
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "rep_strings.c"
REPS, N = 10, 100
RUN_TIME_STRINGS = ("-minline-all-stringops", "-mstringop-strategy=rep_byte")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed"),
]


def _mixes(level: str, directory: Path, *flags: str):
    """(static mix, mix with the run as profile, measured totals per function) of one build."""
    binary = directory / f"rep_strings{level}"
    subprocess.run(["gcc", "-g", level, *flags, "-o", str(binary), str(SOURCE)], check=True)
    machine_code = read_binary(binary)
    run = read_callgrind(run_callgrind(binary, (REPS, N), directory))
    report = analyze([SOURCE], ["reps", "n"])
    static = instruction_mix(machine_code, report, ["reps", "n"])
    measured = measured_loop_counts(machine_code, run)
    profiled = instruction_mix(machine_code, report, ["reps", "n"], measured=measured)
    return static, profiled, measured_mix(machine_code, run)


def _total(mix, name: str) -> float:
    function = mix.functions[name]
    assert function.counts is not None, function.undef_reason
    return function.evaluate({"reps": REPS, "n": N})["total"]


@pytest.mark.parametrize("level", ["-O1", "-O2", "-O3"])
def test_constant_repetitions_count_like_callgrind(tmp_path, level):
    static, profiled, measured = _mixes(level, tmp_path)
    for name, elements in (("copy_blocks", 50), ("zero_rows", 64)):
        truth = measured[name]["total"]
        assert abs(_total(static, name) / truth - 1) < 0.01, (name, static.functions[name])
        assert abs(_total(profiled, name) / truth - 1) < 0.01, (name, profiled.functions[name])
        notes = static.functions[name].notes
        assert any(f"rcx = {elements} repetitions per run" in note for note in notes), notes


def test_run_time_repetitions_are_undefined_or_measured(tmp_path):
    static, profiled, measured = _mixes("-O2", tmp_path, *RUN_TIME_STRINGS)
    copy = static.functions["copy_run_time"]
    assert copy.counts is None
    assert "rep movsb" in copy.undef_reason and "not a constant" in copy.undef_reason
    truth = measured["copy_run_time"]["total"]
    assert truth > 8 * N * REPS  # callgrind counts every byte moved
    assert abs(_total(profiled, "copy_run_time") / truth - 1) < 0.01
    notes = profiled.functions["copy_run_time"].notes
    assert any("rep movsb" in note and "repetitions measured" in note for note in notes)
