"""Overhead of ``perfcast features`` counters in an OpenMP build, serial and parallel loops.

An OpenMP program's serial code (set-up loops, as in XSBench's grid initialisation) runs on one
thread; before, every counter update of an ``-fopenmp`` build was atomic there too, and a
third-party check measured XSBench's grid set-up 4-5 times slower instrumented. The counters
now use atomics only inside a parallel region (``omp_in_parallel``). This benchmark builds a
small program of its own (a serial set-up loop nest with a branch, then a parallel loop) as it
is and instrumented, with ``gcc -O3 -fopenmp``, runs both interleaved and reports the ratio of
their user CPU seconds (best of the repetitions: what a loaded machine distorts least), for the
serial part and the parallel part separately (``MODE`` 0 and 1).

Usage: .venv/bin/python benchmarks/features_openmp_overhead.py [--repetitions 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from perfcast.static.features import instrument_features

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = atol(argv[1]), mode = atol(argv[2]), i, j, low = 0;
    double *grid = malloc((size_t)n * sizeof *grid), sum = 0.0;
    if (mode == 0) {
        for (i = 0; i < n; i++)
            grid[i] = (double)((i * 7919) % 1000);
        for (j = 0; j < 20; j++)
            for (i = 0; i < n; i++) {
                if (grid[i] < 500.0)
                    low++;
                else
                    sum += grid[i];
            }
    } else {
#pragma omp parallel for reduction(+ : sum, low)
        for (i = 0; i < n * 20; i++) {
            if ((i * 7919) % 1000 < 500)
                low++;
            else
                sum += 1.0;
        }
    }
    printf("%ld %.1f\n", low, sum);
    free(grid);
    return 0;
}
"""


def _user_seconds(command: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    subprocess.run(command, check=True, capture_output=True, env=env)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--n", type=int, default=2_000_000)
    args = parser.parse_args()
    env = {**os.environ, "OMP_NUM_THREADS": "2", "PERFCAST_FEATURES_FILE": os.devnull}
    with tempfile.TemporaryDirectory(prefix="perfcast-omp-overhead-") as folder:
        work = Path(folder)
        (work / "app.c").write_text(PROGRAM)
        instrument_features([work / "app.c"], work / "out", ["-fopenmp"])
        binaries: dict[str, str] = {}
        for name, source in (
            ("original", work / "app.c"),
            ("instrumented", work / "out" / "app.c"),
        ):
            built = work / name
            subprocess.run(["gcc", "-O3", "-fopenmp", "-o", str(built), str(source)], check=True)
            binaries[name] = str(built)
        print("| part | original user s | instrumented user s | ratio |")
        print("|---|---|---|---|")
        for mode, part in ((0, "serial loops"), (1, "parallel loop")):
            best = {name: float("inf") for name in binaries}
            for _ in range(args.repetitions):
                for name, binary in binaries.items():
                    seconds = _user_seconds([binary, str(args.n), str(mode)], env)
                    best[name] = min(best[name], seconds)
            ratio = best["instrumented"] / best["original"]
            print(f"| {part} | {best['original']:.3f} | {best['instrumented']:.3f} | {ratio:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
