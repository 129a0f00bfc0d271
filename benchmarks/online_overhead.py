"""Overhead of the C online regions against an uninstrumented build, by batch size.

A small C program runs a kernel of 4,000 to 20,000 floating-point updates (five sizes in turn)
5,000 times. Variants:
built without regions (``-DPERFCAST_DISABLE``: the reference), and with online regions at ``b``
in {1, 8, 64, 512, 2048, 4096}, without back-off (the collector models the batches after the
runs: ``off``), with it (``collector``: the collector runs alongside in a thread, so the skipped
share, that of the counted run, depends on how fast it answers and on whether this machine's
wall times let batches hit), and ``skip``, the floor of the skipping path
(a control file present from the start asks to skip every execution). Instructions are counted
with valgrind (callgrind) and wall time is the median of three runs. The modeling itself runs
in ``perfcast online serve``, another process: its CPU time per modeled batch is printed too.

Run from the repository root: ``.venv/bin/python -m benchmarks.online_overhead`` (about 2
minutes).

``.venv/bin/python -m benchmarks.online_overhead steady [axpy] [jacobi] [cputime|time]`` (about
6 minutes unloaded; the regions record the thread's CPU time unless ``time`` is given)
measures back-off in its steady state instead: a life-long series of production runs (b = 512)
of the kernel above (40,000 executions per run) and of the Jacobi example (1,000 iterations per
run at n = 256, 384, 512 in turn, the smaller sizes of its campaign), every run under callgrind
with the collector beside it and all runs of a series sharing one spool and one store; with
back-off, and one run without. Each run's instructions are set against the uninstrumented
build's run with the same input, counted in the same invocation. The first runs start from an
empty store and show the cold start; the last ones the steady state of the back-off schedule.

``.venv/bin/python -m benchmarks.online_overhead jacobi [B ...] [cputime|time]`` (long: b = 1 models
every execution as a batch) is
the batch-size table on the Jacobi example: for each ``b`` in {1, 8, 64, 512, 2048, 4096}, with
and without back-off, a series of runs (n = 64, 96, 128, 128, 1,000 iterations) sharing one store,
each counted under callgrind and, with its own spool and store, timed natively; the last run's
instructions and wall time are set against the uninstrumented build's (the load average is
printed, wall time on a shared machine is only indicative). ``perfcast static --clusters`` finds
no similar kernels in ``jacobi.c``, so clustering has nothing to skip there.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from perfcast.api import serve_spool, stored_models
from perfcast.measure.instrument import library_dir
from perfcast.measure.online_spool import write_control

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "perfcast_online.h"
int main(int argc, char **argv) {
    int largest = atoi(argv[1]), steps = atoi(argv[2]);
    double *a = calloc((size_t)largest, sizeof *a), sum = 0;
    for (int step = 0; step < steps; step++) {
        int n = largest / 5 * (1 + step % 5);
        PERFCAST_ONLINE_BEGIN("axpy", "n", n);
        for (int i = 0; i < n; i++) a[i] = a[i] * 0.5 + i;
        PERFCAST_ONLINE_END("axpy");
        sum += a[n / 2];
    }
    printf("%g\n", sum);
    return 0;
}
"""
Number = TypeVar("Number", int, float)
SIZE, STEPS = 20000, 5000
BATCHES = (1, 8, 64, 512, 2048, 4096)


def build(directory: Path, disable: bool) -> Path:
    source = directory / "axpy.c"
    source.write_text(PROGRAM)
    binary = directory / ("axpy-off" if disable else "axpy")
    flags = ["-DPERFCAST_DISABLE"] if disable else []
    subprocess.run(
        ["gcc", "-O2", "-std=c99", *flags, f"-I{library_dir()}", str(source),
         str(library_dir() / "perfcast_online.c"), "-o", str(binary)],
        check=True,
    )  # fmt: skip
    return binary


def instructions(binary: Path, environment: dict[str, str], directory: Path) -> int:
    command = [str(binary), str(SIZE), str(STEPS)]
    return callgrind_instructions([], command, environment, directory / "callgrind.out")


