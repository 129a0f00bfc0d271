"""Helpers for the measurement tests: compiling C against perfcast's library and running it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from perfcast.measure.instrument import library_dir

REPO = Path(__file__).resolve().parents[2]
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def require(tool: str) -> str:
    """The path of a build tool, skipping the test where it is not installed."""
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed (scripts/setup installs it)")
    return path


def build(
    directory: Path,
    source: str,
    *flags: str,
    compiler: str = "gcc",
    name: str = "app.c",
    library: bool = True,
) -> Path:
    """Compile one source file with perfcast's library into ``directory/app``."""
    require(compiler)
    (directory / name).write_text(source)
    binary = directory / "app"
    command = [
        compiler,
        "-O2",
        "-Wall",
        "-Werror",
        f"-I{library_dir()}",
        *flags,
        str(directory / name),
    ]
    if library:
        command += [str(library_dir() / "perfcast.c"), "-ldl"]
    command += ["-lpthread", "-o", str(binary)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    return binary


def run(
    command: list[str], output: Path | None, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run with PERFCAST_OUTPUT set to ``output`` (unset when None); fails on a non-zero exit."""
    env = {**os.environ, **MPI_ENV}
    env.pop("PERFCAST_OUTPUT", None)
    if output is not None:
        env["PERFCAST_OUTPUT"] = str(output)
    result = subprocess.run(
        command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stderr
    return result


def read_records(path: Path) -> list[dict[str, object]]:
    """Every line of a PERFCAST_OUTPUT file, parsed, in order."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def by_key(records: list[dict[str, object]]) -> dict[tuple[str, str], float]:
    """Records as {(kernel, metric): value}; fails on a duplicate."""
    table: dict[tuple[str, str], float] = {}
    for record in records:
        key = (record["kernel"], record["metric"])
        assert key not in table, f"{key} reported twice"
        table[key] = record["value"]
    return table
