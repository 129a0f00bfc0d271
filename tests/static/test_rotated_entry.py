"""A loop entered at the block that holds its body and exit test, against callgrind.

gcc -O2 rotates the inner loop of a Gauss-Seidel sweep at a compile-time size (PolyBench's
seidel-2d) and jumps into it at the block holding the body and the exit test; a one-instruction
block before it runs on the back edge only. That block is the natural loop's header and the
exit is there, which was read as a test-only header running once more per entry than the body:
+3.2 % against callgrind with no note (``rotated_entry.c``). Every build is compared.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast.static import analyze
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    BUILDS,
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    run_callgrind,
)

SOURCE = PROGRAMS_DIR / "rotated_entry.c"
REPS = 5
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_the_sweep_counts_like_callgrind(tmp_path, compiler, level):
    binary = tmp_path / f"rotated_{compiler}{level}"
    compile_c(compiler, level, SOURCE, binary)
    machine_code = read_binary(binary)
    truth = measured_mix(machine_code, read_callgrind(run_callgrind(binary, (REPS,), tmp_path)))
    sweeps = instruction_mix(machine_code, analyze([SOURCE], ["reps"]), ["reps"]).functions[
        "sweeps"
    ]
    assert sweeps.counts is not None, sweeps.undef_reason
    predicted = sweeps.evaluate({"reps": REPS})["total"]
    assert abs(predicted / truth["sweeps"]["total"] - 1) < 0.01, (predicted, truth["sweeps"])
