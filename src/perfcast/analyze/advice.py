"""Measurement-point advice: which configurations to measure next so that the models' prediction
at a target configuration narrows most per unit of measurement cost.

The models' own uncertainty drives the choice. A fitted model carries the covariance ``S`` of
its coefficients and the noise of one measurement; the variance of its fitted curve at the
target ``t`` is ``t' S t``. Measuring ``r`` repetitions
at a candidate ``d`` adds one observation of variance ``noise(d) / r`` to the fit, which by the
Sherman-Morrison formula lowers that variance by ``(t' S d)^2 / (noise(d) / r + d' S d)``
(exact for the linear least-squares fit of the model's terms). Beyond the largest measured value
of a parameter the interval also holds the backtested error of the model search
(:mod:`perfcast.model.backtest`), which grows with ``log(target / largest)^2``: a candidate
beyond the largest value shrinks it by bringing the data closer.

One score rates a candidate: the reduction of the total's variance at the target it promises,
fit part and form part together. The form part (:class:`_FormPart`) is the rival forms'
disagreement and the extrapolation error at the target, scaled down by how much of a Gaussian
process's variance at the target the measured points have already closed
(:class:`~perfcast.analyze.coverage.Coverage`, length scales fitted to the measured totals by
marginal likelihood); a candidate near the target and unlike the measured points closes much of
it. The advice is greedy over that score, every covariance and the process updated as if the
point had been measured (so that a batch holds no redundant points), until the budget is spent,
the interval is as narrow as asked, or no candidate promises any reduction. Two greedy plans are
made, one by reduction per core-hour (or per run, when the models predict no time) and one by
reduction alone within the budget, and the one that leaves less variance at the target is kept
(the cost-effective budgeted selection of Leskovec et al., KDD 2007): cost-weighted greed alone
buys cheap points near the measurements and rarely the expensive far one that settles the form.

Two things come first, because the covariance cannot show them: a parameter measured at fewer
than :data:`~perfcast.model.gates.MIN_DISTINCT_VALUES` distinct values (``few-points``: the term
search could not tell its candidate terms apart) gets new values first, cheapest first. A
segmented model learns only from candidates on the target's side of its breakpoints.

What measuring cannot remove is reported apart: the noise of a new measurement at the target and
the models' leave-one-out error, which :meth:`~perfcast.core.function.Model.predict_interval`
keeps as a floor of the interval.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from perfcast.analyze.coverage import Coverage
from perfcast.analyze.exclusive import is_inclusive_metric, nearest_kernel_parents
from perfcast.analyze.points import doubling_grid, parameter_roles
from perfcast.analyze.rivals import rival_models
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model, ModelWarning
from perfcast.core.points import plain_value
from perfcast.measure.ranges import RangeError, expand_range
from perfcast.model.fitting.assembly import MIN_VALUES_PER_PARAMETER
from perfcast.model.gates import MIN_DISTINCT_VALUES

#: Largest prediction at the target whose square (a variance) the advice can still compute.
LARGEST_PREDICTION = 1e100
#: Most candidate points considered (the product of the values given for every parameter).
MAX_CANDIDATES = 100_000
#: Budget when none is given: this many points at the usual number of repetitions.
DEFAULT_POINTS = 5
#: Seconds per unit of a time metric, by unit name.
TIME_UNITS = {"s": 1.0, "sec": 1.0, "seconds": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
#: Roles of the parameters whose product is the cores a run occupies.
CORE_ROLES = ("processes", "threads")
RUNS, CORE_HOURS = "runs", "core-hours"
#: How :func:`advise` prices a candidate against a budget in core-hours: at the models'
#: predicted time, at the upper end of its prediction interval (so that the suggestions stay
#: within the budget in truth with about the intervals' probability), or at the upper end for
#: the first suggestion only (the one a measure-advise loop runs now; the rest are re-planned
#: after it with the budget left in truth), or, for the first suggestion, the upper end of one
#: run plus the predicted time of its other runs (a loop that runs it once first and prices the
#: other runs by what that run took, see :func:`next_run_core_hours`).
PRICES = ("prediction", "upper", "upper-first", "probe-first")
_BUDGET = re.compile(
    r"^\s*(?P<amount>[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*"
    r"(?P<unit>runs?|core-hours?|core_hours?|ch|h)?\s*$"
)


@dataclass(frozen=True)
class Budget:
    """How much measuring the advice may spend.

    Attributes
    ----------
    amount : float
    unit : {"runs", "core-hours"}
        Runs are program runs (one per repetition of a point); core-hours are each run's
        predicted time times the cores it occupies.
    """

    amount: float
    unit: str

    def text(self) -> str:
        """``20 runs`` or ``1.5 core-hours``."""
        return f"{self.amount:g} {self.unit}"


def parse_budget(text: str) -> Budget:
    """A budget from text: ``20`` or ``20runs`` (runs), ``1.5h``, ``1.5ch`` or
    ``1.5core-hours`` (core-hours).

    Raises
    ------
    InputError
        For anything else, or an amount that is not positive (``reason`` ``bad-budget``).
    """
    match = _BUDGET.match(text)
    amount = float(match["amount"]) if match else 0.0
    if match is None or not amount > 0 or not math.isfinite(amount):
        raise InputError(
            f"'{text}' is not a positive number of runs (20, 20runs) or core-hours "
            "(1.5h, 1.5core-hours)",
            source="budget",
            reason="bad-budget",
            value=text,
        )
    unit = match["unit"] or RUNS
    return Budget(amount, RUNS if unit.startswith("run") else CORE_HOURS)


def parse_candidates(text: str, parameters: Sequence[str]) -> dict[str, list[float]]:
    """Candidate values per parameter from text such as ``p=2..4096*2,n=1e6,2e6``.

    Each ``NAME=`` starts a parameter; its values are a range in the campaign grammar
    (:mod:`perfcast.measure.ranges`: ``START..STOP``, ``START..STOP+STEP``,
    ``START..STOP*FACTOR``) or numbers separated by commas.

    Raises
    ------
    InputError
        Naming the parameter and value that is wrong (``reason`` ``bad-candidates``).
    """
    found: dict[str, list[float]] = {}
    name = None
    for word in (w.strip() for w in text.split(",")):
        if "=" in word:
            name, _, word = (part.strip() for part in word.partition("="))
            if name not in parameters:
                raise _bad_candidates(
                    text, f"'{name}' is not a parameter ({', '.join(parameters)})"
                )
            if name in found:
                raise _bad_candidates(text, f"'{name}' is given twice")
            found[name] = []
        if name is None:
            raise _bad_candidates(text, f"'{word}' has no NAME= before it")
        try:
            values = expand_range(word) if ".." in word else [float(word)]
        except (RangeError, ValueError) as error:
            raise _bad_candidates(
                text, f"{name}: {error}" if ".." in word else f"{name}: '{word}' is not a number"
            ) from None
        if not all(math.isfinite(v) and v > 0 for v in values):
            raise _bad_candidates(text, f"{name}: values must be positive and finite")
        found[name].extend(float(v) for v in values)
    return found


def _bad_candidates(text: str, why: str) -> InputError:
    return InputError(f"'{text}': {why}", source="candidates", reason="bad-candidates", value=text)


@dataclass(frozen=True)
class Suggestion:
    """One configuration to measure next.

    Attributes
    ----------
    point : dict
        A value for every parameter.
    runs : int
        Program runs (repetitions) to take there.
    core_hours : float or None
        Their predicted cost; None when the models predict no time.
    width_after : float
        Relative half-width of the target's interval once this and every earlier suggestion is
        measured (as the models expect it).
    reasons : tuple of str
        Why this point, in words.
    core_hours_interval : tuple of float, or None
        Lower and upper end of their cost at the advice's interval level (from the interval of
        the models' predicted time; the upper end infinite where the models give no bound);
        None when the models predict no time.
    """

    point: dict[str, float]
    runs: int
    core_hours: float | None
    width_after: float
    reasons: tuple[str, ...]
    core_hours_interval: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON."""
        return {
            "point": {k: plain_value(v) for k, v in self.point.items()},
            "runs": self.runs,
            "core_hours": self.core_hours,
            "width_after": self.width_after,
            "reasons": list(self.reasons),
            "core_hours_interval": _plain_interval(self.core_hours_interval),
        }


