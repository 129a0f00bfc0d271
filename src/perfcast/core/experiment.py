"""The experiment data model: parameters, kernels, metrics and every measured repetition.

An :class:`Experiment` wraps one pandas long table with the columns
``kernel, metric, <one column per parameter>, repetition, value``. Readers produce it, modelers
consume it; :meth:`Experiment.to_frame` and :meth:`Experiment.from_frame` expose it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from perfcast.core.errors import InputError

KERNEL = "kernel"
METRIC = "metric"
REPETITION = "repetition"
VALUE = "value"
FIXED_COLUMNS = (KERNEL, METRIC, REPETITION, VALUE)
CALL_PATH_SEPARATOR = "->"


@dataclass(frozen=True)
class Parameter:
    """An input parameter of the measured program.

    Parameters
    ----------
    name : str
        Name used in models, e.g. ``"p"`` or ``"n"``.
    role : str, optional
        What the parameter means: ``"processes"``, ``"threads"``, ``"problem_size"`` or
        ``"configuration"``; None when unknown.
    """

    name: str
    role: str | None = None


@dataclass(frozen=True)
class Metric:
    """A measured quantity such as ``time`` (seconds) or ``visits`` (count).

    Parameters
    ----------
    name : str
        Metric name as it appears in the long table.
    unit : str, optional
        Unit of the values, e.g. ``"s"``.
    """

    name: str
    unit: str = ""


def call_path(kernel: str) -> tuple[str, ...]:
    """Split a kernel name such as ``"main->solve->spmv"`` into its call-path elements."""
    return tuple(kernel.split(CALL_PATH_SEPARATOR))


@dataclass
class Series:
    """Measurements of several kernels for one metric, all taken at the same points.

    Modelers fit a whole :class:`Series` at once (vectorized across kernels).

    Attributes
    ----------
    metric : str
        The metric measured.
    parameters : tuple of str
        Parameter names, the columns of ``points``.
    kernels : list of str
        Kernel names, the first axis of ``values``.
    points : ndarray, shape (n_points, n_parameters)
        The distinct measured configurations.
    values : ndarray, shape (n_kernels, n_points, n_repetitions)
        Every repetition; NaN pads points with fewer repetitions than the most repeated one.
    """

    metric: str
    parameters: tuple[str, ...]
    kernels: list[str]
    points: np.ndarray
    values: np.ndarray

    @property
    def means(self) -> np.ndarray:
        """Mean over repetitions, shape (n_kernels, n_points)."""
        means: np.ndarray = np.nanmean(self.values, axis=2)
        return means

    @property
    def repetitions(self) -> np.ndarray:
        """Number of repetitions per kernel and point, shape (n_kernels, n_points)."""
        counts: np.ndarray = np.sum(~np.isnan(self.values), axis=2)
        return counts


@dataclass
class Experiment:
    """A set of measurements plus the metadata needed to interpret them.

    Build one with :meth:`from_frame` (which validates the table) or a reader from
    :mod:`perfcast.io`.

    Attributes
    ----------
    frame : pandas.DataFrame
        The long table ``kernel, metric, <parameters...>, repetition, value``.
    parameters : tuple of Parameter
        The parameters, in column order.
    metrics : dict of str to Metric
        Known metrics by name; every metric in the table has an entry.
    metadata : dict
        Free-form facts about the runs (machine, command, date, code revision, ...).
    source : str, optional
        Where the data came from, used in messages.
    """

    frame: pd.DataFrame
    parameters: tuple[Parameter, ...]
    metrics: dict[str, Metric] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    source: str | None = None

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        parameters: Iterable[Parameter | str] | None = None,
        metrics: Mapping[str, Metric] | Iterable[Metric] | None = None,
        metadata: Mapping[str, Any] | None = None,
        source: str | None = None,
    ) -> Experiment:
        """Validate a long table and wrap it.

        Parameters
        ----------
        frame : pandas.DataFrame
            Columns ``kernel``, ``metric``, ``value``, one per parameter and optionally
            ``repetition`` (numbered per kernel, metric and point when absent).
        parameters : iterable of Parameter or str, optional
            The parameter columns; by default every column that is not a fixed one.
        metrics : mapping or iterable of Metric, optional
            Units for the metrics; metrics without an entry get an empty unit.
        metadata : mapping, optional
            Facts about the runs.
        source : str, optional
            Name of the input, used in error messages.

        Returns
        -------
        Experiment

        Raises
        ------
        InputError
            When a column is missing, a value or parameter is not finite, or a row is duplicated.
        """
        where = source or "<table>"
        for column in (KERNEL, METRIC, VALUE):
            if column not in frame.columns:
                raise InputError(f"the table has no '{column}' column", where)
        if parameters is None:
            names = [c for c in frame.columns if c not in FIXED_COLUMNS]
            params = tuple(Parameter(str(n)) for n in names)
        else:
            params = tuple(p if isinstance(p, Parameter) else Parameter(str(p)) for p in parameters)
        names = [p.name for p in params]
        if not names:
            raise InputError("the table has no parameter columns", where)
        if len(set(names)) != len(names):
            raise InputError(f"duplicate parameter names {names}", where)
        for name in names:
            if name not in frame.columns:
                raise InputError(f"the table has no column for parameter '{name}'", where)

        table = frame.loc[
            :, [KERNEL, METRIC, *names, *([REPETITION] if REPETITION in frame else [])]
        ]
        table = table.assign(**{VALUE: frame[VALUE]}).reset_index(drop=True)
        if table.empty:
            raise InputError("the table holds no measurements", where)
        for column in (KERNEL, METRIC):
            missing = table[column].isna().to_numpy()
            if missing.any():
                row = int(np.flatnonzero(missing)[0])
                raise InputError(f"record {row + 1}: {column} name is missing", where)
            table[column] = table[column].astype(str)
        for column in [*names, VALUE]:
            numeric = pd.to_numeric(table[column], errors="coerce").astype(float)
            bad = ~np.isfinite(numeric.to_numpy())
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raw = table[column].iloc[row]
                raw = raw.item() if isinstance(raw, np.generic) else raw
                raise InputError(
                    f"record {row + 1}: {column} is {raw!r}, not a finite number",
                    where,
                )
            table[column] = numeric
        if REPETITION not in table:
            table[REPETITION] = table.groupby([KERNEL, METRIC, *names], sort=False).cumcount()
        else:
            table[REPETITION] = pd.to_numeric(table[REPETITION], errors="coerce")
            numbers = table[REPETITION].to_numpy(dtype=float)
            bad = ~np.isfinite(numbers) | (numbers != np.round(numbers))
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise InputError(f"record {row + 1}: repetition is not an integer", where)
            table[REPETITION] = table[REPETITION].astype(int)
        duplicated = table.duplicated([KERNEL, METRIC, *names, REPETITION])
        if duplicated.any():
            row = int(np.flatnonzero(duplicated.to_numpy())[0])
            raise InputError(
                f"record {row + 1}: repetition {table[REPETITION].iloc[row]} of kernel "
                f"'{table[KERNEL].iloc[row]}' at this point appears twice",
                where,
            )
        table = table[[KERNEL, METRIC, *names, REPETITION, VALUE]]

        known: dict[str, Metric] = {}
        if metrics is not None:
            items = metrics.values() if isinstance(metrics, Mapping) else metrics
            known = {m.name: m for m in items}
        for name in pd.unique(table[METRIC]):
            known.setdefault(name, Metric(name))
        return cls(table, params, known, dict(metadata or {}), source)

    def to_frame(self) -> pd.DataFrame:
        """Return a copy of the long table."""
        return self.frame.copy()

    def __repr__(self) -> str:
        """One line: source, kernels, metrics, parameters with their value counts, repetitions."""
        frame = self.frame
        parameters = ", ".join(f"{name}[{frame[name].nunique()}]" for name in self.parameter_names)
        repetitions = frame.groupby([KERNEL, METRIC, *self.parameter_names], sort=False).size()
        reps = (
            f"{repetitions.min()}"
            if len(repetitions) and repetitions.min() == repetitions.max()
            else (f"{repetitions.min()}-{repetitions.max()}" if len(repetitions) else "0")
        )
        return (
            f"<Experiment {self.source or 'in memory'!r}: {frame[KERNEL].nunique()} kernels, "
            f"metrics {', '.join(self.metric_names)}, parameters {parameters}, "
            f"{len(self.points())} points, {reps} repetitions>"
        )

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """Names of the parameters, in column order."""
        return tuple(p.name for p in self.parameters)

    @property
    def kernels(self) -> list[str]:
        """Kernel names in order of first appearance."""
        return list(pd.unique(self.frame[KERNEL]))

    @property
    def metric_names(self) -> list[str]:
        """Metric names in order of first appearance."""
        return list(pd.unique(self.frame[METRIC]))

    def points(self) -> np.ndarray:
        """Distinct measured configurations, shape (n_points, n_parameters), sorted."""
        names = list(self.parameter_names)
        unique = self.frame[names].drop_duplicates().sort_values(names)
        return unique.to_numpy(dtype=float)

    def check_metric(self, metric: str) -> None:
        """Raise unless ``metric`` was measured.

        Raises
        ------
        InputError
            Naming the metrics there are (``reason`` ``unknown-metric``, ``value`` the metric).
        """
        if metric not in self.metric_names:
            raise InputError(
                f"no metric '{metric}' (have {', '.join(self.metric_names)})",
                self.source,
                reason="unknown-metric",
                value=metric,
            )

    def select(self, kernels: str | None = None, metric: str | None = None) -> Experiment:
        """Keep only the kernels matching a glob pattern and/or one metric.

        Raises
        ------
        InputError
            When nothing matches.
        """
        mask = np.ones(len(self.frame), dtype=bool)
        if metric is not None:
            self.check_metric(metric)
            mask &= (self.frame[METRIC] == metric).to_numpy()
        if kernels is not None:
            names = self.frame[KERNEL].to_numpy()
            unique = pd.unique(names)
            chosen = {k for k in unique if fnmatch.fnmatchcase(k, kernels)}
            if not chosen:
                raise InputError(f"no kernel matches '{kernels}'", self.source)
            mask &= np.isin(names, list(chosen))
        frame = self.frame.loc[mask].reset_index(drop=True)
        metrics = {m: self.metrics[m] for m in pd.unique(frame[METRIC])}
        return Experiment(frame, self.parameters, metrics, dict(self.metadata), self.source)

    def series(self, metric: str | None = None) -> list[Series]:
        """Group the measurements of one metric into :class:`Series` of kernels sharing points.

        Parameters
        ----------
        metric : str, optional
            Defaults to the experiment's only metric, or ``time`` when there are several.

        Returns
        -------
        list of Series
            One per distinct set of measured points, kernels in order of first appearance.
        """
        metric = self.default_metric() if metric is None else metric
        names = list(self.parameter_names)
        table = self.frame[self.frame[METRIC] == metric]
        if table.empty:
            raise InputError(f"no measurements of metric '{metric}'", self.source)
        kernel_codes, kernel_names = pd.factorize(table[KERNEL], sort=False)
        point_codes = table.groupby(names, sort=True).ngroup().to_numpy()
        point_table = table[names].drop_duplicates().sort_values(names).to_numpy(dtype=float)
        # Kernels measured at the same set of points share a row of this membership matrix.
        membership = np.zeros((len(kernel_names), len(point_table)), dtype=bool)
        membership[kernel_codes, point_codes] = True
        signatures, group_of_kernel = np.unique(membership, axis=0, return_inverse=True)
        group_of_kernel = group_of_kernel.ravel()
        groups, first_kernel = np.unique(group_of_kernel, return_index=True)
        result: list[Series] = []
        for group in groups[np.argsort(first_kernel)]:
            ids = np.flatnonzero(group_of_kernel == group)
            point_ids = np.flatnonzero(signatures[group])
            rows = np.isin(kernel_codes, ids)
            k_local = np.searchsorted(ids, kernel_codes[rows])
            p_local = np.searchsorted(point_ids, point_codes[rows])
            # Repetitions in the order of their numbers, whatever the row order.
            sub = pd.DataFrame(
                {"k": k_local, "p": p_local, "r": table[REPETITION].to_numpy()[rows]}
            )
            r_local = sub.groupby(["k", "p"])["r"].rank(method="first").to_numpy(dtype=int) - 1
            values = np.full((len(ids), len(point_ids), r_local.max() + 1), np.nan)
            values[k_local, p_local, r_local] = table[VALUE].to_numpy()[rows]
            result.append(
                Series(
                    metric=metric,
                    parameters=tuple(names),
                    kernels=[str(name) for name in kernel_names[ids]],
                    points=point_table[point_ids],
                    values=values,
                )
            )
        return result

    def default_metric(self) -> str:
        """The metric to use when none is named: the only one, else ``time``.

        Raises
        ------
        InputError
            When there are several metrics and none is ``time``.
        """
        metrics = self.metric_names
        if len(metrics) == 1:
            return metrics[0]
        if "time" in metrics:
            return "time"
        raise InputError(
            f"the experiment has several metrics ({', '.join(metrics)}) and none is 'time'; "
            "choose one",
            self.source,
            reason="ambiguous-metric",
            value=metrics,
        )
