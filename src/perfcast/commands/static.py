"""``perfcast static``: symbolic execution counts of the functions and loops of C sources.

With ``--binary a.out``, instruction-mix models of the executable instead: the kernel counts come
from the analysis of the sources, or from a static report JSON (``--report``) written earlier.
The analysis (sympy, clang bindings, capstone) is imported when the command runs, not when its
arguments are parsed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from perfcast.api import (
    InputError,
    analyze_source,
    instruction_mix,
    json_text,
    load_static_report,
    parse_point,
    render,
)

if TYPE_CHECKING:
    from perfcast.api import StaticReport

BINARY_OPTIONS = ("binary", "report", "attribution", "mix_json", "mix_python")
"""Names of the attributes :func:`add_binary_arguments` adds to the parsed arguments."""


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--param",
        action="append",
        default=None,
        metavar="NAME[=VALUE]",
        help="input parameter (macro, global, local, argument or struct member); repeatable. "
        "NAME=VALUE fixes it at VALUE: the counts are evaluated there and no longer name it. "
        "A name that occurs in none of the sources is an error listing the closest names",
    )
    parser.add_argument(
        "--clusters", action="store_true", help="also list loops with the same structure"
    )
    parser.add_argument(
        "--function",
        action="append",
        default=None,
        metavar="NAME",
        help="analyse only this function (repeatable): the sources are parsed once and only "
        "the named functions and their callers are walked; the report lists the named ones",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="analyse even when an unchanged input has a cached report (the cache is "
        "$PERFCAST_CACHE_DIR, else ~/.cache/perfcast/static, keyed by the content of the "
        "sources and headers, the flags, parameters, functions and perfcast's analysis code)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default=None,
        help="output format; json with --binary is one document {static, mix}",
    )
    add_binary_arguments(parser)


def add_binary_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--binary``, ``--report``, ``--attribution``, ``--mix-json`` and ``--mix-python``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser of ``perfcast static`` (or the one reading options after the sources).
    """
    group = parser.add_argument_group("instruction-mix models (Mira)")
    group.add_argument(
        "--binary", type=Path, help="ELF executable built with -g from the sources: model its mix"
    )
    group.add_argument(
        "--report",
        type=Path,
        help="static report JSON to take the kernel counts from instead of analyzing the sources",
    )
    group.add_argument(
        "--attribution",
        choices=("cfg", "line"),
        default="cfg",
        help="map instructions to kernels through machine loops (cfg, default) or lines only",
    )
    group.add_argument(
        "--profile",
        action="append",
        default=None,
        metavar="CALLGRIND[@POINT]",
        help="callgrind output (valgrind --tool=callgrind --dump-instr=yes --skip-plt=no) of a "
        "run of the "
        "binary, with its parameter values (out.1@n=100,iters=10: every free --param, and "
        "those fixed with --param NAME=VALUE only at that value); repeatable. Measured block "
        "counts stand in where static loop counts stop: per entry of a loop whose count per "
        "entry the source shows constant, else constants of one run (a warning says the model "
        "holds at its values only), models over the parameters from several; the notes say "
        "which counts were measured",
    )
    group.add_argument("--mix-json", type=Path, help="write the instruction-mix models as JSON")
    group.add_argument(
        "--mix-python", type=Path, help="write the models as an importable Python module"
    )


def add_parser(subparsers) -> None:
    """Register ``perfcast static``."""
    parser = subparsers.add_parser(
        "static",
        description=(
            "Count how often every function and loop of C sources runs, symbolically over the "
            "named parameters. Compile flags for clang follow '--'."
        ),
        usage="perfcast static SRC... [--param NAME[=VALUE] ...] [--clusters] "
        "[--function NAME ...] [--no-cache] [--format text|json] "
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
        function=(args.function or []) + (parsed.function or []),
        no_cache=args.no_cache or parsed.no_cache,
        format=parsed.format or args.format or "text",
        profile=(args.profile or []) + (parsed.profile or []),
        **{name: getattr(parsed, name) or getattr(args, name) for name in BINARY_OPTIONS},
    )
    return parsed.sources, flags, merged


def parameter_values(entries: list[str] | None) -> tuple[list[str], dict[str, float]]:
    """Split ``--param`` entries into free parameter names and ``NAME=VALUE`` fixed values.

    Raises
    ------
    InputError
        For an empty name, a name that is not a C identifier, a name given twice, or a value
        that is not a positive number.
    """
    names: list[str] = []
    values: dict[str, float] = {}
    for entry in entries or []:
        name, equals, value = entry.partition("=")
        name = name.strip()
        if not name.isidentifier() or not name.isascii():
            raise InputError(
                f"--param {entry!r}: the name must be a C identifier (NAME or NAME=VALUE)",
                reason="bad-parameter",
                value=entry,
            )
        if name in names or name in values:
            raise InputError(f"--param {name} is given twice", reason="bad-parameter", value=name)
        if equals:
            values.update(parse_point(f"{name}={value}", source="--param"))
        else:
            names.append(name)
    return names, values


