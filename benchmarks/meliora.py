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
    Search saving on realistic spaces: each kernel's space (:func:`kernel_space`: compiler
    flags, unroll and interleave counts, and the code variants the kernel allows, 96-576
    configurations) is measured exhaustively once, instructions and callgrind's cycle estimate
    under a fixed simulated cache (:func:`measure_kernel`), and the table cached outside the
    repository (:func:`default_table_path`, or ``--table``). Then, for both objectives and each
    kernel left out of the database (the other kernels' tables are the database), the
    evaluations to get within 5 % of the exhaustive best: random order (expected,
    ``(S + 1) / (m + 1)`` for ``m`` good configurations among ``S``), perfcast's cold ``model``
    search (mean of :data:`SEEDS` seeds), the previous warm start (the ``--neighbours`` most
    similar kernels' bests, then random; expected) and the current one (the same bests ranked
    by the similarity-weighted transfer prior, then ``model`` with the prior), the saving
    factors, and the speedup of the first warm configuration over the default build. Last, one
    real ``tune --warm-start`` of the first kernel against a database of the others.

Usage (from the repository root)::

    .venv/bin/python -m benchmarks.meliora matching [--variants 48 --train 32]
    .venv/bin/python -m benchmarks.meliora search [--table FILE --neighbours 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.kernel_corpus import (
    KERNELS,
    Kernel,
    code_parameters,
    tunable_program,
    variant,
    working_size,
    write_program,
)
from perfcast.analyze.transfer import TransferPrior
from perfcast.analyze.tuning import WITHIN, TuningSpace, load_space, search, tune
from perfcast.io.tuning_db import TuningDatabase
from perfcast.measure.kernel_runs import CACHE_GEOMETRY, KernelRun, cycle_estimate
from perfcast.measure.valgrind import parse_profile
from perfcast.static import embedding
from perfcast.static.embedding import embed
from perfcast.static.hcfg import build_graphs


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


FLAG_SPACE = """\
[flags]
opt = ["-O1", "-O2", "-O3"]
vectorize = ["-fno-vectorize -fno-slp-vectorize", "-fvectorize -fslp-vectorize"]
march = ["-march=x86-64", "-march=x86-64-v3"]

[macros]
UNROLL = [1, 2, 4, 8]
{code}

[defines]
N = {size}

[measure]
objective = "instructions"
repetitions = 1
"""
"""The realistic space: flags and unroll factors for every kernel, code variants where allowed.

``-march=x86-64-v3`` (AVX2, FMA) stands for a native build: this host has AVX-512, which
valgrind cannot execute, so ``-march=native`` could not be measured under callgrind.
"""


def kernel_space(kernel: Kernel) -> str:
    """The TOML space of one kernel (:data:`FLAG_SPACE` plus its code-variant macros)."""
    code = "\n".join(
        f"{name} = [{', '.join(str(v) for v in values)}]"
        for name, values in code_parameters(kernel).items()
    )
    return FLAG_SPACE.format(code=code, size=working_size(kernel))


def measure_kernel(kernel: Kernel, folder: Path) -> dict[str, dict[str, float]]:
    """Every configuration of the kernel's space, measured in one callgrind run.

    The configurations sharing compiler flags are compiled as one translation unit that
    includes the program once per macro setting, its ``main`` and kernel renamed each time (a
    compiler start per flag setting instead of per configuration); one driver calls all the
    ``main`` functions in turn and runs once under callgrind with cache simulation. Returns,
    per configuration key, the kernel's inclusive instructions and cycle estimate; every
    configuration must print the original's checksum (to 1e-9: FMA contraction under
    ``x86-64-v3`` rounds differently).
    """
    work = folder / kernel.name
    work.mkdir(parents=True, exist_ok=True)
    source = work / f"{kernel.name}.c"
    source.write_text(tunable_program(kernel))
    space_file = work / "space.toml"
    space_file.write_text(kernel_space(kernel))
    space = load_space(space_file)
    configurations = space.all_configurations()
    groups: dict[tuple[str, ...], list[int]] = {}
    for index, config in enumerate(configurations):
        flags = tuple(word for name in space.flags for word in config[name].split())
        groups.setdefault(flags, []).append(index)
    objects = []
    for number, (flags, members) in enumerate(groups.items()):
        unit = work / f"unit{number}.c"
        lines = []
        for index in members:
            macros = {**space.defines, **{m: configurations[index][m] for m in space.macros}}
            lines += [f"#define {name} {value}" for name, value in macros.items()]
            lines += [
                f"#define main perfcast_main_{index}",
                f"#define {kernel.name} {kernel.name}_v{index}",
                f'#include "{source.name}"',
                "#undef main",
                f"#undef {kernel.name}",
            ]
            lines += [f"#undef {name}" for name in macros]
        unit.write_text("\n".join(lines) + "\n")
        target = work / f"unit{number}.o"
        subprocess.run(
            [space.compiler, "-c", *flags, str(unit), "-o", str(target)],
            check=True,
            capture_output=True,
        )
        objects.append(str(target))
    driver = work / "driver.c"
    calls = "".join(f"  perfcast_main_{i}();\n" for i in range(len(configurations)))
    declarations = "".join(f"int perfcast_main_{i}(void);\n" for i in range(len(configurations)))
    driver.write_text(f"{declarations}int main(void) {{\n{calls}  return 0;\n}}\n")
    binary = work / "driver"
    subprocess.run([space.compiler, str(driver), *objects, "-o", str(binary), "-lm"], check=True)
    profile_path = work / "callgrind.out"
    done = subprocess.run(
        ["valgrind", "-q", "--tool=callgrind", "--cache-sim=yes", *CACHE_GEOMETRY,
         f"--callgrind-out-file={profile_path}", str(binary)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    checksums = [float(line) for line in done.stdout.split()]
    if len(checksums) != len(configurations) or any(
        abs(c - checksums[0]) > 1e-9 * abs(checksums[0]) for c in checksums
    ):
        raise SystemExit(f"{kernel.name}: the configurations do not print the same checksum")
    profile = parse_profile(profile_path)
    table: dict[str, dict[str, float]] = {}
    for index, config in enumerate(configurations):
        name = f"{kernel.name}_v{index}"
        costs = [c for f, c in profile.inclusive.items() if f.name == name]
        if not costs:
            raise SystemExit(f"{kernel.name}: no profile of configuration {config}")
        named = dict(zip(profile.events, max(costs), strict=True))
        table[_key(config)] = {
            "instructions": float(named["Ir"]),
            "cycles": cycle_estimate(named),
        }
    return table


def default_table_path() -> Path:
    """``~/.cache/perfcast/meliora-table-<digest>.json``, the digest of programs and spaces.

    A change of a kernel, a space or the cache geometry gives a new file, never a stale table.
    """
    digest = hashlib.blake2b(digest_size=6)
    for kernel in KERNELS:
        digest.update((tunable_program(kernel) + kernel_space(kernel)).encode())
    digest.update(" ".join(CACHE_GEOMETRY).encode())
    return Path.home() / ".cache" / "perfcast" / f"meliora-table-{digest.hexdigest()}.json"


def measured_table(path: Path) -> dict[str, dict[str, dict[str, float]]]:
    """The measured table of every kernel, read from ``path`` or measured and written there."""
    if path.exists():
        return json.loads(path.read_text())
    tables = {}
    with tempfile.TemporaryDirectory(prefix="meliora-table-") as name:
        for kernel in KERNELS:
            tables[kernel.name] = measure_kernel(kernel, Path(name))
            print(f"measured {kernel.name}: {len(tables[kernel.name])} configurations", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(tables))
    return tables


def _key(config: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(config.items()))


class _Reached(Exception):
    """Raised by a replayed measurement once a configuration within 5 % is measured."""

    def __init__(self, steps: int) -> None:
        super().__init__(steps)
        self.steps = steps


def steps_to_good(
    space: TuningSpace,
    values: dict[str, float],
    *,
    strategy: str,
    seed: int = 0,
    first: list[dict[str, str]] | None = None,
    prior: TransferPrior | None = None,
) -> int:
    """Evaluations :func:`perfcast.analyze.tuning.search` needs to get within 5 % of the best.

    The search runs unchanged; its measurements are replayed from the table (the value is
    passed in the ``instructions`` field, whichever column of the table is the objective).
    """
    best = min(values.values())
    count = 0

    def replay(config: dict[str, str]) -> KernelRun:
        nonlocal count
        count += 1
        value = values[_key(config)]
        if value <= best * (1 + WITHIN):
            raise _Reached(count)
        return KernelRun(instructions=int(value), seconds=None)

    try:
        search(space, replay, budget=space.size, strategy=strategy, seed=seed,
               first=first or [], prior=prior)  # fmt: skip
    except _Reached as reached:
        return reached.steps
    raise AssertionError("an exhaustive replay always reaches the best")


def _warm_expected(warm: list[str], good: set[str], size: int) -> float:
    """Expected evaluations of the previous warm start: ``warm`` first, then random order."""
    for position, choice in enumerate(warm, start=1):
        if choice in good:
            return float(position)
    rest = size - len(warm)
    return len(warm) + (rest + 1) / (len(good) + 1)


def _function_embeddings(folder: Path) -> dict[str, np.ndarray]:
    vectors = {}
    for kernel in KERNELS:
        path = folder / f"{kernel.name}.c"
        path.write_text(tunable_program(kernel))
        graph = build_graphs(path, function=kernel.name, scope="function")[0]
        vectors[kernel.name] = embed(graph)
    return vectors


SEEDS = 10
"""Seeds of the cold model-based search (its first picks are random)."""


def search_saving(arguments: argparse.Namespace) -> None:
    """Leave-one-out warm starts against cold searches, on the measured table of every kernel."""
    path = arguments.table or default_table_path()
    print(f"measured table: {path}{' (cached)' if path.exists() else ''}")
    start = time.perf_counter()
    tables = measured_table(path)
    print(f"table ready after {time.perf_counter() - start:.0f} s wall\n")
    with tempfile.TemporaryDirectory(prefix="meliora-search-") as name:
        folder = Path(name)
        vectors = _function_embeddings(folder)
        spaces = {}
        for kernel in KERNELS:
            space_file = folder / f"{kernel.name}.toml"
            space_file.write_text(kernel_space(kernel))
            spaces[kernel.name] = load_space(space_file)
        for objective in ("cycles", "instructions"):
            _saving_table(objective, tables, spaces, vectors, arguments.neighbours)
        _end_to_end(folder, tables, spaces)


def _saving_table(
    objective: str,
    tables: dict[str, dict[str, dict[str, float]]],
    spaces: dict[str, TuningSpace],
    vectors: dict[str, np.ndarray],
    neighbours: int,
) -> None:
    print(f"## Search saving, objective: {objective} (leave one out, {neighbours} neighbours)\n")
    print(
        "| kernel | S | good | random | model (cold) | old warm | new warm | saving vs random "
        "| saving vs cold model | matched from | first warm config vs default |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    savings, against_model, old_savings = [], [], []
    for kernel in KERNELS:
        space = spaces[kernel.name]
        values = {k: v[objective] for k, v in tables[kernel.name].items()}
        best = min(values.values())
        good = {k for k, v in values.items() if v <= best * (1 + WITHIN)}
        size = len(values)
        random_expected = (size + 1) / (len(good) + 1)
        cold = statistics.mean(
            steps_to_good(space, values, strategy="model", seed=seed) for seed in range(SEEDS)
        )
        others = sorted(
            (k for k in KERNELS if k.name != kernel.name),
            key=lambda k: -float(vectors[k.name] @ vectors[kernel.name]),
        )[:neighbours]
        old: list[str] = []
        measured = []
        for other in others:
            theirs = {k: v[objective] for k, v in tables[other.name].items()}
            configs = {_key(c): c for c in spaces[other.name].all_configurations()}
            choice = _key(space.adapt(configs[min(theirs, key=theirs.__getitem__)]))
            if choice not in old:
                old.append(choice)
            similarity = float(vectors[other.name] @ vectors[kernel.name])
            measured.append((similarity, [(configs[k], v) for k, v in theirs.items()]))
        old_expected = _warm_expected(old, good, size)
        prior = TransferPrior.from_neighbours(measured, space.adapt)
        assert prior is not None
        bests = [space.adapt(min(m, key=lambda cv: cv[1])[0]) for _, m in measured]
        first = prior.ranked([c for i, c in enumerate(bests) if c not in bests[:i]])
        new = steps_to_good(space, values, strategy="model", first=first, prior=prior)
        savings.append(random_expected / new)
        against_model.append(cold / new)
        old_savings.append(random_expected / old_expected)
        speedup = values[_key(space.default())] / values[_key(first[0])]
        print(
            f"| {kernel.name} | {size} | {len(good)} | {random_expected:.1f} | {cold:.1f} | "
            f"{old_expected:.1f} | {new} | {savings[-1]:.1f}x | {against_model[-1]:.1f}x | "
            f"{others[0].name} | {speedup:.2f} |"
        )
    for label, figures in (
        ("new warm start vs random", savings),
        ("new warm start vs cold model-based search", against_model),
        ("old warm start (neighbours' bests, then random) vs random", old_savings),
    ):
        print(
            f"\nsaving, {label}: median {statistics.median(figures):.1f}x, "
            f"min {min(figures):.1f}x, max {max(figures):.1f}x"
        )
    print()


def _end_to_end(
    folder: Path, tables: dict[str, dict[str, dict[str, float]]], spaces: dict[str, TuningSpace]
) -> None:
    """``tune --warm-start`` for real on the first kernel, the others replayed into a database."""
    database = folder / "tuning.sqlite"
    for kernel in KERNELS[1:]:
        measured = {k: v["instructions"] for k, v in tables[kernel.name].items()}

        def replay(config: dict[str, str], m: dict[str, float] = measured) -> KernelRun:
            return KernelRun(instructions=int(m[_key(config)]), seconds=None)

        tune(folder / f"{kernel.name}.c", kernel.name, spaces[kernel.name],
             strategy="exhaustive", database=database, measure=replay)  # fmt: skip
    first = KERNELS[0]
    result = tune(folder / f"{first.name}.c", first.name, spaces[first.name], budget=6,
                  strategy="model", database=database, warm_start=True)  # fmt: skip
    best = result.best.value if result.best is not None else float("nan")
    exhaustive = min(v["instructions"] for v in tables[first.name].values())
    print(
        f"end to end: tune {first.name} --warm-start --strategy model --budget 6 measured "
        f"{len(result.evaluations)} configurations (compiled and run under callgrind), warm "
        f"from {[f for _, f, _ in result.warm_sources]}, best {best:g} instructions "
        f"(exhaustive best {exhaustive:g}, within 5 % of it after "
        f"{next((e.step for e in result.evaluations if (e.value or 0) <= exhaustive * 1.05), None)}"
        " evaluations)"
    )


def main() -> None:
    """Run the benchmark named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="which", required=True)
    one = sub.add_parser("matching")
    one.add_argument("--variants", type=int, default=48)
    one.add_argument("--train", type=int, default=32)
    two = sub.add_parser("search")
    two.add_argument("--table", type=Path, default=None, help="measured table (cache) file")
    two.add_argument("--neighbours", type=int, default=3)
    arguments = parser.parse_args()
    print(f"command: .venv/bin/python -m benchmarks.meliora {' '.join(sys.argv[1:])}\n")
    if arguments.which == "matching":
        matching(arguments)
    else:
        search_saving(arguments)


if __name__ == "__main__":
    main()
