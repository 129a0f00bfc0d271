"""Partial data is partial: a kernel whose points admit no model is skipped, not fatal."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

import perfcast
from perfcast.cli import main
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.io import read_experiment, write_experiment
from perfcast.model.fitting.blocks import building_blocks, evaluate_blocks
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.selection import SearchSettings, search
from perfcast.model.modelset import ModelSet
from tests.conftest import synthetic_experiment

GOOD = {
    "solve": lambda p: 1.0 + 0.5 * p,
    "exchange": lambda p: 2.0 + 0.1 * np.log2(p),
}


def with_short_kernel(experiment: Experiment) -> Experiment:
    """``experiment`` plus the kernel ``short``, measured at two values of ``p`` only."""
    short = pd.DataFrame(
        {
            "kernel": "short",
            "metric": "time",
            "p": [2.0, 2.0, 4.0, 4.0],
            "repetition": [0, 1, 0, 1],
            "value": [1.0, 1.1, 2.0, 2.1],
        }
    )
    frame = pd.concat([experiment.frame, short], ignore_index=True)
    return Experiment.from_frame(frame, parameters=["p"])


@pytest.fixture
def complete():
    return synthetic_experiment(GOOD, {"p": [2, 4, 8, 16, 32]}, noise=0.02)


@pytest.fixture
def partial(complete):
    return with_short_kernel(complete)


def test_a_kernel_with_too_few_points_is_skipped_and_the_rest_modeled_unchanged(complete, partial):
    alone = perfcast.fit(complete)
    models = perfcast.fit(partial)
    assert [(s.kernel, s.metric) for s in models.skipped] == [("short", "time")]
    assert "2 value(s) of 'p'" in models.skipped[0].reason
    assert sorted(models) == ["exchange", "solve"]
    assert [m.to_dict() for m in models.models] == [m.to_dict() for m in alone.models]


def test_strict_turns_a_skip_into_an_error_naming_the_kernel(partial):
    with pytest.raises(InputError, match="kernel 'short'") as raised:
        perfcast.fit(partial, strict=True)
    assert (raised.value.reason, raised.value.value) == ("unmodelable-kernel", "short")


def test_no_kernel_modelable_is_an_error():
    experiment = synthetic_experiment({"k": lambda p: p + 1.0}, {"p": [2, 4]})
    with pytest.raises(InputError, match="kernel 'k' \\(time\\) cannot be modeled"):
        perfcast.fit(experiment)


def test_skipped_kernels_round_trip_through_json(partial):
    models = perfcast.fit(partial)
    document = json.loads(models.to_json())
    assert document["version"] == 1
    assert document["skipped"] == [models.skipped[0].to_dict()]
    again = ModelSet.from_json(models.to_json())
    assert again.skipped == models.skipped


def test_documents_without_skipped_read_as_none_skipped(complete):
    document = perfcast.fit(complete).to_dict()
    del document["skipped"]
    assert ModelSet.from_json(json.dumps(document)).skipped == []


@pytest.mark.parametrize("skipped", [{"kernel": "a"}, [{"kernel": "a", "metric": "time"}], [3]])
def test_a_malformed_skipped_list_is_an_input_error(complete, skipped):
    document = perfcast.fit(complete).to_dict()
    document["skipped"] = skipped
    with pytest.raises(InputError, match="skipped"):
        ModelSet.from_json(json.dumps(document), source="models.json")


def test_streamed_json_is_the_same_text(partial):
    models = perfcast.fit(partial)
    stream = io.StringIO()
    models.write_json(stream)
    assert stream.getvalue() == models.to_json()
    empty = ModelSet([])
    stream = io.StringIO()
    empty.write_json(stream)
    assert stream.getvalue() == empty.to_json()
    assert json.loads(empty.to_json())["models"] == []


def test_analyses_leave_skipped_kernels_out(partial):
    models = perfcast.fit(partial)
    diagnosis = perfcast.diagnose(partial, models)
    assert "short" not in {row.kernel for row in diagnosis.ranking}
    html = perfcast.report(partial, models)
    assert "exchange" in html
    comparison = perfcast.compare(partial, partial, models=(models, models))
    assert sorted(change.kernel for change in comparison.kernels) == ["exchange", "solve"]
    optimum = perfcast.optimize(partial, models, config_params=["p"])
    assert np.isfinite(optimum.value)
    # Fitted inside the analysis, the same holds.
    assert "short" not in {row.kernel for row in perfcast.diagnose(partial).ranking}


def test_a_kernel_missing_without_being_skipped_is_still_an_error(complete, partial):
    models = perfcast.fit(complete)
    with pytest.raises(InputError, match="no time model for kernel 'short'"):
        perfcast.diagnose(partial, models)


def test_command_line_warns_once_per_skip_and_strict_exits_2(partial, tmp_path, capsys):
    path = tmp_path / "partial.csv"
    write_experiment(partial, path)
    assert main(["model", str(path)]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if "warning" in line]
    assert warnings == [
        "perfcast: warning: kernel 'short' (time) skipped: measured at 2 value(s) of 'p'; a "
        "model needs at least 3 (5 recommended)"
    ]
    assert "1 kernel skipped (short): measured at 2 value(s)" in captured.out
    out = tmp_path / "models.json"
    assert main(["model", str(path), "--format", "json", "--out", str(out)]) == 0
    assert [s["kernel"] for s in json.loads(out.read_text())["skipped"]] == ["short"]
    assert main(["diagnose", str(path), "--models", str(out)]) == 0
    assert "skipped" in capsys.readouterr().err
    assert main(["model", str(path), "--strict"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "kernel 'short' (time) cannot be modeled" in error[0]


def test_searching_in_chunks_chooses_the_same_models():
    rng = np.random.default_rng(5)
    exponents = rng.choice([0.5, 1.0, 2.0], 700)
    experiment = synthetic_experiment(
        {
            f"k{i}": (lambda p, e=e, i=i: 1.0 + 0.3 * p**e + (i % 3) * 4.0 * np.log2(p) ** 2)
            for i, e in enumerate(exponents)
        },
        {"p": [4, 8, 16, 32, 64]},
        noise=0.03,
        repetitions=3,
    )
    (series,) = experiment.series()
    data = FitData.from_series(series)
    blocks = building_blocks(True)
    pool = evaluate_blocks(blocks, series.points[:, 0])
    subsets = [np.arange(len(blocks))[:, None]]
    subsets.append(np.array(np.triu_indices(len(blocks), 1)).T)
    whole = search(data, pool, subsets, None, SearchSettings(), chunk=10_000)
    chunked = search(data, pool, subsets, None, SearchSettings(), chunk=128)
    assert [t.tolist() for t in chunked.terms] == [t.tolist() for t in whole.terms]
    assert np.array_equal(chunked.constants, whole.constants)
    assert all(
        np.array_equal(a, b) for a, b in zip(chunked.coefficients, whole.coefficients, strict=True)
    )
    assert np.array_equal(chunked.wrss, whole.wrss)
    assert len({len(t) for t in whole.terms}) > 1  # models of different sizes were chosen


def test_a_csv_longer_than_one_batch_reads_whole(tmp_path):
    kernels = np.repeat([f"k{i}" for i in range(14_000)], 5)
    experiment = Experiment.from_columns(
        kernels,
        ["time"] * len(kernels),
        {"p": np.tile([2.0, 4.0, 8.0, 16.0, 32.0], 14_000)},
        np.arange(len(kernels), dtype=float) / 7.0,
    )
    path = tmp_path / "long.csv"
    write_experiment(experiment, path)
    again = read_experiment(path)
    assert again.kernels == experiment.kernels
    assert np.array_equal(again.frame["value"].to_numpy(), experiment.frame["value"].to_numpy())
