"""A loop that leaves in the middle of its code, after its body (issue 20, static32; Embench
edn's ``jpegdct`` at gcc -O2, verify20d's fourth round): gcc -O2 runs the two passes of
``for (k = 1; k <= 8; k += 7)`` behind a flag, and the block after the exit test that sets it
and jumps back runs once per entry, not once per pass (counted per pass before: +3
instructions per call, the flow check's note at stand-in values, the function undefined at the
run's values). Against callgrind, with and without the run's values."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast import api
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import BUILDS, NEEDS_TOOLS, PROGRAMS_DIR, compile_c, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "middle_exit.c"
N = 37
pytestmark = NEEDS_TOOLS


@pytest.fixture(scope="module")
def report():
    return api.analyze_source([SOURCE], ["n"])


def _check(compiler: str, level: str, report, tmp_path: Path) -> bool:
    """Whether two_passes is defined; a defined total is callgrind's, with and without the
    run's values, and no flow check fails."""
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"middle_{compiler}{level}")
    run = run_callgrind(binary, (N,), tmp_path)
    truth = measured_mix(read_binary(binary), read_callgrind(run))["two_passes"]["total"]
    defined = []
    for values in ({}, {"n": N}):
        function = api.instruction_mix(binary, report, ["n"], values=values).functions["two_passes"]
        if function.counts is None:
            defined.append(False)
            continue
        assert function.evaluate({"n": N})["total"] == truth, (values, function.notes)
        assert not any("inconsistent" in note for note in function.notes), function.notes
        defined.append(True)
    profiled = api.instruction_mix(binary, report, ["n"], profiles=[({"n": N}, run)])
    assert profiled.functions["two_passes"].evaluate({"n": N})["total"] == truth
    return all(defined)


def test_the_code_after_a_middle_exit_runs_once_less_per_entry(report, tmp_path):
    assert _check("gcc", "-O2", report, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(("compiler", "level"), [b for b in BUILDS if b != ("gcc", "-O2")])
def test_every_build_is_right_or_undefined(compiler, level, report, tmp_path):
    _check(compiler, level, report, tmp_path)
