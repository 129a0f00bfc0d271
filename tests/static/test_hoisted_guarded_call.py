"""A guarded call hoisted out of its loop (issue 20, static32; verify20e J17): clang -O3 moves
the inlined body of ``if (check) product(3);`` (probability 0), which does not depend on the
loop, out of the loop into one block without any source line, run under a test it made of the
loop's bound and ``check``. static32 counted that block in every call with a warning (it was
silent, +20 % here, +254 % on verify20e's reproducer); static34 ties it to the guard through the
variable the test compares (tests/static/test_hoisted_guard.py), so the total is exact."""

from __future__ import annotations

import sys
from pathlib import Path

from perfcast import api
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import NEEDS_TOOLS, PROGRAMS_DIR, compile_c, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "hoisted_call.c"
pytestmark = NEEDS_TOOLS


def test_a_wrong_total_from_a_hoisted_guarded_call_is_not_silent(tmp_path):
    report = api.analyze_source([SOURCE], ["rpt"])
    binary = compile_c("clang", "-O3", SOURCE, tmp_path / "hoisted")
    run = run_callgrind(binary, (5, 0), tmp_path)
    truth = measured_mix(read_binary(binary), read_callgrind(run))["main"]["total"]
    function = api.instruction_mix(binary, report, ["rpt"], values={"rpt": 5}).functions["main"]
    if function.counts is None:
        return  # undefined with its reason: honest
    predicted = function.evaluate({"rpt": 5})["total"]
    # static34: the moved block is tied to its guard (probability 0), no longer counted in
    # every call with a warning
    assert predicted == truth, function.notes
    profiled = api.instruction_mix(binary, report, ["rpt"], profiles=[({"rpt": 5}, run)])
    assert profiled.functions["main"].evaluate({"rpt": 5})["total"] == truth
