"""Code inside a loop under a condition that is no ``if`` statement: the arms of ``?:`` and the
right operands of ``&&`` and ``||`` count like an ``if`` block, with their share of the loop's
iterations, a ``probability`` pragma's weight, or undefined naming the condition; never in
every iteration with a note calling the total an upper bound.

Each case builds ``programs/conditions_in_loop.c`` with the real gcc or clang, runs it under
callgrind and compares per function. Which block is which arm is read from the binary: the
conditional jump that decides the block, the columns of the line table, and, for the value of
a ``&&`` (0 or 1, reached from two tests), that it is the outcome of several tests.
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
from perfcast.static.instruction_mix import FunctionMix, instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "conditions_in_loop.c"
CLANG = shutil.which("clang-16")
SIZES = (1000, 100)  # n, m
FUNCTIONS = ("early", "window", "prefix", "annotated", "unannotated")

needs_tools = pytest.mark.skipif(
    shutil.which("valgrind") is None or shutil.which("gcc") is None,
    reason="valgrind and gcc are needed",
)


@pytest.fixture(scope="module")
def report():
    return analyze([SOURCE], ["n", "m"])


def _run(compiler: str, level: str, tmp_path: Path, report):
    """The static mix, the mix with the run's profile, the measured mix and the share of
    iterations in which annotated()'s data condition held (the program prints it)."""
    binary_path = tmp_path / f"conditions_{Path(compiler).name}{level}"
    debug = ["-gdwarf-4"] if "clang" in compiler else []
    subprocess.run([compiler, "-g", *debug, level, "-o", str(binary_path), str(SOURCE)], check=True)
    high = subprocess.run(
        [str(binary_path), *map(str, SIZES)], check=True, capture_output=True, text=True
    ).stdout.split()[0]
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, SIZES, tmp_path))
    static = instruction_mix(binary, report, ["n", "m"])
    measured = dict(measured_loop_counts(binary, profile))
    profiled = instruction_mix(binary, report, ["n", "m"], measured=measured)
    truth = measured_mix(binary, profile)
    return binary, static, profiled, truth, int(high) / SIZES[0]


def _total(function: FunctionMix, share: float) -> float:
    values = {"n": SIZES[0], "m": SIZES[1], "p": share}
    assert function.counts is not None
    used = {s.name for expr in function.counts.values() for s in expr.free_symbols}
    return function.evaluate({k: v for k, v in values.items() if k in used})["total"]


def _check(function: FunctionMix, truth: float, share: float) -> None:
    """Defined within 1 % of callgrind, or undefined with a reason naming the condition's
    line or the machine loop."""
    if function.counts is None:
        reason = function.undef_reason or ""
        assert "line" in reason or "machine loop" in reason, reason
        return
    predicted = _total(function, share)
    assert abs(predicted / truth - 1) < 0.01, (function.function, predicted, truth)


BUILDS = [("gcc", level) for level in ("-O0", "-O1", "-O2", "-O3")]
BUILDS += [(CLANG, level) for level in ("-O0", "-O1", "-O2", "-O3")] if CLANG else []


@needs_tools
@pytest.mark.slow
@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_every_total_is_within_one_percent_or_undefined_naming_the_condition(
    tmp_path, report, compiler, level
):
    _, static, profiled, truth, share = _run(compiler, level, tmp_path, report)
    for name in FUNCTIONS:
        _check(static.functions[name], truth[name]["total"], share)
        assert not any("upper bound" in note for note in static.functions[name].notes)


@needs_tools
@pytest.mark.parametrize("compiler", ["gcc", CLANG] if CLANG else ["gcc"])
def test_the_arms_of_a_counted_conditional_operator_count_with_their_share(
    tmp_path, report, compiler
):
    """At -O0 both arms of ``i < 10 ? ... : ...`` are blocks; they counted in every
    iteration (+70 % on early() at gcc -O0) before."""
    _, static, _, truth, share = _run(compiler, "-O0", tmp_path, report)
    early = static.functions["early"]
    assert early.counts is not None, early.undef_reason
    assert abs(_total(early, share) / truth["early"]["total"] - 1) < 0.01


@needs_tools
def test_a_probability_pragma_weights_the_arms_of_a_conditional_operator(tmp_path, report):
    _, static, _, truth, share = _run("gcc", "-O0", tmp_path, report)
    annotated = static.functions["annotated"]
    assert annotated.counts is not None, annotated.undef_reason
    assert "p" in {s.name for s in annotated.counts["total"].free_symbols}
    assert abs(_total(annotated, share) / truth["annotated"]["total"] - 1) < 0.01
    low, high = _total(annotated, 0.0), _total(annotated, 1.0)
    assert low < truth["annotated"]["total"] < high  # the pragma's weight moves the total


@needs_tools
def test_a_data_condition_is_undefined_naming_it_and_measured_with_a_profile(tmp_path, report):
    _, static, profiled, truth, share = _run("gcc", "-O0", tmp_path, report)
    unannotated = static.functions["unannotated"]
    assert unannotated.counts is None
    assert "unannotated:cond@52" in unannotated.undef_reason, unannotated.undef_reason
    assert "line 52" in unannotated.undef_reason
    measured = profiled.functions["unannotated"]
    assert abs(_total(measured, share) / truth["unannotated"]["total"] - 1) < 0.01


@needs_tools
def test_the_value_of_a_short_circuit_is_not_counted_as_its_operand(tmp_path, report):
    """gcc -O0 materializes ``i > 3 && i < m`` as 1 or 0 in blocks reached from both tests:
    counted as the right operand they were +15.7 % on window()."""
    _, static, profiled, truth, share = _run("gcc", "-O0", tmp_path, report)
    window = static.functions["window"]
    assert window.counts is None
    assert "outcome of several tests of the condition at line 21" in window.undef_reason
    measured = profiled.functions["window"]
    assert abs(_total(measured, share) / truth["window"]["total"] - 1) < 0.01


@needs_tools
@pytest.mark.parametrize("level", ["-O1", "-O2"])
def test_a_short_circuit_compiled_without_jumps_counts_in_every_iteration(tmp_path, report, level):
    """gcc -O1/-O2 compute ``i > 3 && i < m`` with setcc: no block of window()'s loop is
    skipped, so its code counts in every iteration and the total is exact."""
    binary, static, _, truth, share = _run("gcc", level, tmp_path, report)
    lines = {21, 22}
    jumps = [
        i for i in binary.functions["window"].instructions if i.kind == "branch" and i.line in lines
    ]
    assert not jumps  # the premise: no conditional jump decides the operands
    window = static.functions["window"]
    assert window.counts is not None, window.undef_reason
    assert abs(_total(window, share) / truth["window"]["total"] - 1) < 0.01


@needs_tools
def test_loops_gcc_shortens_or_splits_at_their_condition_are_undefined(tmp_path, report):
    """gcc -O3 splits early()'s loop at ``i < 10`` (a scalar loop of ten, then a vector loop:
    -1.3 % as a loop and its remainder) and runs prefix()'s loop to ``min(n, m)`` (a
    ``cmovle`` chooses the bound: +890 % counted n times). Both are undefined now, naming the
    machine loops, and exact with a profile."""
    _, static, profiled, truth, share = _run("gcc", "-O3", tmp_path, report)
    early, prefix = static.functions["early"], static.functions["prefix"]
    assert early.counts is None and "one after the other" in early.undef_reason
    assert prefix.counts is None and "chosen by cmov" in prefix.undef_reason
    for name in ("early", "prefix"):
        assert abs(_total(profiled.functions[name], share) / truth[name]["total"] - 1) < 0.01
