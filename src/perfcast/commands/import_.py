"""``perfcast import``: turn tool profiles (Caliper, Score-P CUBE) into an experiment file."""

from __future__ import annotations

import argparse

from perfcast.api import import_profiles, profile_options, save


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``import`` sub-command."""
    parser = subparsers.add_parser(
        "import",
        description=(
            "Read profiles of one tool (Caliper .cali or json-split, Score-P .cubex), one run "
            "each, into an experiment. Run parameters come from --param metadata keys, from "
            "--pattern on file or directory names, or by default from the integer metadata "
            "that varies (Caliper) or Extra-P-style directory names like mm.x10y2.r1 (CUBE)."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="profiles or directories")
    parser.add_argument(
        "--pattern",
        help="name pattern with {name} fields, {rep} for the repetition, e.g. 'mm.x{x}y{y}.r{rep}'",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=NAME",
        help="metadata key holding a parameter, e.g. mpi.world.size=p (repeatable; NAME rep "
        "marks the repetition)",
    )
    options = profile_options()
    parser.add_argument("--format", choices=options["profile_format"], dest="profile_format")
    parser.add_argument(
        "--rank-statistic",
        choices=options["rank_statistic"],
        default="avg",
        help="Caliper: how records of several MPI ranks reduce (default: avg)",
    )
    parser.add_argument(
        "--location-statistic",
        choices=options["location_statistic"],
        default="mean",
        help="CUBE: how values of several locations reduce (default: mean)",
    )
    parser.add_argument("-o", "--out", required=True, help="experiment file to write")
    parser.add_argument("--output-format", help="format of --out (default: from its suffix)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Import the profiles and write the experiment."""
    experiment = import_profiles(
        args.paths,
        profile_format=args.profile_format,
        pattern=args.pattern,
        params=args.param or None,
        rank_statistic=args.rank_statistic,
        location_statistic=args.location_statistic,
    )
    save(experiment, args.out, format=args.output_format)
    runs = len(experiment.metadata.get("runs", []))
    names = ", ".join(experiment.parameter_names)
    print(
        f"imported {runs} runs ({names}), {len(experiment.kernels)} kernels, "
        f"{len(experiment.metrics)} metrics -> {args.out}"
    )
    notes = experiment.metadata
    if notes.get("parameter_keys"):
        taken = ", ".join(f"{k} as {n}" for k, n in notes["parameter_keys"].items())
        print(f"parameters from metadata: {taken}")
    if notes.get("dependent_keys"):
        print(f"not parameters (follow from those): {', '.join(notes['dependent_keys'])}")
    if notes.get("constant_parameters"):
        fixed = ", ".join(f"{k}={v:g}" for k, v in notes["constant_parameters"].items())
        print(f"constant, dropped: {fixed}")
    return 0
