"""Learners that form products (``log-linear``, ``products``) and the choice among the methods
by cross-validation (``auto``): a whole run's count is its step count times one step's counts,
which no sum over the counts forms."""

from __future__ import annotations

import json

import numpy as np
import pytest

import perfcast.api as api
from perfcast.cli import main
from perfcast.core.errors import InputError
from perfcast.io.run_table import RunTable, from_columns, write_run_table
from perfcast.model.learned import METHODS, LearnedModel
from perfcast.model.products import CountProducts, PowerProduct, forward_selection


def _stepped_program(runs: int, seed: int, noise_features: int = 10) -> RunTable:
    """A made-up N-body code recording its first step: the whole run's instructions are a
    fixed part, a set-up over the bodies, and ``steps`` times one step's work, whose inner
    loop depends on the algorithm (all pairs, or the pairs within a cutoff); 0.5 % of it
    varies unexplained."""
    rng = np.random.default_rng(seed)
    n = rng.integers(100, 600, runs).astype(float)
    steps = rng.integers(2, 8, runs).astype(float)
    algorithm = rng.integers(0, 2, runs).astype(float)
    cutoff = rng.uniform(0.1, 0.4, runs)
    pairs = np.where(algorithm == 0, n * n / 2, 3 * n * n * cutoff**2)
    columns = {
        "n": n,
        "steps": steps,
        "algorithm": algorithm,
        "cutoff": cutoff,
        "step:inner": pairs,
        "step:outer": n,
        "setup": 50 * n,
        "step:cells": np.where(algorithm == 1, n, 0.0),
    }
    for k in range(noise_features):
        columns[f"unrelated{k}"] = rng.uniform(1, 100, runs)
    work = 1e5 + 30 * columns["setup"] + steps * (12 * pairs + 40 * n)
    columns["instructions"] = work * rng.lognormal(0.0, 0.005, runs)  # what the counts miss
    return from_columns(columns, source="runs.csv")


def _error(model: LearnedModel, table: RunTable) -> float:
    truth = table.numeric["instructions"]
    predicted = np.array([p.value for p in model.predict(table)])
    return float(np.mean(np.abs(predicted - truth) / truth))


@pytest.fixture(scope="module")
def stepped() -> tuple[RunTable, RunTable]:
    return _stepped_program(40, seed=1), _stepped_program(200, seed=2)


def test_products_of_steps_and_step_counts_are_found_where_sums_fail(stepped):
    train, test = stepped
    products = LearnedModel("products", trees=30).fit(train, "instructions")
    sums = LearnedModel("nn-linear", trees=30).fit(train, "instructions")
    assert _error(products, test) < 0.02
    assert _error(sums, test) > 0.05
    expression = products.expression()
    assert "steps * step:inner" in expression or "step:inner * steps" in expression
    assert products.cv_error_ < 0.02


def test_a_product_of_powers_is_learned_with_zeros_as_an_absent_factor():
    rng = np.random.default_rng(3)
    runs = 60
    n = rng.uniform(10, 1000, runs)
    steps = rng.integers(1, 20, runs).astype(float)
    cells = np.where(rng.uniform(0, 1, runs) < 0.5, 0.0, rng.uniform(2, 50, runs))
    unrelated = rng.uniform(-1, 1, runs)
    time = 2e-6 * n**2 * steps * np.where(cells > 0, 0.5 * cells**0.5, 1.0)
    columns = {"n": n, "steps": steps, "cells": cells, "unrelated": unrelated, "time": time}
    table = from_columns(columns, source="powers.csv")
    train, test = table.take(np.arange(40)), table.take(np.arange(40, 60))
    model = LearnedModel("log-linear").fit(train, "time")
    truth = test.numeric["time"]
    predicted = np.array([p.value for p in model.predict(test)])
    assert np.max(np.abs(predicted - truth) / truth) < 1e-6
    estimator = model.estimator_
    assert isinstance(estimator, PowerProduct)
    kinds = {(model.features_[j], kind) for j, kind in estimator.terms_}
    assert kinds == {
        ("n", "log"),
        ("steps", "log"),
        ("cells", "log where positive"),
        ("cells", "present"),
    }
    powers = dict(zip(estimator.terms_, estimator.coefficients_[1:], strict=True))
    assert powers[(0, "log")] == pytest.approx(2.0)
    assert powers[(2, "log where positive")] == pytest.approx(0.5)
    assert "n^2" in model.expression()
    # a zero where the training runs had only positive values: its smallest training value
    zero = from_columns({**{k: v[:1] for k, v in columns.items()}, "n": np.array([0.0])})
    (prediction,) = model.predict(zero)
    assert np.isfinite(prediction.value) and prediction.value > 0
    assert any("outside the training range" in w for w in prediction.warnings)