def built_values(compile_args: list[str], names: list[str]) -> dict[str, float]:
    """The values ``-DNAME=VALUE`` (or ``-D NAME=VALUE``) flags give the named parameters:
    the program's build, where the instruction mix is checked for flow conservation. A value
    that is no plain number (an expression) is left out."""
    found: dict[str, float] = {}
    flags = iter(compile_args)
    for flag in flags:
        definition = next(flags, "") if flag == "-D" else flag[2:] if flag.startswith("-D") else ""
        name, equals, value = definition.partition("=")
        if not equals or name not in names:
            continue
        try:
            found.update(parse_point(f"{name}={value}", source="-D"))
        except InputError:
            continue
    return found


def profile_run(entry: str) -> tuple[dict[str, float], Path]:
    """``FILE`` or ``FILE@n=100,iters=10``: a callgrind output and the parameter values of its
    run (the last ``@`` separates them)."""
    path, at, point = entry.rpartition("@")
    if not at:
        return {}, Path(entry)
    if not path:
        raise InputError(f"--profile {entry!r}: no file before '@'", reason="bad-point")
    return parse_point(point, source="--profile"), Path(path)


def _checked_point(
    entry: str, names: Sequence[str], values: Mapping[str, float]
) -> tuple[dict[str, float], Path]:
    """A ``--profile`` entry's point and file, checked against the analysis's parameters: it
    gives a value for every free one (``names``, else nothing could be checked against the
    run), no other, and the values ``--param NAME=VALUE`` fixes where it names them."""
    point, path = profile_run(entry)
    fixed = {name: point.pop(name) for name in list(point) if name in values}
    differing = [f"{name}={value:g}" for name, value in fixed.items() if value != values[name]]
    if differing:
        fixed_text = ", ".join(f"{name}={values[name]:g}" for name in fixed)
        raise InputError(
            f"--profile {entry!r}: {', '.join(differing)} differs from --param {fixed_text}, "
            "the value the analysis is fixed at",
            str(path),
            reason="bad-point",
        )
    unknown = sorted(set(point) - set(names))
    if unknown:
        known = ", ".join(names) or "none; name them with --param"
        raise InputError(
            f"--profile {entry!r}: {', '.join(unknown)} is no --param of this analysis "
            f"(parameters: {known})",
            str(path),
            reason="bad-point",
        )
    missing = [name for name in names if name not in point]
    if missing:
        example = ",".join(f"{name}=..." for name in names)
        raise InputError(
            f"--profile {entry!r} gives no value for {', '.join(missing)}: write the values "
            f"of the run as {path}@{example} (the measured counts are modeled and checked "
            "at them)",
            str(path),
            reason="bad-point",
        )
    return {**point, **fixed}, path


def _print_diagnostics(report) -> None:
    for message in report.shown_diagnostics():
        print(message, file=sys.stderr)


def _report_data(report, clusters: bool) -> dict:
    data = report.to_dict()
    if not clusters:
        data.pop("clusters", None)
    return data


def run(args: argparse.Namespace) -> int:
    """Analyse the sources and print the kernels (and clusters)."""
    sources, flags, options = split_arguments(args)
    if not sources and not (options.binary and options.report):
        raise InputError("perfcast static needs at least one source file")
    names, values = parameter_values(options.param)
    if options.profile and not options.binary:
        raise InputError("--profile needs --binary (the executable the runs were profiled of)")
    if options.binary:
        return run_binary(sources, flags, options, names, values)
    report = _analyzed(sources, flags, options, names, values)
    if options.format == "json":
        print(json_text(_report_data(report, options.clusters)))
        return 0
    print(render_text(report, options.clusters))
    return 0


def _analyzed(
    sources: list[str],
    compile_args: list[str],
    options: argparse.Namespace,
    names: list[str],
    values: dict[str, float],
) -> StaticReport:
    """The sources analysed as the options say (functions asked for, cache), with the
    analysis's diagnostics printed to standard error."""
    report = analyze_source(
        sources,
        names,
        compile_args,
        progress=True,
        values=values,
        functions=options.function or None,
        cache=not options.no_cache,
    )
    _print_diagnostics(report)
    return report


def run_binary(
    sources: list[str],
    compile_args: list[str],
    options: argparse.Namespace,
    names: list[str],
    values: dict[str, float],
) -> int:
    """Build the instruction-mix models of ``options.binary``; print them and write the files asked.

    Parameters
    ----------
    sources : list of str
        The C sources of the binary (at least one unless ``options.report`` names a static
        report, which is then read instead).
    compile_args : list of str
        Flags for clang.
    options : argparse.Namespace
        Carries :data:`BINARY_OPTIONS`, ``format`` and ``clusters``.
    names : list of str
        The free parameters.
    values : dict of str to float
        The parameters fixed at a value.

    Returns
    -------
    int
        0.
    """
    if options.report is not None:
        report = load_static_report(options.report)
        if values:
            report = report.with_values(values)
    else:
        report = _analyzed(sources, compile_args, options, names, values)
    profiles = [_checked_point(entry, names, values) for entry in options.profile or []]
    mix = instruction_mix(
        options.binary,
        report,
        tuple(names),
        options.attribution,
        profiles=profiles,
        values=built_values(compile_args, names),
    )
    if options.mix_json is not None:
        options.mix_json.write_text(render(mix, "json"))
    if options.mix_python is not None:
        options.mix_python.write_text(render(mix, "python"))
    if options.format == "json":
        document = {
            "static": _report_data(report, options.clusters),
            "mix": json.loads(render(mix, "json")),
        }
        print(json_text(document))
        return 0
    sys.stdout.write(render(mix, "text"))
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
