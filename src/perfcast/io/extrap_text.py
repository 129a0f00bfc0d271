"""Extra-P's text format: ``PARAMETER``, ``POINTS``, ``REGION``, ``METRIC`` and ``DATA`` lines.

A file declares its parameters (``PARAMETER p`` or ``PARAMETER p n``), then its points, either
one parenthesised group per point (``POINTS ( 32 5000 ) ( 64 5000 )``, any number of groups per
line) or, with a single parameter, bare numbers (``POINTS 1000 2000 4000``). Then come blocks:
``REGION name`` and ``METRIC name`` select the kernel and metric, and each following ``DATA`` line
holds every repetition measured at the next point, in the order the points were declared.
Blank lines and lines starting with ``#`` are ignored.

Choices that follow Extra-P 4.2.5's reader
------------------------------------------
- Whitespace inside a line is collapsed to one space and stripped at the ends, so
  ``REGION   main()`` names the kernel ``main()``; region names are call paths joined by ``->``.
- ``METRIC`` and ``REGION`` both restart the point counter; a ``REGION`` keeps the current metric.
- Every block must give DATA for every point (Extra-P rejects the file otherwise).

Where perfcast differs, on purpose
----------------------------------
- DATA before any ``METRIC`` belongs to the metric ``<default>`` (Extra-P names it ``""``,
  which cannot be selected on a command line; ``<default>`` is also what Extra-P's own JSON Lines
  reader calls a missing metric). DATA before any ``REGION`` belongs to the kernel ``<root>``,
  as in Extra-P's JSON Lines reader (its text reader uses ``""``).
- A ``REGION`` or ``METRIC`` without any DATA, a block given twice, a repeated point, a
  ``DATA`` line without values and non-finite values are errors; Extra-P keeps, double counts
  or accepts them.
- Any number of parameters is accepted (Extra-P stops at 4).

The writer produces the same layout (points sorted, one ``POINTS`` line each), values written with
``repr`` so that reading the file back gives the identical numbers. The text format has no room
for units, parameter roles, metadata or repetition numbers; those are not written.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NoReturn

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import KERNEL, METRIC, REPETITION, VALUE, Experiment
from perfcast.core.numbers import parse_number
from perfcast.io._records import Rows, first_content_line, read_text

NAME = "extrap-text"
SUFFIXES = (".txt",)
KEYWORDS = ("PARAMETER", "POINTS", "REGION", "METRIC", "DATA")
DEFAULT_METRIC = "<default>"
DEFAULT_KERNEL = "<root>"
_GROUP = re.compile(r"\(([^()]*)\)")


def sniff(path: Path, head: str) -> bool:
    """True when the first meaningful line starts with one of the format's keywords."""
    words = first_content_line(head).split(maxsplit=1)
    return bool(words) and words[0] in KEYWORDS


