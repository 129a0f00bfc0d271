"""The binary batch files of the C online regions (``*.pcob``): read back exactly, bad files
refused with the file named, and the collector sets a bad file aside without losing the good
ones."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import pytest

from perfcast.api import serve_spool, stored_models
from perfcast.core.errors import InputError
from perfcast.io.online_batch import read_batch_file


def write_batch(
    path: Path,
    rows: list[tuple[list[float], float, int]],
    *,
    names: tuple[str, ...] = ("n", "p"),
    skipped: int = 0,
    order: str = sys.byteorder,
    version: int = 1,
    cut: int = 0,
) -> Path:
    """A batch file as the C library writes it (``cut`` bytes missing at the end)."""
    header = {"format": "perfcast-online-batch", "version": version, "byteorder": order,
              "kernel": "sweep", "metric": "cputime", "records": len(rows),
              "skipped": skipped, "params": list(names)}  # fmt: skip
    code = "<" if order == "little" else ">"
    params = b"".join(struct.pack(f"{code}{len(names)}d", *row[0]) for row in rows)
    values = struct.pack(f"{code}{len(rows)}d", *(row[1] for row in rows))
    skips = struct.pack(f"{code}{len(rows)}Q", *(row[2] for row in rows))
    data = (json.dumps(header) + "\n").encode() + params + values + skips
    path.write_bytes(data[: len(data) - cut])
    return path


@pytest.mark.parametrize("order", ["little", "big"])
def test_records_read_back_in_order_with_their_skips(tmp_path: Path, order: str) -> None:
    rows = [([64.0, 4.0], 0.125, 0), ([128.0, 4.0], 0.5, 7), ([64.0, 8.0], 1e-9, 2**40)]
    path = write_batch(tmp_path / "a.pcob", rows, skipped=3, order=order)
    records = read_batch_file(path)
    assert [(r.params, r.value, r.skipped, r.index) for r in records[:3]] == [
        ({"n": 64.0, "p": 4.0}, 0.125, 0, 0),
        ({"n": 128.0, "p": 4.0}, 0.5, 7, 1),
        ({"n": 64.0, "p": 8.0}, 1e-9, 2**40, 2),
    ]
    assert {(r.kernel, r.metric) for r in records} == {("sweep", "cputime")}
    trailing = records[3]  # the skips after the last measurement, as the stream's skip line
    assert (trailing.params, trailing.value, trailing.skipped, trailing.index) == ({}, None, 3, 3)


@pytest.mark.parametrize(
    ("settings", "message", "line"),
    [
        ({"cut": 8}, "a truncated or foreign file", None),
        ({"version": 2}, "format version 2; this perfcast reads version 1", 1),
        ({"order": "middle"}, "'byteorder' is 'middle'", 1),
        ({"names": ("n", "n")}, "repeats a parameter", 1),
    ],
)
def test_a_bad_file_is_refused_naming_it(
    tmp_path: Path, settings: dict, message: str, line: int | None
) -> None:
    names = settings.get("names", ("n", "p"))
    path = write_batch(tmp_path / "bad.pcob", [([1.0] * len(names), 2.0, 0)], **settings)
    with pytest.raises(InputError, match=message) as caught:
        read_batch_file(path)
    assert caught.value.source == str(path) and caught.value.line == line
    assert caught.value.reason == "bad-batch-file"


def test_a_value_that_is_not_finite_names_its_record(tmp_path: Path) -> None:
    rows = [([1.0, 1.0], 2.0, 0), ([2.0, 1.0], float("nan"), 0)]
    with pytest.raises(InputError, match="record 2: .* not finite"):
        read_batch_file(write_batch(tmp_path / "nan.pcob", rows))


def test_text_that_is_no_batch_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.pcob"
    path.write_bytes(b'{"kernel": "k"}\n')
    with pytest.raises(InputError, match="does not name the format"):
        read_batch_file(path)


def test_the_collector_sets_a_bad_file_aside_and_keeps_the_good_ones(tmp_path: Path) -> None:
    spool, store = tmp_path / "spool", tmp_path / "models.db"
    spool.mkdir()
    rows = [([float(n), 1.0], 0.001 * n, 0) for n in (8, 16, 32, 64) for _ in range(4)]
    write_batch(spool / "001.pcob", rows)
    write_batch(spool / "002.pcob", rows, cut=3)
    write_batch(spool / "003.pcob", rows, skipped=5)
    messages: list[str] = []
    assert serve_spool(spool, store, batch=16, once=True, on_rejected=messages.append) == 2
    assert [p.name for p in sorted(spool.iterdir()) if p.is_file()] == ["002.rejected"]
    assert len(messages) == 1 and "002.pcob" in messages[0] and "truncated" in messages[0]
    (item,) = stored_models(store)
    assert (item["kernel"], item["measured"], item["skipped"]) == ("sweep", 32, 5)
