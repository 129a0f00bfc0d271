"""Online modeling: back-off skip rates, accuracy against offline models, exceptions on shifts,
and model-store throughput with concurrent writers.

Run from the repository root::

    .venv/bin/python -m benchmarks.online backoff     # ~3 min: skip rate per kernel kind
    .venv/bin/python -m benchmarks.online accuracy    # ~2 min: lead order, PARS, shifts
    .venv/bin/python -m benchmarks.online store       # ~1 min: SQLite and PostgreSQL, 4 writers

Each prints a markdown table and the command that reproduced it (``benchmarks/RESULTS.md``,
"Online modeling").
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfcast.core.experiment import Experiment
from perfcast.model.online import Measurement, OnlineModeler, pars
from perfcast.model.registry import make_modeler

GRID_2P = [(n, p) for n in (64, 128, 256, 512, 1024, 2048) for p in (1, 2, 4, 8, 16)]
GRID_1P = [(n, 1) for n in (1000, 2000, 4000, 8000, 16000, 32000)]


@dataclass(frozen=True)
class Kind:
    """A kind of stable kernel: a truth, a noise and an arrival pattern."""

    name: str
    grid: list[tuple[int, int]]
    truth: Callable[[float, float], float]
    noise: Callable[[np.random.Generator, float], float]
    run_length: int = 1  # consecutive measurements at one configuration (a production run)
    function: bool = False


def _gauss(share: float) -> Callable[[np.random.Generator, float], float]:
    return lambda rng, v: v * (1 + share * rng.standard_normal())


def _spiky(rng: np.random.Generator, v: float) -> float:
    value = v * (1 + 0.03 * rng.standard_normal())
    return value * 20 if rng.random() < 0.005 else value


def _nlogn(n: float, p: float) -> float:
    return 1e-5 + 1e-6 * n * math.log2(n) / p


KINDS = [
    Kind("linear, 1 parameter, 3 % noise", GRID_1P, lambda n, p: 2e-4 + 1e-7 * n, _gauss(0.03)),
    Kind("n log n / p, 3 % noise", GRID_2P, _nlogn, _gauss(0.03)),
    Kind("n log n / p, 0.1 % noise", GRID_2P, _nlogn, _gauss(0.001)),
    Kind(
        "n^1.5, additive noise",
        GRID_2P,
        lambda n, p: 1e-2 + 1e-6 * n**1.5,
        lambda rng, v: v + 1e-3 * rng.standard_normal(),
    ),
    Kind(
        "n / p, exponential noise",
        GRID_2P,
        lambda n, p: 1e-6 * n / p,
        lambda rng, v: v * (1 + 0.05 * rng.standard_exponential()),
    ),
    Kind("n log n / p, 0.5 % 20x spikes", GRID_2P, _nlogn, _spiky),
    Kind("n log n / p, runs of 2048 at one point", GRID_2P, _nlogn, _gauss(0.03), 2048),
    Kind("function: n log n / p, 3 % noise", GRID_2P, _nlogn, _gauss(0.03), function=True),
]


def stream(
    kind: Kind, count: int, seed: int, shift: tuple[int, float] | None = None
) -> Iterator[Measurement]:
    """``count`` measurements of ``kind``; with ``shift = (at, factor)`` the kernel runs
    ``factor`` times slower from measurement ``at`` on."""
    rng = np.random.default_rng(seed)
    point = kind.grid[0]
    for i in range(count):
        if i % kind.run_length == 0:
            point = kind.grid[rng.integers(len(kind.grid))]
        n, p = point
        value = kind.noise(rng, kind.truth(n, p))
        if shift is not None and i >= shift[0]:
            value *= shift[1]
        params = {"n": float(n)} if kind.grid is GRID_1P else {"n": float(n), "p": float(p)}
        yield Measurement("k", "time", params, value, i)


def skip_after(kind: Kind, count: int, batch: int, seed: int, hit_test: str) -> tuple[float, int]:
    """Share of the measurements arriving after the kernel's first 10 batches (``10 * batch``
    measurements) that back-off skipped, and the misses over the whole stream."""
    modeler = OnlineModeler(
        batch=batch, seed=seed, hit_test=hit_test, functions={"k"} if kind.function else ()
    )
    after = skipped = 0
    for measurement in stream(kind, count, seed):
        state = modeler.states_.get(("k", "time"))
        late = measurement.index >= 10 * batch
        before = state.skipped if state is not None else 0
        modeler.partial_fit([measurement])
        if late:
            after += 1
            skipped += modeler.states_[("k", "time")].skipped - before
    misses = sum(1 for j in modeler.states_[("k", "time")].judgements if j.hit is False)
    return (skipped / after if after else float("nan")), misses


def run_backoff(args: argparse.Namespace) -> None:
    print(f"Stream of {args.count} measurements per kernel, b = {args.batch}, seeds "
          f"{args.seeds}; share of the measurements after the first 10 batches (10 b) "
          "skipped, and misses.\n")  # fmt: skip
    print("| kernel | robust hit test | paper's hit test |")
    print("|---|---|---|")
    for kind in KINDS:
        cells = []
        for hit_test in ("robust", "paper"):
            results = [
                skip_after(kind, args.count, args.batch, seed, hit_test)
                for seed in range(1, args.seeds + 1)
            ]
            share = np.mean([r[0] for r in results])
            misses = sum(r[1] for r in results)
            cells.append(f"{100 * share:.1f} % ({misses} misses)")
        print(f"| {kind.name} | {cells[0]} | {cells[1]} |", flush=True)


def offline_model(measurements: list[Measurement]):  # type: ignore[no-untyped-def]
    experiment = Experiment.from_columns(
        ["k"] * len(measurements),
        ["time"] * len(measurements),
        {name: [m.params[name] for m in measurements] for name in measurements[0].params},
        [m.value for m in measurements],
    )
    return make_modeler("pmnf").fit(experiment, "time").models_[0]


def run_accuracy(args: argparse.Namespace) -> None:
    print(f"Streams of {args.count} measurements, b = {args.batch}, seeds 1-{args.seeds}.\n")
    print("| kernel | lead order online = offline | PARS online / offline (last batch) | "
          "false exceptions per 10,000 measured |")  # fmt: skip
    print("|---|---|---|---|")
    for kind in KINDS[:-1]:
        same = 0
        pars_pairs = []
        false = measured = 0
        for seed in range(1, args.seeds + 1):
            data = list(stream(kind, args.count, seed))
            online = OnlineModeler(batch=args.batch, seed=seed, backoff=False)
            online.partial_fit(data[: -args.batch])
            state = online.states_[("k", "time")]
            model = state.model
            offline = offline_model(data[: -args.batch])
            names = list(data[0].params)
            same += all(model.lead_order(p) == offline.lead_order(p) for p in names)
            last = data[-args.batch :]
            points = np.array([[m.params[p] for p in names] for m in last])
            values = np.array([m.value for m in last])
            pars_pairs.append(
                (
                    pars(values, model.evaluate(points), len(model.terms)),
                    pars(values, offline.evaluate(points), len(offline.terms)),
                )
            )
            false += len(state.exceptions)
            measured += state.measured
        online_pars = np.mean([a for a, _ in pars_pairs if a is not None])
        offline_pars = np.mean([b for _, b in pars_pairs if b is not None])
        print(f"| {kind.name} | {same}/{args.seeds} | {online_pars:.4f} / {offline_pars:.4f} | "
              f"{1e4 * false / measured:.2f} |", flush=True)  # fmt: skip
    print("\nPlanted shift at measurement 20,000 (of 100,000), n log n / p with 3 % noise: "
          "measured batches from the shift to the first exception (median / max over seeds), "
          "exceptions before the shift.\n")  # fmt: skip
    print("| factor | back-off | measured batches to first exception | stream measurements "
          "to first | false before shift |")  # fmt: skip
    print("|---|---|---|---|---|")
    kind = KINDS[1]
    for factor in (1.2, 1.5, 2.0):
        for backoff in (False, True):
            latencies, distances, early = [], [], 0
            for seed in range(1, args.seeds + 1):
                batches, distance, false = detection(kind, seed, factor, backoff, args.batch)
                latencies.append(batches)
                distances.append(distance)
                early += false
            print(f"| x{factor} | {'on' if backoff else 'off'} | "
                  f"{np.median(latencies):.0f} / {max(latencies):.0f} | "
                  f"{np.median(distances):.0f} / {max(distances):.0f} | {early} |",
                  flush=True)  # fmt: skip


def detection(
    kind: Kind, seed: int, factor: float, backoff: bool, batch: int
) -> tuple[float, float, int]:
    """After a shift at measurement 20,000: the kernel's measured batches until the first
    exception (1 = the first batch holding a shifted value), the stream measurements until
    then, and the exceptions raised before the shift."""
    online = OnlineModeler(batch=batch, seed=seed, backoff=backoff)
    measured_at_shift = 0
    for measurement in stream(kind, 100000, seed, shift=(20000, factor)):
        state = online.states_.get(("k", "time"))
        if measurement.index == 20000 and state is not None:
            measured_at_shift = state.measured - len(state.pending_values)
        online.partial_fit([measurement])
        state = online.states_[("k", "time")]
        if measurement.index >= 20000 and any(e.index >= 20000 for e in state.exceptions):
            early = sum(1 for e in state.exceptions if e.index < 20000)
            batches = math.ceil((state.measured - measured_at_shift) / batch)
            return float(batches), float(measurement.index - 20000), early
    state = online.states_[("k", "time")]
    return math.inf, math.inf, sum(1 for e in state.exceptions if e.index < 20000)


WRITER = textwrap.dedent(
    """
    import sys, time, numpy as np
    from perfcast.io.online_store import ModelStore, StoredKernel
    url, seed, batches, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = np.random.default_rng(seed)
    store = ModelStore(url)
    for b in range(batches):
        keys = rng.integers(30, size=size)
        values = rng.normal(1.0, 0.05, size)
        configurations = []
        for key in np.unique(keys):
            group = values[keys == key]
            mean = float(group.mean())
            configurations.append(((float(key), 1.0), float(len(group)), mean,
                                   float(((group - mean) ** 2).sum())))
        store.write("bench", [StoredKernel(f"k{seed % 2}", "time", ("n", "p"), None,
                    {"hit_count": 0}, configurations, measured=size,
                    judgements=[{"number": b}])])
    store.close()
    """
)


def store_throughput(url: str, writers: int, batches: int, size: int) -> float:
    """Measurements per second into ``url`` with ``writers`` processes at once."""
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    start = time.perf_counter()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, url, str(seed), str(batches), str(size)],
            env=environment,
        )
        for seed in range(writers)
    ]
    for process in processes:
        if process.wait() != 0:
            raise RuntimeError("a writer failed")
    return writers * batches * size / (time.perf_counter() - start)


def run_store(args: argparse.Namespace) -> None:
    from tests.io.postgres_server import postgres_server

    print(f"{args.writers} writer processes, each {args.batches} batches of {args.batch} "
          "measurements (30 configurations each, one transaction per batch).\n")  # fmt: skip
    print("| store | measurements / s | batches / s |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="online-bench-") as directory:
        rate = store_throughput(
            str(Path(directory) / "s.db"), args.writers, args.batches, args.batch
        )
        print(f"| SQLite (WAL) | {rate:,.0f} | {rate / args.batch:,.1f} |", flush=True)
    with postgres_server() as url:
        rate = store_throughput(url, args.writers, args.batches, args.batch)
        print(f"| PostgreSQL 15 (local, fsync off) | {rate:,.0f} | {rate / args.batch:,.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("backoff", "accuracy", "store"))
    parser.add_argument("--count", type=int, default=60000, help="measurements per stream")
    parser.add_argument("--batch", type=int, default=512, help="batch size b")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per figure")
    parser.add_argument("--writers", type=int, default=4, help="concurrent store writers")
    parser.add_argument("--batches", type=int, default=200, help="batches per store writer")
    args = parser.parse_args()
    print(f"Command: python -m benchmarks.online {' '.join(sys.argv[1:])}\n")
    {"backoff": run_backoff, "accuracy": run_accuracy, "store": run_store}[args.part](args)


if __name__ == "__main__":
    main()
