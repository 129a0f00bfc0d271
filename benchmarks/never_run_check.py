"""Code the instruction mix counts as never run, against callgrind (issue 20, static29).

Two rules count code 0 without a profile: a function nothing in the binary reaches
(:mod:`perfcast.static.references`) and the library call behind an inline ``sqrt``
(:mod:`perfcast.static.math_fallbacks`). For every executable in the given directories that
has a callgrind run next to it (``callgrind.NAME`` or ``callgrind.*.NAME`` beside ``NAME``, as
``third_party_mix.py`` leaves them, run with ``--dump-instr=yes``), this lists each such
function and block that ran in that run; a rule is wrong where one did (a fallback block may
also run because the program passed an argument outside the domain).

Usage: ``PYTHONPATH=src nice -n 19 .venv/bin/python benchmarks/never_run_check.py DIR...``
"""

from __future__ import annotations

import sys
from pathlib import Path

from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_loop_counts, measured_mix, read_callgrind
from perfcast.static.control_flow import basic_blocks
from perfcast.static.math_fallbacks import math_fallbacks


def _pairs(directories: list[str]) -> list[tuple[Path, Path]]:
    """(executable, callgrind file) for every callgrind run beside its executable."""
    found = []
    for directory in directories:
        for run in sorted(Path(directory).glob("callgrind.*")):
            binary = run.parent / run.name.split(".")[-1]
            if binary.is_file():
                found.append((binary, run))
    return found


def main(directories: list[str]) -> int:
    """Print what ran although counted never to run; the totals last."""
    pairs = _pairs(directories)
    unreached = ran = fallbacks = fallbacks_ran = 0
    for binary_path, run in pairs:
        binary = read_binary(binary_path)
        profile = read_callgrind(run)
        totals = measured_mix(binary, profile)
        blocks = measured_loop_counts(binary, profile)
        inlined = {
            frame.callee
            for function in binary.functions.values()
            for insn in function.instructions
            for frame in insn.inlined
        }
        for name, function in binary.functions.items():
            referenced = binary.referenced or frozenset()
            if name != "main" and name not in inlined and function.low not in referenced:
                unreached += 1
                total = totals.get(name, {}).get("total", 0)
                if total:
                    ran += 1
                    print(f"{run}: {name} is reached by nothing, yet ran {total} instructions")
            cfg = basic_blocks(function)
            for index, math in math_fallbacks(cfg, binary.callees).items():
                fallbacks += 1
                count = blocks.get(("block", name, cfg[index].start), 0)
                if count:
                    fallbacks_ran += 1
                    print(f"{run}: {name}'s {math} fallback at {cfg[index].start:#x} ran {count}")
    print(
        f"{len(pairs)} callgrind runs; {unreached} functions nothing reaches, {ran} of them ran; "
        f"{fallbacks} sqrt fallback blocks, {fallbacks_ran} of them ran"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
