"""A profile fills undefined counts only (issue 20 point 3, verify20d H13): a defined static
count, here a modular guard ``i % 20 == 0`` with its call on the same line, stays with
``--profile``. Where a kept static count and the measured one differ at a profiled point, the
measured count is taken when it fits the machine control flow with the other counts (a
profiled run is the truth at its values), else the function's notes warn."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sympy

from perfcast import api
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_loop_counts, measured_mix, read_callgrind
from perfcast.static.control_flow import basic_blocks
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import NEEDS_TOOLS, PROGRAMS_DIR, compile_c, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "profile_kept.c"
pytestmark = NEEDS_TOOLS


@pytest.fixture(scope="module")
def report():
    return api.analyze_source([SOURCE], ["n"])


@pytest.mark.parametrize(
    ("compiler", "level"), [("gcc", "-O0"), ("clang", "-O0"), ("gcc", "-O1"), ("clang", "-O1")]
)
def test_a_defined_count_stays_with_a_profile(compiler, level, report, tmp_path):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"kept_{compiler}{level}")
    static = api.instruction_mix(binary, report, ["n"])
    assert static.functions["sum_every"].counts is not None, static.functions["sum_every"]
    profiled = api.instruction_mix(
        binary, report, ["n"], profiles=[({"n": 41}, run_callgrind(binary, (41,), tmp_path))]
    )
    kept = profiled.functions["sum_every"]
    assert kept.counts is not None
    assert "floor" in str(kept.counts["total"]), kept.counts["total"]  # the guard's exact term
    assert not any(note.startswith("warning") for note in kept.notes), kept.notes
    # the exact term holds far from the profiled size
    far = read_callgrind(run_callgrind(binary, (1000,), tmp_path))
    truth = measured_mix(read_binary(binary), far)["sum_every"]["total"]
    assert kept.evaluate({"n": 1000})["total"] == truth


def _measured_sum_every(tmp_path: Path):
    binary_path = compile_c("gcc", "-O0", SOURCE, tmp_path / "kept_wrong")
    binary = read_binary(binary_path)
    profile = read_callgrind(run_callgrind(binary_path, (41,), tmp_path))
    return binary, dict(measured_loop_counts(binary, profile))


def _blocks_counted(measured, count: int) -> list:
    return [
        key
        for key, value in measured.items()
        if key[0] == "block" and key[1] == "sum_every" and value == count
    ]


def test_a_static_count_the_profile_contradicts_is_measured_where_the_flow_fits(report, tmp_path):
    binary, measured = _measured_sum_every(tmp_path)
    guarded = _blocks_counted(measured, 3)  # i = 0, 20, 40
    assert guarded
    # the guard's block ran once more than counted (its neighbours' counts allow it)
    measured[guarded[0]] = sympy.Integer(4)
    mix = instruction_mix(binary, report, ["n"], measured=measured, points=[{"n": 41}])
    function = mix.functions["sum_every"]
    assert not any("differ from the profile" in note for note in function.notes), function.notes
    taken = [note for note in function.notes if "the profiled runs contradict" in note]
    assert taken and f"{guarded[0][2]:#x} (static 3, measured 4 at n=41)" in taken[0]
    static = instruction_mix(binary, report, ["n"], points=[{"n": 41}])
    blocks = basic_blocks(binary.functions["sum_every"])
    block_size = len(next(b for b in blocks if b.start == guarded[0][2]).instructions)
    assert function.evaluate({"n": 41})["total"] == (
        static.functions["sum_every"].evaluate({"n": 41})["total"] + block_size
    )


def test_a_contradicting_count_that_breaks_the_flow_is_a_warning(report, tmp_path):
    binary, measured = _measured_sum_every(tmp_path)
    bodies = _blocks_counted(measured, 41)
    assert bodies
    # a profile of another build or input: a block of the loop body 9 runs more than any
    # way into it allows
    measured[bodies[0]] = sympy.Integer(50)
    mix = instruction_mix(binary, report, ["n"], measured=measured, points=[{"n": 41}])
    function = mix.functions["sum_every"]
    warnings = [note for note in function.notes if "differ from the profile" in note]
    assert warnings and f"{bodies[0][2]:#x} (static 41, measured 50 at n=41)" in warnings[0]
    assert warnings[0].startswith("warning")
    assert "floor" in str(function.counts["total"])  # the static counts are kept
