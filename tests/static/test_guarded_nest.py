"""Inner loops under an affine condition on an outer loop variable (issue 20, verify20d H12,
Embench ud's ludcmp): ``if (i != 0) for (k < i)`` in a triangular nest. The k loop's set-up
and its header's extra test per entry run in the guarded iterations only (the if block starts
on the k loop's line: the block around it is found from the if's own line). Against callgrind:
every defined total within 1 % at the run's values (the flow check makes the others undefined
or measured), exact with a profile."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast import api
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind
from perfcast.static.instruction_mix import FunctionMix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import BUILDS, NEEDS_TOOLS, PROGRAMS_DIR, compile_c, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "guarded_nest.c"
N = 9
FUNCTIONS = ("eliminate", "late_rows")
pytestmark = NEEDS_TOOLS
QUICK = [("clang", "-O0"), ("gcc", "-O1")]


@pytest.fixture(scope="module")
def report():
    return api.analyze_source([SOURCE], ["n"])


def _check(compiler: str, level: str, report, tmp_path: Path) -> dict[str, dict[str, FunctionMix]]:
    """Compare every function, statically at the run's values and with the run as profile;
    returns the functions with a defined total in each (name -> its mix)."""
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"nest_{compiler}{level}")
    run = run_callgrind(binary, (N,), tmp_path)
    truth = measured_mix(read_binary(binary), read_callgrind(run))
    mixes = {
        "static": api.instruction_mix(binary, report, ["n"], values={"n": N}),
        "profiled": api.instruction_mix(binary, report, ["n"], profiles=[({"n": N}, run)]),
    }
    defined: dict[str, dict[str, FunctionMix]] = {}
    for kind, mix in mixes.items():
        defined[kind] = {}
        for name in FUNCTIONS:
            function = mix.functions[name]
            if function.counts is None:
                continue
            predicted = function.evaluate({"n": N})["total"]
            measured = truth[name]["total"]
            assert abs(predicted - measured) <= 0.01 * measured, (kind, name, predicted, measured)
            defined[kind][name] = function
    return defined


@pytest.mark.parametrize(("compiler", "level"), QUICK)
def test_the_guarded_inner_loop_counts_in_the_guarded_iterations(compiler, level, report, tmp_path):
    defined = _check(compiler, level, report, tmp_path)
    assert set(FUNCTIONS) <= set(defined["profiled"])
    if (compiler, level) == ("clang", "-O0"):
        assert "eliminate" in defined["static"]  # it was undefined


@pytest.mark.slow
@pytest.mark.parametrize(("compiler", "level"), [b for b in BUILDS if b not in QUICK])
def test_every_build_is_right_or_undefined(compiler, level, report, tmp_path):
    _check(compiler, level, report, tmp_path)


def test_static_counts_a_profiled_run_contradicts_are_measured(report, tmp_path):
    """gcc -O3 starts late_rows' i loop at 4 (the iterations before have an empty k loop), so
    the i and j loops' blocks run n - 4 and (n - 4) n times, not n and n**2; the flow check
    cannot see it (every block of the nest is off by the same factor). The profiled run
    contradicts those counts and its measured ones fit the control flow: they are taken, and
    the notes say so (+25.6 % before)."""
    defined = _check("gcc", "-O3", report, tmp_path)
    notes = defined["profiled"]["late_rows"].notes
    assert any("the profiled runs contradict their static counts" in note for note in notes)
    assert not any("differ from the profile" in note for note in notes), notes


@pytest.mark.parametrize("level", ["-O1", "-O2"])
def test_zero_trip_paths_of_loops_that_always_run_count_zero(level, report, tmp_path):
    """gcc tests ``j = i + 1 <= n`` before the j loop (never false inside ``i < n``) and
    ``n > 0`` before the i loop; their ways around the loops (a copy of the i loop's update,
    a ``ret``) counted in every iteration and call: +6.2 % / +2.8 % with the flow check's note
    at stand-in values, undefined at the run's values. The report shows that both loops run in
    every entry for n >= 1: those ways count 0, exact with and without the values."""
    binary = compile_c("gcc", level, SOURCE, tmp_path / f"zero_trip_gcc{level}")
    truth = measured_mix(read_binary(binary), read_callgrind(run_callgrind(binary, (N,), tmp_path)))
    for values in ({}, {"n": N}):
        function = api.instruction_mix(binary, report, ["n"], values=values).functions["eliminate"]
        assert function.counts is not None, function.undef_reason
        assert function.evaluate({"n": N})["total"] == truth["eliminate"]["total"]
        assert not any("inconsistent" in note for note in function.notes), function.notes
