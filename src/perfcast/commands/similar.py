"""``perfcast similar``: rank the loops or functions of C files by similarity to a query."""

from __future__ import annotations

import argparse

from perfcast.api import InputError, json_text, similar_kernels


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast similar``."""
    parser = subparsers.add_parser(
        "similar",
        description=(
            "Match a kernel (QUERY.c, QUERY.c:FUNC or QUERY.c:FUNC:LINE for an outermost loop) "
            "against the loops or functions of C files by the similarity of their hybrid "
            "control-flow graphs' embeddings (1 = same graph)."
        ),
    )
    parser.add_argument("query", help="FILE.c[:FUNCTION[:LINE]]")
    parser.add_argument("corpus", nargs="+", help="C files to search")
    parser.add_argument("--top", type=int, default=5, help="how many matches (default 5)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    parser.add_argument(
        "--flag", action="append", default=[], metavar="FLAG", help="clang flag; repeatable"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the ranked matches."""
    if args.top < 1:
        raise InputError(f"--top must be at least 1, not {args.top}", reason="bad-top")
    found = similar_kernels(args.query, args.corpus, top=args.top, flags=args.flag)
    if args.format == "json":
        print(json_text(found.to_dict()))
        return 0
    query = found.query
    print(f"query: {query.label} ({query.scope})")
    for rank, match in enumerate(found.matches, start=1):
        where = f"{match.file}:{match.function}" + (
            f":{match.line}" if match.scope == "loop" else ""
        )
        print(f"{rank:3d}. {match.similarity:.4f}  {where}")
    for note in found.notes:
        print(f"note: {note}")
    return 0
