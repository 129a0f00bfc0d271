"""Remainder iterations of an unrolled loop in straight-line code, against callgrind.

clang -O2 unrolls DGEMM's inner product (a floating-point reduction it may not vectorize) by 2
and finishes an odd n with one copy of the body after the machine loop, under a test of n's low
bit. That block runs ``n mod 2`` times per (i, j) pair, not once: counted once it put DGEMM's
main 1.3 % above callgrind at n = 120. Each case builds the real binary and compares with a
callgrind run at an even and an odd n.
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
from perfcast.static.control_flow import Block, Loop
from perfcast.static.epilogues import conditional_successors
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, run_callgrind  # noqa: E402

DGEMM = PROGRAMS_DIR / "dgemm.c"
CLANG = shutil.which("clang-16") or shutil.which("clang")

needs_tools = pytest.mark.skipif(
    shutil.which("valgrind") is None or CLANG is None, reason="valgrind and clang are needed"
)


def _build(tmp_path: Path, level: str) -> Path:
    binary = tmp_path / f"dgemm{level}"
    subprocess.run([CLANG, "-g", level, "-o", str(binary), str(DGEMM)], check=True)
    return binary


@needs_tools
@pytest.mark.parametrize("level", ["-O2", "-O3"])
def test_dgemm_remainder_block_counts_n_mod_2_per_entry(tmp_path, level):
    binary_path = _build(tmp_path, level)
    binary = read_binary(binary_path)
    mix = instruction_mix(binary, analyze([DGEMM], ["n"]), ["n"])
    main = mix.functions["main"]
    assert main.counts is not None, main.undef_reason
    assert any("remainder of source loop main:loop@22" in note for note in main.notes), main.notes
    for n in (40, 41):
        measured = measured_mix(binary, read_callgrind(run_callgrind(binary_path, (n,), tmp_path)))
        truth = measured["main"]["total"]
        predicted = main.evaluate({"n": n})["total"]
        assert abs(predicted / truth - 1) < 0.01, (n, predicted, truth)


@needs_tools
def test_the_remainder_is_what_separates_odd_from_even_n(tmp_path):
    """From n = 40 to 41 the prediction grows exactly as callgrind's count does, to within the
    two instructions per (i, j) pair of the path that skips the unrolled loop for n = 1."""
    binary_path = _build(tmp_path, "-O2")
    binary = read_binary(binary_path)
    main = instruction_mix(binary, analyze([DGEMM], ["n"]), ["n"]).functions["main"]
    assert main.counts is not None
    predicted = {n: main.evaluate({"n": n})["total"] for n in (40, 41)}
    measured = {
        n: measured_mix(binary, read_callgrind(run_callgrind(binary_path, (n,), tmp_path)))["main"][
            "total"
        ]
        for n in (40, 41)
    }
    growth = measured[41] - measured[40]
    assert abs((predicted[41] - predicted[40]) - growth) <= 0.01 * growth
    assert "floor" in str(main.counts["total"])


def _block(index: int, successors: list[int]) -> Block:
    return Block(index, [], successors, [])


def test_conditional_successors_are_the_blocks_a_path_from_the_exit_avoids():
    # 0: enclosing header -> 1: loop (self edge) -> 2: test -> 3: remainder -> 4: latch -> 0
    #                                                     \----------------->/
    blocks = [
        _block(0, [1]),
        _block(1, [1, 2]),
        _block(2, [3, 4]),
        _block(3, [4]),
        _block(4, [0, 5]),
        _block(5, []),
    ]
    for block in blocks:
        for successor in block.successors:
            blocks[successor].predecessors.append(block.index)
    inner = Loop(1, frozenset({1}), frozenset({1}), False)
    region = frozenset({0, 1, 2, 3, 4})
    assert conditional_successors(blocks, [inner], region, 0) == {3}
    # without the bypass from the test to the latch the block always runs: not conditional
    blocks[2].successors = [3]
    assert conditional_successors(blocks, [inner], region, 0) == set()
