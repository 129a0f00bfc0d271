"""Saved models keep their prediction intervals; a model without fit uncertainty says it has
no interval instead of giving one of width 0."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

import perfcast
from perfcast.cli import main
from perfcast.model.modelset import ModelSet
from tests.analyze.synthetic import experiment

GRID = {"p": [2, 4, 8, 16, 32]}


@pytest.fixture(scope="module")
def models() -> ModelSet:
    truth = {"solve": lambda p: 1 + 0.5 * p, "halo": lambda p: 2 + 3 * np.log2(p)}
    return perfcast.fit(experiment(truth, GRID, noise=0.05, repetitions=3))


def test_intervals_survive_a_round_trip_through_json(models):
    again = ModelSet.from_json(models.to_json())
    for before, after in zip(
        perfcast.predict(models, "p=256"), perfcast.predict(again, "p=256"), strict=True
    ):
        assert after.lower < after.value < after.upper
        assert (after.value, after.lower, after.upper) == (before.value, before.lower, before.upper)
        assert not any(w.code == "no-interval" for w in after.warnings)


def test_a_model_without_uncertainty_has_no_interval_and_says_so(models, tmp_path, capsys):
    document = json.loads(models.to_json())
    for model in document["models"]:
        del model["uncertainty"]
    bare = ModelSet.from_json(json.dumps(document))
    predictions = perfcast.predict(bare, "p=64")
    assert all(np.isnan(p.lower) and np.isnan(p.upper) for p in predictions)
    assert all(p.warnings[0].code == "no-interval" for p in predictions)
    out = json.loads(perfcast.render(predictions, "json"))["predictions"]
    assert all(p["lower"] is None and p["upper"] is None for p in out)
    assert "none" in perfcast.render(predictions)
    rows = list(csv.DictReader(io.StringIO(perfcast.render(predictions, "csv"))))
    assert [(r["lower"], r["upper"]) for r in rows] == [("", "")] * len(predictions)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda u: u.update(covariance=[[1.0]]), "must be 2 x 2"),
        (lambda u: u.update(dof=0), "dof must be a positive integer"),
        (lambda u: u.update(noise_variance="x"), "must be a number"),
        (lambda u: u.pop("covariance"), "covariance"),
        (
            lambda u: u.update(
                extrapolation=[{"parameter": "p", "largest": 32, "rate_variance": -1}]
            ),
            "variances >= 0",
        ),
        # Negative variances were read and crashed `advise` with a math domain error.
        (lambda u: u.update(noise_variance=-5.0, loo_variance=-5.0), "must be >= 0"),
        # An extrapolation record of a parameter the model lacks, or a largest value <= 0,
        # silently changed the intervals beyond the measurements.
        (
            lambda u: u.update(
                extrapolation=[{"parameter": "zz", "largest": 32, "rate_variance": 1}]
            ),
            "unknown parameter",
        ),
        (
            lambda u: u.update(
                extrapolation=[{"parameter": "p", "largest": -32, "rate_variance": 1}]
            ),
            "largest > 0",
        ),
    ],
)
def test_a_damaged_uncertainty_is_refused_naming_the_file(
    models, tmp_path, capsys, change, message
):
    document = json.loads(models.to_json())
    change(document["models"][0]["uncertainty"])
    path = tmp_path / "models.json"
    path.write_text(json.dumps(document))
    data = tmp_path / "data.csv"
    perfcast.save(experiment({"solve": lambda p: 1 + 0.5 * p}, GRID), data)
    assert main(["diagnose", str(data), "--models", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and message in err and "Traceback" not in err


@pytest.mark.parametrize("constant", [float("nan"), float("inf")])
def test_a_saved_model_with_a_non_finite_constant_is_refused(models, tmp_path, capsys, constant):
    # Before, a NaN constant was read and `advise` printed "prediction -" with exit status 0.
    document = json.loads(models.to_json())
    document["models"][0]["constant"] = constant
    path = tmp_path / "models.json"
    path.write_text(json.dumps(document))
    data = tmp_path / "data.csv"
    perfcast.save(experiment({"solve": lambda p: 1 + 0.5 * p}, GRID), data)
    assert main(["advise", str(data), "--at", "p=64", "--models", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "finite" in err and "Traceback" not in err


@pytest.mark.parametrize("change", [{"smape": "abc"}, {"rss": [1]}, {"adj_r2": True}])
def test_a_saved_quality_figure_of_the_wrong_type_is_refused(models, tmp_path, capsys, change):
    # Before: {"smape": "abc"} was read and `perfcast report --models` crashed with a TypeError.
    document = json.loads(models.to_json())
    document["models"][0]["quality"].update(change)
    path = tmp_path / "models.json"
    path.write_text(json.dumps(document))
    data = tmp_path / "data.csv"
    perfcast.save(experiment({"solve": lambda p: 1 + 0.5 * p}, GRID), data)
    out = tmp_path / "report.html"
    assert main(["report", str(data), "--models", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "must be a number or null" in err and "Traceback" not in err


@pytest.mark.parametrize("ranges", [{"p": "19"}, {"p": [1, float("nan")]}, {"p": [32, 2]}, [1]])
def test_malformed_measured_ranges_are_refused(models, ranges):
    # Before: "19" was read as the range 1..9 and [1, NaN] silently turned off the
    # far-extrapolation warning of every prediction.
    document = json.loads(models.to_json())
    document["ranges"] = ranges
    with pytest.raises(perfcast.InputError, match="ranges"):
        ModelSet.from_json(json.dumps(document), source="m.json")
