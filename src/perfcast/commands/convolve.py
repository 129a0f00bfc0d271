"""``perfcast convolve``: predicted computation time of a signature on a machine profile."""

from __future__ import annotations

import argparse

from perfcast.api import convolve, load, load_machine, render_pmac
from perfcast.commands.common import write_output


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast convolve``."""
    parser = subparsers.add_parser(
        "convolve",
        description="Each block's floating-point operations at the machine's rates, its bytes "
        "at the bandwidth of the levels its hit rates say serve them and its instructions at "
        "the issue rate, overlapped as the machine says, plus its mispredicted branches.",
    )
    parser.add_argument("signature", metavar="SIGNATURE", help="a signature at one point")
    parser.add_argument("--machine", required=True, metavar="FILE", help="machine profile JSON")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Convolve and print."""
    result = convolve(load(args.signature), load_machine(args.machine))
    write_output(render_pmac(result, args.format), args.out)
    return 0
