"""The C region library under real mpirun: aggregation over ranks at MPI_Finalize."""

from __future__ import annotations

import subprocess

import pytest
from region_helpers import build, by_key, read_records, require, run

from perfcast.measure.instrument import fortran_module, library_dir

RANK_DEPENDENT = r"""
#include <mpi.h>
#include <time.h>
#include "perfcast.h"
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    struct timespec pause = {0, 20000000L * (rank + 1)};   /* rank r sleeps 20 (r + 1) ms */
    PERFCAST_REGION_BEGIN("sleep");
    nanosleep(&pause, 0);
    PERFCAST_REGION_END("sleep");
    for (int i = 0; i <= rank; i++) {                        /* rank r visits r + 1 times */
        PERFCAST_REGION_BEGIN("visits");
        PERFCAST_REGION_END("visits");
    }
    if (rank == 1) {
        struct timespec only = {0, 40000000L};
        PERFCAST_REGION_BEGIN("only_rank_1");
        nanosleep(&only, 0);
        PERFCAST_REGION_END("only_rank_1");
    }
    MPI_Finalize();
    return 0;
}
"""


@pytest.mark.parametrize("ranks", [2, 3])
def test_records_aggregate_over_ranks(tmp_path, ranks):
    require("mpirun")
    binary = build(tmp_path, RANK_DEPENDENT, compiler="mpicc")
    out = tmp_path / "out.jsonl"
    result = run(["mpirun", "--oversubscribe", "-np", str(ranks), str(binary)], out)
    assert "perfcast" not in result.stderr
    records = read_records(out)
    table = by_key(records)  # one block only: rank 0 writes for everyone
    assert table[("app", "ranks")] == ranks
    assert {m for _, m in table if _ != "app"} == {"time", "time.mean", "visits"}
    # time: max over ranks; time.mean: mean over all ranks
    assert 0.02 * ranks <= table[("sleep", "time")] < 0.02 * ranks + 0.3
    expected_mean = 0.02 * (ranks + 1) / 2
    assert expected_mean <= table[("sleep", "time.mean")] < table[("sleep", "time")]
    assert table[("visits", "visits")] == ranks  # max over ranks
    assert table[("sleep", "visits")] == 1
    # a region only rank 1 entered: ranks without it count as zero in the mean
    only = table[("only_rank_1", "time")]
    assert only >= 0.04
    assert table[("only_rank_1", "time.mean")] == pytest.approx(only / ranks, rel=1e-6)


def test_single_rank_mpi_run_reports_mean_too(tmp_path):
    require("mpirun")
    binary = build(tmp_path, RANK_DEPENDENT, compiler="mpicc")
    out = tmp_path / "out.jsonl"
    run(["mpirun", "-np", "1", str(binary)], out)
    table = by_key(read_records(out))
    assert table[("app", "ranks")] == 1
    assert table[("sleep", "time.mean")] == pytest.approx(table[("sleep", "time")], rel=1e-6)


def test_explicit_finalize_before_mpi_finalize(tmp_path):
    require("mpirun")
    binary = build(
        tmp_path,
        r"""
#include <mpi.h>
#include "perfcast.h"
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    PERFCAST_REGION_BEGIN("work");
    PERFCAST_REGION_END("work");
    PERFCAST_FINALIZE();
    PERFCAST_REGION_BEGIN("after");   /* after the end of measurement: not recorded */
    PERFCAST_REGION_END("after");
    MPI_Finalize();
    return 0;
}
""",
        compiler="mpicc",
    )
    out = tmp_path / "out.jsonl"
    result = run(["mpirun", "--oversubscribe", "-np", "2", str(binary)], out)
    assert result.stderr == ""
    table = by_key(read_records(out))
    assert sorted(table) == [
        ("app", "ranks"),
        ("work", "time"),
        ("work", "time.mean"),
        ("work", "visits"),
    ]


def test_program_without_mpi_init_writes_per_process(tmp_path):
    require("mpicc")
    binary = build(
        tmp_path,
        r"""
#include "perfcast.h"
int main(void) { PERFCAST_REGION_BEGIN("serial"); PERFCAST_REGION_END("serial"); return 0; }
""",
        compiler="mpicc",
    )
    out = tmp_path / "out.jsonl"
    run([str(binary)], out)
    assert by_key(read_records(out)) == {
        ("serial", "time"): pytest.approx(0, abs=1e-3),
        ("serial", "visits"): 1,
        ("app", "ranks"): 1,
    }


def test_fortran_module_under_mpirun(tmp_path):
    require("gfortran")
    require("mpif90")
    (tmp_path / "prog.f90").write_text("""
program main
  use mpi
  use perfcast
  implicit none
  integer :: ierr, rank, i
  character(len=16) :: name
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  do i = 1, 4
    call perfcast_region_begin("loop")
    write (name, '(A,I0)') 'step', mod(i, 2)
    call perfcast_region_begin(name)
    call perfcast_region_end(name)
    call perfcast_region_end("loop")
  end do
  call MPI_Finalize(ierr)
end program main
""")
    subprocess.run(
        ["mpicc", "-O2", "-c", str(library_dir() / "perfcast.c"), "-o", "perfcast_c.o"],
        cwd=tmp_path,
        check=True,
    )
    subprocess.run(
        ["mpif90", "-c", str(fortran_module()), "-o", "perfcast_f.o"], cwd=tmp_path, check=True
    )
    subprocess.run(
        ["mpif90", "prog.f90", "perfcast_f.o", "perfcast_c.o", "-o", "prog"],
        cwd=tmp_path,
        check=True,
    )
    out = tmp_path / "out.jsonl"
    result = run(["mpirun", "--oversubscribe", "-np", "2", str(tmp_path / "prog")], out)
    assert result.stderr == ""
    table = by_key(read_records(out))
    assert table[("prog", "ranks")] == 2
    assert table[("loop", "visits")] == 4
    assert table[("loop->step0", "visits")] == 2
    assert table[("loop->step1", "visits")] == 2


def test_instrumented_functions_under_mpirun(tmp_path):
    require("mpirun")
    binary = build(
        tmp_path,
        r"""
#include <mpi.h>
#include "perfcast.h"
static double work(int n) { double s = 0; for (int i = 0; i < n; i++) s += i; return s; }
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double s = 0;
    for (int i = 0; i <= rank; i++) s += work(1000);
    MPI_Finalize();
    return s > 0 ? 0 : 1;
}
""",
        "-O0",
        "-finstrument-functions",
        compiler="mpicc",
    )
    out = tmp_path / "out.jsonl"
    result = run(["mpirun", "--oversubscribe", "-np", "3", str(binary)], out)
    assert result.stderr == ""  # main is still open at MPI_Finalize: counted silently
    visits = {k: v for (k, m), v in by_key(read_records(out)).items() if m == "visits"}
    assert visits == {"main": 1, "main->work": 3}
