"""``perfcast signature``: an application signature (PMaC) of a program run under valgrind."""

from __future__ import annotations

import argparse
from pathlib import Path

from perfcast.api import (
    InputError,
    collect_rank_signatures,
    load_machine,
    merge_signatures,
    save,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast signature``."""
    parser = subparsers.add_parser(
        "signature",
        description="Run COMMAND under valgrind (callgrind with cache simulation) and write "
        "its feature vector per basic block, source line and function. With several --ranks "
        "values, one signature per rank count, written together (ready for extrapolate).",
    )
    parser.add_argument("-o", "--out", required=True, metavar="FILE", help="signature to write")
    parser.add_argument(
        "--ranks",
        default="1",
        metavar="N[,N...]",
        help="MPI ranks (mpirun when above 1); a list takes one signature per value",
    )
    parser.add_argument(
        "--machine", metavar="FILE", help="simulate the caches of this machine profile"
    )
    parser.add_argument(
        "--cache",
        action="append",
        default=[],
        metavar="LEVEL=SIZE,ASSOC,LINE",
        help="cache geometry of I1, D1 or LL in bytes (over the machine's); repeatable",
    )
    parser.add_argument("--timeout", type=float, help="seconds before a run is stopped")
    parser.add_argument(
        "--every-rank",
        metavar="DIR",
        help="also write every rank's own signature to DIR/p<N>-rank<R>.json",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the program and arguments")
    parser.set_defaults(run=run)


def _ranks(text: str) -> list[int]:
    try:
        values = [int(word) for word in text.split(",")]
    except ValueError:
        raise InputError(f"--ranks takes whole numbers, not '{text}'", value=text) from None
    if not values or min(values) < 1:
        raise InputError(f"--ranks must be at least 1, not '{text}'", value=text)
    return values


def _cache(options: list[str]) -> dict[str, str]:
    cache = {}
    for option in options:
        level, equals, geometry = option.partition("=")
        if not equals or level not in ("I1", "D1", "LL") or len(geometry.split(",")) != 3:
            raise InputError(
                f"--cache takes LEVEL=SIZE,ASSOC,LINE with LEVEL I1, D1 or LL, not '{option}'",
                value=option,
            )
        cache[level] = geometry
    return cache


def run(args: argparse.Namespace) -> int:
    """Collect and write the signature(s)."""
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise InputError("name the program to run after --")
    machine = load_machine(args.machine) if args.machine else None
    cache = _cache(args.cache)
    signatures = []
    for n in _ranks(args.ranks):
        chosen, every_rank = collect_rank_signatures(
            command, ranks=n, machine=machine, cache=cache, timeout=args.timeout
        )
        signatures.append(chosen)
        if args.every_rank:
            directory = Path(args.every_rank)
            directory.mkdir(parents=True, exist_ok=True)
            for rank, signature in enumerate(every_rank):
                save(signature, directory / f"p{n}-rank{rank}.json")
    save(merge_signatures(signatures), args.out)
    return 0
