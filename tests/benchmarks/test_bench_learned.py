"""The learned-model benchmark's tables on a small made-up run table (the campaigns themselves
need MPI and minutes: ``python -m benchmarks.learned``)."""

from __future__ import annotations

import numpy as np

from benchmarks.learned import DRAWS, ablation, accuracy, reductions, transfer
from perfcast.io.run_table import from_columns


def _table(slowdown: float, seed: int, runs: int = 40):
    rng = np.random.default_rng(seed)
    n = rng.uniform(60, 200, runs).round()
    trips = n * n * rng.uniform(50, 400, runs).round()
    time = 3e-9 * trips * slowdown * rng.lognormal(0, 0.02, runs)
    return from_columns(
        {
            "n": n,
            "p": rng.integers(1, 3, runs),
            "solver.c:25:loop:for": trips,
            "time": time,
            "cpu": time,
            "cost:solver.c:25:loop:for": 2e-11 * trips,
        }  # fmt: skip
    )


def test_every_table_has_a_row_per_program_and_setting():
    tables = {"solver": _table(1.0, 1)}
    text = accuracy(tables, {"solver": ["n", "p"]}, "time", trees=10)
    rows = [line for line in text.splitlines() if line.startswith("| solver")]
    assert len(rows) == 8  # four methods, features and parameters
    assert "| solver | extra-trees | features |" in text
    assert len(ablation(tables, "cpu", trees=10).splitlines()) == 3
    reduced = reductions(tables, "time", trees=10)
    assert "| solver | time 5 % | 1 of 1 |" in reduced
    moved = transfer(tables, {"solver": _table(3.0, 2, runs=60)}, "time", trees=10)
    assert len(moved.splitlines()) == 2 + 4


def test_draws_give_every_program_its_inputs():
    rng = np.random.default_rng(0)
    assert list(DRAWS["solver"](rng)) == ["n", "tolerance", "rhs", "seed"]
    assert DRAWS["nbody"](rng)["algorithm"] in (0, 1)
