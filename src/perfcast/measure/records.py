"""Records an instrumented program writes to the file named by ``PERFCAST_OUTPUT``.

One JSON object per line: ``{"kernel": "main->solve", "metric": "time", "value": 0.25}``.
Any line that is not such an object makes the whole run fail with a reason naming the line;
nothing is dropped silently.
"""

from __future__ import annotations

import json
from pathlib import Path

from perfcast.core.errors import InputError
from perfcast.core.jsonin import parse_json
from perfcast.core.numbers import json_float, parse_number

OUTPUT_VARIABLE = "PERFCAST_OUTPUT"


class RecordError(ValueError):
    """A malformed record; the message names the line."""


def parse_record(line: str, number: int) -> dict[str, object]:
    """Check one line and return it as ``{"kernel", "metric", "value"}``.

    Raises
    ------
    RecordError
        When the line is not a JSON object with a non-empty string ``kernel`` and ``metric``
        and a finite numeric ``value`` a double holds (:mod:`perfcast.core.numbers`).
    """
    try:
        data = parse_json(line, parse_float=json_float)
    except json.JSONDecodeError as error:
        raise RecordError(f"line {number}: not JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise RecordError(f"line {number}: not a JSON object")
    for key in ("kernel", "metric"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise RecordError(f"line {number}: '{key}' missing or not a non-empty string")
    value = data.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError(f"line {number}: 'value' is {value!r}, not a finite number")
    try:
        parse_number(value, "'value'", None, number)  # range only: the record keeps its number
    except InputError as error:
        raise RecordError(str(error)) from None
    return {"kernel": data["kernel"], "metric": data["metric"], "value": value}


def read_records(path: str | Path) -> list[dict[str, object]]:
    """Every record of a ``PERFCAST_OUTPUT`` file (an absent or empty file has none).

    Raises
    ------
    RecordError
        On the first malformed line, or a kernel and metric reported twice.
    """
    path = Path(path)
    if not path.exists():
        return []
    records = []
    seen: set[tuple[object, object]] = set()
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            record = parse_record(line, number)
            key = (record["kernel"], record["metric"])
            if key in seen:
                raise RecordError(
                    f"line {number}: kernel '{key[0]}' metric '{key[1]}' reported twice"
                )
            seen.add(key)
            records.append(record)
    return records
