"""The instruction-count evaluation of issue 17 on small made-up run tables (the tables
themselves take hours of callgrind: ``python -m benchmarks.learned_instructions --collect``)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.learned_evaluation import (
    accuracy_over_draws,
    collection_cost,
    column_sets,
    correlation_reduced,
    early_phase,
    in_instructions,
    less_fixed,
    reduction_choice,
    reductions_in_instructions,
)
from benchmarks.learned_instructions import _appended, _check_replay
from perfcast.io.run_table import from_columns
from perfcast.model.learned import METHODS

LOOP, CALLS = "solver.c:25:loop:for", "solver.c:30:mpi_calls:MPI_Allreduce"


def _runs(rows: int = 30, seed: int = 1, fixed: float = 5e5, per_update: float = 3.0):
    """Instrumented and plain runs of a made-up solver: ``instrumented - plain`` is ``fixed``
    plus ``per_update`` per counter update of one rank, the costs in seconds at a per-run
    speed."""
    rng = np.random.default_rng(seed)
    n = rng.integers(20, 70, rows).astype(float)
    tolerance = np.round(rng.uniform(1e-8, 1e-3, rows), 10)
    rhs = rng.integers(0, 2, rows).astype(float)
    p = rng.integers(1, 3, rows).astype(float)
    iterations = np.round(n * (1 + rhs) * -np.log10(tolerance))
    trips = n * n * iterations  # over the ranks
    plain = 40.0 * trips / p + 1000.0
    updates = trips / p + iterations  # one rank's: its trips and its Allreduce calls
    seconds = rng.uniform(1e-9, 3e-9, rows)
    inputs = {"n": n, "tolerance": tolerance, "rhs": rhs, "p": p}
    instrumented = from_columns(
        {
            **inputs,
            LOOP: trips,
            CALLS: iterations * p,
            "time": plain * 1e-9,
            "instructions": plain + fixed + per_update * updates,
            f"cost:{LOOP}": seconds * trips / p,
            f"cost:{CALLS}": seconds * iterations,
        },  # fmt: skip
        "made-up.csv",
    )
    return instrumented, from_columns({**inputs, "instructions": plain}, "plain.csv")


def test_the_collection_cost_fit_recovers_the_cost_per_update():
    instrumented, plain = _runs()
    fixed = 5e5
    per_update, row = collection_cost(instrumented, plain.take(np.arange(12)), fixed)
    assert per_update == pytest.approx(3.0, rel=1e-6)
    assert row.startswith("12 | ") and row.endswith("| 0.00%")  # the fit leaves nothing
    priced = in_instructions(instrumented, per_update, fixed)
    # the run's cost the reductions compare against: its instructions less the fixed part
    assert np.allclose(priced.numeric["time"], instrumented.numeric["instructions"] - 5e5)
    assert np.allclose(
        less_fixed(instrumented, fixed).numeric["instructions"],
        instrumented.numeric["instructions"] - 5e5,
    )
    # the loop's instructions: 3 per trip of one rank
    expected = 3.0 * instrumented.numeric[LOOP] / instrumented.numeric["p"]
    assert np.allclose(priced.costs[LOOP], expected)


def test_paired_runs_with_other_inputs_are_refused():
    instrumented, plain = _runs()
    other = from_columns(
        {**{k: plain.column(k) for k in plain.columns}, "n": plain.column("n") + 1}, "plain.csv"
    )
    with pytest.raises(ValueError, match="column n"):
        collection_cost(instrumented, other, 5e5)


@pytest.mark.slow
def test_accuracy_and_reduction_tables_have_a_row_per_setting():
    instrumented, plain = _runs(rows=40)
    chosen, methods = accuracy_over_draws({"solver": instrumented}, [11], trees=10)
    assert len(chosen.splitlines()) == 2 + 2  # features and parameters
    assert "| solver | 40 | features | " in chosen
    assert len(methods.splitlines()) == 2 + 2 * len(METHODS)
    fits, lines = reductions_in_instructions(
        {"solver": instrumented},
        {"solver": plain.take(np.arange(10))},
        {"solver": 5e5},
        [11],
        trees=10,
    )
    assert "| solver | 10 | " in fits
    assert f"`{LOOP}`" in fits
    assert len(lines.splitlines()) == 2 + 3 * 6  # extra-trees, nn-linear, products
    assert "| solver | extra-trees | none | 2 of 2 |" in lines


def test_rank_maxima_are_compared_without_them():
    instrumented, _ = _runs()
    columns = {k: instrumented.column(k) for k in instrumented.columns}
    with_max = from_columns({**columns, f"{LOOP}:rank_max": columns[LOOP]})
    sets = column_sets("solver", with_max)
    assert list(sets) == ["features", "features, sums over ranks only", "parameters"]
    assert f"{LOOP}:rank_max" not in sets["features, sums over ranks only"]
    assert sets["parameters"] == ["n", "tolerance", "rhs", "p"]


@pytest.mark.slow
def test_the_early_phase_needs_the_same_runs():
    whole, _ = _runs()
    other, _ = _runs(seed=2)
    with pytest.raises(ValueError, match="not the runs of"):
        early_phase({"solver": whole}, {"solver": other}, [11], trees=10)
    assert "| solver | the early phase | " in early_phase(
        {"solver": whole}, {"solver": whole}, [11], trees=10
    )


def test_a_resumed_collection_appends_and_checks_the_replayed_draws():
    first, _ = _runs(rows=10)
    second, _ = _runs(rows=5, seed=3)
    both = _appended(first, second)
    assert both.rows == 15
    assert np.array_equal(both.costs[LOOP][10:], second.costs[LOOP])
    _check_replay(first, 0, {"n": first.numeric["n"][0], "p": first.numeric["p"][0]})
    with pytest.raises(RuntimeError, match="not the same collection"):
        _check_replay(first, 0, {"n": first.numeric["n"][0] + 1})
    fewer = from_columns({k: first.column(k) for k in first.columns if k != "rhs"})
    with pytest.raises(RuntimeError, match="other columns"):
        _appended(first, fewer)


def test_the_correlation_reduction_keeps_one_of_features_that_say_the_same():
    instrumented, _ = _runs()
    columns = {k: instrumented.column(k) for k in instrumented.columns}
    twin = from_columns(
        {**columns, "twin": 2 * columns[LOOP] + 1, "constant": np.ones(instrumented.rows)},
        "made-up.csv",
    )
    names = [n for n in twin.columns if n not in ("instructions", "time")]
    kept = correlation_reduced(twin, names)
    assert (LOOP in kept) != ("twin" in kept)
    assert "constant" not in kept and "n" in kept
    assert set(kept) < set(names)


@pytest.mark.slow
def test_the_reduction_is_chosen_with_the_method_by_cross_validation():
    instrumented, _ = _runs(rows=60)
    table = reduction_choice({"solver": instrumented}, [11, 12], trees=10)
    lines = table.splitlines()
    assert len(lines) == 3
    assert lines[2].startswith("| solver | 6 | ")
    chosen = [part.rsplit(" ", 1) for part in lines[2].split("|")[5].strip().split(", ")]
    assert sum(int(count) for _, count in chosen) == 2  # one choice per draw
    assert {name for name, _ in chosen} <= {"none", "importance 95 %", "importance 80 %",
                                            "correlation 0.99"}  # fmt: skip
