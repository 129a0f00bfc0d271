"""Loop guards with an offset on the loop variable (issue 20, J14 of the fifth round): the
SIMD-style ``i + 4 <= n`` was undefined ("the loop's initialisation does not assign its
variable n"), ``i - 2 >= 0`` and ``3 + j < n`` too, and so was the remainder loop
``for (; i < n; i++)`` after it, whose start is the first loop's exit value."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from perfcast import api
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import NEEDS_TOOLS, PROGRAMS_DIR, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "shifted_guard.c"
FUNCTIONS = ("by_four", "down_by_two", "offset_first", "with_rest")
pytestmark = NEEDS_TOOLS


@pytest.fixture(scope="module")
def report():
    return api.analyze_source([SOURCE], ["n"])


def _passes(n: int) -> dict[str, int]:
    """The loops' iterations at ``n``, as C runs them."""
    by_four = len(range(0, max(n - 3, 0), 4))
    down, i = 0, n
    while i - 2 >= 0:
        down, i = down + 1, i - 2
    return {
        "by_four:loop@13": by_four,
        "down_by_two:loop@25": down,
        "offset_first:loop@32": max(n - 3, 0),
        "with_rest:loop@39": by_four,
        "with_rest:loop@46": n - 4 * by_four,
    }


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 203])
def test_offset_guards_are_counted(report, n):
    for name, expected in _passes(n).items():
        count = report.kernel(name).count
        assert count is not None, (name, report.kernel(name).undef_reason)
        assert count.subs({s: n for s in count.free_symbols}) == expected, name


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_their_instruction_counts_are_right_or_undefined(report, tmp_path, level):
    """At -O0 all are counted; at -O2 gcc vectorizes the loops by 4 (machine loops read
    elsewhere) and turns offset_first into a library copy: right where defined."""
    binary = tmp_path / f"shifted_guard{level}"
    subprocess.run(["gcc", "-g", level, "-o", str(binary), str(SOURCE)], check=True)
    run = run_callgrind(binary, (203,), tmp_path)
    truth = measured_mix(read_binary(binary), read_callgrind(run))
    mix = api.instruction_mix(binary, report, ["n"])
    defined = set()
    for name, function in mix.functions.items():
        base = name.split(".")[0]
        if base not in FUNCTIONS or function.counts is None:
            continue
        predicted = function.evaluate({"n": 203})["total"]
        assert predicted == pytest.approx(truth[name]["total"], rel=0.01), name
        defined.add(base)
    if level == "-O0":
        assert defined == set(FUNCTIONS)
    assert "down_by_two" in defined
