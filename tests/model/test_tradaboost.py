"""Two-stage TrAdaBoost.R2: the weighted median, the weight shift towards the target runs,
the choice of step by cross-validation, and instance transfer in a learned model."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

import perfcast.api as api
from perfcast.cli import main
from perfcast.io.run_table import RunTable, from_columns, write_run_table
from perfcast.model.learned import LearnedModel
from perfcast.model.tradaboost import (
    WeightedMedianEnsemble,
    _shift_to_target,
    two_stage_tradaboost_r2,
)


class _Constant:
    def __init__(self, value: float) -> None:
        self.value = value

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.full(len(x), self.value)


def test_the_ensemble_predicts_the_weighted_median():
    learners = [_Constant(1.0), _Constant(5.0), _Constant(3.0)]
    x = np.zeros((2, 1))
    assert WeightedMedianEnsemble(learners, np.array([1.0, 1.0, 1.0])).predict(x).tolist() == [
        3.0,
        3.0,
    ]
    # 5 holds more than half the weight
    assert WeightedMedianEnsemble(learners, np.array([1.0, 3.0, 1.0])).predict(x)[0] == 5.0
    assert WeightedMedianEnsemble(learners, np.array([3.0, 1.0, 1.0])).predict(x)[0] == 1.0


def test_the_shift_gives_the_target_its_share_and_takes_most_from_the_worst_source_runs():
    weights = np.full(6, 1 / 6)
    is_source = np.array([True, True, True, True, False, False])
    residual = np.array([0.0, 0.1, 1.0, 2.0, 0.3, 0.0])
    shifted = _shift_to_target(weights, residual, is_source, 0.6)
    assert shifted.sum() == pytest.approx(1.0)
    assert shifted[~is_source].sum() == pytest.approx(0.6)
    # target runs keep their ratio; source runs lose weight in the order of their errors
    assert shifted[4] == pytest.approx(shifted[5])
    assert shifted[0] > shifted[1] > shifted[2] > shifted[3]
    assert _shift_to_target(weights, residual, is_source, 1.0)[is_source].sum() == 0.0


def _piecewise(rows: int, seed: int, flipped: bool) -> tuple[np.ndarray, np.ndarray]:
    """y = a step in x0 (its side depends on the platform) plus a slope in x1."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, (rows, 2))
    step = (x[:, 0] < 0.5) if flipped else (x[:, 0] >= 0.5)
    return x, 3.0 * step + x[:, 1]


def _tree() -> DecisionTreeRegressor:
    return DecisionTreeRegressor(min_samples_leaf=3, random_state=0)


def test_a_helpful_source_keeps_weight_and_a_contrary_one_loses_it():
    target = _piecewise(10, 1, flipped=False)
    helpful = two_stage_tradaboost_r2(_tree, _piecewise(100, 2, False), target, steps=5)
    contrary = two_stage_tradaboost_r2(_tree, _piecewise(100, 3, True), target, steps=5)
    # the helpful source keeps most of the weight, the contrary one ends with none
    assert helpful.source_share > 0.5
    assert helpful.errors[helpful.step] < 0.1 * helpful.errors[-1]
    assert contrary.step == 4 and contrary.source_share == 0.0
    assert contrary.errors[-1] < 0.5 * contrary.errors[0]
    assert len(helpful.errors) == 5 and helpful.oof.shape == (10,)
    x, y = _piecewise(200, 4, False)
    helped = np.mean(np.abs(helpful.ensemble.predict(x) - y))
    assert helped < 0.25 * np.mean(np.abs(contrary.ensemble.predict(x) - y))


def _solver(runs: int, seed: int, slowdown: float = 1.0) -> RunTable:
    """Runs of a made-up solver whose iterations depend on the tolerance and on a hidden
    property of the data: the parameters alone leave much unexplained, so a few runs of a
    platform tell little."""
    rng = np.random.default_rng(seed)
    n = np.exp(rng.uniform(np.log(1e3), np.log(1e5), runs)).round()
    tolerance = 10.0 ** rng.uniform(-8, -2, runs)
    difficulty = rng.uniform(1.0, 4.0, runs)
    iterations = np.ceil(difficulty * -np.log10(tolerance) * 10)
    time = 1e-7 * n * iterations * rng.lognormal(0.0, 0.02, runs) * slowdown
    return from_columns({"n": n, "tolerance": tolerance, "time": time}, source="runs.csv")


def _mixed_source() -> RunTable:
    """120 source runs: 90 from a platform that behaves as the target, 30 from one that is
    three times faster (instance transfer has to tell them apart)."""
    like, unlike = _solver(90, 1, slowdown=3.0), _solver(30, 3)
    return from_columns(
        {n: np.concatenate([like.column(n), unlike.column(n)]) for n in like.columns},
        source="source.csv",
    )


