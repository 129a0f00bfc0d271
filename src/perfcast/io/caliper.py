"""Caliper profiles: ``.cali`` files (read with caliper-reader) and json-split files.

Each profile is one run. Its regions' call paths (Caliper's ``path`` hierarchy, elements joined
by ``->``) are the kernels; its value attributes are the metrics, named as described in
:mod:`perfcast.io.caliper_metrics` (inclusive and exclusive stay distinct). Records outside any
region are kept as the kernel ``<unannotated>``. Profiles with one record per MPI rank
(an ``mpi.rank`` attribute) are reduced across ranks with ``rank_statistic`` and the metric
names get ``_rank_<statistic>``.

Run parameters come from the profile metadata (Caliper globals such as ``mpi.world.size``), from
a file-name pattern, or by default from the integer metadata that varies across the profiles
(see :func:`perfcast.io.profile_set.detect_parameter_keys`).

json-split is the layout ``cali-query -O json-split`` writes and hatchet's ``from_caliper``
reads: an object with ``columns``, ``column_metadata`` (``is_value``, ``attribute.unit``),
``nodes`` (``label``, ``column``, ``parent``) and ``data`` rows whose ``path`` entry is the index
of the region's node; every other top-level key is run metadata.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfcast.core.errors import InputError
from perfcast.core.experiment import CALL_PATH_SEPARATOR, KERNEL, METRIC, VALUE, Experiment, Metric
from perfcast.core.jsonin import parse_json
from perfcast.core.numbers import json_float, parse_number
from perfcast.io.caliper_metrics import CaliperMetric, caliper_metric, rank_metric
from perfcast.io.profile_set import Run, build_experiment

if TYPE_CHECKING:
    import pandas as pd

NAME = "caliper"
UNANNOTATED = "<unannotated>"
RANK_STATISTICS = ("avg", "min", "max", "sum")
_JSON_SPLIT_KEYS = ("data", "columns", "column_metadata", "nodes")
_RANK = "mpi.rank"


def sniff(path: Path, head: str) -> bool:
    """True for a ``.cali`` file, a json-split file, or a directory holding either."""
    if path.is_dir():
        return bool(profile_files(path, strict=False))
    if path.suffix == ".cali":
        return True
    return path.suffix == ".json" and head.lstrip().startswith("{") and _is_json_split(path)


def read(path: Path) -> Experiment:
    """Read one profile or a directory of profiles with default settings."""
    return read_caliper(path)


def read_caliper(
    paths: str | Path | Sequence[str | Path],
    *,
    pattern: str | None = None,
    params: Mapping[str, str] | None = None,
    rank_statistic: str = "avg",
) -> Experiment:
    """Read Caliper profiles, one run each, into an experiment.

    Parameters
    ----------
    paths : path or sequence of paths
        ``.cali`` or json-split files, or directories holding them.
    pattern : str, optional
        File-name pattern giving parameters, e.g. ``"{p}_cores"`` (see
        :mod:`perfcast.io.patterns`).
    params : mapping of str to str, optional
        Metadata key to parameter name, e.g. ``{"mpi.world.size": "p"}``; name ``rep`` makes
        a key the repetition number.
    rank_statistic : {"avg", "min", "max", "sum"}
        How per-rank records are reduced across ranks.

    Returns
    -------
    Experiment

    Raises
    ------
    InputError
        For unreadable or corrupt profiles, directories without profiles, names that do not
        match ``pattern`` and metadata keys missing from a profile (each naming the file).
    """
    if rank_statistic not in RANK_STATISTICS:
        raise InputError(f"rank statistic '{rank_statistic}' is not one of {RANK_STATISTICS}")
    items = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    files = _expand(items)
    where = items[0] if len(items) == 1 else ", ".join(str(p) for p in items)
    runs: list[Run] = []
    metrics: dict[str, Metric] = {}
    for file in files:
        run, found = read_profile(file, rank_statistic=rank_statistic)
        runs.append(run)
        metrics.update(found)
    return build_experiment(
        runs,
        metrics,
        where=where,
        pattern=pattern,
        keys=params,
        default="metadata",
        metadata={"format": NAME, "rank_statistic": rank_statistic},
    )


def read_profile(path: str | Path, rank_statistic: str = "avg") -> tuple[Run, dict[str, Metric]]:
    """Read one ``.cali`` or json-split profile.

    Returns
    -------
    run : Run
        Its measurements and metadata.
    metrics : dict of str to Metric
        The metrics found, by name.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file", path)
    if path.suffix == ".cali":
        records, globals_, attributes = _read_cali(path)
    else:
        records, globals_, attributes = _read_json_split(path)
    rows, metrics = _measurements(records, attributes, path, rank_statistic)
    return Run(path, rows, globals_), metrics


