"""Accuracy of perfcast and Extra-P on synthetic functions with known terms, from one run.

Groups: 1, 2 and 3 parameters (Extra-P's 42 building blocks, 5 values per parameter, 5
repetitions) at noise 0, 1, 5, 10 and 20 %, plus strong-scaling functions
``c0 + c1*p^(-a) + c2*g(p)`` and ``c0 + c1*f(n)*p^(-a) + c2*g(p)``. For every group and tool:
share with the right lead order for every parameter, share with the exact term structure, and
the median and 90th-percentile relative error at 4x the largest measured value of every
parameter. Extra-P runs with its defaults; on the strong-scaling groups also with negative
exponents allowed (the fair setting there), and under non-uniform noise (``--noise-shape``) also
on the medians of the repetitions.

Run from the repository root: ``python -m benchmarks.accuracy [--quick] [--tools perfcast,extrap]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks import report, synthetic
from benchmarks.evaluation import Score, score
from benchmarks.extrap_env import DEFAULT_VENV
from benchmarks.tools import Runner, ToolUnavailable, extrap_runner, perfcast_runner, run_oracle

FULL_SIZES = {1: 10, 2: 400, 3: 150, "strong": 10, "strong2": 10}
QUICK_SIZES = {1: 1, 2: 40, 3: 15, "strong": 1, "strong2": 1}
STRONG_GROUPS = {"strong": "strong scaling", "strong2": "strong scaling, 2 parameters"}
#: Random streams of the groups (functions and noise).
STREAMS = {1: 1, 2: 2, 3: 3, "strong": 4, "strong2": 5}
TOOLS = ("perfcast", "extrap", "oracle")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sets (about 1-2 minutes)")
    parser.add_argument("--seed", type=int, default=1, help="seed of functions and noise")
    parser.add_argument(
        "--tools",
        default="perfcast,extrap",
        help=f"comma-separated tools out of {', '.join(TOOLS)} (default: perfcast,extrap)",
    )
    parser.add_argument(
        "--parameters",
        default="1,2,3,strong,strong2",
        help="groups to run: 1, 2, 3 (parameters), strong and strong2 (strong scaling in p, "
        "alone or with the work n; default: all)",
    )
    parser.add_argument(
        "--noise",
        default=",".join(str(e) for e in synthetic.NOISE_LEVELS),
        help="comma-separated noise half-widths (default: 0,0.01,0.05,0.1,0.2)",
    )
    parser.add_argument(
        "--noise-shape",
        choices=synthetic.NOISE_SHAPES,
        default="uniform",
        help="distribution of the relative noise (default: uniform; see benchmarks/synthetic.py)",
    )
    parser.add_argument(
        "--anchor",
        choices=sorted(synthetic.ANCHORS),
        default="largest",
        help="measured point where every component has at least 5 %% (default: largest)",
    )
    parser.add_argument(
        "--coefficients",
        choices=synthetic.COEFFICIENT_DRAWS,
        default="independent",
        help="how term coefficients are drawn (default: independent; see benchmarks/README.md)",
    )
    parser.add_argument("--modeler", default="pmnf", help="perfcast modeler (default: pmnf)")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra keyword for perfcast.model.fit (repeatable; value parsed as Python literal)",
    )
    parser.add_argument("--extrap-venv", type=Path, default=DEFAULT_VENV)
    args = parser.parse_args(argv)
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = sorted(set(args.tools) - set(TOOLS))
    if unknown:
        parser.error(f"unknown tool(s): {', '.join(unknown)}")
    groups = [g.strip() for g in args.parameters.split(",") if g.strip()]
    if not groups or set(groups) - {"1", "2", "3", *STRONG_GROUPS}:
        parser.error(f"--parameters takes 1, 2, 3, strong and strong2, not {args.parameters!r}")
    args.groups = [g if g in STRONG_GROUPS else int(g) for g in groups]
    try:
        args.noise = [float(e) for e in args.noise.split(",")]
    except ValueError:
        parser.error(f"--noise takes comma-separated numbers, not {args.noise!r}")
    if not args.noise or not all(0 <= e < 1 for e in args.noise):
        parser.error("--noise levels must lie in [0, 1)")
    return args


def parse_options(pairs: Sequence[str]) -> dict[str, object]:
    """``["cv=True", "penalty=2"]`` as keyword arguments (values read as Python literals)."""
    import ast

    options: dict[str, object] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        try:
            options[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            options[key] = value
    return options


def runners(args: argparse.Namespace, strong: bool) -> dict[str, Runner]:
    """The runners of the selected tools; Extra-P twice on the strong-scaling groups."""
    selected: dict[str, Runner] = {}
    for tool in args.tools:
        if tool == "perfcast":
            selected["perfcast"] = perfcast_runner(args.modeler, parse_options(args.option))
        elif tool == "extrap":
            selected["extrap"] = extrap_runner(args.extrap_venv)
            if strong:
                selected["extrap-neg"] = extrap_runner(args.extrap_venv, negative_exponents=True)
            if args.noise_shape != "uniform":
                selected["extrap-median"] = extrap_runner(args.extrap_venv, median=True)
        else:
            selected["oracle"] = run_oracle
    return selected


def kernel_sets(group: int | str, args: argparse.Namespace) -> list[synthetic.KernelSet]:
    """The group's functions, measured at every noise level."""
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    stream = STREAMS[group]
    rng = synthetic.function_rng(args.seed, stream)
    if group in STRONG_GROUPS:
        functions = synthetic.draw_strong_scaling(
            rng, sizes[group], args.anchor, args.coefficients, work=group == "strong2"
        )
        name = STRONG_GROUPS[group]
    else:
        count = sizes[group] * len(synthetic.BUILDING_BLOCKS) if group == 1 else sizes[group]
        functions = synthetic.draw_functions(rng, group, count, args.anchor, args.coefficients)
        name = f"{group} parameter" + ("s" if group != 1 else "")
    return synthetic.kernel_sets(functions, name, args.noise, args.seed, stream, args.noise_shape)


