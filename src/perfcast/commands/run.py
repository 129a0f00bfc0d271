"""``perfcast run``: run a measurement campaign and write the experiment."""

from __future__ import annotations

import argparse
import math
import shlex
import signal
import sys
import warnings
from typing import TYPE_CHECKING, Any

from perfcast.api import (
    InputError,
    advice_stop_reasons,
    campaign_executors,
    campaign_metrics,
    describe_failure,
    load_campaign,
    pending_runs,
    run_advised,
    run_campaign,
)

if TYPE_CHECKING:
    from perfcast.api import Campaign, CampaignResult

FAILURES_SHOWN = 10


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast run``."""
    parser = subparsers.add_parser(
        "run",
        description=(
            "Run a campaign from a TOML file (perfcast run CAMPAIGN.toml) or from flags "
            "(perfcast run --param p=1,2,4 --param n=64..512*2 -- mpirun -np {p} ./app {n}). "
            "Flags override the file's settings. Rerunning skips runs already recorded."
        ),
    )
    parser.add_argument(
        "words",
        nargs="*",
        metavar="CAMPAIGN.toml | COMMAND",
        help="a campaign file (name ending in .toml), and/or the command template after --",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUES",
        help="parameter values: a list (p=1,2,4) or range (n=64..512*2, n=10..50+10)",
    )
    parser.add_argument("--reps", type=int, help="repetitions per point")
    parser.add_argument("--timeout", type=float, help="seconds one run may take")
    parser.add_argument("--launcher", help="launcher template, e.g. 'mpirun -np {p}'")
    parser.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="environment variable"
    )
    parser.add_argument("--workdir", help="directory the runs start in")
    parser.add_argument(
        "--metric",
        action="append",
        choices=campaign_metrics(),
        help="time (default), instructions (callgrind) or cache (cachegrind); repeatable; "
        "features collects the records of a program built from perfcast features output into "
        "the run table OUTPUT_STEM.runs.csv",
    )
    parser.add_argument(
        "--runs",
        type=int,
        metavar="N",
        help="measure N points drawn at random (from --seed, 0 by default) instead of the grid",
    )
    for level in ("I1", "D1", "LL"):
        parser.add_argument(
            f"--{level}", metavar="SIZE,ASSOC,LINE", help=f"simulated {level} cache geometry"
        )
    parser.add_argument("-o", "--output", help="experiment table to write (.csv)")
    parser.add_argument("--seed", type=int, help="seed of the randomized run order")
    parser.add_argument(
        "--max-runs",
        type=int,
        metavar="N",
        help="the most runs (points x repetitions x metric modes) the campaign may have",
    )
    parser.add_argument(
        "--retry-failed", action="store_true", help="repeat runs recorded as failed"
    )
    parser.add_argument(
        "--executor",
        choices=campaign_executors(),
        help="where runs execute: local (default, one after another) or slurm (one batch job "
        "per run; options in the campaign's [slurm] table)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check the campaign and print the runs still to take, without taking them",
    )
    advised = parser.add_argument_group(
        "advised measuring",
        "after the campaign's points, measure one advised point at a time (see perfcast "
        "advise) until the prediction at --at is within --goal or --budget is spent",
    )
    advised.add_argument("--advise", action="store_true", help="measure advised points")
    advised.add_argument("--at", metavar="p=4096,n=1e6", help="with --advise: the target")
    advised.add_argument(
        "--budget",
        metavar="RUNS|CORE_HOURS",
        help="with --advise: runs (20) or core-hours (1.5h) the advised points may take",
    )
    advised.add_argument(
        "--goal",
        type=float,
        metavar="WIDTH",
        help="with --advise: stop at this relative half-width of the interval (0.1: ±10 %%)",
    )
    advised.add_argument(
        "--candidates",
        metavar="p=2..4096*2,n=1e6,2e6",
        help="with --advise: values per parameter to choose from (default: the measured "
        "values and doublings up to the target)",
    )
    parser.set_defaults(run=run)


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name.strip():
            raise InputError(f"{flag} {item!r}: expected NAME=VALUE", "command line")
        pairs[name.strip()] = value.strip()
    return pairs


def settings_from_flags(args: argparse.Namespace, command: list[str]) -> dict[str, Any]:
    """The campaign keys the flags set (only those given)."""
    settings: dict[str, Any] = {}
    if args.param:
        settings["parameters"] = _pairs(args.param, "--param")
    if command:
        settings["command"] = command
    simple = {
        "repetitions": args.reps,
        "timeout": args.timeout,
        "launcher": args.launcher,
        "workdir": args.workdir,
        "output": args.output,
        "seed": args.seed,
        "max_runs": args.max_runs,
        "metrics": args.metric,
        "executor": args.executor,
        "runs": args.runs,
    }
    settings.update({k: v for k, v in simple.items() if v is not None})
    if args.env:
        settings["environment"] = _pairs(args.env, "--env")
    cache = {level: getattr(args, level) for level in ("I1", "D1", "LL")}
    cache = {k: v for k, v in cache.items() if v is not None}
    if cache:
        settings["cache"] = cache
    return settings


def _print_plan(campaign: Campaign, retry_failed: bool) -> int:
    runs = pending_runs(campaign, retry_failed=retry_failed)
    total = campaign.run_count
    order = "in this order" if campaign.seed is not None else "order drawn when run (no seed)"
    print(f"{len(runs)} of {total} runs to take, {order}:")
    for run in runs:
        point = " ".join(f"{k}={v}" for k, v in run["point"].items())
        words = " ".join(shlex.quote(w) for w in run["command"])
        print(f"  {point} rep {run['repetition']} [{run['mode']}]: {words}")
    return 0


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM ends the campaign like Ctrl-C: the running program's group is ended too."""
    raise KeyboardInterrupt


