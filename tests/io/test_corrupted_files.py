"""Damaged copies of real files either load or give an InputError: never another exception."""

from __future__ import annotations

import numpy as np
import pytest

from perfcast.core.errors import InputError
from perfcast.io import read_experiment, write_experiment
from tests.io.conftest import EXTRAP_DATA

SOURCES = [
    "text/two_parameter_1.txt",
    "text/one_parameter_segmented_4.txt",
    "json/input_4.JSON",
    "json/new/input2.json",
    "jsonlines/extended2.jsonl",
    "talpas/talpas_7.txt",
]
GARBAGE = ["", " ", "x", "(", ")", "{", "}", '"', ";", ",", "nan", "-", "\n", "1e999", "[", "\x00"]


def _damaged(text: str, rng: np.random.Generator) -> str:
    kind = rng.integers(4)
    position = int(rng.integers(len(text)))
    if kind == 0:  # truncated
        return text[:position]
    if kind == 1:  # a line lost
        lines = text.splitlines(keepends=True)
        del lines[int(rng.integers(len(lines)))]
        return "".join(lines)
    garbage = GARBAGE[int(rng.integers(len(GARBAGE)))]
    if kind == 2:  # a character replaced
        return text[:position] + garbage + text[position + 1 :]
    return text[:position] + garbage + text[position:]  # something inserted


def _check(path) -> str:
    try:
        read_experiment(path)
    except InputError as error:
        assert error.source == str(path)
        return "rejected"
    return "read"


@pytest.mark.parametrize("name", SOURCES)
def test_damaged_extrap_files(tmp_path, name):
    text = (EXTRAP_DATA / name).read_text()
    rng = np.random.default_rng(sum(map(ord, name)))
    outcomes = []
    for attempt in range(60):
        path = tmp_path / f"{attempt}-{name.replace('/', '_')}"
        path.write_text(_damaged(text, rng))
        outcomes.append(_check(path))
    assert "rejected" in outcomes


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_damaged_perfcast_files(tmp_path, suffix):
    original = tmp_path / f"original{suffix}"
    experiment = read_experiment(EXTRAP_DATA / "text/one_parameter_3.txt")
    experiment.metadata["machine"] = "node01"
    write_experiment(experiment, original)
    text = original.read_text()
    rng = np.random.default_rng(len(suffix))
    outcomes = []
    for attempt in range(60):
        path = tmp_path / f"{attempt}{suffix}"
        path.write_text(_damaged(text, rng))
        outcomes.append(_check(path))
    assert "rejected" in outcomes
