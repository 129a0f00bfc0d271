"""``perfcast predict``: predictions with intervals at unmeasured configurations."""

from __future__ import annotations

import argparse
import sys

from perfcast.api import (
    TABLE_FORMATS,
    InputError,
    convolve,
    extrapolate_signature,
    load,
    load_learned,
    load_machine,
    merge_signatures,
    parse_point,
    predict,
    predict_runs,
    render,
    render_learned,
    render_pmac,
    render_warnings,
    run_prediction_warnings,
)
from perfcast.commands.common import add_input_arguments, terminal_width, write_output
from perfcast.commands.model import (
    ALL_METRICS,
    add_model_arguments,
    fit_from_args,
    strict_status,
    with_warnings,
)


def _level(text: str) -> float:
    """``--level``: a probability strictly between 0 and 1 (``nan`` and ``1.5`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number strictly between 0 and 1, not {text!r}")
    return value


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``perfcast predict``."""
    parser = subparsers.add_parser("predict")
    add_input_arguments(parser, optional=True)
    add_model_arguments(parser, warnings=True)
    parser.add_argument("--at", metavar="p=4096,n=1e6", help="the configuration to predict")
    parser.add_argument(
        "--runs",
        metavar="TABLE",
        help="predict every run of this run table with the learned model FILE (perfcast learn)",
    )
    parser.add_argument("--level", type=_level, default=0.95, help="prediction interval level")
    parser.add_argument("--format", choices=TABLE_FORMATS, default="text", help="output format")
    parser.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    group = parser.add_argument_group("trace extrapolation (PMaC), instead of FILE")
    group.add_argument(
        "--signature",
        action="append",
        metavar="FILE",
        help="signature(s): at three or more core counts extrapolated to --at, then convolved",
    )
    group.add_argument("--machine", metavar="FILE", help="machine profile to convolve with")
    group.add_argument(
        "--forms", choices=("pmac", "pmnf", "both"), default="pmac", help="extrapolation forms"
    )
    # The options a signature prediction does not read, with their defaults: given with
    # --signature, they are refused rather than ignored.
    unused = {
        action.dest: (action.option_strings[-1], action.default)
        for action in parser._actions
        if action.option_strings and action.dest not in _SIGNATURE_OPTIONS
    }
    parser.set_defaults(run=run, signature_unused=unused)


#: What ``predict --signature`` reads (besides the ``--format`` text or json).
_SIGNATURE_OPTIONS = {"help", "signature", "machine", "forms", "at", "format", "out"}


def run(args: argparse.Namespace) -> int:
    """Fit, predict and print; the text output ends with the predictions' warnings (far
    extrapolation) and the models' (quality gates). With ``--runs``, FILE is a learned model
    and every row of the run table is predicted. With ``--signature``: extrapolate and
    convolve instead."""
    if args.signature or args.machine:
        return _run_signature(args)
    if args.forms != "pmac":
        raise InputError("--forms is for signature predictions (--signature and --machine)")
    if args.file is None:
        raise InputError("predict needs FILE (or --signature and --machine)")
    if args.runs is not None:
        return _predict_runs(args)
    if args.at is None:
        raise InputError("nothing to predict: give a configuration with --at, or --runs TABLE")
    if args.metric == ALL_METRICS:
        raise InputError(
            "predict ranks the kernels of one metric by cost; name the metric with --metric"
        )
    point = parse_point(args.at, source="--at")
    models = fit_from_args(args)
    predictions = predict(models, point, level=args.level)
    warnings = render_warnings(predictions) + render_warnings(models)
    text = render(predictions, args.format, width=terminal_width(args.out))
    write_output(with_warnings(text, warnings, args), args.out)
    return strict_status(warnings, args)


def _predict_runs(args: argparse.Namespace) -> int:
    """A prediction per row of ``--runs`` by the learned model FILE; row warnings follow the
    text, or go to standard error beside JSON and CSV."""
    if args.at is not None:
        raise InputError("--at and --runs predict different things; give one of them")
    if args.format == "markdown":
        raise InputError("--runs prints text, json or csv")
    model = load_learned(args.file)
    predictions = predict_runs(model, args.runs, level=args.level)
    write_output(render_learned(predictions, args.format, model_warnings=model.warnings_), args.out)
    warnings = run_prediction_warnings(predictions)
    warnings += "".join(f"model: {w}\n" for w in model.warnings_)
    if warnings and args.format != "text" and not args.quiet:
        sys.stderr.write("".join(f"perfcast: warning: {w}\n" for w in warnings.splitlines()))
    return 0


def _run_signature(args: argparse.Namespace) -> int:
    if not args.signature or not args.machine or args.file is not None:
        raise InputError("a signature prediction takes --signature and --machine, and no FILE")
    for dest, (option, default) in args.signature_unused.items():
        if getattr(args, dest) != default:
            raise InputError(f"{option} does not apply to a signature prediction")
    if args.format not in ("text", "json"):
        raise InputError(f"a signature prediction prints text or json, not {args.format}")
    signature = merge_signatures([load(path) for path in args.signature])
    machine = load_machine(args.machine)
    warnings: list[str] = []
    if len(signature.points()) == 1 and args.at is not None:
        raise InputError("a signature at one point is convolved where it was taken: drop --at")
    if len(signature.points()) > 1:
        if args.at is None:
            raise InputError("signatures at several points are extrapolated: give --at p=N")
        extrapolation = extrapolate_signature(signature, args.at, forms=args.forms)
        signature = extrapolation.signature
        warnings = extrapolation.warnings
    result = convolve(signature, machine)
    result.warnings[:0] = warnings
    text = render_pmac(result, "json" if args.format == "json" else "text")
    write_output(text, args.out)
    return 0
