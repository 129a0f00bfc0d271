"""Shared fixtures: synthetic experiments with known scaling functions."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfcast.core.experiment import Experiment

TESTDATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session", autouse=True)
def _static_cache_in_a_temporary_directory(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[None]:
    """``perfcast static`` caches its reports; tests (and the programs they start) keep them in
    a directory of their own that goes away with them, not in the user's ``~/.cache``."""
    previous = os.environ.get("PERFCAST_CACHE_DIR")
    os.environ["PERFCAST_CACHE_DIR"] = str(tmp_path_factory.mktemp("static-cache"))
    yield
    if previous is None:
        del os.environ["PERFCAST_CACHE_DIR"]
    else:
        os.environ["PERFCAST_CACHE_DIR"] = previous


def synthetic_experiment(
    functions: dict[str, Callable[..., np.ndarray]],
    grid: dict[str, Sequence[float]],
    noise: float = 0.0,
    repetitions: int = 5,
    seed: int = 0,
    metric: str = "time",
) -> Experiment:
    """Measurements of known functions on a full grid with uniform multiplicative noise."""
    rng = np.random.default_rng(seed)
    names = list(grid)
    mesh = np.meshgrid(*[np.asarray(grid[n], dtype=float) for n in names], indexing="ij")
    columns = {n: m.ravel() for n, m in zip(names, mesh, strict=True)}
    frames = []
    for kernel, function in functions.items():
        exact = function(*[columns[n] for n in names])
        for repetition in range(repetitions):
            noisy = exact * (1 + rng.uniform(-noise, noise, exact.shape))
            frames.append(
                pd.DataFrame(
                    {"kernel": kernel, "metric": metric, **columns, "repetition": repetition,
                     "value": noisy}
                )
            )  # fmt: skip
    return Experiment.from_frame(pd.concat(frames, ignore_index=True), parameters=names)


@pytest.fixture
def testdata() -> Path:
    """The real-tool test files the repository carries (``tests/data``, see its SOURCES.md)."""
    assert TESTDATA.is_dir(), f"test data missing from the repository: {TESTDATA}"
    return TESTDATA