def _plain_interval(interval: tuple[float, float] | None) -> list[float | None] | None:
    """An interval for JSON: an infinite or undefined end becomes None (no bound)."""
    if interval is None:
        return None
    return [float(v) if math.isfinite(v) else None for v in interval]


@dataclass(frozen=True)
class Advice:
    """The measurements :func:`advise` suggests, in the order to take them.

    Attributes
    ----------
    metric : str
    target : dict
        The configuration whose prediction should narrow.
    level : float
        Probability of the intervals.
    prediction : float
        The models' total at the target (all kernels).
    width_before, width_after : float
        Relative half-width of the total's interval at the target now and after every
        suggestion is measured.
    floor : float
        The relative half-width no measurement removes: new-measurement noise and the models'
        leave-one-out error at the target.
    repetitions : int
        Runs per suggested point.
    budget : Budget
    runs : int
        Runs the suggestions take.
    core_hours : float or None
        Their predicted cost; None when the models predict no time.
    suggestions : list of Suggestion
    warnings : tuple of ModelWarning
        What limits the advice (kernels without uncertainty, a goal out of reach, a cost that
        may exceed the budget, ...).
    core_hours_interval : tuple of float, or None
        Lower and upper end of the suggestions' cost together (the sums of theirs: the models'
        errors at nearby points go the same way); None when the models predict no time.
    price : str
        How candidates were priced against the budget (one of :data:`PRICES`).
    """

    metric: str
    target: dict[str, float]
    level: float
    prediction: float
    width_before: float
    width_after: float
    floor: float
    repetitions: int
    budget: Budget
    runs: int
    core_hours: float | None
    suggestions: list[Suggestion] = field(default_factory=list)
    warnings: tuple[ModelWarning, ...] = ()
    core_hours_interval: tuple[float, float] | None = None
    price: str = "prediction"

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON (``warnings``: a list of ``{"code", "message"}``)."""
        return {
            "metric": self.metric,
            "target": {k: plain_value(v) for k, v in self.target.items()},
            "level": self.level,
            "prediction": self.prediction,
            "width_before": self.width_before,
            "width_after": self.width_after,
            "floor": self.floor,
            "repetitions": self.repetitions,
            "budget": {"amount": self.budget.amount, "unit": self.budget.unit},
            "runs": self.runs,
            "core_hours": self.core_hours,
            "suggestions": [s.to_dict() for s in self.suggestions],
            "warnings": [w.to_dict() for w in self.warnings],
            "core_hours_interval": _plain_interval(self.core_hours_interval),
            "price": self.price,
        }


@dataclass
class _Kernel:
    """What one kernel's model contributes: its covariance, updated as points are added."""

    model: Model  # the piece that predicts at the target
    covariance: np.ndarray
    target_design: np.ndarray
    irreducible: float  # noise of a new measurement and leave-one-out floor at the target
    floor: float
    candidate_design: np.ndarray
    candidate_grid: np.ndarray
    candidate_noise: np.ndarray  # noise variance of one measurement at each candidate
    informative: np.ndarray  # candidates on the target's side of the model's breakpoints
    # The backtested extrapolation error: per parameter column, the largest value measured
    # (updated as candidates are added) and the rate of the log error per squared log distance.
    target: np.ndarray  # the target's parameter values
    target_square: float  # the prediction at the target, squared
    largest: dict[int, float] = field(default_factory=dict)
    rates: dict[int, float] = field(default_factory=dict)
    # Rival forms (:mod:`perfcast.analyze.rivals`): their squared differences from the model at
    # the target, how well each candidate tells each apart (squared difference over the noise
    # variance of one measurement) and their plausibility, updated as candidates are added.
    rival_target: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rival_power: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    rival_weights: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def ambiguity(self, weights: np.ndarray | None = None) -> np.ndarray | float:
        """The variance at the target from the rival forms: their squared differences averaged
        with the model (weight 1) by plausibility; ``weights`` of shape (rivals, candidates)
        give one figure per candidate."""
        w = self.rival_weights if weights is None else weights
        if not len(self.rival_target):
            return 0.0 if weights is None else np.zeros(w.shape[1:])
        target = self.rival_target if w.ndim == 1 else self.rival_target[:, None]
        result: np.ndarray | float = np.sum(w * target, axis=0) / (1 + np.sum(w, axis=0))
        return float(result) if weights is None else result

    def ambiguity_gains(self, repetitions: int) -> np.ndarray:
        """Reduction of :meth:`ambiguity` by measuring each candidate, if the model is right:
        a rival whose difference there stands out of the noise loses plausibility."""
        if not len(self.rival_target):
            return np.zeros(self.candidate_design.shape[0])
        after = self.rival_weights[:, None] * np.exp(-repetitions * self.rival_power / 2)
        gains = self.ambiguity() - self.ambiguity(after)
        return np.where(self.informative, np.maximum(gains, 0.0), 0.0)

    def fit_variance(self) -> float:
        t = self.target_design
        return float(max(t @ self.covariance @ t, 0.0))

    def extrapolation_variance(self, largest: Mapping[int, float]) -> float:
        """What the backtests add at the target with the largest measured values ``largest``
        (as :meth:`~perfcast.core.function.Model.predict_interval` does)."""
        return float(self._extrapolation_variances({c: np.array(v) for c, v in largest.items()}))

    def _extrapolation_variances(self, largest: Mapping[int, np.ndarray]) -> np.ndarray:
        """:meth:`extrapolation_variance` for arrays of largest values at once."""
        total = np.zeros(np.broadcast_shapes(*(v.shape for v in largest.values())))
        for column, rate in self.rates.items():
            values = largest[column]
            with np.errstate(divide="ignore", invalid="ignore"):
                distance = np.log(self.target[column] / values)
            total += rate * np.where((values > 0) & (distance > 0), distance, 0.0) ** 2
        return total * self.target_square

    def variance(self) -> float:
        return max(self.fit_variance() + self.irreducible, self.floor) + (
            self.extrapolation_variance(self.largest)
        )

    def extrapolation_gains(self, grid: np.ndarray) -> np.ndarray:
        """Reduction of the extrapolation variance by measuring each candidate: a value beyond
        the largest measured one brings the target closer to the data."""
        if not self.rates:
            return np.zeros(len(grid))
        now = self.extrapolation_variance(self.largest)
        moved = {c: np.maximum(v, grid[:, c]) for c, v in self.largest.items()}
        return np.where(self.informative, now - self._extrapolation_variances(moved), 0.0)

    def gains(self, repetitions: int) -> np.ndarray:
        """Reduction of the fit variance at the target by measuring each candidate."""
        shared = self.candidate_design @ self.covariance
        along = shared @ self.target_design
        own = np.einsum("ij,ij->i", shared, self.candidate_design)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            gain = along**2 / (self.candidate_noise / repetitions + own)
        return np.where(self.informative & np.isfinite(gain), gain, 0.0)

    def add(self, candidate: int, repetitions: int) -> None:
        """Update the covariance as if ``candidate`` had been measured."""
        d = self.candidate_design[candidate]
        shared = self.covariance @ d
        denominator = self.candidate_noise[candidate] / repetitions + d @ shared
        if self.informative[candidate] and np.isfinite(denominator) and denominator > 0:
            self.covariance = self.covariance - np.outer(shared, shared) / denominator
        if self.informative[candidate] and len(self.rival_target):
            power = self.rival_power[:, candidate]
            self.rival_weights = self.rival_weights * np.exp(-repetitions * power / 2)
        if self.informative[candidate]:
            for column, value in self.largest.items():
                self.largest[column] = max(value, float(self.candidate_grid[candidate, column]))


