"""Every function's static total on stored third-party builds, classed against callgrind
(issue 20, static34): one line per function that ran, to compare two versions of the code
(run once with each on the path, then ``diff`` the outputs).

For every build of each spec (the JSON of ``benchmarks/third_party_mix.py``; binaries and
callgrind runs are reused from the spec's ``dir`` when they are there, else built and run as
that script does) the static instruction mix (no profile) is predicted at the spec's parameter
values and each function's total is classed ``right`` (within 1 % of callgrind), ``wrong`` or
``undefined``. A line also says which of static34's notes the function carries: ``tied`` (code
moved out of a loop counted with its guard's probability), ``moved`` (the warning for moved code
no guard ties to) — so a change between versions can be traced to its rule (error paths are
diagnostics of the source report, not notes of a function's mix). The last lines sum the classes.

Usage: ``PYTHONPATH=src:. nice -n 19 .venv/bin/python benchmarks/static_totals.py SPEC.json
[SPEC.json ...] > OUT``
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

#: note fragments -> the tag a line shows
TAGS = {
    "counted with that guard's probability": "tied",
    "have no source line (code the compiler moved": "moved",
}


def _tags(function) -> str:  # noqa: ANN001 - a FunctionMix
    text = " ".join(function.notes) + " " + (function.undef_reason or "")
    found = [tag for fragment, tag in TAGS.items() if fragment in text]
    return ",".join(found) or "-"


def totals_of(spec: dict, totals: Counter) -> None:
    """Print one line per function that ran in each build of ``spec``; add to ``totals``."""
    values = spec["params"]
    names = list(values)
    try:
        report = analyze_source(spec["sources"], names, spec["flags"])
    except Exception as error:  # noqa: BLE001 - a spec the analysis refuses is reported
        print(f"{spec['name']}: analysis failed: {error}", flush=True)
        return
    for compiler in spec.get("compilers", ["gcc-12", "clang-16"]):
        for level in spec.get("levels", ["-O0", "-O1", "-O2", "-O3"]):
            binary_path, run_path = _binary_and_run(spec, compiler, level)
            binary = read_binary(binary_path)
            truth = measured_mix(binary, read_callgrind(run_path))
            mix = instruction_mix(binary, report, names, points=[values])
            for name, (kind, measured, predicted) in sorted(_classes(mix, truth, values).items()):
                totals[kind] += 1
                shown = "undef" if predicted is None else f"{predicted:.0f}"
                reason = (mix.functions[name].undef_reason or "")[:160]
                print(
                    f"{spec['name']} {compiler}{level} {name}: {kind} measured {measured} "
                    f"predicted {shown} [{_tags(mix.functions[name])}] {reason}",
                    flush=True,
                )


def main() -> None:
    totals: Counter = Counter()
    for path in sys.argv[1:]:
        totals_of(json.loads(Path(path).read_text()), totals)
    print("totals: " + ", ".join(f"{key} {totals[key]}" for key in sorted(totals)))


if __name__ == "__main__":
    main()
