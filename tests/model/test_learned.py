"""Learned run-time models: accuracy from run-time features, reductions, transfer, intervals,
the model file and its version checks."""

from __future__ import annotations

import json

import numpy as np
import pytest

import perfcast.api as api
from perfcast.core.errors import InputError
from perfcast.io.run_table import from_columns
from perfcast.model.learned import LearnedModel


def _program(runs, seed=0, slowdown=1.0):
    """Runs of a made-up solver: time follows the iterations it took, which depend on the
    input's tolerance and on its (unnamed) data, so the parameters alone tell them poorly."""
    rng = np.random.default_rng(seed)
    n = np.exp(rng.uniform(np.log(1e3), np.log(1e5), runs)).round()
    tolerance = 10.0 ** rng.uniform(-8, -2, runs)
    difficulty = rng.uniform(1.0, 4.0, runs)  # hidden: a property of the generated data
    iterations = np.ceil(difficulty * -np.log10(tolerance) * 10)
    noise = rng.lognormal(0.0, 0.02, runs)
    time = 1e-7 * n * iterations * noise * slowdown
    columns = {
        "n": n,
        "tolerance": tolerance,
        "solve:loop_trips": iterations,
        "noise_feature": rng.uniform(0, 1, runs),
        "time": time,
        "cost:solve:loop_trips": 1e-4 * time,
        "cost:noise_feature": 0.2 * time,
    }
    return from_columns(columns, source="runs.csv")


def _error(model, table):
    truth = table.numeric["time"]
    predicted = np.array([p.value for p in model.predict(table)])
    return float(np.mean(np.abs(predicted - truth) / truth))


@pytest.fixture(scope="module")
def runs():
    return _program(400)


def test_run_time_features_beat_the_parameters_alone(runs):
    train, test = runs.take(np.arange(300)), runs.take(np.arange(300, 400))
    with_features = LearnedModel(trees=60).fit(train, "time")
    parameters_only = LearnedModel(trees=60).fit(train, "time", features=["n", "tolerance"])
    assert _error(with_features, test) < 0.05
    assert _error(parameters_only, test) > 2 * _error(with_features, test)
    assert with_features.cv_error_ < 0.05
    assert list(with_features.importances_)[:2] == ["solve:loop_trips", "n"] or list(
        with_features.importances_
    )[:2] == ["n", "solve:loop_trips"]


@pytest.mark.parametrize("method", ["extra-trees", "forest", "poly-lasso", "pmnf"])
def test_every_method_learns_and_its_intervals_cover(runs, method):
    train, test = runs.take(np.arange(300)), runs.take(np.arange(300, 400))
    model = LearnedModel(method, trees=40).fit(train, "time", exclude=["noise_feature"])
    predictions = model.predict(test, level=0.9)
    truth = test.numeric["time"]
    inside = np.mean([p.lower <= t <= p.upper for p, t in zip(predictions, truth, strict=True)])
    assert all(p.lower <= p.value <= p.upper for p in predictions)
    assert inside >= 0.75, (method, inside)
    assert _error(model, test) < 0.6
    if method == "pmnf":
        assert "n" in model.expression() and "loop_trips" in model.expression()


def test_time_reduction_drops_costly_features_and_importance_the_weak(runs):
    model = LearnedModel(trees=40, reduce_time=0.05, reduce_importance=0.9).fit(runs, "time")
    dropped = {(d.feature, d.reduction) for d in model.dropped_}
    assert ("noise_feature", "time") in dropped
    assert "noise_feature" not in model.features_
    assert "solve:loop_trips" in model.features_ and "n" in model.features_
    assert any(d.reduction == "importance" for d in model.dropped_)
    assert model.overhead_["before"] == pytest.approx(0.2 + 1e-4)
    assert model.overhead_["after"] == pytest.approx(1e-4)
    reasons = [d.reason() for d in model.dropped_]
    assert "collecting it costs 20.0% of the run time" in reasons
    with pytest.raises(InputError, match="every feature costs more than 1.0%") as caught:
        LearnedModel(reduce_time=0.01).fit(runs, "time", features=["noise_feature"])
    assert caught.value.reason == "no-features"


def test_transfer_beats_learning_from_the_few_target_runs_alone():
    source = _program(300, seed=1)
    target = _program(210, seed=2, slowdown=3.0)
    few, held = target.take(np.arange(10)), target.take(np.arange(10, 210))
    alone = LearnedModel(trees=60).fit(few, "time")
    transferred = LearnedModel(trees=60).fit(few, "time", source=source)
    assert _error(transferred, held) < 0.5 * _error(alone, held)
    assert transferred.transfer_["source_runs"] == 300
    assert transferred.transfer_["offset"] == pytest.approx(np.log(3.0), abs=0.3)


