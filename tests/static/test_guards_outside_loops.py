"""Code under an ``if`` outside loops counts with the share of calls that run it.

Found by the second third-party check of issue 20: straight-line code under a run-time ``if``
outside loops (NPB IS ``if (timer_on)``, the one-time set-up ``if (KS == 0)`` of NPB's
``randlc``) counted as if it ran in every call, with no note: +13.6 % to +92 % without a
profile, and with ``--profile`` only the blocks of machine loops took measured counts (+125 %
to +198 % on a set-up guard). Now a block some calls skip counts with the share of its ``if``
block (a parameter's guard, an else arm, a nested if, a probability annotation); a guard no one
can count makes the function undefined naming the guard (file, line, condition), and with a
profile the block takes its measured count. Built with the real gcc and clang and compared
with callgrind runs.
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
from perfcast.static.guard_text import condition_text, line_text
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "guards_outside_loops.c"
CLANG = shutil.which("clang-16")
GCC = shutil.which("gcc")

needs_tools = pytest.mark.skipif(
    shutil.which("valgrind") is None or GCC is None, reason="valgrind and gcc are needed"
)

QUICK = [(GCC, "-O0"), (GCC, "-O2")] + ([(CLANG, "-O1")] if CLANG else [])
OTHERS = [(GCC, "-O1"), (GCC, "-O3")] + (
    [(CLANG, "-O0"), (CLANG, "-O2"), (CLANG, "-O3")] if CLANG else []
)
BUILDS = [pytest.param(*b, id=f"{Path(str(b[0])).name}{b[1]}") for b in QUICK] + [
    pytest.param(*b, id=f"{Path(str(b[0])).name}{b[1]}", marks=pytest.mark.slow) for b in OTHERS
]


def _build(compiler: str, level: str, tmp_path: Path) -> Path:
    binary = tmp_path / f"guards_{Path(compiler).name}{level}"
    debug = ["-gdwarf-4"] if "clang" in compiler else []
    subprocess.run([compiler, "-g", *debug, level, "-o", str(binary), str(SOURCE)], check=True)
    return binary


@needs_tools
@pytest.mark.parametrize(("compiler", "level"), BUILDS)
@pytest.mark.parametrize("n", [50, 2000])  # the else arm; the then arm with its nested if
def test_guards_outside_loops_match_callgrind_or_name_the_guard(tmp_path, compiler, level, n):
    binary_path = _build(compiler, level, tmp_path)
    binary = read_binary(binary_path)
    report = analyze([SOURCE], ["n"])
    profile_path = run_callgrind(binary_path, (n,), tmp_path)
    truth = measured_mix(binary, read_callgrind(profile_path))
    mix = instruction_mix(binary, report, ["n"])
    values = {"n": n, "p": 0}  # the annotated guard of weighted() is never taken in this run
    for name in ("scaled", "damped", "weighted"):  # guards on n, probability(0), probability(p)
        function = mix.functions[name]
        assert function.counts is not None, (name, function.undef_reason)
        predicted = function.evaluate(values)["total"]
        assert predicted == pytest.approx(truth[name]["total"], rel=0.01), name
    assert "p" in {s.name for s in mix.functions["weighted"].counts["total"].free_symbols}
    for name, line, condition in (("lookup", 14, "ready == 0"), ("main", 74, "argc > 2")):
        reason = mix.functions[name].undef_reason or ""
        assert f"{SOURCE}:{line} ({condition}) holds" in reason, (name, reason)
        if not reason.startswith("source loop"):  # else the guard of the loop it holds
            assert "probability" in reason and "--profile" in reason
    # with the profile, every block under a guard nobody can count takes its measured count
    measured = dict(measured_loop_counts(binary, read_callgrind(profile_path)))
    profiled = instruction_mix(binary, report, ["n"], measured=measured)
    for name in ("lookup", "main", "scaled"):
        function = profiled.functions[name]
        assert function.counts is not None, (name, function.undef_reason)
        predicted = function.evaluate(values)["total"]
        assert predicted == pytest.approx(truth[name]["total"], rel=0.01), name
    assert any("count measured" in note for note in profiled.functions["lookup"].notes)


@needs_tools
def test_a_guard_on_a_given_parameter_stays_a_parameter(tmp_path):
    """The share of an if block whose condition is on a parameter is a function of it."""
    binary = read_binary(_build(GCC, "-O0", tmp_path))
    scaled = instruction_mix(binary, analyze([SOURCE], ["n"]), ["n"]).functions["scaled"]
    assert scaled.counts is not None
    small = scaled.evaluate({"n": 50})["total"] / 50
    large = scaled.evaluate({"n": 2000})["total"] / 2000
    assert small != large  # per call: the else arm at n <= 100, both ifs' arms at n > 1000


def test_the_condition_is_read_as_written(tmp_path):
    source = tmp_path / "guard.c"
    source.write_text(
        "int f(int a, int b)\n{\n  if (a > 42 &&\n      b != 0) {\n    return 1;\n  }\n"
    )
    assert condition_text(str(source), 3) == "a > 42 && b != 0"
    assert condition_text(str(source), 5) is None  # no if on that line
    assert condition_text(str(tmp_path / "missing.c"), 3) is None
    assert line_text(str(source), 3) == "if (a > 42 &&"  # shown for an if a macro expands to


CASES = PROGRAMS_DIR / "cases_and_returns.c"


@needs_tools
@pytest.mark.parametrize("n", [5, 50])  # the early return in every call; in none
def test_switch_cases_and_an_early_return(tmp_path, n):
    binary_path = tmp_path / "cases_gcc-O2"
    subprocess.run([GCC, "-g", "-O2", "-o", str(binary_path), str(CASES)], check=True)
    binary = read_binary(binary_path)
    report = analyze([CASES], ["n"])
    assert report.branches[0].name == "pick:switch@7:cases"
    profile_path = run_callgrind(binary_path, (n, 1), tmp_path)
    truth = measured_mix(binary, read_callgrind(profile_path))
    mix = instruction_mix(binary, report, ["n"])
    # which case runs is not analysed: undefined naming the switch
    reason = mix.functions["pick"].undef_reason or ""
    assert f"its case of the switch at {CASES}:7 (mode) is taken" in reason, reason
    # gcc -O2 keeps the early return as a second exit: the other exit takes the rest of the calls
    clipped = mix.functions["clipped"]
    assert clipped.counts is not None, clipped.undef_reason
    predicted = clipped.evaluate({"n": n})["total"]
    assert predicted == pytest.approx(truth["clipped"]["total"], rel=0.01)
    measured = dict(measured_loop_counts(binary, read_callgrind(profile_path)))
    pick = instruction_mix(binary, report, ["n"], measured=measured).functions["pick"]
    assert pick.counts is not None
    assert pick.evaluate({"n": n})["total"] == pytest.approx(truth["pick"]["total"], rel=0.01)


@needs_tools
@pytest.mark.parametrize("n", [5, 50])
def test_an_early_return_into_a_shared_epilogue_leaves_the_rest_to_the_code_after_it(tmp_path, n):
    """At -O0 both returns jump to one epilogue: the code after the early return is the other
    way of the if's branch, so it runs in the calls the if block does not take."""
    binary_path = tmp_path / "cases_gcc-O0"
    subprocess.run([GCC, "-g", "-O0", "-o", str(binary_path), str(CASES)], check=True)
    binary = read_binary(binary_path)
    truth = measured_mix(binary, read_callgrind(run_callgrind(binary_path, (n, 1), tmp_path)))
    clipped = instruction_mix(binary, analyze([CASES], ["n"]), ["n"]).functions["clipped"]
    assert clipped.counts is not None, clipped.undef_reason
    predicted = clipped.evaluate({"n": n})["total"]
    assert predicted == pytest.approx(truth["clipped"]["total"], rel=0.01)


@needs_tools
@pytest.mark.skipif(CLANG is None, reason="clang is needed")
def test_code_after_an_early_return_that_no_line_places_is_noted_as_an_upper_bound(tmp_path):
    """clang -O2 puts the code after the early return on the if's line and presets the return
    value: no if block and no branch of the report explain that block; the notes say it is
    counted in every call."""
    binary_path = tmp_path / "cases_clang-O2"
    subprocess.run(
        [str(CLANG), "-g", "-gdwarf-4", "-O2", "-o", str(binary_path), str(CASES)], check=True
    )
    clipped = instruction_mix(read_binary(binary_path), analyze([CASES], ["n"]), ["n"])
    notes = " ".join(clipped.functions["clipped"].notes)
    assert "run in some calls only" in notes and "upper bound" in notes, notes
