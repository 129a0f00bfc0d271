"""Hand-written machine profiles with hostile cache lines and rates: refused naming the file and
field (exit 2, no traceback), or, where the values are valid but the time overflows, a JSON
document without NaN whose warning says the time is not finite."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from perfcast.api import save
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.io.machine_profile import read_machine

ROOT = Path(__file__).resolve().parents[2]

MACHINE: dict[str, Any] = {
    "format": "perfcast-machine",
    "version": 1,
    "name": "hand",
    "memory": {
        "load": {"l1": 100.0, "ll": 20.0, "memory": 5.0},
        "store": {"l1": 50.0, "ll": 10.0, "memory": 2.5},
    },
    "fp": {"add.f64.scalar": 2.0},
    "cache": {"D1": {"size": 32768, "associativity": 8, "line": 64}},
    "stream": {"load": {"ll": 50.0, "memory": 25.0}, "store": {"ll": 40.0, "memory": 20.0}},
    "core": {"instructions": 4.0, "misprediction_penalty": 5.0},
}


def _machine(tmp_path: Path, **changes: Any) -> Path:
    data = copy.deepcopy(MACHINE)
    for level, line in changes.pop("lines", {}).items():
        data["cache"][level] = {"size": 32768, "associativity": 8, "line": line}
    data.update(changes)
    path = tmp_path / "machine.json"
    path.write_text(json.dumps(data))
    return path


def _signature(tmp_path: Path) -> Path:
    features = {
        "bytes.loaded": 8e9,
        "l1.hit_rate": 0.875,
        "ll.cumulative_hit_rate": 0.9,
        "fp.add.f64.scalar": 4e9,
        "instructions": 2e9,
    }
    signature = Experiment.from_columns(
        ["bb:solve+0x0"] * len(features),
        list(features),
        {"p": [64] * len(features)},
        list(features.values()),
    )
    path = tmp_path / "signature.json"
    save(signature, path)
    return path


def _perfcast(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "perfcast.cli", *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )


@pytest.mark.parametrize("line", [2**62, 131072, 4, 1])
@pytest.mark.parametrize("level", ["D1", "LL"])
def test_a_cache_line_outside_real_sizes_is_refused_naming_the_field(
    tmp_path: Path, level: str, line: int
) -> None:
    path = _machine(tmp_path, lines={level: line})
    with pytest.raises(InputError, match=f"field 'cache.{level}.line'") as refused:
        read_machine(path)
    assert refused.value.source == str(path)


@pytest.mark.parametrize("line", [8, 64, 65536])
def test_cache_lines_of_real_sizes_are_read(tmp_path: Path, line: int) -> None:
    assert read_machine(_machine(tmp_path, lines={"D1": line})).cache["D1"]["line"] == line


def test_convolve_refuses_a_huge_line_with_exit_2_not_a_division_by_zero(tmp_path: Path) -> None:
    # A 2**62-byte line made 1 - 8 / line equal 1.0: ZeroDivisionError and a traceback.
    machine = _machine(tmp_path, lines={"D1": 2**62})
    result = _perfcast(tmp_path, "convolve", str(_signature(tmp_path)), "--machine", str(machine))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert str(machine) in result.stderr and "cache.D1.line" in result.stderr


def test_a_subnormal_bandwidth_gives_valid_json_that_says_the_time_is_not_finite(
    tmp_path: Path,
) -> None:
    memory = copy.deepcopy(MACHINE["memory"])
    memory["load"]["memory"] = 5e-324
    machine = _machine(tmp_path, memory=memory)
    result = _perfcast(
        tmp_path, "convolve", str(_signature(tmp_path)), "--machine", str(machine), "--format",
        "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout, parse_constant=lambda c: pytest.fail(c))
    assert document["total_seconds"] is None
    assert any("not a finite number" in w for w in document["warnings"])


@pytest.mark.parametrize(
    ("section", "change", "field"),
    [
        (
            "core",
            {"instructions": 4.0, "misprediction_penalty": 5.0, "penalty": 9.0},
            "core.penalty",
        ),
        ("stream", {"laod": {"ll": 1.0, "memory": 1.0}}, "stream.laod"),
        ("memory", {"load": {"l1": 1.0, "ll": 1.0, "memory": 1.0, "l2": 3.0}}, "memory.load.l2"),
        (
            "cache",
            {"D1": {"size": 32768, "associativity": 8, "line": 64, "lines": 2}},
            "cache.D1.lines",
        ),
    ],
)
def test_a_misspelt_field_inside_a_table_is_refused_not_ignored(
    tmp_path: Path, section: str, change: dict[str, Any], field: str
) -> None:
    table = copy.deepcopy(MACHINE[section])
    table.update(change)
    with pytest.raises(InputError, match=f"field '{field}': unknown field"):
        read_machine(_machine(tmp_path, **{section: table}))
