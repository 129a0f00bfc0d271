"""Extra-P's JSON input format, in both of its layouts.

New layout::

    {"parameters": ["x", "y"],
     "measurements": {"<call path>": {"<metric>": [{"point": [4, 10], "values": [3.5, 3.6]}]}}}

Legacy layout (recognised by its ``callpaths`` list), where every object carries an ``id``::

    {"parameters": [{"id": 1, "name": "x"}], "callpaths": [{"id": 1, "name": "sweep"}],
     "metrics": [{"id": 1, "name": "time"}],
     "coordinates": [{"id": 1, "parameter_value_pairs": [{"parameter_id": 1,
                                                           "parameter_value": 4}]}],
     "measurements": [{"coordinate_id": 1, "callpath_id": 1, "metric_id": 1, "value": 3.5}]}

Choices that follow Extra-P 4.2.5's reader
------------------------------------------
- Legacy lists are ordered by ``id``; legacy measurements sharing coordinate, call path and metric
  are the repetitions of one point, in file order.
- A declared point without any measurement makes the file invalid (as Extra-P's test file
  ``input_11.JSON`` shows), and so does a declared call path or metric without data.

Where perfcast differs, on purpose
----------------------------------
- Legacy references are resolved by ``id`` (Extra-P uses ``id - 1`` as a list index, which is the
  same only when the ids are 1, 2, 3, ...).
- Kernels need not be measured at every point; non-finite values and points given twice are
  errors naming the record.

Writing produces the new layout (``--output-format extrap-json``); it has no room for units,
roles, metadata or repetition numbers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from perfcast.core.errors import InputError
from perfcast.core.experiment import KERNEL, METRIC, REPETITION, VALUE, Experiment
from perfcast.core.jsonin import parse_json
from perfcast.core.numbers import json_float, parse_number
from perfcast.io._records import (
    Rows,
    first_content_line,
    json_object,
    read_text,
    talpas_object,
)

NAME = "extrap-json"
SUFFIXES: tuple[str, ...] = ()


def sniff(path: Path, head: str) -> bool:
    """True for a JSON document that is neither perfcast's own nor a line-per-record file."""
    if not head.lstrip().startswith("{"):
        return False
    first = first_content_line(head)
    record = json_object(first)
    if record is not None:
        return "measurements" in record and "format" not in record
    return talpas_object(first) is None


def _load(path: Path) -> Any:
    text = read_text(path)
    try:
        return parse_json(text, parse_float=json_float)
    except json.JSONDecodeError as error:
        raise InputError(f"malformed JSON: {error.msg}", path, error.lineno) from None


def _require(data: Any, key: str, kind: type, where: str, path: Path) -> Any:
    if not isinstance(data, dict) or key not in data:
        raise InputError(f"{where} has no '{key}'", path)
    value = data[key]
    if not isinstance(value, kind):
        raise InputError(f"'{key}' of {where} is not a {kind.__name__}", path)
    return value


