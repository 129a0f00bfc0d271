"""Campaigns under a real ``mpirun`` (OpenMPI) with 1-4 ranks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from campaign_helpers import compile_c, processes_with

from perfcast.measure.campaign import run_campaign
from perfcast.measure.spec import load_campaign

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("mpicc") is None, reason="OpenMPI (mpicc) missing"),
]

MPI_PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) double work(long n, int rank) {
  double sum = 0;
  for (long i = 0; i < n; i++) sum += (i % 7) * 0.5 + rank;
  return sum;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long n = atol(argv[1]);
  if (getenv("HANG")) sleep(60);
  double local = work(n, 0), total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const char *out = getenv("PERFCAST_OUTPUT");
  if (rank == 0 && out) {
    FILE *f = fopen(out, "a");
    fprintf(f, "{\"kernel\": \"main->allreduce\", \"metric\": \"visits\", \"value\": %d}\n", size);
    fprintf(f, "{\"kernel\": \"main->work\", \"metric\": \"checksum\", \"value\": %.1f}\n", total);
    fclose(f);
  }
  MPI_Finalize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def mpi_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_c(tmp_path_factory.mktemp("mpi"), "ranks", MPI_PROGRAM, compiler="mpicc")


def write(directory: Path, body: str) -> Path:
    path = directory / "mpi.toml"
    path.write_text(body)
    return path


def test_timed_campaign_under_mpirun_with_1_to_4_ranks(tmp_path: Path, mpi_program: Path) -> None:
    path = write(
        tmp_path,
        f'launcher = "mpirun --oversubscribe -np {{p}}"\ncommand = "./{mpi_program.name} {{n}}"\n'
        f'workdir = "{mpi_program.parent}"\nrepetitions = 2\ntimeout = 60\n'
        '[parameters]\np = "1..4"\nn = [1000]\n',
    )
    result = run_campaign(load_campaign(path))
    assert result.failures == [] and result.executed == 8
    experiment = result.experiment
    assert [p.role for p in experiment.parameters] == ["processes", None]
    frame = experiment.frame
    visits = frame[frame.metric == "visits"].sort_values(["p", "repetition"])
    assert visits.value.tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert (visits.value == visits.p).all()
    checksum = frame[frame.metric == "checksum"]
    single = 0.5 * sum(i % 7 for i in range(1000))
    assert (checksum.value == checksum.p * single).all()
    wall = frame[(frame.kernel == "ranks") & (frame.metric == "time")]
    assert experiment.metadata["program_kernel"] == "ranks"
    assert len(wall) == 8 and (wall.value > 0).all()
    machine = experiment.metadata["machine"]
    assert "Open MPI" in machine["mpi"] and machine["compilers"]["mpicc"]


def test_callgrind_under_mpirun_sums_over_ranks(tmp_path: Path, mpi_program: Path) -> None:
    path = write(
        tmp_path,
        f'launcher = "mpirun --oversubscribe -np {{p}}"\ncommand = "./{mpi_program.name} 5000"\n'
        f'workdir = "{mpi_program.parent}"\nmetrics = ["instructions"]\ntimeout = 120\n'
        "[parameters]\np = [1, 3]\n",
    )
    result = run_campaign(load_campaign(path))
    assert result.failures == []
    frame = result.experiment.frame
    work = frame[(frame.kernel == "work") & (frame.metric == "instructions")]
    by_ranks = dict(zip(work.p.astype(int), work.value, strict=True))
    assert by_ranks[3] == 3 * by_ranks[1]  # three ranks run the same loop, counts are exact
    assert by_ranks[1] > 5000


def test_timeout_ends_mpirun_and_every_rank(tmp_path: Path, mpi_program: Path) -> None:
    path = write(
        tmp_path,
        f'launcher = "mpirun --oversubscribe -np {{p}}"\ncommand = "./{mpi_program.name} 10"\n'
        f'workdir = "{mpi_program.parent}"\ntimeout = 3\n'
        '[parameters]\np = [2]\n[environment]\nHANG = "1"\n',
    )
    with pytest.raises(Exception, match="every run of the campaign failed.*timeout of 3 s"):
        run_campaign(load_campaign(path))
    assert processes_with(f"{mpi_program.name} 10") == []
