"""Overhead of the C online regions on the MPI examples, from an empty store, by batch size.

Every example (``examples/{jacobi,cg,histogram,samplesort}``) is built twice with ``mpicc
-O2``: without regions (``-DPERFCAST_DISABLE``, the reference) and with its existing
``PERFCAST_REGION_BEGIN/END`` made online regions over its size parameter (``-include
perfcast_online_regions.h``, no source change). For each batch size ``b`` and with and without
back-off, a life-long series of :data:`RUNS` production runs (one rank, the example's three
inputs of :data:`APPS` in turn) starts from an empty store and spool; every run is counted
under callgrind (``nice -n 19``) with ``perfcast online serve`` beside it in a thread, and
each run's instructions are set against the reference build's run with the same input. The
same series is then run natively at normal priority (its own spool and store, so that its
back-off follows native CPU times) and each run's wall time is set against the median of
:data:`REFERENCE_TIMES` native runs of the reference build with that input; the load average
is printed beside it.

The regions record the thread's CPU time (``PERFCAST_ONLINE_METRIC=cputime``; ``time`` as the
last word records wall time): under valgrind on a loaded machine wall times measure the load
(``benchmarks/RESULTS.md``, "Online modeling", third pass).

Run from the repository root::

    .venv/bin/python -m benchmarks.online_examples [APP ...] [B ...] [cputime|time]

(default: all four examples; b = 1, 8, 64, 512, 2048, 4096 for the loop examples, jacobi and
cg; b = 1 and 512 for histogram and samplesort, whose regions run once per run, so that any
``b`` above their region count hands everything over at exit alike). At b = 1 every measured
execution is one batch file and one refit in the collector: those series run
:data:`B1_ITERATIONS` iterations per run instead of the example's usual count, which the table
says.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.online_overhead import MPI_ENVIRONMENT, callgrind_instructions, collector_beside
from perfcast.api import stored_models
from perfcast.measure.instrument import library_dir

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RUNS = 12
REFERENCE_TIMES = 5
B1_ITERATIONS = 100
LOOP_BATCHES = (1, 8, 64, 512, 2048, 4096)
ONCE_BATCHES = (1, 512)
METRICS = ("cputime", "time")


@dataclass(frozen=True)
class App:
    """An example: its size variable, its inputs in turn, and its iteration argument."""

    name: str
    variable: str  # the size variable in scope at every region
    sizes: tuple[int, ...]
    iterations: int | None  # None: the regions run once per run
    batches: tuple[int, ...]
    program: str | None = None  # the source, when not examples/NAME/NAME.c

    def arguments(self, size: int, batch: int) -> list[str]:
        if self.iterations is None:
            return [str(size)]
        return [str(size), str(B1_ITERATIONS if batch == 1 else self.iterations)]


#: Two regions whose loops ``perfcast static --clusters`` puts in one cluster (same structure,
#: other constants), for the clustering variant: none of the MPI examples has similar kernels.
TWIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include "perfcast_online.h"
int main(int argc, char **argv) {
    int n = atoi(argv[1]), steps = atoi(argv[2]);
    double *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b), sum = 0;
    for (int step = 0; step < steps; step++) {
        PERFCAST_ONLINE_BEGIN("scale_a", "n", n);
        for (int i = 0; i < n; i++) a[i] = a[i] * 0.5 + i;
        PERFCAST_ONLINE_END("scale_a");
        PERFCAST_ONLINE_BEGIN("scale_b", "n", n);
        for (int i = 0; i < n; i++) b[i] = b[i] * 0.25 + i;
        PERFCAST_ONLINE_END("scale_b");
        sum += a[n / 2] + b[n / 3];
    }
    printf("%g\n", sum);
    return 0;
}
"""

APPS = {
    "jacobi": App("jacobi", "n", (64, 96, 128), 1000, LOOP_BATCHES),
    "cg": App("cg", "n", (32, 48, 64), 1000, LOOP_BATCHES),
    "histogram": App("histogram", "total", (100000, 200000, 400000), None, ONCE_BATCHES),
    "samplesort": App("samplesort", "total", (50000, 100000, 200000), None, ONCE_BATCHES),
    "twin": App("twin", "n", (1000, 2000, 4000), 2000, (512,), TWIN),
}


