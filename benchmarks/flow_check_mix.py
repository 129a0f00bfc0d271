"""What the flow-conservation check changes on third-party builds (issue 20, flow20).

For every build of a third-party spec (the JSON of ``benchmarks/third_party_mix.py``; its
binaries and callgrind runs are reused from the spec's ``dir`` when they are there, else built
and run as that script does), the instruction mix is predicted with and without the check
(:mod:`perfcast.static.flow_check`), statically and with the run as profile, and every
function's total is put in one of three classes against callgrind: ``right`` (defined, within
1 %), ``wrong`` (defined, more than 1 % off) or ``undefined``. Printed per build and summed:
how many wrong totals the check turns undefined or right (measured), how many right totals it
removes or makes wrong, whether callgrind's own block counts of every function that ran pass
the check (they must: a failure is a bug of the check or of the control-flow graph), and the
CPU time the whole prediction takes with and without it. A
right total the check removes is a false alarm when callgrind's own block counts of the
function fail the check too (a bug of the check or of the control-flow graph); otherwise the
prediction provably counts some block wrong (a total within 1 % of callgrind can still count
blocks that never ran) and the removal is printed as ``justified``.

Usage: ``PYTHONPATH=src nice -n 19 .venv/bin/python benchmarks/flow_check_mix.py SPEC.json
[SPEC.json ...]``
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

from benchmarks.third_party_mix import _build, _profile
from perfcast.api import analyze_source
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_loop_counts, measured_mix, read_callgrind
from perfcast.static.flow_check import flow_violation, outside_entries
from perfcast.static.instruction_mix import instruction_mix


def _classes(mix, truth: dict, values: dict) -> dict[str, tuple[str, int, float | None]]:
    """Function -> (class, measured total, predicted total) for functions that ran."""
    result = {}
    for name, function in mix.functions.items():
        measured = truth.get(name, {}).get("total", 0)
        if function.counts is None:
            if measured:
                result[name] = ("undefined", measured, None)
            continue
        predicted = function.evaluate(values)["total"]
        if not measured and not predicted:
            continue
        right = measured and abs(predicted / measured - 1) <= 0.01
        result[name] = ("right" if right else "wrong", measured, predicted)
    return result


def _truth_fails(binary, measured: dict, name: str) -> bool:
    """Whether callgrind's own block counts of the function fail the check (a bug of the
    check or of the control-flow graph: then a removal is a false alarm)."""
    counts = {
        address: float(value)
        for (kind, function, address), value in measured.items()
        if kind == "block" and function == name
    }
    entries = outside_entries(binary).get(name, ())
    return flow_violation(binary.functions[name], counts, entries=entries) is not None


def _binary_and_run(spec: dict, compiler: str, level: str) -> tuple[Path, Path]:
    binary = Path(spec["dir"]) / f"{spec['name']}_{compiler}{level}"
    run = binary.with_name(f"callgrind.{binary.name}")
    if binary.exists() and run.exists():
        return binary, run
    Path(spec["dir"]).mkdir(parents=True, exist_ok=True)
    binary = _build(spec, compiler, level)
    return binary, _profile(binary, spec["args"])


def check(spec: dict, totals: Counter) -> None:
    """Print the changes of one spec's builds and add them to ``totals``."""
    values = spec["params"]
    names = list(values)
    report = analyze_source(spec["sources"], names, spec["flags"])
    for compiler in spec.get("compilers", ["gcc-12", "clang-16"]):
        for level in spec.get("levels", ["-O0", "-O1", "-O2", "-O3"]):
            binary_path, run_path = _binary_and_run(spec, compiler, level)
            binary = read_binary(binary_path)
            profile = read_callgrind(run_path)
            truth = measured_mix(binary, profile)
            measured = dict(measured_loop_counts(binary, profile))
            for name in binary.functions:
                ran = measured.get(("entry", name, binary.functions[name].low), 0)
                totals["truth: functions that ran, checked"] += bool(ran)
                if ran and _truth_fails(binary, measured, name):
                    totals["truth: FALSE ALARMS (callgrind's own counts fail)"] += 1
                    print(f"   FALSE ALARM on callgrind's own counts: {name}")
            for how, given in (("static", None), ("profile", measured)):
                mixes, seconds = {}, {}
                for checked in (False, True):
                    start = time.process_time()
                    mixes[checked] = instruction_mix(
                        binary,
                        report,
                        names,
                        measured=given,
                        points=[values],
                        check_flow=checked,
                    )
                    seconds[checked] = time.process_time() - start
                before = _classes(mixes[False], truth, values)
                after = _classes(mixes[True], truth, values)
                totals[f"{how} seconds without"] += seconds[False]
                totals[f"{how} seconds with"] += seconds[True]
                for name, (old, measured_total, old_value) in before.items():
                    new, _, new_value = after.get(name, ("undefined", measured_total, None))
                    reason = mixes[True].functions[name].undef_reason or ""
                    if old == "right" and new == "undefined":
                        verdict = (
                            "FALSE ALARM" if _truth_fails(binary, measured, name) else "justified"
                        )
                        new = f"undefined ({verdict})"
                    totals[f"{how} {old} -> {new}"] += 1
                    if old == new == "wrong":
                        print(
                            f"   {how} {name}: still wrong (measured {measured_total:,}, "
                            f"predicted {new_value:,.0f})"
                        )
                    if old != new:
                        shown = f"{old_value:,.0f}" if old_value is not None else "undef"
                        now = f"{new_value:,.0f}" if new_value is not None else "undef"
                        print(
                            f"   {how} {name}: {old} -> {new} (measured {measured_total:,}, "
                            f"{shown} -> {now}) {reason[:300]}"
                        )
                print(
                    f"== {spec['name']} {compiler} {level} {how}: "
                    + ", ".join(
                        f"{old}->{after.get(name, ('undefined',))[0]}"
                        for name, (old, _, _) in sorted(before.items())
                        if old != "undefined"
                    )
                    + f"; {seconds[False]:.2f} s -> {seconds[True]:.2f} s CPU",
                    flush=True,
                )


def main() -> None:
    totals: Counter = Counter()
    for path in sys.argv[1:]:
        check(json.loads(Path(path).read_text()), totals)
    print("totals:")
    for key in sorted(totals):
        value = totals[key]
        print(f"  {key}: {value:.2f}" if isinstance(value, float) else f"  {key}: {value}")


if __name__ == "__main__":
    main()
