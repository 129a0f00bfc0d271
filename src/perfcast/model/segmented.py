"""Segmented models: one model per range of a parameter, where the behaviour changes at some scale.

A kernel whose data stops fitting in a cache or whose communication switches algorithm follows
one trend up to some value of a parameter and another beyond it. One model over both ranges
describes neither (the quality gates warn ``two-regimes``). :class:`SegmentedModeler` fits the
ordinary model of its base modeler (``pmnf`` or ``sparse``) and, along each parameter, models
of every split of the measured values into two or three contiguous ranges of at least
:data:`MIN_SEGMENT_VALUES` values each. A kernel keeps the segments when they explain its data
significantly better than one model: an F-test on the relative residuals of the point values at
level :data:`SEGMENT_ALPHA`, which charges every coefficient of every segment and one degree of
freedom per breakpoint, and, when the points were repeated, only if the single model shows a
lack of fit against the repetitions (so that noise alone never splits a kernel). ``auto`` tests
two segments against one and three against two.

The breakpoint lies between the last measured value of the lower segment and the first of the
upper one: where the two models cross there (one parameter), else at the geometric midpoint.
Its interval spans every split whose fit is not significantly worse than the best (same F-test).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import special

from perfcast.core.experiment import Experiment, Series
from perfcast.core.function import Breakpoint, Model, Quality, Segment
from perfcast.model.base import ChunkMap, SeriesModeler
from perfcast.model.fitting.assembly import unmodelable_reason
from perfcast.model.pmnf import PMNFModeler
from perfcast.model.settings import check_choice, check_int
from perfcast.model.sparse import SparseModeler

#: Fewest distinct values of the segment parameter in one segment: a two-term model of three
#: points has no degree of freedom left to judge it.
MIN_SEGMENT_VALUES = 4
#: Significance of the F-test that adds a segment.
SEGMENT_ALPHA = 0.01
#: Modelers that fit each segment.
BASE_MODELERS: dict[str, type[SeriesModeler]] = {"pmnf": PMNFModeler, "sparse": SparseModeler}
#: Relative residuals are taken against at least this fraction of a kernel's largest value.
_SCALE_FLOOR = 1e-9


@dataclass(frozen=True)
class _Split:
    """One way to cut a kernel's points into segments along a parameter."""

    parameter: int
    cuts: tuple[int, ...]  # index of the first distinct value of every segment after the first