def build(app: App, directory: Path, disable: bool) -> Path:
    """The example without regions, or with its regions made online regions."""
    binary = directory / f"{app.name}-{'off' if disable else 'online'}"
    source = source_of(app, directory)
    subprocess.run(
        ["mpicc", "-O2", "-std=c99", "-Wno-unknown-pragmas", f"-I{library_dir()}",
         "-include", "perfcast_online_regions.h", f'-DPERFCAST_ONLINE_NAMES="{app.variable}"',
         f"-DPERFCAST_ONLINE_VALUES={app.variable}",
         *(["-DPERFCAST_DISABLE"] if disable else []), "-o", str(binary),
         str(source), str(library_dir() / "perfcast_online.c"),
         "-lm"],
        check=True,
    )  # fmt: skip
    return binary


def source_of(app: App, directory: Path) -> Path:
    """The C source of ``app`` (written into ``directory`` when it is not an example)."""
    if app.program is None:
        return EXAMPLES / app.name / f"{app.name}.c"
    source = directory / f"{app.name}.c"
    source.write_text(app.program)
    return source


def region_clusters(source: Path, variable: str) -> list[list[str]]:
    """``perfcast static --clusters`` of ``source``, its loops named by the online region
    begun on the line before each (the online kernels are regions, the clusters loops)."""
    result = subprocess.run(
        [sys.executable, "-m", "perfcast.cli", "static", str(source), "--param", variable,
         "--clusters", "--no-cache", "--format", "json", "--", f"-I{library_dir()}"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    lines = source.read_text().splitlines()
    regions = {
        number + 1: match.group(1)
        for number, line in enumerate(lines, 1)
        if (match := re.search(r'PERFCAST_ONLINE_BEGIN\("([^"]+)"', line))
    }
    clusters = []
    for cluster in json.loads(result.stdout)["clusters"]:
        names = [regions.get(int(loop.rsplit("@", 1)[1])) for loop in cluster]
        clusters.append([name for name in names if name is not None])
    return [cluster for cluster in clusters if len(cluster) > 1]


def environment(spool: Path, batch: int, metric: str) -> dict[str, str]:
    return {**os.environ, **MPI_ENVIRONMENT, "PERFCAST_ONLINE_METRIC": metric,
            "PERFCAST_ONLINE_SPOOL": str(spool), "PERFCAST_ONLINE_BATCH": str(batch)}  # fmt: skip


def counted(binary: Path, arguments: list[str], env: dict[str, str], directory: Path) -> int:
    """Instructions of one run under callgrind (niced: the count does not depend on it)."""
    launcher = ["nice", "-n", "19", "mpirun", "-np", "1"]
    out = directory / "callgrind.out"
    return callgrind_instructions(launcher, [str(binary), *arguments], env, out)


def timed(binary: Path, arguments: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one native run, mpirun included, at normal priority."""
    start = time.perf_counter()
    subprocess.run(["mpirun", "-np", "1", str(binary), *arguments], env=env, check=True,
                   capture_output=True)  # fmt: skip
    return time.perf_counter() - start


@dataclass
class Series:
    """One series' figures: per run, the instruction and wall overheads in percent."""

    instructions: list[float]
    wall: list[float]
    skipped: str
    loads: list[float]


#: The variants: no back-off; back-off from the first batch (``cold_backoff``, the change of
#: issue 15's fourth pass); back-off once a model exists (the third pass's).
VARIANTS = {
    "off": (False, False),
    "on": (True, True),
    "model-first": (True, False),
    "clusters": (True, True),  # and the static similarity clusters passed to the collector
}


def series(
    app: App, binaries: tuple[Path, Path], batch: int, variant: str, metric: str, work: Path
) -> Series:
    """A life-long series of :data:`RUNS` runs from an empty store, counted then timed."""
    reference, online = binaries
    inputs = [app.arguments(app.sizes[run % len(app.sizes)], batch) for run in range(RUNS)]
    label = f"{app.name}-{batch}-{variant}"
    backoff, cold_backoff = VARIANTS[variant]
    clusters = region_clusters(source_of(app, work), app.variable) if variant == "clusters" else []
    if variant == "clusters":
        print(f"clusters of {app.name}: {clusters}", file=sys.stderr)
    base_count: dict[tuple[str, ...], int] = {}
    base_wall: dict[tuple[str, ...], float] = {}
    plain = environment(work / "unused", batch, metric)
    for arguments in inputs:
        key = tuple(arguments)
        if key not in base_count:
            base_count[key] = counted(reference, arguments, plain, work)
            base_wall[key] = statistics.median(
                timed(reference, arguments, plain) for _ in range(REFERENCE_TIMES)
            )
    spool, store = work / f"spool-{label}", work / f"store-{label}.db"
    instructions = []
    for arguments in inputs:
        with collector_beside(spool, store, batch, backoff, cold_backoff, clusters):
            count = counted(online, arguments, environment(spool, batch, metric), work)
        instructions.append(100 * (count / base_count[tuple(arguments)] - 1))
    shares = ", ".join(
        f"{item['kernel']} {100 * item['skipped'] / (item['skipped'] + item['measured']):.0f} %"
        for item in stored_models(store)
    )
    spool, store = work / f"spool-{label}-native", work / f"store-{label}-native.db"
    wall, loads = [], []
    for arguments in inputs:
        loads.append(os.getloadavg()[0])
        with collector_beside(spool, store, batch, backoff, cold_backoff, clusters):
            seconds = timed(online, arguments, environment(spool, batch, metric))
        wall.append(100 * (seconds / base_wall[tuple(arguments)] - 1))
    return Series(instructions, wall, shares, loads)


def percent(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}"


def main() -> None:
    words = sys.argv[1:]
    metric = words[-1] if words and words[-1] in METRICS else METRICS[0]
    names = [word for word in words if word in APPS] or list(APPS)
    chosen = tuple(int(word) for word in words if word.isdigit())
    # "variants=off,on" chooses variants (default: off and on)
    picked = [word.split("=", 1)[1] for word in words if word.startswith("variants=")]
    variants = picked[0].split(",") if picked else ["off", "on"]
    print(f"Command: python -m benchmarks.online_examples {' '.join(words)}\n")
    load = os.getloadavg()[0]
    print(f"Regions record {metric}; {RUNS} runs per series from an empty store, one rank; "
          f"load average at start {load:.1f} on {os.cpu_count()} cores.\n")  # fmt: skip
    print("| example | inputs | b | back-off | instructions: run 1 / max / median of runs "
          "5-12 | wall: median / min / max | load | skipped over the series |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    details = []
    with tempfile.TemporaryDirectory(prefix="online4-examples-") as name:
        work = Path(name)
        for app_name in names:
            app = APPS[app_name]
            binaries = (build(app, work, True), build(app, work, False))
            for batch in chosen or app.batches:
                if chosen and batch not in app.batches:
                    continue
                for variant in variants:
                    result = series(app, binaries, batch, variant, metric, work)
                    steps = app.arguments(0, batch)[1:]
                    inputs = f"{app.variable} = {', '.join(map(str, app.sizes))}" + (
                        f", {steps[0]} iterations" if steps else ""
                    )
                    tail = result.instructions[4:]
                    print(f"| {app.name} | {inputs} | {batch} | {variant} | "
                          f"{result.instructions[0]:.2f} / {max(result.instructions):.2f} / "
                          f"{percent(tail)} % | {percent(result.wall)} / "
                          f"{min(result.wall):.1f} / {max(result.wall):.1f} % | "
                          f"{min(result.loads):.0f}-{max(result.loads):.0f} | "
                          f"{result.skipped} |", flush=True)  # fmt: skip
                    details.append(
                        f"- {app.name}, b = {batch}, back-off {variant}: "
                        + ", ".join(f"{v:.2f}" for v in result.instructions)
                        + " % (instructions); wall "
                        + ", ".join(f"{v:.0f}" for v in result.wall)
                        + " %"
                    )
    print("\nPer run (runs 1-12 in order):\n")
    print("\n".join(details))
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
