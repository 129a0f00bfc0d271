"""Modeling throughput of perfcast and Extra-P, measured in one run.

10,000 one-parameter and 2,000 two-parameter synthetic kernels (5 values per parameter, 5
repetitions, ±5 % uniform noise). Each tool models all kernels of a set in one call; the figure is
the wall time of that modeling alone (perfcast: ``perfcast.model.fit``; Extra-P:
``ModelGenerator.model_all`` inside its own environment, building its experiment not counted).

Run from the repository root: ``python -m benchmarks.speed [--quick] [--tools perfcast,extrap]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks import report, synthetic
from benchmarks.extrap_env import DEFAULT_VENV
from benchmarks.tools import Run, Runner, ToolUnavailable, extrap_runner, perfcast_runner

FULL_COUNTS = {1: 10_000, 2: 2_000}
QUICK_COUNTS = {1: 1_000, 2: 200}
NOISE = 0.05
TOOLS = ("perfcast", "extrap")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the kernels")
    parser.add_argument("--seed", type=int, default=1, help="seed of functions and noise")
    parser.add_argument("--tools", default="perfcast,extrap", help="comma-separated tools")
    parser.add_argument("--modeler", default="pmnf", help="perfcast modeler (default: pmnf)")
    parser.add_argument("--extrap-venv", type=Path, default=DEFAULT_VENV)
    args = parser.parse_args(argv)
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = sorted(set(args.tools) - set(TOOLS))
    if unknown:
        parser.error(f"unknown tool(s): {', '.join(unknown)}")
    return args


def kernel_set(n_parameters: int, count: int, seed: int) -> synthetic.KernelSet:
    """``count`` random functions of ``n_parameters`` parameters, measured at ±5 % noise."""
    rng = synthetic.function_rng(seed, 10 + n_parameters)
    functions = synthetic.draw_functions(rng, n_parameters, count)
    return synthetic.kernel_sets(functions, f"{n_parameters}-parameter", [NOISE], seed, 10)[0]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    counts = QUICK_COUNTS if args.quick else FULL_COUNTS
    runners: dict[str, Runner] = {}
    if "perfcast" in args.tools:
        runners["perfcast"] = perfcast_runner(args.modeler)
    if "extrap" in args.tools:
        runners["extrap"] = extrap_runner(args.extrap_venv)

    rows = []
    for n_parameters, count in counts.items():
        kernels = kernel_set(n_parameters, count, args.seed)
        runs: dict[str, Run] = {}
        for tool, run in runners.items():
            try:
                runs[tool] = run(kernels)
            except ToolUnavailable as error:
                print(f"error: {error}", file=sys.stderr)
                return 2
            print(f"done: {tool} on {count} {kernels.name} kernels", file=sys.stderr)
        row = [f"{n_parameters} parameter" + ("s" if n_parameters > 1 else ""), str(count)]
        for tool in TOOLS:
            if tool in runs:
                run = runs[tool]
                row += [f"{run.seconds:.2f}", f"{1e3 * run.seconds / count:.3f}"]
                row.append(f"{1e3 * run.cpu_seconds / count:.3f}")
            else:
                row += ["–", "–", "–"]
        if len(runs) == 2:
            row.append(f"{runs['extrap'].seconds / runs['perfcast'].seconds:.1f}x")
            row.append(f"{runs['extrap'].cpu_seconds / runs['perfcast'].cpu_seconds:.1f}x")
        else:
            row += ["–", "–"]
        rows.append(row)

    print("## Speed\n")
    print(report.preamble("benchmarks.speed", args.seed, argv) + "\n")
    print(
        f"Time of the modeling alone, ±{100 * NOISE:g} % noise, 5 repetitions. CPU time counts "
        "every thread of the modeling process; speed-up = Extra-P time / perfcast time.\n"
    )
    header = ["kernels", "count"]
    for label in ("perfcast", "Extra-P"):
        header += [f"{label} wall s", f"{label} wall ms/kernel", f"{label} CPU ms/kernel"]
    header += ["speed-up (wall)", "speed-up (CPU)"]
    print(report.table(header, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
