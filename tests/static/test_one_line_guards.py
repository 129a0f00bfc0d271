"""Conditions on one line inside loops (verify20b F12 and F17): PolyBench's ``if (c) stmt;``
in ``print_array`` and LINPACK's running maximum by ``?:`` in ``matgen`` counted their arm in
every iteration (+8 % to +28 % at -O0). Now the arm is undefined naming its ``if`` block or
``?:`` arm and its condition, and takes its measured count with ``--profile``; where the
compiler drops the branch (a ``maxsd``), the count is exact.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, static_profiled_and_measured  # noqa: E402

SOURCE = PROGRAMS_DIR / "one_line_guards.c"
CLANG = shutil.which("clang-16")
N = 40

needs_tools = pytest.mark.skipif(
    shutil.which("valgrind") is None or shutil.which("gcc") is None,
    reason="valgrind and gcc are needed",
)


def _mixes(compiler: str, level: str, tmp_path: Path):
    binary_path = tmp_path / f"one_line_{Path(compiler).name}{level}"
    debug = ["-gdwarf-4"] if "clang" in compiler else []
    subprocess.run([compiler, "-g", *debug, level, "-o", str(binary_path), str(SOURCE)], check=True)
    return static_profiled_and_measured(binary_path, SOURCE, ["n"], (N,), tmp_path)


def _close(function, truth: float) -> bool:
    return abs(function.evaluate({"n": N})["total"] / truth - 1) < 0.01


@needs_tools
@pytest.mark.parametrize("compiler", ["gcc", CLANG] if CLANG else ["gcc"])
def test_one_line_arms_are_undefined_naming_them_and_measured_with_a_profile(tmp_path, compiler):
    static, profiled, truth = _mixes(compiler, "-O0", tmp_path)
    # dump's one-line `if ((i * n + j) % 20 == 0)` is a remainder guard: counted (static27)
    assert _close(static.functions["dump"], truth["dump"])
    assert static.functions["fill"].counts is None
    assert "fill:cond@27:then" in static.functions["fill"].undef_reason
    for name in ("dump", "fill"):
        assert _close(profiled.functions[name], truth[name]), name


@needs_tools
def test_a_maximum_compiled_without_a_jump_is_exact(tmp_path):
    static, _, truth = _mixes("gcc", "-O2", tmp_path)
    fill = static.functions["fill"]
    assert fill.counts is not None, fill.undef_reason
    assert _close(fill, truth["fill"])
