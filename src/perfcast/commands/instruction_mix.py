"""``perfcast mix --binary a.out SRC.c --param n``: instruction-mix models (Mira).

Temporary home of the binary options until ``perfcast static`` takes them (``static --binary``).
"""

from __future__ import annotations

import argparse

from perfcast.errors import InputError
from perfcast.static.mix_cli import add_binary_arguments, run_binary


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``mix`` sub-command."""
    parser = subparsers.add_parser(
        "mix",
        help="instruction-mix models of a binary built with -g from C sources",
        description="Parametric instruction counts per function and category (Mira): static "
        "loop counts of the sources times the categorized instructions of the binary.",
    )
    parser.add_argument("sources", nargs="*", help="C source files the binary was built from")
    parser.add_argument(
        "--param", action="append", metavar="NAME", help="input parameter (repeat for several)"
    )
    add_binary_arguments(parser)
    parser.set_defaults(run=run, compile_args=())


def run(args: argparse.Namespace) -> int:
    """Run the command."""
    if args.binary is None:
        raise InputError("mix needs --binary EXECUTABLE")
    return run_binary(args)
