"""Code of an ``if`` block inside a loop counts with the block's share of the loop's
iterations, not with every iteration.

Found while checking issue 20 on third-party code: a function whose loop holds an ``if`` was
predicted as if the block ran in every iteration (+135 % on a ten-iteration guard in a
1000-iteration loop at -O0, +76 % at gcc -O2), with no note. A block nobody can count (a data
guard the compiler keeps as a branch) now makes the function undefined naming the block.
Built with the real gcc and clang and compared with a callgrind run. clang -O2 ends the block
with a jump back to the loop that has no source line (line 0); it counted in every iteration
(+5.5 % on main) until line-0 instructions took their block's share.
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

SOURCE = PROGRAMS_DIR / "branch_in_loop.c"
CLANG = shutil.which("clang-16")

needs_tools = pytest.mark.skipif(
    shutil.which("valgrind") is None or shutil.which("gcc") is None,
    reason="valgrind and gcc are needed",
)


def _build(compiler: str, level: str, tmp_path: Path) -> Path:
    binary = tmp_path / f"branch_{Path(compiler).name}{level}"
    debug = ["-gdwarf-4"] if "clang" in compiler else []
    subprocess.run([compiler, "-g", *debug, level, "-o", str(binary), str(SOURCE)], check=True)
    return binary


BUILDS = [("gcc", "-O0"), ("gcc", "-O2")] + ([(CLANG, "-O0"), (CLANG, "-O2")] if CLANG else [])


@needs_tools
@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_an_if_block_in_a_loop_counts_with_its_share(tmp_path, compiler, level):
    binary_path = _build(compiler, level, tmp_path)
    binary = read_binary(binary_path)
    main = instruction_mix(binary, analyze([SOURCE], ["n"]), ["n"]).functions["main"]
    assert main.counts is not None, main.undef_reason
    measured = measured_mix(binary, read_callgrind(run_callgrind(binary_path, (1000,), tmp_path)))
    truth = measured["main"]["total"]
    predicted = main.evaluate({"n": 1000})["total"]
    assert abs(predicted / truth - 1) < 0.01, (predicted, truth)


@needs_tools
def test_a_data_guard_in_a_loop_makes_the_function_undefined_naming_the_block(tmp_path):
    binary = read_binary(_build("gcc", "-O0", tmp_path))
    mix = instruction_mix(binary, analyze([SOURCE], ["n"]), ["n"])
    function = mix.functions["filter"]
    assert function.counts is None
    assert "filter:if@11:then" in function.undef_reason, function.undef_reason


@needs_tools
def test_with_a_profile_the_uncountable_block_takes_its_measured_count(tmp_path):
    """NAS CG's sparse() at gcc -O1: its data guards inside loops of known counts left main
    undefined even with --profile (coverage 82 % instead of 99.6 %)."""
    binary_path = _build("gcc", "-O0", tmp_path)
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, (1000,), tmp_path))
    measured = dict(measured_loop_counts(binary, profile))
    mix = instruction_mix(binary, analyze([SOURCE], ["n"]), ["n"], measured=measured)
    function = mix.functions["filter"]
    assert function.counts is not None, function.undef_reason
    assert any("count measured" in note for note in function.notes), function.notes
    truth = measured_mix(binary, profile)["filter"]["total"]
    predicted = function.evaluate({"n": 1000})["total"]
    assert abs(predicted / truth - 1) < 0.01, (predicted, truth)


@needs_tools
def test_a_conditional_operator_in_a_loop_is_undefined_naming_it_and_measured_with_a_profile(
    tmp_path,
):
    """STREAM's abs() macro at -O0/-O1: the arms of a ?: in a loop counted in every
    iteration (checkSTREAMresults +39 % at gcc -O0), later with a note calling the total an
    upper bound; a data condition now makes the count undefined, naming the arm."""
    binary_path = _build("gcc", "-O0", tmp_path)
    binary = read_binary(binary_path)
    report = analyze([SOURCE], ["n"])
    static = instruction_mix(binary, report, ["n"]).functions["folded"]
    assert static.counts is None
    assert "folded:cond@23:" in static.undef_reason, static.undef_reason
    profile = read_callgrind(run_callgrind(binary_path, (1000,), tmp_path))
    measured = dict(measured_loop_counts(binary, profile))
    folded = instruction_mix(binary, report, ["n"], measured=measured).functions["folded"]
    truth = measured_mix(binary, profile)["folded"]["total"]
    predicted = folded.evaluate({"n": 1000})["total"]
    assert abs(predicted / truth - 1) < 0.01, (predicted, truth)


@needs_tools
@pytest.mark.skipif(CLANG is None, reason="clang-16 is needed")
def test_an_if_block_whose_code_is_on_the_condition_line_keeps_its_guard(tmp_path):
    """clang -O1 gives the code of filter()'s if block the if's line: the block counted in
    every iteration as unexplained (+27 %, an 'upper bound'); the jump before it names the if."""
    binary = read_binary(_build(CLANG, "-O1", tmp_path))
    function = instruction_mix(binary, analyze([SOURCE], ["n"]), ["n"]).functions["filter"]
    assert function.counts is None
    assert "filter:if@11:then" in function.undef_reason, function.undef_reason


@needs_tools
def test_a_loop_split_at_its_guard_is_undefined_naming_both_machine_loops(tmp_path):
    """gcc -O3 splits main's loop at ``i < 10`` into two scalar machine loops run one after
    the other (the first ten iterations with the block, the rest without): they were counted
    as a loop and its remainder, the first taking every iteration (+58 %, silently)."""
    binary_path = _build("gcc", "-O3", tmp_path)
    binary = read_binary(binary_path)
    report = analyze([SOURCE], ["n"])
    main = instruction_mix(binary, report, ["n"]).functions["main"]
    assert main.counts is None
    assert "implement source loop main:loop@31 one after the other" in main.undef_reason
    profile = read_callgrind(run_callgrind(binary_path, (1000,), tmp_path))
    measured = dict(measured_loop_counts(binary, profile))
    with_profile = instruction_mix(binary, report, ["n"], measured=measured).functions["main"]
    truth = measured_mix(binary, profile)["main"]["total"]
    assert abs(with_profile.evaluate({"n": 1000})["total"] / truth - 1) < 0.01