def advise(
    experiment: Experiment,
    models: Sequence[Model],
    target: Mapping[str, float],
    candidates: Mapping[str, Sequence[float]] | None = None,
    budget: Budget | None = None,
    repetitions: int | None = None,
    level: float = 0.95,
    goal: float | None = None,
    price: str = "prediction",
) -> Advice:
    """The measurements that narrow the models' prediction at ``target`` most per cost.

    Parameters
    ----------
    experiment : Experiment
        The measurements the models were fitted to (one metric).
    models : sequence of Model
        One per kernel, of that metric.
    target : mapping of str to float
        A value for every parameter.
    candidates : mapping of str to sequence of float, optional
        Values to combine per parameter; a parameter left out gets its measured values and,
        up to its target value, doublings of its largest one (and the geometric midpoints of
        its measured values when it has too few of them).
    budget : Budget, optional
        Default: :data:`DEFAULT_POINTS` points.
    repetitions : int, optional
        Runs per point; default the most common number of repetitions measured.
    level : float
        Probability of the intervals.
    goal : float, optional
        Stop once the relative half-width of the interval at the target is at most this.
    price : {"prediction", "upper", "upper-first"}
        What a candidate costs against a budget in core-hours: its predicted time, the upper
        end of the interval of its predicted time at ``level`` (cautious: the suggestions then
        stay within the budget in truth unless a model is off by more than its interval), or
        the upper end for the first suggestion and the predicted time for the rest (for a loop
        that runs the first, measures what it took and asks again with the budget left), or
        ``"probe-first"``: for the first suggestion the upper end of one of its runs plus the
        predicted time of the others (for a loop that runs it once, prices its other runs by
        what that run took, :func:`next_run_core_hours`, and takes only those that fit), the
        predicted time for the rest.
        The suggestions' ``core_hours`` are the predicted cost either way, with its interval
        beside it; when the upper end of the plan's cost exceeds the budget, a
        ``budget-may-be-exceeded`` warning says so.

    Returns
    -------
    Advice

    Raises
    ------
    InputError
        When a budget in core-hours is asked of models that predict no time, or the candidate
        points are too many.
    """
    metric = models[0].metric if models else experiment.default_metric()
    counted = _counted_kernels(experiment, metric)
    models = [m for m in models if counted is None or m.kernel in counted]
    names = experiment.parameter_names
    repetitions = repetitions or _usual_repetitions(experiment, metric)
    budget = budget or Budget(DEFAULT_POINTS * repetitions, RUNS)
    seconds = _seconds_per_unit(experiment, metric)
    if budget.unit == CORE_HOURS and seconds is None:
        raise InputError(
            f"a budget in core-hours needs models of time; '{metric}' has no time unit "
            "(give the budget in runs)",
            reason="bad-budget",
            value=budget.text(),
        )
    measured = np.unique(_measured_points(experiment, metric), axis=0)
    grid = _candidate_grid(measured, names, target, candidates)
    point = np.array([[target[n] for n in names]])
    _check_target_values(models, point, target)
    z = float(special.ndtri(0.5 + level / 2))
    kernels, warnings = _kernels(models, point, grid, names)
    _add_rivals(kernels, experiment, metric, point, grid, repetitions)
    totals = np.sum([m.evaluate(grid) for m in models], axis=0) if models else np.zeros(len(grid))
    prediction = float(sum(float(m.evaluate(point)[0]) for m in models))
    cores = _cores(experiment, names, grid)
    with np.errstate(over="ignore"):  # a cost beyond the doubles is inf: never affordable
        core_hours = (
            None
            if seconds is None
            else np.maximum(totals, 0.0) * seconds * cores * repetitions / 3600
        )
    bounds = None
    if core_hours is not None and seconds is not None:
        with np.errstate(over="ignore"):  # as the cost: beyond the doubles is inf
            core_seconds = seconds * cores * repetitions
        bounds = _core_hour_bounds(models, grid, level, core_seconds, core_hours)
    cost = first_cost = None
    if budget.unit == CORE_HOURS and core_hours is not None and bounds is not None:
        cost = bounds[1] if price == "upper" else core_hours
        first_cost = bounds[1] if price in ("upper", "upper-first") else core_hours
        if price == "probe-first":
            first_cost = (bounds[1] + core_hours * (repetitions - 1)) / repetitions

    # No model holds a fit uncertainty: the interval is unknown, not of width 0.
    unknown = bool(models) and not kernels

    def width(state: Sequence[_Kernel]) -> float:
        total = sum(k.variance() for k in state)
        return z * math.sqrt(total) / abs(prediction) if prediction and not unknown else math.inf

    before = width(kernels)
    floor_variance = sum(max(k.irreducible, k.floor) for k in kernels)
    floor = (
        z * math.sqrt(floor_variance) / abs(prediction) if prediction and not unknown else math.inf
    )
    coverage = Coverage(measured, grid, _measured_totals(experiment, metric, measured))
    step_cost = cost if cost is not None else np.full(len(grid), float(repetitions))
    context = _PlanContext(
        grid,
        names,
        measured,
        target,
        step_cost,
        first_cost if first_cost is not None else step_cost,
        core_hours,
        bounds,
        budget.amount,
        repetitions,
        goal,
    )
    # Budgeted greedy selection (Leskovec et al., "Cost-effective outbreak detection in
    # networks", KDD 2007): the plan by gain per cost and the plan by gain alone, keeping the one
    # that leaves less variance at the target (the cheaper one when both reach the goal).
    plans = [
        _plan(_copy_kernels(kernels), copy.deepcopy(coverage), point[0], context, width, per_cost)
        for per_cost in (True, False)
    ]
    best = min(plans, key=lambda plan: (plan.remaining_key(goal), plan.spent))
    kernels[:] = best.kernels
    suggestions = best.suggestions
    after = width(kernels)
    if goal is not None and after > goal and unknown:
        warnings.append(
            ModelWarning(
                "goal-not-reached",
                f"without fit uncertainty the interval at the target is unknown: the goal "
                f"±{goal:.1%} cannot be checked",
            )
        )
    elif goal is not None and after > goal:
        warnings.append(
            ModelWarning(
                "goal-not-reached",
                f"the budget or the candidates narrow the interval at the target only to "
                f"±{after:.1%}, not ±{goal:.1%}"
                + (f"; measuring cannot go below ±{floor:.1%} there" if floor > goal else ""),
            )
        )
    warnings += _idle_warnings(suggestions, before, floor, budget, context)
    plan_interval = None
    if core_hours is not None:
        plan_interval = (
            float(sum(s.core_hours_interval[0] for s in suggestions if s.core_hours_interval)),
            float(sum(s.core_hours_interval[1] for s in suggestions if s.core_hours_interval)),
        )
    if plan_interval is not None and budget.unit == CORE_HOURS and suggestions:
        upper = plan_interval[1]
        if not upper <= budget.amount * (1 + 1e-9):
            warnings.append(
                ModelWarning(
                    "budget-may-be-exceeded",
                    f"the suggestions may take up to {upper:.3g} core-hours at the "
                    f"{level:.0%} level (the models predict their time "
                    f"{'no better' if not math.isfinite(upper) else 'only so well'}), beyond "
                    f"the budget of {budget.text()}: measure them in order and stop before one "
                    "whose upper cost exceeds what is left, or use --price upper",
                )
            )
    return Advice(
        metric,
        dict(target),
        level,
        prediction,
        before,
        after,
        floor,
        repetitions,
        budget,
        len(suggestions) * repetitions,
        None if core_hours is None else float(sum(s.core_hours or 0.0 for s in suggestions)),
        suggestions,
        tuple(warnings),
        plan_interval,
        price,
    )


