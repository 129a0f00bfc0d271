"""``perfcast graph``: the hybrid control-flow graphs (hCFG) of a C file, as JSON or DOT."""

from __future__ import annotations

import argparse

from perfcast.api import InputError, code_graphs, json_text


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast graph``."""
    parser = subparsers.add_parser(
        "graph",
        description=(
            "Compile a C file to LLVM IR with clang and print the hybrid control-flow graph "
            "(basic blocks with instruction mix, loop depth and reuse estimate; edges with "
            "transition probabilities) of each function and each outermost loop."
        ),
    )
    parser.add_argument("source", help="the C file")
    parser.add_argument("--function", help="only this function")
    parser.add_argument("--loop", type=int, metavar="LINE", help="only the loop starting at LINE")
    parser.add_argument(
        "--scope",
        choices=("all", "function", "loop"),
        default="all",
        help="function graphs, loop graphs or both (default)",
    )
    parser.add_argument("--format", choices=("json", "dot"), default="json", help="output format")
    parser.add_argument(
        "--flag", action="append", default=[], metavar="FLAG", help="clang flag; repeatable"
    )
    parser.add_argument(
        "--counts",
        action="store_true",
        help="loop trip counts from perfcast's symbolic loop counts where they are numbers",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="measure transition probabilities: build instrumented, run the program once",
    )
    parser.add_argument(
        "--run-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="argument of the profiled run; repeatable",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the graphs."""
    if args.run_arg and not args.profile:
        raise InputError("--run-arg is for --profile runs", reason="run-arg-without-profile")
    if args.loop is not None and args.scope == "function":
        raise InputError("--loop selects a loop graph; --scope function shows none")
    graphs = code_graphs(
        args.source,
        function=args.function,
        loop=args.loop,
        flags=args.flag,
        scope=args.scope,
        profile=args.run_arg if args.profile else None,
        counts=args.counts,
    )
    if args.format == "dot":
        print("".join(graph.to_dot() for graph in graphs), end="")
    else:
        print(json_text({"graphs": [graph.to_dict() for graph in graphs]}))
    return 0
