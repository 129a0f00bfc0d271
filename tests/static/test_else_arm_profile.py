"""With ``--profile``, an unbraced ``else`` arm on a line of its own takes its own measured count
(verify20c G6, PolyBench nussinov): it counted in every iteration of its loop once the
``then`` block was measured (+18 % to +59 % on ``sweep`` at gcc -O0..-O2, clang -O0).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from perfcast.static import analyze
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_loop_counts, measured_mix, read_callgrind
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import CLANG, PROGRAMS_DIR, compile_c, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "else_arm.c"
N = 30

needs_tools = pytest.mark.skipif(
    shutil.which("valgrind") is None or shutil.which("gcc") is None,
    reason="valgrind and gcc are needed",
)

BUILDS = [("gcc", "-O0"), ("gcc", "-O1"), ("gcc", "-O2")]
BUILDS += [("clang", "-O0")] if CLANG else []


@needs_tools
@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_the_else_arm_takes_its_measured_count(tmp_path, compiler, level):
    binary_path = compile_c(compiler, level, SOURCE, tmp_path / f"else_{compiler}{level}")
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, (N,), tmp_path))
    report = analyze([SOURCE], ["n"])
    static = instruction_mix(binary, report, ["n"])
    # statically the inner if's count is undefined, and the function says which block: the
    # inner if's arm, or (gcc -O2) the loop's update copied onto the paths after it
    assert static.functions["sweep"].counts is None
    reason = static.functions["sweep"].undef_reason or ""
    assert "sweep:if@14" in reason or "update and test of sweep:loop@12" in reason, reason
    measured = dict(measured_loop_counts(binary, profile))
    profiled = instruction_mix(binary, report, ["n"], measured=measured)
    truth = measured_mix(binary, profile)["sweep"]["total"]
    predicted = profiled.functions["sweep"].evaluate({"n": N})["total"]
    assert abs(predicted / truth - 1) < 0.01, (predicted, truth)


OPTIMIZED_CLANG = [("clang", "-O1"), ("clang", "-O2"), ("clang", "-O3")] if CLANG else []


@needs_tools
@pytest.mark.slow
@pytest.mark.parametrize(("compiler", "level"), OPTIMIZED_CLANG)
def test_the_else_arm_clang_keeps_at_o2_takes_its_measured_count(tmp_path, compiler, level):
    """verify20c G6 at clang -O2 (+99 % with --profile then): clang turns the inner if into
    straight-line code with setl/neg and peels the triangular loop; every block of sweep then
    takes its measured count, and the static count is exact or undefined, never silent."""
    binary_path = compile_c(compiler, level, SOURCE, tmp_path / f"else_{compiler}{level}")
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, (N,), tmp_path))
    report = analyze([SOURCE], ["n"])
    truth = measured_mix(binary, profile)["sweep"]["total"]
    static = instruction_mix(binary, report, ["n"]).functions["sweep"]
    if static.counts is not None:
        assert abs(static.evaluate({"n": N})["total"] / truth - 1) < 0.01
    measured = dict(measured_loop_counts(binary, profile))
    profiled = instruction_mix(binary, report, ["n"], measured=measured).functions["sweep"]
    assert abs(profiled.evaluate({"n": N})["total"] / truth - 1) < 0.01
