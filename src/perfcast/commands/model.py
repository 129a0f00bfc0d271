"""``perfcast model``: fit a scaling model to every kernel and print the models."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shlex
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from perfcast.api import (
    LOCATIONS,
    TABLE_FORMATS,
    Experiment,
    InputError,
    ModelSet,
    analyze_source,
    dask_client,
    fit,
    fit_stream,
    inclusive_metric,
    load,
    modelers,
    parse_point,
    render,
    render_warnings,
    scheduler_address,
)
from perfcast.commands.common import add_input_arguments, terminal_width, write_output

#: Modelers that ``--segments`` can fit each segment with.
SEGMENT_BASES = ("pmnf", "sparse")
#: ``--metric`` value that models every metric of the experiment (``perfcast model`` only).
ALL_METRICS = "all"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast model``."""
    parser = subparsers.add_parser("model")
    add_input_arguments(parser)
    add_model_arguments(parser, all_metrics=True, warnings=True)
    parser.add_argument("--format", choices=TABLE_FORMATS, default="text", help="output format")
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    parser.add_argument(
        "--at",
        metavar="p=4096,n=1e6",
        help="order the tables by cost at this point (default: the largest measured values)",
    )
    parser.add_argument(
        "--tree",
        action="store_true",
        help="call tree of call-path kernels (a->b->c): exclusive and inclusive (*_inclusive "
        "metrics) values apart, totals and shares from the exclusive ones",
    )
    add_cluster_arguments(parser)
    parser.add_argument(
        "--stream-kernels",
        type=_kernel_count,
        metavar="N",
        help="for inputs larger than memory (Parquet tables, Extra-P JSON Lines, each "
        "kernel's rows together): read N kernels at a time and write their models before "
        "reading on; needs --format json; noise statistics are pooled per block",
    )
    parser.set_defaults(run=run)


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """``--workers`` and ``--scheduler``: model on a Dask cluster (see :func:`cluster_of`)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=_worker_count,
        metavar="N",
        help="model on a local Dask cluster of N worker processes (same models as without)",
    )
    where.add_argument(
        "--scheduler",
        type=_scheduler,
        metavar="tcp://HOST:PORT",
        help="model on the workers of this running Dask scheduler",
    )


#: Most local worker processes per core: more only compete for the cores (and a typo such as
#: ``--workers 100000`` would start processes until the machine gives out).
LOCAL_WORKERS_PER_CORE = 4


def _worker_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of workers >= 1")
    cores = os.cpu_count() or 1
    if count > LOCAL_WORKERS_PER_CORE * cores:
        raise argparse.ArgumentTypeError(
            f"'{text}' workers: a local cluster takes at most {LOCAL_WORKERS_PER_CORE * cores} "
            f"({LOCAL_WORKERS_PER_CORE} per core of this machine's {cores}); for more, start a "
            "Dask cluster and give its --scheduler"
        )
    return count


def _scheduler(text: str) -> str:
    try:
        return scheduler_address(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


@contextlib.contextmanager
def cluster_of(args: argparse.Namespace) -> Iterator[Any]:
    """The Dask client ``--workers`` or ``--scheduler`` asks for (None without either),
    closed (and a local cluster stopped) on leaving the block."""
    if args.workers is None and args.scheduler is None:
        yield None
        return
    # A failure of the cluster ends the command with one message of its own; dask.distributed
    # would log it first, tracebacks of its reconnection attempts and of closing included.
    levels: dict[logging.Logger, int] = {}
    try:
        with dask_client(scheduler=args.scheduler, workers=args.workers) as client:
            for name in list(logging.root.manager.loggerDict):
                if name == "distributed" or name.startswith("distributed."):
                    logger = logging.getLogger(name)
                    levels[logger] = logger.level
                    logger.setLevel(logging.CRITICAL)
            yield client
    finally:
        for logger, level in levels.items():
            logger.setLevel(level)


def add_model_arguments(
    parser: argparse.ArgumentParser, all_metrics: bool = False, warnings: bool = False
) -> None:
    """Options selecting what to model and how (shared by model, predict and the analyses).

    ``all_metrics`` offers ``--metric all`` (every metric of the experiment, each on its own);
    ``warnings`` offers ``--quiet`` and makes ``--strict`` fail on warnings too (commands that
    print them, see :func:`with_warnings` and :func:`strict_status`).
    """
    parser.add_argument(
        "--modeler",
        choices=modelers(standalone=True),
        default="pmnf",
        help="default: pmnf (--static makes it hybrid)",
    )
    metric_help = "metric to model (default: the only one, or time)"
    if all_metrics:
        metric_help += f"; '{ALL_METRICS}' models every metric"
    parser.add_argument("--metric", help=metric_help)
    parser.add_argument(
        "--kernel",
        action="append",
        metavar="GLOB",
        help="only kernels matching this pattern (repeatable: kernels matching any)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out kernels matching this pattern (repeatable)",
    )
    parser.add_argument(
        "--static",
        action="append",
        metavar="SRC.c",
        help="hybrid modeling: take candidate terms from a static analysis of these C sources",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME[=SOURCE]",
        help="with --static: an experiment parameter and the source variable it stands for",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SOURCE=VALUE",
        help="with --static: a source variable with the same value in every run (repeatable)",
    )
    parser.add_argument(
        "--static-flags", default="", metavar="FLAGS", help="with --static: flags for clang"
    )
    parser.add_argument(
        "--negative-exponents",
        choices=("auto", "yes", "no"),
        default="auto",
        help="decreasing terms such as 1/p (auto: where the data decreases or, for one "
        "parameter, where growing terms leave a lack of fit)",
    )
    parser.add_argument(
        "--location",
        choices=LOCATIONS,
        default="adaptive",
        help="how repetitions give a point's value (adaptive: mean, midrange, trimmed mean or "
        "median, whichever the noise shape of all kernels favours)",
    )
    parser.add_argument(
        "--segments",
        choices=("auto", "1", "2", "3"),
        help="segmented models: one model per range of a parameter where the trend changes "
        "(auto: where an F-test finds segments significant; a number: that many where "
        "possible), fitted by --modeler (pmnf or sparse)",
    )
    parser.add_argument(
        "--segment-parameter",
        metavar="NAME",
        help="with --segments: the parameter to segment along (default: the best split of any)",
    )
    strict_help = "fail (exit 2) when a kernel cannot be modeled instead of skipping it"
    if warnings:
        strict_help += ", or when a model or prediction carries a warning"
        parser.add_argument(
            "--quiet", action="store_true", help="leave the warnings out of the text output"
        )
    parser.add_argument("--strict", action="store_true", help=strict_help)


def modeler_settings(args: argparse.Namespace) -> dict[str, object]:
    """Settings every modeler takes from the command line."""
    negative = {"auto": None, "yes": True, "no": False}[args.negative_exponents]
    return {"negative_exponents": negative, "location": args.location}


def fit_from_args(args: argparse.Namespace, client: Any = None) -> ModelSet:
    """Load the experiment named by ``args`` and fit its models (of every metric with
    ``--metric all``; of the default metric and its inclusive counterpart with ``--tree``),
    on the Dask cluster of ``client`` when given; the fit's notes go to stderr."""
    experiment = load(
        args.file, format=args.input_format, kernels=args.kernel, exclude=args.exclude
    )
    metrics: list[str | None] = [args.metric]
    if args.metric == ALL_METRICS:
        metrics = list(experiment.metric_names)
    elif args.metric is None and getattr(args, "tree", False):  # predict has no --tree
        default = experiment.default_metric()
        inclusive = inclusive_metric(default, experiment.metric_names)
        metrics = [default] if inclusive is None else [default, inclusive]
    return fit_metrics(experiment, args, metrics, client)