def _idle_warnings(
    suggestions: Sequence[Suggestion],
    before: float,
    floor: float,
    budget: Budget,
    context: _PlanContext,
) -> list[ModelWarning]:
    """Warnings for advice that buys nothing: suggestions after which the expected interval at
    the target is no narrower than before them (``no-narrowing``), and a budget below the
    price of any single point (``budget-too-small``)."""
    if not suggestions:
        cheapest = float(np.min(context.first_cost)) if len(context.first_cost) else math.inf
        if cheapest > budget.amount * (1 + 1e-9):
            price = (
                f"{cheapest:.3g} runs, its repetitions"
                if budget.unit == RUNS
                else f"{cheapest:.3g} core-hours for its {context.repetitions} run(s)"
            )
            return [
                ModelWarning(
                    "budget-too-small",
                    f"the budget of {budget.text()} is less than the cheapest candidate point "
                    f"takes ({price}): no point can be measured; give a larger budget or "
                    "fewer repetitions",
                )
            ]
        return []
    if not math.isfinite(before):  # an unknown interval: the no-interval warning says so
        return []
    widths = [before] + [s.width_after for s in suggestions]
    narrowing = [i for i in range(1, len(widths)) if widths[i] < widths[i - 1] * (1 - _NARROWER_BY)]
    useful = max(narrowing, default=0)
    if useful == len(suggestions):
        return []
    at_floor = (
        f" (±{widths[-1]:.1%}, what measuring cannot go below there)"
        if widths[-1] <= floor * (1 + _NARROWER_BY)
        else f" (±{widths[-1]:.1%})"
    )
    if useful == 0:
        message = (
            f"none of the {len(suggestions)} suggested points narrows the expected interval at "
            f"the target{at_floor}: by the models' own account measuring them buys nothing"
        )
    else:
        message = (
            f"only the first {useful} of the {len(suggestions)} suggested points narrow the "
            f"expected interval at the target; the others leave it where it is{at_floor}"
        )
    return [ModelWarning("no-narrowing", message)]


#: A suggestion narrows the interval when it makes it narrower by more than this fraction.
_NARROWER_BY = 1e-6


@dataclass(frozen=True)
class _PlanContext:
    """What every plan of :func:`advise` shares: the candidates and their cost against the
    budget (``first_cost`` for the first suggestion), their predicted core-hours and its
    interval, the measured points, the target, the budget, the repetitions per point and the
    goal."""

    grid: np.ndarray
    names: Sequence[str]
    measured: np.ndarray
    target: Mapping[str, float]
    cost: np.ndarray
    first_cost: np.ndarray
    core_hours: np.ndarray | None
    core_hour_bounds: tuple[np.ndarray, np.ndarray] | None
    budget: float
    repetitions: int
    goal: float | None


@dataclass
class _Plan:
    """The suggestions of one greedy plan, the kernels as they expect to be after them, the
    variance they leave at the target (form part included) and what they cost."""

    suggestions: list[Suggestion]
    kernels: list[_Kernel]
    remaining: float
    spent: float
    reached: bool

    def remaining_key(self, goal: float | None) -> float:
        """What to minimise among plans: the remaining variance, 0 when the goal is reached."""
        return 0.0 if goal is not None and self.reached else self.remaining


