"""Campaigns on a real one-node Slurm cluster (munged, slurmctld, slurmd started here), with
``srun`` as the MPI launcher."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from campaign_helpers import REPO, cli_subprocess_argv, compile_c
from slurm_cluster import missing_programs, running_cluster
from test_campaign_mpi import MPI_PROGRAM

from perfcast.io.campaign_results import read_journal
from perfcast.measure.campaign import run_campaign
from perfcast.measure.instrument import library_dir
from perfcast.measure.spec import load_campaign

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(missing_programs()), reason=f"Slurm missing: {missing_programs()}"),
    pytest.mark.skipif(shutil.which("mpicc") is None, reason="OpenMPI (mpicc) missing"),
]

SLEEPER = r"""
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int seconds = atoi(argv[1]);
  if (seconds < 0) return 3;
  sleep(seconds);
  return 0;
}
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    yield from running_cluster(tmp_path_factory)


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("programs")
    compile_c(directory, "ranks", MPI_PROGRAM, compiler="mpicc")
    compile_c(directory, "sleeper", SLEEPER)
    return directory


def campaign_file(directory: Path, programs: Path, body: str) -> Path:
    path = directory / "slurm.toml"
    path.write_text(f'workdir = "{programs}"\nexecutor = "slurm"\n{body}')
    return path


def test_mpi_campaign_runs_as_jobs_under_srun(cluster, programs, tmp_path):
    path = campaign_file(
        tmp_path,
        programs,
        'launcher = "srun --mpi=pmix -n {p}"\ncommand = "./ranks {n}"\nrepetitions = 2\n'
        "timeout = 60\n[parameters]\np = [1, 2]\nn = [1000]\n"
        '[slurm]\ntasks_per_node = "{p}"\npoll = 0.5\n',
    )
    result = run_campaign(load_campaign(path))
    assert result.failures == [], cluster.log()
    assert result.executed == 4
    frame = result.experiment.frame
    visits = frame[frame.metric == "visits"].sort_values(["p", "repetition"])
    assert visits.value.tolist() == [1, 1, 2, 2]  # srun started p MPI ranks in the job
    journal = read_journal(tmp_path / "slurm.results.jsonl")
    job_ids = {line["job_id"] for line in journal.runs.values()}
    assert len(job_ids) == 4 and all(j.isdigit() for j in job_ids)
    assert all(
        line["command"][:3] == ["srun", "--mpi=pmix", "-n"] for line in journal.runs.values()
    )
    assert list((tmp_path / "slurm.slurm").glob("run-*")) == []  # journaled, then cleaned up
    again = run_campaign(load_campaign(path))
    assert (again.executed, again.skipped) == (0, 4)


def test_failed_cancelled_and_timed_out_runs_are_recorded(cluster, programs, tmp_path):
    path = campaign_file(
        tmp_path,
        programs,
        'command = "./sleeper {s}"\ntimeout = 4\n[parameters]\ns = [-1, 0, 8, 30]\n'
        "[slurm]\npoll = 0.5\n",
    )
    campaign = load_campaign(path)
    job_dir = tmp_path / "slurm.slurm"

    # Slurm itself ends a job: no result is left. The campaign's timeout (4 s) leaves the
    # cancel a margin under load; at 2 s the timeout sometimes ended the job first.
    def cancel_the_longest_job() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for record in job_dir.glob("run-*.run.json"):
                if json.loads(record.read_text())["point"]["s"] == 30:
                    job = json.loads(record.with_name(record.name[:-9] + ".job").read_text())
                    time.sleep(1.0)
                    subprocess.run(["scancel", job["job_id"]], check=True)
                    return
            time.sleep(0.2)

    canceller = threading.Thread(target=cancel_the_longest_job)
    canceller.start()
    result = run_campaign(campaign)
    canceller.join()
    by_seconds = {f["point"]["s"]: f for f in result.failures}
    assert set(by_seconds) == {-1, 8, 30}, cluster.log()
    assert by_seconds[-1]["status"] == "failed" and by_seconds[-1]["reason"] == "exit status 3"
    assert by_seconds[8]["status"] == "timeout"  # the campaign's timeout, inside the job
    cancelled = by_seconds[30]
    assert cancelled["status"] == "failed"
    assert "ended without a result: CANCELLED" in cancelled["reason"]
    assert result.experiment.frame.s.tolist() == [0]


def test_the_jobs_outlive_a_killed_submitter_and_are_collected_once(cluster, programs, tmp_path):
    path = campaign_file(
        tmp_path,
        programs,
        'command = "./sleeper {s}"\nrepetitions = 2\n[parameters]\ns = [2, 3]\n'
        "[slurm]\npoll = 0.5\ntime_limit = 2\n",
    )
    submitter = subprocess.Popen(
        cli_subprocess_argv(["run", str(path)]),
        env={**os.environ, **cluster.environment},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    job_dir = tmp_path / "slurm.slurm"
    deadline = time.monotonic() + 60
    while len(list(job_dir.glob("run-*.job"))) < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    submitted = {json.loads(p.read_text())["job_id"] for p in job_dir.glob("run-*.job")}
    submitter.send_signal(signal.SIGKILL)
    submitter.wait()
    assert len(submitted) == 4, cluster.log()
    result = run_campaign(load_campaign(path))
    assert result.failures == [] and result.executed + result.skipped == 4
    journal = read_journal(tmp_path / "slurm.results.jsonl")
    assert {line["job_id"] for line in journal.runs.values()} == submitted  # none twice
    assert sorted(result.experiment.frame.s.tolist()) == [2, 2, 3, 3]


def test_the_jacobi_example_runs_on_slurm(cluster, tmp_path):
    example = tmp_path / "jacobi"
    shutil.copytree(REPO / "examples" / "jacobi", example, ignore=shutil.ignore_patterns("build"))
    shutil.copy(REPO / "examples" / "common.mk", tmp_path)
    subprocess.run(
        ["make", "-s", "-C", str(example), f"PERFCAST_DIR={library_dir()}"],
        check=True,
        capture_output=True,
    )
    quick = {"parameters": {"p": [1, 2], "n": [96, 128]}, "repetitions": 1, "slurm": {"poll": 0.5}}
    campaign = load_campaign(example / "slurm.toml", overrides=quick)
    assert campaign.executor == "slurm" and campaign.launcher[0] == "srun"
    result = run_campaign(campaign)
    assert result.failures == [] and result.executed == 4, cluster.log()
    frame = result.experiment.frame
    ranks = frame[(frame.kernel == "jacobi") & (frame.metric == "ranks")]
    assert sorted(zip(ranks.p, ranks.value, strict=True)) == [(1, 1), (1, 1), (2, 2), (2, 2)]
