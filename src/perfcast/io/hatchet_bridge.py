"""Bridge to hatchet GraphFrames and Thicket objects (LLNL's call-tree analysis libraries).

perfcast does not depend on hatchet: these functions take the objects a user already has and
read them through their public attributes (``dataframe``, ``exc_metrics``, ``inc_metrics``,
``metadata``; a Thicket's ``profile`` index level), so they work with whatever hatchet version
the user runs. Install them with the optional extra ``perfcast[hatchet]`` (hatchet needs
pandas < 3).

* One GraphFrame is one run; several GraphFrames or a Thicket (one run per profile) form a
  series. Parameters come from explicit values, from metadata keys (``{"mpi.world.size": "p"}``)
  or, for several runs, from the integer metadata that varies between them.
* Kernels are the nodes' call paths (frame ``name`` of each node from the root, joined by
  ``->``).
* Metrics are the numeric columns listed in ``exc_metrics`` and ``inc_metrics``, named as in the
  GraphFrame unless ``metrics`` renames them; hatchet's conventional ``time`` and ``time (inc)``
  become ``time`` and ``time_inclusive``. Rows split by another index level (``rank``,
  ``thread``) reduce by ``statistic`` and the name gets ``_<level>_<statistic>``.
* :func:`to_graphframe` goes the other way for one measured point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfcast.core.errors import InputError
from perfcast.core.experiment import (
    CALL_PATH_SEPARATOR,
    KERNEL,
    METRIC,
    REPETITION,
    VALUE,
    Experiment,
    Metric,
    call_path,
)
from perfcast.io.profile_set import Run, build_experiment

_DEFAULT_NAMES = {"time": "time", "time (inc)": "time_inclusive"}
_STATISTICS = {"avg": "mean", "min": "min", "max": "max", "sum": "sum"}
MetricNames = Mapping[str, "str | Metric"]


def from_graphframe(
    graphframe: Any,
    parameters: Mapping[str, float] | None = None,
    *,
    params: Mapping[str, str] | None = None,
    metrics: MetricNames | None = None,
    statistic: str = "avg",
) -> Experiment:
    """One hatchet GraphFrame (one run) as an experiment.

    Parameters
    ----------
    graphframe : hatchet.GraphFrame
        The run.
    parameters : mapping of str to float, optional
        The run's parameter values, e.g. ``{"p": 64}``.
    params : mapping of str to str, optional
        Metadata key to parameter name instead, e.g. ``{"mpi.world.size": "p"}``.
    metrics : mapping, optional
        Column name to perfcast metric name (or :class:`Metric` with unit);
        columns not named keep their name.
    statistic : {"avg", "min", "max", "sum"}
        How rows of several ranks or threads of one node reduce.

    Raises
    ------
    InputError
        When neither ``parameters`` nor ``params`` is given, or a metadata key is missing.
    """
    if parameters is None and params is None:
        raise InputError(
            "one GraphFrame is one run: give its parameter values (parameters={'p': 64}) or "
            "the metadata keys that hold them (params={'mpi.world.size': 'p'})"
        )
    return from_graphframes(
        [graphframe],
        None if parameters is None else [parameters],
        params=params,
        metrics=metrics,
        statistic=statistic,
    )


def from_graphframes(
    graphframes: Sequence[Any],
    parameters: Sequence[Mapping[str, float]] | None = None,
    *,
    params: Mapping[str, str] | None = None,
    metrics: MetricNames | None = None,
    statistic: str = "avg",
) -> Experiment:
    """Several GraphFrames, one run each, as one experiment.

    Parameters
    ----------
    graphframes : sequence of hatchet.GraphFrame
        The runs.
    parameters : sequence of mappings, optional
        Each run's parameter values (a ``rep`` entry gives the repetition).
    params : mapping of str to str, optional
        Metadata key to parameter name; by default the integer metadata that varies.
    metrics, statistic
        As in :func:`from_graphframe`.
    """
    if parameters is not None and len(parameters) != len(graphframes):
        raise InputError(f"{len(parameters)} parameter sets for {len(graphframes)} GraphFrames")
    runs, units = [], {}
    for index, graphframe in enumerate(graphframes):
        where = f"GraphFrame {index + 1}"
        columns = _metric_columns(graphframe, where)
        paths = _call_paths(graphframe)
        rows, found = _rows(graphframe.dataframe, paths, columns, metrics, statistic, where)
        units.update(found)
        metadata = dict(getattr(graphframe, "metadata", None) or {})
        if parameters is not None:
            metadata.update({f"perfcast.{k}": v for k, v in parameters[index].items()})
        runs.append(Run(where, rows, metadata))
    keys = params
    if parameters is not None:
        keys = {f"perfcast.{k}": k for k in parameters[0]}
    return build_experiment(
        runs, units, where="GraphFrames", keys=keys, metadata={"format": "hatchet"}
    )


def from_thicket(
    thicket: Any,
    *,
    params: Mapping[str, str] | None = None,
    metrics: MetricNames | None = None,
    statistic: str = "avg",
) -> Experiment:
    """A Thicket as an experiment, one run per profile.

    Parameters
    ----------
    thicket : thicket.Thicket
        Its ``dataframe`` is indexed by ``node`` and ``profile``; its ``metadata`` table (one row
        per profile) holds the run parameters.
    params : mapping of str to str, optional
        Metadata column to parameter name; by default the integer columns that vary.
    metrics, statistic
        As in :func:`from_graphframe`.
    """
    frame = thicket.dataframe
    if "profile" not in frame.index.names:
        raise InputError("the Thicket's dataframe has no 'profile' index level")
    if isinstance(frame.columns, pd.MultiIndex):
        raise InputError("Thickets with column groups (MultiIndex columns) are not supported")
    columns = _metric_columns(thicket, "Thicket")
    paths = _call_paths(thicket)
    runs, units = [], {}
    table = thicket.metadata
    for profile, rows in frame.groupby(level="profile", sort=False):
        where = f"Thicket profile {profile}"
        measured, found = _rows(
            rows.droplevel("profile"), paths, columns, metrics, statistic, where
        )
        units.update(found)
        metadata = table.loc[profile].to_dict() if profile in table.index else {}
        runs.append(Run(where, measured, metadata))
    return build_experiment(
        runs, units, where="Thicket", keys=params, metadata={"format": "thicket"}
    )


def to_graphframe(experiment: Experiment, point: Mapping[str, float], repetition: int = 0) -> Any:
    """The measurements of one run (a point and repetition) as a hatchet GraphFrame.

    Call paths become the tree, metrics its columns (``time_inclusive`` is listed as an
    inclusive metric). Missing intermediate call-path nodes get no metric values.

    Raises
    ------
    InputError
        When nothing was measured at ``point`` with this repetition.
    """
    import hatchet

    frame = experiment.frame
    mask = frame[REPETITION] == repetition
    for name in experiment.parameter_names:
        if name not in point:
            raise InputError(f"the point does not give parameter '{name}'", experiment.source)
        mask &= np.isclose(frame[name], float(point[name]))
    run = frame.loc[mask]
    if run.empty:
        raise InputError(
            f"no measurements at {dict(point)}, repetition {repetition}", experiment.source
        )
    values = run.pivot_table(index=KERNEL, columns=METRIC, values=VALUE, aggfunc="first")
    roots: list[dict[str, Any]] = []
    nodes: dict[tuple[str, ...], dict[str, Any]] = {}
    for kernel in sorted(values.index, key=lambda k: len(call_path(k))):
        elements = call_path(kernel)
        for depth in range(1, len(elements) + 1):
            key = elements[:depth]
            if key in nodes:
                continue
            node = {"frame": {"name": key[-1], "type": "region"}, "metrics": {}, "children": []}
            nodes[key] = node
            (nodes[key[:-1]]["children"] if depth > 1 else roots).append(node)
        row = values.loc[kernel]
        nodes[elements]["metrics"] = {m: float(v) for m, v in row.items() if pd.notna(v)}
    return hatchet.GraphFrame.from_literal(roots)


def _metric_columns(obj: Any, where: str) -> list[str]:
    listed = list(getattr(obj, "exc_metrics", []) or []) + list(
        getattr(obj, "inc_metrics", []) or []
    )
    frame = obj.dataframe
    columns = [
        c for c in dict.fromkeys(listed) if c in frame and pd.api.types.is_numeric_dtype(frame[c])
    ]
    if not columns:
        raise InputError("no numeric metric columns (exc_metrics / inc_metrics)", where)
    return columns


def _rows(
    frame: pd.DataFrame,
    paths: Mapping[int, str],
    columns: Sequence[str],
    names: MetricNames | None,
    statistic: str,
    where: str,
) -> tuple[pd.DataFrame, dict[str, Metric]]:
    if statistic not in _STATISTICS:
        raise InputError(f"statistic '{statistic}' is not one of {tuple(_STATISTICS)}")
    if "node" not in frame.index.names:
        raise InputError("the dataframe has no 'node' index level", where)
    extra = [level for level in frame.index.names if level != "node"]
    nodes = frame.index.get_level_values("node")
    kernels = [paths.get(id(node)) or _path_from_parents(node) for node in nodes]
    data = frame[list(columns)].reset_index(drop=False)
    data[KERNEL] = kernels
    duplicated = data.duplicated([KERNEL, *extra])
    if duplicated.any():
        kernel = data[KERNEL][duplicated].iloc[0]
        raise InputError(f"two nodes have the call path '{kernel}'", where)
    grouped = data.groupby(KERNEL, sort=False)[list(columns)]
    reduced = grouped.agg(_STATISTICS[statistic]) if extra else grouped.first()
    suffix = "".join(f"_{level}_{statistic}" for level in extra)
    metrics: dict[str, Metric] = {}
    parts = []
    for column in columns:
        metric = _metric(column, names, suffix)
        metrics[metric.name] = metric
        values = reduced[column].dropna()
        parts.append(
            pd.DataFrame({KERNEL: values.index, METRIC: metric.name, VALUE: values.values})
        )
    rows = pd.concat(parts, ignore_index=True)
    if rows.empty:
        raise InputError("no metric values", where)
    return rows, metrics


def _metric(column: str, names: MetricNames | None, suffix: str) -> Metric:
    given = (names or {}).get(column)
    if isinstance(given, Metric):
        return Metric(given.name + suffix, given.unit)
    return Metric((given or _DEFAULT_NAMES.get(column, column)) + suffix)


def _call_paths(obj: Any) -> dict[int, str]:
    """Call path of every node reachable from the graph's roots, keyed by ``id(node)``.

    Walks down from the roots because some hatchet readers link children but not parents.
    """
    paths: dict[int, str] = {}
    graph = getattr(obj, "graph", None)
    stack = [(root, "") for root in getattr(graph, "roots", [])]
    while stack:
        node, prefix = stack.pop()
        name = str(node.frame.get("name"))
        path = f"{prefix}{CALL_PATH_SEPARATOR}{name}" if prefix else name
        if id(node) in paths:
            continue
        paths[id(node)] = path
        stack.extend((child, path) for child in node.children)
    return paths


def _path_from_parents(node: Any) -> str:
    return CALL_PATH_SEPARATOR.join(str(step.frame.get("name")) for step in node.path())