class _Reader:
    """The state of one pass over a text file."""

    def __init__(self, path: Path):
        self.path = path
        self.parameters: list[str] = []
        self.points: list[tuple[float, ...]] = []
        self.point_lines: dict[tuple[float, ...], int] = {}
        self.rows = Rows(path)
        self.kernel = DEFAULT_KERNEL
        self.metric = DEFAULT_METRIC
        self.block_line = 0
        self.block_count = 0
        self.filled: dict[tuple[str, str], int] = {}
        self.declared: dict[tuple[str, str], int] = {}
        self.with_data: set[tuple[str, str]] = set()

    def fail(self, message: str, line: int) -> NoReturn:
        raise InputError(message, self.path, line)

    def parameter(self, rest: str, line: int) -> None:
        if self.points:
            self.fail("PARAMETER after POINTS; declare every parameter first", line)
        names = rest.split(" ") if rest else []
        if not names:
            self.fail("PARAMETER line without a name", line)
        for name in names:
            if name in self.parameters:
                self.fail(f"parameter '{name}' declared twice", line)
            self.parameters.append(name)

    def point_list(self, rest: str, line: int) -> None:
        if not self.parameters:
            self.fail("POINTS before any PARAMETER", line)
        if self.filled or self.block_count:
            self.fail("POINTS after DATA; declare every point before the data", line)
        if "(" in rest or ")" in rest:
            if _GROUP.sub("", rest).strip():
                self.fail(f"malformed POINTS line: {rest!r}", line)
            groups = [group.split() for group in _GROUP.findall(rest)]
        elif len(self.parameters) == 1:
            groups = [[value] for value in rest.split()]
        else:
            self.fail(
                f"POINTS without parentheses, but there are {len(self.parameters)} parameters; "
                "write each point as ( v1 v2 ... )",
                line,
            )
        if not groups:
            self.fail("POINTS line without a point", line)
        for group in groups:
            if len(group) != len(self.parameters):
                self.fail(
                    f"point ( {' '.join(group)} ) has {len(group)} coordinates, but there are "
                    f"{len(self.parameters)} parameters ({', '.join(self.parameters)})",
                    line,
                )
            point = tuple(
                parse_number(raw, f"parameter '{name}'", self.path, line)
                for raw, name in zip(group, self.parameters, strict=True)
            )
            if point in self.point_lines:
                self.fail(
                    f"point ( {' '.join(group)} ) already declared in line "
                    f"{self.point_lines[point]}",
                    line,
                )
            self.point_lines[point] = line
            self.points.append(point)

    def close_block(self) -> None:
        if 0 < self.block_count < len(self.points):
            raise InputError(
                f"region '{self.kernel}', metric '{self.metric}' has {self.block_count} DATA "
                f"lines for {len(self.points)} points",
                self.path,
                self.block_line,
            )
        self.block_count = 0

    def region(self, rest: str, line: int) -> None:
        if not rest:
            self.fail("REGION line without a name", line)
        self.close_block()
        self.kernel = rest
        self.block_line = line
        self.declared.setdefault(("region", rest), line)

    def set_metric(self, rest: str, line: int) -> None:
        if not rest:
            self.fail("METRIC line without a name", line)
        self.close_block()
        self.metric = rest
        self.block_line = line
        self.declared.setdefault(("metric", rest), line)

    def data(self, rest: str, line: int) -> None:
        if not self.points:
            self.fail("DATA before any POINTS", line)
        key = (self.kernel, self.metric)
        if self.block_count == 0:
            if key in self.filled:
                self.fail(
                    f"data for region '{self.kernel}', metric '{self.metric}' already given in "
                    f"line {self.filled[key]}",
                    line,
                )
            self.filled[key] = line
            self.block_line = line
        if self.block_count >= len(self.points):
            self.fail(
                f"more DATA lines than the {len(self.points)} points for region "
                f"'{self.kernel}', metric '{self.metric}'",
                line,
            )
        raw_values = rest.split(" ") if rest else []
        if not raw_values:
            self.fail("DATA line without values; a point needs at least one repetition", line)
        values = [parse_number(raw, "value", self.path, line) for raw in raw_values]
        self.rows.add(self.kernel, self.metric, self.points[self.block_count], values)
        self.block_count += 1
        self.with_data.update({("region", self.kernel), ("metric", self.metric)})

    def finish(self) -> Experiment:
        self.close_block()
        if not self.parameters:
            raise InputError("the file declares no PARAMETER", self.path)
        for (kind, name), line in self.declared.items():
            if (kind, name) not in self.with_data:
                self.fail(f"{kind} '{name}' has no DATA", line)
        return self.rows.experiment(self.parameters)


def read(path: Path) -> Experiment:
    """Read an Extra-P text file.

    Raises
    ------
    InputError
        For any malformed, inconsistent or incomplete content, naming the line.
    """
    path = Path(path)
    reader = _Reader(path)
    handlers = {
        "PARAMETER": reader.parameter,
        "POINTS": reader.point_list,
        "REGION": reader.region,
        "METRIC": reader.set_metric,
        "DATA": reader.data,
    }
    for number, raw in enumerate(read_text(path).splitlines(), start=1):
        line = " ".join(raw.split())
        if not line or line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        handler = handlers.get(keyword)
        if handler is None:
            reader.fail(
                f"unknown keyword {keyword!r}; expected one of {', '.join(KEYWORDS)}", number
            )
        handler(rest, number)
    return reader.finish()


