"""sqrt's errno path when the result is unused (issue 20, static32; verify20e J2, Embench
nbody's ``bodies_energy`` inlined into a caller that drops its result): clang -O1 removes the
arithmetic and the square root but keeps the compare of the argument with 0 and the library
call for a negative or NaN argument. That path was counted in every iteration (+32 % on
``repeat`` at clang -O1, no note); it never runs when every argument is in the domain, as the
inline form's fallback (:mod:`perfcast.static.math_fallbacks`). Against callgrind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast import api
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import BUILDS, NEEDS_TOOLS, PROGRAMS_DIR, compile_c, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "unused_root.c"
N = 37
pytestmark = NEEDS_TOOLS


@pytest.fixture(scope="module")
def report():
    return api.analyze_source([SOURCE], ["n"])


def _repeat(compiler: str, level: str, report, tmp_path: Path):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"root_{compiler}{level}", "-lm")
    truth = measured_mix(read_binary(binary), read_callgrind(run_callgrind(binary, (N,), tmp_path)))
    mix = api.instruction_mix(binary, report, ["n"], values={"n": N})
    for name, function in mix.functions.items():  # repeat, or its copy repeat.constprop.0
        if name.split(".")[0] == "repeat" and function.counts is not None:
            assert function.evaluate({"n": N})["total"] == truth[name]["total"], function.notes
    return mix.functions.get("repeat")


def test_the_errno_call_of_an_unused_sqrt_never_runs(report, tmp_path):
    function = _repeat("clang", "-O1", report, tmp_path)
    assert function is not None and function.counts is not None, function
    assert any("only for an argument outside its domain" in note for note in function.notes)


@pytest.mark.slow
@pytest.mark.parametrize(("compiler", "level"), [b for b in BUILDS if b != ("clang", "-O1")])
def test_every_build_is_right_or_undefined(compiler, level, report, tmp_path):
    _repeat(compiler, level, report, tmp_path)
