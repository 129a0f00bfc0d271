"""What every modeler shares: scikit-learn style estimators with ``fit``, ``predict`` and
``get_params`` over an experiment."""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np

from perfcast.core.experiment import Experiment, Series
from perfcast.core.function import Model
from perfcast.model.fitting.assembly import Skip, skips_of
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.decisions import SeriesDecisions, series_decisions
from perfcast.model.fitting.location import LOCATIONS, Location
from perfcast.model.settings import check_bool, check_choice, check_open_interval

Item = TypeVar("Item")
Result = TypeVar("Result")


class ChunkMap(Protocol):
    """Runs a function on chunks of kernels, possibly elsewhere (see
    :class:`perfcast.model.distributed.DaskChunks`).

    Attributes
    ----------
    kernels_per_chunk : int
        How many kernels of a series one call models.
    """

    kernels_per_chunk: int

    def map(self, function: Callable[[Item], Result], items: Iterable[Item]) -> Iterator[Result]:
        """``function`` of every item, yielded in the order of ``items``."""
        ...  # pragma: no cover - a protocol


class SeriesModeler:
    """Base of modelers that fit each :class:`~perfcast.core.experiment.Series` on its own.

    Subclasses set :attr:`name` (their name in :mod:`perfcast.model.registry`), take their
    settings as constructor keywords stored under the same names (so :meth:`get_params` can
    report them), validate them with :meth:`_check_common` and their own checks, and implement
    ``_model_data(data) -> list[Model]``, the models of the kernels of one series' statistics
    (:class:`~perfcast.model.fitting.data.FitData`), each kernel's model its own given the
    series-wide choices that ``data`` and :mod:`perfcast.model.fitting.candidates` carry; so
    the kernels can be modeled in chunks, elsewhere (:attr:`chunkable`).
    :meth:`fit` hands them only series whose points admit a model; the kernels of the others
    are skipped (:attr:`skipped_`).

    Attributes
    ----------
    models_ : list of Model
        One model per kernel that could be modeled, after :meth:`fit`.
    skipped_ : list of Skip
        The kernels left out, and why (too few values of a parameter, ...).
    locations_ : list of Location
        How the points' values were estimated, one per series fitted.
    progress : callable or None
        Not a setting: called during :meth:`fit` with a number of kernels done (searched,
        modeled or skipped), every kernel counted once; None (the default) reports nothing.
    """

    name: ClassVar[str] = ""
    #: True for modelers whose ``_model_data`` reports its kernels to :attr:`progress` itself.
    reports_progress: ClassVar[bool] = False
    progress: Callable[[int], None] | None = None
    location: str = "adaptive"
    alpha: float = 0.05
    positive_terms: bool = True
    negative_exponents: bool | None = None

    @property
    def chunkable(self) -> bool:
        """True when this modeler models a series through ``_model_data`` alone, so that
        :meth:`fit` can model its kernels chunk by chunk; False for modelers that override
        :meth:`fit` or ``_fit_series`` (hybrid, segmented)."""
        cls = type(self)
        return (
            cls._model_data is not SeriesModeler._model_data
            and cls._fit_series is SeriesModeler._fit_series
            and cls.fit is SeriesModeler.fit
        )

    def get_params(self) -> dict[str, Any]:
        """The settings this modeler was constructed with, by name.

        Returns
        -------
        dict
            Every constructor keyword and its value.
        """
        names = [
            p.name
            for p in inspect.signature(type(self).__init__).parameters.values()
            if p.name != "self" and p.kind is p.POSITIONAL_OR_KEYWORD
        ]
        return {n: getattr(self, n) for n in names}

    def _check_common(self) -> None:
        """Validate the settings every modeler shares."""
        check_open_interval("alpha", self.alpha, 0.0, 1.0)
        check_bool("positive_terms", self.positive_terms)
        check_bool("negative_exponents", self.negative_exponents, optional=True)
        check_choice("location", self.location, LOCATIONS)

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({settings})"

    def fit(
        self, experiment: Experiment, metric: str | None = None, chunks: ChunkMap | None = None
    ) -> SeriesModeler:
        """Model every kernel of ``experiment`` for ``metric`` whose data admits a model, skip
        the others (see :attr:`skipped_`); returns self.

        With ``chunks``, the statistics of every series are computed here and its kernels are
        modeled in chunks by ``chunks`` (on other processes or machines): the same models, bit
        for bit, as without.
        """
        self.models_: list[Model] = []
        self.locations_: list[Location] = []
        self.skipped_: list[Skip] = []
        for series in experiment.series(metric):
            skips = skips_of(series)
            if skips:
                self.skipped_.extend(skips)
            elif chunks is None:
                self.models_.extend(self._fit_series(series, experiment.source))
            else:
                self.models_.extend(self._fit_series_in_chunks(series, experiment.source, chunks))
            reported = self.reports_progress and chunks is None
            if self.progress is not None and (skips or not reported):
                self.progress(len(series.kernels))
        return self

    def _fit_series(self, series: Series, source: str | None) -> list[Model]:
        """The models of every kernel of ``series``, in its kernel order."""
        return self._model_data(self._fit_data(series, source))

    def _fit_series_in_chunks(
        self, series: Series, source: str | None, chunks: ChunkMap
    ) -> list[Model]:
        """:meth:`_fit_series` with the kernels modeled chunk by chunk by ``chunks``.

        The statistics (location estimates, the noise prior) come from the whole series; the
        choices that depend on every kernel (:mod:`perfcast.model.fitting.decisions`) are
        taken from all chunks together, and a chunk that decided otherwise alone is modeled
        again with the whole series' choices.
        """
        if not self.chunkable:
            raise ValueError(f"modeler: {self.name} cannot model a series in chunks")
        data = self._fit_data(series, source)
        n_kernels = len(series.kernels)
        size = chunks.kernels_per_chunk
        starts = range(0, n_kernels, size)

        def piece(start: int) -> FitData:
            rows = np.arange(start, min(start + size, n_kernels))
            # Without the location estimate of the whole series: only this process needs it.
            return dataclasses.replace(data.rows(rows), location=None)

        worker = type(self)(**self.get_params())  # settings only: no progress callback
        results = list(chunks.map(functools.partial(model_chunk, worker), map(piece, starts)))
        combined = tuple(max(values) for values in zip(*(seen for _, seen in results), strict=True))
        again = [i for i, (_, seen) in enumerate(results) if seen != combined]
        if again:
            forced = functools.partial(model_chunk, worker, forced=combined)
            for i, result in zip(
                again, chunks.map(forced, (piece(starts[i]) for i in again)), strict=True
            ):
                results[i] = result
        return [model for models, _ in results for model in models]

    def _fit_data(self, series: Series, source: str | None) -> FitData:
        """The statistics of ``series`` with this modeler's location estimator, recorded."""
        data = FitData.from_series(series, source, self.location)
        assert data.location is not None, "from_series records its location estimate"
        self.locations_.append(data.location)
        return data

    def notes(self) -> list[str]:
        """What a user should know about the last :meth:`fit`: how point values were taken when
        not as means (the first series that did so), and models with a figure beyond a double's
        range (JSON writes it as null)."""
        notes = next(([loc.note] for loc in self.locations_ if loc.note is not None), [])
        beyond = [m.kernel for m in self.models_ if not _representable(m)]
        if beyond:
            notes.append(
                f"{len(beyond)} model(s) (the first of kernel '{beyond[0]}') have a figure beyond "
                "the range of a double-precision number, such as the residual sum of squares of "
                "values above 1e154; JSON output writes it as null"
            )
        return notes

    def predict(self, points: np.ndarray) -> np.ndarray:
        """Predictions of every model at ``points``, shape (n_models, n_points)."""
        return np.stack([m.evaluate(points) for m in self.models_])

    def _model_data(self, data: FitData) -> list[Model]:
        raise NotImplementedError


def model_chunk(
    modeler: SeriesModeler, data: FitData, forced: tuple[int, ...] | None = None
) -> tuple[list[Model], tuple[int, ...]]:
    """The models of the kernels of ``data`` (a chunk of a series) and the series-wide
    choices they made on their own (:class:`SeriesDecisions`), following ``forced`` where
    given.

    Parameters
    ----------
    modeler : SeriesModeler
        A :attr:`~SeriesModeler.chunkable` modeler.
    data : FitData
        Rows of the statistics of a whole series (:meth:`FitData.rows`).
    forced : tuple of int, optional
        The whole series' choices, in the order they are made.

    Returns
    -------
    models : list of Model
    seen : tuple of int
    """
    with series_decisions(SeriesDecisions(forced)) as decisions:
        models = modeler._model_data(data)
    return models, tuple(decisions.seen)


def _representable(model: Model) -> bool:
    """True when every number of ``model`` (coefficients, quality figures) is finite or absent."""
    quality = model.quality.to_dict().values() if model.quality is not None else ()
    numbers = [model.constant, *(t.coefficient for t in model.terms), *quality]
    return all(n is None or np.isfinite(n) for n in numbers)
