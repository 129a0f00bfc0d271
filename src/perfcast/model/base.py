"""What every modeler shares: scikit-learn style estimators with ``fit``, ``predict`` and
``get_params`` over an experiment."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np

from perfcast.core.experiment import Experiment, Series
from perfcast.core.function import Backtest, Model, ModelWarning
from perfcast.model import rivals
from perfcast.model.backtest import block_backtests, with_backtests
from perfcast.model.fitting.assembly import Skip, reassembled, skips_of
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.decisions import SeriesDecisions, series_decisions
from perfcast.model.fitting.location import LOCATIONS, Location
from perfcast.model.gates import series_gates, series_warnings, with_warnings
from perfcast.model.rivals import chunk_selection_spreads, series_selection_spreads, with_selection
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
        return self._fit_all(experiment, metric, chunks)

    def _fit_all(
        self,
        experiment: Experiment,
        metric: str | None,
        chunks: ChunkMap | None,
        finishing: Finishing | None = None,
    ) -> SeriesModeler:
        """:meth:`fit`; with ``finishing`` (and ``chunks``) each chunk's models also get
        their warnings and backtests where they were modeled."""
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
                self.models_.extend(
                    self._fit_series_in_chunks(series, experiment, chunks, finishing)
                )
            reported = self.reports_progress and chunks is None
            if self.progress is not None and (skips or not reported):
                self.progress(len(series.kernels))
        return self

    def fit_finished(
        self, experiment: Experiment, metric: str, chunks: ChunkMap, block_kernels: int
    ) -> SeriesModeler:
        """:meth:`fit` in chunks whose models come back finished: with the quality gates'
        warnings (:func:`perfcast.model.gates.gate_models`) and the backtests
        (:func:`perfcast.model.backtest.backtest` by blocks of ``block_kernels``), all
        computed by ``chunks`` (on other processes or machines); the models are those of
        :meth:`fit` finished by those two in this process, bit for bit.
        """
        finishing = Finishing(experiment)
        worker = type(self)(**self.get_params())  # settings only: no progress callback
        task = functools.partial(backtest_block, worker, metric=metric)
        items = (
            (block, parameter)  # a task per parameter: more tasks to spread
            for block in experiment.kernel_blocks(metric, block_kernels)
            for parameter in experiment.parameter_names
        )
        for found in chunks.map(task, items):
            finishing.record(found)
        return self._fit_all(experiment, metric, chunks, finishing)

    def _fit_series(self, series: Series, source: str | None) -> list[Model]:
        """The models of every kernel of ``series``, in its kernel order."""
        return self._model_data(self._fit_data(series, source))

    def _fit_series_in_chunks(
        self,
        series: Series,
        experiment: Experiment,
        chunks: ChunkMap,
        finishing: Finishing | None = None,
    ) -> list[Model]:
        """:meth:`_fit_series` with the kernels modeled chunk by chunk by ``chunks`` (and
        finished there with ``finishing``).

        The statistics (location estimates, the noise prior) come from the whole series; the
        choices that depend on every kernel (:mod:`perfcast.model.fitting.decisions`) are
        taken from all chunks together, and a chunk that decided otherwise alone is modeled
        again with the whole series' choices.
        """
        if not self.chunkable:
            raise ValueError(f"modeler: {self.name} cannot model a series in chunks")
        data = self._fit_data(series, experiment.source)
        n_kernels = len(series.kernels)
        size = chunks.kernels_per_chunk
        if finishing is not None:  # whole chunks of the selection spread's, which round alike
            size = -(-size // rivals.CHUNK_KERNELS) * rivals.CHUNK_KERNELS
        starts = range(0, n_kernels, size)
        shared = tuple(series_warnings(series, experiment)) if finishing is not None else ()
        # The selection spread takes the adaptive location estimate (rivals.selection_spread).
        spread = None
        if finishing is not None and self.location != "adaptive":
            spread = FitData.from_series(series, experiment.source)

        # The choices the statistics fix ahead, raised by the largest choices of the chunks
        # returned so far: later chunks start from them, so that few decide below the whole
        # series' choices and are modeled again.
        floor: list[tuple[int, ...] | None] = [self._choices_ahead(data) or None]

        def piece(start: int) -> Piece:
            rows = np.arange(start, min(start + size, n_kernels))
            # Without the location estimate of the whole series: only this process needs it.
            part = dataclasses.replace(data.rows(rows), location=None)
            if finishing is None:
                return part, None, floor[0]
            return part, finishing.of_chunk(series, rows, part, shared, spread), floor[0]

        worker = type(self)(**self.get_params())  # settings only: no progress callback
        results = []
        for result in chunks.map(functools.partial(model_piece, worker), map(piece, starts)):
            results.append(result)
            seen = result[1]
            floor[0] = seen if floor[0] is None else _largest(floor[0], seen)
        combined = tuple(max(values) for values in zip(*(r[1] for r in results), strict=True))
        again = [i for i, (_, _, used) in enumerate(results) if used != combined]
        # Below the whole series only in the design width (the last choice): reassembled.
        narrow = [i for i in again if results[i][2][:-1] == combined[:-1]]
        if narrow:
            task = functools.partial(reassemble_piece, worker, forced=combined)
            items = ((piece(starts[i]), bare_models(results[i][0]), results[i][1]) for i in narrow)
            for i, result in zip(narrow, chunks.map(task, items), strict=True):
                results[i] = result
        again = [i for i in again if i not in narrow]
        if again:
            forced = functools.partial(model_piece, worker, forced=combined)
            for i, result in zip(
                again, chunks.map(forced, (piece(starts[i]) for i in again)), strict=True
            ):
                results[i] = result
        models = [model for models, _, _ in results for model in models]
        if finishing is not None and not spreads_alike(models, data):
            # Kernels without a model of uncertainty: the spread pools over the others only.
            chosen = {m.kernel: m for m in models if m.uncertainty is not None}
            spreads = series_selection_spreads(series, chosen, experiment.source)
            models = [  # the chunks' own spreads replaced
                with_selection(m, spreads.get(m.kernel, ())) if m.uncertainty is not None else m
                for m in models
            ]
        return models

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

    def _choices_ahead(self, data: FitData) -> tuple[int, ...]:
        """The first series-wide choices ``_model_data(data)`` makes
        (:mod:`perfcast.model.fitting.decisions`), in their order, as far as the statistics
        alone fix them before any search; the chunks of a series start from them, so that
        none decides below the whole series on them. None known: ``()``."""
        return ()


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


#: A chunk as :meth:`SeriesModeler._fit_series_in_chunks` hands it to a worker: its
#: statistics, what finishes its models (or None), and lower bounds of the series-wide choices
#: (or None).
Piece = tuple[FitData, "ChunkFinish | None", "tuple[int, ...] | None"]


def model_piece(
    modeler: SeriesModeler, piece: Piece, forced: tuple[int, ...] | None = None
) -> tuple[list[Model], tuple[int, ...], tuple[int, ...]]:
    """:func:`model_chunk` of a chunk's statistics, its models finished (quality gates,
    backtests, selection spread) when the chunk carries a :class:`ChunkFinish`; also returns
    the series-wide choices followed (the larger of the chunk's own and the piece's lower
    bounds, or ``forced``)."""
    data, finish, floor = piece
    with series_decisions(SeriesDecisions(forced, floor=floor)) as decisions:
        models = modeler._model_data(data)
    finished = models if finish is None else finish.apply(models, data)
    return finished, tuple(decisions.seen), tuple(decisions.used)


def bare_models(models: Sequence[Model]) -> list[Model]:
    """Each model's kernel, constant and terms only (what :func:`reassemble_piece` needs)."""
    return [Model(m.kernel, m.metric, m.parameters, m.constant, m.terms) for m in models]


