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
  resets ``hc`` to 0. A miss that comes only from configurations the model was not fitted on
  (a new input, found by the table of seen configurations) keeps ``hc`` instead, and the
  delay drawn from it: the model extrapolated there, and the batch's values now join its
  data; such a miss says nothing about the kernel having changed. The values at fitted
  configurations of the same batch are judged alone to tell the two apart: when they miss
  too, ``hc`` is reset.
* A measured value outside the model's prediction interval, and more than ``min_deviation``
  (10 %) off the prediction, is a performance exception (kept with the measurement's index,
  parameters, value, prediction and interval). The ``b`` values of a batch are ``b`` checks:
  each is made at the level ``exception_level ** (1 / b)`` (Sidak's correction), so that a
  batch of a kernel that behaves as modeled raises none with probability ``exception_level``.
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
collects, any form not exactly the truth becomes significant. The count of values outside the
95 % interval is held against the share this kernel usually has outside it, at least 5 %
(:attr:`KernelState.usual_outside`): wall times have heavier tails than a Gaussian interval
assumes, and what signals a change is a share larger than the kernel's own history.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model
from perfcast.io.online_store import StoredKernel
from perfcast.model.gates import gate_models
from perfcast.model.registry import make_modeler
from perfcast.model.settings import check_bool, check_choice, check_int, check_open_interval

#: Most repetitions per configuration handed to the refit: enough to carry the mean and the
#: noise, few enough to keep a refit cheap however long the kernel has lived.
REFIT_REPETITIONS = 8

#: The largest value magnitude taken: the statistics keep sums of squares, which a larger
#: value's square would take beyond a double's range.
LARGEST_VALUE = 1e154

#: The hit tests: this module's (see the module notes) and the paper's, kept for comparison.
HIT_TESTS = ("robust", "paper")

#: Judgements and exceptions a kernel keeps in memory, the latest ones (memory stays bounded
#: however long the stream; the store keeps every one it was given).
HISTORY = 10000

#: Measurements of a configuration from which its own noise sets its prediction interval.
LOCAL_NOISE_COUNT = 20

#: Distance from a configuration's batch median, in scaled MADs, beyond which a value is
#: screened out of the statistics as an outlier (see :func:`screen`).
OUTLIER_MADS = 6.0

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
    skipped_before : int
        Measurements of the kernel its source skipped (back-off applied there) since the one
        it sent before.
    """

    kernel: str
    metric: str
    params: Mapping[str, float]
    value: float
    index: int = 0
    skipped_before: int = 0


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
    screened : int
        Values left out of the statistics as outliers (see :func:`screen`).
    unseen : int
        Values at configurations the model was not fitted on. A miss there that the values at
        fitted configurations do not confirm keeps ``hc`` (see the module notes).
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
    screened: int = 0
    unseen: int = 0

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
            "screened": self.screened,
            "unseen": self.unseen,
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


def screen(points: Sequence[tuple[float, ...]], values: Sequence[float]) -> list[bool]:
    """Which values of a batch go into the statistics: all but those farther than
    :data:`OUTLIER_MADS` scaled median absolute deviations from the median of their
    configuration in the batch (configurations with at least five values in it).

    Means and M2 are what the table can keep in bounded space, and a mean has no defence
    against the rare wall-time outlier of a preempted process (a thousand times the typical
    value); this screen is that defence. A Gaussian value is left out with probability 2e-9.
    Screened values are still judged (and may be exceptions).

    When more than half of a group's values are equal (a deterministic metric such as an
    instruction count), the MAD is 0; the spread is then 1.2533 times the mean absolute
    deviation from the median (the fallback of Iglewicz and Hoaglin's modified z-score), so
    that the one cold first execution of a run among identical counts is screened (with
    eight or more values in the group) while a kernel whose count takes two values in
    comparable shares keeps both.
    """
    groups: dict[tuple[float, ...], list[int]] = {}
    for i, key in enumerate(points):
        groups.setdefault(key, []).append(i)
    kept = [True] * len(values)
    for members in groups.values():
        if len(members) < 5:
            continue
        group = np.asarray([values[i] for i in members], dtype=float)
        median = float(np.median(group))
        deviations = np.abs(group - median)
        spread = 1.4826 * float(np.median(deviations)) or 1.2533 * float(deviations.mean())
        if spread > 0:
            for i, value in zip(members, group, strict=True):
                kept[i] = bool(abs(value - median) <= OUTLIER_MADS * spread)
    return kept


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
    hit_test: str = "robust",
    outside_rate: float = 1 - HIT_LEVEL,
) -> tuple[float | None, str]:
    """PARS of a batch and why it misses ('' for a hit); see the module notes.

    ``hit_test="paper"`` is the paper's rule instead, kept to measure what it costs: a miss
    when PARS leaves the two-sided 95 % band ``mean +- 1.96 sd`` of the earlier PARS values (once
    two exist) or the lack-of-fit p-value is below 0.05.

    ``outside_rate`` is the share of values outside the 95 % interval that counts as usual:
    at least 5 %, more for a kernel whose earlier batches had more (see
    :attr:`KernelState.usual_outside`); a batch misses when a binomial test at ``miss_alpha``
    finds more values outside than that share allows.

    ``pars_history`` is the running (count, mean, M2) of the kernel's earlier PARS values; a
    PARS below ``mean - t * sd`` (one-sided, the t quantile of ``miss_alpha`` with ``count - 1``
    degrees of freedom) and below ``mean -`` :data:`PARS_DROP` misses once three earlier values
    exist. The second bound matters for good models: their PARS sit just below 1 with a tiny
    spread, so that a drop from 0.998 to 0.997, which changes nothing, would leave the first.
    """
    from scipy import special, stats

    count, mean, m2 = pars_history
    lof_p, misfit = lof
    if hit_test == "paper":
        value = pars(measured, predicted, predictors)
        if lof_p is not None and lof_p < 0.05:
            return value, f"lack of fit (p = {lof_p:.3g})"
        if value is not None and count >= 2:
            band = 1.96 * math.sqrt(m2 / (count - 1))
            if abs(value - mean) > band:
                return value, f"PARS {value:.3g} outside {mean:.3g} +- {band:.3g}"
        return value, ""
    value = pars(measured, predicted, predictors) if configurations >= 2 else None
    outside = int(np.count_nonzero(~inside))
    rate = max(outside_rate, 1 - HIT_LEVEL)
    if outside and stats.binom.sf(outside - 1, len(measured), rate) < miss_alpha:
        usual = f" (this kernel's usual share {100 * rate:.3g}%)" if rate > 1 - HIT_LEVEL else ""
        return value, (
            f"{outside} of {len(measured)} values outside the 95% prediction interval{usual}"
        )
    if lof_p is not None and lof_p < miss_alpha and misfit > tolerance:
        return value, f"lack of fit (p = {lof_p:.3g}, {100 * misfit:.3g}% off)"
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
        Those of this modeler's life (a resumed kernel starts with those read from the store),
        the latest :data:`HISTORY` of them.
    exceptions : list of PerformanceException
        Likewise, the latest :data:`HISTORY`.
    batches : int
        Batches judged over the kernel's whole life (stored ones included).
    touched : bool
        Whether a measurement arrived since the modeler was made (not stored).
    hit_count, skip_left : int
        Back-off state.
    measured, skipped, updates : int
        Measurements taken and skipped, model refits.
    pars_count, pars_mean, pars_m2 : float
        Running statistics of PARS (Welford), the reference of the hit test.
    fitted_judged, fitted_outside : int
        Values judged at configurations the model was fitted on, and how many of them fell
        outside the 95 % prediction interval (see :attr:`usual_outside`).
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
    batches: int = 0
    touched: bool = False
    pars_count: int = 0
    pars_mean: float = 0.0
    pars_m2: float = 0.0
    fitted_judged: int = 0
    fitted_outside: int = 0
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

    @property
    def usual_outside(self) -> float:
        """The share of values at fitted configurations that fell outside the 95 % interval
        so far (0 before a batch was judged): the reference of the hit test's count.

        The interval at a fitted configuration comes from its mean and variance; wall times
        are not Gaussian (a preempted or migrated process, frequency changes), so a kernel
        can leave it far more often than 5 % while behaving exactly as it always did. What
        signals a change is leaving it more often than this kernel usually does, as the
        paper judges PARS against the kernel's earlier PARS.
        """
        return self.fitted_outside / self.fitted_judged if self.fitted_judged else 0.0

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
        Probability that a batch of a kernel behaving as its model predicts raises no
        performance exception: each of the batch's ``b`` values is checked against the
        prediction interval at ``exception_level ** (1 / b)`` (Sidak's correction for ``b``
        checks; uncorrected, a 99.99 % interval per value raised one false exception per
        10,000 measurements).
    max_hits : int
        Cap on the hit counter, so the longest skip is ``batch * 2**max_hits`` (64 batches by
        default): it bounds how long a kernel whose behaviour changes goes unmeasured, while a
        stable kernel still skips about 97 % (``benchmarks/RESULTS.md``, "Online modeling").
    clusters : iterable of iterable of str, optional
        Kernels that are statically similar; the first of each measured for all of them.
    functions : collection of str
        Kernels that are functions: back-off skips ``U(0, 2**hc)`` calls, not batches (their
        hit counter may grow ``log2(batch)`` beyond ``max_hits``).
    seed : int
        Seed of the back-off's random delays.
    source : str, optional
        The stream's name, for error messages.
    min_deviation : float
        Relative distance from the prediction within which a value is never an exception nor
        counts against a batch, whatever the interval: a configuration's values from one run
        often sit closer together than those of different runs (frequency, placement), so an
        interval learnt from thousands of them can be narrower than a run-to-run change that
        matters to no one.
    hit_test : {"robust", "paper"}
        How a batch is judged (:func:`judge_batch`); ``paper`` only to measure the paper's rule.
    cold_backoff : bool
        Back off from the first batch (with ``backoff``): a batch that no model can judge yet
        (an empty store, fewer configurations than the modeler needs) is followed by the delay
        of eq. 8 with ``hc = 0``, ``q = b * U(0, 1)`` (``U(0, 1)`` for a function), instead of
        none, so that a kernel's cold start measures about two thirds of its executions. What
        a model needs first is configurations, not many repetitions of one; a judged batch,
        hit or miss, is followed as without it.
    **settings
        Settings of ``modeler`` (checked by it).

    Attributes
    ----------
    states_ : dict of (kernel, metric) to KernelState
    batches_done : int
        Batches completed since the modeler was made (a store writes when it grows).
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
        max_hits: int = 6,
        clusters: Iterable[Iterable[str]] | None = None,
        functions: Collection[str] = (),
        seed: int = 0,
        source: str | None = None,
        hit_test: str = "robust",
        min_deviation: float = 0.1,
        cold_backoff: bool = False,
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
        check_bool("cold_backoff", cold_backoff)
        check_int("seed", seed, 0)  # numpy's generators take no negative seed
        if not (isinstance(min_deviation, float | int) and min_deviation >= 0):
            raise ValueError(f"min_deviation must be a number >= 0, got {min_deviation!r}")
        self.min_deviation = float(min_deviation)
        check_choice("hit_test", hit_test, HIT_TESTS)
        self.hit_test = hit_test
        self.modeler = modeler
        self.batch = batch
        self.backoff = backoff
        self.cold_backoff = cold_backoff
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
        self.batches_done = 0

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
            "hit_test": self.hit_test,
            "min_deviation": self.min_deviation,
            "cold_backoff": self.cold_backoff,
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
        base = state.borrowed_from if state.model is None else None
        if base is not None and self._model_of_base(base, metric) is None:
            return False
        return state.skip_left <= 0

    def _model_of_base(self, base: str, metric: str) -> Model | None:
        state = self.states_.get((base, metric))
        return state.model if state is not None else None

    # -- the modeling side ----------------------------------------------------------------

    def partial_fit(self, batch: Iterable[Measurement], *, taken: bool = False) -> OnlineModeler:
        """Take measurements in arrival order: each is measured or skipped (back-off and
        clusters), measured ones fill their kernel's batch, a full batch is judged and the
        kernel's model refitted; returns self.

        With ``taken`` the measurements come from a source that decided itself what to
        measure (an instrumented program reading the delays this modeler sets, see
        ``skip_left``): all are used, and their ``skipped_before`` counts as skipped.

        Raises
        ------
        InputError
            When a kernel's measurement names other parameters than its first one did
            (``reason`` ``online-parameters``) or a value is beyond :data:`LARGEST_VALUE`
            (``online-value``), naming the record by its 1-based position.
        """
        for measurement in batch:
            self._observe(measurement, taken)
        return self

    def add_skipped(self, kernel: str, metric: str, count: int) -> None:
        """Count ``count`` measurements a source skipped and reported without a value (at the
        end of its run); ignored for a kernel never measured."""
        state = self.states_.get((kernel, metric))
        if state is not None:
            state.skipped += count
            state.unsaved_counts[1] += count
            state.touched = True

    def check(self, measurements: Iterable[Measurement]) -> None:
        """Raise what :meth:`partial_fit` would raise on bad ``measurements``, changing
        nothing: a caller that checks a whole stream first stores nothing of a bad one."""
        expected = {key: set(state.parameters) for key, state in self.states_.items()}
        for measurement in measurements:
            self._check_value(measurement)
            names = set(measurement.params)
            known = expected.setdefault((measurement.kernel, measurement.metric), names)
            if names != known:
                raise self._parameter_error(measurement, tuple(sorted(known)))

    def _check_value(self, measurement: Measurement) -> None:
        if abs(float(measurement.value)) > LARGEST_VALUE:
            raise InputError(
                f"kernel '{measurement.kernel}' measured {float(measurement.value):g}; online "
                f"modeling takes values up to {LARGEST_VALUE:g} (it keeps sums of squares)",
                self.source,
                measurement.index + 1,
                reason="online-value",
                value=measurement.value,
            )

    def _parameter_error(self, measurement: Measurement, known: tuple[str, ...]) -> InputError:
        names = sorted(measurement.params)
        return InputError(
            f"kernel '{measurement.kernel}' was measured with parameters "
            f"{', '.join(known) or 'none'}, this measurement has {', '.join(names) or 'none'}",
            self.source,
            measurement.index + 1,
            reason="online-parameters",
            value=names,
        )

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
            raise self._parameter_error(measurement, state.parameters)
        return state

    def _observe(self, measurement: Measurement, taken: bool = False) -> None:
        self._check_value(measurement)
        measure = taken or self.should_measure(measurement.kernel, measurement.metric)
        state = self._state_for(measurement)
        state.touched = True
        state.skipped += measurement.skipped_before
        state.unsaved_counts[1] += measurement.skipped_before
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
        self.batches_done += 1
        points, values, indices = state.pending_points, state.pending_values, state.pending_indices
        state.pending_points, state.pending_values, state.pending_indices = [], [], []
        kept = screen(points, values)
        batch = batch_table(
            [p for p, keep in zip(points, kept, strict=True) if keep],
            [v for v, keep in zip(values, kept, strict=True) if keep],
        )
        model = self.current_model(state)
        judgement = self._judge(state, model, points, values, indices, batch)
        judgement = replace(judgement, screened=len(values) - int(sum(kept)))
        _append_bounded(state.judgements, judgement)
        _append_bounded(state.unsaved_judgements, judgement)
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
        state.batches += 1
        number = state.batches
        if model is None:
            skip = self._delay(state) if self.backoff and self.cold_backoff else 0
            state.skip_left = skip
            return BatchJudgement(number, len(values), None, None, 0, None, 0, skip)
        measured = np.asarray(values, dtype=float)
        where = np.asarray(points, dtype=float).reshape(len(points), -1)
        seen = state.table if state.borrowed_from is None else ConfigTable()
        predicted, low, high = interval(model, seen, points, where, HIT_LEVEL)
        level = self.exception_level ** (1.0 / len(values))  # Sidak: one level per batch
        _, exc_low, exc_high = interval(model, seen, points, where, level)
        close = np.abs(measured - predicted) <= self.min_deviation * np.abs(predicted)
        inside = close | ((measured >= low) & (measured <= high))
        for i in np.flatnonzero(~close & ((measured < exc_low) | (measured > exc_high))):
            exception = PerformanceException(
                indices[i],
                dict(zip(state.parameters, points[i], strict=True)),
                float(measured[i]),
                float(predicted[i]),
                (float(exc_low[i]), float(exc_high[i])),
            )
            _append_bounded(state.exceptions, exception)
            _append_bounded(state.unsaved_exceptions, exception)
        relative = model.uncertainty is not None and model.uncertainty.relative
        lof = lack_of_fit(seen.merged(batch), model, relative=relative)
        value, reason = self._verdict(state, model, measured, predicted, inside, batch, lof)
        known = self._fitted_table(state)
        unseen = np.array([key not in known.rows for key in points])
        held = bool(reason) and bool(unseen.any()) and self.hit_test == "robust"
        if held and unseen.all():
            reason = f"at configurations the model was not fitted on: {reason}"
        elif held:
            kept = ~unseen
            part = ConfigTable()
            part.rows = {key: list(row) for key, row in batch.rows.items() if key in known.rows}
            _, seen_reason = self._verdict(
                state,
                model,
                measured[kept],
                predicted[kept],
                inside[kept],
                part,
                lack_of_fit(seen.merged(part), model, relative=relative),
            )
            held = not seen_reason
            if held:
                reason = f"at configurations the model was not fitted on: {reason}"
        hit = not reason
        if value is not None and (hit or self.hit_test == "paper"):
            state.add_pars(value)
        state.fitted_judged += int(np.count_nonzero(~unseen))
        state.fitted_outside += int(np.count_nonzero(~unseen & ~inside))
        if hit:
            state.hit_count = min(state.hit_count + 1, self._hit_cap(state))
        elif not held:
            state.hit_count = 0
        backs_off = hit or (held and state.hit_count > 0)
        skip = self._delay(state) if backs_off and self.backoff else 0
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
            unseen=int(np.count_nonzero(unseen)),
        )

    def _verdict(
        self,
        state: KernelState,
        model: Model,
        measured: np.ndarray,
        predicted: np.ndarray,
        inside: np.ndarray,
        batch: ConfigTable,
        lof: tuple[float | None, float],
    ) -> tuple[float | None, str]:
        """:func:`judge_batch` with this modeler's settings and ``state``'s PARS history."""
        return judge_batch(
            measured,
            predicted,
            inside,
            len(model.terms),
            len(batch),
            lof,
            (state.pars_count, state.pars_mean, state.pars_m2),
            miss_alpha=self.miss_alpha,
            tolerance=self.tolerance,
            hit_test=self.hit_test,
            outside_rate=state.usual_outside,
        )

    def _fitted_table(self, state: KernelState) -> ConfigTable:
        """The configurations the model predicting ``state`` was fitted on: the kernel's own,
        or its cluster base's while it borrows that model."""
        if state.borrowed_from is None:
            return state.table
        base = self.states_.get((state.borrowed_from, state.metric))
        return base.table if base is not None else ConfigTable()

    def _hit_cap(self, state: KernelState) -> int:
        """``max_hits``; for a function ``log2(batch)`` more, so that its longest delay, in
        calls, equals a loop's, in measurements."""
        if state.kernel in self.functions:
            return self.max_hits + int(math.log2(self.batch))
        return self.max_hits

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
            state.model = gate_models(self._estimator.models_, experiment, state.metric)[0]
            state.updates += 1
            state.unsaved_counts[2] += 1

    # -- results --------------------------------------------------------------------------

    @property
    def models_(self) -> list[Model]:
        """The current model of every kernel that has one (borrowed ones under their name)."""
        models = []
        for state in self.states_.values():
            model = self.current_model(state)
            if model is not None:
                models.append(replace(model, kernel=state.kernel))
        return models

    def summaries(self, *, touched_only: bool = False) -> list[dict[str, Any]]:
        """:func:`summary_of` every kernel (only those measured or skipped since this modeler
        was made, with ``touched_only``), in name order."""
        result = []
        for key in sorted(self.states_):
            state = self.states_[key]
            if touched_only and not state.touched:
                continue
            result.append(summary_of(state, self.current_model(state)))
        return result

    def drain(self) -> list[StoredKernel]:
        """What each kernel changed since the last call (see :func:`stored_of`); the unsaved
        parts are then cleared. A store writes this after each batch."""
        changed = []
        for state in self.states_.values():
            if state.unsaved.rows or state.unsaved_judgements or any(state.unsaved_counts):
                changed.append(stored_of(state))
                state.unsaved = ConfigTable()
                state.unsaved_judgements = []
                state.unsaved_exceptions = []
                state.unsaved_counts = [0, 0, 0]
        return changed

    def resume(self, state: KernelState) -> None:
        """Continue a kernel from a stored state (its table, model and back-off state)."""
        self.states_[state.key] = state


def _append_bounded(history: list[Any], item: Any) -> None:
    """Append, dropping the oldest entries beyond :data:`HISTORY` (a store keeps them all when
    it drains often enough)."""
    history.append(item)
    if len(history) > HISTORY:
        del history[: len(history) - HISTORY]


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


def stored_of(state: KernelState) -> StoredKernel:
    """What a store adds for ``state`` after :meth:`OnlineModeler.drain`: its unsaved
    statistics, counts, judgements and exceptions, with its current model and back-off state."""
    return StoredKernel(
        state.kernel,
        state.metric,
        state.parameters,
        None if state.model is None else state.model.to_dict(),
        {
            "hit_count": state.hit_count,
            "skip_left": state.skip_left,
            "pars_count": state.pars_count,
            "pars_mean": state.pars_mean,
            "pars_m2": state.pars_m2,
            "borrowed_from": state.borrowed_from,
            "batches": state.batches,
            "fitted_judged": state.fitted_judged,
            "fitted_outside": state.fitted_outside,
        },
        [(key, row[0], row[1], row[2]) for key, row in state.unsaved.rows.items()],
        measured=state.unsaved_counts[0],
        skipped=state.unsaved_counts[1],
        updates=state.unsaved_counts[2],
        judgements=[j.to_dict() for j in state.unsaved_judgements],
        exceptions=[e.to_dict() for e in state.unsaved_exceptions],
    )


def state_of(item: StoredKernel, source: str | None = None) -> KernelState:
    """A kernel's state rebuilt from a store, ready to go on (its history of judgements and
    exceptions is as read; the PARS reference and back-off state carry over).

    Raises
    ------
    InputError
        When the stored model is not valid model JSON or the rest of the stored state is
        malformed (reason ``bad-store``).
    """
    try:
        model = None if item.model is None else Model.from_dict(item.model, source)
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(
            f"the stored model of kernel '{item.kernel}' is not valid ({error})",
            source,
            reason="bad-store",
        ) from None
    try:
        return _state_of(item, model)
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        raise InputError(
            f"the stored state of kernel '{item.kernel}' is not valid "
            f"({type(error).__name__}: {error})",
            source,
            reason="bad-store",
        ) from None


def _state_of(item: StoredKernel, model: Model | None) -> KernelState:
    table = ConfigTable()
    for key, count, mean, m2 in item.configurations:
        table.add(tuple(float(v) for v in key), count, mean, m2)
    saved = item.state
    state = KernelState(
        item.kernel,
        item.metric,
        tuple(item.parameters),
        table=table,
        model=model,
        borrowed_from=saved.get("borrowed_from"),
        hit_count=int(saved.get("hit_count", 0)),
        skip_left=int(saved.get("skip_left", 0)),
        measured=item.measured,
        skipped=item.skipped,
        updates=item.updates,
        pars_count=int(saved.get("pars_count", 0)),
        pars_mean=float(saved.get("pars_mean", 0.0)),
        pars_m2=float(saved.get("pars_m2", 0.0)),
        batches=int(saved.get("batches", 0)),
        fitted_judged=int(saved.get("fitted_judged", 0)),
        fitted_outside=int(saved.get("fitted_outside", 0)),
    )
    state.judgements = [BatchJudgement(**j) for j in item.judgements]
    state.exceptions = [
        PerformanceException(
            e["index"], e["params"], e["value"], e["predicted"], tuple(e["interval"])
        )
        for e in item.exceptions
    ]
    return state


def summary_of(state: KernelState, model: Model | None) -> dict[str, Any]:
    """The plain summary of one kernel: ``kernel``, ``metric``, ``model`` (model JSON or None),
    ``pars`` and ``lof_p`` of the latest judged batch, ``updates``, ``measured``, ``skipped``
    and ``exceptions`` (``index``, ``params``, ``value``, ``predicted``, ``interval``). The
    model's ``warnings`` carry those of :func:`online_warnings` after the quality gates'."""
    judged = next((j for j in reversed(state.judgements) if j.hit is not None), None)
    data = None
    if model is not None:
        data = replace(model, kernel=state.kernel).to_dict()
        data["warnings"] = data.get("warnings", []) + online_warnings(state)
    return {
        "kernel": state.kernel,
        "metric": state.metric,
        "model": data,
        "pars": None if judged is None else judged.pars,
        "lof_p": None if judged is None else judged.lof_p,
        "updates": state.updates,
        "measured": state.measured,
        "skipped": state.skipped,
        "exceptions": [e.to_dict() for e in state.exceptions],
    }


def online_warnings(state: KernelState) -> list[dict[str, str]]:
    """Why the kernel's model should not be trusted, as ``{"code", "message"}`` objects: the
    latest judged batch missed (``online-miss``), exceptions were raised
    (``performance-exceptions``), the model is a cluster member's (``borrowed-model``)."""
    warnings = []
    judged = next((j for j in reversed(state.judgements) if j.hit is not None), None)
    if judged is not None and not judged.hit:
        warnings.append(
            {
                "code": "online-miss",
                "message": f"the latest batch ({judged.number}) missed: {judged.reason}",
            }
        )
    if state.exceptions:
        warnings.append(
            {
                "code": "performance-exceptions",
                "message": f"{len(state.exceptions)} measurement(s) left the "
                "model's prediction interval",
            }
        )
    if state.model is None and state.borrowed_from is not None:
        warnings.append(
            {
                "code": "borrowed-model",
                "message": f"the model is that of '{state.borrowed_from}', a statically "
                "similar kernel; no batch of this kernel has contradicted it",
            }
        )
    return warnings