class SegmentedModeler(SeriesModeler):
    """Fit one model per segment of a parameter where the data follow different trends
    (registered as ``segmented``).

    Parameters
    ----------
    segments : {"auto", 1, 2, 3}
        ``auto`` (default) keeps two or three segments only where the F-test finds them
        significant; a number asks for that many wherever the measured values allow it.
    parameter : str, optional
        The parameter to segment along; by default each is tried and the best split kept.
    base : {"pmnf", "sparse"}
        The modeler of the whole data and of each segment.
    negative_exponents, alpha, positive_terms, location
        Passed to the base modeler (see :class:`~perfcast.model.pmnf.PMNFModeler`).
    max_terms : int, optional
        Passed to the base modeler (``pmnf``: 1 to 4; ``sparse``: its own range).

    Attributes
    ----------
    models_ : list of Model
        One model per kernel; a segmented one carries :attr:`Model.segments`.
    unsplit_ : list of str
        Kernels whose values allow no split into the number of segments asked for (with
        ``auto``: into two, so that segments were not even tested).
    """

    name = "segmented"

    def __init__(
        self,
        segments: str | int = "auto",
        parameter: str | None = None,
        base: str = "pmnf",
        negative_exponents: bool | None = None,
        max_terms: int | None = None,
        alpha: float = 0.05,
        positive_terms: bool = True,
        location: str = "adaptive",
    ):
        self.segments = _segment_count(segments)
        self.parameter = parameter
        self.base = base
        self.negative_exponents = negative_exponents
        self.max_terms = max_terms
        self.alpha = alpha
        self.positive_terms = positive_terms
        self.location = location
        self._check_common()
        check_choice("base", base, tuple(BASE_MODELERS))
        if parameter is not None and not isinstance(parameter, str):
            raise ValueError(f"parameter: must be a parameter name or None, not {parameter!r}")
        self._make_base(location)  # validates max_terms against the base modeler
        self.unsplit_: list[str] = []

    def _make_base(self, location: str) -> SeriesModeler:
        settings = {
            "negative_exponents": self.negative_exponents,
            "alpha": self.alpha,
            "positive_terms": self.positive_terms,
            "location": location,
        }
        if self.max_terms is not None:
            check_int("max_terms", self.max_terms, 1, 4)
            settings["max_terms"] = self.max_terms
        modeler = BASE_MODELERS[self.base](**settings)
        modeler.locations_ = []
        return modeler

    def fit(
        self, experiment: Experiment, metric: str | None = None, chunks: ChunkMap | None = None
    ) -> SeriesModeler:
        """:meth:`SeriesModeler.fit`; also records in :attr:`unsplit_` the kernels whose
        measured values allow no split into the segments asked for (two with ``auto``)."""
        self.unsplit_ = []
        return super().fit(experiment, metric, chunks)

    def notes(self) -> list[str]:
        """The base modeler's notes, how many kernels were segmented, and how many could not
        be split into the number of segments asked for."""
        notes = super().notes()
        unsplit = self.unsplit_
        if unsplit and self.segments == "auto":
            notes.append(
                f"{len(unsplit)} kernel(s) (the first: '{unsplit[0]}') have too few measured "
                f"values to test for segments (two need {2 * MIN_SEGMENT_VALUES} values of one "
                f"parameter, {MIN_SEGMENT_VALUES} each): modeled in one piece"
            )
        elif unsplit:
            notes.append(
                f"{len(unsplit)} kernel(s) (the first: '{unsplit[0]}') have too few measured "
                f"values for {self.segments} segments of at least {MIN_SEGMENT_VALUES} values "
                "each: modeled in one piece"
            )
        segmented = [m for m in self.models_ if m.segments]
        if self.models_ and self.parameter not in (None, *self.models_[0].parameters):
            notes.append(f"no parameter '{self.parameter}' to segment along: none segmented")
        if segmented:
            notes.append(
                f"{len(segmented)} of {len(self.models_)} kernel(s) modeled in segments "
                f"(the first: '{segmented[0].kernel}')"
            )
        return notes

    def _fit_series(self, series: Series, source: str | None) -> list[Model]:
        whole_modeler = self._make_base(self.location)
        whole = whole_modeler._fit_series(series, source)
        location = whole_modeler.locations_[-1]
        self.locations_.append(location)
        if self.segments == 1:
            return whole
        values = location.values
        search = _SplitSearch(
            series, values, self._make_base(location.estimator), source, self._axes(series)
        )
        by_kernel = {m.kernel: m for m in whole}
        result = []
        for row, kernel in enumerate(series.kernels):
            model = by_kernel.get(kernel)
            if model is None:
                continue
            result.append(self._choose(search, row, model))
        return result

    def _axes(self, series: Series) -> list[int]:
        if self.parameter is None:
            return list(range(len(series.parameters)))
        return (
            [series.parameters.index(self.parameter)] if self.parameter in series.parameters else []
        )

    def _choose(self, search: _SplitSearch, row: int, whole: Model) -> Model:
        """The segmented model of kernel ``row`` when warranted, else ``whole``."""
        counts = (2, 3) if self.segments == "auto" else (int(self.segments),)
        current_rss = search.residual(row, whole)
        current_k = 1 + len(whole.terms)
        current: tuple[_Split, list[Model]] | None = None
        lof_p = None if whole.quality is None else whole.quality.lof_p
        lack_of_fit = lof_p is None or lof_p < self.alpha
        for count in counts:
            best = search.best(row, count)
            if best is None:
                if count == counts[0]:  # not even the fewest segments asked for fit
                    self.unsplit_.append(whole.kernel)
                break
            split, models, rss, k = best
            if self.segments == "auto" and not (
                lack_of_fit and _significant(current_rss, current_k, rss, k, search.n)
            ):
                break
            current, current_rss, current_k = (split, models), rss, k
        if current is None:
            return whole
        split, models = current
        return search.assemble(row, whole, split, models)


