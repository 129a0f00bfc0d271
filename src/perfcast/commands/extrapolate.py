"""``perfcast extrapolate``: a signature at a larger core count from signatures at small ones."""

from __future__ import annotations

import argparse
from pathlib import Path

from perfcast.api import (
    InputError,
    extrapolate_signature,
    load,
    merge_signatures,
    render_pmac,
    save,
)
from perfcast.commands.common import write_output


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast extrapolate``."""
    parser = subparsers.add_parser(
        "extrapolate",
        description="Fit every (kernel, feature) element of signatures taken at three or more "
        "core counts on its own and write the signature at --to.",
    )
    parser.add_argument("files", nargs="+", metavar="SIGNATURE", help="signature file(s)")
    parser.add_argument("--to", required=True, metavar="p=8192", help="the point to reach")
    parser.add_argument(
        "--forms",
        choices=("pmac", "pmnf", "both"),
        default="pmac",
        help="canonical forms (default), perfcast's PMNF search, or the better per element",
    )
    parser.add_argument(
        "--holdouts",
        type=_holdouts,
        default=1,
        metavar="N",
        help="choose each canonical form by its worst error predicting each of the N largest "
        "core counts from the smaller ones (default 1: the largest alone)",
    )
    parser.add_argument(
        "--residuals",
        choices=("absolute", "relative"),
        default="absolute",
        help="fit the canonical forms to absolute (default) or relative residuals",
    )
    parser.add_argument("-o", "--out", metavar="FILE", help="write the extrapolated signature")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--report", metavar="FILE", help="write the per-element report here")
    parser.set_defaults(run=run)


def _holdouts(text: str) -> int:
    """``--holdouts``: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    """Extrapolate, write the signature and report the forms chosen."""
    if args.out and args.report and Path(args.out).resolve() == Path(args.report).resolve():
        raise InputError(
            "-o and --report name the same file: the report would replace the signature", args.out
        )
    signature = merge_signatures([load(path) for path in args.files])
    result = extrapolate_signature(
        signature,
        args.to,
        forms=args.forms,
        holdouts=args.holdouts,
        relative=args.residuals == "relative",
    )
    if args.out:
        save(result.signature, args.out)
    write_output(render_pmac(result, args.format), args.report)
    return 0
