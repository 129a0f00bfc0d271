"""``perfcast online``: life-long online modeling (replay a stream, show a model store)."""

from __future__ import annotations

import argparse
import signal
import sys

from perfcast.api import (
    modelers,
    read_clusters,
    render_online,
    replay_stream,
    serve_spool,
    stored_models,
)
from perfcast.commands.common import write_output

ONLINE_FORMATS = ("text", "json")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, not {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, not {text!r}")
    return value


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast online`` and its sub-commands."""
    parser = subparsers.add_parser("online")
    actions = parser.add_subparsers(dest="action", required=True)

    replay = actions.add_parser("replay", help="feed a recorded stream through the online modeler")
    replay.add_argument("stream", help="JSON Lines, one measurement per line, in arrival order")
    replay.add_argument("--batch", type=_positive, default=512, help="measurements per update")
    replay.add_argument(
        "--modeler", choices=modelers(standalone=True), default="pmnf", help="modeler refitted"
    )
    replay.add_argument("--store", metavar="URL", help="SQLite file or postgresql:// URL")
    replay.add_argument("--app", default="default", help="application name in the store")
    replay.add_argument(
        "--no-backoff", action="store_true", help="measure every value (no back-off)"
    )
    replay.add_argument("--seed", type=_seed, default=0, help="seed of the back-off delays")
    replay.add_argument(
        "--cold-backoff",
        action="store_true",
        help="back off from the first batch: skip b * U(0, 1) after a batch no model can judge yet",
    )
    replay.add_argument(
        "--clusters",
        metavar="FILE",
        help="similar kernels: `perfcast static --format json` output or a JSON list of lists",
    )
    replay.add_argument("--format", choices=ONLINE_FORMATS, default="text", help="output format")
    replay.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    replay.set_defaults(run=run_replay)

    serve = actions.add_parser("serve", help="collect batches of instrumented runs into a store")
    serve.add_argument("--store", metavar="URL", required=True, help="SQLite file or URL")
    serve.add_argument(
        "--spool", metavar="DIR", required=True, help="the programs' PERFCAST_ONLINE_SPOOL"
    )
    serve.add_argument("--app", default="default", help="application name in the store")
    serve.add_argument("--batch", type=_positive, default=512, help="the programs' batch size")
    serve.add_argument(
        "--modeler", choices=modelers(standalone=True), default="pmnf", help="modeler refitted"
    )
    serve.add_argument("--once", action="store_true", help="process waiting files, then stop")
    serve.add_argument(
        "--cold-backoff",
        action="store_true",
        help="back off from the first batch: skip b * U(0, 1) after a batch no model can judge yet",
    )
    serve.add_argument(
        "--clusters",
        metavar="FILE",
        help="similar kernels: `perfcast static --format json` output or a JSON list of lists",
    )
    serve.set_defaults(run=run_serve)

    show = actions.add_parser("show", help="models, PARS and exceptions kept in a model store")
    show.add_argument("--store", metavar="URL", required=True, help="SQLite file or URL")
    show.add_argument("--app", default="default", help="application name in the store")
    show.add_argument("--format", choices=ONLINE_FORMATS, default="text", help="output format")
    show.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    show.set_defaults(run=run_show)


def run_replay(args: argparse.Namespace) -> int:
    """Replay the stream and print a summary per kernel."""
    summaries = replay_stream(
        args.stream,
        modeler=args.modeler,
        batch=args.batch,
        store=args.store,
        application=args.app,
        backoff=not args.no_backoff,
        seed=args.seed,
        cold_backoff=args.cold_backoff,
        clusters=read_clusters(args.clusters) if args.clusters else None,
    )
    write_output(render_online(summaries, args.format), args.out)
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print what the store holds of the application."""
    write_output(
        render_online(stored_models(args.store, application=args.app), args.format), args.out
    )
    return 0


def run_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted (SIGINT, SIGTERM) or, with ``--once``, until the spool is empty;
    rejected files are reported on standard error."""
    stop = []
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    try:
        count = serve_spool(
            args.spool,
            args.store,
            application=args.app,
            modeler=args.modeler,
            batch=args.batch,
            once=args.once,
            cold_backoff=args.cold_backoff,
            clusters=read_clusters(args.clusters) if args.clusters else None,
            should_stop=lambda: bool(stop),
            on_rejected=lambda message: print(f"perfcast: rejected {message}", file=sys.stderr),
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(f"perfcast: {count} batch file(s) modeled", file=sys.stderr)
    return 0
