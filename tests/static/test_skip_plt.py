"""Profiles recorded with callgrind's default ``--skip-plt=yes``.

Callgrind then charges each PLT stub's jump to the call that reaches it: a function calling a
shared-library function in a loop measures one instruction per call more than it executes
(``library_calls.c`` at gcc -O2: 6.3 % above the model's exact count). Such a profile is
recognised (a call ran whose target in the executable never did), the measured block counts
are read past calls, and each function that calls through the PLT says so in its notes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast.api import analyze_source, instruction_mix
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import (
    measured_loop_counts,
    measured_mix,
    plt_charged_to_calls,
    read_callgrind,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR  # noqa: E402

SOURCE = PROGRAMS_DIR / "library_calls.c"
N = 1000

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed"),
]


def _profile(binary: Path, skip_plt: str) -> Path:
    out = binary.with_name(f"callgrind.skip-plt-{skip_plt}")
    subprocess.run(
        ["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--skip-plt={skip_plt}"]
        + [f"--callgrind-out-file={out}", str(binary), str(N)],
        check=True,
        capture_output=True,
    )
    return out


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_a_default_skip_plt_profile_is_recognised_and_said(tmp_path, level):
    binary = tmp_path / f"calls{level}"
    subprocess.run(["gcc", "-g", level, "-o", str(binary), str(SOURCE)], check=True)
    machine_code = read_binary(binary)
    charged, apart = _profile(binary, "yes"), _profile(binary, "no")
    assert plt_charged_to_calls(machine_code, read_callgrind(charged))
    assert not plt_charged_to_calls(machine_code, read_callgrind(apart))
    # the totals differ by the stubs' jumps, the block counts perfcast reads do not
    with_stubs = measured_mix(machine_code, read_callgrind(charged))["show"]["total"]
    without = measured_mix(machine_code, read_callgrind(apart))["show"]["total"]
    assert with_stubs >= without + N
    assert measured_loop_counts(machine_code, read_callgrind(charged)) == measured_loop_counts(
        machine_code, read_callgrind(apart)
    )
    report = analyze_source([SOURCE], ["n"])
    static = instruction_mix(binary, report, ["n"]).functions["show"]
    assert abs(static.evaluate({"n": N})["total"] / without - 1) < 0.01
    noted = instruction_mix(binary, report, ["n"], profiles=[({"n": N}, charged)])
    assert any("--skip-plt=yes" in note for note in noted.functions["show"].notes)
    plain = instruction_mix(binary, report, ["n"], profiles=[({"n": N}, apart)])
    assert not any("--skip-plt" in note for note in plain.functions["show"].notes)
