"""``perfcast report``: one self-contained HTML report (and optional PNG plots)."""

from __future__ import annotations

import argparse

from perfcast.api import report
from perfcast.commands.diagnose import add_diagnosis_arguments, run_diagnosis

HELP = "write a self-contained HTML report with plots, warnings and hotspot shifts"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast report``."""
    parser = subparsers.add_parser("report", description=HELP)
    parser.add_argument("experiment", help="experiment file")
    parser.add_argument("-o", "--output", required=True, help="the HTML file to write")
    parser.add_argument("--png", metavar="DIR", help="also write static PNG plots here")
    parser.add_argument("--title", help="report title (default: from the file name)")
    add_diagnosis_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Diagnose, then write the report."""
    experiment, models, result = run_diagnosis(args)
    report(
        experiment,
        models,
        diagnosis=result,
        path=args.output,
        title=args.title,
        png_directory=args.png,
        progress=True,
    )
    return 0
