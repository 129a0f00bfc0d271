"""A stand-alone copy nothing in the binary reaches (verify20d H5, Embench edn's ``codebook``):
gcc and clang fold ``last = keep_last(total, 1, 17, total)`` into ``last = total`` yet keep the
function's code, which was counted at the source's call count (54 * RPT in edn) while it never
runs. Now a function that no instruction calls or jumps to and whose address neither code nor
data holds counts 0 with a note; functions reached only through a table of function pointers
are not taken for such copies.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast.static.binary import read_binary

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    static_profiled_and_measured,
)

SOURCE = PROGRAMS_DIR / "never_called.c"
N = 30
BUILDS = [(c, level) for c in ("gcc", "clang") for level in ("-O0", "-O1", "-O2", "-O3")]
NEVER_RUNS = "this stand-alone copy never runs"

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed")


@needs_gcc
@pytest.mark.parametrize(("level", "unreached"), [("-O0", set()), ("-O2", {"keep_last"})])
def test_references_tell_the_functions_nothing_reaches(tmp_path, level, unreached):
    binary_path = tmp_path / f"never{level}"
    subprocess.run(["gcc", "-g", level, "-o", str(binary_path), str(SOURCE)], check=True)
    binary = read_binary(binary_path)
    assert binary.referenced is not None
    lows = {name: function.low for name, function in binary.functions.items()}
    found = {name for name, low in lows.items() if low not in binary.referenced}
    assert unreached <= found
    # main is started by the C library; the table's entries are reached through pointers
    assert not found & {"main", "doubled", "tripled"}


@pytest.mark.parametrize(
    ("compiler", "level"),
    [pytest.param(c, o, marks=NEEDS_BOTH_COMPILERS_AND_VALGRIND) for c, o in BUILDS],
)
def test_an_unreached_copy_counts_zero_and_a_reached_one_keeps_its_count(tmp_path, compiler, level):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"never_{compiler}{level}")
    static, _, truth = static_profiled_and_measured(binary, SOURCE, ["n"], (N,), tmp_path)
    zeroed = set()
    for name, function in static.functions.items():
        if any(NEVER_RUNS in note for note in function.notes):
            zeroed.add(name)
            assert function.evaluate({"n": N})["total"] == 0
            assert truth.get(name, 0) == 0, name
    if level != "-O0":  # every call of keep_last folded into its callers
        assert "keep_last" in zeroed
    assert not zeroed & {"main", "doubled", "tripled"}
    for name in ("keep_last", "main"):
        function = static.functions[name]
        assert function.counts is not None, (name, function.undef_reason)
        predicted = function.evaluate({"n": N})["total"]
        expected = truth.get(name, 0)
        close = predicted == 0 if expected == 0 else abs(predicted / expected - 1) < 0.01
        assert close, (name, predicted, expected)
