"""Signatures whose counts lie near the largest double: the canonical forms' fits overflow to
infinity quietly (a form that does not fit) instead of raising OverflowError (a traceback) or
printing NumPy's RuntimeWarning, and the output stays valid JSON."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from perfcast.api import save
from perfcast.cli import main
from perfcast.core.experiment import Experiment

CORES = (16, 32, 64, 128)


def _signature(tmp_path: Path, loaded: Callable[[int], float]) -> Path:
    rows = [
        (metric, p, value)
        for p in CORES
        for metric, value in (
            ("bytes.loaded", loaded(p)),
            ("l1.hit_rate", 0.5),
            ("ll.cumulative_hit_rate", 0.9),
        )
    ]
    signature = Experiment.from_columns(
        ["bb:k+0x0"] * len(rows),
        [r[0] for r in rows],
        {"p": [r[1] for r in rows]},
        [r[2] for r in rows],
    )
    path = tmp_path / "signature.json"
    save(signature, path)
    return path


@pytest.mark.parametrize(
    ("loaded", "target"),
    [
        # halving every 8 cores from 1e308: the exponential form's intercept is beyond a double
        (lambda p: 1e308 / 2 ** (p / 8), 8),
        # constant near the largest double: the mean of the values overflows
        (lambda p: 1e308, 8192),
    ],
    ids=["exponential intercept", "constant mean"],
)
def test_extrapolating_counts_near_the_largest_double_gives_valid_json(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    loaded: Callable[[int], float],
    target: int,
) -> None:
    path = _signature(tmp_path, loaded)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        status = main(["extrapolate", str(path), "--to", f"p={target}", "--format", "json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    document = json.loads(captured.out, parse_constant=lambda c: pytest.fail(c))
    (element,) = [e for e in document["elements"] if e["feature"] == "bytes.loaded"]
    assert element["value"] == pytest.approx(loaded(target), rel=1e-6)
