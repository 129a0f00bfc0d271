"""Run tables: one row per run of a program, one column per input feature or measured target.

A run table is what learned run-time models train on (:mod:`perfcast.model.learned`). It is a
plain CSV file (or Parquet) with a header; a column is either

* numeric: every cell a number as :mod:`perfcast.core.numbers` reads them, or
* categorical: every cell a word that is not a number (an algorithm's name, a platform).

A column whose first cell is a number but a later one is not (or the other way round) is an
error naming the file and line: a mistyped number must not turn a feature into a category.
Columns named ``cost:FEATURE`` hold the measured cost (seconds) of collecting ``FEATURE`` in
that run; they are no features themselves. Empty cells are errors.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.jsonin import parse_json
from perfcast.core.numbers import number_problem, parse_number, parse_numbers

#: Prefix of the columns that hold a feature's collection cost.
COST_PREFIX = "cost:"
#: Suffixes read as Parquet; everything else is read as CSV.
PARQUET_SUFFIXES = (".parquet", ".pq")


@dataclass
class RunTable:
    """The columns of a run table.

    Attributes
    ----------
    numeric : dict of str to ndarray
        The numeric columns (float), in file order.
    categorical : dict of str to ndarray
        The categorical columns (object arrays of str), in file order.
    costs : dict of str to ndarray
        Collection cost per run of the features that have a ``cost:`` column, by feature.
    source : str or None
        The file it was read from, for messages.
    order : list of str
        Every column name except the ``cost:`` columns, in file order.
    """

    numeric: dict[str, np.ndarray]
    categorical: dict[str, np.ndarray]
    costs: dict[str, np.ndarray] = field(default_factory=dict)
    source: str | None = None
    order: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.order:
            self.order = [*self.numeric, *self.categorical]

    @property
    def rows(self) -> int:
        """The number of runs."""
        first = next(iter([*self.numeric.values(), *self.categorical.values()]), None)
        return 0 if first is None else len(first)

    @property
    def columns(self) -> list[str]:
        """Every column except the ``cost:`` ones, in file order."""
        return list(self.order)

    def column(self, name: str) -> np.ndarray:
        """The column ``name`` (numeric or categorical).

        Raises
        ------
        InputError
            With reason ``"missing-column"`` when the table has no such column.
        """
        if name in self.numeric:
            return self.numeric[name]
        if name in self.categorical:
            return self.categorical[name]
        raise InputError(
            f"no column {name!r} (have {', '.join(self.order) or 'none'})",
            self.source,
            reason="missing-column",
            value=name,
        )

    def take(self, rows: np.ndarray) -> RunTable:
        """The table of the runs ``rows`` (indices or a boolean mask)."""
        return RunTable(
            {k: v[rows] for k, v in self.numeric.items()},
            {k: v[rows] for k, v in self.categorical.items()},
            {k: v[rows] for k, v in self.costs.items()},
            self.source,
            list(self.order),
        )


def from_columns(
    columns: Mapping[str, Sequence[object] | np.ndarray], source: str | None = None
) -> RunTable:
    """A run table from columns of numbers or words (a column of both is an error).

    Parameters
    ----------
    columns : mapping of str to sequence
        Column name to its cells; names starting with ``cost:`` are collection costs.
    source : str, optional
        Name of the input, for messages.

    Raises
    ------
    InputError
        For columns of unequal length, an empty or non-finite cell, or a column mixing numbers
        and words (the first offending row is named, counted from 1 after the header).
    """
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise InputError("columns of unequal length", source, reason="bad-run-table")
    texts = {
        name: [_cell_text(c, name, source, row) for row, c in enumerate(cells, start=1)]
        for name, cells in columns.items()
    }
    return _build(texts, source, range(1, 1 + max(lengths, default=0)), None)


def read_run_table(path: str | Path) -> RunTable:
    """Read a run table from a CSV or Parquet file.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    RunTable

    Raises
    ------
    InputError
        When the file is missing or unreadable, has no header or no rows, repeats a column name,
        has a row with another number of cells than the header, or a cell the module's rules
        reject (named by file and line).
    """
    path = Path(path)
    source = str(path)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return _read_parquet(path)
    try:
        # undecodable bytes become lone surrogates, found per row to name the line
        with path.open(newline="", encoding="utf-8", errors="surrogateescape") as handle:
            reader = csv.reader(handle)
            # the line each row ends on: blank lines are skipped but still counted
            numbered = [(reader.line_num, row) for row in reader if row]
    except FileNotFoundError:
        raise InputError("no such file", source, reason="missing-file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(f"cannot read: {error}", source, reason="bad-run-table") from None
    for number, row in numbered:
        try:
            "".join(row).encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                "not a text file (bytes that are not UTF-8)", source, number, reason="bad-run-table"
            ) from None
    lines = [number for number, _ in numbered]
    rows = [row for _, row in numbered]
    if not rows:
        raise InputError("empty file, a header line was expected", source, reason="bad-run-table")
    header = [name.strip() for name in rows[0]]
    _check_header(header, source)
    if len(rows) == 1:
        raise InputError("no runs below the header", source, lines[0], reason="bad-run-table")
    for number, row in zip(lines[1:], rows[1:], strict=True):
        if len(row) != len(header):
            raise InputError(
                f"{len(row)} cells, the header has {len(header)}",
                source,
                number,
                reason="bad-run-table",
            )
    texts = {name: [row[i] for row in rows[1:]] for i, name in enumerate(header)}
    return _build(texts, source, lines[1:], lines[0])


def write_run_table(table: RunTable, path: str | Path) -> None:
    """Write ``table`` as CSV (or Parquet, by suffix), ``cost:`` columns last.

    Raises
    ------
    InputError
        When the file cannot be written.
    """
    path = Path(path)
    names = [*table.order, *(COST_PREFIX + f for f in table.costs)]
    cells: list[np.ndarray] = [
        *(table.column(n) for n in table.order),
        *table.costs.values(),
    ]
    try:
        if path.suffix.lower() in PARQUET_SUFFIXES:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(
                pa.table({n: c.tolist() for n, c in zip(names, cells, strict=True)}), path
            )
            return
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(names)
            for row in range(table.rows):
                writer.writerow([_format_cell(column[row]) for column in cells])
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror}", path) from None


def _format_cell(value: object) -> str:
    if isinstance(value, float | np.floating):
        return repr(float(value)) if not float(value).is_integer() else str(int(value))
    return str(value)


def _cell_text(cell: object, name: str, source: str | None, row: int) -> str:
    """A cell as text; a number that is not finite is refused naming ``source``, the column
    and the 1-based ``row``."""
    if isinstance(cell, str):
        return cell
    if cell is None:
        return ""
    return repr(parse_number(cell, f"numeric column {name!r}: value", source, row))


def _check_header(header: list[str], source: str) -> None:
    for name in header:
        if not name:
            raise InputError("a column without a name", source, 1, reason="bad-run-table")
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise InputError(
                f"column {name!r} appears twice", source, 1, reason="bad-run-table", value=name
            )
        seen.add(name)


def _build(
    texts: Mapping[str, list[str]],
    source: str | None,
    lines: Sequence[int],
    header_line: int | None,
) -> RunTable:
    """The table of ``texts``; ``lines`` are the line numbers of the rows in ``source`` and
    ``header_line`` that of its header (None: it has none), for messages."""
    numeric: dict[str, np.ndarray] = {}
    categorical: dict[str, np.ndarray] = {}
    costs: dict[str, np.ndarray] = {}
    order: list[str] = []
    for name, cells in texts.items():
        for index, cell in enumerate(cells):
            if not cell.strip():
                raise InputError(
                    f"column {name!r} has an empty cell",
                    source,
                    lines[index],
                    reason="bad-run-table",
                )
        is_cost = name.startswith(COST_PREFIX)
        numbers_first = bool(cells) and number_problem(cells[0]) is None
        if is_cost or numbers_first or (cells and _looks_numeric(cells[0])):
            column = _numeric_column(name, cells, source, lines)
            if is_cost:
                costs[name[len(COST_PREFIX) :]] = column
            else:
                numeric[name] = column
                order.append(name)
        else:
            categorical[name] = _word_column(name, cells, source, lines)
            order.append(name)
    missing = [f for f in costs if f not in numeric and f not in categorical]
    if missing:
        raise InputError(
            f"cost column for {missing[0]!r}, which is no column of the table",
            source,
            header_line,
            reason="bad-run-table",
            value=COST_PREFIX + missing[0],
        )
    return RunTable(numeric, categorical, costs, source, order)


def _looks_numeric(text: str) -> bool:
    """A cell such as ``nan``, ``1e400`` or ``1_000``: meant as a number, but not a good one."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _numeric_column(
    name: str, cells: list[str], source: str | None, lines: Sequence[int]
) -> np.ndarray:
    numbers, bad = parse_numbers(cells)
    if bad is not None:
        # parse_number raises the message of the first rejected cell, with its line
        parse_number(cells[bad], f"numeric column {name!r}: value", source, lines[bad])
    return numbers


