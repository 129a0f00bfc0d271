"""A tuning database damaged or edited by hand (config text that is not a JSON object, an
embedding blob of the wrong length or with NaN) is refused naming the file and the row, not
with a traceback from the JSON or NumPy reader."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from perfcast.core.errors import InputError
from perfcast.io.tuning_db import Evaluation, TuningDatabase


def _database(tmp_path: Path) -> tuple[Path, int]:
    path = tmp_path / "tuning.sqlite"
    with TuningDatabase(path) as store:
        kernel = store.add_kernel("a.c", "solve", "function", 3, np.array([1.0, 0.0, 2.0]))
        store.add_kernel("b.c", "other", "function", 9, np.array([1.0, 1.0, 2.0]))
        done = Evaluation(1, {"UNROLL": "4"}, "cycles", 10.0, 100, 0.1, "function", "search", "")
        store.add_evaluations(kernel, "s1", [done])
    return path, kernel


def _damage(path: Path, statement: str, *values: object) -> None:
    connection = sqlite3.connect(path)
    with connection:
        connection.execute(statement, values)
    connection.close()


@pytest.mark.parametrize(
    "config", ["{not json", "[1, 2]", '{"UNROLL": "4", "UNROLL": "8"}', "null"]
)
def test_a_stored_config_that_is_no_json_object_is_refused(tmp_path: Path, config: str) -> None:
    path, kernel = _database(tmp_path)
    _damage(path, "UPDATE evaluations SET config = ?", config)
    with TuningDatabase(path) as store, pytest.raises(InputError) as refused:
        store.evaluations(kernel)
    assert refused.value.source == str(path) and "evaluation 1" in str(refused.value)


def _read_kernels(store: TuningDatabase) -> object:
    return store.kernels()


def _read_nearest(store: TuningDatabase) -> object:
    return store.nearest(np.array([1.0, 0.0, 2.0]), 2)


_NOT_WHOLE = b"\x00" * 12
_NAN = np.array([1.0, np.nan, 2.0]).tobytes()
_SHORT = np.array([1.0, 2.0]).tobytes()  # whole doubles, but fewer than embedding_size


@pytest.mark.parametrize(
    ("reader", "blob"),
    [
        (_read_kernels, _NOT_WHOLE),
        (_read_kernels, _NAN),
        (_read_nearest, _NOT_WHOLE),
        (_read_nearest, _NAN),
        (_read_nearest, _SHORT),
    ],
    ids=["kernels-not-whole", "kernels-nan", "nearest-not-whole", "nearest-nan", "nearest-short"],
)
def test_a_damaged_embedding_is_refused_naming_the_file(
    tmp_path: Path, reader: Callable[[TuningDatabase], object], blob: bytes
) -> None:
    path, kernel = _database(tmp_path)
    _damage(path, "UPDATE kernels SET embedding = ? WHERE id = ?", blob, kernel)
    with TuningDatabase(path) as store, pytest.raises(InputError) as refused:
        reader(store)
    assert refused.value.source == str(path)


def test_an_intact_database_reads_back(tmp_path: Path) -> None:
    path, kernel = _database(tmp_path)
    with TuningDatabase(path) as store:
        (evaluation,) = store.evaluations(kernel)
        assert evaluation.config == {"UNROLL": "4"} and evaluation.value == 10.0
        assert [k.function for k in store.kernels()] == ["solve", "other"]
        nearest = store.nearest(np.array([1.0, 0.0, 2.0]), 1)
        assert nearest[0][0].function == "solve" and nearest[0][1] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("value", "fast"),
        ("value", float("inf")),
        ("instructions", 1.5),
        ("seconds", "1s"),
        ("step", "one"),
        ("step", 2.5),
    ],
)
def test_a_stored_field_of_the_wrong_type_is_refused(
    tmp_path: Path, column: str, value: object
) -> None:
    # SQLite keeps text in a REAL column; the warm start then compared "fast" > 0 (TypeError).
    path, kernel = _database(tmp_path)
    _damage(path, f"UPDATE evaluations SET {column} = ?", value)
    with TuningDatabase(path) as store, pytest.raises(InputError) as refused:
        store.evaluations(kernel)
    assert refused.value.source == str(path) and "evaluation 1" in str(refused.value)
