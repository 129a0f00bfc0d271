"""The workers of a real Dask LocalCluster return finished models: quality gates and backtests
run where the kernels were modeled, and the models equal those of one process, bit for bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import perfcast
import perfcast.api.modeling
import perfcast.model.backtest
import perfcast.model.rivals
from perfcast.core.experiment import Experiment
from perfcast.model.distributed import DaskChunks
from tests.model.test_distributed import assert_same_models, mixed_experiment

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def small_spread_chunks(monkeypatch):
    """Selection spreads weighed 8 kernels at a time, so that the cluster's chunks (multiples
    of it) are several per series in these small experiments."""
    monkeypatch.setattr(perfcast.model.rivals, "CHUNK_KERNELS", 8)


@pytest.fixture(scope="module")
def client():
    with perfcast.dask_client(workers=2) as client:
        yield client


def test_gates_and_backtests_run_on_the_workers(client, monkeypatch):
    experiment = mixed_experiment(150, {"p": [2, 4, 8, 16, 32, 64]}, seed=4)
    # Several backtest blocks (of 40 kernels) in both fits.
    monkeypatch.setattr(perfcast.model.backtest, "CHUNK_KERNELS", 40)
    monkeypatch.setattr(perfcast.api.modeling, "BACKTEST_KERNELS", 40)
    local = perfcast.fit(experiment, metric=["time", "energy"])

    def not_here(*args, **kwargs):
        raise AssertionError("the calling process gated or backtested models")

    monkeypatch.setattr(perfcast.api.modeling, "gate_models", not_here)
    monkeypatch.setattr(perfcast.api.modeling, "backtest", not_here)
    distributed = perfcast.fit(experiment, metric=["time", "energy"], client=DaskChunks(client, 32))
    assert_same_models(local, distributed)
    assert all(m.uncertainty.extrapolation for m in distributed.models)


def test_two_parameters_backtested_by_blocks(client, monkeypatch):
    experiment = mixed_experiment(30, {"p": [2, 4, 8, 16, 32], "n": [10, 20, 40, 80, 160]}, 6)
    monkeypatch.setattr(perfcast.model.backtest, "CHUNK_KERNELS", 7)
    monkeypatch.setattr(perfcast.api.modeling, "BACKTEST_KERNELS", 7)
    local = perfcast.fit(experiment, metric="time")
    distributed = perfcast.fit(experiment, metric="time", client=DaskChunks(client, 8))
    assert_same_models(local, distributed)
    assert {b.parameter for b in distributed.models[0].uncertainty.extrapolation} == {"p", "n"}


def test_rescaled_kernels_are_gated_on_their_measured_values(client):
    """Kernels beyond 1e100 are fitted divided by a power of two; their gates still see the
    values as measured (a poor fit of huge values is flagged the same way)."""
    frame = mixed_experiment(60, {"p": [2, 4, 8, 16, 32]}, seed=8).frame
    frame = frame[frame["metric"] == "time"].copy()
    huge = frame["kernel"].isin([f"k{k}" for k in range(0, 60, 3)])
    frame.loc[huge, "value"] *= 1e250
    rough = frame["kernel"] == "k3"  # huge and noisy: a poor fit
    frame.loc[rough, "value"] *= np.where(frame.loc[rough, "p"] == 8, 3.0, 1.0)
    experiment = Experiment.from_frame(frame.reset_index(drop=True))
    local = perfcast.fit(experiment)
    distributed = perfcast.fit(experiment, client=DaskChunks(client, 16))
    assert_same_models(local, distributed)
    assert any(w.code == "poor-fit" for w in distributed["k3"]["time"].warnings)


def test_kernel_blocks_are_the_rows_of_their_kernels_whatever_the_row_order():
    experiment = mixed_experiment(25, {"p": [2, 4, 8, 16, 32]}, seed=1)
    frame = experiment.frame
    shuffled = Experiment.from_frame(frame.sample(frac=1.0, random_state=3).reset_index(drop=True))
    for source in (experiment, shuffled):
        blocks = list(source.kernel_blocks("energy", 10))
        assert [len(b.kernels) for b in blocks] == [10, 10, 5]
        for start, block in zip((0, 10, 20), blocks, strict=True):
            assert set(block.kernels) == set(source.kernels[start : start + 10])
        for block in blocks:
            assert block.metric_names == ["energy"]
            rows = source.frame[
                source.frame["kernel"].isin(block.kernels) & (source.frame["metric"] == "energy")
            ]
            pd.testing.assert_frame_equal(
                block.frame.reset_index(drop=True), rows.reset_index(drop=True)
            )


def test_a_floor_raises_a_chunks_choices_and_forced_ones_win():
    from perfcast.model.fitting.decisions import SeriesDecisions

    floored = SeriesDecisions(floor=(1, 3))
    assert [floored.decide(0), floored.decide(5), floored.decide(2)] == [1, 5, 2]
    assert floored.seen == [0, 5, 2] and floored.used == [1, 5, 2]
    forced = SeriesDecisions(forced=(0, 4), floor=(1, 9))
    assert [forced.decide(1), forced.decide(7)] == [0, 4]
    assert forced.seen == [1, 7] and forced.used == [0, 4]