def format_number(value: float) -> str:
    """Shortest text that reads back as exactly ``value`` (integers without ``.0``)."""
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def _check_name(name: str, what: str) -> None:
    if not name or " ".join(name.split()) != name:
        raise InputError(
            f"{what} {name!r} cannot be written to Extra-P's text format "
            "(empty, or with line breaks or runs of spaces)"
        )


def _require_complete(
    experiment: Experiment, codes: dict[str, np.ndarray], points: np.ndarray, path: Path
) -> None:
    """Raise an InputError naming the first kernel and metric not measured at every point."""
    import pandas as pd  # here, not above: reading and modeling a small file needs no pandas

    pairs = pd.DataFrame(codes).drop_duplicates()
    sizes = pairs.groupby(["k", "m"], sort=False).size()
    incomplete = sizes[sizes < len(points)]
    if incomplete.empty:
        return
    k, m = incomplete.index[0]
    kernel, metric = experiment.kernels[k], experiment.metric_names[m]
    have = set(pairs[(pairs["k"] == k) & (pairs["m"] == m)]["p"])
    missing = points[min(set(range(len(points))) - have)]
    where = dict(zip(experiment.parameter_names, missing.tolist(), strict=True))
    raise InputError(
        f"kernel '{kernel}', metric '{metric}' has no data at point {where}; Extra-P's text "
        "format needs every kernel measured at every point",
        path,
    )


def write(experiment: Experiment, path: Path) -> None:
    """Write ``experiment`` as an Extra-P text file.

    Raises
    ------
    InputError
        When a kernel lacks data at one of the experiment's points (the format has no way to say
        so) or a name does not survive the format's whitespace rules.
    """
    import pandas as pd  # here, not above: reading and modeling a small file needs no pandas

    names = list(experiment.parameter_names)
    for name in names:
        if len(name.split()) != 1:
            raise InputError(f"parameter {name!r} cannot be written to Extra-P's text format")
    for kernel in experiment.kernels:
        _check_name(kernel, "kernel")
    for metric in experiment.metric_names:
        _check_name(metric, "metric")
    frame = experiment.frame
    points = experiment.points()
    # Codes in order of first appearance (kernels, metrics) and of the sorted points.
    codes = {
        "k": pd.factorize(frame[KERNEL])[0],
        "m": pd.factorize(frame[METRIC])[0],
        "p": frame.groupby(names, sort=True).ngroup().to_numpy(),
    }
    _require_complete(experiment, codes, points, path)
    order = np.lexsort((frame[REPETITION].to_numpy(), codes["p"], codes["m"], codes["k"]))
    kernel_of, metric_of, point_of = (codes[key][order] for key in ("k", "m", "p"))
    values = [format_number(v) for v in frame[VALUE].to_numpy(dtype=float)[order]]
    kernels, metrics = experiment.kernels, experiment.metric_names
    lines = [f"PARAMETER {name}" for name in names]
    lines.append("")
    lines += ["POINTS ( " + " ".join(format_number(c) for c in point) + " )" for point in points]
    data: list[str] = []
    previous = (-1, -1, -1)
    keys = zip(kernel_of.tolist(), metric_of.tolist(), point_of.tolist(), strict=True)
    for row, key in enumerate(keys):
        if key != previous:
            if data:
                lines.append("DATA " + " ".join(data))
                data = []
            if key[:2] != previous[:2]:
                lines.append("")
                if key[0] != previous[0]:
                    lines.append(f"REGION {kernels[key[0]]}")
                lines.append(f"METRIC {metrics[key[1]]}")
            previous = key
        data.append(values[row])
    lines.append("DATA " + " ".join(data))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