def test_transfer_from_a_saved_model_uses_its_runs(tmp_path):
    source = _program(300, seed=1)
    path = tmp_path / "source.json"
    api.save_learned(api.learn(source, trees=30), path)
    target = _program(60, seed=2, slowdown=3.0)
    model = api.learn(target.take(np.arange(10)), transfer_from=path, trees=30)
    assert model.transfer_["source_runs"] == 300
    assert _error(model, target.take(np.arange(10, 60))) < 0.15


def test_the_model_file_round_trips_and_checks_versions(tmp_path, runs):
    model = api.learn(runs, trees=20)
    path = tmp_path / "model.json"
    api.save_learned(model, path)
    again = api.load_learned(path)
    assert [p.value for p in again.predict(runs)] == [p.value for p in model.predict(runs)]
    data = json.loads(path.read_text())
    assert data["format"] == "perfcast-learned-model"
    assert [f["name"] for f in data["features"]] == model.features_
    for key, value in (("sklearn", "0.1.0"), ("version", 99), ("perfcast", "99.0.0")):
        broken = dict(data, **{key: value})
        bad = tmp_path / f"bad-{key}.json"
        bad.write_text(json.dumps(broken))
        with pytest.raises(InputError) as caught:
            api.load_learned(bad)
        assert caught.value.reason == "incompatible-model"
        assert caught.value.source == str(bad)
    damaged = dict(data, estimator=dict(data["estimator"], sha256="0" * 64))
    (tmp_path / "damaged.json").write_text(json.dumps(damaged))
    with pytest.raises(InputError, match="damaged learned model"):
        api.load_learned(tmp_path / "damaged.json")
    # residuals null used to give NaN intervals (text 'nan', CSV 'nan'); [] an IndexError
    for residuals in (None, [], [1.0, "x"], [[0.1]]):
        (tmp_path / "r.json").write_text(json.dumps(dict(data, residuals=residuals)))
        with pytest.raises(InputError, match="damaged learned model") as caught:
            api.load_learned(tmp_path / "r.json")
        assert caught.value.reason == "bad-model"


def test_prediction_names_missing_columns_and_warns_about_the_unknown(runs):
    model = LearnedModel(trees=20).fit(runs, "time", exclude=["noise_feature"])
    lacking = from_columns({"n": [1e4]}, source="new.csv")
    with pytest.raises(InputError, match="'tolerance', 'solve:loop_trips', missing") as caught:
        model.predict(lacking)
    assert caught.value.source == "new.csv"
    far = from_columns({"n": [1e7], "tolerance": [1e-4], "solve:loop_trips": [50.0]})
    (prediction,) = model.predict(far)
    assert "n = 1e+07 lies outside the training range" in prediction.warnings[0]


def test_unseen_categories_and_untrustworthy_models_say_so():
    rng = np.random.default_rng(5)
    table = from_columns(
        {"alg": rng.choice(["a", "b"], 40).tolist(), "time": rng.lognormal(0, 1, 40).tolist()}
    )
    model = LearnedModel(trees=20).fit(table, "time")
    assert any("do not trust" in w for w in model.warnings_)
    (prediction,) = model.predict(from_columns({"alg": ["c"]}))
    assert prediction.warnings == ("alg = 'c' was never seen in training",)


def test_bad_targets_and_settings(runs):
    with pytest.raises(InputError, match="no target column 'memory'") as caught:
        LearnedModel().fit(runs, "memory")
    assert caught.value.reason == "missing-target"
    words = from_columns({"n": [1.0, 2.0], "time": ["fast", "slow"]})
    with pytest.raises(InputError, match="holds words"):
        LearnedModel().fit(words, "time")
    with pytest.raises(InputError, match="3 run\\(s\\); learning and cross-validating needs"):
        LearnedModel().fit(runs.take(np.arange(3)), "time")
    with pytest.raises(ValueError, match="method"):
        LearnedModel("svm")
    with pytest.raises(ValueError, match="trees"):
        LearnedModel(trees=1)
    with pytest.raises(InputError, match="reduction"):
        api.parse_reductions("time=2")
    assert api.parse_reductions("time=0.05,importance=0.95") == {
        "reduce_time": 0.05,
        "reduce_importance": 0.95,
    }
