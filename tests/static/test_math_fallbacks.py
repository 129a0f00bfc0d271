"""The library call behind an inline ``sqrt`` (verify20d H11, Embench st): without
``-fno-math-errno`` gcc and clang compute ``sqrt``/``sqrtf``/``sqrtl`` with the processor's
instruction and call the library only for an argument below 0 (to set errno). That call's block
was counted in every iteration (+20 % to +86 % on a loop of square roots). Now it counts 0 with
a note saying so, and takes its measured count with ``--profile``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast.static.binary import read_binary
from perfcast.static.control_flow import basic_blocks
from perfcast.static.math_fallbacks import math_fallbacks

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    static_profiled_and_measured,
)

SOURCE = PROGRAMS_DIR / "math_fallbacks.c"
N = 41  # not a multiple of clang's unrolling by 4: its remainder loop runs
FUNCTIONS = ("norms", "norms_float", "root_long", "scaled_root")
OPTIMIZED = [(c, level) for c in ("gcc", "clang") for level in ("-O1", "-O2", "-O3")]

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed")


def _fallbacks(tmp_path: Path, *flags: str) -> dict[str, dict[int, str]]:
    binary_path = tmp_path / "fallbacks"
    command = ["gcc", "-g", *flags, "-o", str(binary_path), str(SOURCE), "-lm"]
    subprocess.run(command, check=True)
    binary = read_binary(binary_path)
    return {
        name: math_fallbacks(basic_blocks(binary.functions[name]), binary.callees)
        for name in FUNCTIONS
    }


@needs_gcc
def test_each_inline_root_has_its_library_path_found(tmp_path):
    found = _fallbacks(tmp_path, "-O2")
    assert set(found["norms"].values()) == {"sqrt"}
    assert set(found["norms_float"].values()) == {"sqrtf"}
    assert set(found["root_long"].values()) == {"sqrtl"}
    assert set(found["scaled_root"].values()) == {"sqrt"}


@needs_gcc
@pytest.mark.parametrize("flags", [("-O0",), ("-O2", "-fno-math-errno")])
def test_a_plain_call_or_a_plain_instruction_is_no_fallback(tmp_path, flags):
    assert not any(_fallbacks(tmp_path, *flags).values())


@pytest.mark.parametrize(
    ("compiler", "level"),
    [pytest.param(c, o, marks=NEEDS_BOTH_COMPILERS_AND_VALGRIND) for c, o in OPTIMIZED],
)
def test_roots_match_callgrind_with_their_library_path_never_run(tmp_path, compiler, level):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"roots_{compiler}{level}", "-lm")
    static, profiled, truth = static_profiled_and_measured(binary, SOURCE, ["n"], (N,), tmp_path)
    noted = False
    for name in FUNCTIONS:
        function = static.functions[name]
        assert function.counts is not None, (name, function.undef_reason)
        predicted = function.evaluate({"n": N})["total"]
        assert abs(predicted / truth[name] - 1) < 0.01, (name, predicted, truth[name])
        noted = noted or any("outside its domain" in note for note in function.notes)
        measured = profiled.functions[name].evaluate({"n": N})["total"]
        assert measured == truth[name], name
    assert noted