def _copy_kernels(kernels: Sequence[_Kernel]) -> list[_Kernel]:
    """Kernels whose updates leave ``kernels`` as they are (the models are shared)."""
    return copy.deepcopy(list(kernels), memo={id(k.model): k.model for k in kernels})


def _plan(
    kernels: list[_Kernel],
    coverage: Coverage,
    target_point: np.ndarray,
    context: _PlanContext,
    width: Callable[[Sequence[_Kernel]], float],
    per_cost: bool,
) -> _Plan:
    """Greedy suggestions within the budget: each time the candidate with the largest reduction
    of the total variance at the target (fit and form parts), per cost when ``per_cost``;
    ``kernels`` and ``coverage`` are updated as if each had been measured."""
    grid, names, repetitions = context.grid, context.names, context.repetitions
    form = _FormPart(kernels, coverage, target_point)

    def remaining() -> float:
        fit = sum(max(k.fit_variance() + k.irreducible, k.floor) for k in kernels)
        return float(fit + form.variance())

    distinct = {n: set(context.measured[:, j]) for j, n in enumerate(names)}
    available = np.ones(len(grid), dtype=bool)
    suggestions: list[Suggestion] = []
    spent = 0.0
    while context.goal is None or width(kernels) > context.goal:
        fit_gains = np.sum([k.gains(repetitions) for k in kernels], axis=0) + np.zeros(len(grid))
        form_gains = form.gains(grid, repetitions)
        gains = fit_gains + form_gains
        cost = context.cost if suggestions else context.first_cost
        affordable = available & (spent + cost <= context.budget * (1 + 1e-9))
        few = [n for n in names if len(distinct[n]) < MIN_DISTINCT_VALUES]
        chosen, reasons = _next(grid, names, gains, cost, affordable, few, distinct, per_cost)
        if chosen is None:
            break
        telling_apart = sum(float(k.ambiguity_gains(repetitions)[chosen]) for k in kernels)
        if reasons[0].startswith("narrows") and telling_apart > gains[chosen] / 2:
            reasons = [
                "tells apart model forms that fit the measurements alike but differ at the target"
            ]
        elif reasons[0].startswith("narrows") and form_gains[chosen] > fit_gains[chosen]:
            reasons = [
                "settles the models' form at the target (forms that fit the measurements alike "
                "but differ there, or the extrapolation to it)"
                + (" most per cost" if per_cost else " most within the budget")
            ]
        for kernel in kernels:
            kernel.add(chosen, repetitions)
        form.add(grid[chosen])
        available[chosen] = False
        spent += float(cost[chosen])
        for j, n in enumerate(names):
            distinct[n].add(float(grid[chosen, j]))
        values = dict(zip(names, (float(v) for v in grid[chosen]), strict=True))
        reasons += _extrapolation_reason(values, context.measured, names, context.target)
        if (context.measured == grid[chosen]).all(axis=1).any():
            reasons.append("repeats a measured point: more repetitions")
        suggestions.append(
            Suggestion(
                values,
                repetitions,
                None if context.core_hours is None else float(context.core_hours[chosen]),
                width(kernels),
                tuple(reasons),
                None
                if context.core_hour_bounds is None
                else (
                    float(context.core_hour_bounds[0][chosen]),
                    float(context.core_hour_bounds[1][chosen]),
                ),
            )
        )
    reached = context.goal is not None and width(kernels) <= context.goal
    return _Plan(suggestions, kernels, remaining(), spent, reached)


def _next(
    grid: np.ndarray,
    names: Sequence[str],
    gains: np.ndarray,
    cost: np.ndarray,
    affordable: np.ndarray,
    few: Sequence[str],
    distinct: Mapping[str, set[float]],
    per_cost: bool,
) -> tuple[int | None, list[str]]:
    """The next candidate and why: new values of a parameter with too few first (cheapest),
    else the largest variance reduction (per cost when ``per_cost``), if any."""
    for name in few:
        j = list(names).index(name)
        new = affordable & ~np.isin(grid[:, j], list(distinct[name]))
        if new.any():
            rows = np.flatnonzero(new)
            chosen = int(rows[np.argmin(cost[rows])])
            count = len(distinct[name]) + 1
            return chosen, [
                f"a new value of '{name}' ({count} of the {MIN_DISTINCT_VALUES} a model needs "
                "to tell its terms apart)"
            ]
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = gains / np.maximum(cost, 1e-300) if per_cost else gains
        score = np.where(affordable & (gains > 0), rate, -np.inf)
    if not np.isfinite(score).any() or np.max(score) <= 0:
        return None, []
    chosen = int(np.argmax(score))
    how = "most per cost" if per_cost else "most within the budget"
    return chosen, [f"narrows the interval at the target {how}"]


def _extrapolation_reason(
    values: Mapping[str, float],
    measured: np.ndarray,
    names: Sequence[str],
    target: Mapping[str, float],
) -> list[str]:
    """Words for a point that extends a parameter toward a target beyond the measurements."""
    reasons = []
    for j, name in enumerate(names):
        largest = float(measured[:, j].max())
        if values[name] > largest and target[name] > largest:
            how = "toward" if values[name] <= target[name] else "past"
            reasons.append(
                f"extends '{name}' {how} the target (measured up to {largest:g}, "
                f"target {target[name]:g})"
            )
    return reasons


