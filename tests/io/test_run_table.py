"""Run tables: numeric and categorical columns, cost columns, bad cells named by line."""

from __future__ import annotations

import numpy as np
import pytest

from perfcast.core.errors import InputError
from perfcast.io.run_table import from_columns, read_run_table, write_run_table


def _write(tmp_path, text, name="runs.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_columns_are_numbers_or_words_and_costs_are_kept_apart(tmp_path):
    path = _write(tmp_path, "n,alg,time,cost:n\n10,tree,1.5,0.01\n2e3,direct,2.5,0.02\n")
    table = read_run_table(path)
    assert table.columns == ["n", "alg", "time"]
    assert table.numeric["n"].tolist() == [10.0, 2000.0]
    assert table.categorical["alg"].tolist() == ["tree", "direct"]
    assert table.costs["n"].tolist() == [0.01, 0.02]
    assert table.rows == 2


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("n,time\n1,2\nabc,3\n", 3, "'abc'"),
        ("n,time\n1,2\n1_000,3\n", 3, "'1_000'"),
        ("n,time\nnan,2\n", 2, "'nan'"),
        ("alg,time\ntree,2\n12,3\n", 3, "number '12'"),
        ("n,time\n1,\n", 2, "empty cell"),
        ("n,time\n1,2,3\n", 2, "3 cells, the header has 2"),
        ("n,n\n1,2\n", 1, "appears twice"),
        ("n,time,cost:m\n1,2,3\n", 1, "no column of the table"),
        # blank lines are skipped but counted: these used to name lines 4, 3, 4 and 4
        ("n,time\n1,2\n\n2,3\nx,4\n", 5, "'x'"),
        ("n,time\n\n1,2,3\n", 3, "3 cells, the header has 2"),
        ("alg,time\ntree,2\n\n\n12,3\n", 5, "number '12'"),
        ("n,time\n1,2\n\n\n3,\n", 5, "empty cell"),
    ],
)
def test_bad_cells_name_file_and_line(tmp_path, text, line, words):
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        read_run_table(path)
    assert caught.value.source == str(path)
    assert caught.value.line == line
    assert words in str(caught.value)


def test_header_only_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="no runs below the header"):
        read_run_table(_write(tmp_path, "n,time\n"))
    with pytest.raises(InputError, match="no such file"):
        read_run_table(tmp_path / "absent.csv")


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_round_trip(tmp_path, suffix):
    table = from_columns(
        {
            "n": [1.0, 2.5, 3e10],
            "alg": ["a", "b", "a"],
            "time": [0.1, 0.2, 0.3],
            "cost:n": [1e-6, 2e-6, 3e-6],
        }  # fmt: skip
    )
    path = tmp_path / f"runs{suffix}"
    write_run_table(table, path)
    again = read_run_table(path)
    assert again.columns == ["n", "alg", "time"]
    np.testing.assert_array_equal(again.numeric["n"], table.numeric["n"])
    assert again.categorical["alg"].tolist() == ["a", "b", "a"]
    np.testing.assert_array_equal(again.costs["n"], table.costs["n"])


def test_bytes_that_are_not_utf8_are_named_by_line(tmp_path):
    # the message used to be "cannot read: 'utf-8' codec can't decode byte 0xff in position 12"
    path = tmp_path / "runs.csv"
    path.write_bytes(b"n,time\n1,2\nab\xff,3\n")
    with pytest.raises(InputError) as caught:
        read_run_table(path)
    assert (caught.value.source, caught.value.line) == (str(path), 3)
    assert "not a text file (bytes that are not UTF-8)" in caught.value.message


def test_a_parquet_cell_that_is_not_finite_names_file_column_and_row(tmp_path):
    # the message used to be "cell is 'nan', not a finite number", without file or row
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "runs.parquet"
    pq.write_table(pa.table({"n": [1.0, 2.0, float("nan")], "time": [1.0, 2.0, 3.0]}), path)
    with pytest.raises(InputError) as caught:
        read_run_table(path)
    assert (caught.value.source, caught.value.line) == (str(path), 3)
    assert "numeric column 'n': value is 'nan'" in caught.value.message
    with pytest.raises(InputError) as caught:
        from_columns({"n": [1.0, float("inf")], "time": [1.0, 2.0]}, "runs")
    assert (caught.value.source, caught.value.line) == ("runs", 2)
