"""Learned run-time models on real MPI programs: features against parameters, reductions, transfer.

Three C + MPI programs of ``benchmarks/learned_apps`` (an N-body code with an algorithm choice,
breadth-first searches on a generated graph, conjugate gradients to a tolerance) are instrumented
with ``perfcast features``, built with ``mpicc -O2`` and run under ``mpirun`` with inputs drawn at
random; each run's features and its time (from ``MPI_Init`` to ``MPI_Finalize``, rank 0) form a
run table, the drawn inputs (and the rank count) added as the parameter columns. Then:

- mean relative error (the paper's formula) on held-out runs, per program and method, at 10 %,
  30 % and 50 % training share, with all features and with the parameters only;
- the reductions: collection cost (share of run time) and error before and after each;
- transfer to another build (``-O0``): error on the held-out ``-O0`` runs against the number of
  ``-O0`` training runs (5, 10, 20, 50), with and without the ``-O2`` runs as source;
- the collection overhead: original against instrumented build, same inputs.

Run from the repository root: ``.venv/bin/python -m benchmarks.learned [--runs 200] [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfcast.io.run_table import RunTable, from_columns, read_feature_records
from perfcast.model.learned import LearnedModel
from perfcast.static.features import instrument_features

ROOT = Path(__file__).resolve().parents[1]
APPS = ROOT / "benchmarks" / "learned_apps"
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
SHARES = (0.1, 0.3, 0.5)
METHODS = ("extra-trees", "forest", "poly-lasso", "pmnf")
TARGET_RUNS = (5, 10, 20, 50)


def _log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    return float(np.exp(rng.uniform(np.log(low), np.log(high))))


@dataclass(frozen=True)
class InputRanges:
    """The ranges the programs' sizes are drawn from (the other inputs are drawn alike)."""

    nbody_bodies: tuple[float, float]
    nbody_steps: tuple[int, int]
    bfs_scale: tuple[int, int]
    solver_grid: tuple[float, float]


def input_draws(
    ranges: InputRanges,
) -> dict[str, Callable[[np.random.Generator], dict[str, float]]]:
    """Per program, a function drawing one run's inputs at random within ``ranges``."""

    def nbody(rng: np.random.Generator) -> dict[str, float]:
        return {
            "n": round(_log_uniform(rng, *ranges.nbody_bodies)),
            "steps": int(rng.integers(*ranges.nbody_steps)),
            "algorithm": int(rng.integers(0, 2)),
            "cutoff": round(float(rng.uniform(0.05, 0.3)), 4),
            "seed": int(rng.integers(0, 10**6)),
        }

    def bfs(rng: np.random.Generator) -> dict[str, float]:
        return {
            "scale": int(rng.integers(*ranges.bfs_scale)),
            "edgefactor": round(_log_uniform(rng, 2, 12)),
            "roots": int(rng.integers(1, 12)),
            "skew": round(float(rng.uniform(0.0, 0.9)), 3),
            "seed": int(rng.integers(0, 10**6)),
        }

    def solver(rng: np.random.Generator) -> dict[str, float]:
        return {
            "n": round(_log_uniform(rng, *ranges.solver_grid)),
            "tolerance": float(f"{_log_uniform(rng, 1e-9, 1e-3):.3g}"),
            "rhs": int(rng.integers(0, 2)),
            "seed": int(rng.integers(0, 10**6)),
        }

    return {"nbody": nbody, "bfs": bfs, "solver": solver}


DRAWS = input_draws(
    InputRanges(
        nbody_bodies=(400, 2500), nbody_steps=(2, 8), bfs_scale=(13, 18), solver_grid=(60, 200)
    )
)


def _build(source: Path, binary: Path, optimization: str) -> None:
    command = ["mpicc", optimization, "-o", str(binary), str(source), "-lm"]
    subprocess.run(command, check=True, capture_output=True)


def _run(binary: Path, inputs: dict[str, float], ranks: int, records: Path | None) -> float:
    """Run once; returns the wall time of the whole launch (seconds)."""
    env = {**os.environ, **MPI_ENV}
    if records is not None:
        env["PERFCAST_FEATURES_FILE"] = str(records)
    arguments = [str(v) for k, v in inputs.items()]
    command = ["mpirun", "--oversubscribe", "-np", str(ranks), str(binary), *arguments]
    begin = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - begin