def _print_warnings(caught: list[warnings.WarningMessage]) -> None:
    for warning in caught:
        print(f"perfcast: warning: {warning.message}", file=sys.stderr)
    caught.clear()


def run(args: argparse.Namespace) -> int:
    """Load or build the campaign, run it, report failures; 1 only if every run failed."""
    words = list(args.words)
    campaign_file = words.pop(0) if words and words[0].endswith(".toml") else None
    settings = settings_from_flags(args, words)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if campaign_file is not None:
            campaign = load_campaign(campaign_file, overrides=settings)
        elif words:
            campaign = load_campaign(settings)
        else:
            raise InputError(
                "give a campaign file (CAMPAIGN.toml) or a command after --", "command line"
            )
        _print_warnings(caught)
        if args.dry_run:
            return _print_plan(campaign, args.retry_failed)
        _check_advice_flags(args)
        if args.advise and campaign.runs is not None:
            raise InputError(
                "--advise measures grid points; it does not go with drawn runs (runs = N)",
                campaign.source,
            )
        previous = signal.signal(signal.SIGTERM, _interrupt)
        try:
            if args.advise:
                result = _run_advised(campaign, args)
            else:
                result = run_campaign(campaign, retry_failed=args.retry_failed)
        finally:
            signal.signal(signal.SIGTERM, previous)
            _print_warnings(caught)
    print(
        f"perfcast: {result.executed} runs done, {result.skipped} already recorded; "
        f"experiment written to {result.output} (results in {campaign.results_path})",
        file=sys.stderr,
    )
    if result.run_table is not None:
        print(f"perfcast: run table written to {result.run_table}", file=sys.stderr)
    if result.failures:
        print(f"perfcast: {len(result.failures)} runs failed:", file=sys.stderr)
        for failure in result.failures[:FAILURES_SHOWN]:
            print(f"  {describe_failure(failure)}", file=sys.stderr)
        if len(result.failures) > FAILURES_SHOWN:
            print(f"  ... and {len(result.failures) - FAILURES_SHOWN} more", file=sys.stderr)
    return 0


def _check_advice_flags(args: argparse.Namespace) -> None:
    """``--at`` and ``--budget`` with ``--advise``; the advice flags only with it."""
    given = [f for f in ("at", "budget", "goal", "candidates") if getattr(args, f) is not None]
    if not args.advise and given:
        raise InputError(f"--{given[0]}: only with --advise", "command line")
    if args.advise and (args.at is None or args.budget is None):
        raise InputError("--advise needs --at (the target) and --budget", "command line")
    if args.advise and args.goal is not None and not args.goal > 0:
        raise InputError(f"--goal must be positive, not {args.goal:g}", "command line")


def _run_advised(campaign: Campaign, args: argparse.Namespace) -> CampaignResult:
    """The campaign, then advised points; one line per round and the final advice on stderr."""
    result, history, advice, stop = run_advised(
        campaign, at=args.at, budget=args.budget, goal=args.goal, candidates=args.candidates
    )
    for number, advised in enumerate(history, 1):
        point = ",".join(f"{k}={v:g}" for k, v in advised.point.items())
        why = (
            f"the interval at the target was ±{advised.width_before:.1%}"
            if math.isfinite(advised.width_before)
            else advised.note or "no model could be fitted yet"
        )
        print(
            f"perfcast: advised round {number}: measured {point} ({advised.runs} runs"
            f"{', taken before the resume' if advised.resumed else ''}); {why}",
            file=sys.stderr,
        )
    print(
        f"perfcast: advice stopped: {advice_stop_reasons()[stop]}; the interval at the target "
        f"is now ±{advice.width_before:.1%}",
        file=sys.stderr,
    )
    return result