def fit_metrics(
    experiment: Experiment,
    args: argparse.Namespace,
    metrics: Sequence[str | None],
    client: Any = None,
) -> ModelSet:
    """Fit ``metrics`` (None: the default metric) with the modeler the options name, hybrid
    with ``--static``, on the Dask cluster of ``client`` when given; print the fit's notes and
    one warning per skipped kernel on stderr."""
    chosen = [metric or experiment.default_metric() for metric in metrics]
    if args.static and (args.segments or args.modeler == "segmented"):
        raise InputError("--segments: segmented models are fitted by pmnf or sparse, not --static")
    if args.static:
        settings = {**modeler_settings(args), **_static_settings(experiment, args)}
        models = fit(
            experiment,
            modeler="hybrid",
            metric=chosen,
            strict=args.strict,
            progress=True,
            client=client,
            **settings,
        )
    else:
        modeler, settings = _segmented_choice(experiment, args)
        models = fit(
            experiment,
            modeler=modeler,
            metric=chosen,
            strict=args.strict,
            progress=True,
            client=client,
            **modeler_settings(args),
            **settings,
        )
    for note in models.notes:
        advice = " (--location mean for means)" if note.startswith("point values:") else ""
        print(note + advice, file=sys.stderr)
    warn_skipped(models)
    return models


