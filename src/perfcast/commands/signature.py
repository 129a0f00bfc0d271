"""``perfcast signature``: an application signature (PMaC) of a program run under valgrind."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from perfcast.api import (
    InputError,
    collect_rank_signatures,
    load_machine,
    merge_signatures,
    output_format,
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
    if len(set(values)) != len(values):
        raise InputError(f"--ranks lists a rank count twice: '{text}'", value=text)
    return values


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _cache(options: list[str]) -> dict[str, str]:
    cache = {}
    for option in options:
        level, equals, geometry = option.partition("=")
        if not equals or level not in ("I1", "D1", "LL") or len(geometry.split(",")) != 3:
            raise InputError(
                f"--cache takes LEVEL=SIZE,ASSOC,LINE with LEVEL I1, D1 or LL, not '{option}'",
                value=option,
            )
        try:
            size, ways, line = (int(word) for word in geometry.split(","))
        except ValueError:
            raise InputError(
                f"--cache takes whole numbers of bytes and ways, not '{option}'", value=option
            ) from None
        # valgrind's own rules: a power-of-two line size and number of sets, sizes in a C int.
        if (
            min(size, ways, line) < 1
            or size >= 2**31
            or size % (ways * line)
            or not (_power_of_two(line) and _power_of_two(size // (ways * line)))
        ):
            raise InputError(
                f"--cache {option}: valgrind simulates caches below 2 GiB whose line size and "
                "number of sets (SIZE / (ASSOC * LINE)) are powers of two",
                value=option,
            )
        cache[level] = geometry
    return cache


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse outputs that cannot be written before the (long) run, not after it."""
    if Path(args.out).is_dir():
        raise InputError("is a directory, not a file to write", args.out)
    output_format(args.out)
    if args.every_rank and Path(args.every_rank).exists() and not Path(args.every_rank).is_dir():
        raise InputError("--every-rank names a directory, this is a file", args.every_rank)
    if args.timeout is not None and not (math.isfinite(args.timeout) and args.timeout > 0):
        raise InputError(
            f"--timeout must be a positive number of seconds, not {args.timeout}",
            value=args.timeout,
        )


def run(args: argparse.Namespace) -> int:
    """Collect and write the signature(s)."""
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise InputError("name the program to run after --")
    _check_outputs(args)
    machine = load_machine(args.machine) if args.machine else None
    cache = _cache(args.cache)
    ranks = _ranks(args.ranks)
    signatures = []
    for n in ranks:
        chosen, every_rank = collect_rank_signatures(
            command, ranks=n, machine=machine, cache=cache, timeout=args.timeout
        )
        signatures.append(chosen)
        if args.every_rank:
            directory = Path(args.every_rank)
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise InputError(
                    f"cannot make the directory: {error.strerror}", directory
                ) from None
            for rank, signature in enumerate(every_rank):
                save(signature, directory / f"p{n}-rank{rank}.json")
    save(merge_signatures(signatures), args.out)
    return 0
