"""``perfcast model``: fit a scaling model to every kernel and print the models."""

from __future__ import annotations

import argparse

from perfcast.commands.common import add_input_arguments, load_experiment, write_output
from perfcast.model import MODELERS, fit
from perfcast.report.tables import FORMATS, format_models


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast model``."""
    parser = subparsers.add_parser("model", help="fit scaling models to every kernel")
    add_input_arguments(parser)
    add_model_arguments(parser)
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format")
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    parser.set_defaults(run=run)


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Options selecting what to model and how (shared by model and predict)."""
    parser.add_argument("--modeler", choices=MODELERS, default="pmnf", help="default: pmnf")
    parser.add_argument("--metric", help="metric to model (default: the only one, or time)")
    parser.add_argument("--kernel", metavar="GLOB", help="only kernels matching this pattern")
    parser.add_argument(
        "--negative-exponents",
        choices=("auto", "yes", "no"),
        default="auto",
        help="decreasing terms such as 1/p (auto: where the data decreases)",
    )


def fit_from_args(args: argparse.Namespace):
    """Load the experiment named by ``args`` and fit its models."""
    experiment = load_experiment(args)
    if args.kernel:
        experiment = experiment.select(kernels=args.kernel)
    negative = {"auto": None, "yes": True, "no": False}[args.negative_exponents]
    return fit(experiment, modeler=args.modeler, metric=args.metric, negative_exponents=negative)


def run(args: argparse.Namespace) -> int:
    """Fit and print."""
    models = fit_from_args(args)
    write_output(format_models(models, args.format), args.out)
    return 0