def _segmented_choice(
    experiment: Experiment, args: argparse.Namespace
) -> tuple[str, dict[str, object]]:
    """The modeler and its extra settings: ``segmented`` over ``--modeler`` with
    ``--segments`` (or ``--modeler segmented``), else ``--modeler`` itself."""
    if (
        args.segment_parameter is not None
        and args.segment_parameter not in experiment.parameter_names
    ):
        raise InputError(
            f"--segment-parameter {args.segment_parameter}: the experiment has no such "
            f"parameter (it has {', '.join(experiment.parameter_names)})"
        )
    return _modeler_choice(args)


def warn_skipped(models: ModelSet) -> None:
    """One line on stderr for every kernel the fit skipped."""
    for skip in models.skipped:
        print(
            f"perfcast: warning: kernel '{skip.kernel}' ({skip.metric}) skipped: {skip.reason}",
            file=sys.stderr,
        )


def skipped_summary(models: ModelSet) -> str:
    """How many kernels were skipped and why, one line per reason (empty when none)."""
    by_reason: dict[str, list[str]] = {}
    for skip in models.skipped:
        by_reason.setdefault(skip.reason, []).append(skip.kernel)
    lines = []
    for reason, kernels in by_reason.items():
        shown = ", ".join(kernels[:3]) + (
            f" and {len(kernels) - 3} more" if len(kernels) > 3 else ""
        )
        noun = "kernel" if len(kernels) == 1 else "kernels"
        lines.append(f"{len(kernels)} {noun} skipped ({shown}): {reason}")
    return "\n".join(lines)


def _static_settings(experiment: Experiment, args: argparse.Namespace) -> dict[str, object]:
    """The hybrid modeler's static report and name mappings from ``--static``, ``--param``,
    ``--set`` and ``--static-flags``; the analysis' diagnostics go to stderr."""
    mapping = dict(_parameter_pair(text) for text in args.param)
    missing = [p for p in mapping if p not in experiment.parameter_names]
    if missing:
        raise InputError(f"--param {missing[0]}: the experiment has no such parameter")
    constants = dict(_constant(text) for text in args.set)
    sources = [*mapping.values(), *constants]
    try:
        flags = shlex.split(args.static_flags)
    except ValueError as error:
        raise InputError(f"--static-flags: {error}", value=args.static_flags) from None
    report = analyze_source(args.static, sources, flags, progress=True)
    for message in report.diagnostics:
        print(message, file=sys.stderr)
    return {"report": report, "parameter_map": mapping, "constants": constants}


def _parameter_pair(text: str) -> tuple[str, str]:
    name, _, source = text.partition("=")
    if not name:
        raise InputError(f"--param '{text}' is not NAME or NAME=SOURCE")
    return name, source or name


def _constant(text: str) -> tuple[str, float]:
    name, _, value = text.partition("=")
    try:
        return name, float(value)
    except ValueError:
        raise InputError(f"--set '{text}' is not SOURCE=NUMBER") from None


