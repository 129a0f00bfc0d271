"""Instruction-mix predictions against callgrind on third-party C (issue 20, verify20).

The sources are not part of the repository (their licenses, and the rule that tests and
benchmarks use no outside paths): point a JSON spec at them. For every compiler and level the
program is built with ``-g`` (clang also ``-gdwarf-4``, which valgrind 3.19 reads), run once
under ``valgrind --tool=callgrind --dump-instr=yes --skip-plt=no`` (under ``nice -n 19``; with
callgrind's default ``--skip-plt=yes`` the jump of a PLT stub is charged to the caller's call
instruction, +1 per call of a shared-library function, as the tests of ``tests/static`` also
avoid), predicted with
``perfcast static SRC --binary BIN --format json`` (its exit status and standard error are
printed as a user sees them) and with ``perfcast.api.instruction_mix``, without and with that
run as ``--profile``. Printed per build: functions compared, within 1 %, outside (measured ->
predicted), undefined with the reason, coverage (share of the binary's own measured
instructions in functions with a defined prediction), and the same with the profile. A JSON
file of the rows is written next to the spec.

Spec (JSON): ``{"name", "sources": [analysed C files], "flags": [compile and analysis flags],
"params": {name: value at the run}, "args": [program arguments], "dir": build directory,
"libs": [further files or libraries to link, not analysed], "compilers": [...], "levels":
[...]}``.

Usage: ``PYTHONPATH=src nice -n 19 .venv/bin/python benchmarks/third_party_mix.py SPEC.json``
(``--reuse``: keep the binaries and callgrind files an earlier run left in the build directory,
so two versions of perfcast are compared on the same builds and runs; ``--out SUFFIX`` writes
the rows to ``SPEC.SUFFIX.rows.json``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from perfcast.api import analyze_source, instruction_mix
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

ROOT = Path(__file__).resolve().parents[1]


def _build(spec: dict, compiler: str, level: str, reuse: bool = False) -> Path:
    binary = Path(spec["dir"]) / f"{spec['name']}_{compiler}{level}"
    if reuse and binary.exists():
        return binary
    debug = ["-gdwarf-4"] if "clang" in compiler else []
    sources = [*spec["sources"], *spec.get("libs", [])]
    subprocess.run(
        [compiler, "-g", *debug, level, *spec["flags"], "-o", str(binary), *sources], check=True
    )
    return binary


def _profile(binary: Path, arguments: list, reuse: bool = False) -> Path:
    out = binary.with_name(f"callgrind.{binary.name}")
    if reuse and out.exists():
        return out
    subprocess.run(
        ["nice", "-n", "19", "valgrind", "--tool=callgrind", "--dump-instr=yes", "--skip-plt=no"]
        + [f"--callgrind-out-file={out}", str(binary), *map(str, arguments)],
        check=True,
        capture_output=True,
        cwd=binary.parent,
    )
    return out


def _command(spec: dict, binary: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "perfcast.cli", "static", *spec["sources"]]
    for name in spec["params"]:
        command += ["--param", name]
    command += ["--binary", str(binary), "--format", "json", "--no-cache", "--", *spec["flags"]]
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(command, capture_output=True, text=True, env=environment)


def _compare(mix, measured: dict, values: dict) -> tuple[list, list, float]:
    """(functions within 1 % or outside, as (name, measured, predicted)), undefined functions
    that ran, coverage."""
    own = sum(counts["total"] for counts in measured.values()) or 1
    compared, undefined, defined = [], [], 0
    for name, function in mix.functions.items():
        truth = measured.get(name, {}).get("total", 0)
        if function.counts is None:
            if truth:
                undefined.append((name, truth, function.undef_reason))
            continue
        defined += truth
        predicted = function.evaluate(values)["total"]
        if truth or predicted:
            compared.append((name, truth, predicted))
    return compared, undefined, defined / own


def _outside(compared: list) -> list:
    return [c for c in compared if not c[1] or abs(c[2] / c[1] - 1) > 0.01]


def check(spec: dict, reuse: bool = False) -> list[dict]:
    """One row per build (see the module documentation); ``reuse`` keeps existing builds and
    runs."""
    Path(spec["dir"]).mkdir(parents=True, exist_ok=True)
    values = spec["params"]
    report = analyze_source(spec["sources"], list(values), spec["flags"])
    rows = []
    for compiler in spec.get("compilers", ["gcc-12", "clang-16"]):
        for level in spec.get("levels", ["-O0", "-O1", "-O2", "-O3"]):
            binary = _build(spec, compiler, level, reuse)
            run = _profile(binary, spec["args"], reuse)
            cli = _command(spec, binary)
            measured = measured_mix(read_binary(binary), read_callgrind(run))
            static = _compare(instruction_mix(binary, report, list(values)), measured, values)
            profiled = instruction_mix(binary, report, list(values), profiles=[(values, run)])
            with_profile = _compare(profiled, measured, values)
            rows.append(
                {
                    "build": f"{compiler} {level}",
                    "compared": len(static[0]),
                    "within": len(static[0]) - len(_outside(static[0])),
                    "outside": _outside(static[0]),
                    "undefined": static[1],
                    "coverage": static[2],
                    "coverage_profile": with_profile[2],
                    "outside_profile": _outside(with_profile[0]),
                    "exit_status": cli.returncode,
                    "stderr": cli.stderr,
                }
            )
            row = rows[-1]
            print(
                f"== {spec['name']} {row['build']}: compared {row['compared']}, within 1 % "
                f"{row['within']}, coverage {100 * row['coverage']:.1f} %, with --profile "
                f"{100 * row['coverage_profile']:.1f} %, exit status {cli.returncode}"
            )
            for name, truth, predicted in row["outside"]:
                print(f"   outside: {name} measured {truth:,} predicted {predicted:,.0f}")
            for name, truth, reason in row["undefined"]:
                print(f"   undefined: {name} ({truth:,} instructions run): {reason}")
            for name, truth, predicted in row["outside_profile"]:
                print(f"   outside with --profile: {name} {truth:,} -> {predicted:,.0f}")
            if cli.stderr.strip():
                print("   stderr: " + cli.stderr.strip().replace("\n", "\n           "))
    return rows


def main() -> None:
    arguments = sys.argv[1:]
    path = Path(arguments[0])
    suffix = arguments[arguments.index("--out") + 1] + ".rows.json" if "--out" in arguments else ""
    rows = check(json.loads(path.read_text()), reuse="--reuse" in arguments)
    path.with_suffix(f".{suffix}" if suffix else ".rows.json").write_text(
        json.dumps(rows, indent=1)
    )


if __name__ == "__main__":
    main()
