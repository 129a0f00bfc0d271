"""Arguments and loading shared by the diagnosis commands (not a sub-command itself)."""

from __future__ import annotations

import argparse

from perfcast.api import ModelSet, load, load_metric
from perfcast.commands.common import readable_formats
from perfcast.commands.model import add_model_arguments, fit_metrics
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.model.modelset import measured_ranges


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
    experiment = load(path, format=args.input_format, kernels=args.kernel)
    metric = args.metric or experiment.default_metric()
    return load_metric(experiment, metric), metric


def read_models(path: str, experiment: Experiment, metric: str) -> ModelSet:
    """Models from a JSON file (``perfcast model --format json``) for the experiment's kernels.

    Raises
    ------
    InputError
        When the file is not such JSON, or a kernel of the experiment has no model.
    """
    models = ModelSet.load(path)
    kernels = set(experiment.kernels)
    chosen = [m for m in models.models if m.metric == metric and m.kernel in kernels]
    missing = sorted(kernels - {m.kernel for m in chosen})
    if missing:
        raise InputError(f"no {metric} model for kernel '{missing[0]}' of the experiment", path)
    return ModelSet(
        chosen,
        modeler=models.modeler,
        settings=models.settings,
        ranges=models.ranges or measured_ranges(experiment),
        source=models.source,
        notes=models.notes,
    )


def obtain_models(
    experiment: Experiment, metric: str, args: argparse.Namespace, path: str | None
) -> ModelSet:
    """Models from ``path`` when given, else fitted."""
    if path:
        return read_models(path, experiment, metric)
    return fit_metrics(experiment, args, [metric])
