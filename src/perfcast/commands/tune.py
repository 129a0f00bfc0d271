"""``perfcast tune``: autotune a C kernel over compiler flags and macros, with a tuning database."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from perfcast.api import InputError, json_text, load_tuning_space, tune_kernel

if TYPE_CHECKING:
    from perfcast.api import TuningResult


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast tune``."""
    parser = subparsers.add_parser(
        "tune",
        description=(
            "Search compiler flags and macro values (unroll factors, tile sizes) of a C kernel: "
            "compile and measure each configuration (instructions under valgrind, wall time), "
            "store the results in a tuning database keyed by the kernel's code-graph embedding. "
            "With --warm-start, the best configurations of the most similar tuned kernels are "
            "tried first, ranked by the similarity-weighted measurements of those kernels; "
            "--strategy model then continues from that ranking and this kernel's own results."
        ),
    )
    parser.add_argument("source", help="C program with main calling the kernel")
    parser.add_argument("--function", required=True, help="the kernel function")
    parser.add_argument("--space", required=True, help="search space TOML file")
    parser.add_argument("--budget", type=int, help="evaluations at most (default: 20, or all)")
    parser.add_argument("--strategy", choices=("exhaustive", "random", "model"), default="random")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random choices")
    parser.add_argument("--db", default="tuning.sqlite", help="tuning database (SQLite)")
    parser.add_argument(
        "--warm-start", action="store_true", help="try the similar kernels' best configs first"
    )
    parser.add_argument(
        "--neighbours", type=int, default=3, help="similar kernels for a warm start (default 3)"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Tune and print the result; exit status 1 when no configuration built and ran."""
    if args.budget is not None and args.budget < 1:
        raise InputError(f"--budget must be at least 1, not {args.budget}", reason="bad-budget")
    if args.neighbours < 1:
        raise InputError(f"--neighbours must be at least 1, not {args.neighbours}")
    space = load_tuning_space(args.space)
    result = tune_kernel(
        args.source,
        args.function,
        space,
        budget=args.budget,
        strategy=args.strategy,
        seed=args.seed,
        database=args.db,
        warm_start=args.warm_start,
        neighbours=args.neighbours,
    )
    if args.format == "json":
        print(json_text(result.to_dict()))
    else:
        print(render_text(result))
    return 0 if result.best is not None else 1  # no configuration built and ran: work failed


def render_text(result: TuningResult) -> str:
    """The search as lines of text: each evaluation, the best, the saving, the notes."""
    lines = [f"{result.file}:{result.function}  objective: {result.objective}"]
    for source_file, function, score in result.warm_sources:
        lines.append(f"  warm start from {source_file}:{function} (similarity {score:.3f})")
    for evaluation in result.evaluations:
        config = " ".join(f"{k}={v!r}" for k, v in evaluation.config.items())
        if evaluation.error:
            outcome = f"failed: {evaluation.error.splitlines()[0]}"
        else:
            seconds = f"{evaluation.seconds:.4f} s" if evaluation.seconds is not None else "-"
            instructions = evaluation.instructions if evaluation.instructions is not None else "-"
            outcome = f"instructions {instructions}  time {seconds}"
            if result.objective == "cycles" and evaluation.value is not None:
                outcome = f"cycles {evaluation.value:g}  {outcome}"
        lines.append(f"  {evaluation.step:3d} [{evaluation.origin}] {config}  {outcome}")
    if result.best is not None:
        config = " ".join(f"{k}={v!r}" for k, v in result.best.config.items())
        lines.append(f"best (step {result.best.step}): {config}  value {result.best.value:g}")
    if result.steps_to_within is not None:
        lines.append(
            f"within 5 % of the best known after {result.steps_to_within} of {result.budget} "
            f"evaluations (budget saved: {result.budget_saved:.0%})"
        )
    lines.extend(f"note: {note}" for note in result.notes)
    return "\n".join(lines)
