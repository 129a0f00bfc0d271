"""Code-graph matching and tuning reuse (Meliora, issue 18): accuracy, search saving, cost.

``matching``
    Self-validation: every kernel of :mod:`benchmarks.kernel_corpus` and ``--variants``
    semantically equal variants of it are compiled and their outermost loops turned into hCFGs.
    The original and the first ``--train`` variants form the database; every loop of the other
    variants is matched (1-nearest neighbour, cosine of embeddings) and counted correct when the
    best match is a loop of the same kernel. Prints top-1 accuracy, a confusion table over the
    kernels (as the paper's Figure 23, per kernel rather than per loop: fission, fusion and
    unrolling change how many outermost loops a variant has, so loop numbers do not correspond)
    and the accuracy of two ablations (WL features only, dense features only). Then the cost:
    graph construction (clang + IR reading) and embedding per kernel, and matching one query
    against a tuning database of 10,000 kernels (``TuningDatabase.nearest``, SQLite read
    included; the stored embeddings are the variants' real embeddings, repeated to reach
    10,000 rows).
``search``
    Search saving: every kernel's full space is measured once (exhaustive, instructions under
    callgrind, deterministic). For each kernel left out of the database (leave one out), the
    database holds the other kernels' results; a warm start tries the best configurations of the
    3 most similar ones, then continues in random order. Reported per kernel: the expected
    evaluations to get within 5 % of the exhaustive best for a random search without warm start
    (``(S + 1) / (m + 1)`` for ``m`` good configurations among ``S``), the same with warm start
    (its expectation over the random continuation), the saving factor, and the speedup of the
    matched (first warm) configuration over the default build (first value of every parameter).

Usage (from the repository root)::

    .venv/bin/python -m benchmarks.meliora matching [--variants 48 --train 32]
    .venv/bin/python -m benchmarks.meliora search [--size 32]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.kernel_corpus import KERNELS, variant, write_program
from perfcast.analyze.tuning import WITHIN, load_space, tune
from perfcast.io.tuning_db import TuningDatabase
from perfcast.measure.kernel_runs import measure_configuration
from perfcast.static import embedding
from perfcast.static.embedding import embed
from perfcast.static.hcfg import build_graphs

SPACE = """\
[flags]
opt = ["-O1", "-O2", "-O3"]
vectorize = ["-fno-vectorize", "-fvectorize"]

[macros]
UNROLL = [1, 2, 4, 8]

[defines]
N = {size}

