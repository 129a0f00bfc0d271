"""Arguments and loading shared by the diagnosis commands (not a sub-command itself)."""

from __future__ import annotations

import argparse

from perfcast.api import Experiment, ModelSet, load
from perfcast.commands.common import readable_formats
from perfcast.commands.model import add_model_arguments, fit_metrics, warn_skipped


def add_analysis_arguments(parser: argparse.ArgumentParser) -> None:
    """``--input-format`` plus the modeling options of ``perfcast model``."""
    parser.add_argument(
        "--input-format",
        choices=readable_formats(),
        help="format of the experiment files (default: detect)",
    )
    add_model_arguments(parser)


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format text|json`` and ``--out FILE``."""
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--out", help="write to this file instead of standard output")


def load_experiment(path: str, args: argparse.Namespace) -> tuple[Experiment, str]:
    """Read the experiment, keep the chosen metric (``--metric``, else the default one) and
    kernels; returns it and the metric."""
    experiment = load(path, format=args.input_format, kernels=args.kernel, exclude=args.exclude)
    metric = args.metric or experiment.default_metric()
    return experiment.select(metric=metric), metric


def obtain_models(
    experiment: Experiment, metric: str, args: argparse.Namespace, path: str | None
) -> ModelSet:
    """Models from ``path`` when given (a warning on stderr for each kernel they skipped), else
    fitted."""
    if path:
        models = ModelSet.load(path).for_experiment(experiment, metric)
        warn_skipped(models)
        return models
    return fit_metrics(experiment, args, [metric])
