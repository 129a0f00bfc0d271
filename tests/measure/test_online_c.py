"""The C online regions (``perfcast_online.h``): a compiled program run several times with
different inputs hands its batches to ``perfcast online serve`` through the spool and applies
the collector's back-off delays."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from perfcast.api import serve_spool, stored_models
from perfcast.io.online_batch import read_batch_file
from perfcast.measure.instrument import library_dir
from perfcast.measure.online_spool import read_control, write_control

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "perfcast_online.h"
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    int n = atoi(argv[1]), m = atoi(argv[2]), steps = atoi(argv[3]);
    double *a = calloc((size_t)n, sizeof *a), sum = 0;
    for (int step = 0; step < steps; step++) {
        PERFCAST_ONLINE_BEGIN("axpy", "n,m", n, m);
        for (int r = 0; r < m; r++)
            for (int i = 0; i < n; i++) a[i] = a[i] * 0.5 + i;
        PERFCAST_ONLINE_END("axpy");
        sum += a[n / 2];
    }
    printf("%g\n", sum);
    return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = shutil.which("gcc")
    if compiler is None:
        pytest.fail("gcc is not installed: scripts/setup installs it")
    directory = tmp_path_factory.mktemp("online-c")
    (directory / "axpy.c").write_text(PROGRAM)
    subprocess.run(
        [compiler, "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{library_dir()}",
         str(directory / "axpy.c"), str(library_dir() / "perfcast_online.c"),
         "-o", str(directory / "axpy")],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return directory / "axpy"


def test_without_a_spool_the_program_runs_unchanged(program: Path, tmp_path: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PERFCAST_ONLINE")}
    result = subprocess.run([str(program), "1000", "1", "50"], env=environment, cwd=tmp_path,
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert result.stdout.strip() and list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_runs_feed_the_collector_and_follow_its_back_off(program: Path, tmp_path: Path) -> None:
    spool, store = tmp_path / "spool", tmp_path / "models.db"
    environment = {**os.environ, "PERFCAST_ONLINE_SPOOL": str(spool),
                   "PERFCAST_ONLINE_BATCH": "64"}  # fmt: skip
    # as production runs might come: n varied at m = 1, m varied at n = 4000, two others
    sizes = [(n, 1) for n in (1000, 2000, 4000, 8000, 16000)]
    sizes += [(4000, 2), (4000, 3), (4000, 4), (2000, 2), (8000, 3)]
    skipped_per_run = []
    for n, m in sizes:
        subprocess.run([str(program), str(n), str(m), "1500"], env=environment, check=True,
                       capture_output=True)  # fmt: skip
        files = sorted(spool.glob("*.pcob"))
        lines = [line for f in files for line in batch_lines(f)]
        assert all(line["kernel"] == "axpy" for line in lines)
        measured = [line for line in lines if "value" in line]
        assert all(line["params"] == {"n": n, "m": m} for line in measured)
        assert all(line["value"] > 0 for line in measured)
        skipped = sum(line.get("skipped", 0) for line in lines)
        assert len(measured) + skipped == 1500  # every execution accounted for
        skipped_per_run.append(skipped)
        assert serve_spool(spool, store, batch=64, once=True) == len(files)
    (item,) = stored_models(store)
    assert item["measured"] + item["skipped"] == 1500 * len(sizes)
    assert item["model"] is not None and item["updates"] > 0
    # the control files reached the program: later runs skipped executions
    assert sum(skipped_per_run[len(sizes) // 2 :]) > 0
    assert not list(spool.glob("*.pcob"))  # every batch file consumed


def batch_lines(path: Path) -> list[dict]:
    """The records of one binary batch file as the stream's lines would hold them."""
    lines = []
    for record in read_batch_file(path):
        line: dict = {"kernel": record.kernel, "metric": record.metric}
        if record.value is not None:
            line |= {"params": {k: int(v) for k, v in record.params.items()},
                     "value": record.value}  # fmt: skip
        if record.skipped:
            line["skipped"] = record.skipped
        lines.append(line)
    return lines


def _batches(spool: Path) -> list[dict]:
    return [line for path in sorted(spool.glob("*.pcob")) for line in batch_lines(path)]