[measure]
objective = "instructions"
repetitions = 1
"""


def _graphs(folder: Path, variants: int) -> tuple[list, list, list[float], list[float]]:
    rows = []
    functions = []
    build_times, embed_times = [], []
    for kernel in KERNELS:
        for seed in range(-1, variants):
            changed = kernel if seed < 0 else variant(kernel, seed)[0]
            path = write_program(changed, folder, f"{kernel.name}_{seed + 1}")
            start = time.perf_counter()
            function, *graphs = build_graphs(path, function=kernel.name)
            build_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            for graph in graphs:
                rows.append((kernel.name, seed, embed(graph)))
            embed_times.append((time.perf_counter() - start) / max(len(graphs), 1))
            functions.append((kernel.name, seed, embed(function)))
    return rows, functions, build_times, embed_times


def _accuracy(rows: list, train: int, vector_of) -> tuple[float, dict, int]:
    database = [r for r in rows if r[1] < train]
    tests = [r for r in rows if r[1] >= train]
    matrix = np.array([vector_of(r) for r in database])
    confusion: dict[str, dict[str, int]] = {}
    correct = 0
    for row in tests:
        scores = matrix @ vector_of(row)
        best = database[int(np.argmax(scores))]
        correct += best[0] == row[0]
        confusion.setdefault(row[0], {}).setdefault(best[0], 0)
        confusion[row[0]][best[0]] += 1
    return correct / len(tests), confusion, len(tests)


def _ablation(rows: list, train: int, keep: slice) -> float:
    def vector(row) -> np.ndarray:
        part = row[2][keep]
        norm = np.linalg.norm(part)
        return part / norm if norm else part

    return _accuracy(rows, train, vector)[0]


def matching(arguments: argparse.Namespace) -> None:
    """Self-validation accuracy, confusion table, ablations and cost."""
    with tempfile.TemporaryDirectory(prefix="meliora-bench-") as name:
        rows, functions, build_times, embed_times = _graphs(Path(name), arguments.variants)
    accuracy, confusion, tested = _accuracy(rows, arguments.train, lambda r: r[2])
    wl = embedding.BUCKETS * (embedding.ITERATIONS + 1)
    print(f"## Self-validation: {len(KERNELS)} kernels, {arguments.variants} variants each,")
    print(f"database = original + {arguments.train} variants, {tested} loops tested\n")
    print(f"top-1 accuracy per loop (kernel matched): {accuracy:.2%}")
    whole = _accuracy(functions, arguments.train, lambda r: r[2])[0]
    print(f"top-1 accuracy per function graph (what keys the tuning database): {whole:.2%}")
    print(f"ablation, WL features only: {_ablation(rows, arguments.train, slice(0, wl)):.2%}")
    print(f"ablation, dense features only: {_ablation(rows, arguments.train, slice(wl, None)):.2%}")
    labels = sorted(confusion)
    print("\nconfusion (% of the tested kernel's loops; rows: tested kernel, columns: matched)")
    print("\n| tested \\ matched | " + " | ".join(labels) + " |")
    print("|---" * (len(labels) + 1) + "|")
    for label in labels:
        total = sum(confusion[label].values())
        cells = [
            f"{100 * confusion[label].get(other, 0) / total:.0f}"
            if confusion[label].get(other)
            else ""
            for other in labels
        ]
        print(f"| {label} ({total}) | " + " | ".join(cells) + " |")
    print("\nloops matched to another kernel:")
    for label in labels:
        for other, count in confusion[label].items():
            if other != label:
                print(f"  {label} -> {other}: {count}")
    print("\n## Cost")
    print(
        f"graph construction per program (clang + IR + hCFGs), median: "
        f"{statistics.median(build_times) * 1000:.0f} ms, max {max(build_times) * 1000:.0f} ms"
    )
    print(f"embedding per loop graph, median: {statistics.median(embed_times) * 1000:.2f} ms")
    vectors = [r[2] for r in rows]
    with tempfile.TemporaryDirectory(prefix="meliora-db-") as name:
        path = Path(name) / "tuning.sqlite"
        with TuningDatabase(path) as store:
            for index in range(10_000):
                store.add_kernel(f"k{index}.c", "f", "loop", None, vectors[index % len(vectors)])
        query = vectors[0]
        times = []
        for _ in range(5):
            start = time.perf_counter()
            with TuningDatabase(path) as store:
                found = store.nearest(query, 5)
            times.append(time.perf_counter() - start)
        matrix = np.array([vectors[i % len(vectors)] for i in range(10_000)])
        start = time.perf_counter()
        for _ in range(100):
            np.argsort(-(matrix @ query))[:5]
        in_memory = (time.perf_counter() - start) / 100
    assert found[0][1] > 0.999
    print(
        f"matching one query against 10,000 stored kernels (open, read, rank), median of 5: "
        f"{statistics.median(times) * 1000:.0f} ms; ranking in memory only: "
        f"{in_memory * 1000:.2f} ms"
    )


def search_saving(arguments: argparse.Namespace) -> None:
    """Leave-one-out warm starts against the exhaustive search of every kernel."""
    with tempfile.TemporaryDirectory(prefix="meliora-search-") as name:
        folder = Path(name)
        space_file = folder / "space.toml"
        space_file.write_text(SPACE.format(size=arguments.size))
        space = load_space(space_file)
        configurations = space.all_configurations()
        table: dict[str, dict[str, float]] = {}
        vectors: dict[str, np.ndarray] = {}
        start = time.perf_counter()
        for kernel in KERNELS:
            path = write_program(kernel, folder)
            graph = build_graphs(path, function=kernel.name, scope="function")[0]
            vectors[kernel.name] = embed(graph)
            values = {}
            for config in configurations:
                run = measure_configuration(
                    path, kernel.name, space.compile_flags(config), repetitions=1
                )
                if run.error or run.instructions is None:
                    sys.exit(f"{kernel.name} {config}: {run.error}")
                values[_key(config)] = float(run.instructions)
            table[kernel.name] = values
        measuring = time.perf_counter() - start
        print(
            f"## Search saving: {len(KERNELS)} kernels x {len(configurations)} configurations, "
            f"N = {arguments.size}, objective: kernel instructions (callgrind)\n"
        )
        print(
            "| kernel | S | good (within 5 %) | random: expected evals | warm: expected evals "
            "| saving | matched from | speedup of matched config over default |"
        )
        print("|---|---|---|---|---|---|---|---|")
        savings = []
        default = _key(space.default())
        for kernel in KERNELS:
            values = table[kernel.name]
            best = min(values.values())
            good = {k for k, v in values.items() if v <= best * (1 + WITHIN)}
            size = len(values)
            random_expected = (size + 1) / (len(good) + 1)
            others = sorted(
                (k for k in KERNELS if k.name != kernel.name),
                key=lambda k: -float(vectors[k.name] @ vectors[kernel.name]),
            )[:3]
            warm: list[str] = []
            for other in others:
                choice = min(table[other.name], key=table[other.name].get)
                if choice not in warm:
                    warm.append(choice)
            warm_expected = _warm_expected(warm, good, size)
            saving = random_expected / warm_expected
            savings.append(saving)
            matched = warm[0]
            speedup = values[default] / values[matched]
            print(
                f"| {kernel.name} | {size} | {len(good)} | {random_expected:.1f} | "
                f"{warm_expected:.1f} | {saving:.1f}x | {others[0].name} | {speedup:.2f} |"
            )
        print(
            f"\nsaving factor: median {statistics.median(savings):.1f}x, "
            f"min {min(savings):.1f}x, max {max(savings):.1f}x; "
            f"measuring all {len(KERNELS) * len(configurations)} configurations took "
            f"{measuring:.0f} s"
        )
        database = folder / "tuning.sqlite"
        for kernel in KERNELS[1:]:
            path = folder / f"{kernel.name}.c"
            measured = table[kernel.name]
            tune(path, kernel.name, space, strategy="exhaustive", database=database,
                 measure=lambda config, m=measured: _replay(m, config))  # fmt: skip
        first = KERNELS[0]
        result = tune(folder / f"{first.name}.c", first.name, space, budget=4,
                      database=database, warm_start=True)  # fmt: skip
        best = result.best.value if result.best is not None else float("nan")
        print(
            f"\nend to end: tune {first.name} with a warm start and budget 4 measured "
            f"{len(result.evaluations)} configurations, warm from "
            f"{[f for _, f, _ in result.warm_sources]}, best {best:g} instructions "
            f"(exhaustive best {min(table[first.name].values()):g}, within 5 % after "
            f"{result.steps_to_within} evaluations)"
        )


def _key(config: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(config.items()))


def _replay(values: dict[str, float], config: dict[str, str]):
    from perfcast.measure.kernel_runs import KernelRun

    return KernelRun(instructions=int(values[_key(config)]), seconds=None)


def _warm_expected(warm: list[str], good: set[str], size: int) -> float:
    for position, choice in enumerate(warm, start=1):
        if choice in good:
            return float(position)
    rest = size - len(warm)
    return len(warm) + (rest + 1) / (len(good) + 1)


def main() -> None:
    """Run the benchmark named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="which", required=True)
    one = sub.add_parser("matching")
    one.add_argument("--variants", type=int, default=48)
    one.add_argument("--train", type=int, default=32)
    two = sub.add_parser("search")
    two.add_argument("--size", type=int, default=32)
    arguments = parser.parse_args()
    print(f"command: .venv/bin/python -m benchmarks.meliora {' '.join(sys.argv[1:])}\n")
    if arguments.which == "matching":
        matching(arguments)
    else:
        search_saving(arguments)


if __name__ == "__main__":
    main()
