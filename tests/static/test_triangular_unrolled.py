"""Triangular loops unrolled by 2 (issue 20, F13).

The inner loops of ``triangular_unrolled.c`` run ``j`` and ``i`` iterations per entry. clang
-O2/-O3 unroll them by 2 with a remainder block; their passes were taken as floor(average
iterations per entry / 2) per entry with an average remainder, which holds only when every
entry runs the same number of iterations (+3.9 % and +4.05 % against callgrind). The report
now marks such loops ``varying``; a machine loop covering several of their iterations per pass
is undefined with the reason, and measured with ``--profile``.
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

SOURCE = PROGRAMS_DIR / "triangular_unrolled.c"
REPS = 3
CLANG = shutil.which("clang-16") or shutil.which("clang")
needs_tools = pytest.mark.skipif(
    shutil.which("valgrind") is None or CLANG is None or shutil.which("gcc") is None,
    reason="valgrind, gcc and clang are needed",
)


def test_loops_whose_trip_count_follows_an_outer_variable_are_varying():
    loops = {k.name: k.varying for k in analyze([SOURCE], ["reps"]).kernels if k.kind == "loop"}
    assert loops["factor:loop@15"] and loops["factor:loop@20"]  # k < j, k < i
    assert loops["factor:loop@14"] and loops["factor:loop@19"]  # j < i, j from i
    assert not loops["factor:loop@13"] and not loops["main:loop@30"]


@needs_tools
@pytest.mark.slow
@pytest.mark.parametrize(
    ("compiler", "level"), [("clang", "-O2"), ("clang", "-O3"), ("gcc", "-O1"), ("gcc", "-O3")]
)
def test_unrolled_triangular_loops_are_exact_or_undefined(tmp_path, compiler, level):
    binary_path = tmp_path / f"triangular_{compiler}{level}"
    command = [CLANG, "-gdwarf-4"] if compiler == "clang" else ["gcc"]
    subprocess.run([*command, "-g", level, "-o", str(binary_path), str(SOURCE)], check=True)
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, (REPS,), tmp_path))
    report = analyze([SOURCE], ["reps"])
    static = instruction_mix(binary, report, ["reps"]).functions["factor"]
    measured = measured_loop_counts(binary, profile)
    profiled = instruction_mix(binary, report, ["reps"], measured=measured).functions["factor"]
    truth = measured_mix(binary, profile)["factor"]["total"]
    if static.counts is None:
        assert "depend on an enclosing loop's variable" in static.undef_reason
    else:
        assert abs(static.evaluate({"reps": REPS})["total"] / truth - 1) < 0.01, static.notes
    if compiler == "clang":  # the unrolled-by-2 shape
        assert static.counts is None
    assert profiled.counts is not None, profiled.undef_reason
    assert abs(profiled.evaluate({"reps": REPS})["total"] / truth - 1) < 0.01, profiled.notes
