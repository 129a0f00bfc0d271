"""Measurement-point advice and the measure-model-advise loop."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from perfcast.api.analysis import models_of_metric
from perfcast.api.campaigns import run_campaign
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.points import parse_point
from perfcast.model.modelset import ModelSet

if TYPE_CHECKING:
    from perfcast.analyze.advice import Advice, AdvisedRound, FirstFitPoint
    from perfcast.measure.campaign import CampaignResult
    from perfcast.measure.spec import Campaign


def advise(
    experiment: Experiment,
    models: ModelSet | None = None,
    *,
    at: Mapping[str, float] | str,
    candidates: Mapping[str, Sequence[float]] | str | None = None,
    budget: str | float | None = None,
    repetitions: int | None = None,
    goal: float | None = None,
    level: float = 0.95,
    metric: str | None = None,
    modeler: str = "pmnf",
    price: str = "prediction",
) -> Advice:
    """The configurations to measure next so that the prediction at ``at`` narrows most per
    unit of measurement cost (see :mod:`perfcast.analyze.advice`).

    Parameters
    ----------
    experiment : Experiment
    models : ModelSet, optional
        Fitted with ``modeler`` when None.
    at : mapping of str to float, or str
        The target configuration (``"p=4096,n=1e6"``).
    candidates : mapping of str to sequence of float, or str, optional
        Values to combine per parameter (``"p=2..4096*2,n=1e6,2e6"``); a parameter left out
        gets its measured values and doublings up to the target.
    budget : str or float, optional
        Runs (``20``, ``"20runs"``) or core-hours (``"1.5h"``, ``"1.5core-hours"``); default
        five points.
    repetitions : int, optional
        Runs per point; default the most common number measured.
    goal : float, optional
        Stop once the interval at the target is within this relative half-width (0.1: ±10 %).
    level : float
        Probability of the intervals.
    metric : str, optional
        Default: the experiment's only metric, or ``time``.
    modeler : str
        Used when ``models`` is None.
    price : {"prediction", "upper", "upper-first", "probe-first"}
        A candidate's cost against a budget in core-hours: its predicted time, or (cautious)
        the upper end of that prediction's interval at ``level``, so that the suggestions stay
        within the budget in truth with about that probability; ``"upper-first"`` and
        ``"probe-first"`` price only the first suggestion so, all its runs or one of them
        (for a loop that runs it now: :func:`run_advised` uses ``"upper-first"``).

    Returns
    -------
    Advice
        Suggestions in order, each with its cost, the interval width expected after it and
        why; ``warnings`` say what limits the advice.

    Raises
    ------
    InputError
        For a malformed target, candidate list or budget, or a budget in core-hours for models
        that predict no time.
    ValueError
        For ``repetitions`` below 1, a ``goal`` that is not positive, a ``level`` outside
        (0, 1) or an unknown ``price``.
    """
    from perfcast.analyze.advice import PRICES, parse_budget, parse_candidates
    from perfcast.analyze.advice import advise as suggest

    if price not in PRICES:
        raise ValueError(f"price: one of {', '.join(PRICES)}, not {price!r}")

    if repetitions is not None and (isinstance(repetitions, bool) or repetitions < 1):
        raise ValueError(f"repetitions: must be a whole number >= 1, not {repetitions!r}")
    if goal is not None and not goal > 0:
        raise ValueError(f"goal: must be a positive relative width, not {goal!r}")
    if not 0 < level < 1:
        raise ValueError(f"level: must lie in (0, 1), not {level!r}")
    experiment, chosen = models_of_metric(experiment, models, metric, modeler)
    names = experiment.parameter_names
    target = parse_point(at, names, source="at") if isinstance(at, str) else dict(at)
    missing = [n for n in names if n not in target]
    if missing:
        raise InputError(f"the target misses parameter(s) {', '.join(missing)}", source="at")
    values = parse_candidates(candidates, names) if isinstance(candidates, str) else candidates
    amount = None if budget is None else parse_budget(str(budget))
    return suggest(
        experiment, chosen, target, values, amount, repetitions, level=level, goal=goal, price=price
    )


#: Most measure-model-advise rounds of :func:`run_advised`.
ADVISED_ROUNDS = 50


def run_advised(
    campaign: Campaign,
    *,
    at: Mapping[str, float] | str,
    budget: str | float,
    goal: float | None = None,
    candidates: Mapping[str, Sequence[float]] | str | None = None,
    metric: str | None = None,
    modeler: str = "pmnf",
    rounds: int = ADVISED_ROUNDS,
) -> tuple[CampaignResult, list[AdvisedRound], Advice, str]:
    """Run a campaign, then measure one advised point at a time until the prediction at ``at``
    is as narrow as ``goal`` or ``budget`` is spent.

    Every round fits the models to everything measured so far, asks :func:`advise` with the
    budget left, and runs the campaign's command at the first suggested point not yet
    measured (the campaign's repetitions; the same results journal, so an interrupted loop
    resumes with what it measured). With a budget in core-hours no round starts whose cost
    may exceed what is left: the point run must fit at the upper end of its cost's interval
    (the advice prices the first suggestion so, ``price="upper-first"``), and what it took
    is counted as measured.

    Parameters
    ----------
    campaign : Campaign
        From :func:`load_campaign`; its own points are measured first.
    at : mapping of str to float, or str
        The target configuration.
    budget : str or float
        Runs (``20``) or core-hours (``"1.5h"``) the advised points may take, as :func:`advise`
        reads it; a round's core-hours count as its runs took them, measured (the models'
        prediction only decides whether a point is affordable).
    goal : float, optional
        Stop once the relative half-width of the interval at the target is at most this.
    candidates, metric, modeler
        As for :func:`advise`.
    rounds : int
        Most rounds.

    Returns
    -------
    result : CampaignResult
        Of the campaign and every advised round together: its experiment holds the
        campaign's points and every advised one (also written to the campaign's output), its
        counts and failures are those of all rounds.
    history : list of AdvisedRound
    advice : Advice
        The last advice, at what was measured in the end.
    stop : str
        A key of :data:`perfcast.analyze.advice.STOP_REASONS`.
    """
    import dataclasses
    import math

    from perfcast.analyze.advice import RUNS, AdvisedRound, measured_core_hours, parse_budget
    from perfcast.core.points import plain_value
    from perfcast.measure.campaign import run_campaign as run_round
    from perfcast.measure.campaign import write_output

    total = parse_budget(str(budget))
    earlier = _earlier_rounds(campaign)
    result = run_campaign(campaign)
    measured = result.experiment
    executed, skipped, failures = result.executed, result.skipped, list(result.failures)
    history: list[AdvisedRound] = []
    spent = 0.0
    stop = None
    values: dict[str, list[int | float | str]]

    def advise_now() -> Advice:
        """The advice at what was measured, with the budget left."""
        left = total.amount - spent
        return advise(
            measured,
            at=at,
            candidates=candidates,
            budget=f"{left!r}{'runs' if total.unit == RUNS else 'h'}" if left > 0 else None,
            repetitions=campaign.repetitions,
            goal=goal,
            metric=metric,
            modeler=modeler,
            price="upper-first",
        )

    while stop is None:
        left = total.amount - spent
        chosen_metric = metric or measured.default_metric()
        if earlier:
            # A round an earlier, interrupted loop took: measured (or completed) and counted
            # first, whatever the advice says now; its point is outside the campaign, so the
            # journal's latest session (the campaign's) no longer shows it.
            width = math.inf if _too_few_values(measured) else advise_now().width_before
            point = earlier.pop(0)
            result = run_round(dataclasses.replace(campaign, parameters=point), extends=campaign)
            executed, skipped = executed + result.executed, skipped + result.skipped
            failures += result.failures
            measured = _joined(measured, result.experiment)
            replayed = {name: float(v[0]) for name, v in point.items()}
            cost = measured_core_hours(measured, chosen_metric, replayed, campaign.repetitions)
            spent += campaign.repetitions if total.unit == RUNS else cost or 0.0
            history.append(AdvisedRound(replayed, campaign.repetitions, cost, width, True))
            continue
        first = _first_fit_point(measured, at, candidates, metric, campaign)
        if first is not None:
            # No model yet: measure the point that makes a first fit possible, if it fits.
            runs = campaign.repetitions
            price = float(runs) if total.unit == RUNS else first.core_hours
            if price is None or price > left * (1 + 1e-9):
                raise InputError(
                    f"{first.note}; it would take about "
                    f"{price if price is not None else math.inf:.3g} "
                    f"{'runs' if total.unit == RUNS else 'core-hours'}, more than the "
                    f"{left:.3g} left of the budget: nothing can be advised (the "
                    "measurements so far are kept)",
                    campaign.results_path,
                    reason="budget-too-small",
                )
            values = {name: [plain_value(v)] for name, v in first.point.items()}
            result = run_round(dataclasses.replace(campaign, parameters=values), extends=campaign)
            executed, skipped = executed + result.executed, skipped + result.skipped
            failures += result.failures
            measured = _joined(measured, result.experiment)
            taken_hours = measured_core_hours(measured, chosen_metric, first.point, runs)
            spent += runs if total.unit == RUNS else taken_hours or first.core_hours or 0.0
            history.append(
                AdvisedRound(dict(first.point), runs, first.core_hours, math.inf, note=first.note)
            )
            continue
        advice = advise_now()
        taken = {tuple(row) for row in measured.points().tolist()}
        names = measured.parameter_names
        # Never a run that may cost more than is left: its upper price must fit.
        fresh = [
            s
            for s in advice.suggestions
            if tuple(s.point[n] for n in names) not in taken
            and (
                total.unit == RUNS
                or s.core_hours_interval is None
                or s.core_hours_interval[1] <= left * (1 + 1e-9)
            )
        ]
        if goal is not None and advice.width_before <= goal:
            stop = "goal"
        elif left <= 0:
            stop = "budget"
        elif len(history) >= rounds:
            stop = "rounds"
        elif not fresh:
            stop = "no-advice"
        else:
            chosen = fresh[0]
            values = {name: [plain_value(v)] for name, v in chosen.point.items()}
            result = run_round(dataclasses.replace(campaign, parameters=values), extends=campaign)
            executed, skipped = executed + result.executed, skipped + result.skipped
            failures += result.failures
            measured = _joined(measured, result.experiment)
            # The budget is spent in truth: a round counts what its runs took as measured (the
            # models' price only decided that the point was affordable).
            taken_hours = measured_core_hours(measured, advice.metric, chosen.point, chosen.runs)
            if taken_hours is None:
                taken_hours = chosen.core_hours or 0.0
            spent += chosen.runs if total.unit == RUNS else taken_hours
            history.append(
                AdvisedRound(
                    dict(chosen.point),
                    chosen.runs,
                    chosen.core_hours,
                    advice.width_before,
                    core_hours_interval=chosen.core_hours_interval,
                )
            )
    if history:  # the bare table an ordinary campaign writes, read by pandas without options
        write_output(measured, campaign.output)
    total_result = dataclasses.replace(
        result, experiment=measured, executed=executed, skipped=skipped, failures=failures
    )
    return total_result, history, advice, stop


def _too_few_values(measured: Experiment) -> bool:
    """Whether a parameter has fewer values than any model needs (no fit is possible yet)."""
    from perfcast.model.fitting.assembly import MIN_VALUES_PER_PARAMETER

    return any(
        len(set(column)) < MIN_VALUES_PER_PARAMETER for column in measured.points().T.tolist()
    )


def _first_fit_point(
    measured: Experiment,
    at: Mapping[str, float] | str,
    candidates: Mapping[str, Sequence[float]] | str | None,
    metric: str | None,
    campaign: Campaign,
) -> FirstFitPoint | None:
    """The point that makes a first fit possible when a parameter has too few values (see
    :func:`perfcast.analyze.advice.first_fit_point`), else None."""
    from perfcast.analyze.advice import first_fit_point, parse_candidates

    names = measured.parameter_names
    target = parse_point(at, names, source="at") if isinstance(at, str) else dict(at)
    values = parse_candidates(candidates, names) if isinstance(candidates, str) else candidates
    chosen = metric or measured.default_metric()
    return first_fit_point(measured, chosen, target, values, campaign.repetitions)


def _earlier_rounds(campaign: Campaign) -> list[dict[str, list[Any]]]:
    """The points of the advised rounds the campaign's results journal holds, in the order
    they were taken: the sessions of this campaign's command (same fingerprint) at one point
    outside its own grid, each as the campaign's parameters for that point."""
    from perfcast.io.campaign_results import read_journal

    own = set(campaign.points())
    names = list(campaign.parameter_names)
    found: list[dict[str, list[Any]]] = []
    for session in read_journal(campaign.results_path).sessions:
        parameters = session["campaign"].get("parameters", {})
        single = all(len(parameters.get(name, [])) == 1 for name in names)
        if session["fingerprint"] != campaign.fingerprint or not single:
            continue
        point = {name: list(parameters[name]) for name in names}
        if tuple(v[0] for v in point.values()) not in own and point not in found:
            found.append(point)
    return found


def _joined(first: Experiment, second: Experiment) -> Experiment:
    """The measurements of both experiments (``second`` at points ``first`` lacks)."""
    import pandas as pd

    names = list(first.parameter_names)
    taken = set(map(tuple, first.points().tolist()))
    frame = second.frame
    new = [tuple(row) not in taken for row in frame[names].to_numpy().tolist()]
    return Experiment.from_frame(
        pd.concat([first.frame, frame[new]], ignore_index=True),
        parameters=first.parameters,
        metrics=first.metrics,
        metadata=first.metadata,
        source=first.source,
    )


def advice_stop_reasons() -> dict[str, str]:
    """Why :func:`run_advised` stops, by the key it returns, in words."""
    from perfcast.analyze.advice import STOP_REASONS

    return dict(STOP_REASONS)
