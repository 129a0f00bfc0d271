"""``perfcast diagnose``: scalability bugs, crossovers, scaling error and hotspot shifts."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from perfcast.api import Experiment, ModelSet, diagnose, parse_expectation, parse_point, render
from perfcast.commands._inputs import (
    add_analysis_arguments,
    add_output_arguments,
    load_experiment,
    obtain_models,
)
from perfcast.commands.common import write_output

if TYPE_CHECKING:
    from perfcast.api import Diagnosis

HELP = "rank kernels at a target scale, flag scalability bugs, scaling error, hotspot shifts"


def add_diagnosis_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``diagnose`` and ``report``."""
    add_analysis_arguments(parser)
    parser.add_argument("--models", help="models JSON (perfcast model --format json) to use")
    parser.add_argument("--at", help="target configuration, e.g. p=4096,n=1e6 (default: 8x p)")
    parser.add_argument(
        "--scale",
        help="the parameter the target, scaling error and hotspot shift follow "
        "(default: the processes parameter, else threads, else a lone parameter)",
    )
    parser.add_argument(
        "--role",
        action="append",
        default=[],
        metavar="PARAM=ROLE,...",
        help="parameter roles: processes, threads, size, configuration, e.g. "
        "'p=processes,n=size' (default: from the experiment, else from the names; repeatable)",
    )
    parser.add_argument(
        "--scaling",
        choices=("strong", "weak"),
        help="strong or weak scaling of the processes and threads parameters "
        "(default: inferred per parameter, see the documentation)",
    )
    parser.add_argument(
        "--expect",
        action="append",
        default=[],
        metavar="GLOB:PARAM=GROWTH",
        help="expected growth, e.g. '*MPI_Allreduce:p=log' or 'p=1/p' (repeatable)",
    )
    parser.add_argument(
        "--collective",
        action="append",
        default=[],
        metavar="GLOB",
        help="kernels matching this pattern are collectives expected to grow like log p",
    )
    parser.add_argument(
        "--along", help="parameter the hotspot shift follows (default: the scale parameter)"
    )
    parser.add_argument(
        "--min-share",
        type=float,
        default=0.05,
        help="flag only kernels with at least this share of the total at the target (0.05)",
    )
    parser.add_argument(
        "--flag-runtime",
        action="store_true",
        help="also flag system-library kernels (dynamic linker, libc, MPI internals), "
        "which are grouped as runtime and not flagged by default",
    )


def run_diagnosis(args: argparse.Namespace) -> tuple[Experiment, ModelSet, Diagnosis]:
    """Load, fit (or read models) and diagnose; returns experiment, models, diagnosis."""
    experiment, metric = load_experiment(args.experiment, args)
    names = experiment.parameter_names
    at = parse_point(args.at, names, source="--at") if args.at else None
    expectations = [parse_expectation(text, names, "--expect") for text in args.expect]
    models = obtain_models(experiment, metric, args, args.models)
    result = diagnose(
        experiment,
        models,
        metric=metric,
        at=at,
        scale=args.scale,
        mode=args.scaling,
        roles=",".join(args.role) or None,
        expectations=expectations,
        collective_patterns=args.collective,
        min_share=args.min_share,
        flag_runtime=args.flag_runtime,
        along=args.along,
    )
    return experiment, models, result


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast diagnose``."""
    parser = subparsers.add_parser("diagnose", description=HELP)
    parser.add_argument("experiment", help="experiment file")
    add_diagnosis_arguments(parser)
    add_output_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the diagnosis as text or JSON."""
    _, _, result = run_diagnosis(args)
    write_output(render(result, args.format), args.out)
    return 0
