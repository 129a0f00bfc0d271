"""Should a flow-check failure at stand-in values make a function undefined? (issue 20, static32)

When the values a program runs with are not given (a size read at run time, no ``--param``
value, no profile), :mod:`perfcast.static.flow_check` checks a function's predicted block counts
at stand-in values (every unknown parameter at 7 and at 61), and a failure there is only a note.
This script measures what making it an error would do, on the third-party specs of
``benchmarks/third_party_mix.py`` (binaries and callgrind runs reused from each spec's ``dir``
when there, else built and run as that script does): each build's static mix is predicted with
no values given, each function's total is compared with callgrind at the run's values
(``right``: within 1 %, ``wrong``: more than 1 % off), and the functions whose notes hold the
stand-in failure are counted: right totals it would remove, wrong ones it would catch, wrong
ones it misses. Specs whose parameters are program arguments (``args``: the case the stand-in
values are for) are summed apart from those whose parameters are macros (``-D``: their values
are known to the CLI, which then checks at them).

Usage: ``PYTHONPATH=src:. nice -n 19 .venv/bin/python benchmarks/stand_in_flow.py SPEC.json
[SPEC.json ...]``
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from benchmarks.flow_check_mix import _binary_and_run, _classes
from perfcast.api import analyze_source
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind
from perfcast.static.instruction_mix import instruction_mix

STAND_IN_NOTE = "the values the program was built with were not given"
"""Start of the tail of the note a failure at stand-in values leaves."""


def check(spec: dict, totals: Counter) -> None:
    """Print one spec's functions whose stand-in check fails, and add the classes to
    ``totals``."""
    values = spec["params"]
    names = list(values)
    kind = "run-time" if spec.get("args") else "macro"
    report = analyze_source(spec["sources"], names, spec["flags"])
    for compiler in spec.get("compilers", ["gcc-12", "clang-16"]):
        for level in spec.get("levels", ["-O0", "-O1", "-O2", "-O3"]):
            binary_path, run_path = _binary_and_run(spec, compiler, level)
            binary = read_binary(binary_path)
            truth = measured_mix(binary, read_callgrind(run_path))
            mix = instruction_mix(binary, report, names, points=())
            for name, (which, measured, predicted) in _classes(mix, truth, values).items():
                noted = any(STAND_IN_NOTE in note for note in mix.functions[name].notes)
                totals[f"{kind}: {which}{', stand-in check fails' if noted else ''}"] += 1
                if noted or which == "wrong":
                    shown = f"{predicted:,.0f}" if predicted is not None else "undef"
                    print(
                        f"   {spec['name']} {compiler} {level} {name}: {which}, measured "
                        f"{measured:,}, predicted {shown}"
                        f"{', stand-in check fails' if noted else ''}",
                        flush=True,
                    )


def main() -> None:
    totals: Counter = Counter()
    for path in sys.argv[1:]:
        check(json.loads(Path(path).read_text()), totals)
    print("totals:")
    for key in sorted(totals):
        print(f"  {key}: {totals[key]}")


if __name__ == "__main__":
    main()
