"""Instrumentation overhead of perfcast's regions.

1. Cost of one begin/end pair: C library (literal names, run-time names, a function under
   -finstrument-functions) and Python ``perfcast.region`` (context manager, decorator), each in a
   tight loop, minus the same loop without regions; the best (minimum) time of several
   interleaved repetitions of each, which is what a loaded shared machine distorts least.
2. Whole-program overhead of every example application with its default settings: the build with
   regions against the build with the regions compiled out (-DPERFCAST_DISABLE), same arguments,
   runs interleaved, median wall time of each. Also the overhead the pair cost predicts from the
   number of pairs a run executes, which is steadier than the difference of two noisy medians.

Usage: .venv/bin/python benchmarks/overhead.py [--repetitions 7] [--ranks 2]
Prints a Markdown section for benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

from perfcast import region
from perfcast.measure.instrument import library_dir

REPO = Path(__file__).resolve().parents[1]
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

# The examples with the largest problem size of their campaign (default iterations).
EXAMPLES = {
    "jacobi": ["1280"],
    "cg": ["384"],
    "samplesort": ["1000000"],
    "histogram": ["4000000"],
}

PAIR_LOOP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "perfcast.h"
static volatile long sink;
__attribute__((noinline)) static void callee(long i) { sink += i; }
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    char name[] = "dynamic";
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
#if defined(VARIANT_LITERAL)
        PERFCAST_REGION_BEGIN("pair");
        sink += i;
        PERFCAST_REGION_END("pair");
#elif defined(VARIANT_CLOCK)
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        sink += i;
        clock_gettime(CLOCK_MONOTONIC, &b);
        sink += a.tv_nsec + b.tv_nsec;
#elif defined(VARIANT_DYNAMIC)
        PERFCAST_REGION_BEGIN_DYNAMIC(name);
        sink += i;
        PERFCAST_REGION_END_DYNAMIC(name);
#else
        callee(i);
#endif
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    (void)name;
    printf("%.6f\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    return 0;
}
"""


def compile_pair_loop(directory: Path, name: str, *flags: str) -> Path:
    """One variant of the tight loop; the callee lives in its own, uninstrumented-or-not unit."""
    source = directory / "loop.c"
    source.write_text(PAIR_LOOP)
    binary = directory / name
    subprocess.run(
        ["gcc", "-O2", f"-I{library_dir()}", *flags, str(source)]
        + [str(library_dir() / "perfcast.c"), "-ldl", "-o", str(binary)],
        check=True,
    )
    return binary


def loop_seconds(binary: Path, iterations: int) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PERFCAST_OUTPUT"}
    result = subprocess.run(
        [str(binary), str(iterations)], env=env, capture_output=True, text=True, check=True
    )
    return float(result.stdout)


def c_pair_costs(directory: Path, iterations: int, repetitions: int) -> dict[str, float]:
    """Nanoseconds per begin/end pair (or per instrumented call) for each C variant."""
    baseline = compile_pair_loop(directory, "baseline", "-DPERFCAST_DISABLE", "-DVARIANT_LITERAL")
    variants = {
        "C, literal name (PERFCAST_REGION_BEGIN/END)": (
            compile_pair_loop(directory, "literal", "-DVARIANT_LITERAL"),
            baseline,
        ),
        "C, run-time name (PERFCAST_REGION_BEGIN/END_DYNAMIC)": (
            compile_pair_loop(directory, "dynamic", "-DVARIANT_DYNAMIC"),
            baseline,
        ),
        "floor: two clock_gettime(CLOCK_MONOTONIC) calls, no regions": (
            compile_pair_loop(directory, "clock", "-DPERFCAST_DISABLE", "-DVARIANT_CLOCK"),
            baseline,
        ),
        "C, function under -finstrument-functions": (
            compile_pair_loop(directory, "functions", "-finstrument-functions"),
            compile_pair_loop(directory, "plain_call"),
        ),
    }
    costs = {}
    for label, (instrumented, plain) in variants.items():
        with_regions, without = [], []
        for _ in range(repetitions):
            with_regions.append(loop_seconds(instrumented, iterations))
            without.append(loop_seconds(plain, iterations))
        costs[label] = (min(with_regions) - min(without)) / iterations * 1e9
    return costs


def python_pair_costs(iterations: int, repetitions: int) -> dict[str, float]:
    """Nanoseconds per region entry and exit in Python, context manager and decorator."""
    pair = region("benchmark_pair")

    @region("benchmark_decorated")
    def decorated() -> None:
        pass

    def plain() -> None:
        pass

    def with_region() -> None:
        for _ in range(iterations):
            with pair:
                pass

    def empty_loop() -> None:
        for _ in range(iterations):
            pass

    def decorated_calls() -> None:
        for _ in range(iterations):
            decorated()

    def plain_calls() -> None:
        for _ in range(iterations):
            plain()

    def per_pair(measured, baseline) -> float:
        with_regions, without = [], []
        for _ in range(repetitions):
            with_regions.append(timeit.timeit(measured, number=1))
            without.append(timeit.timeit(baseline, number=1))
        return (min(with_regions) - min(without)) / iterations * 1e9

    return {
        "Python, `with perfcast.region(...)`": per_pair(with_region, empty_loop),
        "Python, `@perfcast.region(...)` decorated call": per_pair(decorated_calls, plain_calls),
    }


def python_import_seconds(repetitions: int) -> float:
    """Start-up cost of ``import perfcast`` in a fresh interpreter (best of, minus bare start)."""

    def best(code: str) -> float:
        times = []
        for _ in range(repetitions):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times.append(time.perf_counter() - start)
        return min(times)

    return best("import perfcast") - best("pass")