def profile_files(directory: Path, strict: bool = True) -> list[Path]:
    """The Caliper profiles in ``directory`` (or, when it has none, one level below).

    Raises
    ------
    InputError
        When ``strict`` and there are none.
    """
    for depth in ("*", "*/*"):
        found = [
            p
            for p in directory.glob(depth)
            if p.is_file() and (p.suffix == ".cali" or p.suffix == ".json" and _is_json_split(p))
        ]
        if found:
            return sorted(found, key=_natural_key)
    if strict:
        raise InputError(
            "no Caliper profiles (.cali or json-split .json) in this directory", directory
        )
    return []


def _expand(items: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for item in items:
        if item.is_dir():
            files.extend(profile_files(item))
        elif item.exists():
            files.append(item)
        else:
            raise InputError("no such file or directory", item)
    return files


# A record: (call path or None, rank or None, {attribute: value text}).
_Record = tuple[tuple[str, ...] | None, int | None, dict[str, Any]]


def _read_cali(path: Path) -> tuple[list[_Record], dict[str, Any], dict[str, CaliperMetric]]:
    import caliperreader

    reader = caliperreader.CaliperReader()
    try:
        reader.read(str(path))
    except Exception as error:  # caliper-reader raises many kinds on corrupt input
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        raise InputError(
            f"not a readable Caliper .cali file ({reason.rstrip(': ')})", path
        ) from None
    if not reader.records and not reader.globals:
        raise InputError("not a Caliper .cali file: no records and no metadata", path)
    attributes: dict[str, CaliperMetric] = {}
    for name in reader.attributes():
        try:
            meta = reader.attribute(name).metadata()
        except Exception as error:  # a damaged attribute node: caliper-reader fails on access
            raise InputError(
                f"not a readable Caliper .cali file (attribute {name!r}: {type(error).__name__})",
                path,
                value=name,
            ) from None
        if not meta.get("is_value") or meta.get("type") not in ("double", "int", "uint"):
            continue
        mapped = caliper_metric(name, meta.get("attribute.unit"))
        if mapped is not None:
            attributes[name] = mapped
    records: list[_Record] = []
    for number, record in enumerate(reader.records, start=1):
        records.append((_path_tuple(record.get("path")), _rank(record, path, number), record))
    return records, dict(reader.globals), attributes


def _read_json_split(
    path: Path,
) -> tuple[list[_Record], dict[str, Any], dict[str, CaliperMetric]]:
    try:
        document = parse_json(path.read_text(encoding="utf-8"), parse_float=json_float)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"not a readable json-split file ({error})", path) from None
    if not isinstance(document, dict) or any(k not in document for k in _JSON_SPLIT_KEYS):
        raise InputError(
            f"not a Caliper json-split file: needs the keys {', '.join(_JSON_SPLIT_KEYS)}", path
        )
    columns, column_metadata = document["columns"], document["column_metadata"]
    nodes, data = document["nodes"], document["data"]
    for key in _JSON_SPLIT_KEYS:
        if not isinstance(document[key], list):
            raise InputError(f"'{key}' is not a list", path, value=document[key])
    if not all(isinstance(column, str) for column in columns):
        raise InputError("'columns' holds a name that is not a string", path, value=columns)
    if len(columns) != len(column_metadata):
        raise InputError("'columns' and 'column_metadata' differ in length", path)
    hierarchy = "path" if "path" in columns else "source.function#callpath.address"
    if hierarchy not in columns:
        raise InputError("json-split file without a 'path' column", path)
    path_column = columns.index(hierarchy)
    attributes: dict[str, CaliperMetric] = {}
    for column, meta in zip(columns, column_metadata, strict=True):
        if isinstance(meta, dict) and meta.get("is_value"):
            mapped = caliper_metric(column, meta.get("attribute.unit"))
            if mapped is not None:
                attributes[column] = mapped
    paths = _node_paths(nodes, path)
    records: list[_Record] = []
    for number, row in enumerate(data, start=1):
        if not isinstance(row, list) or len(row) != len(columns):
            raise InputError(f"data row {number} does not have {len(columns)} entries", path)
        record = dict(zip(columns, row, strict=True))
        node = row[path_column]
        if node is not None and not (isinstance(node, int) and 0 <= node < len(paths)):
            raise InputError(f"data row {number}: path {node!r} is not a node index", path)
        call_path = None if node is None else paths[node]
        records.append((call_path, _rank(record, path, number), record))
    globals_ = {k: v for k, v in document.items() if k not in _JSON_SPLIT_KEYS}
    return records, globals_, attributes


