"""``perfcast report``: one self-contained HTML report (and optional PNG plots)."""

from __future__ import annotations

import argparse
from pathlib import Path

from perfcast.commands.diagnose import add_diagnosis_arguments, run_diagnosis
from perfcast.core.errors import InputError
from perfcast.report.html import build_report

HELP = "write a self-contained HTML report with plots, warnings and hotspot shifts"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast report``."""
    parser = subparsers.add_parser("report", help=HELP, description=HELP)
    parser.add_argument("experiment", help="experiment file")
    parser.add_argument("-o", "--output", required=True, help="the HTML file to write")
    parser.add_argument("--png", metavar="DIR", help="also write static PNG plots here")
    parser.add_argument("--title", help="report title (default: from the file name)")
    add_diagnosis_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Diagnose, then write the report."""
    experiment, models, result = run_diagnosis(args)
    html = build_report(experiment, models, result, args.title)
    try:
        Path(args.output).write_text(html, encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror}", args.output) from None
    if args.png:
        from perfcast.report.png import write_pngs

        write_pngs(experiment, models, result, Path(args.png))
    return 0
