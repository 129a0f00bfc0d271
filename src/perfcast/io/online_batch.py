"""Binary batch files of the C online regions (``*.pcob``, format version 1).

The C library (``perfcast_online.c``) hands a full batch of one kernel over as one file, written
from the buffers the records already sit in, so that a measured execution costs no formatting:

* one header line, a JSON object ended by a newline::

    {"format": "perfcast-online-batch", "version": 1, "byteorder": "little",
     "kernel": "compute", "metric": "cputime", "records": 512, "skipped": 0,
     "params": ["n"]}

  ``records`` is the number of measurements N, ``params`` the predictor names (P of them),
  ``skipped`` the executions skipped after the last measurement (non-zero only in the file
  handed over at exit, as the stream's skip-only line);
* then three arrays in the byte order named, without padding: the parameter values, N x P
  8-byte IEEE doubles, record after record; the measured values, N doubles; the executions
  skipped before each measurement, N unsigned 64-bit integers.

A file's length must be exactly the header's plus ``8 * N * (P + 2)`` bytes. A reader of
version 1 refuses other versions with a message saying so (a newer library's file waits in the
spool for a newer collector, it is not lost); collectors older than this format look only at
``*.jsonl`` files and leave ``*.pcob`` files where they are. The JSON Lines spool files of the
Python regions (:mod:`perfcast.io.online_stream`) are read as before.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.jsonin import parse_json
from perfcast.io.online_stream import MAX_COUNT, StreamRecord

#: Suffix of binary batch files.
SUFFIX = ".pcob"
#: The format name of the header.
FORMAT = "perfcast-online-batch"
#: The versions this reader understands.
VERSIONS = (1,)
#: The longest header line read (the C library writes at most 1,024 bytes).
MAX_HEADER = 65536

_ORDERS = {"little": "<", "big": ">"}


def _error(path: Path, message: str, record: int | None = None) -> InputError:
    return InputError(message, path, record, reason="bad-batch-file")


def _header(path: Path, data: bytes) -> tuple[dict, int]:
    end = data.find(b"\n", 0, MAX_HEADER)
    if end < 0:
        raise _error(path, "no header line (not a perfcast online batch file)", 1)
    try:
        header = parse_json(data[:end].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _error(path, "the header line is not a JSON object", 1) from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise _error(path, f"the header does not name the format {FORMAT!r}", 1)
    if header.get("version") not in VERSIONS:
        raise _error(
            path,
            f"format version {header.get('version')!r}; this perfcast reads version "
            f"{', '.join(map(str, VERSIONS))} (the file was written by another perfcast)",
            1,
        )
    return header, end + 1


def _field(header: dict, key: str, path: Path, check: type) -> object:
    value = header.get(key)
    if not isinstance(value, check) or isinstance(value, bool):
        raise _error(path, f"the header's {key!r} is {value!r}", 1)
    return value


def read_batch_file(path: str | Path) -> list[StreamRecord]:
    """The measurements of one binary batch file, in the order they were taken.

    A record's ``index`` is its 0-based position in the file; the skips reported after the
    last measurement come as a final record without parameters and with the value None.

    Raises
    ------
    InputError
        When the file cannot be read, its header is not this format's version 1, its length
        does not match the header, or a value is not finite (reason ``bad-batch-file``; a bad
        header is line 1 of the file, a bad record is named by its 1-based position).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise _error(path, f"cannot read the batch file ({error.strerror})") from None
    header, start = _header(path, data)
    order = _ORDERS.get(str(header.get("byteorder")))
    if order is None:
        raise _error(path, f"the header's 'byteorder' is {header.get('byteorder')!r}", 1)
    kernel = _field(header, "kernel", path, str)
    metric = _field(header, "metric", path, str)
    count = _field(header, "records", path, int)
    trailing = _field(header, "skipped", path, int)
    names = _field(header, "params", path, list)
    assert isinstance(kernel, str) and isinstance(metric, str)  # checked by _field
    assert isinstance(count, int) and isinstance(trailing, int) and isinstance(names, list)
    if not kernel or not metric or not all(isinstance(n, str) and n for n in names):
        raise _error(path, "the header names an empty kernel, metric or parameter", 1)
    if len(set(names)) != len(names) or count < 0 or not 0 <= trailing <= MAX_COUNT:
        raise _error(path, "the header repeats a parameter or holds a negative count", 1)
    width = len(names)
    expected = start + 8 * count * (width + 2)
    if len(data) != expected:
        raise _error(
            path,
            f"{len(data)} bytes where the header's {count} records of {width} parameters "
            f"make {expected} (a truncated or foreign file)",
        )
    params = np.frombuffer(data, f"{order}f8", count * width, start).reshape(count, width)
    values = np.frombuffer(data, f"{order}f8", count, start + 8 * count * width)
    skipped = np.frombuffer(data, f"{order}u8", count, start + 8 * count * (width + 1))
    finite = np.isfinite(values) & np.isfinite(params).all(axis=1)
    if not finite.all():
        bad = int(np.flatnonzero(~finite)[0])
        raise _error(path, f"record {bad + 1}: a measured or parameter value is not finite")
    if count and int(skipped.max()) > MAX_COUNT:
        bad = int(np.argmax(skipped))
        raise _error(path, f"record {bad + 1}: a skip count above {MAX_COUNT}")
    records = [
        StreamRecord(
            kernel,
            metric,
            {name: float(v) for name, v in zip(names, row, strict=True)},
            float(value),
            index,
            int(skip),
        )
        for index, (row, value, skip) in enumerate(
            zip(params.tolist(), values.tolist(), skipped.tolist(), strict=True)
        )
    ]
    if trailing:
        records.append(StreamRecord(kernel, metric, {}, None, count, trailing))
    return records
