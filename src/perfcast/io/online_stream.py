"""Measurement streams for online modeling: JSON Lines in arrival order.

One measurement per non-blank line::

    {"kernel": "solve", "params": {"n": 64, "p": 4}, "metric": "time", "value": 1.2}

An Extra-P JSON Lines record (``callpath`` for ``kernel``, ``value`` possibly a list of
repetitions, ``metric`` optional: ``<default>``) is accepted too; its values arrive one after the
other under the same line index. The index of a measurement is its 0-based line number.

Instrumented programs that apply back-off themselves (spool files of ``perfcast online serve``)
add ``"skipped": N``, the measurements of the kernel they skipped since the previous line; a
line of only ``kernel``, ``metric`` and ``skipped`` reports skips at the end of a run (its
record has no parameters and the value None).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from perfcast.core.errors import InputError
from perfcast.core.jsonin import DuplicateKeyError, parse_json
from perfcast.core.numbers import json_float, parse_number

#: Keys a stream line may hold.
STREAM_KEYS = frozenset({"kernel", "callpath", "region", "params", "metric", "value", "skipped"})
#: The largest ``skipped`` count (exact in JSON's doubles; a store keeps 64-bit counts).
MAX_COUNT = 2**53 - 1
#: The metric of an Extra-P record without one.
DEFAULT_METRIC = "<default>"


@dataclass(frozen=True)
class StreamRecord:
    """One measurement read from a stream (plain data, no modeling)."""

    kernel: str
    metric: str
    params: dict[str, float]
    value: float | None
    index: int
    skipped: int = 0


def _record(line: str, path: Path, number: int) -> dict:
    try:
        record = parse_json(line, parse_float=json_float)
    except DuplicateKeyError as error:
        raise InputError(error.msg, path, number, reason="bad-stream-line") from None
    except ValueError as error:
        raise InputError(
            f"malformed JSON ({error.args[0].split(':')[0]})",
            path,
            number,
            reason="bad-stream-line",
            value=line[:80],
        ) from None
    if not isinstance(record, dict):
        raise InputError("a line must be a JSON object", path, number, reason="bad-stream-line")
    unknown = sorted(set(record) - STREAM_KEYS)
    if unknown:
        raise InputError(
            f"unknown key {unknown[0]!r}; a line has {', '.join(sorted(STREAM_KEYS))}",
            path,
            number,
            reason="bad-stream-line",
            value=unknown[0],
        )
    return record


def _text(record: dict, keys: tuple[str, ...], what: str, path: Path, number: int) -> str:
    value = next((record[k] for k in keys if k in record), None)
    if not isinstance(value, str) or not value:
        shown = "missing" if value is None else json.dumps(value)
        raise InputError(
            f"the {what} is {shown}, not a name", path, number, reason="bad-stream-line"
        )
    return value


def read_stream(path: str | Path) -> Iterator[StreamRecord]:
    """The measurements of a stream file, in order.

    Raises
    ------
    InputError
        For a missing file or a malformed line (named by file and 1-based line), reason
        ``bad-stream-line`` or ``bad-number``. Lines before it have been yielded already; read
        the whole stream first (``list(read_stream(...))``) to act only on a valid one.
    """
    path = Path(path)
    try:
        # undecodable bytes become lone surrogates, found per line to name the line
        handle = path.open(encoding="utf-8-sig", errors="surrogateescape")
    except OSError as error:
        raise InputError(f"cannot read the stream ({error.strerror})", path) from None
    with handle:
        try:
            for number, line in enumerate(handle, start=1):
                try:
                    line.encode("utf-8")
                except UnicodeEncodeError:
                    raise InputError(
                        "not a text file (bytes that are not UTF-8)",
                        path,
                        number,
                        reason="bad-stream-line",
                    ) from None
                if line.strip():
                    yield from _records(line, path, number)
        except OSError as error:
            raise InputError(f"cannot read the stream ({error.strerror})", path) from None


def _records(line: str, path: Path, number: int) -> Iterator[StreamRecord]:
    record = _record(line, path, number)
    kernel = _text(record, ("kernel", "callpath", "region"), "kernel", path, number)
    metric = DEFAULT_METRIC
    if "metric" in record:
        metric = _text(record, ("metric",), "metric", path, number)
    skipped = record.get("skipped", 0)
    if isinstance(skipped, bool) or not isinstance(skipped, int) or not 0 <= skipped <= MAX_COUNT:
        raise InputError(
            f"'skipped' is {json.dumps(skipped)}, not a count",
            path,
            number,
            reason="bad-stream-line",
        )
    if "skipped" in record and "value" not in record and "params" not in record:
        yield StreamRecord(kernel, metric, {}, None, number - 1, skipped)
        return
    params = record.get("params")
    if not isinstance(params, dict):
        raise InputError("the line has no 'params' object", path, number, reason="bad-stream-line")
    if not params:
        raise InputError(
            "'params' is empty; a measurement needs at least one parameter",
            path,
            number,
            reason="bad-stream-line",
        )
    if "" in params:
        raise InputError(
            "a parameter without a name in 'params'", path, number, reason="bad-stream-line"
        )
    point = {
        str(name): parse_number(raw, f"parameter '{name}'", path, number)
        for name, raw in params.items()
    }
    if "value" not in record:
        raise InputError("the line has no 'value'", path, number, reason="bad-stream-line")
    raw = record["value"]
    values = raw if isinstance(raw, list) else [raw]
    if not values:
        raise InputError("'value' is an empty list", path, number, reason="bad-stream-line")
    for position, value in enumerate(values):
        yield StreamRecord(
            kernel,
            metric,
            point,
            parse_number(value, "value", path, number),
            number - 1,
            skipped if position == 0 else 0,
        )
