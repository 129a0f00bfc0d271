"""Life-long online modeling: models that keep learning from measurements arriving in order.

:class:`OnlineModeler` takes measurements one batch after another
(:meth:`OnlineModeler.partial_fit`) and keeps, per kernel and metric, a bounded state: the
count, mean and sum of squared deviations (M2) of every configuration seen (a hash table keyed
by the parameter values), the current model, the history of batch judgements and the back-off
state. It follows the online part of the hybrid modeling paper
(``hybrid-static-dynamic-modeling``, sections III-D3 and III-E):

* Measurements of a kernel are buffered until ``batch`` of them arrived. A full batch is first
  judged *out of sample* against the model fitted before it: the predicted adjusted R-square
  (PARS, eq. 11-12) and the lack-of-fit F-test (eq. 13-14) over the batch and the configurations
  seen so far. Then its statistics join the table and the model is refitted, with any registered
  modeler, on all statistics kept.
* A batch the model predicts well is a *hit*: the hit counter ``hc`` grows and the next
  ``q = batch * U(0, 2**hc)`` measurements of the kernel are skipped (``q = U(0, 2**hc)`` for a
  kernel that is a function, measured once per call rather than per loop iteration); a *miss*
  resets ``hc`` to 0.
* A measured value outside the model's prediction interval at ``exception_level`` is a
  performance exception (kept with the measurement's index, parameters, value, prediction and
  interval).
* With similarity clusters, only a cluster's first member builds a model at first; the others
  borrow it and are measured under back-off, judged against the borrowed model, until a batch of
  theirs misses: from then on they are modeled on their own.

The hit test (:func:`judge_batch`) differs from the paper's in two ways, which is what lets
back-off skip most measurements of kernels that are well modeled (``benchmarks/RESULTS.md``,
"Online modeling"): a batch misses only when the model does worse than expected, never when it
does better (the paper's two-sided 95 % band around the running PARS resets the counter on one
batch in twenty of a perfect model), and the three tests that can declare a miss run at a
small false-miss rate ``miss_alpha`` each. PARS is not judged on a batch of one configuration,
where the variance it explains is noise alone; such batches are judged by how many of their
values leave the 95 % prediction interval. A significant lack of fit counts only when it is
also larger than ``tolerance`` (relative), since with the thousands of repetitions a long life
collects, any form not exactly the truth becomes significant.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model
from perfcast.model.registry import make_modeler
from perfcast.model.settings import check_bool, check_open_interval

#: Most repetitions per configuration handed to the refit: enough to carry the mean and the
#: noise, few enough to keep a refit cheap however long the kernel has lived.
REFIT_REPETITIONS = 8

#: Measurements of a configuration from which its own noise sets its prediction interval.
LOCAL_NOISE_COUNT = 20

#: The least drop of PARS below its running mean that can make a miss (see :func:`judge_batch`).
PARS_DROP = 0.05

#: The interval whose misses judge a batch (paper: 95 %).
HIT_LEVEL = 0.95


@dataclass(frozen=True)
class Measurement:
    """One measurement as it arrives.

    Attributes
    ----------
    kernel, metric : str
    params : mapping of str to float
        The kernel's predictor values.
    value : float
    index : int
        Its position in the stream (0-based), used to name it in exceptions and errors.
    """

    kernel: str
    metric: str
    params: Mapping[str, float]
    value: float
    index: int = 0


@dataclass(frozen=True)
class PerformanceException:
    """A measured value outside the model's prediction interval."""

    index: int
    params: dict[str, float]
    value: float
    predicted: float
    interval: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        """``{"index", "params", "value", "predicted", "interval"}``."""
        return {
            "index": self.index,
            "params": dict(self.params),
            "value": self.value,
            "predicted": self.predicted,
            "interval": list(self.interval),
        }


