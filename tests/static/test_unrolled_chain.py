"""A triangular loop unrolled completely into a chain of early exits, against callgrind
(verify20d H1, PolyBench syrk).

``rank_update`` (inlined into ``main``) runs ``for j <= i`` loops whose largest trip is known
once the row count is: gcc -O3 vectorizes the first and unrolls its vector part into a chain
of copies, each leaving when ``j`` reaches ``i``. No machine loop is left for that source
loop; its copies were counted as straight-line code of the row loop, once per row, though
copy ``K`` runs only in the rows with enough iterations: ``main`` +211 % with no note. Such a
copy (the body of a source loop nested deeper than the machine loops around it, skipped by a
jump on that loop's own line) is now undefined with that reason, measured with ``--profile``.
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
)

SOURCE = PROGRAMS_DIR / "unrolled_chain.c"
ALLOCATOR = PROGRAMS_DIR / "unrolled_chain_alloc.c"
PARAMETERS = ["ROWS", "DEPTH"]
VALUES = {"ROWS": 29, "DEPTH": 23}
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


def _build(compiler: str, level: str, directory: Path):
    binary = directory / f"chain_{compiler}{level}"
    compile_c(compiler, level, SOURCE, binary, str(ALLOCATOR))
    return static_profiled_and_measured(binary, SOURCE, PARAMETERS, (), directory)


@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_main_is_counted_like_callgrind_or_undefined(tmp_path, compiler, level):
    static, profiled, truth = _build(compiler, level, tmp_path)
    main = static.functions["main"]
    if main.counts is None:
        assert main.undef_reason
    else:
        assert abs(main.evaluate(VALUES)["total"] / truth["main"] - 1) < 0.01, main.notes
    measured = profiled.functions["main"].evaluate(VALUES)["total"]
    assert abs(measured / truth["main"] - 1) < 0.01


def test_the_copies_of_an_unrolled_loop_are_undefined_naming_its_exit(tmp_path):
    static, _, _ = _build("gcc", "-O3", tmp_path)
    reason = static.functions["main"].undef_reason or ""
    assert "is a copy of the body of source loop rank_update:loop@" in reason
    assert "the loop unrolled" in reason
