"""Instruction-mix models (Mira) against valgrind-measured counts of the same binaries.

Builds the STREAM-like, DGEMM-like and CG test programs of ``tests/static/programs`` with
``gcc -g`` at several optimization levels, models their instruction mix per function and category
from the static kernel counts, runs each binary under ``valgrind --tool=callgrind --dump-instr=yes``
at three sizes, and prints the relative error per function and category as Markdown.

Usage: ``.venv/bin/python benchmarks/instruction_mix.py [--levels -O0 -O1 -O2]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "static"))

from mix_programs import PROGRAMS, build, report_for, run_callgrind  # noqa: E402

from perfcast.static.binary import read_binary  # noqa: E402
from perfcast.static.callgrind import measured_mix, read_callgrind  # noqa: E402
from perfcast.static.instruction_mix import COUNT_KEYS, instruction_mix  # noqa: E402

SIZES = {
    "stream": ((100_000, 4), (1_000_000, 4), (2_000_000, 4)),
    "dgemm": ((64,), (128,), (256,)),
    "cg": ((100, 20), (200, 20), (300, 30)),
}
TARGETS = {"stream": 0.01, "dgemm": 0.01, "cg": 0.05}


def relative_errors(predicted: dict, measured: dict) -> dict[str, float | None]:
    """|predicted / measured - 1| per key; 0 when both are 0, None when only measured is 0."""
    errors = {}
    for key in COUNT_KEYS:
        if measured[key]:
            errors[key] = abs(predicted[key] / measured[key] - 1)
        else:
            errors[key] = 0.0 if predicted[key] == 0 else None
    return errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", nargs="+", default=["-O0", "-O1", "-O2"])
    args = parser.parse_args()
    summary, detail = [], []
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        for program in PROGRAMS:
            for level in args.levels:
                path = build(program, directory, level)
                binary = read_binary(path)
                mixes = {
                    mode: instruction_mix(binary, report_for(program), program.parameters, mode)
                    for mode in ("cfg", "line")
                }
                worst = {mode: 0.0 for mode in mixes}
                worst_total = {mode: 0.0 for mode in mixes}
                undefined = {mode: [] for mode in mixes}
                for size in SIZES[program.name]:
                    profile = read_callgrind(run_callgrind(path, size, directory))
                    measured = measured_mix(binary, profile)
                    values = dict(zip(program.parameters, size, strict=True))
                    for mode, mix in mixes.items():
                        for name, function in mix.functions.items():
                            if function.counts is None:
                                undefined[mode].append(name)
                                continue
                            errors = relative_errors(function.evaluate(values), measured[name])
                            finite = [e for e in errors.values() if e is not None]
                            worst[mode] = (
                                float("inf")
                                if None in errors.values()
                                else max(worst[mode], *finite)
                            )
                            total = errors["total"]
                            worst_total[mode] = (
                                float("inf") if total is None else max(worst_total[mode], total)
                            )
                            if mode == "cfg" and level == "-O1":
                                detail.append((program.name, size, name, errors, measured[name]))
                for mode in mixes:
                    notes = sorted(set(undefined[mode]))
                    summary.append(
                        (program.name, level, mode, worst[mode], worst_total[mode])
                        + (TARGETS[program.name], notes)
                    )
    print_tables(summary, detail)


def _percent(value: float | None) -> str:
    if value is None or value == float("inf"):
        return "n/a (measured 0)"
    return f"{100 * value:.3f} %"


def print_tables(summary: list, detail: list) -> None:
    """Markdown: worst error per program/level/attribution, then -O1 detail per function."""
    print(
        "| program | gcc | attribution | worst error (any function, category, size) "
        "| worst error of the total | target |"
    )
    print("|---|---|---|---|---|---|")
    for name, level, mode, worst, total, target, undefined in summary:
        note = f"; undefined: {', '.join(undefined)}" if undefined else ""
        verdict = "missed" if worst > target else "met where defined" if undefined else "met"
        print(
            f"| {name} | {level} | {mode} | {_percent(worst)}{note} | {_percent(total)} | "
            f"{100 * target:.0f} % ({verdict}) |"
        )
    print()
    print("`-O1`, cfg attribution, error per category (measured total instructions in brackets):")
    print()
    keys = [k for k in COUNT_KEYS if k != "total"]
    print("| program | size | function | total | " + " | ".join(keys) + " |")
    print("|---|---|---|---|" + "---|" * len(keys))
    for name, size, function, errors, measured in detail:
        cells = " | ".join(_percent(errors[k]) if measured[k] else "0 = 0" for k in keys)
        print(
            f"| {name} | {','.join(map(str, size))} | {function} | "
            f"{_percent(errors['total'])} ({measured['total']:.3g}) | {cells} |"
        )


if __name__ == "__main__":
    main()