def build_examples(directory: Path) -> Path:
    directory.mkdir()
    shutil.copy(REPO / "examples" / "common.mk", directory)
    for app in EXAMPLES:
        shutil.copytree(
            REPO / "examples" / app, directory / app, ignore=shutil.ignore_patterns("build")
        )
        subprocess.run(
            ["make", "-s", "-C", str(directory / app), f"PERFCAST_DIR={library_dir()}"],
            check=True,
            capture_output=True,
        )
    return directory


def wall_seconds(command: list[str], output: Path | None) -> float:
    env = {**os.environ, **MPI_ENV}
    env.pop("PERFCAST_OUTPUT", None)
    if output is not None:
        env["PERFCAST_OUTPUT"] = str(output)
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def example_overheads(
    directory: Path, ranks: int, repetitions: int, pair_ns: float
) -> list[dict[str, object]]:
    rows = []
    for app, arguments in EXAMPLES.items():
        launcher = ["mpirun", "--oversubscribe", "-np", str(ranks)]
        instrumented = [*launcher, str(directory / app / "build" / app), *arguments]
        plain = [*launcher, str(directory / app / "build" / f"{app}-noregions"), *arguments]
        output = directory / f"{app}.jsonl"
        times_with, times_without = [], []
        for _ in range(repetitions):
            output.unlink(missing_ok=True)
            times_with.append(wall_seconds(instrumented, output))
            times_without.append(wall_seconds(plain, None))
        records = [json.loads(line) for line in output.read_text().splitlines()]
        pairs_per_rank = sum(r["value"] for r in records if r["metric"] == "visits")
        with_median = statistics.median(times_with)
        without_median = statistics.median(times_without)
        rows.append(
            {
                "app": f"{app} {' '.join(arguments)}",
                "without": without_median,
                "with": with_median,
                "measured": (with_median / without_median - 1) * 100,
                "measured_min": (min(times_with) / min(times_without) - 1) * 100,
                "pairs": pairs_per_rank,
                "predicted": pairs_per_rank * pair_ns * 1e-9 / without_median * 100,
            }
        )
    return rows


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.machine()


def instructions(command: list[str]) -> int:
    """Instructions one run executes, counted by valgrind (callgrind), deterministic."""
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        env={**os.environ, **MPI_ENV, "PERFCAST_OUTPUT": os.devnull},
        capture_output=True,
        text=True,
        check=True,
    )
    return int(re.search(r"Collected : (\d+)", result.stderr).group(1))


def instruction_overheads(directory: Path) -> list[tuple[str, int, int]]:
    """(example, instructions without regions, with regions) of one run at p = 1."""
    rows = []
    for app, arguments in EXAMPLES.items():
        build = directory / app / "build"
        without = instructions([str(build / f"{app}-noregions"), *arguments])
        with_regions = instructions([str(build / app), *arguments])
        rows.append((f"{app} {' '.join(arguments)}", without, with_regions))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=7)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=10_000_000, help="pairs per C loop")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count every example's instructions under valgrind at p = 1 (minutes)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="perfcast-overhead-") as tmp:
        directory = Path(tmp)
        c_costs = c_pair_costs(directory, args.iterations, args.repetitions)
        python_costs = python_pair_costs(args.iterations // 20, args.repetitions)
        import_seconds = python_import_seconds(args.repetitions)
        literal_ns = next(iter(c_costs.values()))
        examples = build_examples(directory / "examples")
        rows = example_overheads(examples, args.ranks, args.repetitions, literal_ns)
        counted = instruction_overheads(examples) if args.instructions else []

    command = "python benchmarks/overhead.py " + " ".join(sys.argv[1:])
    print("## Instrumentation overhead\n")
    print(f"Command: `{command.strip()}` (from the repository root, after `scripts/setup`).")
    print(
        f"Machine: {cpu_model()}, {os.cpu_count()} cores, shared with other jobs (load average "
        f"{os.getloadavg()[0]:.1f} at the end); {args.repetitions} repetitions.\n"
    )
    print(
        "Cost of one begin/end pair: best of the instrumented loop minus best of the same loop "
        "without regions:\n"
    )
    print("| variant | ns per pair |")
    print("|---|---:|")
    for label, ns in {**c_costs, **python_costs}.items():
        print(f"| {label} | {ns:.1f} |")
    print(
        f"\nOnce per Python program: `import perfcast` costs {import_seconds * 1000:.0f} ms of "
        "start-up (best of the repetitions, minus a bare interpreter start)."
    )
    print(
        f"\nWhole programs, `mpirun -np {args.ranks}`, default settings, largest campaign size; "
        "built with regions vs with `-DPERFCAST_DISABLE`, runs interleaved. Times are medians; "
        "`predicted` = pairs per rank x C pair cost / run time.\n"
    )
    print(
        "| example | without regions (s) | with regions (s) | overhead of medians | "
        "overhead of minima | pairs per rank | predicted overhead |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['app']} | {row['without']:.3f} | {row['with']:.3f} | "
            f"{row['measured']:+.2f} % | {row['measured_min']:+.2f} % | {row['pairs']:.0f} | "
            f"{row['predicted']:.4f} % |"
        )
    if counted:
        print(
            "\nInstructions of one whole run at p = 1 (valgrind callgrind, deterministic up to "
            "MPI start-up), the same settings:\n"
        )
        print("| example | without regions | with regions | overhead |")
        print("|---|---:|---:|---:|")
        for app, without, with_regions in counted:
            print(
                f"| {app} | {without:,} | {with_regions:,} | "
                f"{(with_regions / without - 1) * 100:+.4f} % |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
