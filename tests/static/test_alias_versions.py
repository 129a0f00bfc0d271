"""Copies of a loop behind a run-time overlap check, against callgrind on real binaries.

clang -O3 writes the vector copy of a fixed-length loop whose pointers may overlap as
straight-line code and keeps a scalar machine loop as the fallback; both were counted, as if the
loop ran twice (+217 % on ``versioned_loops.c``, also with ``--profile``). The count is now
undefined naming the check, and ``--profile`` gives each copy the count it measured. The same
loops with ``restrict`` pointers have one copy and keep their static count; a scalar loop that
gcc unrolls by 4 with a pragma, which was counted as if each pass ran one iteration (+297 %), is
undefined naming the machine loop.
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

CLANG = shutil.which("clang-16") or shutil.which("clang")
PROGRAM = PROGRAMS_DIR / "alias_versions.c"
PARAMETERS = ("n", "reps")
VALUES = {"n": 100, "reps": 10}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed"),
    pytest.mark.skipif(CLANG is None, reason="clang is not installed"),
]


def _mixes(compiler: str, level: str, source: Path, arguments: tuple[int, ...], directory: Path):
    """Static and profiled mixes of every function, and callgrind's totals."""
    binary_path = directory / f"{source.stem}_{Path(compiler).name}{level}"
    flags = ["-gdwarf-4"] if "clang" in compiler else []  # valgrind 3.19 reads DWARF 4
    subprocess.run([compiler, "-g", *flags, level, "-o", str(binary_path), str(source)], check=True)
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, arguments, directory))
    parameters = PARAMETERS if arguments else ()
    report = analyze([source], list(parameters))
    static = instruction_mix(binary, report, parameters)
    profiled = instruction_mix(
        binary, report, parameters, measured=measured_loop_counts(binary, profile)
    )
    totals = {name: counts["total"] for name, counts in measured_mix(binary, profile).items()}
    return static.functions, profiled.functions, totals


def test_clang_s_straight_line_vector_copy_and_scalar_fallback_are_alternatives(tmp_path):
    static, profiled, measured = _mixes(
        CLANG, "-O3", PROGRAMS_DIR / "versioned_loops.c", (), tmp_path
    )
    update = static["update"]
    assert update.counts is None
    assert "source loop update:loop@18 is versioned by the compiler" in update.undef_reason
    assert "run-time check at line 18" in update.undef_reason
    # the profile tells which copy ran: exact (it was 57,100 against 18,000)
    assert profiled["update"].evaluate({})["total"] == measured["update"]
    assert any("block counts measured" in note for note in profiled["update"].notes)


def test_fixed_and_run_time_loops_with_and_without_possible_overlap(tmp_path):
    arguments = (VALUES["n"], VALUES["reps"])
    static, profiled, measured = _mixes(CLANG, "-O3", PROGRAM, arguments, tmp_path)
    for name in ("fixed_even", "fixed_odd"):  # an odd length re-tests the overlap flag
        assert static[name].counts is None, name
        assert "versioned by the compiler behind a run-time check" in static[name].undef_reason
    # one copy: the static count stands, exact
    assert static["fixed_restrict"].evaluate(VALUES)["total"] == measured["fixed_restrict"]
    for name in ("sized", "sized_restrict"):
        # a scalar loop shared by the short and the remainder path is no alternative
        assert static[name].counts is not None, name
    for name, mix in profiled.items():
        if name in measured and mix.counts is not None:
            assert mix.evaluate(VALUES)["total"] == pytest.approx(measured[name], rel=1e-9), name


def test_clang_o2_keeps_the_vector_copy_a_loop_that_exits_in_the_middle(tmp_path):
    # clang -O2: vector machine loop (exit test after the first copy), a shared first scalar
    # iteration, then the scalar fallback loop whose start depends on the path (+5.7 % before)
    arguments = (VALUES["n"], VALUES["reps"])
    static, profiled, measured = _mixes(CLANG, "-O2", PROGRAM, arguments, tmp_path)
    for name in ("fixed_even", "fixed_odd"):
        assert "versioned by the compiler behind a run-time check" in (
            static[name].undef_reason or ""
        ), name
        assert profiled[name].evaluate(VALUES)["total"] == measured[name], name


def test_gcc_versions_an_odd_fixed_loop_and_unrolls_by_a_pragma(tmp_path):
    arguments = (VALUES["n"], VALUES["reps"])
    static, profiled, measured = _mixes("gcc", "-O3", PROGRAM, arguments, tmp_path)
    # was +171.8 %: the vector path and the scalar fallback counted both
    assert "versioned by the compiler behind a run-time check" in (
        static["fixed_odd"].undef_reason or ""
    )
    assert profiled["fixed_odd"].evaluate(VALUES)["total"] == measured["fixed_odd"]
    assert static["fixed_restrict"].evaluate(VALUES)["total"] == measured["fixed_restrict"]
    static, profiled, measured = _mixes("gcc", "-O2", PROGRAM, arguments, tmp_path)
    unrolled = static["sized_unrolled"]  # was +297 %: 4 iterations per pass counted as 1
    assert unrolled.counts is None
    assert "how many source iterations one of its passes covers" in unrolled.undef_reason
    assert profiled["sized_unrolled"].evaluate(VALUES)["total"] == measured["sized_unrolled"]
    assert static["sized"].evaluate(VALUES)["total"] == measured["sized"]


def test_gcc_versions_a_whole_nest_with_a_run_time_odd_length(tmp_path):
    # two copies of the outer loop, each one machine loop per pass of one row: sharing the
    # rows between them gave the scalar copy its full count (+150 %, also with --profile)
    source = PROGRAMS_DIR / "versioned_nest.c"
    binary_path = tmp_path / "versioned_nest"
    subprocess.run(["gcc", "-g", "-O3", "-o", str(binary_path), str(source)], check=True)
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, (41,), tmp_path))
    report = analyze([source], ["n"])
    static = instruction_mix(binary, report, ("n",)).functions["sweep"]
    assert static.counts is None
    assert "source loop sweep:loop@8 is versioned by the compiler" in static.undef_reason
    measured = measured_mix(binary, profile)["sweep"]["total"]
    counts = measured_loop_counts(binary, profile)
    profiled = instruction_mix(binary, report, ("n",), measured=counts).functions["sweep"]
    assert profiled.evaluate({"n": 41})["total"] == measured


def test_a_row_loop_around_a_completely_unrolled_packed_row_covers_one_row_per_pass(tmp_path):
    # gcc -O3: the i loop's pointer steps one row (120 bytes) and its packed code is the j
    # loop unrolled; 120 / 4 read as 30 i-iterations per pass (-95 %, also with --profile)
    source = PROGRAMS_DIR / "row_relax.c"
    binary_path = tmp_path / "row_relax"
    subprocess.run(["gcc", "-g", "-O3", "-o", str(binary_path), str(source)], check=True)
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, (3,), tmp_path))
    report = analyze([source], [])
    measured = measured_mix(binary, profile)["relax"]["total"]
    counts = measured_loop_counts(binary, profile)
    profiled = instruction_mix(binary, report, (), measured=counts).functions["relax"]
    assert profiled.evaluate({})["total"] == measured
    assert not any("30 per pass" in note for note in profiled.notes)
