"""Machine loops of inner loops whose outer source loop the compiler unrolled completely.

NAS EP (``programs/npb_ep``, class S with M = 18: 4 batches) loops over its batches; clang -O3
unrolls that loop completely, so the machine loops of each batch's inner loops (the seed loop
with its ``break`` and the Gaussian-pair loop) sit at depth 1. Matched by depth they were taken
for the batch loop, whose count was shared out among eight of them: ``main`` was predicted
90,582 instructions against 9,159,184 measured, with no note. A machine loop whose back edge
is on the header line of a deeper source loop now implements that loop: ``main`` is undefined
(the seed loop's ``break``), and with the run as profile within 1 % of callgrind.
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
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, run_callgrind  # noqa: E402

EP = PROGRAMS_DIR / "npb_ep"
CLANG = shutil.which("clang-16") or shutil.which("clang")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
    pytest.mark.skipif(CLANG is None, reason="clang is not installed"),
]


def test_inner_loops_of_an_unrolled_batch_loop_are_no_batch_loop(tmp_path):
    binary = tmp_path / "ep"
    subprocess.run(
        [CLANG, "-g", "-gdwarf-4", "-O3", f"-I{EP}", "-o", str(binary)]
        + [str(EP / "ep.c"), str(EP / "common.c"), "-lm"],
        check=True,
    )
    machine_code = read_binary(binary)
    report = analyze([EP / "ep.c"], [], [f"-I{EP}"])
    static = instruction_mix(machine_code, report, []).functions["main"]
    assert static.counts is None
    assert "main:loop@107" in static.undef_reason  # the seed loop, ended by a break
    run = read_callgrind(run_callgrind(binary, (), tmp_path))
    truth = measured_mix(machine_code, run)["main"]["total"]
    measured = measured_loop_counts(machine_code, run)
    profiled = instruction_mix(machine_code, report, [], measured=measured).functions["main"]
    assert profiled.counts is not None, profiled.undef_reason
    assert abs(profiled.evaluate({})["total"] / truth - 1) < 0.01
    assert any("source loop main:loop@123" in note for note in profiled.notes)
