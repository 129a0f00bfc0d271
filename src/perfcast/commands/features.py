"""``perfcast features``: instrument C sources for run-time features, or turn the records
their runs wrote into a run table."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from perfcast.api import InputError, instrument_features, load_feature_records, save_run_table


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast features``."""
    parser = subparsers.add_parser(
        "features",
        description=(
            "Rewrite C sources (libclang) so that every run appends its run-time features "
            "(variables' values, branch outcomes, loop trips, MPI calls and bytes) to "
            "$PERFCAST_FEATURES_FILE; build the copies with the original command. "
            "With --records, write the run table of those records instead."
        ),
        usage="perfcast features SRC... -o DIR [--param NAME] [--cflags='-I inc -DN=4']\n"
        "       perfcast features --records RECORDS.jsonl -o RUNS.csv [--phase features_end]",
    )
    parser.add_argument("sources", nargs="*", metavar="SRC", help="C sources to instrument")
    parser.add_argument(
        "-o", "--out", required=True, metavar="DIR|RUNS.csv", help="output folder or run table"
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME",
        help="a variable holding an input parameter: its feature is named NAME (repeatable)",
    )
    parser.add_argument("--records", metavar="RECORDS.jsonl", help="feature records of runs")
    parser.add_argument(
        "--phase",
        choices=("exit", "features_end"),
        default="exit",
        help="with --records: features at exit, or at '#pragma perfcast features_end'",
    )
    parser.add_argument(
        "--cflags", default="", metavar="'FLAGS'", help="compile flags the sources need to parse"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Instrument, or convert records; prints what was done."""
    try:
        flags = shlex.split(args.cflags)
    except ValueError as error:
        raise InputError(f"--cflags: {error}", value=args.cflags) from None
    if args.records is not None:
        if args.sources or flags:
            raise InputError("--records converts records; give no sources with it")
        table = load_feature_records(args.records, phase=args.phase)
        save_run_table(table, args.out)
        print(f"{table.rows} runs, {len(table.columns) - 1} features -> {args.out}")
        return 0
    if not args.sources:
        raise InputError("no source to instrument (or give --records)")
    results = instrument_features(args.sources, args.out, flags, parameters=args.param)
    for result in results:
        print(f"{result.original} -> {result.path}: {len(result.features)} features")
        _print_skipped(result.skipped, Path(args.out) / "features.json")
    found = {feature.name for result in results for feature in result.features}
    for name in dict.fromkeys(args.param):
        if name not in found:
            print(
                f"perfcast: warning: --param {name}: no assignment to a variable '{name}' was "
                f"instrumented; the run table will have no column '{name}'",
                file=sys.stderr,
            )
    return 0


#: Sites left alone shown per source; the rest are counted (all are in features.json).
SKIPPED_SHOWN = 10


def _print_skipped(skipped: list[str], listing: Path) -> None:
    """The first distinct sites left alone, and how many more there are."""
    distinct = list(dict.fromkeys(skipped))
    for note in distinct[:SKIPPED_SHOWN]:
        print(f"perfcast: note: left alone: {note}", file=sys.stderr)
    if len(distinct) > SKIPPED_SHOWN:
        print(
            f"perfcast: note: ... and {len(distinct) - SKIPPED_SHOWN} more sites left alone "
            f"(every one is listed in {listing})",
            file=sys.stderr,
        )