def _identifier(raw: Any, where: str, path: Path) -> int:
    """An ``id`` or ``*_id`` field as an integer (Extra-P converts them with ``int``)."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lstrip("-").isdigit():
        return int(raw)
    raise InputError(f"{where}: id {json.dumps(raw)} is not an integer", path)


def _by_id(items: list, what: str, path: Path) -> dict[int, dict]:
    table: dict[int, dict] = {}
    for index, item in enumerate(items):
        where = f"{what}[{index}]"
        if not isinstance(item, dict) or "id" not in item:
            raise InputError(f"{where} has no 'id'", path)
        key = _identifier(item["id"], where, path)
        if key in table:
            raise InputError(f"{where}: id {key} used twice", path)
        table[key] = item
    return dict(sorted(table.items()))


def _names(items: list, what: str, path: Path) -> dict[int, str]:
    names = {}
    for key, item in _by_id(items, what, path).items():
        name = item.get("name")
        if not isinstance(name, str):
            raise InputError(f"{what} with id {key} has no name", path)
        names[key] = name
    return names


def _read_legacy(data: dict, path: Path) -> Experiment:
    parameters = _names(
        _require(data, "parameters", list, "the document", path), "parameters", path
    )
    kernels = _names(_require(data, "callpaths", list, "the document", path), "callpaths", path)
    metrics = _names(_require(data, "metrics", list, "the document", path), "metrics", path)
    coordinates = _require(data, "coordinates", list, "the document", path)
    points: dict[int, tuple[float, ...]] = {}
    for key, item in _by_id(coordinates, "coordinates", path).items():
        where = f"coordinate with id {key}"
        pairs = _require(item, "parameter_value_pairs", list, where, path)
        values: dict[int, float] = {}
        for pair in pairs:
            if not isinstance(pair, dict) or "parameter_id" not in pair:
                raise InputError(f"{where}: a parameter value pair has no parameter_id", path)
            parameter = _identifier(pair["parameter_id"], where, path)
            if parameter not in parameters or parameter in values:
                problem = "an unknown" if parameter not in parameters else "a repeated"
                raise InputError(f"{where} has {problem} parameter_id {parameter}", path)
            values[parameter] = parse_number(
                pair.get("parameter_value"),
                f"{where}: parameter '{parameters[parameter]}'",
                path,
                None,
            )
        if set(values) != set(parameters):
            raise InputError(
                f"inconsistent parameters: {where} has {len(values)} of the "
                f"{len(parameters)} parameters",
                path,
            )
        points[key] = tuple(values[p] for p in parameters)
    rows = Rows(path)
    used: dict[str, set] = {"callpath": set(), "metric": set(), "coordinate": set()}
    tables: dict[str, Mapping[int, object]] = {
        "callpath": kernels,
        "metric": metrics,
        "coordinate": points,
    }
    for index, item in enumerate(_require(data, "measurements", list, "the document", path)):
        where = f"measurements[{index}]"
        refs: dict[str, int] = {}
        for kind, table in tables.items():
            if not isinstance(item, dict) or f"{kind}_id" not in item:
                raise InputError(f"{where} has no {kind}_id", path)
            ref = _identifier(item[f"{kind}_id"], where, path)
            if ref not in table:
                raise InputError(f"{where}: unknown {kind}_id {ref!r}", path)
            used[kind].add(ref)
            refs[kind] = ref
        value = parse_number(item.get("value"), f"{where}: value", path, None)
        rows.add(
            kernels[refs["callpath"]], metrics[refs["metric"]], points[refs["coordinate"]], [value]
        )
    for kind, table in tables.items():
        for key, entry in table.items():
            if key not in used[kind]:
                shown = (
                    entry
                    if kind != "coordinate"
                    else dict(zip(parameters.values(), points[key], strict=True))
                )
                raise InputError(f"{kind} {shown} (id {key}) has no measurements", path)
    return rows.experiment(list(parameters.values()))


def _read_new(data: dict, path: Path) -> Experiment:
    parameters = _require(data, "parameters", list, "the document", path)
    if not parameters or not all(isinstance(p, str) for p in parameters):
        raise InputError("'parameters' must be a non-empty list of names", path)
    rows = Rows(path)
    for kernel, by_metric in _require(data, "measurements", dict, "the document", path).items():
        if not isinstance(by_metric, dict) or not by_metric:
            raise InputError(f"call path '{kernel}' has no data", path)
        for metric, items in by_metric.items():
            if not isinstance(items, list) or not items:
                raise InputError(f"call path '{kernel}', metric '{metric}' has no data", path)
            seen: set[tuple[float, ...]] = set()
            for index, item in enumerate(items):
                where = f"measurements['{kernel}']['{metric}'][{index}]"
                point = _require(item, "point", object, where, path)
                point = point if isinstance(point, list) else [point]
                if len(point) != len(parameters):
                    raise InputError(
                        f"inconsistent parameters: {where} has a point with {len(point)} "
                        f"coordinates, but there are {len(parameters)} parameters",
                        path,
                    )
                coordinates = tuple(
                    parse_number(value, f"{where}: parameter '{name}'", path, None)
                    for value, name in zip(point, parameters, strict=True)
                )
                if coordinates in seen:
                    raise InputError(f"{where}: point {point} given twice", path)
                seen.add(coordinates)
                raw = _require(item, "values", object, where, path)
                raw = raw if isinstance(raw, list) else [raw]
                if not raw:
                    raise InputError(f"{where}: a point without values", path)
                values = [parse_number(v, f"{where}: value", path, None) for v in raw]
                rows.add(kernel, metric, coordinates, values)
    return rows.experiment(parameters)


def read(path: Path) -> Experiment:
    """Read an Extra-P JSON file (new or legacy layout).

    Raises
    ------
    InputError
        For malformed JSON (naming the line) or inconsistent content (naming the record).
    """
    path = Path(path)
    data = _load(path)
    if not isinstance(data, dict):
        raise InputError("the JSON document is not an object", path)
    if "callpaths" in data:
        return _read_legacy(data, path)
    return _read_new(data, path)


def write(experiment: Experiment, path: Path) -> None:
    """Write the new layout of Extra-P's JSON format."""
    names = list(experiment.parameter_names)
    frame = experiment.frame.sort_values(REPETITION, kind="stable")
    measurements: dict[str, dict[str, list]] = {}
    for (kernel, metric, *_), group in frame.groupby([KERNEL, METRIC, *names], sort=False):
        # Every row of the group is measured at the group's point.
        point = [float(group[name].iloc[0]) for name in names]
        entry = {"point": point, "values": group[VALUE].tolist()}
        measurements.setdefault(str(kernel), {}).setdefault(str(metric), []).append(entry)
    document = {"parameters": names, "measurements": measurements}
    Path(path).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
