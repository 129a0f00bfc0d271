"""``perfcast advise``: which configurations to measure next so that the prediction at a target
configuration narrows most per unit of measurement cost."""

from __future__ import annotations

import argparse

from perfcast.api import InputError, advise, render
from perfcast.commands._inputs import (
    add_analysis_arguments,
    add_output_arguments,
    load_experiment,
    obtain_models,
)
from perfcast.commands.common import write_output

HELP = (
    "suggest the configurations to measure next that narrow the prediction at a target most "
    "per cost"
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast advise``."""
    parser = subparsers.add_parser("advise", description=HELP)
    parser.add_argument("experiment", help="experiment file")
    parser.add_argument(
        "--at", required=True, metavar="p=4096,n=1e6", help="the target configuration"
    )
    parser.add_argument(
        "--budget",
        metavar="RUNS|CORE_HOURS",
        help="runs (20, 20runs) or core-hours (1.5h, 1.5core-hours); default: five points",
    )
    parser.add_argument(
        "--candidates",
        metavar="p=2..4096*2,n=1e6,2e6",
        help="values per parameter (ranges as in campaign files, or numbers separated by "
        "commas); default: the measured values and doublings up to the target",
    )
    parser.add_argument(
        "--repetitions", type=int, help="runs per point (default: as most points were measured)"
    )
    parser.add_argument(
        "--goal",
        type=float,
        metavar="WIDTH",
        help="stop once the interval at the target is within this relative half-width "
        "(0.1: ±10 %%)",
    )
    parser.add_argument("--level", type=float, default=0.95, help="probability of the intervals")
    parser.add_argument(
        "--price",
        choices=("prediction", "upper", "upper-first", "probe-first"),
        default="prediction",
        help="what a point costs against a budget in core-hours: its predicted time (default), "
        "the upper end of that prediction's interval (stays within the budget in truth "
        "with about the intervals' probability, spends less), the upper end for the first "
        "point only (to run it now and ask again with what it left), or for the first point "
        "the upper end of one run plus the predicted others (to run it once, then price its "
        "other runs by what that run took)",
    )
    add_analysis_arguments(parser)
    parser.add_argument("--models", help="models JSON (perfcast model --format json) to use")
    add_output_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the suggestions as text or JSON."""
    experiment, metric = load_experiment(args.experiment, args)
    for name, value in (("--repetitions", args.repetitions), ("--goal", args.goal)):
        if value is not None and not value > 0:
            raise InputError(f"{name} must be positive, not {value:g}")
    if not 0 < args.level < 1:
        raise InputError(f"--level must lie between 0 and 1, not {args.level:g}")
    result = advise(
        experiment,
        obtain_models(experiment, metric, args, args.models),
        at=args.at,
        candidates=args.candidates,
        budget=args.budget,
        repetitions=args.repetitions,
        goal=args.goal,
        level=args.level,
        metric=metric,
        price=args.price,
    )
    write_output(render(result, args.format), args.out)
    return 0
