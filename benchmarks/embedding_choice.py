"""Embedding choice (issue 18): perfcast's hashed WL + dense embedding against GraKel's kernels.

Same matching protocol as ``benchmarks.meliora matching``: every kernel of
:mod:`benchmarks.kernel_corpus` and ``--variants`` variants of it are compiled and their
outermost loops turned into hCFGs; the original and the first ``--train`` variants form the
database, every loop of the other variants is matched to its nearest database loop (largest
kernel value, or cosine for perfcast's vectors) and counted correct when that loop belongs to
the same kernel. Compared:

``perfcast``           :func:`perfcast.static.embedding.embed` (what ``similar`` and ``tune`` use)
``grakel-wl``          GraKel's Weisfeiler-Lehman subtree kernel (2 rounds, normalised)
``grakel-wl-oa``       GraKel's WL optimal-assignment kernel (2 rounds, normalised)
``grakel-propagation`` GraKel's propagation kernel for continuous attributes (normalised)
``grakel-wl+dense``    the GraKel WL kernel mixed with the cosine of perfcast's dense part at
                       perfcast's own part weights (``PART_WEIGHTS``), i.e. GraKel in place of
                       the hashed WL features

GraKel's graphs get the same node information as perfcast's WL features: the discrete label of
:func:`perfcast.static.embedding._initial_label` (kind, dominant category, loop depth, mix shares
in quarters, reuse bins used) and, for the propagation kernel, the mix and reuse shares and loop
depth as continuous attributes; edges in both directions (GraKel's WL kernels take undirected
graphs; transition probabilities have no place in them). Cost: CPU seconds to fit the database
and to match all test loops, per query.

Usage (from the repository root; needs ``pip install grakel``)::

    .venv/bin/python -m benchmarks.embedding_choice [--variants 48 --train 32]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks.kernel_corpus import KERNELS, variant, write_program
from perfcast.static import embedding
from perfcast.static.hcfg import CodeGraph, build_graphs

Row = tuple[str, int, CodeGraph]


def loop_graphs(folder: Path, variants: int) -> list[Row]:
    """(kernel, variant seed (-1: original), graph) of every outermost loop."""
    rows = []
    for kernel in KERNELS:
        for seed in range(-1, variants):
            changed = kernel if seed < 0 else variant(kernel, seed)[0]
            path = write_program(changed, folder, f"{kernel.name}_{seed + 1}")
            _, *graphs = build_graphs(path, function=kernel.name)
            rows.extend((kernel.name, seed, graph) for graph in graphs)
    return rows


def _grakel_graph(graph: CodeGraph, attributes: bool):  # type: ignore[no-untyped-def]
    from grakel import Graph

    position = {node.id: i for i, node in enumerate(graph.nodes)}
    edges: dict[int, set[int]] = {i: set() for i in range(len(graph.nodes))}
    for edge in graph.edges:
        source, target = position[edge.source], position[edge.target]
        if source != target:
            edges[source].add(target)
            edges[target].add(source)
    if attributes:
        labels: dict[int, object] = {}
        for i, node in enumerate(graph.nodes):
            mix, reuse = np.asarray(node.mix, float), np.asarray(node.reuse, float)
            labels[i] = np.concatenate(
                [
                    mix / max(mix.sum(), 1.0),
                    reuse / max(reuse.sum(), 1.0),
                    [min(node.loop_depth, embedding.MAX_DEPTH) / embedding.MAX_DEPTH],
                ]
            )
    else:
        labels = {i: embedding._initial_label(graph, i) for i in range(len(graph.nodes))}
    return Graph({k: sorted(v) for k, v in edges.items()}, node_labels=labels)


def _grakel_kernel(name: str):  # type: ignore[no-untyped-def]
    from grakel.kernels import (
        PropagationAttr,
        VertexHistogram,
        WeisfeilerLehman,
        WeisfeilerLehmanOptimalAssignment,
    )

    if name == "grakel-wl-oa":
        return WeisfeilerLehmanOptimalAssignment(n_iter=2, normalize=True)
    if name == "grakel-propagation":
        return PropagationAttr(normalize=True, random_state=0)
    return WeisfeilerLehman(n_iter=2, base_graph_kernel=VertexHistogram, normalize=True)


def _dense(graph: CodeGraph) -> np.ndarray:
    wl = embedding.BUCKETS * (embedding.ITERATIONS + 1)
    part = embedding.embed(graph)[wl:]
    norm = np.linalg.norm(part)
    return part / norm if norm else part


def scores(method: str, database: list[Row], tests: list[Row]) -> tuple[np.ndarray, float, float]:
    """Similarity matrix (tests x database), CPU seconds to build the database, to match."""
    start = time.process_time()
    if method == "perfcast":
        matrix = np.array([embedding.embed(r[2]) for r in database])
        fitted = time.process_time()
        table = np.array([embedding.embed(r[2]) for r in tests]) @ matrix.T
        return table, fitted - start, time.process_time() - fitted
    attributes = method == "grakel-propagation"
    kernel = _grakel_kernel(method)  # imports GraKel before the clock starts
    start = time.process_time()
    kernel.fit([_grakel_graph(r[2], attributes) for r in database])
    fitted = time.process_time()
    table = np.asarray(kernel.transform([_grakel_graph(r[2], attributes) for r in tests]))
    if method == "grakel-wl+dense":
        wl_weight = len(embedding.PART_WEIGHTS[:-1]) * embedding.PART_WEIGHTS[0] ** 2
        dense_weight = embedding.PART_WEIGHTS[-1] ** 2
        dense = (
            np.array([_dense(r[2]) for r in tests]) @ np.array([_dense(r[2]) for r in database]).T
        )
        table = (wl_weight * table + dense_weight * dense) / (wl_weight + dense_weight)
    return np.nan_to_num(table), fitted - start, time.process_time() - fitted


def main() -> None:
    """Print accuracy and cost of every method on the same split."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=48)
    parser.add_argument("--train", type=int, default=32)
    arguments = parser.parse_args()
    print(f"command: .venv/bin/python -m benchmarks.embedding_choice {' '.join(sys.argv[1:])}\n")
    warnings.filterwarnings("ignore", module="grakel")  # format changes GraKel reports
    with tempfile.TemporaryDirectory(prefix="meliora-choice-") as name:
        rows = loop_graphs(Path(name), arguments.variants)
    database = [r for r in rows if r[1] < arguments.train]
    tests = [r for r in rows if r[1] >= arguments.train]
    print(f"{len(database)} database loops, {len(tests)} test loops, {len(KERNELS)} kernels\n")
    print("| embedding / kernel | top-1 per loop | CPU s to build database | CPU ms per query |")
    print("|---|---|---|---|")
    for method in (
        "perfcast",
        "grakel-wl",
        "grakel-wl+dense",
        "grakel-wl-oa",
        "grakel-propagation",
    ):
        table, build, match = scores(method, database, tests)
        best = table.argmax(axis=1)
        correct = sum(database[b][0] == t[0] for b, t in zip(best, tests, strict=True))
        print(
            f"| {method} | {correct / len(tests):.2%} ({correct}/{len(tests)}) | "
            f"{build:.2f} | {1000 * match / len(tests):.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
