"""``perfcast learn``: learn a run's time (or another target) from a run table."""

from __future__ import annotations

import argparse
import sys

from perfcast.api import (
    learn,
    learning_methods,
    parse_reductions,
    render_learned,
    save_learned,
    transfer_methods,
)
from perfcast.commands.common import write_output


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast learn``."""
    parser = subparsers.add_parser("learn")
    parser.add_argument("table", metavar="TABLE", help="run table: one row per run (CSV, Parquet)")
    parser.add_argument("--target", default="time", help="the column to predict (default: time)")
    parser.add_argument(
        "--method",
        choices=learning_methods(),
        default="extra-trees",
        help="default: extra-trees; log-linear and products form products of features (counts "
        "of one step times the steps); auto fits every method and keeps the one of least "
        "cross-validated error",
    )
    parser.add_argument(
        "--reduce",
        metavar="time=0.05,importance=0.95",
        help="drop features costing more than this share of the run time, then keep the most "
        "important ones up to this share of the importance",
    )
    parser.add_argument(
        "--transfer-from",
        metavar="SOURCE",
        help="runs (table) or learned model (.json) of another platform; TABLE then holds the "
        "few runs of the new one",
    )
    parser.add_argument(
        "--transfer-method",
        choices=transfer_methods(),
        default="map",
        help="map: rescale the source runs by a log-linear map fitted on TABLE (default); "
        "tradaboost: instance transfer, two-stage TrAdaBoost.R2 re-weighting the source runs; "
        "map+tradaboost: the map, then the re-weighting",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="COLUMN",
        help="a column that is no feature, such as another measured target (repeatable)",
    )
    parser.add_argument("--trees", type=int, default=200, help="trees of a forest (default 200)")
    parser.add_argument(
        "--no-log-target", action="store_true", help="learn the target as measured, not its log"
    )
    parser.add_argument(
        "--no-linear-base",
        action="store_true",
        help="plain forest, without the ridge regression over log features it corrects",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the forests and folds")
    parser.add_argument("-o", "--out", required=True, metavar="MODEL.json", help="model file")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="summary format")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Learn, write the model file, print the summary (warnings on standard error too)."""
    reductions = parse_reductions(args.reduce, "--reduce") if args.reduce else {}
    if args.transfer_method != "map" and args.transfer_from is None:
        print(
            f"perfcast: error: --transfer-method {args.transfer_method} needs --transfer-from",
            file=sys.stderr,
        )
        return 2
    try:
        model = learn(
            args.table,
            args.target,
            method=args.method,
            exclude=args.exclude,
            transfer_from=args.transfer_from,
            trees=args.trees,
            log_target=not args.no_log_target,
            linear_base=not args.no_linear_base,
            seed=args.seed,
            transfer=args.transfer_method,
            reduce_time=reductions.get("reduce_time"),
            reduce_importance=reductions.get("reduce_importance"),
        )
    except ValueError as error:
        print(f"perfcast: error: {error}", file=sys.stderr)
        return 2
    save_learned(model, args.out)
    if args.format == "text":
        write_output(render_learned(model, "text"), None)
    else:
        write_output(render_learned(model, "json"), None)
        for warning in model.warnings_:
            print(f"perfcast: warning: {warning}", file=sys.stderr)
    return 0
