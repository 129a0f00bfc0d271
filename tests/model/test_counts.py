"""The ``nn-linear`` method: a count that is a sum of loop trips times their cost is learned as
a non-negative linear sum, corrected by trees as a ratio (here the share of the slowest rank)."""

from __future__ import annotations

import numpy as np
import pytest

from perfcast.core.errors import InputError
from perfcast.io.run_table import RunTable, from_columns
from perfcast.model.learned import LearnedModel


def _instructions(runs: int, seed: int) -> RunTable:
    """Two algorithms (one loop each), a set-up loop, 1 or 2 ranks: the slowest rank runs the
    set-up and half the work when there are two."""
    rng = np.random.default_rng(seed)
    n = np.exp(rng.uniform(np.log(100), np.log(5000), runs)).round()
    algorithm = rng.integers(0, 2, runs)
    ranks = rng.integers(1, 3, runs)
    pairs = np.where(algorithm == 0, n * n / 2, 0.0)
    cells = np.where(algorithm == 1, n * rng.uniform(5, 30, runs), 0.0)  # data-dependent
    setup = 3 * n
    instructions = 5000 + 7 * setup + (11 * pairs + 40 * cells) / ranks
    return from_columns(
        {
            "n": n,
            "algorithm": algorithm,
            "p": ranks,
            "loop:pairs": pairs,
            "loop:cells": cells,
            "loop:setup": setup,
            "instructions": instructions,
        },
        source="runs.csv",
    )


def _error(model: LearnedModel, table: RunTable) -> float:
    truth = table.numeric["instructions"]
    predicted = np.array([p.value for p in model.predict(table)])
    return float(np.mean(np.abs(predicted - truth) / truth))


def test_a_sum_of_trip_counts_is_learned_far_better_than_by_trees_on_logarithms():
    train, test = _instructions(60, 1), _instructions(200, 2)
    counts = LearnedModel("nn-linear", trees=30).fit(train, "instructions")
    trees = LearnedModel("extra-trees", trees=30).fit(train, "instructions")
    assert _error(counts, test) < 0.03
    assert _error(counts, test) < 0.5 * _error(trees, test)
    assert counts.cv_error_ < 0.05
    predictions = counts.predict(test, level=0.9)
    assert all(p.lower <= p.value <= p.upper for p in predictions)
    beyond = from_columns({n: [10 * test.numeric[n].max()] for n in test.numeric}, "far.csv")
    assert "only the linear sum of the features follows a trend" in " ".join(
        counts.predict(beyond)[0].warnings
    )


def test_counts_must_be_positive():
    table = _instructions(20, 3)
    columns = {name: table.column(name) for name in table.columns}
    columns["instructions"] = columns["instructions"] - columns["instructions"].max()
    with pytest.raises(InputError, match="nn-linear method learns positive counts") as caught:
        LearnedModel("nn-linear").fit(from_columns(columns, "bad.csv"), "instructions")
    assert caught.value.reason == "bad-target"
