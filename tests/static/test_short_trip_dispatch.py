"""The short-trip dispatch of a vectorized byte loop (verify20e J10: Embench md5sum clang
-O2/-O3 ``benchmark_body`` +1.1 to +1.6 %).

clang vectorizes ``buf[i] = 3 * i`` over a run-time length 16 bytes per pass, with an 8-byte
epilogue loop and a scalar tail, and dispatches: ``cmp len, 8; jae`` sends lengths below 8 past
both vector loops to the scalar tail, ``cmp len, 16; jae`` lengths below 16 to the 8-byte loop.
Those dispatch blocks, the set-up of the 8-byte loop and the jump back after the scalar tail
were counted once per repetition: +1.1 % at length 1000, +22 to +57 % at lengths 1 to 23. Each
is now counted as often as the loops it leads to or comes from take a pass (``Min(1, passes)``),
the dispatch's way around as the complement, and a dispatch that itself runs in some
repetitions only times its own share: exact at every length.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast.api import analyze_source, instruction_mix
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    run_callgrind,
)

SOURCE = PROGRAMS_DIR / "byte_ramp.c"
PARAMETERS = ["reps", "len"]
# lengths below 8, between 8 and 16, multiples of 16 and 8, and long with both remainders
RUNS = [(3, 1), (3, 5), (2, 8), (2, 16), (3, 23), (2, 24), (2, 1000)]
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(
    ("compiler", "level"), [("clang", "-O2"), ("clang", "-O3"), ("gcc", "-O2")]
)
def test_the_dispatch_counts_with_the_passes_of_the_loops_it_chooses(tmp_path, compiler, level):
    binary_path = compile_c(compiler, level, SOURCE, tmp_path / f"ramp_{compiler}{level}")
    report = analyze_source([SOURCE], PARAMETERS)
    ramp = instruction_mix(binary_path, report, PARAMETERS).functions["ramp"]
    assert ramp.counts is not None, ramp.undef_reason
    binary = read_binary(binary_path)
    for reps, length in RUNS:
        run = read_callgrind(run_callgrind(binary_path, (reps, length), tmp_path))
        truth = measured_mix(binary, run)["ramp"]["total"]
        predicted = ramp.evaluate({"reps": reps, "len": length})["total"]
        assert predicted == truth, (length, predicted, truth)
