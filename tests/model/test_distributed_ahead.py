"""The series-wide choices a chunk can know before it is modeled: taken from the statistics
of the whole series, so that no chunk of a real Dask LocalCluster is modeled twice; a chunk
that differs from its series only in the design width is reassembled, not searched again."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pytest

import perfcast
import perfcast.model.rivals
from perfcast.core.experiment import Experiment
from perfcast.model.base import bare_models, model_chunk, model_piece, reassemble_piece
from perfcast.model.distributed import DaskChunks
from perfcast.model.fitting.assembly import reassembled
from perfcast.model.fitting.data import FitData
from perfcast.model.pmnf import PMNFModeler
from perfcast.model.sparse import SparseModeler
from tests.conftest import synthetic_experiment
from tests.model.test_distributed import assert_same_models, mixed_experiment

ONE = {"p": [2, 4, 8, 16, 32, 64]}
TWO = {"p": [2, 4, 8, 16, 32], "n": [10, 20, 40, 80, 160]}


def growing_then_falling(kernels: int, falling: int, grid: dict[str, list[float]]) -> Experiment:
    """``kernels`` growing kernels, then ``falling`` whose values fall along every parameter:
    only the chunks at the end of the series see a decreasing kernel. Every ninth growing
    kernel has one more term than the others."""
    rng = np.random.default_rng(11)
    functions: dict[str, Callable[..., np.ndarray]] = {}
    for k in range(kernels + falling):
        exponent, scale = rng.choice([0.5, 1.0, 1.5, 2.0]), rng.uniform(1.0, 2.0)
        sign = -1.0 if k >= kernels else 1.0
        extra = 0.5 if k % 9 == 0 and k < kernels else 0.0

        def function(*xs, exponent=exponent, scale=scale, sign=sign, extra=extra):
            growth = sum(x ** (sign * exponent) for x in xs)
            return 1.0 + scale * growth + extra * xs[0] ** 3

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
    models, seen = model_chunk(modeler, data)
    # Every choice but the design width (which the search decides) is known ahead.
    assert len(ahead) == len(seen) - 1
    assert ahead == seen[: len(ahead)]
    if falling or len(grid) == 1:  # (a flat marginal of two parameters may fall by noise)
        assert ahead[0] == (1 if falling else 0)
    assert seen[-1] == 1 + max(len(m.terms) for m in models)  # the last: the design width


MODELERS = [PMNFModeler(), SparseModeler()]


@pytest.mark.parametrize("modeler", MODELERS, ids=["pmnf", "sparse"])
@pytest.mark.parametrize("grid", [ONE, TWO], ids=["one", "two"])
@pytest.mark.parametrize("scale", [1.0, 1e250], ids=["plain", "rescaled"])
def test_a_narrow_chunk_reassembled_is_the_chunk_modeled_with_the_series_width(
    modeler, grid, scale
):
    experiment = growing_then_falling(34, 2, grid)
    series = experiment.series("time")[0]
    series = dataclasses.replace(series, values=series.values * scale)
    data = FitData.from_series(series, None, "adaptive")
    _, whole = model_chunk(modeler, data)
    starts = range(0, 36, 4)
    # Chunks that make the series' choices known ahead but find fewer terms alone.
    fits = [
        model_piece(modeler, (data.rows(np.arange(s, s + 4)), None, whole[:-1])) for s in starts
    ]
    narrow = [(s, fit) for s, fit in zip(starts, fits, strict=True) if fit[2][-1] < whole[-1]]
    assert narrow, "no chunk of fewer terms than the series: nothing tested"
    for start, (alone, seen, used) in narrow[:2]:
        part = data.rows(np.arange(start, start + 4))
        assert used[:-1] == whole[:-1]
        expected, _ = model_chunk(modeler, part, forced=whole)
        rebuilt = reassembled(bare_models(alone), part, whole[-1])
        assert [m.to_dict() for m in rebuilt] == [m.to_dict() for m in expected]
        result = reassemble_piece(modeler, ((part, None, None), bare_models(alone), seen), whole)
        assert [m.to_dict() for m in result[0]] == [m.to_dict() for m in expected]
        assert result[1:] == (seen, whole)
    if scale != 1.0:
        assert data.exponents.any()


def test_models_beyond_exact_scaling_are_modeled_again():
    experiment = growing_then_falling(8, 0, ONE)
    data = FitData.from_series(experiment.series("time")[0], None, "adaptive")
    models, seen = model_chunk(PMNFModeler(), data)
    tiny = [dataclasses.replace(models[0], constant=5e-324), *bare_models(models[1:])]
    assert reassembled(tiny, data, seen[-1]) is None
    assert reassembled(bare_models(models[::-1]), data, seen[-1]) is None  # not its kernels
    # The piece falls back to a whole fit with the series' choices.
    again = reassemble_piece(PMNFModeler(), ((data, None, None), tiny, seen), seen)
    assert [m.to_dict() for m in again[0]] == [
        m.to_dict() for m in model_piece(PMNFModeler(), (data, None, None), seen)[0]
    ]


class CountingChunks(DaskChunks):
    """:class:`DaskChunks` that counts the chunks it models a second time and those it
    reassembles (the tasks of the whole series' forced choices), and keeps the choices each
    chunk followed the first time and the whole series' choices it was modeled with again."""

    def __init__(self, client, kernels_per_chunk: int):
        super().__init__(client, kernels_per_chunk)
        self.again = 0
        self.reassembled = 0
        self.first: list[tuple[int, ...]] = []
        self.forced: list[tuple[int, ...]] = []

    def map(self, function: Callable, items: Iterable) -> Iterator:
        forced = isinstance(function, functools.partial) and "forced" in function.keywords
        for result in super().map(function, items):
            if forced:
                if function.func is reassemble_piece:
                    self.reassembled += 1
                else:
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
def test_two_parameters_narrow_chunks_are_reassembled_not_modeled_again(client):
    """Every choice known ahead is the whole series' in every chunk; a chunk of the first
    ones shipped whose models have fewer terms than a later one's is reassembled with the
    series' design width, not searched again."""
    experiment = mixed_experiment(40, TWO, seed=7)  # its first kernels fall
    for modeler in ("pmnf", "sparse"):
        local = perfcast.fit(experiment, modeler=modeler)
        chunks = CountingChunks(client, 8)
        assert_same_models(local, perfcast.fit(experiment, modeler=modeler, client=chunks))
        assert len(chunks.first) == 10 and chunks.again == 0
        assert chunks.reassembled > 0  # the first chunk holds the most terms
        whole = chunks.forced[0]
        assert all(used[:-1] == whole[:-1] for used in chunks.first)
