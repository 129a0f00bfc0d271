"""Reading a Parquet table or an Extra-P JSON Lines file in blocks of whole kernels."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from perfcast.core.errors import InputError
from perfcast.io import jsonlines, kernel_blocks, read_experiment, write_experiment
from perfcast.io.kernel_blocks import read_blocks
from tests.model.test_distributed import mixed_experiment


@pytest.fixture(scope="module")
def experiment():
    return mixed_experiment(25, {"p": [2, 4, 8, 16, 32]}, seed=2)


def rows_of(experiment) -> pd.DataFrame:
    return experiment.frame.reset_index(drop=True)


@pytest.mark.parametrize(("suffix", "name"), [(".parquet", "table"), (".jsonl", jsonlines.NAME)])
def test_blocks_hold_whole_kernels_and_every_row(tmp_path, experiment, suffix, name, monkeypatch):
    monkeypatch.setattr(kernel_blocks, "BATCH_ROWS", 37)  # kernels cut across batches
    path = tmp_path / f"runs{suffix}"
    write_experiment(experiment, path)
    blocks = list(read_blocks(path, 10, name))
    assert [len(b.kernels) for b in blocks] == [10, 10, 5]
    assert [k for b in blocks for k in b.kernels] == experiment.kernels
    assert all(b.metric_names == ["time", "energy"] for b in blocks)
    whole = rows_of(read_experiment(path))
    together = pd.concat([rows_of(b) for b in blocks], ignore_index=True)
    pd.testing.assert_frame_equal(together, whole)


def test_one_block_when_the_file_has_fewer_kernels(tmp_path, experiment):
    path = tmp_path / "runs.parquet"
    write_experiment(experiment, path)
    [block] = read_blocks(path, 1000, "table")
    pd.testing.assert_frame_equal(rows_of(block), rows_of(read_experiment(path)))


def test_a_kernel_whose_rows_come_back_later_is_refused(tmp_path, experiment):
    frame = experiment.frame
    # k0's energy rows after every other kernel's: k0 reappears.
    moved = pd.concat([frame[frame["metric"] == "time"], frame[frame["metric"] == "energy"]])
    path = tmp_path / "by-metric.parquet"
    moved.to_parquet(path, index=False)
    blocks = read_blocks(path, 10, "table")
    row = len(frame[frame["metric"] == "time"]) + 1
    with pytest.raises(InputError, match=f"row {row}: the rows of kernel 'k0' are not together"):
        list(blocks)
    lines = tmp_path / "by-metric.jsonl"
    records = [
        {"params": {"p": r.p}, "callpath": r.kernel, "metric": r.metric, "value": r.value}
        for r in moved.itertuples()
    ]
    lines.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(InputError, match="the rows of kernel 'k0' are not together") as error:
        list(read_blocks(lines, 10, jsonlines.NAME))
    assert error.value.line == row and str(lines) in str(error.value)


def test_a_bad_cell_names_its_row_in_the_file(tmp_path, experiment, monkeypatch):
    monkeypatch.setattr(kernel_blocks, "BATCH_ROWS", 40)
    frame = experiment.frame.copy()
    frame["value"] = frame["value"].map(repr)  # a column of text, as some writers make
    frame.loc[101, "value"] = "fast"  # in the third batch
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path, index=False)
    with pytest.raises(InputError) as whole:
        read_experiment(path)
    with pytest.raises(InputError) as blocked:
        list(read_blocks(path, 5, "table"))
    assert str(blocked.value) == str(whole.value)
    assert "row 102: value is 'fast'" in str(blocked.value)


def test_a_bad_record_names_its_line(tmp_path, experiment):
    path = tmp_path / "runs.jsonl"
    write_experiment(experiment, path)
    lines = path.read_text().splitlines()
    lines[300] = '{"params": {"p": 2}, "callpath": "k9", "metric": "time", "value": "NaN"}'
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as whole:
        read_experiment(path)
    with pytest.raises(InputError) as blocked:
        list(read_blocks(path, 3, jsonlines.NAME))
    assert str(blocked.value) == str(whole.value) and blocked.value.line == 301


def test_formats_read_whole_are_refused(tmp_path, experiment):
    path = tmp_path / "runs.csv"
    write_experiment(experiment, path)
    with pytest.raises(InputError, match="table files are read whole; in blocks of kernels"):
        read_blocks(path, 10, "table")
    with pytest.raises(ValueError, match="kernels: must be a whole number >= 1"):
        read_blocks(path, 0, "table")


def test_an_empty_file_is_an_input_error(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    with pytest.raises(InputError, match="the file holds no records"):
        list(read_blocks(path, 10, jsonlines.NAME))


@pytest.mark.parametrize(
    ("column", "cell", "shown"), [("value", float("inf"), "inf"), ("p", -float("inf"), "-inf")]
)
def test_an_infinite_number_in_the_middle_of_a_parquet_table_is_shown_plainly(
    tmp_path, experiment, monkeypatch, column, cell, shown
):
    # Before: "row 102: value is np.float64(inf), not a finite number" (numpy's repr).
    monkeypatch.setattr(kernel_blocks, "BATCH_ROWS", 40)
    frame = experiment.frame.copy()
    frame.loc[101, column] = cell  # in the third batch
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path, index=False)
    with pytest.raises(InputError) as whole:
        read_experiment(path)
    with pytest.raises(InputError) as blocked:
        list(read_blocks(path, 5, "table"))
    assert str(blocked.value) == str(whole.value)
    assert f"row 102: {column} is {shown}, not a finite number" in str(blocked.value)
    assert str(path) in str(blocked.value)