def _word_column(
    name: str, cells: list[str], source: str | None, lines: Sequence[int]
) -> np.ndarray:
    for index, cell in enumerate(cells):
        if number_problem(cell) is None or _looks_numeric(cell):
            raise InputError(
                f"column {name!r} holds words (a categorical feature) but this cell is the "
                f"number {cell.strip()!r}; a column is all numbers or all words",
                source,
                lines[index],
                reason="bad-run-table",
                value=cell,
            )
    return np.array([cell.strip() for cell in cells], dtype=object)


def _read_parquet(path: Path) -> RunTable:
    try:
        import pyarrow.parquet as pq

        frame = pq.read_table(path)
    except FileNotFoundError:
        raise InputError("no such file", path, reason="missing-file") from None
    except Exception as error:  # pyarrow raises several types for a damaged file
        raise InputError(f"cannot read as Parquet: {error}", path, reason="bad-run-table") from None
    texts = {
        name: [
            _cell_text(value, name, str(path), row)
            for row, value in enumerate(frame.column(name).to_pylist(), start=1)
        ]
        for name in frame.column_names
    }
    _check_header(list(texts), str(path))
    if frame.num_rows == 0:
        raise InputError("no runs in the table", path, reason="bad-run-table")
    rows = len(next(iter(texts.values()), []))
    return _build(texts, str(path), range(1, 1 + rows), None)