def reassemble_piece(
    modeler: SeriesModeler,
    item: tuple[Piece, list[Model], tuple[int, ...]],
    forced: tuple[int, ...],
) -> tuple[list[Model], tuple[int, ...], tuple[int, ...]]:
    """:func:`model_piece` with the whole series' choices ``forced`` for a chunk that made
    all of them but the design width (the last) already: ``item`` is the chunk, its models of
    that first fit (:func:`bare_models`) and the choices it made alone; the models are
    reassembled with the whole series' width
    (:func:`~perfcast.model.fitting.assembly.reassembled`) and finished, without searching
    again; modeled again in full when they cannot be reassembled exactly."""
    piece, models, seen = item
    data, finish, _ = piece
    rebuilt = reassembled(models, data, forced[-1])
    if rebuilt is None:
        return model_piece(modeler, piece, forced)
    finished = rebuilt if finish is None else finish.apply(rebuilt, data)
    return finished, seen, forced


@dataclasses.dataclass(frozen=True)
class ChunkFinish:
    """What a chunk's models get where they were modeled: the quality gates' warnings and
    the backtested extrapolation errors of its kernels.

    Attributes
    ----------
    shared : tuple of ModelWarning
        The warnings of the whole series (:func:`perfcast.model.gates.series_warnings`).
    parameters : tuple of str
        The parameters backtested, rows of ``largest`` and ``rate_variance``.
    largest, rate_variance : ndarray, shape (n_parameters, n_kernels)
        Each kernel's backtest along each parameter (:class:`~perfcast.core.function.Backtest`);
        NaN where it has none.
    original : Series or None
        The chunk's measurements as measured, when its statistics hold rescaled values
        (:func:`perfcast.model.fitting.data.scale_exponents`); None when they are the same.
    spread : FitData or None
        The statistics the model-selection spread takes (:mod:`perfcast.model.rivals`: the
        adaptive location estimate of the whole series), when they are not the chunk's own.
    spread_kernels : int
        Kernels whose spreads are weighed together
        (:data:`perfcast.model.rivals.CHUNK_KERNELS` of the calling process); the chunk
        starts at a multiple of it.
    """

    shared: tuple[ModelWarning, ...]
    parameters: tuple[str, ...]
    largest: np.ndarray
    rate_variance: np.ndarray
    original: Series | None
    spread: FitData | None
    spread_kernels: int

    def apply(self, models: list[Model], data: FitData) -> list[Model]:
        """``models`` (of the kernels of ``data``, in its order) with their warnings and
        backtests."""
        series = data.series if self.original is None else self.original
        warned = series_gates(models, series, self.shared)
        metric = series.metric
        position = {kernel: row for row, kernel in enumerate(series.kernels)}
        found: dict[str, list[Backtest]] = {}
        for model in models:
            row = position[model.kernel]
            backtests = [
                Backtest(name, float(self.largest[j, row]), float(self.rate_variance[j, row]))
                for j, name in enumerate(self.parameters)
                if not np.isnan(self.largest[j, row])
            ]
            if backtests:
                found[model.kernel] = backtests
        finished = with_backtests(with_warnings(models, warned, metric), found, metric)
        if not spreads_alike(finished, data):  # the calling process finds them
            return finished
        spreads = chunk_selection_spreads(
            data if self.spread is None else self.spread, finished, self.spread_kernels
        )
        return [
            with_selection(m, spreads[m.kernel]) if m.kernel in spreads else m for m in finished
        ]


