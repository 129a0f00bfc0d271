"""The experiment data model: parameters, kernels, metrics and every measured repetition.

An :class:`Experiment` holds one long table with the columns
``kernel, metric, <one column per parameter>, repetition, value`` as numpy columns. Readers
produce it (:meth:`Experiment.from_columns`, :meth:`Experiment.from_frame`), modelers consume it;
:attr:`Experiment.frame` shows it as a pandas table. pandas is imported only when a table is
converted, so that reading and modeling a small file does not pay for importing it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.numbers import parse_number

if TYPE_CHECKING:
    import pandas as pd

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


def _first_appearance(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Renumber integer codes in order of first appearance.

    Returns the new code of every entry and, for each new code, the old one.
    """
    if not len(codes):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    uniques, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    renumber = np.empty(len(uniques), dtype=np.int64)
    renumber[order] = np.arange(len(uniques))
    return renumber[inverse.ravel()], uniques[order]


def _factorize(names: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Codes of ``names`` in order of first appearance, and the distinct names in that order."""
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(name, len(index)) for name in names), dtype=np.int64)
    return codes, list(index)


def _dense_ids(columns: Sequence[np.ndarray], rows: int) -> np.ndarray:
    """One id per distinct combination of the columns' values, shape (rows,).

    Ids follow the lexicographic order of the combinations (the first column first).
    """
    ids = np.zeros(rows, dtype=np.int64)
    for column in columns:
        values, codes = np.unique(column, return_inverse=True)
        _, inverse = np.unique(ids * len(values) + codes.ravel(), return_inverse=True)
        ids = inverse.ravel().astype(np.int64)
    return ids


def _rank_within(groups: np.ndarray, order: np.ndarray) -> np.ndarray:
    """For rows sorted by ``order`` (group by group), each row's position inside its group."""
    ranks = np.empty(len(groups), dtype=np.int64)
    if not len(groups):
        return ranks
    sorted_groups = groups[order]
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    sizes = np.diff(np.r_[starts, len(groups)])
    ranks[order] = np.arange(len(groups)) - np.repeat(starts, sizes)
    return ranks


def _cumcount(groups: np.ndarray) -> np.ndarray:
    """Each row's number among the earlier rows of its group (0, 1, 2, ... in row order)."""
    return _rank_within(groups, np.argsort(groups, kind="stable"))


def _sorted_points(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``matrix`` sorted lexicographically, and the index of every row's one."""
    if not len(matrix):
        return np.zeros((0, matrix.shape[1])), np.zeros(0, dtype=np.int64)
    order = np.lexsort(matrix.T[::-1])
    ordered = matrix[order]
    new = np.r_[True, (ordered[1:] != ordered[:-1]).any(axis=1)]
    codes = np.empty(len(matrix), dtype=np.int64)
    codes[order] = np.cumsum(new) - 1
    return ordered[new], codes


def _finite(raw: Sequence[Any] | np.ndarray, column: str, where: str) -> np.ndarray:
    """``raw`` as floats; an InputError naming the first record that is not a finite number.

    Text is read by :func:`perfcast.core.numbers.parse_number` (ASCII decimal notation within a
    double's range).
    """
    array = np.asarray(raw)
    if array.dtype.kind in "OUS":
        return np.array(
            [
                parse_number(cell, f"record {row + 1}: {column}", where, None)
                for row, cell in enumerate(array.tolist())
            ],
            dtype=float,
        )
    numbers = array.astype(float)
    bad = ~np.isfinite(numbers)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        value = raw[row]
        value = value.item() if isinstance(value, np.generic) else value
        raise InputError(f"record {row + 1}: {column} is {value!r}, not a finite number", where)
    return numbers


def _integers(numbers: np.ndarray, where: str) -> np.ndarray:
    """Repetition numbers as integers; an InputError naming the first one that is not."""
    bad = ~np.isfinite(numbers) | (numbers != np.round(numbers))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"record {row + 1}: repetition is not an integer", where)
    return numbers.astype(np.int64)


def _parameters_of(
    parameters: Iterable[Parameter | str] | None, columns: Sequence[object], where: str
) -> tuple[Parameter, ...]:
    """The parameters, by default every column that is not a fixed one; checked against
    ``columns``."""
    if parameters is None:
        params = tuple(Parameter(str(n)) for n in columns if n not in FIXED_COLUMNS)
    else:
        params = tuple(p if isinstance(p, Parameter) else Parameter(str(p)) for p in parameters)
    names = [p.name for p in params]
    if not names:
        raise InputError("the table has no parameter columns", where)
    if len(set(names)) != len(names):
        raise InputError(f"duplicate parameter names {names}", where)
    for name in names:
        if name not in columns:
            raise InputError(f"the table has no column for parameter '{name}'", where)
    return params


def _missing_name(names: Sequence[str | None], column: str, where: str) -> None:
    """Raise an InputError naming the first record without a kernel (or metric) name."""
    for row, name in enumerate(names):
        if name is None:
            raise InputError(f"record {row + 1}: {column} name is missing", where)


def _check_unicode(
    column: str, codes: np.ndarray | None, names: Sequence[str], where: str | None
) -> None:
    """Raise an InputError for the first name no UTF-8 output can hold (a lone surrogate, which
    a JSON ``\\ud800`` escape gives), naming its first record when ``codes`` maps rows to
    names."""
    for index, name in enumerate(names):
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            record = (
                "" if codes is None else f"record {int(np.flatnonzero(codes == index)[0]) + 1}: "
            )
            raise InputError(
                f"{record}{column} name {name!r} is not valid Unicode (a lone surrogate)",
                where,
                reason="bad-text",
                value=name,
            ) from None


class Experiment:
    """A set of measurements plus the metadata needed to interpret them.

    Build one with :meth:`from_columns` or :meth:`from_frame` (both validate the table) or a
    reader from :mod:`perfcast.io`.

    Attributes
    ----------
    parameters : tuple of Parameter
        The parameters, in column order.
    metrics : dict of str to Metric
        Known metrics by name; every metric in the table has an entry.
    metadata : dict
        Free-form facts about the runs (machine, command, date, code revision, ...).
    source : str, optional
        Where the data came from, used in messages.
    """

    def __init__(
        self,
        kernels: tuple[np.ndarray, list[str]],
        metrics_measured: tuple[np.ndarray, list[str]],
        coordinates: dict[str, np.ndarray],
        repetitions: np.ndarray,
        values: np.ndarray,
        parameters: tuple[Parameter, ...],
        metrics: dict[str, Metric],
        metadata: dict[str, Any],
        source: str | None,
    ):
        # Validated columns, one entry per row; kernels and metrics as codes into their names,
        # which are listed in order of first appearance and all appear.
        self._kernel_codes, self._kernel_names = kernels
        self._metric_codes, self._metric_names = metrics_measured
        self._coordinates = coordinates
        self._repetitions = repetitions
        self._values = values
        self._frame: pd.DataFrame | None = None
        self.parameters = parameters
        self.metrics = metrics
        self.metadata = metadata
        self.source = source

    @classmethod
    def _validated(
        cls,
        kernels: Sequence[str],
        metrics_measured: Sequence[str],
        coordinates: dict[str, np.ndarray],
        repetitions: np.ndarray | None,
        values: np.ndarray,
        params: tuple[Parameter, ...],
        metrics: Mapping[str, Metric] | Iterable[Metric] | None,
        metadata: Mapping[str, Any] | None,
        source: str | None,
    ) -> Experiment:
        """Number the repetitions when absent, refuse duplicated ones, and wrap the columns."""
        kernel_codes, kernel_names = _factorize(kernels)
        metric_codes, metric_names = _factorize(metrics_measured)
        _check_unicode(KERNEL, kernel_codes, kernel_names, source or "<table>")
        _check_unicode(METRIC, metric_codes, metric_names, source or "<table>")
        _check_unicode("parameter", None, [p.name for p in params], source)
        point_columns = [coordinates[p.name] for p in params]
        rows = len(values)
        if repetitions is None:
            groups = _dense_ids([kernel_codes, metric_codes, *point_columns], rows)
            repetitions = _cumcount(groups)
        groups = _dense_ids([kernel_codes, metric_codes, *point_columns, repetitions], rows)
        duplicated = np.flatnonzero(_cumcount(groups) > 0)
        if len(duplicated):
            row = int(duplicated[0])
            raise InputError(
                f"record {row + 1}: repetition {repetitions[row]} of kernel "
                f"'{kernel_names[kernel_codes[row]]}' at this point appears twice",
                source or "<table>",
            )
        known: dict[str, Metric] = {}
        if metrics is not None:
            items = metrics.values() if isinstance(metrics, Mapping) else metrics
            known = {m.name: m for m in items}
        for name in metric_names:
            known.setdefault(name, Metric(name))
        return cls(
            (kernel_codes, kernel_names),
            (metric_codes, metric_names),
            {p.name: coordinates[p.name] for p in params},
            repetitions,
            values,
            params,
            known,
            dict(metadata or {}),
            source,
        )

    @classmethod
    def from_columns(
        cls,
        kernels: Sequence[str],
        metrics_measured: Sequence[str],
        coordinates: Mapping[str, Sequence[float] | np.ndarray],
        values: Sequence[float] | np.ndarray,
        repetitions: Sequence[int] | np.ndarray | None = None,
        parameters: Iterable[Parameter | str] | None = None,
        metrics: Mapping[str, Metric] | Iterable[Metric] | None = None,
        metadata: Mapping[str, Any] | None = None,
        source: str | None = None,
    ) -> Experiment:
        """Validate the columns of a long table and wrap them, without pandas.

        Parameters
        ----------
        kernels, metrics_measured : sequence of str
            The kernel and the metric of every row.
        coordinates : mapping of str to sequence of float
            One column of numbers per parameter.
        values : sequence of float
            The measured value of every row.
        repetitions : sequence of int, optional
            Repetition numbers; numbered per kernel, metric and point in row order when absent.
        parameters : iterable of Parameter or str, optional
            The parameters; by default every column of ``coordinates``.
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
            As :meth:`from_frame` does.
        ValueError
            When the columns differ in length.
        """
        where = source or "<table>"
        params = _parameters_of(parameters, list(coordinates), where)
        lengths = {len(kernels), len(metrics_measured), len(values)}
        lengths |= {len(coordinates[p.name]) for p in params}
        if repetitions is not None:
            lengths.add(len(repetitions))
        if len(lengths) != 1:
            raise ValueError(f"columns of different lengths {sorted(lengths)}")
        if not len(values):
            raise InputError("the table holds no measurements", where)
        _missing_name(kernels, KERNEL, where)
        _missing_name(metrics_measured, METRIC, where)
        numbers = {p.name: _finite(coordinates[p.name], p.name, where) for p in params}
        measured = _finite(values, VALUE, where)
        numbered = None
        if repetitions is not None:
            numbered = _integers(np.asarray(repetitions, dtype=float), where)
        return cls._validated(
            [str(k) for k in kernels],
            [str(m) for m in metrics_measured],
            numbers,
            numbered,
            measured,
            params,
            metrics,
            metadata,
            source,
        )

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
        import pandas as pd  # here, not above: reading and modeling a small file needs no pandas

        where = source or "<table>"
        for column in (KERNEL, METRIC, VALUE):
            if column not in frame.columns:
                raise InputError(f"the table has no '{column}' column", where)
        params = _parameters_of(parameters, list(frame.columns), where)
        if frame.empty:
            raise InputError("the table holds no measurements", where)
        names: dict[str, list[str]] = {}
        for column in (KERNEL, METRIC):
            missing = frame[column].isna().to_numpy()
            if missing.any():
                row = int(np.flatnonzero(missing)[0])
                raise InputError(f"record {row + 1}: {column} name is missing", where)
            names[column] = frame[column].astype(str).tolist()
        numbers: dict[str, np.ndarray] = {}
        for column in [*(p.name for p in params), VALUE]:
            numbers[column] = _finite(frame[column].to_numpy(), column, where)
        repetitions = None
        if REPETITION in frame:
            coerced = pd.to_numeric(frame[REPETITION], errors="coerce")
            repetitions = _integers(coerced.to_numpy(dtype=float), where)
        values = numbers.pop(VALUE)
        return cls._validated(
            names[KERNEL],
            names[METRIC],
            numbers,
            repetitions,
            values,
            params,
            metrics,
            metadata,
            source,
        )

    @property
    def frame(self) -> pd.DataFrame:
        """The long table ``kernel, metric, <parameters...>, repetition, value``.

        Built on first use and kept; treat it as read-only (:meth:`to_frame` gives a copy).
        """
        if self._frame is None:
            import pandas as pd  # here, not above: reading and modeling needs no pandas

            kernel_names = np.asarray(self._kernel_names, dtype=object)
            metric_names = np.asarray(self._metric_names, dtype=object)
            columns: dict[str, np.ndarray] = {
                KERNEL: kernel_names[self._kernel_codes],
                METRIC: metric_names[self._metric_codes],
                **self._coordinates,
                REPETITION: self._repetitions,
                VALUE: self._values,
            }
            self._frame = pd.DataFrame(columns).astype({KERNEL: str, METRIC: str})
        return self._frame

    def to_frame(self) -> pd.DataFrame:
        """Return a copy of the long table."""
        return self.frame.copy()

    def __repr__(self) -> str:
        """One line: source, kernels, metrics, parameters with their value counts, repetitions."""
        parameters = ", ".join(
            f"{name}[{len(np.unique(self._coordinates[name]))}]" for name in self.parameter_names
        )
        groups = _dense_ids(
            [self._kernel_codes, self._metric_codes, *self._coordinates.values()],
            len(self._values),
        )
        repetitions = np.bincount(groups)
        reps = (
            f"{repetitions.min()}"
            if len(repetitions) and repetitions.min() == repetitions.max()
            else (f"{repetitions.min()}-{repetitions.max()}" if len(repetitions) else "0")
        )
        return (
            f"<Experiment {self.source or 'in memory'!r}: {len(self._kernel_names)} kernels, "
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
        return list(self._kernel_names)

    def kernel_count(self, metric: str) -> int:
        """How many kernels were measured for ``metric`` (without building a selection).

        Raises
        ------
        InputError
            When the metric was not measured.
        """
        self.check_metric(metric)
        rows = self._metric_codes == self._metric_names.index(metric)
        return int(np.unique(self._kernel_codes[rows]).size)

    @property
    def metric_names(self) -> list[str]:
        """Metric names in order of first appearance."""
        return list(self._metric_names)

    def _point_matrix(self, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """The coordinates of the chosen rows, shape (n_rows, n_parameters)."""
        return np.column_stack([self._coordinates[name][rows] for name in self.parameter_names])

    def points(self) -> np.ndarray:
        """Distinct measured configurations, shape (n_points, n_parameters), sorted."""
        points, _ = _sorted_points(self._point_matrix())
        return points

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

    def select(
        self,
        kernels: str | Sequence[str] | None = None,
        metric: str | None = None,
        exclude: str | Sequence[str] = (),
    ) -> Experiment:
        """Keep only the kernels matching glob patterns and/or one metric.

        Parameters
        ----------
        kernels : str or sequence of str, optional
            Keep a kernel matching any of these patterns (all kernels when None).
        metric : str, optional
            Keep only this metric.
        exclude : str or sequence of str
            Drop a kernel matching any of these patterns (after ``kernels`` chose).

        Raises
        ------
        InputError
            When a pattern of ``kernels`` matches no kernel, or no kernel is left.
        """
        mask = np.ones(len(self._values), dtype=bool)
        if metric is not None:
            self.check_metric(metric)
            mask &= self._metric_codes == self._metric_names.index(metric)
        chosen = set(range(len(self._kernel_names)))
        if kernels is not None:
            patterns = [kernels] if isinstance(kernels, str) else list(kernels)
            chosen = set()
            for pattern in patterns:
                matched = self._kernels_matching(pattern)
                if not matched:
                    raise InputError(f"no kernel matches '{pattern}'", self.source)
                chosen |= matched
        for pattern in [exclude] if isinstance(exclude, str) else exclude:
            chosen -= self._kernels_matching(pattern)
        if not chosen:
            raise InputError("no kernel is left after the exclusions", self.source)
        if len(chosen) < len(self._kernel_names):
            mask &= np.isin(self._kernel_codes, sorted(chosen))
        return self._masked(mask)

    def split_largest(
        self, parameter: str, metric: str, kernels: range | None = None
    ) -> tuple[Experiment, Experiment] | None:
        """The measurements of ``metric`` split at each kernel's largest value of ``parameter``:
        those below it and those at it (a backtest of extrapolation along ``parameter``).

        Parameters
        ----------
        parameter : str
        metric : str
        kernels : range, optional
            Only the kernels at these positions of :attr:`kernels` (all when None), so that a
            backtest of many kernels can run a chunk at a time.

        Returns
        -------
        (Experiment, Experiment) or None
            None when no kernel has measurements both below and at its largest value.

        Raises
        ------
        InputError
            When the metric was not measured or the parameter does not exist.
        """
        self.check_metric(metric)
        if parameter not in self._coordinates:
            raise InputError(f"no parameter '{parameter}'", self.source, value=parameter)
        rows = self._metric_codes == self._metric_names.index(metric)
        if kernels is not None:
            rows &= (self._kernel_codes >= kernels.start) & (self._kernel_codes < kernels.stop)
        values = self._coordinates[parameter]
        largest = np.full(len(self._kernel_names), -np.inf)
        np.maximum.at(largest, self._kernel_codes[rows], values[rows])
        at_largest = rows & (values == largest[self._kernel_codes])
        below = rows & ~at_largest
        if not below.any():
            return None
        return self._masked(below), self._masked(at_largest)

    def kernel_blocks(self, metric: str, size: int) -> Iterator[Experiment]:
        """The measurements of ``metric`` in blocks of the kernels at ``size`` consecutive
        positions of :attr:`kernels` each (blocks without any are left out): the experiment
        each step of a chunked backtest sees, to be shipped to another process.

        Parameters
        ----------
        metric : str
        size : int
            Positions per block, 1 or more.

        Raises
        ------
        InputError
            When the metric was not measured.
        """
        self.check_metric(metric)
        measured = self._metric_codes == self._metric_names.index(metric)
        codes = self._kernel_codes
        ordered = bool(np.all(codes[1:] >= codes[:-1]))  # rows grouped by kernel, as written
        for start in range(0, len(self._kernel_names), size):
            if ordered:
                first, stop = np.searchsorted(codes, [start, start + size])
                rows = first + np.flatnonzero(measured[first:stop])
            else:
                rows = np.flatnonzero(measured & (codes >= start) & (codes < start + size))
            if len(rows):
                yield self._masked(rows)

    def _kernels_matching(self, pattern: str) -> set[int]:
        """Codes of the kernels whose name matches the glob ``pattern``."""
        return {
            code
            for code, name in enumerate(self._kernel_names)
            if fnmatch.fnmatchcase(name, pattern)
        }

    def without_kernels(self, kernels: Collection[str]) -> Experiment:
        """The experiment without the measurements of ``kernels`` (names it does not have are
        ignored).

        Raises
        ------
        InputError
            When no kernel is left.
        """
        dropped = set(kernels)
        codes = [code for code, name in enumerate(self._kernel_names) if name in dropped]
        mask = ~np.isin(self._kernel_codes, codes)
        if not mask.any():
            raise InputError("no kernel is left", self.source)
        return self._masked(mask)

    def _masked(self, mask: np.ndarray) -> Experiment:
        """The experiment of the rows where ``mask`` is true (or of the row indices ``mask``,
        in their order)."""
        kernel_codes, kept_kernels = _first_appearance(self._kernel_codes[mask])
        metric_codes, kept_metrics = _first_appearance(self._metric_codes[mask])
        metric_names = [self._metric_names[code] for code in kept_metrics]
        return Experiment(
            (kernel_codes, [self._kernel_names[code] for code in kept_kernels]),
            (metric_codes, metric_names),
            {name: column[mask] for name, column in self._coordinates.items()},
            self._repetitions[mask],
            self._values[mask],
            self.parameters,
            {m: self.metrics[m] for m in metric_names},
            dict(self.metadata),
            self.source,
        )

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
        if metric not in self._metric_names:
            raise InputError(f"no measurements of metric '{metric}'", self.source)
        table = np.flatnonzero(self._metric_codes == self._metric_names.index(metric))
        kernel_codes, kernel_ids = _first_appearance(self._kernel_codes[table])
        point_table, point_codes = _sorted_points(self._point_matrix(table))
        repetition_numbers = self._repetitions[table]
        measured = self._values[table]
        # Kernels measured at the same set of points share a row of this membership matrix.
        membership = np.zeros((len(kernel_ids), len(point_table)), dtype=bool)
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
            # Repetitions in the order of their numbers, whatever the row order (ties by row).
            order = np.lexsort((repetition_numbers[rows], p_local, k_local))
            r_local = _rank_within(k_local * len(point_ids) + p_local, order)
            values = np.full((len(ids), len(point_ids), r_local.max() + 1), np.nan)
            values[k_local, p_local, r_local] = measured[rows]
            result.append(
                Series(
                    metric=metric,
                    parameters=tuple(names),
                    kernels=[self._kernel_names[code] for code in kernel_ids[ids]],
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