#: Keys of a feature record that are no features.
_RECORD_KEYS = ("phase", "elapsed", "cpu", "ranks_reduced")


def read_feature_records(path: str | Path, phase: str = "exit") -> RunTable:
    """The run table of the JSON lines an instrumented program appends (``perfcast features``).

    Every ``exit`` line ends a run; its ``elapsed`` seconds become the ``time`` column (its
    ``cpu`` seconds, the slowest rank's CPU time, the ``cpu`` column). With
    ``phase="features_end"`` the features are those of the run's last ``features_end`` line
    before its ``exit`` (the early phase predicting the whole run); runs without one are
    errors.

    Raises
    ------
    InputError
        Naming the file and line of a line that is not a JSON object, lacks ``phase`` or a
        number, or names other features than the first run.
    """
    import json

    source = str(path)
    try:
        # undecodable bytes become lone surrogates, found per line to name the line
        text = Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        raise InputError("no such file", source, reason="missing-file") from None
    except OSError as error:
        raise InputError(f"cannot read: {error}", source, reason="bad-run-table") from None
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                "not a text file (bytes that are not UTF-8)", source, number, reason="bad-run-table"
            ) from None
    rows: list[dict[str, float]] = []
    early: dict[str, float] | None = None
    names: list[str] | None = None
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            record = parse_json(text)
        except json.JSONDecodeError as error:
            raise InputError(
                f"not a JSON line ({error.msg})", source, number, reason="bad-run-table"
            ) from None
        if not isinstance(record, dict) or record.get("phase") not in ("exit", "features_end"):
            raise InputError(
                "a feature record with phase 'exit' or 'features_end' expected",
                source,
                number,
                reason="bad-run-table",
            )
        values = {
            key: parse_number(value, f"feature {key!r}", source, number)
            for key, value in record.items()
            if key != "phase"
        }
        keys = [k for k in values if k not in _RECORD_KEYS]
        if names is None:
            names = keys
        elif keys != names:
            extra = sorted(set(keys) ^ set(names))
            raise InputError(
                f"other features than the first record's ({', '.join(extra[:3])}...): records "
                "of another program or build",
                source,
                number,
                reason="bad-run-table",
            )
        if "time" in keys:
            raise InputError(
                "a feature named 'time' would be overwritten by the run's elapsed time",
                source,
                number,
                reason="bad-run-table",
                value="time",
            )
        if record["phase"] == "features_end":
            early = values
            continue
        if "elapsed" not in values or values["elapsed"] < 0:
            shown = "missing" if "elapsed" not in values else f"{values['elapsed']:g}"
            raise InputError(
                f"an exit record needs 'elapsed', the run's seconds (>= 0); it is {shown}",
                source,
                number,
                reason="bad-run-table",
            )
        chosen = values
        if phase == "features_end":
            if early is None:
                raise InputError(
                    "a run without a features_end record before its exit",
                    source,
                    number,
                    reason="bad-run-table",
                )
            chosen = early
        times = {"time": values["elapsed"]}
        if "cpu" in values:
            times["cpu"] = values["cpu"]
        rows.append({**{k: chosen[k] for k in keys}, **times})
        early = None
    if not rows or names is None:
        raise InputError(
            "no run ends in this file (no exit record)", source, reason="bad-run-table"
        )
    targets = ["time", "cpu"] if all("cpu" in row for row in rows) else ["time"]
    columns = {key: [row[key] for row in rows] for key in [*names, *targets]}
    return from_columns(columns, source)