@dataclass(frozen=True)
class BatchJudgement:
    """How a model predicted one batch it had not seen.

    Attributes
    ----------
    number : int
        1-based number of the batch among the kernel's measured batches.
    size : int
        Measurements in the batch.
    pars : float or None
        Predicted adjusted R-square; None without a model, with fewer than two configurations
        in the batch or too few measurements for the model's terms.
    lof_p : float or None
        p-value of the lack-of-fit F-test; None when the test has no degrees of freedom.
    outside : int
        Measurements outside the model's 95 % prediction interval.
    hit : bool or None
        The back-off decision; None for the first batch (no model to judge).
    hit_count : int
        ``hc`` after the decision.
    skip : int
        Measurements to skip next.
    reason : str
        Why a batch missed (empty on a hit).
    """

    number: int
    size: int
    pars: float | None
    lof_p: float | None
    outside: int
    hit: bool | None
    hit_count: int
    skip: int
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON and the store."""
        return {
            "number": self.number,
            "size": self.size,
            "pars": self.pars,
            "lof_p": self.lof_p,
            "outside": self.outside,
            "hit": self.hit,
            "hit_count": self.hit_count,
            "skip": self.skip,
            "reason": self.reason,
        }


class ConfigTable:
    """Count, mean and M2 per configuration: the bounded memory of a kernel (a hash table)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[float, ...], list[float]] = {}

    def add(self, key: tuple[float, ...], count: float, mean: float, m2: float) -> None:
        """Merge the statistics of ``count`` values (Chan et al.'s pairwise update)."""
        row = self.rows.get(key)
        if row is None:
            self.rows[key] = [count, mean, m2]
            return
        total = row[0] + count
        delta = mean - row[1]
        row[2] += m2 + delta * delta * row[0] * count / total
        row[1] += delta * count / total
        row[0] = total

    def add_values(self, key: tuple[float, ...], values: Sequence[float]) -> None:
        """Merge raw values of one configuration."""
        array = np.asarray(values, dtype=float)
        mean = float(array.mean())
        self.add(key, float(len(array)), mean, float(((array - mean) ** 2).sum()))

    def merged(self, other: ConfigTable) -> ConfigTable:
        """A new table holding both tables' statistics."""
        table = ConfigTable()
        for source in (self, other):
            for key, (count, mean, m2) in source.rows.items():
                table.add(key, count, mean, m2)
        return table

    def __len__(self) -> int:
        return len(self.rows)


def batch_table(points: Sequence[tuple[float, ...]], values: Sequence[float]) -> ConfigTable:
    """The statistics of one batch by configuration."""
    groups: dict[tuple[float, ...], list[float]] = {}
    for key, value in zip(points, values, strict=True):
        groups.setdefault(key, []).append(value)
    table = ConfigTable()
    for key, group in groups.items():
        table.add_values(key, group)
    return table


def pars(measured: np.ndarray, predicted: np.ndarray, predictors: int) -> float | None:
    """Predicted adjusted R-square of a batch (paper eq. 11-12).

    Parameters
    ----------
    measured, predicted : ndarray
        The batch's values and the model's predictions at their configurations.
    predictors : int
        The model's number of predictors ``m`` (its terms, without the constant).

    Returns
    -------
    float or None
        None when ``b - m - 1 <= 0`` or the batch's values do not vary.
    """
    size = len(measured)
    total = float(((measured - measured.mean()) ** 2).sum())
    if size - predictors - 1 <= 0 or total <= 0.0:
        return None
    r2 = 1.0 - float(((measured - predicted) ** 2).sum()) / total
    return r2 - (1.0 - r2) * predictors / (size - predictors - 1)