def spreads_alike(models: Sequence[Model], data: FitData) -> bool:
    """True when every kernel of ``data`` has a model with an uncertainty: the selection
    spread of a chunk is then the one of its series (:func:`perfcast.model.rivals.
    selection_spread` pools its statistics over the kernels with such models)."""
    return len(models) == len(data.series.kernels) and all(
        m.uncertainty is not None for m in models
    )


class Finishing:
    """The backtests of every kernel of an experiment, found beforehand by blocks
    (:func:`backtest_block`), for :meth:`SeriesModeler.fit` to hand each chunk its kernels'
    share (:class:`ChunkFinish`).

    Parameters
    ----------
    experiment : Experiment
        The experiment being fitted.
    """

    def __init__(self, experiment: Experiment):
        self.parameters = experiment.parameter_names
        self._position = {kernel: i for i, kernel in enumerate(experiment.kernels)}
        shape = (len(self.parameters), len(self._position))
        self._largest = np.full(shape, np.nan)
        self._rate_variance = np.full(shape, np.nan)

    def record(self, block: BlockBacktests) -> None:
        """Keep the backtests of a block along a parameter."""
        kernels, parameter, largest, rate_variance = block
        row = self.parameters.index(parameter)
        columns = [self._position[kernel] for kernel in kernels]
        self._largest[row, columns] = largest
        self._rate_variance[row, columns] = rate_variance

    def of_chunk(
        self,
        series: Series,
        rows: np.ndarray,
        data: FitData,
        shared: tuple[ModelWarning, ...],
        spread: FitData | None,
    ) -> ChunkFinish:
        """What the chunk of ``rows`` of ``series`` (its statistics ``data``) needs; ``spread``
        the whole series' statistics for the selection spread (None: those of ``data``)."""
        columns = [self._position[kernel] for kernel in data.series.kernels]
        original = None
        if data.exponents.any():
            original = dataclasses.replace(
                series, kernels=data.series.kernels, values=series.values[rows]
            )
        return ChunkFinish(
            shared,
            self.parameters,
            self._largest[:, columns],
            self._rate_variance[:, columns],
            original,
            None if spread is None else dataclasses.replace(spread.rows(rows), location=None),
            rivals.CHUNK_KERNELS,
        )