class _SplitSearch:
    """Fits of every range of distinct values along each parameter (cached), and the splits of
    each kernel's points they make up."""

    def __init__(
        self,
        series: Series,
        values: np.ndarray,
        base: SeriesModeler,
        source: str | None,
        axes: Sequence[int],
    ):
        self.series = series
        self.values = values
        self.base = base
        self.source = source
        self.axes = axes
        self.n = len(series.points)
        largest = np.nanmax(np.abs(values), axis=1, keepdims=True)
        self.scale = np.maximum(np.abs(values), np.maximum(largest, 1e-300) * _SCALE_FLOOR)
        self.distinct = [np.unique(series.points[:, j]) for j in range(len(series.parameters))]
        self._fits: dict[tuple[int, int, int], dict[str, Model] | None] = {}
        self._best: dict[tuple[int, int], list[tuple[_Split, float]]] = {}

    def rows_of(self, axis: int, start: int, stop: int) -> np.ndarray:
        """Indices of the points whose value of parameter ``axis`` is among the distinct values
        ``start`` to ``stop - 1``."""
        column = self.series.points[:, axis]
        values = self.distinct[axis]
        upper = values[stop - 1]
        return np.flatnonzero((column >= values[start]) & (column <= upper))

    def fit_range(self, axis: int, start: int, stop: int) -> dict[str, Model] | None:
        """Models of every kernel over one range of values (None when it admits no model)."""
        key = (axis, start, stop)
        if key not in self._fits:
            rows = self.rows_of(axis, start, stop)
            part = Series(
                self.series.metric,
                self.series.parameters,
                self.series.kernels,
                self.series.points[rows],
                self.series.values[:, rows, :],
            )
            if unmodelable_reason(part) is not None:
                self._fits[key] = None
            else:
                models = self.base._fit_series(part, self.source)
                self._fits[key] = {m.kernel: m for m in models}
        return self._fits[key]

    def residual(self, row: int, model: Model, rows: np.ndarray | None = None) -> float:
        """Sum of squared relative residuals of ``model`` at the points ``rows`` (all)."""
        rows = np.arange(self.n) if rows is None else rows
        fitted = model.evaluate(self.series.points[rows])
        with np.errstate(invalid="ignore", over="ignore"):
            relative = (self.values[row, rows] - fitted) / self.scale[row, rows]
        return float(np.sum(relative**2)) if np.all(np.isfinite(relative)) else np.inf

    def splits(self, count: int) -> list[_Split]:
        """Every split into ``count`` segments of at least :data:`MIN_SEGMENT_VALUES` values."""
        found = []
        for axis in self.axes:
            d = len(self.distinct[axis])
            for cuts in itertools.combinations(range(MIN_SEGMENT_VALUES, d), count - 1):
                bounds = (0, *cuts, d)
                if all(b - a >= MIN_SEGMENT_VALUES for a, b in itertools.pairwise(bounds)):
                    found.append(_Split(axis, cuts))
        return found

    def segment_models(self, row: int, split: _Split) -> list[Model] | None:
        """The models of kernel ``row`` on the segments of ``split`` (None when one is missing)."""
        bounds = (0, *split.cuts, len(self.distinct[split.parameter]))
        models = []
        for start, stop in itertools.pairwise(bounds):
            fits = self.fit_range(split.parameter, start, stop)
            model = None if fits is None else fits.get(self.series.kernels[row])
            if model is None:
                return None
            models.append(model)
        return models

    def evaluate_split(self, row: int, split: _Split) -> tuple[list[Model], float, int] | None:
        """Segment models, summed relative residuals and coefficients (breakpoints included)."""
        models = self.segment_models(row, split)
        if models is None:
            return None
        bounds = (0, *split.cuts, len(self.distinct[split.parameter]))
        rss = sum(
            self.residual(row, model, self.rows_of(split.parameter, start, stop))
            for model, (start, stop) in zip(models, itertools.pairwise(bounds), strict=True)
        )
        k = sum(1 + len(m.terms) for m in models) + len(split.cuts)
        return models, rss, k

    def best(self, row: int, count: int) -> tuple[_Split, list[Model], float, int] | None:
        """The split of kernel ``row`` into ``count`` segments with the smallest residuals that
        leaves a degree of freedom; None when no split is possible."""
        candidates = []
        for split in self.splits(count):
            found = self.evaluate_split(row, split)
            if found is not None and found[2] < self.n and np.isfinite(found[1]):
                candidates.append((split, *found))
        if not candidates:
            return None
        chosen = min(candidates, key=lambda c: c[2])
        self._best[row, count] = [
            (c[0], c[2]) for c in candidates if c[0].parameter == chosen[0].parameter
        ]
        return chosen

    def assemble(self, row: int, whole: Model, split: _Split, models: list[Model]) -> Model:
        """The segmented model of kernel ``row``: segments, breakpoints with their intervals
        and, at top level, the last segment's terms and a quality of the whole fit."""
        axis = split.parameter
        name = self.series.parameters[axis]
        values = self.distinct[axis]
        bounds = (0, *split.cuts, len(values))
        breakpoints = [self._breakpoint(row, split, i, models) for i in range(len(split.cuts))]
        segments = tuple(
            Segment(
                name,
                float(values[start]),
                float(values[stop - 1]),
                replace(model, warnings=()),
                breakpoints[i] if i < len(breakpoints) else None,
            )
            for i, (model, (start, stop)) in enumerate(
                zip(models, itertools.pairwise(bounds), strict=True)
            )
        )
        last = models[-1]
        return replace(
            whole,
            constant=last.constant,
            terms=last.terms,
            uncertainty=last.uncertainty,
            quality=self._quality(row, models, split),
            segments=segments,
        )

    def _breakpoint(self, row: int, split: _Split, index: int, models: list[Model]) -> Breakpoint:
        """Breakpoint ``index`` of ``split``: value and the interval of plausible splits."""
        values = self.distinct[split.parameter]
        cut = split.cuts[index]
        below, above = float(values[cut - 1]), float(values[cut])
        value = self._crossing(split.parameter, below, above, models[index], models[index + 1])
        alternatives = self._best.get((row, len(split.cuts) + 1), [])
        best_rss = min((rss for _, rss in alternatives), default=0.0)
        k = sum(1 + len(m.terms) for m in models) + len(split.cuts)
        dof = max(self.n - k, 1)
        limit = special.fdtri(1, dof, 1 - SEGMENT_ALPHA)
        plausible = [
            s.cuts[index]
            for s, rss in alternatives
            if len(s.cuts) == len(split.cuts)
            and all(
                c == d
                for i, (c, d) in enumerate(zip(s.cuts, split.cuts, strict=True))
                if i != index
            )
            and (rss - best_rss) <= limit * max(best_rss, 0.0) / dof
        ] or [cut]
        lower = float(values[min(plausible) - 1])
        upper = float(values[max(plausible)])
        return Breakpoint(value, min(lower, below), max(upper, above))

    def _crossing(self, axis: int, below: float, above: float, left: Model, right: Model) -> float:
        """Where the models of two neighbouring segments cross between their measured ends
        (one parameter); the geometric midpoint when they do not or there are several."""
        midpoint = float(np.sqrt(below * above))
        if len(self.series.parameters) != 1:
            return midpoint
        grid = np.geomspace(below, above, 65)[:, None]
        difference = left.evaluate(grid) - right.evaluate(grid)
        changes = np.flatnonzero(np.diff(np.sign(difference)) != 0)
        if len(changes) != 1:
            return midpoint
        return float(grid[changes[0] + 1, 0])

    def _quality(self, row: int, models: list[Model], split: _Split) -> Quality:
        """Fit statistics of the segments together, over all points."""
        bounds = (0, *split.cuts, len(self.distinct[split.parameter]))
        fitted = np.empty(self.n)
        for model, (start, stop) in zip(models, itertools.pairwise(bounds), strict=True):
            rows = self.rows_of(split.parameter, start, stop)
            fitted[rows] = model.evaluate(self.series.points[rows])
        measured = self.values[row]
        residual = measured - fitted
        rss = float(np.sum(residual**2))
        with np.errstate(invalid="ignore", divide="ignore"):
            denominator = np.abs(measured) + np.abs(fitted)
            shares = np.where(denominator > 0, 2 * np.abs(residual) / denominator, 0.0)
        k = sum(1 + len(m.terms) for m in models) + len(split.cuts)
        total = float(np.sum((measured - measured.mean()) ** 2))
        adj_r2 = None
        if self.n - k > 0 and total > 0:
            adj_r2 = 1 - (rss / (self.n - k)) / (total / (self.n - 1))
        cross = [m.quality.cv_smape for m in models if m.quality is not None]
        cv_smape = None
        if cross and all(c is not None for c in cross) and len(cross) == len(models):
            sizes = [
                len(self.rows_of(split.parameter, a, b)) for a, b in itertools.pairwise(bounds)
            ]
            cv_smape = float(np.average([float(c) for c in cross if c is not None], weights=sizes))
        return Quality(rss, float(100 * np.mean(shares)), adj_r2, cv_smape, None)


def _segment_count(value: str | int) -> str | int:
    """The ``segments`` setting as ``"auto"`` or an int (``"2"`` is read as 2)."""
    text = str(value) if not isinstance(value, bool) else ""
    if text == "auto":
        return "auto"
    if text in {"1", "2", "3"}:
        return int(text)
    raise ValueError(f"segments: must be 'auto', 1, 2 or 3, not {value!r}")


def _significant(rss_small: float, k_small: int, rss_large: float, k_large: int, n: int) -> bool:
    """Whether the larger model's residuals are significantly smaller (F-test at
    :data:`SEGMENT_ALPHA`)."""
    extra, dof = k_large - k_small, n - k_large
    if extra <= 0 or dof <= 0 or not np.isfinite(rss_small):
        return False
    if rss_large <= 1e-24 * max(rss_small, 1e-300):
        return rss_small > 1e-20
    f_ratio = ((rss_small - rss_large) / extra) / (rss_large / dof)
    return bool(f_ratio > 0 and special.fdtrc(extra, dof, f_ratio) < SEGMENT_ALPHA)