@pytest.mark.parametrize(
    ("metric", "message"),
    [("instructions", "needs the program"), ("cycles", "unknown PERFCAST_ONLINE_METRIC 'cycles'")],
)
def test_an_unusable_metric_turns_the_regions_off_and_says_why(
    program: Path, tmp_path: Path, metric: str, message: str
) -> None:
    spool = tmp_path / "spool"  # instructions outside callgrind cannot be counted
    environment = {**os.environ, "PERFCAST_ONLINE_SPOOL": str(spool),
                   "PERFCAST_ONLINE_BATCH": "4", "PERFCAST_ONLINE_METRIC": metric}  # fmt: skip
    result = subprocess.run([str(program), "1000", "1", "20"], env=environment,
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert result.stdout.strip()
    assert message in result.stderr and result.stderr.count("perfcast online") == 1
    assert not spool.exists()


def test_instructions_under_callgrind_are_exact_and_keyed_by_their_metric(
    program: Path, tmp_path: Path
) -> None:
    if shutil.which("valgrind") is None:
        pytest.fail("valgrind is not installed: scripts/setup installs it")

    def counts(m: int, spool: Path) -> list[float]:
        spool.mkdir()
        environment = {**os.environ, "PERFCAST_ONLINE_SPOOL": str(spool),
                       "PERFCAST_ONLINE_BATCH": "4",
                       "PERFCAST_ONLINE_METRIC": "instructions"}  # fmt: skip
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={spool}/callgrind.%p",
             str(program), "500", str(m), "10"],
            env=environment, capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert not list(spool.glob("callgrind.*.*"))  # every dump read and deleted
        lines = _batches(spool)
        assert {line["metric"] for line in lines} == {"instructions"}
        assert all(line["params"] == {"n": 500, "m": m} for line in lines)
        return [line["value"] for line in lines]

    runs = {m: counts(m, tmp_path / f"spool-{m}") for m in (1, 2, 3)}
    assert all(len(values) == 10 for values in runs.values())
    assert runs[2] == counts(2, tmp_path / "again")  # deterministic
    typical = {m: max(set(values), key=values.count) for m, values in runs.items()}
    assert typical[3] - typical[2] == typical[2] - typical[1] > 500  # m passes of 500 updates

    store = tmp_path / "models.db"
    serve_spool(tmp_path / "spool-3", store, batch=4, once=True)
    (item,) = stored_models(store)
    assert (item["kernel"], item["metric"], item["measured"]) == ("axpy", "instructions", 10)
    assert read_control(tmp_path / "spool-3", "axpy", "instructions") is not None


SLEEPER = r"""
#define _POSIX_C_SOURCE 199309L
#include <time.h>
#include "perfcast_online.h"
int main(void) {
    struct timespec pause = {0, 20000000}; /* 20 ms off the CPU */
    for (int step = 0; step < 3; step++) {
        PERFCAST_ONLINE_BEGIN("wait", "n", 1);
        nanosleep(&pause, NULL);
        PERFCAST_ONLINE_END("wait");
    }
    return 0;
}
"""


@pytest.mark.parametrize(("metric", "sleeping_counts"), [("time", True), ("cputime", False)])
def test_cputime_leaves_out_the_time_off_the_cpu(
    tmp_path: Path, metric: str, sleeping_counts: bool
) -> None:
    compiler = shutil.which("gcc")
    if compiler is None:
        pytest.fail("gcc is not installed: scripts/setup installs it")
    (tmp_path / "sleeper.c").write_text(SLEEPER)
    subprocess.run(
        [compiler, "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{library_dir()}",
         str(tmp_path / "sleeper.c"), str(library_dir() / "perfcast_online.c"),
         "-o", str(tmp_path / "sleeper")],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    spool = tmp_path / "spool"
    environment = {**os.environ, "PERFCAST_ONLINE_SPOOL": str(spool),
                   "PERFCAST_ONLINE_METRIC": metric}  # fmt: skip
    subprocess.run([str(tmp_path / "sleeper")], env=environment, check=True, timeout=60)
    lines = _batches(spool)
    assert [line["metric"] for line in lines] == [metric] * 3
    for line in lines:  # wall time holds the 20 ms sleep, CPU time only the calls around it
        assert (line["value"] >= 0.02) == sleeping_counts, line
        assert line["value"] >= 0


def test_a_new_run_goes_on_with_the_delay_set_before_it(program: Path, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    write_control(spool, "axpy", "time", 3, 5)  # the collector's last word: skip 5
    environment = {**os.environ, "PERFCAST_ONLINE_SPOOL": str(spool),
                   "PERFCAST_ONLINE_BATCH": "4"}  # fmt: skip
    subprocess.run([str(program), "1000", "1", "20"], env=environment, check=True,
                   capture_output=True)  # fmt: skip
    lines = _batches(spool)
    measured = [line for line in lines if "value" in line]
    assert len(measured) == 15  # the first five executions of the run were skipped
    assert sum(line.get("skipped", 0) for line in lines) == 5
    assert measured[0].get("skipped") == 5  # the skips came first: before the first batch
