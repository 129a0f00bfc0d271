"""The series-wide choices a chunk can know before it is modeled: taken from the statistics
of the whole series, so that no chunk of a real Dask LocalCluster is modeled twice."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pytest

import perfcast
import perfcast.model.rivals
from perfcast.core.experiment import Experiment
from perfcast.model.base import model_chunk
from perfcast.model.distributed import DaskChunks
from perfcast.model.fitting.data import FitData
from perfcast.model.pmnf import PMNFModeler
from perfcast.model.sparse import SparseModeler
from tests.conftest import synthetic_experiment
from tests.model.test_distributed import assert_same_models, mixed_experiment

ONE = {"p": [2, 4, 8, 16, 32, 64]}
TWO = {"p": [2, 4, 8, 16, 32], "n": [10, 20, 40, 80, 160]}


def growing_then_falling(kernels: int, falling: int, grid: dict[str, list[float]]) -> Experiment:
    """``kernels`` growing kernels, then ``falling`` whose values fall along every parameter:
    only the chunks at the end of the series see a decreasing kernel."""
    rng = np.random.default_rng(11)
    functions: dict[str, Callable[..., np.ndarray]] = {}
    for k in range(kernels + falling):
        exponent, scale = rng.choice([0.5, 1.0, 1.5, 2.0]), rng.uniform(1.0, 2.0)
        sign = -1.0 if k >= kernels else 1.0

        def function(*xs, exponent=exponent, scale=scale, sign=sign):
            return 1.0 + scale * sum(x ** (sign * exponent) for x in xs)

        functions[f"k{k:04d}"] = function
    return synthetic_experiment(functions, grid, noise=0.05, seed=12)


@pytest.mark.parametrize(
    ("modeler", "grid"),
    [
        (PMNFModeler(), ONE),
        (PMNFModeler(negative_exponents=True), ONE),
        (PMNFModeler(negative_exponents=False), ONE),
        (PMNFModeler(), TWO),
        (SparseModeler(), ONE),
        (SparseModeler(), TWO),
    ],
    ids=["pmnf-1", "pmnf-1-negative", "pmnf-1-positive", "pmnf-2", "sparse-1", "sparse-2"],
)
@pytest.mark.parametrize("falling", [0, 2])
def test_choices_ahead_are_those_the_whole_series_makes(modeler, grid, falling):
    experiment = growing_then_falling(30, falling, grid)
    data = FitData.from_series(experiment.series("time")[0], None, "adaptive")
    ahead = modeler._choices_ahead(data)
    _, seen = model_chunk(modeler, data)
    # Every choice but the design width (which the search decides) is known ahead.
    assert len(ahead) == len(seen) - 1
    assert ahead == seen[: len(ahead)]
    if falling or len(grid) == 1:  # (a flat marginal of two parameters may fall by noise)
        assert ahead[0] == (1 if falling else 0)


class CountingChunks(DaskChunks):
    """:class:`DaskChunks` that counts the chunks it models a second time (the tasks of the
    whole series' forced choices), and keeps the choices each chunk followed the first time
    and the whole series' choices it was modeled with again."""

    def __init__(self, client, kernels_per_chunk: int):
        super().__init__(client, kernels_per_chunk)
        self.again = 0
        self.first: list[tuple[int, ...]] = []
        self.forced: list[tuple[int, ...]] = []

    def map(self, function: Callable, items: Iterable) -> Iterator:
        forced = isinstance(function, functools.partial) and "forced" in function.keywords
        for result in super().map(function, items):
            if forced:
                self.again += 1
                self.forced.append(function.keywords["forced"])
            elif isinstance(result, tuple) and len(result) == 3:  # a chunk's models
                self.first.append(result[2])
            yield result


@pytest.fixture
def small_spread_chunks(monkeypatch):
    """Selection spreads weighed 4 kernels at a time, so that chunks stay small."""
    monkeypatch.setattr(perfcast.model.rivals, "CHUNK_KERNELS", 4)


@pytest.fixture(scope="module")
def client():
    with perfcast.dask_client(workers=2) as client:
        yield client


@pytest.mark.slow
@pytest.mark.usefixtures("small_spread_chunks")
def test_no_chunk_is_modeled_twice_on_the_cluster(client, monkeypatch):
    experiment = growing_then_falling(180, 3, ONE)
    local = perfcast.fit(experiment)
    chunks = CountingChunks(client, 16)
    assert_same_models(local, perfcast.fit(experiment, client=chunks))
    assert chunks.again == 0
    # Without the choices known ahead, the chunks before the falling kernels go twice.
    monkeypatch.setattr(PMNFModeler, "_choices_ahead", lambda self, data: ())
    blind = CountingChunks(client, 16)
    assert_same_models(local, perfcast.fit(experiment, client=blind))
    assert blind.again > 0


@pytest.mark.slow
@pytest.mark.usefixtures("small_spread_chunks")
def test_two_parameters_differ_at_most_in_the_design_width(client):
    """Every choice known ahead is the whole series' in every chunk; only the design width
    (which the search decides) can send a chunk of the first ones shipped back."""
    experiment = mixed_experiment(40, TWO, seed=7)  # its first kernels fall
    for modeler in ("pmnf", "sparse"):
        local = perfcast.fit(experiment, modeler=modeler)
        chunks = CountingChunks(client, 8)
        assert_same_models(local, perfcast.fit(experiment, modeler=modeler, client=chunks))
        assert len(set(chunks.forced)) <= 1 and len(chunks.first) == 10
        whole = chunks.forced[0] if chunks.forced else chunks.first[0]
        assert all(used[:-1] == whole[:-1] for used in chunks.first)
