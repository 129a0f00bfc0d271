"""``perfcast instrument``: print how to build a program with perfcast's region library."""

from __future__ import annotations

import argparse
import shlex

from perfcast.api import InputError, build_flags


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast instrument``."""
    parser = subparsers.add_parser(
        "instrument",
        description=(
            "Print what to add to a compile command so that PERFCAST_REGION_BEGIN/END (or "
            "Caliper's CALI_MARK_BEGIN/END) record regions, e.g. "
            "mpicc app.c $(perfcast instrument --cflags) $(perfcast instrument --libs)."
        ),
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--cflags", action="store_true", help="include flags for compiling")
    what.add_argument(
        "--libs", action="store_true", help="the library source and libraries for linking"
    )
    what.add_argument("--fortran", action="store_true", help="path of the Fortran module source")
    what.add_argument("--dir", action="store_true", help="directory of the library sources")
    parser.add_argument(
        "--functions",
        action="store_true",
        help="with --cflags: also record every function (-finstrument-functions)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the requested flags or path."""
    if args.functions and not args.cflags:
        raise InputError("--functions only goes with --cflags")
    chosen = {"compile": args.cflags, "link": args.libs, "fortran": args.fortran}
    kind = next((k for k, given in chosen.items() if given), "directory")
    words = build_flags(kind, functions=args.functions)
    print(shlex.join(words) if kind in ("compile", "link") else words[0])
    return 0
