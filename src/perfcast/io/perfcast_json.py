"""perfcast's own JSON: everything an experiment holds, losslessly.

Layout::

    {"format": "perfcast-experiment", "version": 1,
     "parameters": [{"name": "p", "role": "processes"}, {"name": "n", "role": null}],
     "metrics": [{"name": "time", "unit": "s"}],
     "metadata": {"machine": "..."},
     "measurements": [{"kernel": "main->solve", "metric": "time", "point": [4.0, 100.0],
                       "values": [1.2, 1.3]}]}

Each measurement holds a run of consecutive rows of the long table sharing kernel, metric and
point, so the table's row order survives. ``repetitions`` (a list as long as ``values``) appears on
every measurement when the table's repetition numbers are not simply 0, 1, 2, ... per point in row
order. Values are written with full precision, so a round trip gives the identical table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import (
    FIXED_COLUMNS,
    KERNEL,
    METRIC,
    REPETITION,
    VALUE,
    Experiment,
    Metric,
    Parameter,
)
from perfcast.core.jsonin import parse_json
from perfcast.core.numbers import json_float, parse_number
from perfcast.io._records import read_text

if TYPE_CHECKING:
    import pandas as pd

NAME = "perfcast-json"
SUFFIXES = (".perfcast.json", ".json")
FORMAT = "perfcast-experiment"
VERSION = 1


def sniff(path: Path, head: str) -> bool:
    """True when the document declares ``"format": "perfcast-experiment"``."""
    return head.lstrip().startswith("{") and f'"{FORMAT}"' in head


def describe(experiment: Experiment, path: Path) -> dict[str, Any]:
    """Parameters with roles, metrics with units and metadata, as JSON-ready data.

    Raises
    ------
    InputError
        When the metadata holds something JSON cannot represent (``path`` is the file to write).
    """
    try:
        json.dumps(experiment.metadata, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InputError(f"the metadata cannot be written as JSON: {error}", path) from None
    return {
        "parameters": [{"name": p.name, "role": p.role} for p in experiment.parameters],
        "metrics": [{"name": m.name, "unit": m.unit} for m in experiment.metrics.values()],
        "metadata": experiment.metadata,
    }


def parse_description(
    data: dict, path: Path
) -> tuple[list[Parameter] | None, list[Metric], dict[str, Any]]:
    """Inverse of :func:`describe`; parameters are None when ``data`` does not list them."""
    parameters = None
    if "parameters" in data:
        items = data["parameters"]
        if not isinstance(items, list) or not all(
            isinstance(p, dict) and isinstance(p.get("name"), str) for p in items
        ):
            raise InputError("'parameters' must be a list of {name, role} objects", path)
        parameters = [Parameter(p["name"], p.get("role")) for p in items]
        for parameter in parameters:
            if parameter.name in FIXED_COLUMNS:
                raise InputError(f"a parameter may not be named '{parameter.name}'", path)
    items = data.get("metrics", [])
    if not isinstance(items, list) or not all(
        isinstance(m, dict) and isinstance(m.get("name"), str) for m in items
    ):
        raise InputError("'metrics' must be a list of {name, unit} objects", path)
    metrics = [Metric(m["name"], str(m.get("unit") or "")) for m in items]
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict):
        raise InputError("'metadata' must be an object", path)
    return parameters, metrics, metadata


def _runs(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """Start index of every run of rows sharing kernel, metric and point, plus the end."""
    keys = frame[[KERNEL, METRIC, *names]]
    changed = (keys.iloc[1:].to_numpy() != keys.iloc[:-1].to_numpy()).any(axis=1)
    return np.concatenate([[0], np.flatnonzero(changed) + 1, [len(frame)]])


def write(experiment: Experiment, path: Path) -> None:
    """Write ``experiment`` as perfcast JSON (every repetition, units, roles, metadata)."""
    names = list(experiment.parameter_names)
    frame = experiment.frame
    natural = frame.groupby([KERNEL, METRIC, *names], sort=False).cumcount().to_numpy()
    repetitions = frame[REPETITION].to_numpy()
    keep_repetitions = not np.array_equal(natural, repetitions)
    points = frame[names].to_numpy(dtype=float)
    values = frame[VALUE].to_numpy(dtype=float)
    kernels, metrics = frame[KERNEL].to_numpy(), frame[METRIC].to_numpy()
    measurements = []
    bounds = _runs(frame, names) if len(frame) else np.array([0])
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        entry = {
            "kernel": kernels[start],
            "metric": metrics[start],
            "point": points[start].tolist(),
            "values": values[start:end].tolist(),
        }
        if keep_repetitions:
            entry["repetitions"] = repetitions[start:end].tolist()
        measurements.append(entry)
    document = {"format": FORMAT, "version": VERSION, **describe(experiment, path)}
    document["measurements"] = measurements
    Path(path).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


def _measurement(item: Any, index: int, dimensions: int, path: Path) -> dict[str, Any]:
    where = f"measurements[{index}]"
    if not isinstance(item, dict):
        raise InputError(f"{where} is not an object", path)
    for key in (KERNEL, METRIC):
        if not isinstance(item.get(key), str):
            raise InputError(f"{where} has no {key} name", path)
    point = item.get("point")
    if not isinstance(point, list) or len(point) != dimensions:
        raise InputError(
            f"inconsistent parameters: {where} needs a point of {dimensions} coordinates", path
        )
    values = item.get("values")
    if not isinstance(values, list) or not values:
        raise InputError(f"{where} has no values; a point needs at least one repetition", path)
    repetitions = item.get("repetitions")
    if repetitions is not None and (
        not isinstance(repetitions, list)
        or len(repetitions) != len(values)
        or not all(isinstance(r, int) and not isinstance(r, bool) for r in repetitions)
    ):
        raise InputError(f"{where}: 'repetitions' must list one integer per value", path)
    return {
        "point": [parse_number(c, f"{where}: coordinate", path, None) for c in point],
        "values": [parse_number(v, f"{where}: value", path, None) for v in values],
        "repetitions": repetitions,
    }


def read(path: Path) -> Experiment:
    """Read perfcast JSON.

    Raises
    ------
    InputError
        For malformed JSON (naming the line) or an invalid measurement (naming the record).
    """
    path = Path(path)
    try:
        data = parse_json(read_text(path), parse_float=json_float)
    except json.JSONDecodeError as error:
        raise InputError(f"malformed JSON: {error.msg}", path, error.lineno) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f'not a perfcast experiment (no "format": "{FORMAT}")', path)
    if data.get("version") != VERSION:
        raise InputError(f"unsupported version {data.get('version')!r}", path)
    parameters, metrics, metadata = parse_description(data, path)
    if not parameters:
        raise InputError("the experiment lists no parameters", path)
    items = data.get("measurements")
    if not isinstance(items, list) or not items:
        raise InputError("the experiment holds no measurements", path)
    columns: dict[str, list] = {KERNEL: [], METRIC: [], REPETITION: [], VALUE: []}
    coordinates: list[list[float]] = []
    with_repetitions = None
    for index, item in enumerate(items):
        entry = _measurement(item, index, len(parameters), path)
        has = entry["repetitions"] is not None
        if with_repetitions is None:
            with_repetitions = has
        elif has != with_repetitions:
            raise InputError(
                f"measurements[{index}]: 'repetitions' must be given for all or none", path
            )
        count = len(entry["values"])
        columns[KERNEL] += [item[KERNEL]] * count
        columns[METRIC] += [item[METRIC]] * count
        columns[VALUE] += entry["values"]
        columns[REPETITION] += entry["repetitions"] or [0] * count
        coordinates += [entry["point"]] * count
    table = np.asarray(coordinates, dtype=float)
    return Experiment.from_columns(
        columns[KERNEL],
        columns[METRIC],
        {parameter.name: table[:, column] for column, parameter in enumerate(parameters)},
        columns[VALUE],
        columns[REPETITION] if with_repetitions else None,
        parameters=parameters,
        metrics=metrics,
        metadata=metadata,
        source=str(path),
    )