def test_forward_selection_takes_the_columns_that_explain_the_target():
    rng = np.random.default_rng(4)
    candidates = rng.normal(size=(30, 12))
    target = 3 * candidates[:, 4] - 2 * candidates[:, 9] + 0.01 * rng.normal(size=30)
    chosen = forward_selection(np.ones((30, 1)), candidates, target)
    assert chosen[:2] == [4, 9]
    assert len(chosen) <= 4
    # nothing is chosen where nothing explains the target, and never more than the runs allow
    assert forward_selection(np.ones((30, 1)), candidates, rng.normal(size=30)) == []
    assert len(forward_selection(np.ones((6, 1)), candidates[:6], target[:6])) <= 2


def test_count_products_keep_non_negative_coefficients():
    rng = np.random.default_rng(5)
    x = rng.uniform(1, 10, (50, 3))
    y = 100 + 4 * x[:, 0] * x[:, 1] + 0.5 * x[:, 2]
    model = CountProducts(["a", "b", "c"]).fit(x, np.log(y))
    assert np.all(model.coefficients_ >= 0)
    assert np.allclose(np.exp(model.predict(x)), y, rtol=1e-6)
    assert "4 * a * b" in model.expression()


def test_auto_keeps_the_method_of_least_cross_validated_error(stepped):
    train, test = stepped
    model = LearnedModel("auto", trees=30).fit(train, "instructions")
    selection = model.selection_
    assert selection is not None
    assert set(selection["errors"]) == set(METHODS)
    assert selection["chosen"] == min(selection["errors"], key=selection["errors"].get)
    assert model.method == selection["chosen"] == "products"
    alone = LearnedModel("products", trees=30).fit(train, "instructions")
    assert model.cv_error_ == pytest.approx(alone.cv_error_)
    assert _error(model, test) < 0.02


def test_auto_skips_the_positive_only_methods_for_a_target_with_negatives():
    rng = np.random.default_rng(6)
    x = rng.uniform(-1, 1, 40)
    table = from_columns({"x": x, "gain": 3 * x + 0.01 * rng.normal(size=40)}, source="g.csv")
    model = LearnedModel("auto", trees=20).fit(table, "gain")
    assert model.selection_ is not None
    skipped = model.selection_["skipped"]
    # pmnf too: it models features above 0, and x has none
    assert set(skipped) == {"nn-linear", "log-linear", "products", "pmnf"}
    assert "values <= 0" in skipped["products"] and "above 0" in skipped["pmnf"]
    assert model.method in ("extra-trees", "forest", "poly-lasso")
    with pytest.raises(InputError, match="the products method learns positive counts"):
        LearnedModel("products").fit(table, "gain")


@pytest.mark.parametrize("method", ["log-linear", "products", "auto"])
def test_model_file_round_trip_keeps_predictions_formula_and_choice(stepped, tmp_path, method):
    train, test = stepped
    model = api.learn(train, "instructions", method=method, trees=20)
    path = tmp_path / "model.json"
    api.save_learned(model, path)
    loaded = api.load_learned(path)
    before = [(p.value, p.lower, p.upper) for p in model.predict(test)]
    after = [(p.value, p.lower, p.upper) for p in loaded.predict(test)]
    assert after == before
    assert loaded.expression() == model.expression() is not None
    assert loaded.selection_ == model.selection_
    assert (loaded.selection_ is None) == (method != "auto")
    assert json.loads(path.read_text())["settings"]["method"] == model.method


def test_learn_auto_and_predict_with_intervals_on_the_command_line(stepped, tmp_path, capsys):
    train, test = stepped
    write_run_table(train, tmp_path / "runs.csv")
    new = {k: v for k, v in test.numeric.items() if k != "instructions"}
    write_run_table(from_columns(new), tmp_path / "new.csv")
    model = tmp_path / "model.json"
    status = main(["learn", str(tmp_path / "runs.csv"), "--target", "instructions",
                   "--method", "auto", "--trees", "20", "-o", str(model)])  # fmt: skip
    assert status == 0
    summary = capsys.readouterr().out
    assert "learned log(instructions) with products from 40 runs" in summary
    assert "chosen by cross-validation" in summary and "nn-linear" in summary
    assert "model: " in summary and "steps" in summary
    assert (
        main(["predict", str(model), "--runs", str(tmp_path / "new.csv"), "--format", "json"]) == 0
    )
    rows = json.loads(capsys.readouterr().out)["predictions"]
    truth = test.numeric["instructions"]
    assert [r["row"] for r in rows] == list(range(test.rows))
    assert all(r["interval"][0] <= r["prediction"] <= r["interval"][1] for r in rows)
    inside = np.mean(
        [r["interval"][0] <= t <= r["interval"][1] for r, t in zip(rows, truth, strict=True)]
    )
    assert inside >= 0.9
    predicted = np.array([r["prediction"] for r in rows])
    assert np.mean(np.abs(predicted - truth) / truth) < 0.02
