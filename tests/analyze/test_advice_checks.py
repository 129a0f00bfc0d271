"""``perfcast advise`` on Extra-P test files and hostile ones: advice that buys nothing says so,
in the text and in the JSON; a kernel that takes no time leaves the cost interval bounded."""

from __future__ import annotations

import json

import numpy as np
import pytest

from perfcast.api import advise, fit, load
from perfcast.cli import main
from tests.conftest import TESTDATA, synthetic_experiment

ONE_PARAMETER = str(TESTDATA / "extrap" / "text" / "one_parameter_1.txt")  # x = 10 .. 60


def advice_json(capsys, *argv: str) -> dict:
    assert main(["advise", ONE_PARAMETER, "--at", "x=4096", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_points_after_the_interval_reached_its_floor_are_flagged(capsys):
    # Before: five points for 1.2e4 core-hours, the last four "narrowing" the interval from
    # +-4.7% to +-4.7% (the floor), and no warning.
    document = advice_json(capsys)
    widths = [s["width_after"] for s in document["suggestions"]]
    assert len(widths) == 5 and widths[0] == document["floor"] == widths[-1]
    (warning,) = [w for w in document["warnings"] if w["code"] == "no-narrowing"]
    assert "only the first 1 of the 5 suggested points narrow" in warning["message"]
    assert "what measuring cannot go below there" in warning["message"]
    assert main(["advise", ONE_PARAMETER, "--at", "x=4096"]) == 0
    assert "only the first 1 of the 5 suggested points" in capsys.readouterr().out


def test_a_plan_that_narrows_nothing_says_so():
    # A segmented model whose interval at the target is its floor: every point of the plan
    # leaves it where it is.
    grid = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    experiment = synthetic_experiment(
        {"k": lambda p: np.where(p < 60, 10 + 0.5 * p, -30 + 0.02 * p**1.5 + 0.3 * p)},
        {"p": grid},
        noise=0.03,
    )
    models = fit(experiment, modeler="segmented")
    advice = advise(experiment, models, at="p=8192", candidates="p=2..8192*2", budget=40)
    assert advice.suggestions and advice.width_after == advice.width_before
    (warning,) = [w for w in advice.warnings if w.code == "no-narrowing"]
    assert warning.message.startswith(f"none of the {len(advice.suggestions)} suggested points")


def test_a_budget_below_one_point_says_so(capsys):
    # Before: "no candidate point narrows the interval within the budget" and no warning,
    # as if no point could help.
    for budget, price in (("1runs", "6 runs, its repetitions"), ("1e-9h", "core-hours for its")):
        document = advice_json(capsys, "--budget", budget)
        assert document["suggestions"] == []
        (warning,) = document["warnings"]
        assert warning["code"] == "budget-too-small" and price in warning["message"]


def test_advice_that_narrows_with_every_point_carries_no_such_warning(capsys):
    document = advice_json(capsys, "--budget", "6runs")
    assert len(document["suggestions"]) == 1
    assert not [
        w for w in document["warnings"] if w["code"] in ("no-narrowing", "budget-too-small")
    ]


def test_a_kernel_that_takes_no_time_leaves_the_price_bounded(tmp_path, capsys):
    # Before: the zero kernel's relative spread was 0 * log(upper / 0), NaN, so every point's
    # cost interval was "0-unbounded" and --price upper could afford no point at all.
    path = tmp_path / "regions.txt"
    lines = ["PARAMETER p", "POINTS ( 2 ) ( 4 ) ( 8 ) ( 16 ) ( 32 )", "REGION solve", "METRIC time"]
    lines += [f"DATA {p:.2f} {p * 0.98:.2f} {p * 1.01:.2f}" for p in (1.0, 2.0, 4.0, 8.0, 16.0)]
    lines += ["REGION never_entered", "METRIC time"] + ["DATA 0 0 0"] * 5
    path.write_text("\n".join(lines) + "\n")
    argv = ["advise", str(path), "--at", "p=1024", "--format", "json"]
    assert main([*argv, "--budget", "1000h"]) == 0
    plain = json.loads(capsys.readouterr().out)
    for suggestion in plain["suggestions"]:
        low, high = suggestion["core_hours_interval"]
        assert 0 < low < suggestion["core_hours"] < high < 1e6
    assert main([*argv, "--budget", "1000h", "--price", "upper"]) == 0
    assert json.loads(capsys.readouterr().out)["suggestions"]


def test_models_without_uncertainty_get_no_narrowing_warning_of_an_infinite_width(tmp_path, capsys):
    # Before the fix of this very warning: "none of the 5 suggested points narrows the
    # expected interval at the target (±inf%, ...)" next to the no-interval warning.
    assert main(["model", ONE_PARAMETER, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    for model in document["models"]:
        del model["uncertainty"]
    models = tmp_path / "models.json"
    models.write_text(json.dumps(document))
    codes = [w["code"] for w in advice_json(capsys, "--models", str(models))["warnings"]]
    assert codes == ["no-interval"]


def test_an_inclusive_metric_counts_only_the_roots_of_the_call_tree(tmp_path):
    # Before: the target's total and every point's price summed the inclusive times of main and
    # of the kernels inside it (about twice the program's time here; ~7x on Caliper's LULESH).
    values = {"main": lambda p: 2 + 2 * p, "main->a": lambda p: 2 * p, "main->b": lambda p: 1}
    lines = ["PARAMETER p", "POINTS ( 2 ) ( 4 ) ( 8 ) ( 16 ) ( 32 ) ( 64 )"]
    for kernel, value in values.items():
        lines += [f"REGION {kernel}", "METRIC time_inclusive"]
        lines += [
            f"DATA {value(p) * 0.99:.6g} {value(p):.6g} {value(p) * 1.01:.6g}"
            for p in (2, 4, 8, 16, 32, 64)
        ]
    path = tmp_path / "tree.txt"
    path.write_text("\n".join(lines) + "\n")
    experiment = load(path)
    models = fit(experiment)
    (main,) = [m for m in models.models if m.kernel == "main"]
    advice = advise(experiment, models, at="p=1024", budget=6)
    assert advice.prediction == pytest.approx(float(main.evaluate({"p": np.array([1024.0])})[0]))
    assert advice.prediction == pytest.approx(2 + 2 * 1024, rel=0.05)


def test_a_negligible_kernel_whose_bound_overflows_leaves_the_price_bounded(capsys):
    # Caliper's LULESH profiles (27 to 343 ranks): MPI_Allreduce, 5e-5 s with a selection
    # spread so wide that its upper bound at p=1372 is beyond the doubles. Before: every far
    # point cost "0-unbounded" core-hours, so --price upper could buy none of them.
    path = str(TESTDATA / "caliper" / "mpi_scaling_cali")
    argv = ["advise", path, "--metric", "time_inclusive_rank_max", "--at", "p=4096"]
    assert main([*argv, "--budget", "20h", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    far = [s for s in document["suggestions"] if s["point"]["p"] > 343]
    assert far
    for suggestion in far:
        low, high = suggestion["core_hours_interval"]
        assert high is not None and 0 < low < suggestion["core_hours"] < high
    assert main([*argv, "--budget", "200h", "--price", "upper", "--format", "json"]) == 0
    upper = json.loads(capsys.readouterr().out)
    assert any(s["point"]["p"] > 343 for s in upper["suggestions"])
