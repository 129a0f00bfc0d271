"""Which wrong instruction-mix totals say so? (issue 20: never a silent wrong count)

For the builds ``benchmarks/third_party_mix.py SPEC.json`` made (binaries and callgrind runs in
the spec's ``dir``; run it first), each function's static total, and its total with the run as
``--profile``, is put in one class against callgrind at the run's values: ``right`` (within
1 %; ``right, stand-in warning`` when a ``warning:`` of the flow check at stand-in values is
a false alarm), ``wrong, warning`` (more than 1 % off and a note starting ``warning:``),
``wrong, note only`` (notes, none a warning), ``wrong, silent`` (no note at all) or
``undefined``. The wrong ones are printed, then the class counts over every spec given.

Usage: ``PYTHONPATH=src:. nice -n 19 .venv/bin/python benchmarks/warned_mix.py SPEC.json...``
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from benchmarks.stand_in_flow import STAND_IN_NOTE
from perfcast.api import analyze_source, instruction_mix
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind


def classify(function, truth: int, values: dict) -> tuple[str, float | None]:
    """The class of one function's prediction and its predicted total (None: undefined)."""
    if function.counts is None:
        return "undefined", None
    predicted = float(function.evaluate(values)["total"])
    if truth and abs(predicted / truth - 1) <= 0.01 or not truth and not predicted:
        stand_in = any(
            note.startswith("warning:") and STAND_IN_NOTE in note for note in function.notes
        )
        return ("right, stand-in warning" if stand_in else "right"), predicted
    if any(note.startswith("warning:") for note in function.notes):
        return "wrong, warning", predicted
    return ("wrong, note only" if function.notes else "wrong, silent"), predicted


def check(spec: dict, totals: Counter) -> None:
    """Classify every function of every build of one spec, adding to ``totals``."""
    values = spec["params"]
    report = analyze_source(spec["sources"], list(values), spec["flags"])
    for compiler in spec.get("compilers", ["gcc-12", "clang-16"]):
        for level in spec.get("levels", ["-O0", "-O1", "-O2", "-O3"]):
            binary = Path(spec["dir"]) / f"{spec['name']}_{compiler}{level}"
            run = binary.with_name(f"callgrind.{binary.name}")
            if not binary.exists() or not run.exists():
                sys.exit(f"{binary} or {run} is missing: run benchmarks/third_party_mix.py first")
            measured = measured_mix(read_binary(binary), read_callgrind(run))
            mixes = {
                "static": instruction_mix(binary, report, list(values)),
                "profile": instruction_mix(binary, report, list(values), profiles=[(values, run)]),
            }
            for kind, mix in mixes.items():
                for name, function in mix.functions.items():
                    truth = measured.get(name, {}).get("total", 0)
                    which, predicted = classify(function, truth, values)
                    if which == "undefined" and not truth:
                        continue  # never ran, nothing predicted
                    totals[f"{kind}: {which}"] += 1
                    if which.startswith("wrong"):
                        print(
                            f"   {kind} {spec['name']} {compiler} {level} {name}: {which}, "
                            f"measured {truth:,}, predicted {predicted:,.0f}",
                            flush=True,
                        )


def main() -> None:
    totals: Counter = Counter()
    for path in sys.argv[1:]:
        check(json.loads(Path(path).read_text()), totals)
    for key in sorted(totals):
        print(f"{key}: {totals[key]}")


if __name__ == "__main__":
    main()
