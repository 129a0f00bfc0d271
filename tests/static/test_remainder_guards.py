"""Remainder and division tests counted statically (issue 20, J5 and J9 of the fifth round):
PolyBench's dump guard over a flattened index whose size is a compile-time constant passed as
an argument, its 3-D form, a bound from an unsigned division, and a division of an argument a
call may pass negative (undefined, naming the call)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import sympy

from perfcast import api
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import NEEDS_TOOLS, PROGRAMS_DIR, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "remainder_guards.c"
PARAMETERS = ("len", "nr", "nq", "np")
VALUES = {"len": 1000, "nr": 5, "nq": 6, "np": 7}
pytestmark = NEEDS_TOOLS


@pytest.fixture(scope="module")
def report():
    return api.analyze_source([SOURCE], PARAMETERS)


def _at(expression, values):
    return expression.subs({s: values[s.name] for s in expression.free_symbols})


def test_flattened_index_with_a_compile_time_size_is_counted(report):
    guard = next(b for b in report.branches if b.name == "dump_square:if@22:then")
    assert guard.count == len([f for f in range(17 * 17) if f % 20 == 0])


@pytest.mark.parametrize(("nr", "nq", "np"), [(5, 6, 7), (3, 20, 1), (1, 1, 1), (4, 5, 9)])
def test_three_level_flattened_index_is_counted(report, nr, nq, np):
    guard = next(b for b in report.branches if b.name == "dump_cube:if@32:then")
    expected = len([f for f in range(nr * nq * np) if f % 20 == 0])
    assert _at(guard.count, {"nr": nr, "nq": nq, "np": np}) == expected


@pytest.mark.parametrize("length", [0, 55, 56, 1000, 4096])
def test_unsigned_division_bound_is_counted(report, length):
    loop = report.kernel("blocks:loop@40")
    new_len = (((length + 8) // 64) + 1) * 64 - 8
    assert _at(loop.count, {"len": length}) == len(range(0, new_len, 64))


def test_division_of_an_argument_that_may_be_negative_stays_undefined(report):
    loop = report.kernel("halves:loop@47")
    assert loop.count is None
    assert "argument 1 of the call" in loop.undef_reason
    assert "may be negative" in loop.undef_reason


def test_remainder_message_keeps_the_parentheses():
    from perfcast.static.symbolic import Residue, Undefined, sum_over_levels

    i, j, k = (sympy.Symbol(name, integer=True) for name in "ijk")
    residue = Residue(i * 3 + k * j, 20, 0)
    with pytest.raises(Undefined, match=r"\(3\*i \+ j\*k\) % 20"):
        sum_over_levels([], [residue], [])


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_instruction_counts_match_callgrind(report, tmp_path, level):
    binary = tmp_path / f"remainder_guards{level}"
    subprocess.run(["gcc", "-g", level, "-o", str(binary), str(SOURCE)], check=True)
    run = run_callgrind(binary, tuple(VALUES.values()), tmp_path)
    truth = measured_mix(read_binary(binary), read_callgrind(run))
    mix = api.instruction_mix(binary, report, PARAMETERS)
    checked = set()
    for name, function in mix.functions.items():
        base = name.split(".")[0]
        if base in ("dump_square", "dump_cube", "blocks"):
            assert function.counts is not None, (name, function.undef_reason)
            predicted = function.evaluate(VALUES)["total"]
            assert predicted == pytest.approx(truth[name]["total"], rel=0.01), name
            checked.add(base)
    assert checked == {"dump_square", "dump_cube", "blocks"}
    assert mix.functions["halves"].counts is None
