"""``#pragma perfcast probability(0)`` before an early-return ``if`` (issue 20, static32;
verify20e J15): the return never happens, so the loops after it count as if it were not there
(they were undefined: "the function may return early"), and the operands of its ``||``
condition, all evaluated when the condition is false, run in every call (they were undefined:
"which the report does not count"). Against callgrind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast import api
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import BUILDS, NEEDS_TOOLS, PROGRAMS_DIR, compile_c, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "never_taken_return.c"
N = 37
pytestmark = NEEDS_TOOLS


@pytest.fixture(scope="module")
def report():
    return api.analyze_source([SOURCE], ["n"])


def _row_sums(compiler: str, level: str, report, tmp_path: Path):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"never_{compiler}{level}")
    truth = measured_mix(read_binary(binary), read_callgrind(run_callgrind(binary, (N,), tmp_path)))
    function = api.instruction_mix(binary, report, ["n"], values={"n": N}).functions["row_sums"]
    if function.counts is not None:
        assert function.evaluate({"n": N})["total"] == truth["row_sums"]["total"], function.notes
    return function


def test_the_report_counts_the_loops_after_a_never_taken_return(report):
    kernels = {k.name: k for k in report.kernels}
    assert str(kernels["row_sums:loop@16"].count) == "n**2"
    conditions = {k.name: k for k in report.conditions}
    assert all(str(k.count) == "1" for k in conditions.values() if k.function == "row_sums")


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_the_function_is_counted_at_o0(compiler, report, tmp_path):
    function = _row_sums(compiler, "-O0", report, tmp_path)
    assert function.counts is not None, function.undef_reason


@pytest.mark.slow
@pytest.mark.parametrize(("compiler", "level"), [b for b in BUILDS if b[1] != "-O0"])
def test_every_build_is_right_or_undefined(compiler, level, report, tmp_path):
    _row_sums(compiler, level, report, tmp_path)
