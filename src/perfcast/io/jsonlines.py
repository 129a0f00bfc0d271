"""Extra-P's JSON Lines format: one measurement per line.

Each non-blank line is an object such as
``{"params": {"x": 20, "y": 1}, "callpath": "main->solve", "metric": "time", "value": 1.2}``;
``value`` may also be a list (several repetitions at once). Records at the same point, kernel and
metric are repetitions, in file order.

Choices that follow Extra-P 4.2.5's reader
------------------------------------------
- A record without ``callpath`` belongs to the kernel ``<root>``, one without ``metric`` to the
  metric ``<default>``.
- The parameters and their order are those of the first record.

Where perfcast differs, on purpose
----------------------------------
- ``region`` is accepted in place of ``callpath`` (Extra-P would silently file such a record
  under ``<root>``).
- A record whose parameters differ from the first record's, with a key perfcast does not know,
  or with a non-finite value is an error naming the line (Extra-P ignores extra parameters and
  keys, and accepts NaN).
- Kernels need not be measured at every point (Extra-P rejects such files); the modelers fit each
  set of kernels sharing points separately.

The writer emits one line per repetition in the same layout, so Extra-P reads its output.
Repetition numbers, units, parameter roles and metadata are not part of the format.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from perfcast.core.errors import InputError
from perfcast.core.experiment import KERNEL, METRIC, VALUE, Experiment
from perfcast.core.jsonin import DuplicateKeyError
from perfcast.core.numbers import parse_number
from perfcast.io._records import Rows, first_content_line, json_object, json_record, read_text

NAME = "extrap-jsonlines"
SUFFIXES = (".jsonl",)
DEFAULT_KERNEL = "<root>"
DEFAULT_METRIC = "<default>"


def sniff(path: Path, head: str) -> bool:
    """True when the first line is a JSON object with ``params``."""
    record = json_object(first_content_line(head))
    return record is not None and "params" in record


def read_records(
    path: Path,
    decode: Callable[[str], dict | None],
    parameters_key: str,
    kernel_keys: tuple[str, ...],
    defaults: tuple[str | None, str | None],
) -> Experiment:
    """Read a file of one-measurement-per-line records (JSON Lines and Talpas).

    Parameters
    ----------
    path : Path
        The file.
    decode : callable
        Parses one line into a dict, None when the line is not a record.
    parameters_key : str
        The key holding the parameter values (``params`` or ``parameters``).
    kernel_keys : tuple of str
        Keys that may name the kernel, the first present one wins.
    defaults : (str or None, str or None)
        Kernel and metric of records without one; None makes the key mandatory.
    """
    rows = Rows(path)
    parameters: list[str] | None = None
    lines = read_text(path).splitlines()
    for record in parse_records(path, lines, decode, parameters_key, kernel_keys, defaults):
        parameters = record.parameters
        rows.add(record.kernel, record.metric, record.point, record.values)
    if parameters is None:
        raise InputError("the file holds no records", path)
    return rows.experiment(parameters)


@dataclass(frozen=True)
class Record:
    """One measurement record: its line, the parameters of the file (those of its first
    record), the kernel, metric, point and repetitions."""

    line: int
    parameters: list[str]
    kernel: str
    metric: str
    point: tuple[float, ...]
    values: list[float]


def parse_records(
    path: Path,
    lines: Iterable[str],
    decode: Callable[[str], dict | None],
    parameters_key: str,
    kernel_keys: tuple[str, ...],
    defaults: tuple[str | None, str | None],
) -> Iterator[Record]:
    """The records of ``lines`` (of the file ``path``) one by one, each checked; parameters
    as :func:`read_records` takes them.

    Raises
    ------
    InputError
        For a malformed or inconsistent record, naming its line.
    """
    known = {parameters_key, "metric", "value", *kernel_keys}
    parameters: list[str] | None = None
    parameter_set: set[str] = set()
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line:
            continue
        try:
            record = decode(line)
        except DuplicateKeyError as error:
            raise InputError(error.msg, path, number) from None
        if record is None:
            raise InputError(f"malformed record: {line[:80]!r}", path, number)
        if not known.issuperset(record):
            unknown = sorted(set(record) - known)
            raise InputError(
                f"unknown key {unknown[0]!r}; a record has {', '.join(sorted(known))}",
                path,
                number,
            )
        point_values = record.get(parameters_key)
        if not isinstance(point_values, dict) or not point_values:
            raise InputError(f"the record has no '{parameters_key}' object", path, number)
        if parameters is None:
            parameters = list(point_values)
            parameter_set = set(parameters)
        elif point_values.keys() != parameter_set:
            raise InputError(
                f"inconsistent parameters: this record has {', '.join(point_values)}, the first "
                f"record has {', '.join(parameters)}",
                path,
                number,
            )
        point = tuple(
            parse_number(point_values[name], f"parameter '{name}'", path, number)
            for name in parameters
        )
        kernel = _name(
            next((record[key] for key in kernel_keys if key in record), defaults[0]),
            "kernel",
            path,
            number,
        )
        metric = _name(record.get("metric", defaults[1]), "metric", path, number)
        if "value" not in record:
            raise InputError("the record has no 'value'", path, number)
        raw = record["value"]
        raw_values = raw if isinstance(raw, list) else [raw]
        if not raw_values:
            raise InputError("'value' is an empty list; a point needs a repetition", path, number)
        values = [parse_number(value, "value", path, number) for value in raw_values]
        yield Record(number, parameters, kernel, metric, point, values)


def _name(name: object, what: str, path: Path, number: int) -> str:
    """``name`` if it is a string; an :class:`InputError` naming ``what`` otherwise."""
    if name is None:
        raise InputError(f"the record names no {what}", path, number)
    if not isinstance(name, str):
        raise InputError(f"the {what} is {json.dumps(name)}, not a string", path, number)
    return name


def read(path: Path) -> Experiment:
    """Read an Extra-P JSON Lines file.

    Raises
    ------
    InputError
        For a malformed or inconsistent record, naming its line.
    """
    return read_records(
        Path(path), json_record, "params", ("callpath", "region"), (DEFAULT_KERNEL, DEFAULT_METRIC)
    )


def _number(value: float) -> int | float:
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def write(experiment: Experiment, path: Path) -> None:
    """Write one JSON Lines record per repetition (readable by Extra-P)."""
    names = list(experiment.parameter_names)
    frame = experiment.frame
    columns = [frame[name].to_numpy(dtype=float) for name in names]
    with Path(path).open("w", encoding="utf-8") as handle:
        for row, (kernel, metric, value) in enumerate(
            zip(frame[KERNEL], frame[METRIC], frame[VALUE].to_numpy(dtype=float), strict=True)
        ):
            params = {
                name: _number(column[row]) for name, column in zip(names, columns, strict=True)
            }
            record = {"params": params, "callpath": kernel, "metric": metric, "value": value}
            handle.write(json.dumps(record) + "\n")
