"""``perfcast model``: fit a scaling model to every kernel and print the models."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from perfcast.commands.common import add_input_arguments, load_experiment, write_output
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model
from perfcast.model import MODELERS, make_modeler
from perfcast.model.fitting.location import DESCRIPTIONS, GAUSSIAN, LOCATIONS, Location
from perfcast.report.tables import FORMATS, format_models

if TYPE_CHECKING:
    from perfcast.model.hybrid import HybridModeler

#: ``--metric`` value that models every metric of the experiment (``perfcast model`` only).
ALL_METRICS = "all"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast model``."""
    parser = subparsers.add_parser("model", help="fit scaling models to every kernel")
    add_input_arguments(parser)
    add_model_arguments(parser, all_metrics=True)
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format")
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    parser.set_defaults(run=run)


def add_model_arguments(parser: argparse.ArgumentParser, all_metrics: bool = False) -> None:
    """Options selecting what to model and how (shared by model, predict and the analyses).

    ``all_metrics`` offers ``--metric all`` (every metric of the experiment, each on its own).
    """
    parser.add_argument("--modeler", choices=MODELERS, default="pmnf", help="default: pmnf")
    metric_help = "metric to model (default: the only one, or time)"
    if all_metrics:
        metric_help += f"; '{ALL_METRICS}' models every metric"
    parser.add_argument("--metric", help=metric_help)
    parser.add_argument("--kernel", metavar="GLOB", help="only kernels matching this pattern")
    parser.add_argument(
        "--static",
        action="append",
        metavar="SRC.c",
        help="hybrid modeling: take candidate terms from a static analysis of these C sources",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME[=SOURCE]",
        help="with --static: an experiment parameter and the source variable it stands for",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SOURCE=VALUE",
        help="with --static: a source variable with the same value in every run (repeatable)",
    )
    parser.add_argument(
        "--static-flags", default="", metavar="FLAGS", help="with --static: flags for clang"
    )
    parser.add_argument(
        "--negative-exponents",
        choices=("auto", "yes", "no"),
        default="auto",
        help="decreasing terms such as 1/p (auto: where the data decreases or, for one "
        "parameter, where growing terms leave a lack of fit)",
    )
    parser.add_argument(
        "--location",
        choices=LOCATIONS,
        default="adaptive",
        help="how repetitions give a point's value (adaptive: mean, midrange, trimmed mean or "
        "median, whichever the noise shape of all kernels favours)",
    )


def modeler_options(args: argparse.Namespace) -> dict[str, object]:
    """Hyper-parameters every modeler takes from the command line."""
    negative = {"auto": None, "yes": True, "no": False}[args.negative_exponents]
    return {"negative_exponents": negative, "location": args.location}


def fit_from_args(args: argparse.Namespace) -> list[Model]:
    """Load the experiment named by ``args`` and fit its models (of every metric with
    ``--metric all``)."""
    experiment = load_experiment(args)
    if args.kernel:
        experiment = experiment.select(kernels=args.kernel)
    metrics = experiment.metric_names if args.metric == ALL_METRICS else [args.metric]
    if args.static:
        return fit_hybrid(experiment, args, metrics)
    return [model for metric in metrics for model in fit_models(experiment, args, metric)]


def fit_models(experiment: Experiment, args: argparse.Namespace, metric: str | None) -> list[Model]:
    """Fit ``experiment`` with the modeler the options name; say so on stderr when the points'
    values are not the means of their repetitions."""
    modeler = make_modeler(args.modeler, **modeler_options(args)).fit(experiment, metric)
    _print_location_note(modeler.locations_)
    return modeler.models_


def _print_location_note(locations: Sequence[Location]) -> None:
    for location in locations:
        if location.estimator != "mean":
            shape = location.shape
            evidence = (
                f"; the noise of {shape.kernels} kernels looks {shape.description}"
                if shape.kernels > 1 and shape.reference != GAUSSIAN
                else ""
            )
            print(
                f"point values: the {DESCRIPTIONS[location.estimator]} of each point's repetitions"
                f"{evidence} (--location mean for means)",
                file=sys.stderr,
            )
            return


def fit_hybrid(
    experiment: Experiment, args: argparse.Namespace, metrics: Sequence[str | None]
) -> list[Model]:
    """Hybrid models of ``metrics`` from ``--static`` sources; a summary of each search goes to
    stderr."""
    from perfcast.model.hybrid import HybridModeler
    from perfcast.static import analyze

    mapping = dict(_parameter_pair(text) for text in args.param)
    missing = [p for p in mapping if p not in experiment.parameter_names]
    if missing:
        raise InputError(f"--param {missing[0]}: the experiment has no such parameter")
    constants = dict(_constant(text) for text in args.set)
    sources = [*mapping.values(), *constants]
    report = analyze(args.static, sources, shlex.split(args.static_flags))
    for message in report.diagnostics:
        print(message, file=sys.stderr)
    models = []
    for metric in metrics:
        modeler = HybridModeler(report, mapping, constants, **modeler_options(args))
        modeler.fit(experiment, metric)
        print(hybrid_summary(modeler), file=sys.stderr)
        _print_location_note(modeler.locations_)
        models += modeler.models_
    return models


def _parameter_pair(text: str) -> tuple[str, str]:
    name, _, source = text.partition("=")
    if not name:
        raise InputError(f"--param '{text}' is not NAME or NAME=SOURCE")
    return name, source or name


def _constant(text: str) -> tuple[str, float]:
    name, _, value = text.partition("=")
    try:
        return name, float(value)
    except ValueError:
        raise InputError(f"--set '{text}' is not SOURCE=NUMBER") from None


def hybrid_summary(modeler: HybridModeler) -> str:
    """One line: where the models came from and how much smaller the search was."""
    kinds = [p.split(":")[0] for p in modeler.provenance_.values()]
    hybrid = sum(h for h, _ in modeler.predictors_.values())
    empirical = sum(e for _, e in modeler.predictors_.values())
    counts = ", ".join(f"{kinds.count(k)} {k}" for k in ("static count", "reach", "empirical"))
    saved = 100.0 * (1 - hybrid / empirical) if empirical else 0.0
    return (
        f"hybrid: {counts}; {hybrid} candidate terms instead of {empirical} ({saved:.0f} % fewer)"
    )


def run(args: argparse.Namespace) -> int:
    """Fit and print."""
    models = fit_from_args(args)
    write_output(format_models(models, args.format), args.out)
    return 0