def lack_of_fit(
    table: ConfigTable, model: Model, *, relative: bool = False
) -> tuple[float | None, float]:
    """Lack-of-fit F-test of ``model`` on the statistics in ``table`` (paper eq. 13-14).

    The lack-of-fit sum is ``sum_j n_j (mean_j - pred_j)**2`` over the ``c`` configurations,
    the pure-error sum ``sum_j M2_j`` over all ``h`` values; ``F = (lof / (c - k)) /
    (pe / (h - c))`` with ``k`` the model's coefficients (the paper's ``c - 2`` is ``k = 2``).
    With ``relative`` each configuration is weighted by ``1 / pred_j**2`` (multiplicative noise).

    Returns
    -------
    p : float or None
        ``1 - F_cdf(F; c - k, h - c)``; None without degrees of freedom or pure error.
    misfit : float
        The root mean square of ``(mean_j - pred_j) / pred_j`` weighted by counts: how large
        the lack of fit is, whatever its significance.
    """
    from scipy import special

    keys = list(table.rows)
    stats = np.array([table.rows[k] for k in keys], dtype=float)
    counts, means, m2 = stats[:, 0], stats[:, 1], stats[:, 2]
    predicted = model.evaluate(np.array(keys, dtype=float).reshape(len(keys), -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(predicted != 0, (means - predicted) / np.abs(predicted), np.inf)
    misfit = float(np.sqrt(np.sum(counts * scaled**2) / counts.sum()))
    weights = 1.0 / predicted**2 if relative else np.ones_like(predicted)
    configurations, values = len(keys), float(counts.sum())
    df_lof = configurations - (1 + len(model.terms))
    df_pe = values - configurations
    pure = float(np.sum(weights * m2))
    if df_lof <= 0 or df_pe <= 0 or not pure > 0 or not np.all(np.isfinite(weights)):
        return None, misfit
    lof = float(np.sum(weights * counts * (means - predicted) ** 2))
    statistic = (lof / df_lof) / (pure / df_pe)
    return float(special.fdtrc(df_lof, df_pe, statistic)), misfit


def interval(
    model: Model,
    seen: ConfigTable,
    points: Sequence[tuple[float, ...]],
    where: np.ndarray,
    level: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Prediction and interval of a new measurement at each point.

    At a configuration seen at least :data:`LOCAL_NOISE_COUNT` times the interval's spread is
    measured there: the configuration's own sample variance (times ``1 + 1/n``) plus the
    square of the model's miss of its mean, with a t quantile of ``n - 1`` degrees of freedom.
    That holds whatever the noise is (additive, multiplicative, or neither), where the model's
    own interval (:meth:`Model.predict_interval`, used at other points) assumes one kind.
    """
    from scipy import special

    predicted, low, high = model.predict_interval(where, level)
    for i, key in enumerate(points):
        row = seen.rows.get(key)
        if row is None or row[0] < LOCAL_NOISE_COUNT:
            continue
        count, mean, m2 = row
        quantile = float(special.stdtrit(count - 1, 0.5 + level / 2))
        spread = quantile * math.sqrt(
            m2 / (count - 1) * (1 + 1 / count) + (mean - predicted[i]) ** 2
        )
        low[i], high[i] = predicted[i] - spread, predicted[i] + spread
    return predicted, low, high


def judge_batch(
    measured: np.ndarray,
    predicted: np.ndarray,
    inside: np.ndarray,
    predictors: int,
    configurations: int,
    lof: tuple[float | None, float],
    pars_history: tuple[int, float, float],
    *,
    miss_alpha: float,
    tolerance: float,
) -> tuple[float | None, str]:
    """PARS of a batch and why it misses ('' for a hit); see the module notes.

    ``pars_history`` is the running (count, mean, M2) of the kernel's earlier PARS values; a
    PARS below ``mean - t * sd`` (one-sided, the t quantile of ``miss_alpha`` with ``count - 1``
    degrees of freedom) and below ``mean -`` :data:`PARS_DROP` misses once three earlier values
    exist. The second bound matters for good models: their PARS sit just below 1 with a tiny
    spread, so that a drop from 0.998 to 0.997, which changes nothing, would leave the first.
    """
    from scipy import special, stats

    value = pars(measured, predicted, predictors) if configurations >= 2 else None
    outside = int(np.count_nonzero(~inside))
    if outside and stats.binom.sf(outside - 1, len(measured), 1 - HIT_LEVEL) < miss_alpha:
        return value, f"{outside} of {len(measured)} values outside the 95% prediction interval"
    lof_p, misfit = lof
    if lof_p is not None and lof_p < miss_alpha and misfit > tolerance:
        return value, f"lack of fit (p = {lof_p:.3g}, {100 * misfit:.3g}% off)"
    count, mean, m2 = pars_history
    if value is not None and count >= 3:
        spread = math.sqrt(m2 / (count - 1))
        bound = min(mean + float(special.stdtrit(count - 1, miss_alpha)) * spread, mean - PARS_DROP)
        if value < bound:
            return value, f"PARS {value:.3g} below the running bound {bound:.3g}"
    return value, ""


@dataclass
class KernelState:
    """What the online modeler keeps about one kernel and metric (bounded in the stream length).

    Attributes
    ----------
    kernel, metric : str
    parameters : tuple of str
        The predictor names, in the order of the table's keys.
    table : ConfigTable
        Statistics of every measurement taken (the model's data).
    model : Model or None
        The current model (None before the first batch, or when the data admits none yet).
    borrowed_from : str or None
        The cluster member whose model this kernel uses until one of its batches misses.
    judgements : list of BatchJudgement
    exceptions : list of PerformanceException
    hit_count, skip_left : int
        Back-off state.
    measured, skipped, updates : int
        Measurements taken and skipped, model refits.
    pars_count, pars_mean, pars_m2 : float
        Running statistics of PARS (Welford), the reference of the hit test.
    pending_points, pending_values, pending_indices : list
        The batch being filled.
    unsaved : ConfigTable
        Statistics not yet written to a store (see :meth:`OnlineModeler.drain`).
    """

    kernel: str
    metric: str
    parameters: tuple[str, ...]
    table: ConfigTable = field(default_factory=ConfigTable)
    model: Model | None = None
    borrowed_from: str | None = None
    judgements: list[BatchJudgement] = field(default_factory=list)
    exceptions: list[PerformanceException] = field(default_factory=list)
    hit_count: int = 0
    skip_left: int = 0
    measured: int = 0
    skipped: int = 0
    updates: int = 0
    pars_count: int = 0
    pars_mean: float = 0.0
    pars_m2: float = 0.0
    pending_points: list[tuple[float, ...]] = field(default_factory=list)
    pending_values: list[float] = field(default_factory=list)
    pending_indices: list[int] = field(default_factory=list)
    unsaved: ConfigTable = field(default_factory=ConfigTable)
    unsaved_judgements: list[BatchJudgement] = field(default_factory=list)
    unsaved_exceptions: list[PerformanceException] = field(default_factory=list)
    unsaved_counts: list[int] = field(default_factory=lambda: [0, 0, 0])

    @property
    def key(self) -> tuple[str, str]:
        """``(kernel, metric)``."""
        return self.kernel, self.metric

    @property
    def last(self) -> BatchJudgement | None:
        """The latest judgement, if any."""
        return self.judgements[-1] if self.judgements else None

    def add_pars(self, value: float) -> None:
        """Fold one PARS value into the running mean and M2."""
        self.pars_count += 1
        delta = value - self.pars_mean
        self.pars_mean += delta / self.pars_count
        self.pars_m2 += delta * (value - self.pars_mean)


class OnlineModeler:
    """Models kernels from measurements arriving in order, in batches, for a program's life.

    Parameters
    ----------
    modeler : str
        The registered modeler refitted on each batch (``pmnf``, ``sparse``, ...).
    batch : int
        Measurements per kernel between model updates (``b``; the paper settled on 512).
    backoff : bool
        Skip measurements of kernels whose model keeps predicting well.
    miss_alpha : float
        False-miss rate of each test of a batch (see :func:`judge_batch`).
    tolerance : float
        Relative lack of fit below which a significant lack-of-fit test is not a miss.
    exception_level : float
        Probability of the prediction interval whose misses are performance exceptions.
    max_hits : int
        Cap on the hit counter (so the longest skip is ``batch * 2**max_hits``).
    clusters : iterable of iterable of str, optional
        Kernels that are statically similar; the first of each measured for all of them.
    functions : collection of str
        Kernels that are functions: back-off skips ``U(0, 2**hc)`` calls, not batches.
    seed : int
        Seed of the back-off's random delays.
    **settings
        Settings of ``modeler`` (checked by it).

    Attributes
    ----------
    states_ : dict of (kernel, metric) to KernelState
    """

    name = "online"

    def __init__(
        self,
        modeler: str = "pmnf",
        batch: int = 512,
        *,
        backoff: bool = True,
        miss_alpha: float = 0.001,
        tolerance: float = 0.05,
        exception_level: float = 0.9999,
        max_hits: int = 12,
        clusters: Iterable[Iterable[str]] | None = None,
        functions: Collection[str] = (),
        seed: int = 0,
        source: str | None = None,
        **settings: Any,
    ) -> None:
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValueError(f"batch must be a whole number >= 1, got {batch!r}")
        if isinstance(max_hits, bool) or not isinstance(max_hits, int) or not 0 <= max_hits <= 30:
            raise ValueError(f"max_hits must be a whole number in 0..30, got {max_hits!r}")
        check_open_interval("miss_alpha", miss_alpha, 0.0, 1.0)
        check_open_interval("exception_level", exception_level, 0.0, 1.0)
        if not (isinstance(tolerance, float | int) and tolerance >= 0):
            raise ValueError(f"tolerance must be a number >= 0, got {tolerance!r}")
        check_bool("backoff", backoff)
        self.modeler = modeler
        self.batch = batch
        self.backoff = backoff
        self.miss_alpha = miss_alpha
        self.tolerance = float(tolerance)
        self.exception_level = exception_level
        self.max_hits = max_hits
        self.functions = frozenset(functions)
        self.seed = seed
        self.source = source
        self.settings = dict(settings)
        self._estimator = make_modeler(modeler, **settings)  # validates the settings now
        self._random = np.random.default_rng(seed)
        self._base: dict[str, str] = {}
        for cluster in clusters or ():
            members = list(cluster)
            for member in members[1:]:
                self._base[member] = members[0]
        self.states_: dict[tuple[str, str], KernelState] = {}

    def get_params(self) -> dict[str, Any]:
        """The settings, by name (the refitted modeler's under ``settings``)."""
        return {
            "modeler": self.modeler,
            "batch": self.batch,
            "backoff": self.backoff,
            "miss_alpha": self.miss_alpha,
            "tolerance": self.tolerance,
            "exception_level": self.exception_level,
            "max_hits": self.max_hits,
            "seed": self.seed,
            "settings": dict(self.settings),
        }

    # -- the measurement side -------------------------------------------------------------

    def should_measure(self, kernel: str, metric: str) -> bool:
        """Whether the next measurement of ``kernel`` and ``metric`` is to be taken.

        A kernel not seen yet is measured, except a cluster member whose base has no model yet.
        """
        state = self.states_.get((kernel, metric))
        if state is None:
            base = self._base.get(kernel)
            return base is None or self._model_of_base(base, metric) is not None
        if state.borrowed_from is not None and state.model is None:
            return self._model_of_base(state.borrowed_from, metric) is not None
        return state.skip_left <= 0

    def _model_of_base(self, base: str, metric: str) -> Model | None:
        state = self.states_.get((base, metric))
        return state.model if state is not None else None

    # -- the modeling side ----------------------------------------------------------------

    def partial_fit(self, batch: Iterable[Measurement]) -> OnlineModeler:
        """Take measurements in arrival order: each is measured or skipped (back-off and
        clusters), measured ones fill their kernel's batch, a full batch is judged and the
        kernel's model refitted; returns self.

        Raises
        ------
        InputError
            When a kernel's measurement names other parameters than its first one did
            (``reason`` ``online-parameters``), naming the record by its 1-based position.
        """
        for measurement in batch:
            self._observe(measurement)
        return self

    def finish(self) -> OnlineModeler:
        """Judge and fold in every partly filled batch (the end of a run); returns self."""
        for state in self.states_.values():
            if state.pending_values:
                self._complete(state)
        return self

    def _state_for(self, measurement: Measurement) -> KernelState:
        key = (measurement.kernel, measurement.metric)
        names = tuple(measurement.params)
        state = self.states_.get(key)
        if state is None:
            state = KernelState(measurement.kernel, measurement.metric, tuple(sorted(names)))
            base = self._base.get(measurement.kernel)
            if base is not None and base != measurement.kernel:
                state.borrowed_from = base
            self.states_[key] = state
        elif set(names) != set(state.parameters):
            raise InputError(
                f"kernel '{measurement.kernel}' was measured with parameters "
                f"{', '.join(state.parameters) or 'none'}, this measurement has "
                f"{', '.join(sorted(names)) or 'none'}",
                self.source,
                measurement.index + 1,
                reason="online-parameters",
                value=sorted(names),
            )
        return state

    def _observe(self, measurement: Measurement) -> None:
        measure = self.should_measure(measurement.kernel, measurement.metric)
        state = self._state_for(measurement)
        if not measure:
            state.skipped += 1
            state.unsaved_counts[1] += 1
            state.skip_left -= 1
            return
        state.measured += 1
        state.unsaved_counts[0] += 1
        state.pending_points.append(tuple(float(measurement.params[p]) for p in state.parameters))
        state.pending_values.append(float(measurement.value))
        state.pending_indices.append(measurement.index)
        if len(state.pending_values) >= self.batch:
            self._complete(state)

    def current_model(self, state: KernelState) -> Model | None:
        """The model that predicts ``state``'s kernel: its own, else its cluster base's."""
        if state.model is not None or state.borrowed_from is None:
            return state.model
        return self._model_of_base(state.borrowed_from, state.metric)

    def _complete(self, state: KernelState) -> None:
        points, values, indices = state.pending_points, state.pending_values, state.pending_indices
        state.pending_points, state.pending_values, state.pending_indices = [], [], []
        batch = batch_table(points, values)
        model = self.current_model(state)
        judgement = self._judge(state, model, points, values, indices, batch)
        state.judgements.append(judgement)
        state.unsaved_judgements.append(judgement)
        if judgement.hit is False and state.borrowed_from is not None:
            state.borrowed_from = None  # a member that behaves differently gets its own model
        state.table = state.table.merged(batch)
        state.unsaved = state.unsaved.merged(batch)
        if state.borrowed_from is None:
            self._refit(state)

    def _judge(
        self,
        state: KernelState,
        model: Model | None,
        points: list[tuple[float, ...]],
        values: list[float],
        indices: list[int],
        batch: ConfigTable,
    ) -> BatchJudgement:
        number = len(state.judgements) + 1
        if model is None:
            return BatchJudgement(number, len(values), None, None, 0, None, 0, 0)
        measured = np.asarray(values, dtype=float)
        where = np.asarray(points, dtype=float).reshape(len(points), -1)
        seen = state.table if state.borrowed_from is None else ConfigTable()
        predicted, low, high = interval(model, seen, points, where, HIT_LEVEL)
        _, exc_low, exc_high = interval(model, seen, points, where, self.exception_level)
        inside = (measured >= low) & (measured <= high)
        for i in np.flatnonzero((measured < exc_low) | (measured > exc_high)):
            exception = PerformanceException(
                indices[i],
                dict(zip(state.parameters, points[i], strict=True)),
                float(measured[i]),
                float(predicted[i]),
                (float(exc_low[i]), float(exc_high[i])),
            )
            state.exceptions.append(exception)
            state.unsaved_exceptions.append(exception)
        relative = model.uncertainty is not None and model.uncertainty.relative
        lof = lack_of_fit(seen.merged(batch), model, relative=relative)
        value, reason = judge_batch(
            measured,
            predicted,
            inside,
            len(model.terms),
            len(batch),
            lof,
            (state.pars_count, state.pars_mean, state.pars_m2),
            miss_alpha=self.miss_alpha,
            tolerance=self.tolerance,
        )
        hit = not reason
        if value is not None and hit:
            state.add_pars(value)
        state.hit_count = min(state.hit_count + 1, self.max_hits) if hit else 0
        skip = self._delay(state) if hit and self.backoff else 0
        state.skip_left = skip
        return BatchJudgement(
            number,
            len(values),
            value,
            lof[0],
            int(np.count_nonzero(~inside)),
            hit,
            state.hit_count,
            skip,
            reason,
        )

    def _delay(self, state: KernelState) -> int:
        """``q = b * U(0, 2**hc)`` measurements (``U(0, 2**hc)`` for a function)."""
        scale = 1 if state.kernel in self.functions else self.batch
        return int(scale * self._random.uniform(0.0, 2.0**state.hit_count))

    def _refit(self, state: KernelState) -> None:
        experiment = table_experiment(state)
        if experiment is None:
            return
        self._estimator.fit(experiment, state.metric)
        if self._estimator.models_:
            state.model = self._estimator.models_[0]
            state.updates += 1
            state.unsaved_counts[2] += 1

    # -- results --------------------------------------------------------------------------

    @property
    def models_(self) -> list[Model]:
        """The current model of every kernel that has one (borrowed ones under their name)."""
        from dataclasses import replace

        models = []
        for state in self.states_.values():
            model = self.current_model(state)
            if model is not None:
                models.append(replace(model, kernel=state.kernel))
        return models

    def drain(self) -> list[KernelState]:
        """The kernels changed since the last call, with their unsaved parts, which are then
        cleared: what a store writes after each batch."""
        changed = []
        for state in self.states_.values():
            if state.unsaved.rows or state.unsaved_judgements or any(state.unsaved_counts):
                changed.append(_snapshot(state))
                state.unsaved = ConfigTable()
                state.unsaved_judgements = []
                state.unsaved_exceptions = []
                state.unsaved_counts = [0, 0, 0]
        return changed

    def resume(self, state: KernelState) -> None:
        """Continue a kernel from a stored state (its table, model and back-off state)."""
        self.states_[state.key] = state


def _snapshot(state: KernelState) -> KernelState:
    """A copy of ``state`` sharing nothing mutable that :meth:`OnlineModeler.drain` clears."""
    from dataclasses import replace

    return replace(
        state,
        unsaved_judgements=list(state.unsaved_judgements),
        unsaved_exceptions=list(state.unsaved_exceptions),
        unsaved_counts=list(state.unsaved_counts),
    )


def table_experiment(state: KernelState) -> Experiment | None:
    """The kernel's statistics as an experiment the registered modelers fit.

    Each configuration becomes up to :data:`REFIT_REPETITIONS` values whose mean and sample
    variance equal the stored ones exactly; a configuration seen once stays one value. None
    when no configuration is stored.
    """
    if not state.table.rows:
        return None
    columns: dict[str, list[float]] = {name: [] for name in state.parameters}
    values: list[float] = []
    for key, (count, mean, m2) in state.table.rows.items():
        repetitions = int(min(count, REFIT_REPETITIONS))
        if repetitions >= 2:
            offsets = np.arange(repetitions) - (repetitions - 1) / 2
            offsets *= math.sqrt((repetitions - 1) / float((offsets**2).sum()))
            sd = math.sqrt(max(m2, 0.0) / (count - 1))
            group = (mean + sd * offsets).tolist()
        else:
            group = [mean]
        values.extend(group)
        for name, coordinate in zip(state.parameters, key, strict=True):
            columns[name].extend([coordinate] * len(group))
    return Experiment.from_columns(
        [state.kernel] * len(values),
        [state.metric] * len(values),
        columns,
        values,
        parameters=state.parameters,
    )