def callgrind_instructions(
    launcher: list[str], command: list[str], environment: dict[str, str], out: Path
) -> int:
    """Instructions callgrind counts for ``command`` (started by ``launcher``, if any)."""
    result = subprocess.run(
        [*launcher, "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
        env=environment, capture_output=True, text=True, check=True,
    )  # fmt: skip
    match = re.search(r"Collected : (\d+)", result.stderr)
    if match is None:
        raise RuntimeError(result.stderr)
    return int(match.group(1))


def wall(binary: Path, environment: dict[str, str]) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([str(binary), str(SIZE), str(STEPS)], env=environment, check=True,
                       capture_output=True)  # fmt: skip
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def collector_seconds(spool: Path, batch: int) -> tuple[float, int]:
    """CPU seconds of ``perfcast online serve --once`` on (at most 200 of) the batch files
    waiting, and how many files it modeled."""
    done = [0]

    def enough() -> bool:
        done[0] += 1
        return done[0] > 200

    start = time.process_time()
    files = serve_spool(spool, spool.parent / f"store-{batch}.db", batch=batch, once=True,
                        should_stop=enough)  # fmt: skip
    return time.process_time() - start, files


def with_collector(spool: Path, store: Path, batch: int, work: Callable[[], Number]) -> Number:
    """``work()`` while a collector thread serves ``spool`` into ``store``."""
    stop = threading.Event()
    collector = threading.Thread(
        target=serve_spool,
        args=(spool, store),
        kwargs={"batch": batch, "poll": 0.02, "should_stop": stop.is_set},
    )
    collector.start()
    try:
        return work()
    finally:
        stop.set()
        collector.join()


STEADY_BATCH, STEADY_STEPS = 512, 40000
MPI_ENVIRONMENT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
#: The metric the regions of the steady and Jacobi series record (``time`` or ``cputime``, the
#: last word of the command line; cputime by default): under valgrind on a loaded machine wall
#: times measure the load (a kernel's mean moved 10-fold between runs), CPU time the kernel.
METRICS = ("cputime", "time")
JACOBI = Path(__file__).resolve().parents[1] / "examples" / "jacobi" / "jacobi.c"
JACOBI_RUNS, JACOBI_ITERATIONS = 12, 1000


@dataclass(frozen=True)
class SteadyProgram:
    """A program of the steady-state series: how to start it and its inputs run by run."""

    launcher: list[str]
    reference: Path
    instrumented: Path
    inputs: list[list[str]]  # the arguments of each production run
    environment: dict[str, str]


def steady_programs(directory: Path, metric: str) -> dict[str, SteadyProgram]:
    """The small kernel program and the Jacobi example, each built without and with regions."""
    axpy = SteadyProgram([], build(directory, disable=True), build(directory, disable=False),
                         [[str(SIZE), str(STEADY_STEPS)]] * 5,
                         {"PERFCAST_ONLINE_METRIC": metric})  # fmt: skip
    # production runs with the example campaign's smaller sizes in turn
    sizes = [256, 384, 512] * (JACOBI_RUNS // 3)
    return {
        "axpy": axpy,
        "jacobi": SteadyProgram(["mpirun", "-np", "1"], build_jacobi(directory, True),
                                build_jacobi(directory, False),
                                [[str(n), str(JACOBI_ITERATIONS)] for n in sizes],
                                {**MPI_ENVIRONMENT, "PERFCAST_ONLINE_METRIC": metric}),
    }  # fmt: skip


def build_jacobi(directory: Path, disable: bool) -> Path:
    """The Jacobi example with its regions made online regions over ``n`` (or none)."""
    binary = directory / ("jacobi-off" if disable else "jacobi")
    subprocess.run(
        ["mpicc", "-O2", "-std=c99", "-Wno-unknown-pragmas", f"-I{library_dir()}",
         "-include", "perfcast_online_regions.h", '-DPERFCAST_ONLINE_NAMES="n"',
         "-DPERFCAST_ONLINE_VALUES=n", *(["-DPERFCAST_DISABLE"] if disable else []),
         "-o", str(binary), str(JACOBI), str(library_dir() / "perfcast_online.c"), "-lm"],
        check=True,
    )  # fmt: skip
    return binary


def counted_run(
    program: SteadyProgram,
    binary: Path,
    arguments: list[str],
    spool: Path,
    directory: Path,
    batch: int = STEADY_BATCH,
) -> int:
    """Instructions of one run of ``binary`` under callgrind, spooling to ``spool``."""
    environment = {**os.environ, **program.environment, "PERFCAST_ONLINE_SPOOL": str(spool),
                   "PERFCAST_ONLINE_BATCH": str(batch)}  # fmt: skip
    out = directory / "callgrind-steady.out"
    return callgrind_instructions(program.launcher, [str(binary), *arguments], environment, out)


def served_run(
    program: SteadyProgram, arguments: list[str], spool: Path, store: Path, backoff: bool
) -> int:
    """Instructions of one production run with the collector beside it (``counted_run``)."""
    with collector_beside(spool, store, STEADY_BATCH, backoff):
        return counted_run(program, program.instrumented, arguments, spool, spool.parent)


@contextlib.contextmanager
def collector_beside(
    spool: Path,
    store: Path,
    batch: int,
    backoff: bool,
    cold_backoff: bool = False,
    clusters: list[list[str]] | None = None,
) -> Iterator[None]:
    """``perfcast online serve`` of ``spool`` into ``store`` in a thread while the block runs;
    after it, once more for the files the run handed over at exit (they belong to this run)."""
    stop = threading.Event()
    settings = {"batch": batch, "backoff": backoff, "cold_backoff": cold_backoff,
                "clusters": clusters or None}  # fmt: skip
    collector = threading.Thread(
        target=serve_spool,
        args=(spool, store),
        kwargs={**settings, "poll": 0.02, "should_stop": stop.is_set},
    )
    collector.start()
    try:
        yield
    finally:
        stop.set()
        collector.join()
        serve_spool(spool, store, once=True, **settings)


def steady(labels: list[str], metric: str) -> None:
    """The life-long series of production runs: overhead per run with and without back-off."""
    print(f"Command: python -m benchmarks.online_overhead steady {' '.join(labels)} {metric}\n")
    print(f"Regions record {metric}; load average at start {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores.\n")  # fmt: skip
    print(f"b = {STEADY_BATCH}; every run under callgrind with the collector beside it; axpy: "
          f"kernel of {SIZE // 5}-{SIZE} updates, {STEADY_STEPS} executions per run; jacobi: "
          f"the example, {JACOBI_ITERATIONS} iterations per run at the n shown.\n")  # fmt: skip
    print("| program | back-off | run | input | instructions overhead | skipped so far |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="online-steady-") as name:
        directory = Path(name)
        for label, program in steady_programs(directory, metric).items():
            if labels and label not in labels:
                continue
            base: dict[tuple[str, ...], int] = {}
            for backoff in (True, False):
                spool = directory / f"spool-{label}-{backoff}"
                store = directory / f"store-{label}-{backoff}.db"
                # without back-off every run measures everything: one run shows its cost
                for run, arguments in enumerate(program.inputs[: None if backoff else 1], 1):
                    if tuple(arguments) not in base:
                        base[tuple(arguments)] = counted_run(
                            program, program.reference, arguments, directory / "unused", directory
                        )
                    counted = served_run(program, arguments, spool, store, backoff)
                    # a run's skips reach the store with its next measured batch, which may be
                    # the next run's: the share is over the runs so far and all regions
                    shares = ", ".join(
                        f"{item['kernel']} "
                        f"{100 * item['skipped'] / (item['skipped'] + item['measured']):.0f} %"
                        for item in stored_models(store)
                    )
                    print(f"| {label} | {'on' if backoff else 'off'} | {run} | "
                          f"{' '.join(arguments)} | "
                          f"{100 * (counted / base[tuple(arguments)] - 1):.2f} % | "
                          f"{shares} |", flush=True)  # fmt: skip


#: The Jacobi batch-size table: production runs at these sizes in turn; the first three warm an
#: empty store (the pmnf modeler needs three sizes for a model, back-off a model to judge by),
#: the last one (at a size already seen) is the one reported.
JACOBI_SERIES, JACOBI_SHORT = (64, 96, 128, 128), 1000


def timed_run(program: SteadyProgram, binary: Path, arguments: list[str],
              environment: dict[str, str]) -> float:  # fmt: skip
    """Wall seconds of one native run of ``binary`` (the launcher included)."""
    start = time.perf_counter()
    subprocess.run([*program.launcher, str(binary), *arguments],
                   env={**os.environ, **program.environment, **environment}, check=True,
                   capture_output=True)  # fmt: skip
    return time.perf_counter() - start


def jacobi_series(
    program: SteadyProgram, directory: Path, batch: int, backoff: bool
) -> tuple[list[int], list[float], str]:
    """One life-long series of :data:`JACOBI_SERIES` runs at ``batch``, counted under
    callgrind and, in a separate spool and store, timed natively; the instructions and the
    wall seconds of the last run and the skipped shares over the counted series."""
    label = f"{batch}-{'on' if backoff else 'off'}"
    counted: list[int] = []
    seconds: list[float] = []
    for place, n in enumerate(JACOBI_SERIES):
        arguments = [str(n), str(JACOBI_SHORT)]
        for timed in (False, True):
            spool = directory / f"spool-{label}{'-timed' if timed else ''}"
            store = directory / f"store-{label}{'-timed' if timed else ''}.db"
            environment = {"PERFCAST_ONLINE_SPOOL": str(spool),
                           "PERFCAST_ONLINE_BATCH": str(batch)}  # fmt: skip
            with collector_beside(spool, store, batch, backoff):
                if timed:
                    second = timed_run(program, program.instrumented, arguments, environment)
                else:
                    count = counted_run(program, program.instrumented, arguments, spool,
                                        directory, batch)  # fmt: skip
        if place == len(JACOBI_SERIES) - 1:
            counted.append(count)
            seconds.append(second)
    shares = ", ".join(
        f"{item['kernel']} {100 * item['skipped'] / (item['skipped'] + item['measured']):.0f} %"
        for item in stored_models(directory / f"store-{label}.db")
    )
    return counted, seconds, shares


def jacobi_batches(metric: str, batches: tuple[int, ...] = BATCHES) -> None:
    """Overhead of the Jacobi example's online regions by batch size, with and without
    back-off: instructions and wall time side by side."""
    load = os.getloadavg()
    print(
        f"Command: python -m benchmarks.online_overhead jacobi {metric} "
        f"{' '.join(map(str, batches))}\n"
    )
    print(f"Regions record {metric}.\n")
    print(f"Jacobi example, one rank, {JACOBI_SHORT} iterations per run, runs at n = "
          f"{', '.join(map(str, JACOBI_SERIES))} sharing one store; figures of the last run "
          f"(a size already seen); load average at start {load[0]:.1f} on "
          f"{os.cpu_count()} cores. Clusters: `perfcast static --clusters` finds none in "
          "jacobi.c, so clustering changes nothing here.\n")  # fmt: skip
    print("| b | back-off | instructions overhead | wall overhead | skipped over the series |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="online-jacobi-") as name:
        directory = Path(name)
        program = SteadyProgram(["mpirun", "-np", "1"], build_jacobi(directory, True),
                                build_jacobi(directory, False), [],
                                {**MPI_ENVIRONMENT, "PERFCAST_ONLINE_METRIC": metric})  # fmt: skip
        base_counted, base_seconds = 0, 0.0
        for n in JACOBI_SERIES[-1:]:
            arguments = [str(n), str(JACOBI_SHORT)]
            base_counted += counted_run(program, program.reference, arguments,
                                        directory / "unused", directory)  # fmt: skip
            base_seconds += statistics.median(
                timed_run(program, program.reference, arguments, {}) for _ in range(3)
            )
        for batch in batches:
            for backoff in (False, True):
                counted, seconds, shares = jacobi_series(program, directory, batch, backoff)
                print(f"| {batch} | {'on' if backoff else 'off'} | "
                      f"{100 * (sum(counted) / base_counted - 1):.2f} % | "
                      f"{100 * (sum(seconds) / base_seconds - 1):.1f} % | "
                      f"{shares} |", flush=True)  # fmt: skip
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


def main() -> None:
    metric = sys.argv[-1] if sys.argv[-1] in METRICS else METRICS[0]
    if len(sys.argv) > 1 and sys.argv[1] == "jacobi":
        if any(shutil.which(tool) is None for tool in ("valgrind", "mpicc", "mpirun")):
            sys.exit("needs valgrind and OpenMPI (scripts/setup installs them)")
        chosen = tuple(int(word) for word in sys.argv[2:] if word.isdigit())
        jacobi_batches(metric, chosen or BATCHES)
        return
    if len(sys.argv) > 1 and sys.argv[1] == "steady":
        if any(shutil.which(tool) is None for tool in ("valgrind", "gcc", "mpicc", "mpirun")):
            sys.exit("needs gcc, valgrind and OpenMPI (scripts/setup installs them)")
        labels = [word for word in sys.argv[2:] if word not in METRICS]
        steady(labels, metric)
        return
    if shutil.which("valgrind") is None or shutil.which("gcc") is None:
        sys.exit("needs gcc and valgrind (scripts/setup installs them)")
    print("Command: python -m benchmarks.online_overhead\n")
    print(f"Kernel of {SIZE // 5}-{SIZE} updates, {STEPS} executions; overhead against the "
          "build without regions.\n")  # fmt: skip
    print("| b | back-off | instructions overhead | wall overhead | collector CPU per batch | "
          "skipped |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="online-overhead-") as name:
        directory = Path(name)
        reference = build(directory, disable=True)
        instrumented = build(directory, disable=False)
        base_instructions = instructions(reference, {}, directory)
        base_wall = wall(reference, {})
        for batch in BATCHES:
            for backoff in ("off", "collector", "skip"):
                spool = directory / f"spool-{batch}-{backoff}"
                environment = {"PERFCAST_ONLINE_SPOOL": str(spool),
                               "PERFCAST_ONLINE_BATCH": str(batch)}  # fmt: skip
                cpu, files = 0.0, 0
                if backoff == "collector":
                    # valgrind slows the program 50-fold, so the counted run and the timed
                    # runs each get their own spool and store (one model per speed)
                    store = directory / f"store-{batch}.db"
                    counted = with_collector(
                        spool,
                        store,
                        batch,
                        lambda e=environment: instructions(instrumented, e, directory),
                    )
                    timed = {**environment, "PERFCAST_ONLINE_SPOOL": f"{spool}-timed"}
                    seconds = with_collector(
                        Path(f"{spool}-timed"),
                        directory / "timed.db",
                        batch,
                        lambda e=timed: wall(instrumented, e),
                    )
                    skipped = sum(item["skipped"] for item in stored_models(store))
                    share = f"{100 * skipped / STEPS:.0f} %"
                else:
                    if backoff == "skip":  # the floor: every execution skipped (control read
                        # at the kernel's first execution; before that change, after the first
                        # batch)
                        write_control(spool, "axpy", "time", 1, STEPS)
                    counted = instructions(instrumented, environment, directory)
                    seconds = wall(instrumented, environment)
                    if backoff == "off":
                        cpu, files = collector_seconds(spool, batch)
                        share = "0 %"
                    else:
                        share = f"{100 * max(STEPS - batch, 0) / STEPS:.0f} %"
                cost = f"{1e3 * cpu / files:.1f} ms" if files else "-"
                print(f"| {batch} | {backoff} | "
                      f"{100 * (counted / base_instructions - 1):.2f} % | "
                      f"{100 * (seconds / base_wall - 1):.1f} % | {cost} | "
                      f"{share} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
