"""Helpers shared by the readers: JSON records, text files and a row collector.

Readers check every value where they find it (with :func:`perfcast.core.numbers.parse_number`),
so an error names the file and the line (or record) it came from; :class:`Rows` then turns the
collected measurements into an :class:`~perfcast.core.experiment.Experiment`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from perfcast.core.errors import InputError
from perfcast.core.experiment import (
    FIXED_COLUMNS,
    Experiment,
    Metric,
    Parameter,
)
from perfcast.core.jsonin import DuplicateKeyError, parse_json
from perfcast.core.numbers import json_float


def first_content_line(head: str) -> str:
    """The first line of ``head`` that is neither blank nor a ``#`` comment, stripped."""
    for line in head.lstrip("\ufeff").splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped
    return ""


def json_object(line: str) -> dict | None:
    """``line`` parsed as a JSON object, or None when it is not one (for sniffing formats)."""
    try:
        return json_record(line)
    except ValueError:
        return None


def json_record(line: str) -> dict | None:
    """``line`` parsed as a JSON object, or None when it is not one; a
    :class:`~perfcast.core.jsonin.DuplicateKeyError` when the object repeats a key."""
    try:
        value = parse_json(line, parse_float=json_float)
    except DuplicateKeyError:
        raise
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class Rows:
    """Collects measurements row by row and builds the experiment.

    Parameters
    ----------
    source : Path or str
        The file being read, for messages.
    """

    def __init__(self, source: Path | str):
        self.source = source
        self.kernels: list[str] = []
        self.metrics: list[str] = []
        self.points: list[tuple[float, ...]] = []
        self.values: list[float] = []

    def add(self, kernel: str, metric: str, point: tuple[float, ...], values: Iterable[float]):
        """Append one row per value (each a repetition) measured at ``point``."""
        for value in values:
            self.kernels.append(kernel)
            self.metrics.append(metric)
            self.points.append(point)
            self.values.append(value)

    def experiment(
        self,
        parameters: Sequence[Parameter | str],
        metrics: Iterable[Metric] | None = None,
        metadata: dict | None = None,
    ) -> Experiment:
        """The collected rows as an :class:`Experiment` (an :class:`InputError` when empty)."""
        if not self.values:
            raise InputError("the file holds no measurements", self.source)
        names = [p.name if isinstance(p, Parameter) else p for p in parameters]
        for name in names:
            if name in FIXED_COLUMNS:
                raise InputError(f"a parameter may not be named '{name}'", self.source)
        coordinates = list(zip(*self.points, strict=True))
        return Experiment.from_columns(
            self.kernels,
            self.metrics,
            {name: coordinates[index] for index, name in enumerate(names)},
            self.values,
            parameters=parameters,
            metrics=metrics,
            metadata=metadata,
            source=str(self.source),
        )


def talpas_object(line: str) -> dict | None:
    """A Talpas record (JSON with ``;`` between fields) parsed; None when ``line`` is not one."""
    if not (line.startswith("{") and line.endswith("}")) or ";" not in line:
        return None
    return json_object(line.replace(";", ","))


def read_text(path: Path) -> str:
    """The content of ``path`` as UTF-8 text (a byte-order mark dropped); an :class:`InputError`
    when empty or binary."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"not a text file ({error.reason})", path) from None
    if not text.strip():
        raise InputError("the file is empty", path)
    return text