def _core_hour_bounds(
    models: Sequence[Model],
    grid: np.ndarray,
    level: float,
    core_seconds: np.ndarray,
    predicted: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate's core-hours at the lower and upper end of the interval of the models'
    total there (the lower never above ``predicted`` nor below 0, the upper never below
    ``predicted`` and infinite where a bound is unknown: never affordable at that price).

    The kernels' spreads are added as variances in the total's units (each kernel's standard
    deviation taken from its own interval: in log space for relative noise), and the total's
    interval is symmetric in log space (a cost is positive). With one kernel that is its own
    interval; with several, a kernel too small to matter cannot widen the total's interval
    beyond what its share allows (summing the kernels' upper ends would let a negligible,
    noisy kernel's far extrapolation decide the price).
    """
    z = float(special.ndtri(0.5 + level / 2))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        total = np.zeros(len(grid))
        variance = np.zeros(len(grid))
        for model in models:
            prediction, _, upper = model.predict_interval(grid, level)
            piece = model.segments[-1].model if model.segments else model
            relative = piece.uncertainty is None or piece.uncertainty.relative
            if relative:
                ratio = np.log(upper / prediction)
                overflowed = np.isinf(upper) & np.isfinite(prediction) & (prediction != 0)
                if overflowed.any() and piece.uncertainty is not None:
                    beyond = _log_ratio_beyond_doubles(model, grid, level, piece.uncertainty.dof)
                    ratio = np.where(overflowed, beyond, ratio)
                spread = np.abs(prediction) * ratio / z
                # A kernel predicted to take no time at all (a region never entered) has no
                # relative spread: its interval's own width, as for absolute noise.
                spread = np.where(prediction == 0, (upper - prediction) / z, spread)
            else:
                spread = (upper - prediction) / z
            total += prediction
            variance += np.where(prediction == upper, 0.0, spread**2)
        factor = np.exp(z * np.sqrt(variance) / np.abs(total))
        lower = total / factor * core_seconds / 3600
        upper_total = total * factor * core_seconds / 3600
        low = np.clip(np.where(np.isfinite(lower), lower, 0.0), 0.0, predicted)
        high = np.maximum(upper_total, predicted)
    return low, np.where(np.isfinite(high), high, np.inf)


def _log_ratio_beyond_doubles(model: Model, grid: np.ndarray, level: float, dof: int) -> np.ndarray:
    """``log(upper / prediction)`` of ``model``'s interval at ``level`` where its upper end is
    beyond the doubles: the log half-width at a narrow level (whose bound is a double) scaled by
    the ratio of the two t quantiles, as the interval is a quantile times a spread in log space
    (a negligible kernel far extrapolated must not make every price unbounded)."""
    narrow = 0.05
    prediction, _, upper = model.predict_interval(grid, narrow)
    dof = max(dof, 1)
    scale = special.stdtrit(dof, 0.5 + level / 2) / special.stdtrit(dof, 0.5 + narrow / 2)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return np.abs(np.log(upper / prediction)) * scale


def _check_target_values(
    models: Sequence[Model], point: np.ndarray, target: Mapping[str, float]
) -> None:
    """Refuse a target where a model's prediction is too large to weigh measurements by.

    Raises
    ------
    InputError
        When a model predicts a value that is not finite or beyond :data:`LARGEST_PREDICTION`
        in magnitude at ``point`` (its variances would overflow).
    """
    for model in models:
        value = float(model.evaluate(point)[0])
        if not (math.isfinite(value) and abs(value) <= LARGEST_PREDICTION):
            at = ",".join(f"{name}={value:g}" for name, value in target.items())
            raise InputError(
                f"the model of '{model.kernel}' predicts {value:g} at {at}, too large to "
                f"weigh measurements by (at most {LARGEST_PREDICTION:g}); choose a target "
                "closer to the measurements",
                source="at",
                reason="bad-target",
                value=at,
            )


def _kernels(
    models: Sequence[Model], point: np.ndarray, grid: np.ndarray, names: Sequence[str]
) -> tuple[list[_Kernel], list[ModelWarning]]:
    """Each model's state at the target and the candidates; warnings for models the advice
    cannot use."""
    kernels = []
    without = []
    for model in models:
        piece = model
        informative = np.ones(len(grid), dtype=bool)
        if model.segments:
            side = int(model.segment_index(point)[0])
            piece = model.segments[side].model
            informative = model.segment_index(grid) == side
        u = piece.uncertainty
        if u is None:
            without.append(model.kernel)
            continue
        at_target = float(piece.evaluate(point)[0])
        at_candidates = piece.evaluate(grid)
        scale = at_target**2 if u.relative else 1.0
        noise = u.noise_variance * (at_candidates**2 if u.relative else 1.0)
        columns = {name: j for j, name in enumerate(names)}
        # Per parameter the larger of the backtest and the model-selection spread, as
        # Model.predict_interval takes it: in increasing order, the dicts below keep the larger.
        backtested = sorted(
            (e for e in u.extrapolation + u.selection if e.parameter in columns),
            key=lambda e: e.rate_variance,
        )
        kernels.append(
            _Kernel(
                piece,
                np.array(u.covariance, dtype=float),
                piece.design(point)[0],
                u.noise_variance * scale,
                u.loo_variance * scale,
                piece.design(grid),
                grid,
                np.where(np.isfinite(noise) & (noise > 0), noise, np.inf),
                informative,
                point[0],
                at_target**2,
                {columns[e.parameter]: e.largest for e in backtested},
                {columns[e.parameter]: e.rate_variance for e in backtested},
            )
        )
    warnings = []
    if without:
        warnings.append(
            ModelWarning(
                "no-interval",
                f"{len(without)} model(s) (the first of kernel '{without[0]}') hold no fit "
                "uncertainty: the advice cannot tell what measuring does to them",
            )
        )
    return kernels, warnings


def _add_rivals(
    kernels: Sequence[_Kernel],
    experiment: Experiment,
    metric: str,
    point: np.ndarray,
    grid: np.ndarray,
    repetitions: int,
) -> None:
    """Give every kernel whose model is not segmented its rival forms (``repetitions``: how
    many repetitions make a measured point's value)."""
    measured = {
        kernel: (series.points, means)
        for series in experiment.series(metric)
        for kernel, means in zip(series.kernels, series.means, strict=True)
    }
    for kernel in kernels:
        model, u = kernel.model, kernel.model.uncertainty
        if model.kernel not in measured or u is None or not u.relative or model.segments:
            continue
        points, means = measured[model.kernel]
        found = rival_models(model, points, means, u.noise_variance / repetitions)
        if not found:
            continue
        at_target = model.evaluate(point)[0]
        at_candidates = model.evaluate(grid)
        kernel.rival_target = np.array(
            [(r.model.evaluate(point)[0] - at_target) ** 2 for r in found]
        )
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            power = (
                np.array([(r.model.evaluate(grid) - at_candidates) ** 2 for r in found])
                / kernel.candidate_noise[None, :]
            )
        kernel.rival_power = np.where(np.isfinite(power), power, 0.0)
        kernel.rival_weights = np.array([r.plausibility for r in found])


def _candidate_grid(
    measured: np.ndarray,
    names: Sequence[str],
    target: Mapping[str, float],
    given: Mapping[str, Sequence[float]] | None,
) -> np.ndarray:
    """Every combination of the candidate values of each parameter (a parameter measured at
    whole numbers only gets whole candidates)."""
    given = given or {}
    axes = []
    for j, name in enumerate(names):
        if name in given:
            axes.append(np.unique(np.asarray(given[name], dtype=float)))
            continue
        values = np.unique(measured[:, j])
        extended = doubling_grid(values, max(target[name], float(values.max())))
        if len(values) < MIN_DISTINCT_VALUES:
            midpoints = np.sqrt(values[1:] * values[:-1])
            if np.all(values == np.round(values)):  # counts (processes, sizes) stay whole
                midpoints = np.round(midpoints)
            extended = np.concatenate([extended, midpoints])
        axes.append(np.unique(extended))
    size = math.prod(len(a) for a in axes)
    if size > MAX_CANDIDATES:
        raise InputError(
            f"{size} candidate points (the product of {', '.join(str(len(a)) for a in axes)} "
            f"values of {', '.join(names)}); at most {MAX_CANDIDATES}: give fewer values",
            source="candidates",
            reason="bad-candidates",
        )
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.column_stack([m.ravel() for m in mesh])


class _FormPart:
    """The part of the variance at the target that comes from the models' form, and what
    measuring a candidate removes of it.

    The kernels' own estimate of that part is the rival forms' disagreement at the target and
    the backtested (and model-selection) extrapolation error; a candidate lowers it by telling
    rivals apart or by extending a parameter toward the target. What is left of it is scaled by
    the share of the :class:`~perfcast.analyze.coverage.Coverage` process's variance at the
    target still open, which a candidate lowers the more the nearer it lies to the target and
    the less it is like the points measured (or advised) before: the form is settled by data
    near where it is used, whatever the form.
    """

    def __init__(self, kernels: Sequence[_Kernel], coverage: Coverage, target: np.ndarray) -> None:
        self._kernels = kernels
        self._coverage = coverage
        self._target = target
        self._initially_open, _ = coverage.target_information(target)

    @staticmethod
    def _own(kernel: _Kernel) -> float:
        return float(kernel.ambiguity()) + kernel.extrapolation_variance(kernel.largest)

    def _open_share(self, open_now: float | np.ndarray) -> float | np.ndarray:
        return open_now / self._initially_open if self._initially_open > 0 else 1.0

    def variance(self) -> float:
        """The form part now (without kernels: the process's open share, relative)."""
        open_now, _ = self._coverage.target_information(self._target)
        own = sum(self._own(k) for k in self._kernels) if self._kernels else 1.0
        return float(own * self._open_share(open_now))

    def gains(self, grid: np.ndarray, repetitions: int) -> np.ndarray:
        """The reduction of the form part by measuring each candidate (a kernel's only by the
        candidates it learns from: those on its target's side of its breakpoints)."""
        open_now, reductions = self._coverage.target_information(self._target)
        if not self._kernels:
            return np.asarray(self._open_share(open_now) - self._open_share(open_now - reductions))
        gains = np.zeros(len(grid))
        for kernel in self._kernels:
            own = self._own(kernel)
            if own <= 0:
                continue
            own_gains = kernel.ambiguity_gains(repetitions) + kernel.extrapolation_gains(grid)
            opened = open_now - np.where(kernel.informative, reductions, 0.0)
            after = np.maximum(own - own_gains, 0.0) * self._open_share(opened)
            gains += np.maximum(own * self._open_share(open_now) - after, 0.0)
        return gains

    def add(self, point: np.ndarray) -> None:
        """Count ``point`` as measured (the kernels are updated by their own ``add``)."""
        self._coverage.add(point)


def _counted_kernels(experiment: Experiment, metric: str) -> set[str] | None:
    """The kernels whose values add up to a run's total of ``metric``: None for all of them;
    for the ``time`` of a perfcast campaign that recorded the whole program's wall time (its
    ``program_kernel``) only that kernel, since the program's regions ran inside it; for an
    inclusive metric of call paths (``time_inclusive`` of Caliper and CUBE) only the roots,
    since every other kernel's value is already inside its ancestor's."""
    program = experiment.metadata.get("program_kernel")
    if (
        isinstance(program, str)
        and metric == "time"
        and any(program in series.kernels for series in experiment.series(metric))
    ):
        return {program}
    if not is_inclusive_metric(experiment, metric):
        return None
    kernels = sorted({k for series in experiment.series(metric) for k in series.kernels})
    parents = nearest_kernel_parents(kernels)
    return {kernel for kernel, parent in zip(kernels, parents, strict=True) if parent is None}


def _counted_means(experiment: Experiment, metric: str) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per series of ``metric``: its points and the means of the kernels that add up to the
    total (:func:`_counted_kernels`), kernels by points."""
    counted = _counted_kernels(experiment, metric)
    for series in experiment.series(metric):
        rows = [i for i, k in enumerate(series.kernels) if counted is None or k in counted]
        yield series.points, series.means[rows]


def _measured_totals(experiment: Experiment, metric: str, measured: np.ndarray) -> np.ndarray:
    """The sum over the counted kernels of the mean value at every row of ``measured``."""
    totals = np.zeros(len(measured))
    for points, means in _counted_means(experiment, metric):
        rows = [int(np.flatnonzero(np.all(measured == p, axis=1))[0]) for p in points]
        totals[rows] += np.nansum(means, axis=0)
    return totals


def measured_core_hours(
    experiment: Experiment, metric: str, point: Mapping[str, float], runs: int
) -> float | None:
    """Core-hours ``runs`` runs at ``point`` took as measured: the mean total of ``metric`` over
    the kernels there, in hours, times the cores a run occupies and ``runs`` (the price
    :func:`advise` puts on a candidate, with measured values in place of the models').

    Returns
    -------
    float or None
        None when ``metric`` is no time or ``point`` was not measured.
    """
    seconds = _seconds_per_unit(experiment, metric)
    names = experiment.parameter_names
    row = np.array([[float(point[n]) for n in names]])
    total, found = 0.0, False
    for points, means in _counted_means(experiment, metric):
        at = np.flatnonzero(np.all(points == row, axis=1))
        if len(at):
            total += float(np.nansum(means[:, at[0]]))
            found = True
    if seconds is None or not found:
        return None
    return max(total, 0.0) * seconds * float(_cores(experiment, names, row)[0]) * runs / 3600


def next_run_core_hours(
    experiment: Experiment,
    metric: str,
    point: Mapping[str, float],
    level: float = 0.95,
) -> float | None:
    """Upper end, at ``level``, of the core-hours one more run at the measured ``point`` may
    take: the prediction interval of a new observation from the ``k`` runs measured there,
    ``mean * (1 + z * s * sqrt(1 + 1/k))``, with ``s`` the relative spread of one run's total
    (over the kernels) around its point's mean, pooled over every point measured more than
    once.

    Returns
    -------
    float or None
        None when ``metric`` is no time or ``point`` was not measured; infinite when no point
        was measured twice (the spread is unknown).
    """
    mean = measured_core_hours(experiment, metric, point, 1)
    if mean is None:
        return None
    names = experiment.parameter_names
    row = np.array([float(point[n]) for n in names])
    squares, degrees, runs_here = 0.0, 0, 0
    for series in experiment.series(metric):
        totals = np.nansum(series.values, axis=0)  # per point and run, over the kernels
        counts = np.max(series.repetitions, axis=0)
        here = np.flatnonzero(np.all(series.points == row, axis=1))
        if len(here):
            runs_here = max(runs_here, int(counts[here[0]]))
        for j in np.flatnonzero(counts >= 2):
            runs = totals[j, : counts[j]]
            centre = float(np.mean(runs))
            if centre > 0:
                squares += float(np.sum((runs / centre - 1.0) ** 2))
                degrees += int(counts[j]) - 1
    if degrees == 0 or runs_here == 0:
        return math.inf
    z = float(special.ndtri(0.5 + level / 2))
    spread = math.sqrt(squares / degrees)
    return mean * (1.0 + z * spread * math.sqrt(1.0 + 1.0 / runs_here))


def _measured_points(experiment: Experiment, metric: str) -> np.ndarray:
    return np.concatenate([s.points for s in experiment.series(metric)])


def _usual_repetitions(experiment: Experiment, metric: str) -> int:
    counts = np.concatenate([s.repetitions.ravel() for s in experiment.series(metric)])
    values, frequency = np.unique(counts[counts > 0], return_counts=True)
    return int(values[np.argmax(frequency)]) if len(values) else 1


def _seconds_per_unit(experiment: Experiment, metric: str) -> float | None:
    """Seconds per unit of ``metric`` when it is a time (by unit, or by a name with ``time``
    and no unit); None otherwise."""
    found = experiment.metrics.get(metric)
    unit = found.unit if found is not None else ""
    if unit:
        return TIME_UNITS.get(unit.strip().lower())
    return 1.0 if "time" in metric.lower() else None


def _cores(experiment: Experiment, names: Sequence[str], grid: np.ndarray) -> np.ndarray:
    """Cores each candidate occupies: the product of its processes and threads (1 without)."""
    roles = parameter_roles(experiment)
    cores = np.ones(len(grid))
    for j, name in enumerate(names):
        if roles[name].role in CORE_ROLES:
            cores = cores * grid[:, j]
    return cores


@dataclass(frozen=True)
class AdvisedRound:
    """One round of measure-model-advise: the point measured and the interval before it.

    Attributes
    ----------
    point : dict
        The configuration measured in this round.
    runs : int
        Runs taken there.
    core_hours : float or None
        Their predicted cost (None when the models predict no time).
    width_before : float
        Relative half-width of the interval at the target before this round.
    resumed : bool
        The round was advised by an earlier process whose loop was interrupted: its point comes
        from the results journal (completed here if runs were missing) and ``core_hours`` is
        what its runs took as measured.
    core_hours_interval : tuple of float, or None
        The interval of the predicted cost when the round was advised (its upper end fitted
        the budget left); None for a resumed round or models that predict no time.
    """

    point: dict[str, float]
    runs: int
    core_hours: float | None
    width_before: float
    resumed: bool = False
    core_hours_interval: tuple[float, float] | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON (an unknown ``width_before``, before a first fit, is None)."""
        return {
            "point": {k: plain_value(v) for k, v in self.point.items()},
            "runs": self.runs,
            "core_hours": self.core_hours,
            "width_before": self.width_before if math.isfinite(self.width_before) else None,
            "resumed": self.resumed,
            "core_hours_interval": _plain_interval(self.core_hours_interval),
            "note": self.note,
        }


@dataclass(frozen=True)
class FirstFitPoint:
    """A point to measure before any model can be fitted, and why.

    Attributes
    ----------
    point : dict
        The configuration: a new value of a parameter measured at too few values, the other
        parameters at the values of the cheapest-looking measured line along it.
    core_hours : float or None
        Its estimated cost (None when the metric is no time): no model prices it yet, so it is
        the measured cost at the largest value of that parameter on the line, grown in
        proportion to the parameter's value and to the cores.
    note : str
        Why this point, in words.
    """

    point: dict[str, float]
    core_hours: float | None
    note: str


def first_fit_point(
    experiment: Experiment,
    metric: str,
    target: Mapping[str, float],
    candidates: Mapping[str, Sequence[float]] | None,
    repetitions: int,
) -> FirstFitPoint | None:
    """The point that gives a parameter measured at fewer than
    :data:`~perfcast.model.fitting.assembly.MIN_VALUES_PER_PARAMETER` values one more, so that
    a model can be fitted at all; None when every parameter has enough values.

    The new value is the smallest one offered (``candidates``, else doublings of the largest
    measured value up to the target) that was not measured, as a run's cost is taken to grow
    with a parameter's value; the other parameters keep the values of the measured line along
    that parameter that starts lowest, so that the new point extends it (a model needs the
    values with the others held constant).

    Raises
    ------
    InputError
        When nothing offered is a new value of that parameter.
    """
    names = experiment.parameter_names
    measured = np.unique(_measured_points(experiment, metric), axis=0)
    for j, name in enumerate(names):
        values = np.unique(measured[:, j])
        if len(values) >= MIN_VALUES_PER_PARAMETER:
            continue
        offered = (
            candidates[name]
            if candidates is not None and name in candidates
            else doubling_grid(values, float(target[name]))
        )
        new = sorted(float(v) for v in offered if not np.any(np.isclose(values, float(v))))
        if not new:
            raise InputError(
                f"'{name}' was measured at {len(values)} value(s) and a model needs at least "
                f"{MIN_VALUES_PER_PARAMETER}, but the candidates offer no new value of it",
                experiment.source,
                reason="too-few-values",
                value=name,
            )
        base = measured[np.lexsort(measured.T[::-1])[0]]
        others = np.delete(measured, j, axis=1)
        line = measured[np.all(others == np.delete(base, j), axis=1)]
        largest = line[np.argmax(line[:, j])]
        point = {n: float(v) for n, v in zip(names, base, strict=True)}
        point[name] = new[0]
        reference = measured_core_hours(
            experiment, metric, dict(zip(names, largest, strict=True)), repetitions
        )
        core_hours = None
        if reference is not None:
            rows = np.array([[point[n] for n in names], largest])
            cores = _cores(experiment, names, rows)
            core_hours = reference * max(1.0, new[0] / largest[j]) * cores[0] / cores[1]
        note = (
            f"'{name}' was measured at {len(values)} value(s) and a model needs at least "
            f"{MIN_VALUES_PER_PARAMETER}: measuring {name}={new[0]:g}, the smallest new value "
            "offered, before any advice (no model prices it: its cost is estimated from the "
            f"measured one at {name}={largest[j]:g}, grown in proportion to '{name}')"
        )
        return FirstFitPoint(point, core_hours, note)
    return None


#: Why an advised campaign stopped.
STOP_REASONS = {
    "goal": "the interval at the target is as narrow as asked",
    "budget": "the budget is spent",
    "no-advice": "no affordable point narrows the interval any more",
    "rounds": "the most rounds were taken",
}
