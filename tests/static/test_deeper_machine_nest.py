"""A machine nest deeper than the source's (issue 20, verify20c's G5).

gcc-12 -O3 unrolls the outer loop of ``unroll2_nested.c`` (a triangular inner loop, PolyBench
durbin's shape) into copies around the vectorized inner loop: three machine loops for two
source loops. The middle one was matched to the inner source loop by its lines and took its
count (1,770 instead of 30 or 58 runs): +536 % with ``--profile``. Machine loops around a loop
that has no source loop at its depth and runs the body of the source loop they were matched to
are now undefined with the reason, so a profile measures them.
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

SOURCE = PROGRAMS_DIR / "unroll2_nested.c"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed"),
]


def test_copies_of_an_outer_loop_around_the_inner_one_are_measured(tmp_path):
    binary_path = tmp_path / "unroll2_nested-O3"
    subprocess.run(["gcc", "-g", "-O3", "-o", str(binary_path), str(SOURCE)], check=True)
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, (), tmp_path))
    report = analyze([SOURCE], ["n"])
    static = instruction_mix(binary, report, ["n"]).functions["triangle"]
    measured = measured_loop_counts(binary, profile)
    triangle = instruction_mix(binary, report, ["n"], measured=measured).functions["triangle"]
    assert static.counts is None
    truth = measured_mix(binary, profile)["triangle"]["total"]
    assert triangle.counts is not None, triangle.undef_reason
    assert abs(triangle.evaluate({"n": 60})["total"] / truth - 1) < 0.01, triangle.notes
    assert any("machine nest deeper than the source's" in note for note in triangle.notes)
