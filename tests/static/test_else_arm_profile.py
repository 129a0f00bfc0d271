"""The unbraced else arm of a nested ``if`` keeps its own block (issue 20, verify20c's G6).

In ``else_arm.c`` (PolyBench nussinov's shape) the else arm's statement is on the line after
``else``; the report's else block starts on that line, which was taken for the ``} else {``
line (condition code) and so not the block's own code: the arm took the share of the outer
``if`` (every iteration) while its then arm was measured, +18 % to +99 % with ``--profile``.
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

SOURCE = PROGRAMS_DIR / "else_arm.c"
CLANG = shutil.which("clang-16") or shutil.which("clang")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
    pytest.mark.skipif(CLANG is None or shutil.which("gcc") is None, reason="gcc and clang"),
]


@pytest.mark.parametrize(
    ("compiler", "level"),
    [("gcc", "-O0"), ("gcc", "-O1"), ("gcc", "-O2"), ("clang", "-O0"), ("clang", "-O2")],
)
def test_the_else_arm_takes_its_measured_count(tmp_path, compiler, level):
    binary_path = tmp_path / f"else_arm_{compiler}{level}"
    command = [CLANG, "-gdwarf-4"] if compiler == "clang" else ["gcc"]
    subprocess.run([*command, "-g", level, "-o", str(binary_path), str(SOURCE)], check=True)
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, (), tmp_path))
    report = analyze([SOURCE], ["n"])
    static = instruction_mix(binary, report, ["n"]).functions["sweep"]
    measured = measured_loop_counts(binary, profile)
    sweep = instruction_mix(binary, report, ["n"], measured=measured).functions["sweep"]
    assert static.counts is None  # the arms' shares are undefined
    assert sweep.counts is not None, sweep.undef_reason
    truth = measured_mix(binary, profile)["sweep"]["total"]
    assert abs(sweep.evaluate({"n": 30})["total"] / truth - 1) < 0.01, sweep.notes