def with_warnings(text: str, warnings: str, args: argparse.Namespace) -> str:
    """``text`` followed by the ``warnings`` lines (of :func:`render_warnings`) in the text
    format unless ``--quiet``."""
    if args.format != "text" or args.quiet or not warnings:
        return text
    return text.rstrip("\n") + "\n\nwarnings:\n" + warnings


def strict_status(warnings: str, args: argparse.Namespace) -> int:
    """Exit status 2 with ``--strict`` when there are warnings (saying so on stderr), else 0."""
    if not (args.strict and warnings):
        return 0
    count = warnings.count("\n")
    print(
        f"perfcast: error: {count} warning(s); --strict makes any warning fatal",
        file=sys.stderr,
    )
    return 2


def _kernel_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of kernels >= 1")
    return count


#: Options that need every kernel at once, refused with ``--stream-kernels``.
WHOLE_INPUT_OPTIONS = ("tree", "static", "kernel", "at")


def run_streamed(args: argparse.Namespace) -> int:
    """``--stream-kernels``: fit block by block, the model JSON written as it goes."""
    given = [name for name in WHOLE_INPUT_OPTIONS if getattr(args, name)]
    if given or args.exclude:
        option = "--" + (given[0] if given else "exclude")
        raise InputError(f"{option}: needs the whole input at once, not with --stream-kernels")
    if args.format != "json":
        raise InputError("--stream-kernels writes the models as JSON: add --format json")
    every = args.metric == ALL_METRICS
    with cluster_of(args) as client:
        modeler, settings = _modeler_choice(args)
        summary = fit_stream(
            args.file,
            sys.stdout if args.out is None else args.out,
            kernels=args.stream_kernels,
            modeler=modeler,
            metric=None if every else args.metric,
            every_metric=every,
            strict=args.strict,
            client=client,
            format=args.input_format,
            **modeler_settings(args),
            **settings,
        )
    for note in summary.notes:
        print(note, file=sys.stderr)
    for skip in summary.skipped:
        print(
            f"perfcast: warning: kernel '{skip.kernel}' ({skip.metric}) skipped: {skip.reason}",
            file=sys.stderr,
        )
    if args.strict and summary.warned:
        print(
            f"perfcast: error: {summary.warned} model(s) with warnings; --strict makes any "
            "warning fatal",
            file=sys.stderr,
        )
        return 2
    return 0


def _modeler_choice(args: argparse.Namespace) -> tuple[str, dict[str, object]]:
    """The modeler and its extra settings: ``segmented`` over ``--modeler`` with
    ``--segments`` (or ``--modeler segmented``), else ``--modeler`` itself."""
    if args.segment_parameter is not None and not args.segments and args.modeler != "segmented":
        raise InputError("--segment-parameter: only with --segments")
    if not args.segments and args.modeler != "segmented":
        return args.modeler, {}
    base = "pmnf" if args.modeler == "segmented" else args.modeler
    if base not in SEGMENT_BASES:
        raise InputError(f"--segments: segmented models are fitted by pmnf or sparse, not {base}")
    return "segmented", {
        "segments": args.segments or "auto",
        "base": base,
        "parameter": args.segment_parameter,
    }


def run(args: argparse.Namespace) -> int:
    """Fit and print; the text output ends with the kernels skipped and the models' warnings."""
    if args.stream_kernels is not None:
        return run_streamed(args)
    with cluster_of(args) as client:
        models = fit_from_args(args, client)
    warnings = render_warnings(models)
    if args.format == "json" and not args.tree:  # model by model: never one large string
        models.write_json(sys.stdout if args.out is None else args.out)
        return strict_status(warnings, args)
    at = parse_point(args.at, models.parameters, source="--at") if args.at else None
    width = terminal_width(args.out)
    text = render(models, args.format, at=at, width=width, tree=args.tree)
    summary = skipped_summary(models)
    if args.format == "text" and summary:
        text = text.rstrip("\n") + "\n\n" + summary
    write_output(with_warnings(text, warnings, args), args.out)
    return strict_status(warnings, args)