def score_table(
    results: list[tuple[synthetic.KernelSet, dict[str, Score]]], tools: list[str]
) -> str:
    """One row per kernel set, the tools side by side for each figure."""
    labels = [report.TOOL_LABELS[t] for t in tools]
    header = ["group", "noise", "kernels"]
    for figure in ("lead order", "structure", "median error", "p90 error"):
        header += [f"{figure}: {label}" for label in labels]
    rows = []
    for kernel_set, scores in results:
        row = [kernel_set.name, f"±{100 * kernel_set.noise:g} %", str(len(kernel_set.truths))]
        row += [report.percent(scores[t].lead_order) for t in tools]
        row += [report.percent(scores[t].structure) for t in tools]
        row += [report.error(scores[t].median_error) for t in tools]
        row += [report.error(scores[t].p90_error) for t in tools]
        rows.append(row)
    return report.table(header, rows)


@dataclass
class Timing:
    """Modeling time one tool spent on one group, summed over its noise levels."""

    kernels: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0


def run_group(
    group: int | str, args: argparse.Namespace, timings: dict[tuple[str, str], Timing]
) -> str:
    """Fit and score every noise level of a group with every tool; return its markdown table.

    Raises
    ------
    ToolUnavailable
        When a selected tool cannot run.
    """
    tool_runners = runners(args, strong=group in STRONG_GROUPS)
    results = []
    for kernel_set in kernel_sets(group, args):
        scores = {}
        for tool, run in tool_runners.items():
            outcome = run(kernel_set)
            timing = timings.setdefault((kernel_set.name, tool), Timing())
            timing.kernels += len(kernel_set.truths)
            timing.seconds += outcome.seconds
            timing.cpu_seconds += outcome.cpu_seconds
            point = synthetic.extrapolation_point(kernel_set.parameters)
            scores[tool] = score(kernel_set.truths, outcome.fits, point)
            if scores[tool].missing:
                print(
                    f"warning: {tool} gave no model for {scores[tool].missing} kernels",
                    file=sys.stderr,
                )
        results.append((kernel_set, scores))
        print(f"done: {kernel_set.name} at ±{100 * kernel_set.noise:g} %", file=sys.stderr)
    return score_table(results, list(tool_runners))


def timing_table(timings: dict[tuple[str, str], Timing]) -> str:
    """Modeling time per group and tool."""
    rows = [
        [
            group,
            report.TOOL_LABELS[tool],
            str(t.kernels),
            f"{t.seconds:.2f}",
            f"{1e3 * t.seconds / t.kernels:.2f}",
            f"{1e3 * t.cpu_seconds / t.kernels:.2f}",
        ]
        for (group, tool), t in timings.items()
    ]
    header = ["group", "tool", "kernels", "wall s", "wall ms per kernel", "CPU ms per kernel"]
    return report.table(header, rows)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    timings: dict[tuple[str, str], Timing] = {}
    started = time.perf_counter()
    try:
        tables = [run_group(group, args, timings) for group in args.groups]
    except ToolUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("## Accuracy\n")
    print(report.preamble("benchmarks.accuracy", args.seed, argv) + "\n")
    print(
        "Lead order: share of kernels whose lead-order term is right for every parameter. "
        "Structure: share with exactly the true terms. Errors: relative error of the prediction "
        "at 4x the largest measured value of every parameter.\n"
    )
    print("\n\n".join(tables) + "\n")
    print("Modeling time (summed over the noise levels):\n")
    print(timing_table(timings))
    print(f"\nTotal wall time {time.perf_counter() - started:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