def _error(model: LearnedModel, table: RunTable) -> float:
    truth = table.numeric["time"]
    predicted = np.array([p.value for p in model.predict(table)])
    return float(np.mean(np.abs(predicted - truth) / truth))


def test_instance_transfer_beats_the_few_target_runs_alone():
    target = _solver(110, 2, slowdown=3.0)
    few, held = target.take(np.arange(8)), target.take(np.arange(8, 110))
    alone = LearnedModel(trees=10).fit(few, "time")
    transferred = LearnedModel(trees=10, transfer="tradaboost").fit(
        few, "time", source=_mixed_source()
    )
    assert _error(transferred, held) < 0.75 * _error(alone, held)
    record = transferred.transfer_
    assert record["method"] == "tradaboost" and record["source_runs"] == 120
    assert 0.0 < record["source_weight"] < 1.0
    assert record["error_without_source"] == pytest.approx(alone.cv_error_)
    # intervals come from the out-of-fold residuals of the target runs
    for prediction in transferred.predict(held):
        assert prediction.lower <= prediction.value <= prediction.upper


def test_the_command_line_transfers_by_tradaboost_and_the_model_file_keeps_it(tmp_path, capsys):
    write_run_table(_mixed_source(), tmp_path / "source.csv")
    write_run_table(_solver(8, 2, slowdown=3.0), tmp_path / "few.csv")
    model_path = tmp_path / "m.json"
    status = main(["learn", str(tmp_path / "few.csv"), "--transfer-from",
                   str(tmp_path / "source.csv"), "--transfer-method", "tradaboost",
                   "--trees", "10", "-o", str(model_path)])  # fmt: skip
    assert status == 0
    summary = capsys.readouterr().out
    assert "120 source runs re-weighted by two-stage TrAdaBoost.R2" in summary
    stored = json.loads(model_path.read_text())
    assert stored["settings"]["transfer"] == "tradaboost"
    assert stored["transfer"]["method"] == "tradaboost"
    loaded = api.load_learned(model_path)
    held = _solver(20, 5, slowdown=3.0)
    assert [p.value for p in loaded.predict(held)] == pytest.approx(
        [p.value for p in api.learn(tmp_path / "few.csv", transfer_from=tmp_path / "source.csv",
                                    transfer="tradaboost", trees=10).predict(held)]
    )  # fmt: skip
    with pytest.raises(SystemExit) as caught:
        main(["learn", str(tmp_path / "few.csv"), "--transfer-method", "boost",
              "-o", str(model_path)])  # fmt: skip
    assert caught.value.code == 2
    assert "invalid choice: 'boost'" in capsys.readouterr().err
    assert main(["learn", str(tmp_path / "few.csv"), "--transfer-method", "tradaboost",
                 "-o", str(tmp_path / "alone.json")]) == 2  # fmt: skip
    assert "--transfer-method tradaboost needs --transfer-from" in capsys.readouterr().err
    assert not (tmp_path / "alone.json").exists()


def test_an_unknown_transfer_is_refused():
    with pytest.raises(ValueError, match="transfer: must be one of map, tradaboost"):
        LearnedModel(transfer="boosting")


def _counted_solver(runs: int, seed: int, slowdown: float) -> RunTable:
    """Like :func:`_solver`, with the iterations counted (a run-time feature)."""
    rng = np.random.default_rng(seed)
    n = np.exp(rng.uniform(np.log(1e3), np.log(1e5), runs)).round()
    iterations = np.ceil(rng.uniform(10.0, 300.0, runs))
    time = 1e-7 * n * iterations * rng.lognormal(0.0, 0.02, runs) * slowdown
    return from_columns({"n": n, "loop:iterations": iterations, "time": time}, "runs.csv")


def test_map_then_weights_follows_a_platform_three_times_slower():
    few = _counted_solver(10, 2, slowdown=3.0)
    held = _counted_solver(100, 4, slowdown=3.0)
    source = _counted_solver(100, 1, slowdown=1.0)
    both = LearnedModel(trees=10, transfer="map+tradaboost").fit(few, "time", source=source)
    record = both.transfer_
    assert record["method"] == "map+tradaboost"
    assert record["offset"] == pytest.approx(np.log(3.0), abs=0.1)
    assert record["slope"] == pytest.approx(1.0, abs=0.05)
    assert 0 <= record["step"] < record["steps"]
    assert _error(both, held) < 0.1
    summary = api.render_learned(both, "text")
    assert "100 source runs mapped by log t = 1.1" in summary
    assert "and re-weighted by two-stage TrAdaBoost.R2, step" in summary
