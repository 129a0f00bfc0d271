"""Flow conservation on the machine control-flow graph (issue 20, flow20).

The check must never fire on what really ran: callgrind's block counts of real builds (gcc and
clang, -O0..-O3: tail calls, calls that do not return, jump tables, PLT calls) always pass. It
must fire on a real function's true counts with one arm raised, naming that block, and it turns
a versioned loop whose fallback never runs (counted as if both versions ran, +6 % at gcc -O3,
silent before) into an undefined count, exact with the run as profile.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import sympy

from perfcast.api import analyze_source
from perfcast.api import instruction_mix as api_instruction_mix
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_loop_counts, measured_mix, read_callgrind
from perfcast.static.control_flow import basic_blocks
from perfcast.static.flow_check import (
    FlowCheck,
    flow_violation,
    has_indirect_jump,
    outside_entries,
)
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    BUILDS,
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    run_callgrind,
)

pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND

# (program, arguments): calls between functions, a switch (jump table) and early returns,
# calls of exit/abort and error returns, library calls through the PLT, rep-prefixed string
# instructions, versioned and unrolled loops, a nested if/else, a cold part jumping back
TRUTH_PROGRAMS = [
    ("cg", (20, 3)),
    ("cases_and_returns", (40, 1)),
    ("error_paths", (300,)),
    ("library_calls", (100,)),
    ("rep_strings", (3, 40)),
    ("versioned_fallback", (41,)),
    ("unroll2_nested", ()),
    ("else_arm", (30,)),
    ("cold_path", (100,)),
]

FALLBACK = PROGRAMS_DIR / "versioned_fallback.c"


def _true_block_counts(binary, profile, name: str) -> dict[int, float]:
    counts = measured_loop_counts(binary, profile)
    return {
        address: float(value)
        for (kind, function, address), value in counts.items()
        if kind == "block" and function == name
    }


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_what_really_ran_always_passes(tmp_path, compiler, level):
    checked = 0
    for program, arguments in TRUTH_PROGRAMS:
        binary_path = compile_c(
            compiler, level, PROGRAMS_DIR / f"{program}.c", tmp_path / f"{program}", "-lm"
        )
        binary = read_binary(binary_path)
        profile = read_callgrind(run_callgrind(binary_path, arguments, tmp_path))
        entries = outside_entries(binary)
        for function in binary.functions.values():
            truth = _true_block_counts(binary, profile, function.name)
            violation = flow_violation(function, truth, entries=entries.get(function.name, ()))
            assert violation is None, (program, function.name, violation.reason)
            checked += not has_indirect_jump(function) and any(truth.values())
    assert checked >= len(TRUTH_PROGRAMS)  # functions that ran were checked, not skipped


@pytest.mark.parametrize(("compiler", "level"), [("gcc", "-O1"), ("clang", "-O2")])
def test_one_raised_arm_is_impossible_and_named(tmp_path, compiler, level):
    binary_path = compile_c(compiler, level, PROGRAMS_DIR / "else_arm.c", tmp_path / "else_arm")
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, (30,), tmp_path))
    function = binary.functions["sweep"]
    truth = _true_block_counts(binary, profile, "sweep")
    assert flow_violation(function, truth) is None
    # the busiest arm: a block entered from one conditional branch only (raising a block
    # that ran a few times can be consistent with another run, flow re-routed around loops)
    blocks = basic_blocks(function)
    arm = max(
        (
            b
            for b in blocks
            if len(b.predecessors) == 1
            and blocks[b.predecessors[0]].instructions[-1].kind == "branch"
        ),
        key=lambda b: truth[b.start],
    )
    assert truth[arm.start] > 10
    raised = dict(truth)
    raised[arm.start] = truth[arm.start] * 2 + 5
    violation = flow_violation(function, raised, where="n=30")
    assert violation is not None
    assert arm.start in violation.starts, (hex(arm.start), violation.reason)
    assert f"{arm.start:#x}" in violation.reason
    assert "inconsistent with the machine control flow at n=30" in violation.reason
    assert f"predicted to run {raised[arm.start]:,.0f} times" in violation.reason
    # a negative count is impossible too
    negative = dict(truth)
    negative[arm.start] = -3.0
    found = flow_violation(function, negative)
    assert found is not None and "-3 times" in found.reason


def test_a_fallback_that_never_runs_is_no_longer_counted_silently(tmp_path):
    n = 41
    binary_path = compile_c("gcc", "-O3", FALLBACK, tmp_path / "fallback")
    run = run_callgrind(binary_path, (n,), tmp_path)
    truth = measured_mix(read_binary(binary_path), read_callgrind(run))["add"]["total"]
    report = analyze_source([FALLBACK], ["n"])
    unchecked = instruction_mix(read_binary(binary_path), report, ["n"], check_flow=False)
    before = unchecked.functions["add"].evaluate({"n": n})["total"]
    # the scalar copy behind the overlap check counts 0 passes (static35; both versions were
    # counted, +5 %), but the short-trip path around the vector loop is still counted in every
    # call: without the flow check that error would be silent
    assert before / truth - 1 > 0.01
    built = api_instruction_mix(binary_path, report, ["n"], values={"n": n})
    add = built.functions["add"]
    assert add.counts is None
    assert "inconsistent with the machine control flow at n=41" in (add.undef_reason or "")
    assert "versioned_fallback.c" in (add.undef_reason or "")
    # without the build's values the check runs at stand-in values and says so in a note
    stand_in = api_instruction_mix(binary_path, report, ["n"]).functions["add"]
    assert any("at n=7" in note and "were not given" in note for note in stand_in.notes)
    # with the run as profile the blocks that fail are measured: exact
    profiled = api_instruction_mix(binary_path, report, ["n"], profiles=[({"n": n}, run)])
    add = profiled.functions["add"]
    assert add.evaluate({"n": n})["total"] == truth


MACRO_SIZED = """
#ifndef N
#define N 1000
#endif
double a[N], b[N];

