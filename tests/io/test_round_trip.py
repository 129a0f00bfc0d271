"""Writing and reading back gives the identical long table, for every writer."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment, Metric, Parameter
from perfcast.io import detect_format, read_experiment, write_experiment

WRITERS = {
    "perfcast-json": "out.perfcast.json",
    "table-csv": "out.csv",
    "table-parquet": "out.parquet",
    "extrap-jsonlines": "out.jsonl",
    "extrap-text": "out.txt",
    "extrap-json": "out.extrap.json",
}
FORMAT_OF = {"table-csv": "table", "table-parquet": "table"}
# Formats that carry units, roles and metadata along with the table.
DESCRIBED = {"perfcast-json", "table-csv", "table-parquet"}


def awkward_experiment() -> Experiment:
    """Two parameters, call paths, two metrics, uneven repetitions, numbers that print badly."""
    rng = np.random.default_rng(7)
    rows = []
    for kernel in ["main", "main->solve", "main->solve->spmv"]:
        for metric in ["time", "visits"]:
            for p in [2.0, 4.0, 8.0]:
                for n in [0.1, 1e6, 12345.678901234]:
                    repetitions = 1 if metric == "visits" else 2 + int(p) % 3
                    for _ in range(repetitions):
                        value = rng.lognormal() * 1e-7 if metric == "time" else float(int(p * 3))
                        rows.append((kernel, metric, p, n, value))
    frame = pd.DataFrame(rows, columns=["kernel", "metric", "p", "n", "value"])
    return Experiment.from_frame(
        frame,
        parameters=[Parameter("p", "processes"), Parameter("n", "problem_size")],
        metrics=[Metric("time", "s"), Metric("visits", "")],
        metadata={"machine": "node01", "date": "2026-11-22", "ranks": [2, 4, 8]},
        source="synthetic",
    )


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    columns = list(frame.columns)
    return frame.sort_values(columns).reset_index(drop=True)


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_round_trip_keeps_the_table(tmp_path, writer):
    experiment = awkward_experiment()
    path = tmp_path / WRITERS[writer]
    output_format = FORMAT_OF.get(writer, writer)
    write_experiment(experiment, path, output_format)
    back = read_experiment(path)
    pd.testing.assert_frame_equal(_sorted(back.frame), _sorted(experiment.frame), check_exact=True)
    assert back.parameter_names == experiment.parameter_names
    if writer in DESCRIBED:
        assert back.parameters == experiment.parameters
        assert back.metrics == experiment.metrics
        assert back.metadata == experiment.metadata


def test_perfcast_json_keeps_row_order_and_repetition_numbers(tmp_path):
    frame = pd.DataFrame(
        {
            "kernel": ["a", "b", "a", "b", "a"],
            "metric": ["time"] * 5,
            "p": [1, 1, 1, 1, 2],
            "repetition": [3, 0, 7, 1, 0],
            "value": [0.1, 0.2, 0.30000000000000004, 1e-300, 5e300],
        }
    )
    experiment = Experiment.from_frame(frame)
    path = tmp_path / "x.json"
    write_experiment(experiment, path)
    assert detect_format(path) == "perfcast-json"
    back = read_experiment(path)
    pd.testing.assert_frame_equal(back.frame, experiment.frame, check_exact=True)
    assert json.loads(path.read_text())["measurements"][0]["repetitions"] == [3]


def test_perfcast_json_groups_runs_of_repetitions(tmp_path):
    experiment = awkward_experiment()
    path = tmp_path / "x.perfcast.json"
    write_experiment(experiment, path)
    document = json.loads(path.read_text())
    assert document["format"] == "perfcast-experiment"
    assert len(document["measurements"]) == 3 * 2 * 9
    assert "repetitions" not in document["measurements"][0]
    assert document["parameters"][0] == {"name": "p", "role": "processes"}
    pd.testing.assert_frame_equal(read_experiment(path).frame, experiment.frame, check_exact=True)


def test_csv_without_units_is_plain(tmp_path):
    frame = pd.DataFrame({"kernel": ["a"], "metric": ["time"], "p": [2.0], "value": [1.5]})
    path = tmp_path / "plain.csv"
    write_experiment(Experiment.from_frame(frame), path)
    assert path.read_text().splitlines() == ["kernel,metric,p,repetition,value", "a,time,2.0,0,1.5"]


def test_csv_header_is_readable_by_pandas(tmp_path):
    path = tmp_path / "units.csv"
    write_experiment(awkward_experiment(), path)
    assert path.read_text().startswith('# perfcast {"parameters": [{"name": "p"')
    plain = pd.read_csv(path, comment="#")
    assert list(plain.columns) == ["kernel", "metric", "p", "n", "repetition", "value"]
    assert len(plain) == len(awkward_experiment().frame)


def test_extrap_text_output_layout(tmp_path):
    frame = pd.DataFrame(
        {
            "kernel": ["main", "main", "main->io", "main->io"],
            "metric": ["time"] * 4,
            "p": [2.0, 4.0, 2.0, 4.0],
            "value": [1.0, 2.5, 0.1, 0.2],
        }
    )
    path = tmp_path / "t.txt"
    write_experiment(Experiment.from_frame(frame), path)
    assert path.read_text().splitlines() == [
        "PARAMETER p",
        "",
        "POINTS ( 2 )",
        "POINTS ( 4 )",
        "",
        "REGION main",
        "METRIC time",
        "DATA 1",
        "DATA 2.5",
        "",
        "REGION main->io",
        "METRIC time",
        "DATA 0.1",
        "DATA 0.2",
    ]


def test_extrap_text_refuses_incomplete_kernels(tmp_path):
    frame = pd.DataFrame(
        {"kernel": ["a", "a", "b"], "metric": ["time"] * 3, "p": [2, 4, 2], "value": [1, 2, 3]}
    )
    with pytest.raises(InputError, match="kernel 'b', metric 'time' has no data at point"):
        write_experiment(Experiment.from_frame(frame), tmp_path / "t.txt")


def test_extrap_text_refuses_names_it_would_change(tmp_path):
    frame = pd.DataFrame({"kernel": ["a  b"], "metric": ["time"], "p": [2], "value": [1]})
    with pytest.raises(InputError, match="cannot be written"):
        write_experiment(Experiment.from_frame(frame), tmp_path / "t.txt")


def test_unknown_output_suffix(tmp_path):
    with pytest.raises(InputError, match="cannot tell the output format"):
        write_experiment(awkward_experiment(), tmp_path / "out.xlsx")


def test_unwritable_output(tmp_path):
    with pytest.raises(InputError, match="cannot write"):
        write_experiment(awkward_experiment(), tmp_path / "missing-dir" / "out.csv")


def test_extrap_files_survive_every_writer(tmp_path, extrap_data):
    for name in ["text/one_parameter_2.txt", "json/new/input2.json", "talpas/talpas_9.txt"]:
        original = read_experiment(extrap_data / name)
        for writer, file_name in WRITERS.items():
            path = tmp_path / file_name
            write_experiment(original, path, FORMAT_OF.get(writer, writer))
            back = read_experiment(path)
            pd.testing.assert_frame_equal(
                _sorted(back.frame), _sorted(original.frame), check_exact=True
            )


@pytest.mark.parametrize("name", ["out.json", "out.csv", "out.parquet"])
def test_metadata_that_json_cannot_hold_is_an_input_error(tmp_path, name):
    experiment = awkward_experiment()
    experiment.metadata["started"] = object()
    with pytest.raises(InputError, match="the metadata cannot be written as JSON"):
        write_experiment(experiment, tmp_path / name)
    assert not (tmp_path / name).exists()