#: A block's backtests along one parameter as :func:`backtest_block` returns them: its
#: kernels, the parameter, and per kernel the largest value and the rate variance of the
#: backtest (NaN where none).
BlockBacktests = tuple[list[str], str, np.ndarray, np.ndarray]


def backtest_block(
    modeler: SeriesModeler, item: tuple[Experiment, str], metric: str
) -> BlockBacktests:
    """The backtest (:func:`perfcast.model.backtest.block_backtests`) along a parameter of
    the kernels of a block of an experiment (:meth:`Experiment.kernel_blocks`), ``item``
    being the block and the parameter, the search refitted with ``modeler``'s settings in
    this process; as arrays, which travel between processes far faster than one object per
    backtest.
    """
    block, parameter = item

    def refit(training: Experiment) -> list[Model]:
        return type(modeler)(**modeler.get_params()).fit(training, metric).models_

    found = block_backtests(block, metric, refit, parameters=[parameter])
    largest = np.full(len(block.kernels), np.nan)
    rate_variance = np.full(len(block.kernels), np.nan)
    for column, kernel in enumerate(block.kernels):
        for backtest in found.get(kernel, ()):
            largest[column], rate_variance[column] = backtest.largest, backtest.rate_variance
    return block.kernels, parameter, largest, rate_variance


def _largest(first: tuple[int, ...], second: tuple[int, ...]) -> tuple[int, ...]:
    """Position by position the larger of two tuples of series-wide choices; the longer
    one's last values where the other has none (the choices known ahead are a prefix)."""
    common = tuple(max(a, b) for a, b in zip(first, second, strict=False))
    return common + first[len(common) :] + second[len(common) :]


def _representable(model: Model) -> bool:
    """True when every number of ``model`` (coefficients, quality figures) is finite or absent."""
    quality = model.quality.to_dict().values() if model.quality is not None else ()
    numbers = [model.constant, *(t.coefficient for t in model.terms), *quality]
    # math.isfinite: a plain number at a time, far faster than numpy's per call
    return all(n is None or math.isfinite(n) for n in numbers)
