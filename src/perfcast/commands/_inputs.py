"""Arguments and loading shared by the diagnosis commands (not a sub-command itself)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from perfcast.commands.common import readable_formats
from perfcast.commands.model import add_model_arguments, fit_models
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model
from perfcast.io import read_experiment


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


def choose_metric(experiment: Experiment, metric: str | None) -> str:
    """``metric`` if given (and measured), else the experiment's default metric."""
    if metric is None:
        return experiment.default_metric()
    if metric not in experiment.metric_names:
        names = ", ".join(experiment.metric_names)
        raise InputError(f"no metric '{metric}' (have {names})", experiment.source)
    return metric


def load_experiment(path: str, args: argparse.Namespace) -> tuple[Experiment, str]:
    """Read the experiment, keep the chosen metric and kernels; returns it and the metric."""
    experiment = read_experiment(path, args.input_format)
    metric = choose_metric(experiment, args.metric)
    return experiment.select(kernels=args.kernel, metric=metric), metric


def read_models(path: str, experiment: Experiment, metric: str) -> list[Model]:
    """Models from a JSON file (``perfcast model --format json``) for the experiment's kernels.

    Raises
    ------
    InputError
        When the file is not such JSON, a model names a kernel the experiment lacks, or a
        kernel of the experiment has no model.
    """
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", path) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"not JSON: {error}", path) from None
    items = data.get("models") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise InputError('expected {"models": [...]} as written by perfcast model', path)
    models = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError(f"model {index + 1} is not an object", path)
        models.append(Model.from_dict(item, source=f"{path}: model {index + 1}"))
    kernels = set(experiment.kernels)
    chosen = [m for m in models if m.metric == metric and m.kernel in kernels]
    missing = sorted(kernels - {m.kernel for m in chosen})
    if missing:
        raise InputError(f"no {metric} model for kernel '{missing[0]}' of the experiment", path)
    return chosen


def obtain_models(
    experiment: Experiment, metric: str, args: argparse.Namespace, path: str | None
) -> list[Model]:
    """Models from ``path`` when given, else fitted."""
    if path:
        return read_models(path, experiment, metric)
    return fit_models(experiment, args, metric)
