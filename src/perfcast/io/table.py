"""Long tables in CSV or Parquet: ``kernel, metric, <one column per parameter>, repetition, value``.

The ``repetition`` column is optional (rows at the same kernel, metric and point are then numbered
in file order). Every other column is a parameter.

Units, parameter roles and metadata travel with the table when the experiment has any: Parquet
keeps them as JSON under the key ``perfcast`` of the file's schema metadata; CSV in one leading
comment line ``# perfcast {...}`` before the header (the JSON of :func:`perfcast_json.describe`).
Other leading ``#`` lines of a CSV file are comments. pandas reads such a CSV file with
``comment="#"`` as long as no name contains ``#``.

A plain CSV file (every row complete, every kernel and metric named, every other cell a decimal
number, as perfcast writes them) is read without pandas, which saves importing it; any other file
goes through pandas' reader, whose messages name what is wrong.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import KERNEL, METRIC, REPETITION, VALUE, Experiment
from perfcast.core.jsonin import parse_json
from perfcast.core.numbers import BAD_NUMBER, number_problem, parse_numbers
from perfcast.io._records import first_content_line, read_text
from perfcast.io.perfcast_json import describe, parse_description

if TYPE_CHECKING:
    import pandas as pd

NAME = "table"
SUFFIXES = (".csv", ".parquet")
HEADER_PREFIX = "# perfcast "
METADATA_KEY = b"perfcast"
PARQUET_MAGIC = "PAR1"
_INTEGER = re.compile(r"[-+]?[0-9]+")
_BATCH_ROWS = 65_536


def sniff(path: Path, head: str) -> bool:
    """True for Parquet files and for CSV files whose header names kernel, metric and value."""
    if head.startswith(PARQUET_MAGIC):
        return True
    header = [cell.strip() for cell in first_content_line(head).split(",")]
    return {KERNEL, METRIC, VALUE} <= set(header)


def check_rows(frame: pd.DataFrame, path: Path, row_offset: int) -> None:
    """Raise an InputError for the first missing or non-numeric cell of a batch of rows of a
    Parquet table, naming its row in the file (the batch's first row follows ``row_offset``
    rows)."""
    _check(frame, path, first_line=None, row_offset=row_offset)


def parquet_description(metadata: dict[bytes, bytes] | None, path: Path) -> dict:
    """The perfcast description (parameters, metrics, metadata) in a Parquet schema's
    ``metadata``; empty when there is none."""
    metadata = metadata or {}
    if METADATA_KEY not in metadata:
        return {}
    try:
        description: dict = parse_json(metadata[METADATA_KEY])
    except json.JSONDecodeError:
        raise InputError("malformed perfcast metadata in the Parquet schema", path) from None
    return description


def _check(frame: pd.DataFrame, path: Path, first_line: int | None, row_offset: int = 0) -> None:
    """Raise an InputError for the first missing or non-numeric cell.

    ``first_line`` is the line of the first row in a CSV file; None names rows (Parquet),
    counted from ``row_offset + 1``.
    """
    import pandas as pd  # here, not above: plain CSV files are read without pandas

    def fail(message: str, row: int, cell: object = None) -> None:
        reason = None if cell is None else BAD_NUMBER
        if first_line is None:
            raise InputError(
                f"row {row + row_offset + 1}: {message}", path, reason=reason, value=cell
            )
        raise InputError(message, path, row + first_line, reason=reason, value=cell)

    for column in (KERNEL, METRIC, VALUE):
        if column not in frame.columns:
            raise InputError(f"the table has no '{column}' column", path)
    for column in (KERNEL, METRIC):
        empty = (frame[column].isna() | (frame[column].astype(str) == "")).to_numpy()
        if empty.any():
            fail(f"missing {column} name", int(np.flatnonzero(empty)[0]))
    for column in frame.columns:
        if column in (KERNEL, METRIC):
            continue
        raw = frame[column]
        cells = raw.tolist()
        if all(isinstance(cell, str) for cell in cells):
            numbers, bad_row = parse_numbers(cells)
            if bad_row is not None:
                cell = cells[bad_row]
                if not cell.strip():
                    fail(f"{column} is missing", bad_row)
                fail(f"{column} is {cell!r}, {number_problem(cell)}", bad_row, cell)
        else:
            numbers = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(numbers)
        if column == REPETITION:
            bad |= np.isfinite(numbers) & (numbers != np.round(numbers))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            cell = raw.iloc[row]
            cell = cell.item() if isinstance(cell, np.generic) else cell  # inf, not np.float64(inf)
            if cell == "" or pd.isna(cell):
                fail(f"{column} is missing", row)
            kind = "an integer" if column == REPETITION else "a finite number"
            fail(f"{column} is {cell!r}, not {kind}", row)


def _column_of_numbers(cells: list[str], pattern: re.Pattern[str] | None) -> np.ndarray | None:
    """The cells as finite floats when every one is a number (:mod:`perfcast.core.numbers`)
    written as ``pattern`` (when given), else None."""
    if pattern is not None and not all(map(pattern.fullmatch, cells)):
        return None
    numbers, bad_row = parse_numbers(cells)
    return numbers if bad_row is None else None


class _PlainTable(NamedTuple):
    """The columns of a plain CSV table: kernel and metric names, and the numbers of the other
    columns (repetition numbers as integers) in the order of the header."""

    names: dict[str, list[str]]
    numbers: dict[str, np.ndarray]


def _plain_csv(lines: Iterable[str], header: list[str]) -> _PlainTable | None:
    """The columns of a plain CSV table (see the module's description), None for any other.

    ``lines`` are the header line and the rows. They are converted :data:`_BATCH_ROWS` rows
    at a time, and equal names share one string, so that a large table is never held as a
    list of rows of strings.
    """
    if not {KERNEL, METRIC, VALUE} <= set(header):
        return None
    reader = csv.reader(lines, strict=True)
    names: dict[str, list[str]] = {KERNEL: [], METRIC: []}
    parts: dict[str, list[np.ndarray]] = {name: [] for name in header if name not in names}
    shared: dict[str, str] = {}
    try:
        if next(reader, None) != header:
            return None
        while rows := list(itertools.islice(reader, _BATCH_ROWS)):
            if any(len(row) != len(header) for row in rows):
                return None
            for name, cells in zip(header, zip(*rows, strict=True), strict=True):
                if name in names:
                    if not all(cells):
                        return None
                    names[name].extend(shared.setdefault(cell, cell) for cell in cells)
                    continue
                pattern = _INTEGER if name == REPETITION else None
                numbers = _column_of_numbers(list(cells), pattern)
                if numbers is None:
                    return None
                parts[name].append(numbers)
    except csv.Error:
        return None
    if not names[KERNEL]:
        return None
    table = _PlainTable(names, {})
    for name, columns in parts.items():
        numbers = np.concatenate(columns)
        table.numbers[name] = numbers.astype(np.int64) if name == REPETITION else numbers
    return table


def _lines_from(text: str, start: int) -> Iterator[str]:
    """The lines of ``text`` from the offset ``start``, each with its ``\\n``."""
    while start < len(text):
        end = text.find("\n", start) + 1 or len(text)
        yield text[start:end]
        start = end


def _read_csv(path: Path) -> tuple[pd.DataFrame | _PlainTable, dict]:
    """The table (as columns when plain, else as a pandas table) and the perfcast header."""
    text = read_text(path)
    description: dict = {}
    skipped = 0  # leading comment and blank lines
    start = 0  # offset of the first line after them
    for leading in _lines_from(text, 0):
        if not (leading.startswith("#") or not leading.strip()):
            break
        if leading.startswith(HEADER_PREFIX):
            try:
                description = parse_json(leading[len(HEADER_PREFIX) :])
            except json.JSONDecodeError as error:
                raise InputError(
                    f"malformed perfcast header: {error.msg}", path, skipped + 1
                ) from None
            if not isinstance(description, dict):
                raise InputError("malformed perfcast header", path, skipped + 1)
        skipped += 1
        start += len(leading)
    if not text[start:].strip():
        raise InputError("the table has no header and no rows", path)
    header = next(csv.reader([next(_lines_from(text, start))]))
    for index, name in enumerate(header):
        if not name.strip():
            raise InputError(f"column {index + 1} of the header has no name", path, skipped + 1)
        if name in header[:index]:
            raise InputError(f"column '{name}' appears twice in the header", path, skipped + 1)
    plain = _plain_csv(_lines_from(text, start), header)
    if plain is not None:
        return plain, description
    body = text[start:]
    import pandas as pd  # here, not above: plain CSV files are read without pandas

    try:
        frame = pd.read_csv(io.StringIO(body), dtype=str, keep_default_na=False)
    except pd.errors.ParserError as error:
        message = str(error)
        found = re.search(r"line (\d+)", message)
        line = int(found.group(1)) + skipped if found else None
        detail = re.sub(r"^Error tokenizing data\. C error: ", "", message).strip()
        detail = re.sub(r" in line \d+", "", detail)
        raise InputError(f"malformed CSV row: {detail}", path, line) from None
    # The header is line skipped + 1, the first data row the next one.
    _check(frame, path, first_line=skipped + 2)
    return frame, description


def _read_parquet(path: Path) -> tuple[pd.DataFrame, dict]:
    import pyarrow as pa  # here, not above: not every run of perfcast reads Parquet
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as error:
        raise InputError(f"not a readable Parquet file ({error})", path) from None
    description = parquet_description(table.schema.metadata, path)
    frame = table.to_pandas()
    _check(frame, path, first_line=None)
    return frame, description


def read(path: Path) -> Experiment:
    """Read a CSV or Parquet long table (by the file's content: Parquet starts with ``PAR1``).

    Raises
    ------
    InputError
        For a missing column, a malformed row or a missing/non-numeric cell, naming the line of a
        CSV file or the row of a Parquet file.
    """
    path = Path(path)
    with path.open("rb") as handle:
        is_parquet = handle.read(4) == PARQUET_MAGIC.encode()
    table, description = _read_parquet(path) if is_parquet else _read_csv(path)
    if isinstance(table, _PlainTable):
        column_names = list(table.numbers)
    else:
        if table.empty:
            raise InputError("the table has no rows", path)
        column_names = list(table.columns)
    parameters, metrics, metadata = parse_description(description, path)
    if parameters is not None:
        names = [p.name for p in parameters]
        columns = [c for c in column_names if c not in (KERNEL, METRIC, REPETITION, VALUE)]
        if sorted(names) != sorted(columns):
            raise InputError(
                f"the header lists parameters {names}, the table has columns {columns}", path
            )
    if not isinstance(table, _PlainTable):
        return Experiment.from_frame(table, parameters, metrics, metadata, str(path))
    numbers = dict(table.numbers)
    values, repetitions = numbers.pop(VALUE), numbers.pop(REPETITION, None)
    return Experiment.from_columns(
        table.names[KERNEL],
        table.names[METRIC],
        numbers,
        values,
        repetitions,
        parameters=parameters,
        metrics=metrics,
        metadata=metadata,
        source=str(path),
    )


def _description(experiment: Experiment, path: Path) -> dict | None:
    """The header content, None when it would hold nothing beyond the table itself."""
    described = describe(experiment, path)
    plain = (
        not experiment.metadata
        and all(p.role is None for p in experiment.parameters)
        and all(not m.unit for m in experiment.metrics.values())
    )
    return None if plain else described


def write(experiment: Experiment, path: Path) -> None:
    """Write a CSV table or, for a ``.parquet`` file name, a Parquet table."""
    path = Path(path)
    description = _description(experiment, path)
    if path.name.lower().endswith(".parquet"):
        import pyarrow as pa  # here, not above: not every run of perfcast writes Parquet
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(experiment.frame, preserve_index=False)
        if description is not None:
            metadata = dict(table.schema.metadata or {})
            metadata[METADATA_KEY] = json.dumps(description).encode()
            table = table.replace_schema_metadata(metadata)
        pq.write_table(table, path)
        return
    with path.open("w", encoding="utf-8", newline="") as handle:
        if description is not None:
            handle.write(HEADER_PREFIX + json.dumps(description) + "\n")
        experiment.frame.to_csv(handle, index=False)
