"""Measurement-point advice: suggestions narrow the prediction at the target within the budget,
few-points parameters get new values first, segments learn only from their own side, bad input
is one clear message."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from perfcast.api import Experiment, InputError, advise, fit, predict, render
from perfcast.cli import main
from perfcast.io import write_experiment
from tests.conftest import synthetic_experiment

P_VALUES = [2, 4, 8, 16, 32]
N_VALUES = [1e5, 2e5, 4e5, 8e5, 1.6e6]
KERNELS = {
    "solve": lambda p, n: 1e-6 * n / p + 0.01 * np.log2(p),
    "exchange": lambda p, n: 2e-3 * p**0.5,
}


@pytest.fixture(scope="module")
def two_parameters():
    return synthetic_experiment(KERNELS, {"p": P_VALUES, "n": N_VALUES}, noise=0.05)


def test_suggestions_narrow_the_interval_within_a_budget_of_core_hours(two_parameters):
    advice = advise(two_parameters, at="p=1024,n=1.6e6", budget="0.2h")
    assert advice.suggestions
    widths = [advice.width_before] + [s.width_after for s in advice.suggestions]
    assert all(b <= a for a, b in zip(widths, widths[1:], strict=False))
    assert advice.width_after < 0.9 * advice.width_before
    assert advice.floor <= advice.width_after
    assert advice.core_hours is not None and advice.core_hours <= 0.2
    assert advice.core_hours == pytest.approx(sum(s.core_hours for s in advice.suggestions))
    # The cost of a point is its predicted time times its processes and repetitions.
    first = advice.suggestions[0]
    seconds = sum(p.value for p in predict(fit(two_parameters), first.point))
    assert first.core_hours == pytest.approx(seconds * first.point["p"] * 5 / 3600)


def test_a_budget_in_runs_counts_runs_and_prefers_points_near_the_target(two_parameters):
    advice = advise(two_parameters, at="p=1024,n=1.6e6", budget=30, repetitions=3)
    assert advice.runs == 3 * len(advice.suggestions) <= 30
    assert len(advice.suggestions) == 10 or advice.width_after <= advice.floor * 1.1
    assert advice.suggestions[0].point["p"] > max(P_VALUES)
    assert any("toward the target" in r for r in advice.suggestions[0].reasons)


def test_measuring_the_advice_narrows_the_refitted_interval(two_parameters):
    target = {"p": 1024.0, "n": 1.6e6}
    advice = advise(two_parameters, at=target, budget="0.3h")
    added = [
        {"kernel": kernel, "metric": "time", **s.point, "repetition": 100 + r, "value": value}
        for s in advice.suggestions
        for kernel, function in KERNELS.items()
        for r, value in enumerate(
            function(s.point["p"], s.point["n"])
            * (1 + np.random.default_rng(7).uniform(-0.05, 0.05, 5))
        )
    ]
    frame = pd.concat([two_parameters.frame, pd.DataFrame(added)], ignore_index=True)
    extended = Experiment.from_frame(frame)

    def width(experiment):
        predictions = predict(fit(experiment), target)
        return sum(p.upper - p.lower for p in predictions)

    assert width(extended) < width(two_parameters)


def test_a_parameter_with_too_few_values_gets_new_values_first():
    experiment = synthetic_experiment(KERNELS, {"p": P_VALUES, "n": [1e5, 4e5, 1.6e6]}, noise=0.02)
    advice = advise(experiment, at="p=64,n=1.6e6", budget=50)
    first_two = advice.suggestions[:2]
    assert all("a new value of 'n'" in s.reasons[0] for s in first_two)
    assert {s.point["n"] for s in first_two}.isdisjoint({1e5, 4e5, 1.6e6})


def test_a_parameter_measured_at_whole_numbers_gets_whole_new_values():
    experiment = synthetic_experiment(KERNELS, {"p": [1, 2, 4], "n": N_VALUES}, noise=0.02)
    advice = advise(experiment, at="p=64,n=1.6e6", budget=50)
    new_p = [s.point["p"] for s in advice.suggestions if "a new value of 'p'" in s.reasons[0]]
    assert new_p and all(p == round(p) and p not in (1, 2, 4) for p in new_p)


def test_a_segmented_model_learns_only_from_its_targets_side():
    grid = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    experiment = synthetic_experiment(
        {"k": lambda p: np.where(p < 60, 10 + 0.5 * p, -30 + 0.02 * p**1.5 + 0.3 * p)},
        {"p": grid},
        noise=0.03,
    )
    models = fit(experiment, modeler="segmented")
    assert models.models[0].segments
    advice = advise(experiment, models, at="p=8192", candidates="p=2..8192*2", budget=40)
    assert advice.suggestions
    # Every point lies on the target's side of the breakpoint (near 60), nearest first.
    (model,) = models.models
    side = model.segment_index(np.array([[8192.0]]))[0]
    points = np.array([[s.point["p"]] for s in advice.suggestions])
    assert np.all(model.segment_index(points) == side) and min(points[:, 0]) > 32
    assert advice.suggestions[0].point["p"] > 1024


def test_a_goal_stops_early_or_says_it_is_out_of_reach(two_parameters):
    reached = advise(two_parameters, at="p=1024,n=1.6e6", budget=200, goal=0.09)
    assert reached.width_after <= 0.09 and not reached.warnings
    out_of_reach = advise(two_parameters, at="p=1024,n=1.6e6", budget=5, goal=0.01)
    assert [w.code for w in out_of_reach.warnings] == ["goal-not-reached"]
    assert "±1.0%" in out_of_reach.warnings[0].message


def test_candidates_from_text(two_parameters):
    advice = advise(
        two_parameters, at="p=1024,n=1.6e6", candidates="p=64..256*2,n=1e5,1.6e6", budget=100
    )
    assert {s.point["p"] for s in advice.suggestions} <= {64, 128, 256}
    assert {s.point["n"] for s in advice.suggestions} <= {1e5, 1.6e6}


@pytest.mark.parametrize(
    ("candidates", "budget", "message"),
    [
        ("q=1..4", None, "'q' is not a parameter"),
        ("p=4..2", None, "empty range"),
        ("2,4", None, "no NAME="),
        ("p=4,p=8", None, "given twice"),
        ("p=0,1", None, "positive"),
        ("p=x", None, "not a number"),
        (None, "many", "budget: 'many' is not"),
        (None, "-3", "budget: '-3' is not"),
        ("p=1..1000,n=1..1000", None, "candidate points"),
        ("p=1..1e6", None, "more than 100000 values"),
    ],
)
def test_bad_candidates_and_budgets_are_input_errors(two_parameters, candidates, budget, message):
    with pytest.raises(InputError, match=message):
        advise(two_parameters, at="p=1024,n=1.6e6", candidates=candidates, budget=budget)


def test_command_line(tmp_path, capsys, two_parameters):
    data = tmp_path / "runs.csv"
    write_experiment(two_parameters, data)
    assert main(["advise", str(data), "--at", "p=512,n=1.6e6", "--budget", "0.1h"]) == 0
    text = capsys.readouterr().out
    assert "measure next:" in text and "core-hours" in text
    arguments = ["advise", str(data), "--at", "p=512,n=1.6e6", "--format", "json"]
    assert main(arguments) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["budget"] == {"amount": 25.0, "unit": "runs"}
    assert document["suggestions"][0]["runs"] == 5
    assert main([*arguments, "--budget", "lots"]) == 2
    assert "check --budget" in capsys.readouterr().err
    assert main([*arguments, "--candidates", "x=1"]) == 2
    assert "check --candidates" in capsys.readouterr().err
    assert main([*arguments, "--repetitions", "0"]) == 2


def test_core_hours_need_a_time_metric(tmp_path, capsys):
    experiment = synthetic_experiment(
        {"k": lambda p: 100 * p}, {"p": P_VALUES}, noise=0.01, metric="visits"
    )
    with pytest.raises(InputError, match="no time unit"):
        advise(experiment, at="p=128", budget="2h")
    advice = advise(experiment, at="p=128", budget=10)
    assert advice.core_hours is None and "core-hours" not in render(advice)


def test_a_large_p_point_is_advised_when_forms_part_only_there_though_it_costs_more():
    # 5 + 0.05 p measured at p = 2..32 with 5 % noise: the p term is at most a quarter of the
    # value, so forms such as log p, p^0.5 or p fit the data alike and part ways only at large
    # p. With 3 core-hours (p=128: about 2.6 h; p=2: about 50 s), the plan by gain per cost buys
    # cheap points (p=2 tells rivals apart a little, then p=64); the plan by gain alone buys
    # p=128, which leaves less variance at p=1024 and is kept.
    experiment = synthetic_experiment(
        {"k": lambda p: 5 + 0.05 * p}, {"p": [2, 4, 8, 16, 32]}, noise=0.05, repetitions=5
    )
    advice = advise(experiment, at="p=1024", candidates="p=2..256*2", budget="3h")
    only = advice.suggestions[0]  # the rest of the budget goes to cheap points
    assert only.point == {"p": 128.0}
    cheapest = 2 * 5 * 5.1 / 3600  # p=2: 5 runs of about 5.1 s on 2 cores
    assert only.core_hours > 100 * cheapest
    assert "settles the models' form" in only.reasons[0]
    assert advice.width_after < 0.7 * advice.width_before
    # With a budget that allows p=256 as well, the advice goes nearer the target still.
    assert advise(experiment, at="p=1024", candidates="p=2..256*2", budget="12h").suggestions[
        0
    ].point == {"p": 256.0}


def test_a_target_whose_prediction_overflows_is_one_input_error(tmp_path, capsys):
    # Before: a segmented model predicting 1e200 at the target crashed `advise` with
    # OverflowError (its variance, the prediction squared, exceeds the doubles).
    models = fit(
        synthetic_experiment({"k": lambda p: 3 + 2 * p}, {"p": [2, 4, 8, 16, 32]}, noise=0.01),
    )
    experiment = synthetic_experiment({"k": lambda p: 3 + 2 * p}, {"p": [2, 4, 8, 16, 32]})
    with pytest.raises(InputError, match="too large to weigh"):
        advise(experiment, at="p=1e200", budget="2h", models=models)
    path = tmp_path / "data.csv"
    write_experiment(experiment, path)
    assert main(["advise", str(path), "--at", "p=1e200", "--budget", "2h"]) == 2
    err = capsys.readouterr().err
    assert "too large to weigh" in err and "Traceback" not in err


def test_a_cost_beyond_the_doubles_is_never_affordable_and_warns_nothing(recwarn):
    # Before: p=1e308 made the core-hours overflow with a RuntimeWarning on stderr.
    experiment = synthetic_experiment(
        {"k": lambda p: 1 + np.log2(p)}, {"p": [2, 4, 8, 16, 32]}, noise=0.01
    )
    advice = advise(experiment, at="p=1e308", budget="2h")
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    assert advice.core_hours is not None and advice.core_hours <= 2


def test_a_point_beyond_the_target_is_not_said_to_extend_toward_it():
    # Before: with --candidates up to 1e12 and the target at p=100, p=1e12 was explained as
    # "extends 'p' toward the target".
    experiment = synthetic_experiment(
        {"k": lambda p: 1 + 0.5 * p}, {"p": [2, 4, 8, 16, 32]}, noise=0.01
    )
    advice = advise(experiment, at="p=100", candidates="p=64,1e12", budget="20runs")
    reasons = {s.point["p"]: " ".join(s.reasons) for s in advice.suggestions}
    assert all("past the target" in text for p, text in reasons.items() if p > 100)
    assert all("toward the target" not in text for p, text in reasons.items() if p > 100)
    assert any(p > 100 for p in reasons)


def test_models_without_uncertainty_give_an_unknown_interval_not_a_zero_one(tmp_path):
    # Before: models read back without "uncertainty" gave "95% interval ±0.0%", and with
    # --goal 0.1 the advice stopped at once as if the goal were reached (no suggestion).
    from perfcast.api import ModelSet

    experiment = synthetic_experiment(
        {"k": lambda p: 1 + 0.5 * p}, {"p": [2, 4, 8, 16, 32]}, noise=0.01
    )
    document = json.loads(fit(experiment).to_json())
    for model in document["models"]:
        del model["uncertainty"]
    models = ModelSet.from_json(json.dumps(document))
    advice = advise(experiment, at="p=256", goal=0.1, models=models)
    assert advice.width_before == np.inf and advice.suggestions
    assert "unknown" in " ".join(w.message for w in advice.warnings)
    text = render(advice)
    assert "±0.0%" not in text and "±unbounded" in text
    out = json.loads(render(advice, "json"), parse_constant=pytest.fail)
    assert out["width_before"] is None


def total_cost_interval(models, suggestion) -> tuple[float, float]:
    """The interval of a suggestion's core-hours as the advice documents it: the kernels'
    standard deviations (from their intervals, in log space: relative noise) added as
    variances of the total, whose interval is symmetric in log space."""
    from scipy import special

    z = special.ndtri(0.975)
    predictions = predict(models, suggestion.point)
    assert all(m.uncertainty.relative for m in models.models)
    total = sum(p.value for p in predictions)
    variance = sum((p.value * np.log(p.upper / p.value) / z) ** 2 for p in predictions)
    factor = np.exp(z * np.sqrt(variance) / total)
    hours = suggestion.point["p"] * suggestion.runs / 3600
    return total / factor * hours, total * factor * hours


def test_an_upper_price_keeps_the_points_within_the_budget_at_their_intervals_upper_ends(
    two_parameters, tmp_path, capsys
):
    # Priced at the models' predictions, the plan's points would cost more than the budget if
    # each took the upper end of its interval; priced at those ends, they cost at most the
    # budget there, and the plan spends less by the models' own price.
    models = fit(two_parameters)

    def upper_hours(suggestions) -> float:
        return sum(total_cost_interval(models, s)[1] for s in suggestions)

    plain = advise(two_parameters, models, at="p=1024,n=1.6e6", budget="0.2h")
    cautious = advise(two_parameters, models, at="p=1024,n=1.6e6", budget="0.2h", price="upper")
    assert cautious.suggestions
    assert upper_hours(cautious.suggestions) <= 0.2 * (1 + 1e-9) < upper_hours(plain.suggestions)
    assert cautious.core_hours < plain.core_hours <= 0.2
    # Each suggestion still reports its predicted cost.
    first = cautious.suggestions[0]
    seconds = sum(p.value for p in predict(models, first.point))
    assert first.core_hours == pytest.approx(seconds * first.point["p"] * 5 / 3600)
    with pytest.raises(ValueError, match="price: one of prediction, upper"):
        advise(two_parameters, models, at="p=1024,n=1.6e6", price="lowest")
    path = tmp_path / "e.csv"
    write_experiment(two_parameters, path)
    arguments = ["advise", str(path), "--at", "p=1024,n=1.6e6", "--budget", "0.2h"]
    assert main([*arguments, "--price", "upper", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [s["point"] for s in document["suggestions"]] == [s.point for s in cautious.suggestions]


def test_the_plans_cost_comes_with_its_interval_and_a_warning_when_it_may_exceed_the_budget(
    two_parameters, tmp_path, capsys
):
    models = fit(two_parameters)

    plain = advise(two_parameters, models, at="p=1024,n=1.6e6", budget="0.2h")
    for s in plain.suggestions:
        low, high = s.core_hours_interval
        assert (low, high) == pytest.approx(total_cost_interval(models, s))
        assert low <= s.core_hours <= high
        # The kernels' spreads add as variances: narrower than their upper ends summed.
        summed = sum(p.upper for p in predict(models, s.point)) * s.point["p"] * s.runs / 3600
        assert high < summed
    low, high = plain.core_hours_interval
    assert low == pytest.approx(sum(s.core_hours_interval[0] for s in plain.suggestions))
    assert high == pytest.approx(sum(s.core_hours_interval[1] for s in plain.suggestions))
    # Priced at the predictions the plan fits the budget, but its upper end does not: it says so.
    assert plain.core_hours <= 0.2 < high
    codes = [w.code for w in plain.warnings]
    assert "budget-may-be-exceeded" in codes
    cautious = advise(two_parameters, models, at="p=1024,n=1.6e6", budget="0.2h", price="upper")
    assert cautious.core_hours_interval[1] <= 0.2 * (1 + 1e-9)
    assert "budget-may-be-exceeded" not in [w.code for w in cautious.warnings]
    # A budget in runs has no such warning, but the cost is still given with its interval.
    in_runs = advise(two_parameters, models, at="p=1024,n=1.6e6", budget=10)
    assert in_runs.core_hours_interval is not None
    assert "budget-may-be-exceeded" not in [w.code for w in in_runs.warnings]

    path = tmp_path / "e.csv"
    write_experiment(two_parameters, path)
    arguments = ["advise", str(path), "--at", "p=1024,n=1.6e6", "--budget", "0.2h"]
    assert main([*arguments, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out, parse_constant=pytest.fail)
    assert document["price"] == "prediction"
    assert document["core_hours_interval"] == pytest.approx(list(plain.core_hours_interval))
    assert document["suggestions"][0]["core_hours_interval"] == pytest.approx(
        list(plain.suggestions[0].core_hours_interval)
    )
    assert "budget-may-be-exceeded" in [w["code"] for w in document["warnings"]]
    assert main(arguments) == 0
    text = capsys.readouterr().out
    assert f"({low:.3g}-{high:.3g} at 95%)" in text
    assert "may take up to" in text and "beyond the budget of 0.2 core-hours" in text


def test_upper_first_prices_only_the_point_to_run_now_at_its_upper_end(two_parameters):
    # A loop runs the first suggestion now and asks again with what is left: only that point
    # must fit at the upper end of its cost; the rest of the plan is priced at the predictions.
    models = fit(two_parameters)
    budget = 0.2
    plain = advise(two_parameters, models, at="p=1024,n=1.6e6", budget=f"{budget}h")
    first_too_dear = plain.suggestions[0].core_hours_interval[1] > budget
    loop = advise(
        two_parameters, models, at="p=1024,n=1.6e6", budget=f"{budget}h", price="upper-first"
    )
    cautious = advise(
        two_parameters, models, at="p=1024,n=1.6e6", budget=f"{budget}h", price="upper"
    )
    first, *rest = loop.suggestions
    assert first.core_hours_interval[1] <= budget * (1 + 1e-9)
    assert first.core_hours_interval[1] + sum(s.core_hours for s in rest) <= budget * (1 + 1e-9)
    assert loop.price == "upper-first"
    # It plans more than the cautious price allows, and differs from the plain plan only as far
    # as the plain plan's first point was too dear at its upper end.
    assert loop.core_hours >= cautious.core_hours
    assert (loop.suggestions[0].point != plain.suggestions[0].point) <= first_too_dear


def test_probe_first_commits_to_one_run_of_the_first_point_at_its_upper_end(two_parameters):
    # A loop that runs the first point once and prices its other runs after that run commits
    # only to one run at the upper end: the first point may be dearer at its upper end than
    # upper-first allows, and the plan's price is that run's upper end plus the predictions.
    models = fit(two_parameters)
    budget = 0.2
    probe = advise(
        two_parameters, models, at="p=1024,n=1.6e6", budget=f"{budget}h", price="probe-first"
    )
    first, *rest = probe.suggestions
    runs = first.runs
    committed = first.core_hours_interval[1] / runs + first.core_hours * (runs - 1) / runs
    assert committed + sum(s.core_hours for s in rest) <= budget * (1 + 1e-9)
    assert probe.price == "probe-first"
    upper_first = advise(
        two_parameters, models, at="p=1024,n=1.6e6", budget=f"{budget}h", price="upper-first"
    )
    assert probe.core_hours >= upper_first.core_hours


def test_the_next_runs_price_is_the_prediction_interval_of_a_new_run():
    # Two kernels whose runs share their noise (one program run measures both): the price of
    # one more run at a point is the measured mean per run times 1 + z * s * sqrt(1 + 1/k),
    # s the pooled relative spread of a run's total around its point's mean.
    from scipy import special

    from perfcast.analyze.advice import measured_core_hours, next_run_core_hours

    factors = {(2.0, 10.0): [0.9, 1.1], (4.0, 10.0): [0.8, 1.0, 1.2], (8.0, 10.0): [1.0]}
    rows = []
    for (p, n), runs in factors.items():
        for factor in runs:
            for kernel, share in (("a", 3.0), ("b", 1.0)):
                rows.append(
                    {"kernel": kernel, "metric": "time", "p": p, "n": n, "value": share * factor}
                )
    experiment = Experiment.from_frame(pd.DataFrame(rows))
    deviations = [-0.1, 0.1, -0.2, 0.0, 0.2]
    spread = np.sqrt(np.sum(np.square(deviations)) / 3)  # (2 - 1) + (3 - 1) degrees of freedom
    z = special.ndtri(0.975)
    for point, runs in ((2.0, 10.0), 2), ((8.0, 10.0), 1):
        at = {"p": point[0], "n": point[1]}
        mean = measured_core_hours(experiment, "time", at, 1)
        expected = mean * (1 + z * spread * np.sqrt(1 + 1 / runs))
        assert next_run_core_hours(experiment, "time", at) == pytest.approx(expected)
    assert next_run_core_hours(experiment, "time", {"p": 16.0, "n": 10.0}) is None
    once = experiment.frame[experiment.frame.p == 8.0]
    assert next_run_core_hours(Experiment.from_frame(once), "time", {"p": 8.0, "n": 10.0}) == (
        np.inf
    )
