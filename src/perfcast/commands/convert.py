"""``perfcast convert IN OUT``: read measurements in one format and write them in another."""

from __future__ import annotations

import argparse
import sys

from perfcast.api import save
from perfcast.commands.common import add_input_arguments, load_experiment, writable_formats


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``convert`` and its arguments."""
    parser = subparsers.add_parser(
        "convert",
        description="Read measurements (format detected, or --input-format) and write them in "
        "the format named by --output-format or by OUT's suffix (.perfcast.json/.json, .csv, "
        ".parquet, .jsonl, .txt).",
    )
    add_input_arguments(parser)
    parser.add_argument("out", metavar="OUT", help="file to write")
    parser.add_argument(
        "--output-format", choices=writable_formats(), help="write OUT in this format"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Convert ``args.file`` to ``args.out``; returns the exit status."""
    experiment = load_experiment(args)
    save(experiment, args.out, format=args.output_format)
    print(
        f"wrote {len(experiment.frame)} values of {len(experiment.kernels)} kernels to {args.out}",
        file=sys.stderr,
    )
    return 0
