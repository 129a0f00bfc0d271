"""Copies of an inner loop for the passes of a two-pass outer loop (verify20d H15, Embench edn's
``jpegdct`` at gcc-12 -O3): the outer loop ``for (pass = 1, step = 1, ...; pass <= 8; pass += 7,
...)`` runs a row pass and a column pass whose strides are variables; gcc -O3 keeps a machine
loop for the first pass and leaves it at the header test into a copy of the inner loop for the
last pass (the unit-stride version). Both copies were counted with the inner loop's whole count
(2 passes x 8): +96 %, silent, also with ``--profile``. Each copy runs one pass per call.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    BUILDS,
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    static_profiled_and_measured,
    total_error,
)

SOURCE = PROGRAMS_DIR / "pass_strides.c"
ROUNDS = 3


@pytest.mark.parametrize(
    ("compiler", "level"),
    [pytest.param(*b, marks=NEEDS_BOTH_COMPILERS_AND_VALGRIND) for b in BUILDS],
)
def test_copies_of_the_passes_are_counted_once_per_pass_or_undefined(tmp_path, compiler, level):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"passes_{compiler}{level}")
    static, profiled, truth = static_profiled_and_measured(
        binary, SOURCE, ["rounds"], (ROUNDS,), tmp_path
    )
    function = static.functions["two_pass"]
    if function.counts is None:
        assert function.undef_reason, function.notes
    else:
        assert abs(total_error(static, truth, "two_pass", {"rounds": ROUNDS})) <= 0.01, (
            function.notes
        )
    assert abs(total_error(profiled, truth, "two_pass", {"rounds": ROUNDS})) <= 0.01
