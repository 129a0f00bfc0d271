"""``perfcast optimize``: the configuration minimizing time or scaling divergence."""

from __future__ import annotations

import argparse

from perfcast.api import optimize, parse_point, render
from perfcast.commands._inputs import (
    add_analysis_arguments,
    add_output_arguments,
    load_experiment,
    obtain_models,
)
from perfcast.commands.common import write_output

HELP = "search the configuration (threads, ranks per node, flags, ...) minimizing an objective"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast optimize``."""
    parser = subparsers.add_parser("optimize", description=HELP)
    parser.add_argument("experiment", help="experiment file")
    add_analysis_arguments(parser)
    parser.add_argument("--models", help="models JSON (perfcast model --format json) to use")
    parser.add_argument("--objective", choices=("time", "divergence"), default="time")
    parser.add_argument("--fix", help="values of the other parameters, e.g. p=64")
    parser.add_argument(
        "--constraint",
        action="append",
        default=[],
        help="condition on parameters, e.g. 'p*threads<=64' (repeatable)",
    )
    parser.add_argument(
        "--config-params",
        help="comma-separated configuration parameters (default: role or name tells)",
    )
    parser.add_argument("--scale", help="the scale parameter (divergence objective)")
    parser.add_argument("--scaling", choices=("strong", "weak"), help="default: inferred")
    add_output_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the optimum and what matters as text or JSON."""
    experiment, metric = load_experiment(args.experiment, args)
    names = experiment.parameter_names
    forced = [n.strip() for n in (args.config_params or "").split(",") if n.strip()]
    fix = parse_point(args.fix, names, source="--fix") if args.fix else None
    result = optimize(
        experiment,
        obtain_models(experiment, metric, args, args.models),
        config_params=forced,
        objective=args.objective,
        fix=fix,
        constraints=args.constraint,
        scale=args.scale,
        mode=args.scaling,
        metric=metric,
    )
    write_output(render(result, args.format), args.out)
    return 0
