"""Copies of functions whose runs the source's counts do not tell, with ``--profile``.

``copies.c`` has LINPACK's three shapes (verify20b F18, F21, F22): gcc -O2/-O3 outline the
hand-unrolled loop of ``axpy`` (daxpy) as ``axpy.part.0`` and inline its early tests (the part
was left unmodeled, also with a profile: LINPACK's coverage with ``--profile`` 40-43 %); clang
-O1..-O3 inline ``fill`` (matgen) at both calls and keep a copy that never runs, which the
profile gave the source loops' counts (0 run, 75,400 predicted in LINPACK); ``epsilon``
(epslon) is computed when compiling, no call is left, and its copy was counted once, also with
a profile. Now such copies take every block's measured count with a profile (without one a
part stays unmodeled and the others keep the source's count). Every build is compared with a
callgrind run.
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
    BUILDS,
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    run_callgrind,
)

SOURCE = PROGRAMS_DIR / "copies.c"
REPS = 2
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_every_copy_counts_like_callgrind_with_the_profile(tmp_path, compiler, level):
    binary = tmp_path / f"copies_{compiler}{level}"
    compile_c(compiler, level, SOURCE, binary, "-lm")
    machine_code = read_binary(binary)
    run = read_callgrind(run_callgrind(binary, (REPS,), tmp_path))
    truth = measured_mix(machine_code, run)
    report = analyze([SOURCE], ["reps"])
    static = instruction_mix(machine_code, report, ["reps"])
    profiled = instruction_mix(
        machine_code, report, ["reps"], measured=measured_loop_counts(machine_code, run)
    )
    assert not profiled.unmodeled  # axpy.part.0 included
    for name, function in profiled.functions.items():
        assert function.counts is not None, (name, function.undef_reason)
        predicted = function.evaluate({"reps": REPS})["total"]
        measured = truth[name]["total"]
        assert abs(predicted - measured) <= 0.01 * measured, (name, predicted, measured)
    assert static.functions  # the static mix is made too (its copies' counts are not checked)


def test_the_part_and_the_idle_copy_say_how_they_are_counted(tmp_path):
    binary = tmp_path / "copies_gcc-O2"
    compile_c("gcc", "-O2", SOURCE, binary, "-lm")
    machine_code = read_binary(binary)
    run = read_callgrind(run_callgrind(binary, (REPS,), tmp_path))
    report = analyze([SOURCE], ["reps"])
    static = instruction_mix(machine_code, report, ["reps"])
    assert "axpy.part.0" in static.unmodeled  # without a profile nothing tells its runs
    profiled = instruction_mix(
        machine_code, report, ["reps"], measured=measured_loop_counts(machine_code, run)
    )
    part = profiled.functions["axpy.part.0"]
    assert any("every block of axpy.part.0 counted as measured" in n for n in part.notes)
    # epsilon's loop was computed when compiling: no call is left, and the profile says 0
    epsilon = profiled.functions["epsilon"]
    assert epsilon.evaluate({"reps": REPS})["total"] == 0
    assert any("every block of epsilon counted as measured" in n for n in epsilon.notes)
