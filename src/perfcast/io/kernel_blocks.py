"""Inputs larger than memory: a Parquet long table or an Extra-P JSON Lines file read in
blocks of whole kernels.

The file is read a bounded piece at a time (Parquet in batches of :data:`BATCH_ROWS` rows of
its row groups, JSON Lines line by line) and every :class:`~perfcast.core.experiment.Experiment`
yielded holds the measurements of up to ``kernels`` kernels, all their metrics and points, so
that each block can be modeled and its models written before the next block is read. Memory
then grows with the block, not with the file.

A kernel's rows must follow one another in the file (as perfcast writes them, and as a table
sorted by kernel has them): a kernel whose rows reappear after another kernel's is an error
naming the row or line, since its block may already be modeled. Every row is checked as the
whole-file readers check it (:mod:`perfcast.io.table`, :mod:`perfcast.io.jsonlines`), with the
same messages naming the row or line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import KERNEL, Experiment
from perfcast.io import jsonlines, table
from perfcast.io._records import Rows, json_object
from perfcast.io.perfcast_json import parse_description

#: Rows of a Parquet file converted and checked at a time.
BATCH_ROWS = 65_536
#: The formats read in blocks.
BLOCK_FORMATS = (table.NAME, jsonlines.NAME)


class _Kernels:
    """Decides where blocks end: after ``size`` kernels, at the start of the next one; refuses
    a kernel seen before whose rows were interrupted by another kernel's."""

    def __init__(self, path: Path, size: int):
        self.path = path
        self.size = size
        self.current: str | None = None
        self.in_block = 0
        self.done: set[str] = set()

    def starts_block(self, kernel: str, row: int | None = None, line: int | None = None) -> bool:
        """Note the rows of ``kernel`` starting at ``row`` (of a table) or ``line``; True when
        they open a new block."""
        if kernel == self.current:
            return False
        if kernel in self.done:
            where = "" if row is None else f"row {row}: "
            raise InputError(
                f"{where}the rows of kernel '{kernel}' are not together (more of them after "
                "other kernels' rows); reading in blocks of kernels needs each kernel's rows in "
                "one run, e.g. the table sorted by kernel",
                self.path,
                line,
            )
        if self.current is not None:
            self.done.add(self.current)
        self.current = kernel
        self.in_block += 1
        if self.in_block > self.size:
            self.in_block = 1
            return True
        return False


def read_blocks(path: str | Path, kernels: int, input_format: str) -> Iterator[Experiment]:
    """The measurements of ``path`` in blocks of ``kernels`` whole kernels, in file order.

    Parameters
    ----------
    path : str or Path
    kernels : int
        Kernels per block, 1 or more.
    input_format : str
        One of :data:`BLOCK_FORMATS`: ``table`` (a Parquet file; CSV is refused) or
        ``extrap-jsonlines``.

    Raises
    ------
    InputError
        For a malformed row or record (naming it), a kernel whose rows are not together, a
        CSV table or another format.
    ValueError
        When ``kernels`` is not a whole number >= 1.
    """
    if not isinstance(kernels, int) or kernels < 1:
        raise ValueError(f"kernels: must be a whole number >= 1, not {kernels!r}")
    path = Path(path)
    if input_format == jsonlines.NAME:
        return _jsonlines_blocks(path, kernels)
    if input_format == table.NAME:
        with path.open("rb") as handle:
            if handle.read(4) == table.PARQUET_MAGIC.encode():
                return _parquet_blocks(path, kernels)
    raise InputError(
        f"{input_format} files are read whole; in blocks of kernels perfcast reads Parquet "
        "tables and Extra-P JSON Lines",
        path,
    )


def _parquet_blocks(path: Path, kernels: int) -> Iterator[Experiment]:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        description = table.parquet_description(parquet.schema_arrow.metadata, path)
        batches = parquet.iter_batches(batch_size=BATCH_ROWS)
    except (pa.ArrowInvalid, OSError) as error:
        raise InputError(f"not a readable Parquet file ({error})", path) from None
    parameters, metrics, metadata = parse_description(description, path)
    blocks = _Kernels(path, kernels)
    pieces: list[pd.DataFrame] = []
    offset = 0

    def block() -> Experiment:
        frame = pd.concat(pieces, ignore_index=True)
        pieces.clear()
        return Experiment.from_frame(frame, parameters, metrics, metadata, str(path))

    try:
        for batch in batches:
            frame = batch.to_pandas()
            table.check_rows(frame, path, offset)
            names = frame[KERNEL].astype(str).to_numpy()
            runs = np.flatnonzero(np.r_[True, names[1:] != names[:-1]])
            start = 0
            for row in runs.tolist():
                if blocks.starts_block(names[row], row=offset + row + 1):
                    pieces.append(frame.iloc[start:row])
                    yield block()
                    start = row
            pieces.append(frame.iloc[start:])
            offset += len(frame)
    except (pa.ArrowInvalid, OSError) as error:
        raise InputError(f"not a readable Parquet file ({error})", path) from None
    if offset == 0:
        raise InputError("the table has no rows", path)
    yield block()


def _jsonlines_blocks(path: Path, kernels: int) -> Iterator[Experiment]:
    blocks = _Kernels(path, kernels)
    rows = Rows(path)
    parameters: list[str] | None = None
    with path.open(encoding="utf-8-sig") as handle:
        records = jsonlines.parse_records(
            path,
            _lines(handle, path),
            json_object,
            "params",
            ("callpath", "region"),
            (jsonlines.DEFAULT_KERNEL, jsonlines.DEFAULT_METRIC),
        )
        for record in records:
            # The first record never starts a block: parameters are known at every yield.
            if blocks.starts_block(record.kernel, line=record.line):
                assert parameters is not None
                yield rows.experiment(parameters)
                rows = Rows(path)
            parameters = record.parameters
            rows.add(record.kernel, record.metric, record.point, record.values)
    if parameters is None:
        raise InputError("the file holds no records", path)
    yield rows.experiment(parameters)


def _lines(handle: Iterator[str], path: Path) -> Iterator[str]:
    """The lines of an open text file; an :class:`InputError` naming the line where it stops
    being UTF-8 text."""
    number = 0
    try:
        for number, line in enumerate(handle, start=1):  # noqa: B007 - read after the loop
            yield line
    except UnicodeDecodeError as error:
        raise InputError(f"not a text file ({error.reason})", path, number + 1) from None
