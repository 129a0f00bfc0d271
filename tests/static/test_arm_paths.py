"""The paths after a one-line ``if`` with a call, in a loop (issue 20, PolyBench durbin's
print_array): gcc -O3 ends the then arm with a jump carrying the next line's number, which is
not a copy of that line's code (it was counted in every iteration: durbin's ``main`` +27 %);
gcc -O2 copies the loop's update onto the path that skips the arm, which runs in the other
iterations (it was counted with the arm's share: -28 %). Against callgrind per function."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast import api
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import BUILDS, NEEDS_TOOLS, PROGRAMS_DIR, compile_c, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "arm_paths.c"
N = 60
pytestmark = NEEDS_TOOLS
QUICK = [("gcc", "-O2"), ("gcc", "-O3")]


@pytest.fixture(scope="module")
def report():
    return api.analyze_source([SOURCE], ["n"])


def _defined_within_one_percent(compiler: str, level: str, report, tmp_path: Path) -> set[str]:
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"arms_{compiler}{level}")
    truth = measured_mix(read_binary(binary), read_callgrind(run_callgrind(binary, (N,), tmp_path)))
    mix = api.instruction_mix(binary, report, ["n"])
    defined = set()
    for name, function in mix.functions.items():
        if function.counts is None:
            continue
        predicted = function.evaluate({"n": N})["total"]
        measured = truth.get(name, {}).get("total", 0)
        assert abs(predicted - measured) <= 0.01 * measured, (name, predicted, measured)
        defined.add(name)
    return defined


@pytest.mark.parametrize(("compiler", "level"), QUICK)
def test_both_paths_of_the_guard_count_their_share(compiler, level, report, tmp_path):
    defined = _defined_within_one_percent(compiler, level, report, tmp_path)
    # the dump loop inlined into main (-O3) and the copied update (-O2, -O3) are counted
    assert {"main", "every_twentieth"} <= defined


@pytest.mark.slow
@pytest.mark.parametrize(("compiler", "level"), [b for b in BUILDS if b not in QUICK])
def test_every_build_is_right_or_undefined(compiler, level, report, tmp_path):
    assert "every_twentieth" in _defined_within_one_percent(compiler, level, report, tmp_path)
