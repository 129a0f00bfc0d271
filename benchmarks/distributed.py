"""Modeling on a Dask cluster against modeling in one process, in the same run.

Two kernel sets (synthetic PMNF kernels with 1-10 % noise, five repetitions): one-parameter
kernels at six values of ``p`` and two-parameter kernels on a 5 x 5 grid. Each set is fitted
twice, each time in a fresh process so that peak memory is that fit's: in one process
(``perfcast.fit``) and on a Dask cluster (``perfcast.fit(client=...)``) of a scheduler and
``--workers`` worker processes of one thread each, every one its own process started with the
``dask`` command line as on a real cluster. The table gives wall times (with the load average
before and after), their ratio, kernels per second, the CPU time of the client, the scheduler
and the workers, the tasks submitted, the peak resident memory of every process, and whether
the models are identical (SHA-256 of the model JSON).

    .venv/bin/python -m benchmarks.distributed --one 1000000 --two 100000 --workers 2

The figures of the paper projection in ``benchmarks/RESULTS.md`` come from the per-kernel cost
and the per-task overhead measured here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

#: Values of each parameter.
ONE_PARAMETER = {"p": [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]}
TWO_PARAMETERS = {"p": [2.0, 4.0, 8.0, 16.0, 32.0], "n": [10.0, 20.0, 40.0, 80.0, 160.0]}
REPETITIONS = 5


def synthetic(kernels: int, grid: dict[str, list[float]], seed: int):
    """An experiment of ``kernels`` random PMNF kernels on the full ``grid``, built from
    columns (no pandas): ``c + sum_j a_j * x_j^e_j * log2(x_j)^l_j`` times ``1 + noise``.

    The columns are handed over as the kernel and metric codes an experiment keeps, valid by
    construction (every kernel measured once per point and repetition), instead of through
    :meth:`Experiment.from_columns`, whose checks of 30 million rows (one name per row,
    repetitions counted per kernel and point) cost more than a fit in one process; the
    experiment is the one ``from_columns`` gives (:func:`synthetic_by_rows`).
    """
    from perfcast.core.experiment import Experiment, Metric, Parameter

    names, kernel_names, columns = _synthetic_columns(kernels, grid, seed)
    kernel_codes, coordinates, repetition, measured = columns
    return Experiment(
        (kernel_codes, kernel_names),
        (np.zeros(len(measured), dtype=np.int64), ["time"]),
        coordinates,
        repetition,
        measured,
        tuple(Parameter(name) for name in names),
        {"time": Metric("time")},
        {},
        None,
    )


def synthetic_by_rows(kernels: int, grid: dict[str, list[float]], seed: int):
    """:func:`synthetic` through :meth:`Experiment.from_columns`, one kernel name per row."""
    from perfcast.core.experiment import Experiment

    _, kernel_names, columns = _synthetic_columns(kernels, grid, seed)
    kernel_codes, coordinates, repetition, measured = columns
    rows = np.array(kernel_names, dtype=object)[kernel_codes]
    return Experiment.from_columns(rows, ["time"] * len(rows), coordinates, measured, repetition)


def _synthetic_columns(kernels: int, grid: dict[str, list[float]], seed: int):
    """The parameter names, kernel names and columns (kernel codes, coordinates,
    repetitions, values) of :func:`synthetic`."""
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
    kernel_codes = np.repeat(np.arange(kernels, dtype=np.int64), n_points * REPETITIONS)
    coordinates = {
        name: np.tile(np.repeat(points[:, j], REPETITIONS), kernels) for j, name in enumerate(names)
    }
    repetition = np.tile(np.arange(REPETITIONS, dtype=np.int64), kernels * n_points)
    kernel_names = [f"k{k}" for k in range(kernels)]
    return names, kernel_names, (kernel_codes, coordinates, repetition, measured.ravel())


def peak_mib() -> float:
    """Peak resident memory of this process in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    """CPU time (user + system) this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(kind: str, kernels: int, scheduler: str | None, seed: int) -> dict:
    """One fit in this process, on the cluster of the ``scheduler`` address (None: in this
    process); its figures as a dict."""
    import perfcast
    from perfcast.model.distributed import DaskChunks

    grid = ONE_PARAMETER if kind == "one" else TWO_PARAMETERS
    experiment = synthetic(kernels, grid, seed)
    built = peak_mib()
    cpu = cpu_seconds()
    figures: dict = {"scheduler_cpu": 0.0, "worker_cpu": 0.0, "tasks": 0}
    figures.update(scheduler_peak_mib=None, worker_peak_mib=[])
    if scheduler is None:
        start = time.perf_counter()
        models = perfcast.fit(experiment)
        seconds = time.perf_counter() - start
    else:
        with perfcast.dask_client(scheduler=scheduler) as client:
            idle_workers = sum(client.run(cpu_seconds).values())
            idle_scheduler = client.run_on_scheduler(cpu_seconds)
            chunks = DaskChunks(client)
            start = time.perf_counter()
            models = perfcast.fit(experiment, client=chunks)
            seconds = time.perf_counter() - start
            figures["worker_cpu"] = sum(client.run(cpu_seconds).values()) - idle_workers
            figures["scheduler_cpu"] = client.run_on_scheduler(cpu_seconds) - idle_scheduler
            figures["worker_peak_mib"] = sorted(client.run(peak_mib).values())
            figures["scheduler_peak_mib"] = client.run_on_scheduler(peak_mib)
            figures["tasks"] = chunks.submitted
    figures.update(
        seconds=seconds,
        caller_cpu=cpu_seconds() - cpu,
        peak_mib=peak_mib(),
        data_mib=built,
        models=len(models.models),
        sha256=hashlib.sha256(models.to_json().encode()).hexdigest(),
    )
    return figures


class Cluster:
    """A Dask scheduler and ``workers`` worker processes (one thread each, no nanny), each
    its own process as on a real cluster, started with the ``dask`` command line."""

    def __init__(self, workers: int, folder: Path):
        self.file = folder / "scheduler.json"
        dask = str(Path(sys.executable).with_name("dask"))
        # One BLAS thread per worker, as a nanny would set it.
        environment = {**os.environ, **dict.fromkeys(BLAS_THREADS, "1")}
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        self.processes = [
            subprocess.Popen(
                [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                 "--scheduler-file", str(self.file)],
                env=environment, **quiet,
            )
        ]  # fmt: skip
        deadline = time.monotonic() + 60
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        self.address = json.loads(self.file.read_text())["address"]
        for _ in range(workers):
            self.processes.append(
                subprocess.Popen(
                    [dask, "worker", self.address, "--nthreads", "1", "--no-nanny",
                     "--no-dashboard", "--memory-limit", "0"],
                    env=environment, **quiet,
                )
            )  # fmt: skip
        self._wait_for(workers)

    def _wait_for(self, workers: int) -> None:
        import distributed

        with distributed.Client(self.address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=120)

    def stop(self) -> None:
        """Stop the workers, then the scheduler; kill what has not ended within 20 s."""
        for process in reversed(self.processes):
            process.terminate()
        for process in reversed(self.processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


#: Environment variables that set the threads of numpy's BLAS.
BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def in_fresh_process(kind: str, kernels: int, scheduler: str | None, seed: int) -> dict:
    argv = [sys.executable, "-m", "benchmarks.distributed", "--child", kind, str(kernels)]
    argv += [scheduler or "-", str(seed)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def load_average() -> str:
    """The one-minute load average of this machine (as ``uptime`` shows it)."""
    return f"{os.getloadavg()[0]:.1f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", type=int, default=1_000_000, help="one-parameter kernels")
    parser.add_argument("--two", type=int, default=100_000, help="two-parameter kernels")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, kernels, scheduler, seed = args.child
        address = None if scheduler == "-" else scheduler
        print(json.dumps(measure(kind, int(kernels), address, int(seed))))
        return 0
    print(
        "| kernels | fit | wall s (load before/after) | ratio to one process | kernels/s "
        "| CPU s client + scheduler + workers | tasks | peak MiB client | peak MiB scheduler "
        "| peak MiB workers | models identical |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for kind, kernels in (("one", args.one), ("two", args.two)):
        if kernels <= 0:
            continue
        label = f"{kernels:,} {'one' if kind == 'one' else 'two'}-parameter"
        before = load_average()
        serial = in_fresh_process(kind, kernels, None, args.seed)
        serial["load"] = f"{before}/{load_average()}"
        with tempfile.TemporaryDirectory(prefix="perfcast-bench-") as folder:
            cluster = Cluster(args.workers, Path(folder))
            try:
                before = load_average()
                spread = in_fresh_process(kind, kernels, cluster.address, args.seed)
                spread["load"] = f"{before}/{load_average()}"
            finally:
                cluster.stop()
        same = "yes" if serial["sha256"] == spread["sha256"] else "NO"
        for name, figures in (("one process", serial), (f"{args.workers} Dask workers", spread)):
            ratio = figures["seconds"] / serial["seconds"]
            workers = ", ".join(f"{m:.0f}" for m in figures["worker_peak_mib"]) or "-"
            scheduler = figures["scheduler_peak_mib"]
            print(
                f"| {label} | {name} | {figures['seconds']:.1f} ({figures['load']}) "
                f"| {ratio:.2f} | {kernels / figures['seconds']:,.0f} "
                f"| {figures['caller_cpu']:.1f} + {figures['scheduler_cpu']:.1f} "
                f"+ {figures['worker_cpu']:.1f} | {figures['tasks']} "
                f"| {figures['peak_mib']:.0f} | {'-' if scheduler is None else f'{scheduler:.0f}'} "
                f"| {workers} | {same} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
