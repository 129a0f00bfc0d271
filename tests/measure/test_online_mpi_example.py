"""The Jacobi MPI example with online modeling on: its existing regions become online regions
through ``perfcast_online_regions.h`` (no source change), and several runs with different inputs
feed ``perfcast online serve``, which ends with a model per region in the store.

Which model: wall times on a machine shared with other jobs carry preemptions of 10-30 ms
against kernels of 0.01-0.3 ms, so no lead order is asserted here (an offline fit of the same
raw values is as unstable); ``benchmarks/RESULTS.md`` discusses it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from perfcast.api import serve_spool, stored_models
from perfcast.measure.instrument import library_dir

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "jacobi" / "jacobi.c"
MPI_ENVIRONMENT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


@pytest.mark.slow
def test_jacobi_runs_end_with_models_in_the_store(tmp_path: Path) -> None:
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        pytest.fail("OpenMPI is not installed: scripts/setup installs it")
    binary = tmp_path / "jacobi-online"
    subprocess.run(
        ["mpicc", "-O2", "-std=c99", "-Wno-unknown-pragmas", f"-I{library_dir()}",
         "-include", "perfcast_online_regions.h", '-DPERFCAST_ONLINE_NAMES="n"',
         "-DPERFCAST_ONLINE_VALUES=n", "-o", str(binary), str(EXAMPLE),
         str(library_dir() / "perfcast_online.c"), "-lm"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    spool, store = tmp_path / "spool", tmp_path / "models.db"
    environment = {**os.environ, **MPI_ENVIRONMENT, "PERFCAST_ONLINE_SPOOL": str(spool),
                   "PERFCAST_ONLINE_BATCH": "32"}  # fmt: skip
    lines: list[dict] = []
    for n in (128, 256, 384, 512, 640):  # one production run per input
        subprocess.run(["mpirun", "-np", "1", str(binary), str(n), "150"], env=environment,
                       check=True, capture_output=True, timeout=120)  # fmt: skip
        for path in sorted(spool.glob("*.jsonl")):
            lines.extend(json.loads(line) for line in path.read_text().splitlines())
        serve_spool(spool, store, application="jacobi", batch=32, once=True)
    measured = [line for line in lines if "value" in line]
    assert {line["kernel"] for line in measured} == {"halo", "compute", "residual"}
    assert all(set(line["params"]) == {"n"} for line in measured)
    online = {item["kernel"]: item for item in stored_models(store, application="jacobi")}
    assert set(online) == {"halo", "compute", "residual"}
    for kernel in ("compute", "halo"):
        assert online[kernel]["model"]["parameters"] == ["n"], kernel
        assert online[kernel]["updates"] > 0
    executions = 150 * 5  # every iteration is measured or counted as skipped
    assert online["compute"]["measured"] + online["compute"]["skipped"] == executions
    assert online["residual"]["measured"] + online["residual"]["skipped"] == executions // 10
