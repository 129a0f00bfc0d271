"""Modeling on a real Dask LocalCluster gives the models of a fit in one process, bit for bit."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import perfcast
import perfcast.model.rivals
from perfcast.core.errors import WorkError
from perfcast.core.experiment import Experiment
from perfcast.model.base import model_chunk
from perfcast.model.distributed import DaskChunks
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.decisions import SeriesDecisions, series_decisions
from perfcast.model.hybrid import HybridModeler
from perfcast.model.pmnf import PMNFModeler
from tests.conftest import synthetic_experiment

pytestmark = pytest.mark.slow


def mixed_experiment(
    kernels: int, grid: dict[str, list[float]], seed: int, repetitions: int = 5
) -> Experiment:
    """Kernels of random PMNF shapes, some growing, some falling (only the first few kernels
    fall, so a chunk of later kernels alone would not search the decreasing blocks), with
    multiplicative noise of 1 to 10 % and a second metric."""
    rng = np.random.default_rng(seed)
    names = list(grid)
    mesh = np.meshgrid(*[np.asarray(grid[n], dtype=float) for n in names], indexing="ij")
    columns = {n: m.ravel() for n, m in zip(names, mesh, strict=True)}
    n_points = len(mesh[0].ravel())
    exponents = rng.choice([0.5, 1.0, 1.5, 2.0], size=(kernels, len(names)))
    logs = rng.integers(0, 2, size=(kernels, len(names)))
    frames = []
    for k in range(kernels):
        value = np.full(n_points, rng.uniform(0.5, 5.0))
        for j, name in enumerate(names):
            x = columns[name]
            term = x ** exponents[k, j] * np.log2(x) ** logs[k, j]
            if k < 5:  # strong scaling: falls with the parameter
                term = 1.0 / term
            value = value + rng.uniform(0.1, 2.0) * term
        noise = rng.uniform(0.01, 0.10)
        for repetition in range(repetitions):
            measured = value * (1 + rng.uniform(-noise, noise, n_points))
            for metric, scale in (("time", 1.0), ("energy", 40.0)):
                frames.append(
                    pd.DataFrame(
                        {
                            "kernel": f"k{k}",
                            "metric": metric,
                            **columns,
                            "repetition": repetition,
                            "value": measured * scale,
                        }
                    )
                )
    return Experiment.from_frame(pd.concat(frames, ignore_index=True))


@pytest.fixture(autouse=True)
def small_spread_chunks(monkeypatch):
    """Selection spreads weighed 4 kernels at a time (the chunks of the cluster hold a
    multiple of it), so that the small chunks below stay several per series."""
    monkeypatch.setattr(perfcast.model.rivals, "CHUNK_KERNELS", 4)


@pytest.fixture(scope="module")
def client():
    with perfcast.dask_client(workers=2) as client:
        yield client


@pytest.fixture(scope="module")
def one_parameter():
    return mixed_experiment(300, {"p": [2, 4, 8, 16, 32, 64]}, seed=3)


def assert_same_models(local: perfcast.ModelSet, distributed: perfcast.ModelSet) -> None:
    assert len(local.models) == len(distributed.models) > 0
    assert local.to_json() == distributed.to_json()  # coefficients, terms, quality, warnings


def test_one_parameter_fit_on_the_cluster_is_the_local_fit(client, one_parameter):
    local = perfcast.fit(one_parameter, metric=["time", "energy"])
    distributed = perfcast.fit(
        one_parameter, metric=["time", "energy"], client=DaskChunks(client, 64)
    )
    assert_same_models(local, distributed)
    assert any(t.factors[0].exponent < 0 for m in local.models for t in m.terms)


@pytest.mark.parametrize("negative_exponents", [None, True, False])
@pytest.mark.parametrize("location", ["adaptive", "median"])
def test_settings_reach_the_workers(client, one_parameter, negative_exponents, location):
    settings = {"negative_exponents": negative_exponents, "location": location}
    local = perfcast.fit(one_parameter, **settings)
    distributed = perfcast.fit(one_parameter, client=DaskChunks(client, 100), **settings)
    assert_same_models(local, distributed)
    assert distributed.settings == local.settings


def test_two_parameters_and_the_sparse_modeler(client):
    experiment = mixed_experiment(36, {"p": [2, 4, 8, 16, 32], "n": [10, 20, 40, 80, 160]}, 5)
    for modeler in ("pmnf", "sparse"):
        local = perfcast.fit(experiment, modeler=modeler)
        distributed = perfcast.fit(experiment, modeler=modeler, client=DaskChunks(client, 16))
        assert_same_models(local, distributed)


def test_without_repetitions_and_with_skipped_kernels(client):
    experiment = mixed_experiment(120, {"p": [2, 4, 8, 16, 32]}, seed=9, repetitions=1)
    frame = experiment.frame
    short = frame[(frame["kernel"] == "k7") & (frame["p"] <= 4)]  # two points: unmodelable
    experiment = Experiment.from_frame(
        pd.concat([frame[frame["kernel"] != "k7"], short], ignore_index=True)
    )
    local = perfcast.fit(experiment)
    distributed = perfcast.fit(experiment, client=DaskChunks(client, 32))
    assert_same_models(local, distributed)
    assert [s.kernel for s in distributed.skipped] == ["k7", "k7"]


def test_a_chunk_takes_the_whole_series_choices(one_parameter):
    """Later kernels alone would search no decreasing block; made to follow the whole
    series' choices (as the cluster's second pass does), their models are those of the whole
    series."""
    series = one_parameter.series("time")[0]
    data = FitData.from_series(series, None, "adaptive")
    later = data.rows(np.arange(100, 200))
    modeler = PMNFModeler()
    _, seen_alone = model_chunk(modeler, later)
    whole, seen_whole = model_chunk(modeler, data)
    assert seen_alone[0] == 0 and seen_whole[0] == 1  # decreasing blocks searched
    assert len(seen_alone) == len(seen_whole) == 2  # and the design width
    forced, _ = model_chunk(modeler, later, forced=seen_whole)
    assert [m.to_dict() for m in forced] == [m.to_dict() for m in whole[100:200]]
    with series_decisions(SeriesDecisions()) as decisions:
        modeler._model_data(later)
    assert tuple(decisions.seen) == seen_alone


def test_hybrid_models_in_this_process_and_says_so(client):
    pytest.importorskip("clang.cindex")
    program = Path(__file__).parent / "programs" / "hybrid.c"
    report = perfcast.analyze_source([program], ["n", "m"])
    grid = {"n": [16, 32, 64, 128, 256], "m": [10, 20, 40, 80, 160]}
    experiment = synthetic_experiment(
        {"main->stencil": lambda n, m: 2e-6 * n**2 + 3e-5 * n + 0 * m}, grid, noise=0.03
    )
    local = perfcast.fit(experiment, modeler="hybrid", report=report)
    distributed = perfcast.fit(experiment, modeler="hybrid", report=report, client=client)
    assert distributed.models[0].to_dict() == local.models[0].to_dict()
    assert distributed.notes == [
        "the hybrid modeler models in this process, not on the Dask cluster",
        *local.notes,
    ]
    with pytest.raises(ValueError, match="hybrid cannot model a series in chunks"):
        HybridModeler(report=report).fit(experiment, chunks=DaskChunks(client))


def test_unreachable_scheduler_is_a_work_error():
    with socket.socket() as probe:  # a free port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with (
        pytest.raises(
            WorkError, match=f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"
        ),
        perfcast.dask_client(scheduler=f"tcp://127.0.0.1:{port}"),
    ):
        pass


def test_cluster_settings_are_checked():
    with pytest.raises(ValueError, match="either a scheduler address or a number of workers"):
        perfcast.dask_client().__enter__()
    with pytest.raises(ValueError, match="workers: must be a whole number >= 1"):
        perfcast.dask_client(workers=0).__enter__()
