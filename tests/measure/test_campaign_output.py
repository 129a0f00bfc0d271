"""The campaign's experiment table: one writer dispatch, a bare CSV, whole files only."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfcast.core.errors import InputError
from perfcast.io import read_experiment
from perfcast.measure.campaign import write_output
from tests.analyze.synthetic import experiment


@pytest.fixture
def measured():
    # Metadata would make the table writer add a "# perfcast {...}" line to a CSV file.
    return experiment({"k": lambda p: 2.0 * p}, {"p": [1, 2, 4]}, 2, metadata={"machine": "m"})


def test_csv_output_is_the_bare_table(tmp_path: Path, measured) -> None:
    output = tmp_path / "runs.CSV"
    write_output(measured, output)
    assert output.read_text() == measured.to_frame().to_csv(index=False)
    assert [p.name for p in tmp_path.iterdir()] == ["runs.CSV"]


@pytest.mark.parametrize("name", ["runs.parquet", "runs.jsonl", "runs.perfcast.json"])
def test_other_formats_are_written_whole_by_their_writer(tmp_path: Path, measured, name) -> None:
    output = tmp_path / name
    write_output(measured, output)
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no partial file left behind
    assert read_experiment(output).to_frame().equals(measured.to_frame())
    if name.endswith(".parquet"):
        assert output.read_bytes()[:4] == b"PAR1"


def test_a_file_name_no_writer_takes_is_an_input_error(tmp_path: Path, measured) -> None:
    with pytest.raises(InputError) as caught:
        write_output(measured, tmp_path / "runs.xlsx")
    assert caught.value.reason == "unknown-output-format"
    assert list(tmp_path.iterdir()) == []
