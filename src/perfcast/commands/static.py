"""``perfcast static``: symbolic execution counts of the functions and loops of C sources."""

from __future__ import annotations

import argparse
import json
import sys

from perfcast.core.errors import InputError
from perfcast.static.mix_cli import BINARY_OPTIONS, add_binary_arguments, run_binary


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--param",
        action="append",
        default=None,
        metavar="NAME",
        help="input parameter (macro, global, local, argument or struct member); repeatable",
    )
    parser.add_argument(
        "--clusters", action="store_true", help="also list loops with the same structure"
    )
    parser.add_argument("--format", choices=("text", "json"), default=None, help="output format")
    add_binary_arguments(parser)


def add_parser(subparsers) -> None:
    """Register ``perfcast static``."""
    parser = subparsers.add_parser(
        "static",
        help="count loops and functions of C sources symbolically",
        description=(
            "Count how often every function and loop of C sources runs, symbolically over the "
            "named parameters. Compile flags for clang follow '--'."
        ),
        usage="perfcast static SRC... [--param NAME ...] [--clusters] [--format text|json] "
        "[--binary A.OUT ...] [-- compile flags]",
    )
    _options(parser)
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(run=run)


def split_arguments(args: argparse.Namespace) -> tuple[list[str], list[str], argparse.Namespace]:
    """Separate sources, options written after them, and the compile flags after ``--``."""
    rest = list(args.arguments)
    flags: list[str] = []
    if "--" in rest:
        at = rest.index("--")
        rest, flags = rest[:at], rest[at + 1 :]
    late = argparse.ArgumentParser(prog="perfcast static", add_help=False, exit_on_error=False)
    _options(late)
    late.add_argument("sources", nargs="*")
    try:
        parsed = late.parse_args(rest)
    except (argparse.ArgumentError, SystemExit) as error:
        raise InputError(f"bad arguments for perfcast static: {error}") from error
    merged = argparse.Namespace(
        param=(args.param or []) + (parsed.param or []),
        clusters=args.clusters or parsed.clusters,
        format=parsed.format or args.format or "text",
        **{name: getattr(parsed, name) or getattr(args, name) for name in BINARY_OPTIONS},
    )
    return parsed.sources, flags, merged


def run(args: argparse.Namespace) -> int:
    """Analyse the sources and print the kernels (and clusters)."""
    from perfcast.static import analyze

    sources, flags, options = split_arguments(args)
    if not sources and not (options.binary and options.report):
        raise InputError("perfcast static needs at least one source file")
    if options.binary:
        binary_options = {name: getattr(options, name) for name in BINARY_OPTIONS}
        return run_binary(
            argparse.Namespace(
                sources=sources, param=options.param, compile_args=flags, **binary_options
            )
        )
    report = analyze(sources, options.param, flags)
    for message in report.diagnostics:
        print(message, file=sys.stderr)
    if options.format == "json":
        data = report.to_dict()
        if not options.clusters:
            data.pop("clusters")
        print(json.dumps(data, indent=2))
        return 0
    print(render_text(report, options.clusters))
    return 0


def render_text(report, clusters: bool) -> str:
    """Human-readable table of the kernels, then the clusters when asked."""
    lines = []
    for kernel in report.kernels:
        indent = "  " * kernel.depth
        where = f"{kernel.file}:{kernel.line}"
        reach = ", ".join(kernel.parameters) or "-"
        if kernel.count is not None:
            count = kernel.expression()
        else:
            count = f"undef ({kernel.undef_reason})"
        lines.append(f"{indent}{kernel.name}  [{where}]  params: {reach}")
        lines.append(f"{indent}    count = {count}")
        if kernel.note:
            lines.append(f"{indent}    note: {kernel.note}")
    if clusters:
        groups = report.clusters()
        lines.append("")
        lines.append(f"similarity clusters: {len(groups)}")
        for index, names in enumerate(groups, start=1):
            lines.append(f"  cluster {index}: {', '.join(names)}")
    return "\n".join(lines)
