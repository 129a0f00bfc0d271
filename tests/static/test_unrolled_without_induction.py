"""A machine loop whose induction cannot be read and that holds its body twice is not one
source iteration per pass (issue 20, static26).

clang -O2/-O3 unroll ``prefix()`` of ``conditions_in_loop.c`` (``hits += i < m && v[i] *
v[i] > 0.3``) by 2 with the exit test between the copies and the ``i < m`` test in each; no
induction register is read, and the width fell back to 1: with ``--profile`` the loop kept its
static count of n passes instead of n / 2 (+78 % against callgrind, no note). A pass holding
most of the body's code twice now has an unknown width: undefined statically with the reason,
measured with a profile.
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

SOURCE = PROGRAMS_DIR / "conditions_in_loop.c"
CLANG = shutil.which("clang-16")
SIZES = {"n": 1000, "m": 100}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
    pytest.mark.skipif(CLANG is None, reason="clang-16 is not installed"),
]


@pytest.mark.parametrize("level", ["-O2", "-O3"])
def test_unrolled_loop_without_induction_is_undefined_or_measured(tmp_path, level):
    binary_path = tmp_path / f"conditions{level}"
    command = [CLANG, "-g", "-gdwarf-4", level, "-o", str(binary_path), str(SOURCE)]
    subprocess.run(command, check=True)
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, tuple(SIZES.values()), tmp_path))
    report = analyze([SOURCE], list(SIZES))
    static = instruction_mix(binary, report, list(SIZES)).functions["prefix"]
    measured = measured_loop_counts(binary, profile)
    profiled = instruction_mix(binary, report, list(SIZES), measured=measured)
    prefix = profiled.functions["prefix"]
    assert static.counts is None
    assert "how many source iterations one of its passes covers" in static.undef_reason
    assert prefix.counts is not None, prefix.undef_reason
    truth = measured_mix(binary, profile)["prefix"]["total"]
    assert abs(prefix.evaluate(SIZES)["total"] / truth - 1) < 0.01, prefix.notes
    assert any("block counts measured" in note for note in prefix.notes)


@pytest.mark.parametrize("level", ["-O2", "-O3"])
def test_inner_loop_unrolled_by_two_inside_its_outer_loop(tmp_path, level):
    """verify20c's G4 (PolyBench durbin): the triangular inner loop of ``unroll2_nested.c``,
    unrolled by 2 with its counter stepping by 2, was read as one iteration per pass: +95 %,
    +90 % with --profile, no note."""
    source = PROGRAMS_DIR / "unroll2_nested.c"
    binary_path = tmp_path / f"unroll2_nested{level}"
    command = [CLANG, "-g", "-gdwarf-4", level, "-o", str(binary_path), str(source)]
    subprocess.run(command, check=True)
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, (), tmp_path))
    report = analyze([source], ["n"])
    static = instruction_mix(binary, report, ["n"]).functions["triangle"]
    measured = measured_loop_counts(binary, profile)
    triangle = instruction_mix(binary, report, ["n"], measured=measured).functions["triangle"]
    assert static.counts is None, static.notes
    assert "how many source iterations one of its passes covers" in static.undef_reason
    assert triangle.counts is not None, triangle.undef_reason
    truth = measured_mix(binary, profile)["triangle"]["total"]
    assert abs(triangle.evaluate({"n": 60})["total"] / truth - 1) < 0.01, triangle.notes