__attribute__((noinline)) void add(double *x, const double *y, long n)
{
  for (long i = 0; i < n; i++)
    x[i] += y[i];
}

int main(void)
{
  for (int r = 0; r < 10; r++)
    add(a, b, N);
  return a[3] > 0.0;
}
void (*volatile kept)(double *, const double *, long) = add; /* add's own copy stays reachable */
"""


def test_the_command_line_checks_at_the_values_of_the_build(tmp_path):
    source = tmp_path / "sized.c"
    source.write_text(MACRO_SIZED)
    binary_path = tmp_path / "sized"
    subprocess.run(["gcc", "-g", "-O3", "-DN=41", "-o", str(binary_path), str(source)], check=True)
    command = [sys.executable, "-m", "perfcast.cli", "static", str(source), "--param", "N"]
    command += ["--binary", str(binary_path), "--no-cache"]
    result = subprocess.run(
        [*command, "--format", "json", "--", "-DN=41"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "NaN" not in result.stdout
    functions = json.loads(result.stdout)["mix"]["functions"]
    add = next(f for f in functions if f["function"] == "add")
    assert "inconsistent with the machine control flow at N=41" in add["undef_reason"]
    text = subprocess.run([*command, "--", "-DN=41"], capture_output=True, text=True)
    assert text.returncode == 0 and "at N=41" in text.stdout


def test_counts_checked_at_stand_in_values_are_noted_not_refused(tmp_path):
    binary_path = compile_c("gcc", "-O3", FALLBACK, tmp_path / "fallback")
    binary = read_binary(binary_path)
    report = analyze_source([FALLBACK], ["n"])
    mix = instruction_mix(binary, report, ["n"])
    assert mix.functions["add"].counts is not None  # n is read at run time: its value unknown
    counted = [(insn, sympy.Symbol("n")) for insn in binary.functions["add"].instructions]
    points, actual = FlowCheck.for_binary(binary).points_for(counted)
    assert not actual and [p["n"] for p in points] == [7.0, 61.0]
    # counts without parameters are the build's: checked as they are
    constant = [(insn, sympy.Integer(3)) for insn, _ in counted]
    assert FlowCheck.for_binary(binary).points_for(constant) == (({},), True)
    # a value of the build for some parameters: the others take the stand-in values
    both = [(insn, sympy.Symbol("n") * sympy.Symbol("m")) for insn, _ in counted]
    points, actual = FlowCheck.for_binary(binary, [{"m": 5.0}]).points_for(both)
    assert not actual and points == ({"m": 5.0, "n": 7.0}, {"m": 5.0, "n": 61.0})


def test_the_report_knows_the_build_values_of_macro_parameters():
    report = analyze_source([PROGRAMS_DIR / "triangle_rows.c"], ["ROWS", "COLS"], ["-DROWS=40"])
    assert report.build_values == {"ROWS": 40.0, "COLS": 19.0}
    assert report.with_values({"COLS": 19}).build_values == {"ROWS": 40.0}
    assert analyze_source([FALLBACK], ["n"]).build_values == {}


def test_with_a_profile_the_blocks_that_fail_are_measured(tmp_path):
    source = PROGRAMS_DIR / "triangle_rows.c"
    values = {"ROWS": 31, "COLS": 19}
    binary_path = compile_c("gcc", "-O3", source, tmp_path / "triangle_rows")
    run = run_callgrind(binary_path, (), tmp_path)
    binary = read_binary(binary_path)
    profile = read_callgrind(run)
    truth = measured_mix(binary, profile)["shift_lower"]["total"]
    report = analyze_source([source], list(values))
    measured = dict(measured_loop_counts(binary, profile))
    mixed = instruction_mix(
        binary, report, list(values), measured=measured, points=[values], check_flow=False
    )
    before = mixed.functions["shift_lower"].evaluate(values)["total"]
    assert before / truth - 1 > 0.02  # measured loop, static blocks around it: silent before
    profiled = api_instruction_mix(binary_path, report, list(values), profiles=[(values, run)])
    function = profiled.functions["shift_lower"]
    assert function.evaluate(values)["total"] == truth
    # the blocks around the measured loop take their measured counts: named by the flow check,
    # or (when the static counts of the blocks around them keep the flow) by the profile's
    # contradiction of their static counts
    assert any(
        "counts measured (predicted block counts are inconsistent with the machine control "
        "flow at COLS=19,ROWS=31"
        in note
        or "counts measured (the profiled runs contradict their static counts" in note
        for note in function.notes
    )


def test_models_fitted_to_several_profiles_are_kept_when_they_miss_the_runs(tmp_path):
    binary_path = compile_c("gcc", "-O3", FALLBACK, tmp_path / "fallback")
    sizes = (41, 60, 99, 150, 200)
    runs = [({"n": n}, run_callgrind(binary_path, (n,), tmp_path)) for n in sizes]
    report = analyze_source([FALLBACK], ["n"])
    mix = api_instruction_mix(binary_path, report, ["n"], profiles=runs)
    add = mix.functions["add"]
    # every block measured, each a model over n fitted to five runs: kept, and said so
    assert add.counts is not None
    assert any("models fitted to the profiled runs miss" in note for note in add.notes)
    truth = measured_mix(read_binary(binary_path), read_callgrind(runs[-1][1]))["add"]["total"]
    assert abs(add.evaluate({"n": 200})["total"] / truth - 1) < 0.01


def test_a_cold_part_jumping_back_enters_the_function(tmp_path):
    binary_path = compile_c("gcc", "-O3", PROGRAMS_DIR / "cold_path.c", tmp_path / "cold")
    binary = read_binary(binary_path)
    assert "clamp_sum.cold" in binary.functions
    entries = outside_entries(binary)["clamp_sum"]  # where clamp_sum.cold jumps back to
    assert entries
    profile = read_callgrind(run_callgrind(binary_path, (100,), tmp_path))
    truth = _true_block_counts(binary, profile, "clamp_sum")
    function = binary.functions["clamp_sum"]
    assert flow_violation(function, truth, entries=entries) is None
    # without those entries the runs that came back from the cold part look impossible
    assert flow_violation(function, truth) is not None
