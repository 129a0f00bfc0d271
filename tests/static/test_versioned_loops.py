"""Machine loops that are alternatives, not parts: gcc -O3 vectorizes a loop whose arrays may
overlap behind a run-time alias check and keeps a scalar copy; both copies have the loop's
full trip count, fixed when compiling, and one of them runs per call. Counting both doubled
the loop (PolyBench's gemm at gcc -O3: +165 %, with no note)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast.static import analyze
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "versioned_loops.c"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed"),
]


def _update(level: str, directory: Path):
    """The prediction for ``update`` and its measured total."""
    binary = directory / f"versioned{level}"
    subprocess.run(["gcc", "-g", level, "-o", str(binary), str(SOURCE)], check=True)
    report = analyze([SOURCE], [], [])
    machine_code = read_binary(binary)
    run = read_callgrind(run_callgrind(binary, (), directory))
    measured = measured_mix(machine_code, run)["update"]["total"]
    static = instruction_mix(machine_code, report, ()).functions["update"]
    return static, measured


def test_the_alias_checked_versions_of_a_loop_make_it_undefined(tmp_path):
    static, measured = _update("-O3", tmp_path)
    assert measured > 0
    assert static.counts is None
    assert "each cover all 70 iterations of source loop update:loop@" in static.undef_reason
    assert "versions of which one runs" in static.undef_reason


def test_a_loop_with_one_version_keeps_its_count(tmp_path):
    static, measured = _update("-O2", tmp_path)
    assert static.counts is not None
    assert static.evaluate({})["total"] == measured
