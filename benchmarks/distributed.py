"""Modeling on a Dask cluster against modeling in one process, in the same run.

Two kernel sets (synthetic PMNF kernels with 1-10 % noise, five repetitions): one-parameter
kernels at six values of ``p`` and two-parameter kernels on a 5 x 5 grid. Each set is fitted
twice, each time in a fresh process so that peak memory is that fit's: in one process
(``perfcast.fit``) and on a local Dask cluster of ``--workers`` worker processes
(``perfcast.fit(client=...)``). The table gives wall times, their ratio, kernels per second,
the CPU time of the calling process and of the workers together, the peak resident memory of
the calling process and of every worker, and whether the models are identical (SHA-256 of
the model JSON).

    .venv/bin/python -m benchmarks.distributed --one 1000000 --two 100000 --workers 2

The figures of the paper projection in ``benchmarks/RESULTS.md`` come from the per-kernel cost
and the per-chunk overhead measured here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence

import numpy as np

#: Values of each parameter.
ONE_PARAMETER = {"p": [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]}
TWO_PARAMETERS = {"p": [2.0, 4.0, 8.0, 16.0, 32.0], "n": [10.0, 20.0, 40.0, 80.0, 160.0]}
REPETITIONS = 5


def synthetic(kernels: int, grid: dict[str, list[float]], seed: int):
    """An experiment of ``kernels`` random PMNF kernels on the full ``grid``, built from
    columns (no pandas): ``c + sum_j a_j * x_j^e_j * log2(x_j)^l_j`` times ``1 + noise``."""
    from perfcast.core.experiment import Experiment

    rng = np.random.default_rng(seed)
    names = list(grid)
    mesh = np.meshgrid(*[np.asarray(grid[n]) for n in names], indexing="ij")
    points = np.stack([m.ravel() for m in mesh], axis=1)  # (P, D)
    exponents = rng.choice([0.5, 1.0, 1.5, 2.0, 3.0], size=(kernels, len(names)))
    logs = rng.integers(0, 2, size=(kernels, len(names)))
    scales = rng.uniform(0.1, 5.0, size=(kernels, len(names)))
    values = rng.uniform(0.5, 5.0, size=(kernels, 1))
    for j in range(len(names)):
        x = points[None, :, j]
        values = (
            values
            + scales[:, j : j + 1] * x ** exponents[:, j : j + 1] * np.log2(x) ** logs[:, j : j + 1]
        )
    noise = rng.uniform(0.01, 0.10, size=(kernels, 1, 1))
    measured = values[:, :, None] * (
        1 + rng.uniform(-1, 1, (kernels, len(points), REPETITIONS)) * noise
    )
    n_points = len(points)
    rows = kernels * n_points * REPETITIONS
    kernel_names = np.repeat(
        np.array([f"k{k}" for k in range(kernels)], dtype=object), n_points * REPETITIONS
    )
    coordinates = {
        name: np.tile(np.repeat(points[:, j], REPETITIONS), kernels) for j, name in enumerate(names)
    }
    repetition = np.tile(np.arange(REPETITIONS), kernels * n_points)
    return Experiment.from_columns(
        kernel_names, ["time"] * rows, coordinates, measured.ravel(), repetition
    )


def peak_mib() -> float:
    """Peak resident memory of this process in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    """CPU time (user + system) this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(kind: str, kernels: int, workers: int, seed: int) -> dict:
    """One fit in this process; its figures as a dict."""
    import perfcast

    grid = ONE_PARAMETER if kind == "one" else TWO_PARAMETERS
    experiment = synthetic(kernels, grid, seed)
    built = peak_mib()
    cpu = cpu_seconds()
    if workers == 0:
        start = time.perf_counter()
        models = perfcast.fit(experiment)
        seconds = time.perf_counter() - start
        worker_peaks: list[float] = []
        worker_cpu = 0.0
    else:
        with perfcast.dask_client(workers=workers) as client:
            idle = sum(client.run(cpu_seconds).values())
            start = time.perf_counter()
            models = perfcast.fit(experiment, client=client)
            seconds = time.perf_counter() - start
            worker_peaks = sorted(client.run(peak_mib).values())
            worker_cpu = sum(client.run(cpu_seconds).values()) - idle
    caller_cpu = cpu_seconds() - cpu
    digest = hashlib.sha256(models.to_json().encode()).hexdigest()
    return {
        "seconds": seconds,
        "caller_cpu": caller_cpu,
        "worker_cpu": worker_cpu,
        "peak_mib": peak_mib(),
        "data_mib": built,
        "worker_peak_mib": worker_peaks,
        "models": len(models.models),
        "sha256": digest,
    }


def in_fresh_process(kind: str, kernels: int, workers: int, seed: int) -> dict:
    argv = [sys.executable, "-m", "benchmarks.distributed", "--child", kind, str(kernels)]
    argv += [str(workers), str(seed)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", type=int, default=1_000_000, help="one-parameter kernels")
    parser.add_argument("--two", type=int, default=100_000, help="two-parameter kernels")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, kernels, workers, seed = args.child
        print(json.dumps(measure(kind, int(kernels), int(workers), int(seed))))
        return 0
    print(
        "| kernels | fit | wall s | ratio to one process | kernels/s | CPU s caller + workers "
        "| peak MiB (caller) | peak MiB (workers) | models identical |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for kind, kernels in (("one", args.one), ("two", args.two)):
        if kernels <= 0:
            continue
        serial = in_fresh_process(kind, kernels, 0, args.seed)
        spread = in_fresh_process(kind, kernels, args.workers, args.seed)
        label = f"{kernels:,} {'one' if kind == 'one' else 'two'}-parameter"
        same = "yes" if serial["sha256"] == spread["sha256"] else "NO"
        for name, figures in (("one process", serial), (f"{args.workers} Dask workers", spread)):
            ratio = figures["seconds"] / serial["seconds"]
            workers = ", ".join(f"{m:.0f}" for m in figures["worker_peak_mib"]) or "-"
            print(
                f"| {label} | {name} | {figures['seconds']:.1f} | {ratio:.2f} "
                f"| {kernels / figures['seconds']:,.0f} "
                f"| {figures['caller_cpu']:.1f} + {figures['worker_cpu']:.1f} "
                f"| {figures['peak_mib']:.0f} "
                f"| {workers} | {same} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
