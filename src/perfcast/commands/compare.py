"""``perfcast compare``: what got slower or faster between two experiments, and from where."""

from __future__ import annotations

import argparse

from perfcast.api import compare, parse_point, render
from perfcast.commands._inputs import (
    add_analysis_arguments,
    add_output_arguments,
    load_experiment,
    obtain_models,
)
from perfcast.commands.common import write_output

HELP = "compare two experiments: significant regressions (with p-values) and model differences"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast compare``."""
    parser = subparsers.add_parser("compare", description=HELP)
    parser.add_argument("a", help="baseline experiment file")
    parser.add_argument("b", help="experiment compared against the baseline")
    add_analysis_arguments(parser)
    parser.add_argument("--models-a", help="models JSON of A instead of fitting")
    parser.add_argument("--models-b", help="models JSON of B instead of fitting")
    parser.add_argument(
        "--no-models", action="store_true", help="statistics only, no model comparison"
    )
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="family-wise error rate (default 0.05)"
    )
    parser.add_argument(
        "--min-effect",
        type=float,
        default=0.05,
        help="smallest relative change reported (default 0.05 = 5 %%)",
    )
    parser.add_argument("--at", help="end of the path on which model crossings are searched")
    add_output_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the comparison as text or JSON."""
    a, metric = load_experiment(args.a, args)
    args.metric = metric
    b, _ = load_experiment(args.b, args)
    models = None
    if not args.no_models:
        models = (
            obtain_models(a, metric, args, args.models_a),
            obtain_models(b, metric, args, args.models_b),
        )
    target = parse_point(args.at, a.parameter_names, source="--at") if args.at else None
    if target is not None:
        ends = {
            n: float(max(a.points()[:, i].max(), b.points()[:, i].max()))
            for i, n in enumerate(a.parameter_names)
        }
        target = {**ends, **target}
    result = compare(
        a,
        b,
        metric=metric,
        models=models,
        with_models=not args.no_models,
        alpha=args.alpha,
        min_effect=args.min_effect,
        target=target,
    )
    write_output(render(result, args.format), args.out)
    return 0
