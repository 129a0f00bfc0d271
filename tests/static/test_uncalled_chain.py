"""A function whose only callers never run counts 0 (issue 20, static34; verify20f K12):
Rodinia backprop's ``drnd``, called only by ``dpn1`` which nothing calls, was counted as one call
(9 instructions for 0) with no note; the notes also said "the compiler removed every call" at
-O0, where the source has no call of ``dpn1`` at all."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    NEEDS_TOOLS,
    PROGRAMS_DIR,
    compile_c,
    static_profiled_and_measured,
)

SOURCE = PROGRAMS_DIR / "uncalled_chain.c"
pytestmark = NEEDS_TOOLS


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_a_function_only_uncalled_code_calls_counts_zero(tmp_path, compiler):
    binary = compile_c(compiler, "-O0", SOURCE, tmp_path / f"chain_{compiler}")
    static, _, truth = static_profiled_and_measured(binary, SOURCE, ["n"], (10,), tmp_path)
    for name in ("leaf", "middle"):
        function = static.functions[name]
        assert truth.get(name, 0) == 0
        assert function.counts is not None and function.evaluate({"n": 10})["total"] == 0
        assert any("the source does not call it from main" in n for n in function.notes)
    assert any(
        "only middle, which never runs, calls leaf" in n for n in static.functions["leaf"].notes
    )
    kept = static.functions["kept"]  # reached through the pointer in data: counted as called
    assert kept.counts is not None and kept.evaluate({"n": 10})["total"] == truth["kept"]
    assert static.functions["main"].evaluate({"n": 10})["total"] == truth["main"]