def _campaign(binary: Path, app: str, runs: int, seed: int, folder: Path) -> RunTable:
    """``runs`` random inputs of ``app``: the features table plus the inputs as columns."""
    rng = np.random.default_rng(seed)
    records = folder / f"{binary.name}.jsonl"
    records.unlink(missing_ok=True)
    inputs = []
    for _ in range(runs):
        drawn = DRAWS[app](rng)
        ranks = int(rng.integers(1, 3))
        _run(binary, drawn, ranks, records)
        inputs.append({**{k: v for k, v in drawn.items() if k != "seed"}, "p": ranks})
    table = read_feature_records(records)
    columns: dict[str, object] = {name: [row[name] for row in inputs] for name in inputs[0]}
    columns |= {name: table.column(name) for name in table.columns}
    columns |= {f"cost:{name}": cost for name, cost in table.costs.items()}
    return from_columns(columns, str(records))  # type: ignore[arg-type]


def _error(model: LearnedModel, table: RunTable) -> float:
    truth = table.numeric[model.target_]
    predicted = np.array([p.value for p in model.predict(table)])
    return float(np.mean(np.abs(predicted - truth) / truth))


def _split(rows: int, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.random.default_rng(seed).permutation(rows)
    cut = max(5, round(share * rows))
    return order[:cut], order[cut:]


def accuracy(
    tables: dict[str, RunTable], parameters: dict[str, list[str]], target: str, trees: int
) -> str:
    lines = [
        "| program | method | columns | " + " | ".join(f"{s:.0%} train" for s in SHARES) + " |",
        "|---|---|---|" + "---|" * len(SHARES),
    ]
    for app, table in tables.items():
        for method in METHODS:
            for label, features in (("features", None), ("parameters", parameters[app])):
                errors = []
                for share in SHARES:
                    train, test = _split(table.rows, share, seed=11)
                    model = LearnedModel(method, trees=trees).fit(
                        table.take(train), target, features=features
                    )
                    errors.append(_error(model, table.take(test)))
                cells = " | ".join(f"{e:.1%}" for e in errors)
                lines.append(f"| {app} | {method} | {label} | {cells} |")
    return "\n".join(lines)


def ablation(tables: dict[str, RunTable], target: str, trees: int) -> str:
    """extra-trees at 50 % training share with the log target and the linear base switched."""
    lines = [
        "| program | plain trees | + log target | + linear base (default) |",
        "|---|---|---|---|",
    ]
    for app, table in tables.items():
        train, test = _split(table.rows, 0.5, seed=11)
        cells = []
        for log_target, linear_base in ((False, False), (True, False), (True, True)):
            model = LearnedModel(trees=trees, log_target=log_target, linear_base=linear_base)
            cells.append(_error(model.fit(table.take(train), target), table.take(test)))
        lines.append(f"| {app} | " + " | ".join(f"{e:.1%}" for e in cells) + " |")
    return "\n".join(lines)


def reductions(tables: dict[str, RunTable], target: str, trees: int) -> str:
    lines = [
        "| program | reduction | features kept | collection cost | error (50 % train) |",
        "|---|---|---|---|---|",
    ]
    settings = (
        ("none", {}),
        ("time 5 %", {"reduce_time": 0.05}),
        ("time 1 %", {"reduce_time": 0.01}),
        ("time 5 %, importance 95 %", {"reduce_time": 0.05, "reduce_importance": 0.95}),
        ("time 5 %, importance 80 %", {"reduce_time": 0.05, "reduce_importance": 0.8}),
    )
    for app, table in tables.items():
        train, test = _split(table.rows, 0.5, seed=11)
        # the instrumentation's features only: the parameters cost nothing to know
        features = list(table.costs)
        for label, options in settings:
            model = LearnedModel(trees=trees, **options).fit(  # type: ignore[arg-type]
                table.take(train), target, features=features
            )
            cost = model.overhead_.get("after", 0.0)
            lines.append(
                f"| {app} | {label} | {len(model.features_)} of {len(features)} | "
                f"{cost:.2%} | {_error(model, table.take(test)):.1%} |"
            )
    return "\n".join(lines)


def repeatability(binaries: dict[str, tuple[Path, Path]], repeats: int) -> str:
    """How much the same run varies here: the same inputs (the largest) repeated, wall and CPU
    seconds of the instrumented build, (max - min) / median."""
    lines = ["| program | wall spread | CPU spread |", "|---|---|---|"]
    for app, (_, instrumented) in binaries.items():
        with tempfile.TemporaryDirectory(prefix="learn-bench-repeat-") as scratch:
            records = Path(scratch) / "records.jsonl"
            for _ in range(repeats):
                _run(instrumented, LARGE[app], 1, records)
            table = read_feature_records(records)
        cells = []
        for column in ("time", "cpu"):
            values = table.numeric[column]
            cells.append(f"{np.ptp(values) / np.median(values):.1%}")
        lines.append(f"| {app} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def transfer(
    sources: dict[str, RunTable], targets: dict[str, RunTable], target: str, trees: int
) -> str:
    lines = [
        "| program | -O0 runs | without source | with the -O2 runs |",
        "|---|---|---|---|",
    ]
    for app, runs in targets.items():
        held = np.arange(max(TARGET_RUNS), runs.rows)
        for count in TARGET_RUNS:
            few = runs.take(np.arange(count))
            alone = LearnedModel(trees=trees).fit(few, target)
            moved = LearnedModel(trees=trees).fit(few, target, source=sources[app])
            lines.append(
                f"| {app} | {count} | {_error(alone, runs.take(held)):.1%} | "
                f"{_error(moved, runs.take(held)):.1%} |"
            )
    return "\n".join(lines)


#: The largest inputs of each program's ranges, where the overhead shows most.
LARGE = {
    "nbody": {"n": 2500, "steps": 6, "algorithm": 0, "cutoff": 0.1, "seed": 1},
    "bfs": {"scale": 17, "edgefactor": 12, "roots": 11, "skew": 0.3, "seed": 1},
    "solver": {"n": 200, "tolerance": 1e-9, "rhs": 1, "seed": 1},
}


def overhead(binaries: dict[str, tuple[Path, Path]], repeats: int) -> str:
    """Median wall time of whole launches (mpirun included), original against instrumented,
    at the largest inputs, alternating."""
    lines = ["| program | original (s) | instrumented (s) | ratio |", "|---|---|---|---|"]
    for app, (original, instrumented) in binaries.items():
        plain, counted = [], []
        for _ in range(repeats):
            plain.append(_run(original, LARGE[app], 1, None))
            counted.append(_run(instrumented, LARGE[app], 1, Path(os.devnull)))
        a, b = statistics.median(plain), statistics.median(counted)
        lines.append(f"| {app} | {a:.3f} | {b:.3f} | {b / a:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="-O2 runs per program")
    parser.add_argument("--target-runs", type=int, default=90, help="-O0 runs per program")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--apps", default="nbody,bfs,solver")
    parser.add_argument("--quick", action="store_true", help="60 and 60 runs, 40 trees")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.target_runs, args.trees = 60, 60, 40
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        print("needs mpicc and mpirun", file=sys.stderr)
        return 1
    apps = args.apps.split(",")
    folder = Path(tempfile.mkdtemp(prefix="learn-bench-"))
    try:
        instrumented = folder / "instrumented"
        instrument_features([APPS / f"{a}.c" for a in apps], instrumented)
        binaries: dict[str, tuple[Path, Path]] = {}
        o2: dict[str, RunTable] = {}
        o0: dict[str, RunTable] = {}
        parameters: dict[str, list[str]] = {}
        for index, app in enumerate(apps):
            original, counted, slow = folder / app, folder / f"{app}.i", folder / f"{app}.O0"
            _build(APPS / f"{app}.c", original, "-O2")
            _build(instrumented / f"{app}.c", counted, "-O2")
            _build(instrumented / f"{app}.c", slow, "-O0")
            binaries[app] = (original, counted)
            o2[app] = _campaign(counted, app, args.runs, args.seed + index, folder)
            o0[app] = _campaign(slow, app, args.target_runs, args.seed + 100 + index, folder)
            parameters[app] = [*(k for k in DRAWS[app](np.random.default_rng(0)) if k != "seed"),
                               "p"]  # fmt: skip
            print(f"{app}: {o2[app].rows} + {o0[app].rows} runs, "
                  f"{len(o2[app].costs)} features", file=sys.stderr)  # fmt: skip
        command = "python -m benchmarks.learned " + " ".join(argv or sys.argv[1:])
        print(f"Reproduce: `{command.strip()}`\n")
        for target, what in (("time", "wall seconds"), ("cpu", "CPU seconds, slowest rank")):
            print(f"## Target {target} ({what})\n")
            print("Mean relative error on held-out -O2 runs:\n")
            print(accuracy(o2, parameters, target, args.trees) + "\n")
            print("extra-trees, what the log target and the linear base contribute:\n")
            print(ablation(o2, target, args.trees) + "\n")
            print("Reductions (instrumentation features only):\n")
            print(reductions(o2, target, args.trees) + "\n")
            print("Transfer from -O2 to -O0 (held-out -O0 runs):\n")
            print(transfer(o2, o0, target, args.trees) + "\n")
        print("Collection overhead (whole launches at the largest inputs, 1 rank, median of 7):\n")
        print(overhead(binaries, 7) + "\n")
        print("The same run repeated 7 times (largest inputs, 1 rank):\n")
        print(repeatability(binaries, 7))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