def _node_paths(nodes: list[Any], source: Path) -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...] | None] = [None] * len(nodes)
    for index in range(len(nodes)):
        chain: list[int] = []
        current: int | None = index
        while current is not None:
            if current in chain or not (isinstance(current, int) and 0 <= current < len(nodes)):
                raise InputError(f"node {index}: broken parent chain at {current!r}", source)
            if paths[current] is not None:
                break
            chain.append(current)
            node = nodes[current]
            if not isinstance(node, dict) or "label" not in node:
                raise InputError(f"node {current} has no label", source)
            current = node.get("parent")
        # The walk stopped at the root or at a node whose path is already known.
        prefix = () if current is None else paths[current] or ()
        for member in reversed(chain):
            prefix = (*prefix, str(nodes[member]["label"]))
            paths[member] = prefix
    return [p if p is not None else () for p in paths]


def _measurements(
    records: list[_Record],
    attributes: Mapping[str, CaliperMetric],
    source: Path,
    rank_statistic: str,
) -> tuple[pd.DataFrame, dict[str, Metric]]:
    per_rank = any(rank is not None for _, rank, _ in records)
    kernels, ranks, names, values = [], [], [], []
    metrics: dict[str, Metric] = {}
    merge: dict[str, str] = {}
    for number, (call_path, rank, record) in enumerate(records, start=1):
        kernel = CALL_PATH_SEPARATOR.join(call_path) if call_path else UNANNOTATED
        for attribute, text in record.items():
            mapped = attributes.get(attribute)
            if mapped is None or text is None:
                continue
            value = parse_number(text, f"record {number}: {attribute}", source, None)
            metric = rank_metric(mapped, rank_statistic).metric if per_rank else mapped.metric
            metrics[metric.name] = metric
            merge[metric.name] = mapped.combine
            kernels.append(kernel)
            ranks.append(-1 if rank is None else rank)
            names.append(metric.name)
            values.append(value)
    if not values:
        raise InputError("the profile holds no region measurements", source)
    import pandas as pd  # here, not above: reading and modeling a small file needs no pandas

    table = pd.DataFrame({KERNEL: kernels, "rank": ranks, METRIC: names, VALUE: values})
    # Records of one region and rank that another attribute splits merge by the metric's own
    # operation; per-rank values then reduce across ranks by the chosen statistic.
    across = _AGGREGATE[rank_statistic]
    parts = []
    for name, group in table.groupby(METRIC, sort=False):
        merged = group.groupby([KERNEL, "rank"], sort=False)[VALUE].agg(
            _AGGREGATE[merge[str(name)]]
        )
        reduced = merged.groupby(level=KERNEL, sort=False).agg(across if per_rank else "first")
        parts.append(pd.DataFrame({KERNEL: reduced.index, METRIC: name, VALUE: reduced.to_numpy()}))
    return pd.concat(parts, ignore_index=True), metrics


_AGGREGATE = {"sum": "sum", "min": "min", "max": "max", "mean": "mean", "avg": "mean"}


def _rank(record: Mapping[str, Any], source: Path, number: int) -> int | None:
    value = record.get(_RANK)
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"record {number}: mpi.rank is {value!r}", source) from None


def _path_tuple(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _is_json_split(path: Path) -> bool:
    with path.open("rb") as handle:
        if not handle.read(64).lstrip().startswith(b"{"):
            return False
        handle.seek(0)
        tail = b""
        while chunk := handle.read(1 << 20):
            if b'"column_metadata"' in tail + chunk:
                return True
            tail = chunk[-32:]
    return False


def _natural_key(path: Path) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(path))]
