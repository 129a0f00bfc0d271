"""Machine loops whose trip count is read from the binary count only the entries of their
source loop: a loop of a compile-time length inside an ``if`` runs in that block's share of
its enclosing runs, and under a data guard nobody can count it is undefined, naming the block.

Found on McCalpin's STREAM (``checkSTREAMresults``): gcc and clang at -O1..-O3 read the
trip count 100000 of the validation loops, which run only when validation fails, and the
function was predicted 97 % to 250 % above callgrind with no note. Each case builds the real
binary with gcc and clang and compares with a callgrind run.
"""

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

SOURCE = PROGRAMS_DIR / "guarded_fixed_loops.c"
COMPILERS = [c for c in ("gcc", shutil.which("clang-16") and "clang-16") if c]

needs_tools = pytest.mark.skipif(
    shutil.which("valgrind") is None or shutil.which("gcc") is None,
    reason="valgrind and gcc are needed",
)


def _annotated(tmp_path: Path) -> Path:
    """The program with its data guard annotated as never taken."""
    text = SOURCE.read_text().replace("    /* DATA GUARD */\n", "#pragma perfcast probability(0)\n")
    path = tmp_path / "annotated.c"
    path.write_text(text)
    return path


def _build(source: Path, compiler: str, level: str, tmp_path: Path) -> Path:
    binary = tmp_path / f"{source.stem}_{compiler}{level}"
    subprocess.run([compiler, "-g", level, "-o", str(binary), str(source)], check=True)
    return binary


@needs_tools
@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("level", ["-O1", "-O3"])
def test_a_guarded_loop_with_a_binary_trip_count_counts_its_blocks_share(tmp_path, compiler, level):
    source = _annotated(tmp_path)
    binary_path = _build(source, compiler, level, tmp_path)
    binary = read_binary(binary_path)
    main = instruction_mix(binary, analyze([source], ["reps"]), ["reps"]).functions["main"]
    assert main.counts is not None, main.undef_reason
    measured = measured_mix(binary, read_callgrind(run_callgrind(binary_path, (10,), tmp_path)))
    truth = measured["main"]["total"]
    predicted = main.evaluate({"reps": 10})["total"]
    assert abs(predicted / truth - 1) < 0.01, (predicted, truth, main.notes)


@needs_tools
@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_loop_under_an_uncountable_guard_is_undefined_naming_the_block(tmp_path, compiler):
    binary = read_binary(_build(SOURCE, compiler, "-O3", tmp_path))
    main = instruction_mix(binary, analyze([SOURCE], ["reps"]), ["reps"]).functions["main"]
    assert main.counts is None
    assert "main:if@25:then" in main.undef_reason, main.undef_reason
    assert "total is not traced" in main.undef_reason, main.undef_reason
