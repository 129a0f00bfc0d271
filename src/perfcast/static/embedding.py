"""Vector embeddings of hCFGs: Weisfeiler-Lehman subtree features weighted by block frequency.

Meliora learns its embeddings with a convolutional network (PSCN). perfcast uses a kernel that
needs no training instead: the Weisfeiler-Lehman (WL) subtree features of the graph, hashed into
a fixed number of buckets, which respect node and edge attributes as follows.

1. Every node starts with a label made of its kind, dominant category, loop depth (capped at
   :data:`MAX_DEPTH`), its instruction-mix shares rounded to quarters and which reuse bins it
   uses. Shares, not counts, so an unrolled body looks like the rolled one.
2. Each of :data:`ITERATIONS` WL rounds relabels a node by its label, the sorted labels of its
   successors each paired with the edge's transition probability rounded to a tenth, and the
   sorted labels of its predecessors.
3. A label adds the node's weight to bucket ``hash(label) % BUCKETS`` of its round's block of
   the vector. The weight is half uniform (structure) and half the node's estimated execution
   frequency (the expected visits from the entry under the transition probabilities, normalised),
   so the hot inner loop counts most.
4. A dense part holds the frequency-weighted shares of the mix categories, reuse bins and
   the :data:`OPCODES`, and the share of frequency at each loop depth.

Each part is scaled to unit length and weighted (:data:`PART_WEIGHTS`) before the whole vector is
normalised. All entries are non-negative, so the cosine of two embeddings lies in [0, 1]; equal
graphs give exactly the same vector. Hashes use BLAKE2b, so embeddings are stable across runs
and machines and can be stored in a database.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final

import numpy as np

from perfcast.static.hcfg import CATEGORIES, REUSE_BINS, CodeGraph

ITERATIONS: Final = 2
BUCKETS: Final = 256
MAX_DEPTH: Final = 4
PART_WEIGHTS: Final = (0.2, 0.2, 0.2, 3.0)
"""Weights of the WL rounds 0..ITERATIONS and of the dense part.

Chosen by measured self-validation accuracy (``benchmarks/meliora.py matching``, RESULTS.md):
the frequency-weighted dense shares separate the kernels best (WL features alone match far
fewer variants, since unrolling, strip-mining and fission change the block structure), while a
small WL weight keeps control-flow structure in the vector at no cost in accuracy.
"""

OPCODES: Final = (
    "load",
    "store",
    "getelementptr",
    "fadd",
    "fsub",
    "fmul",
    "fdiv",
    "llvm.fmuladd.f64",
    "add",
    "mul",
    "sext",
    "icmp",
    "br",
    "phi",
    "select",
)
"""Opcodes whose frequency-weighted shares enter the dense part (the rest share one entry)."""

EMBEDDING_SIZE: Final = (
    (ITERATIONS + 1) * BUCKETS
    + len(CATEGORIES)
    + len(REUSE_BINS)
    + 1
    + (MAX_DEPTH + 1)
    + len(OPCODES)
    + 1
)
"""Length of every embedding vector."""


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def _shares(values: Sequence[int]) -> tuple[float, ...]:
    total = sum(values)
    return tuple(v / total for v in values) if total else tuple(0.0 for _ in values)


def _initial_label(graph: CodeGraph, index: int) -> str:
    node = graph.nodes[index]
    shares = "".join(str(round(share * 4)) for share in _shares(node.mix))
    reuse = "".join("1" if count else "0" for count in node.reuse)
    depth = min(node.loop_depth, MAX_DEPTH)
    return f"{node.kind}|{node.dominant}|{depth}|{shares}|{reuse}"


def block_frequencies(graph: CodeGraph) -> np.ndarray:
    """Expected visits of each node per entry into the graph (node 0), normalised to sum 1.

    Solves ``f = e_0 + P^T f`` for the transition matrix ``P``; a chain that never leaves
    (probability 1 cycles) is damped slightly so the system stays solvable.
    """
    size = len(graph.nodes)
    position = {node.id: i for i, node in enumerate(graph.nodes)}
    matrix = np.zeros((size, size))
    for edge in graph.edges:
        matrix[position[edge.target], position[edge.source]] += edge.probability * 0.999
    start = np.zeros(size)
    if size:
        start[0] = 1.0
    visits = np.linalg.solve(np.eye(size) - matrix, start)
    visits = np.clip(visits, 0.0, None)
    total = visits.sum()
    return visits / total if total > 0 else visits


def embed(graph: CodeGraph) -> np.ndarray:
    """The embedding vector of one hCFG (length :data:`EMBEDDING_SIZE`, unit norm).

    Parameters
    ----------
    graph : CodeGraph
        A function or loop graph.

    Returns
    -------
    numpy.ndarray
        Non-negative float64 vector of unit length (zero for a graph without nodes).
    """
    size = len(graph.nodes)
    position = {node.id: i for i, node in enumerate(graph.nodes)}
    successors: list[list[tuple[int, float]]] = [[] for _ in range(size)]
    predecessors: list[list[int]] = [[] for _ in range(size)]
    for edge in graph.edges:
        source, target = position[edge.source], position[edge.target]
        successors[source].append((target, edge.probability))
        predecessors[target].append(source)
    frequency = block_frequencies(graph)
    weights = 0.5 / max(size, 1) + 0.5 * frequency
    labels = [_initial_label(graph, i) for i in range(size)]
    parts = []
    for _ in range(ITERATIONS + 1):
        part = np.zeros(BUCKETS)
        for index, label in enumerate(labels):
            part[_hash(label) % BUCKETS] += weights[index]
        parts.append(part)
        labels = [
            "{}>{}<{}".format(
                labels[i],
                ",".join(sorted(f"{labels[t]}@{p:.1f}" for t, p in successors[i])),
                ",".join(sorted(labels[p] for p in predecessors[i])),
            )
            for i in range(size)
        ]
        labels = [format(_hash(label), "x") for label in labels]
    parts.append(_dense_part(graph, frequency))
    vector = np.concatenate(
        [w * _unit(part) for w, part in zip(PART_WEIGHTS, parts[:-1], strict=False)]
        + [PART_WEIGHTS[-1] * _unit(parts[-1])]
    )
    return _unit(vector)


def _dense_part(graph: CodeGraph, frequency: np.ndarray) -> np.ndarray:
    mix = np.zeros(len(CATEGORIES))
    reuse = np.zeros(len(REUSE_BINS) + 1)
    depth = np.zeros(MAX_DEPTH + 1)
    opcodes = np.zeros(len(OPCODES) + 1)
    for node, share in zip(graph.nodes, frequency, strict=True):
        mix += share * np.asarray(_shares(node.mix))
        reuse += share * np.asarray(_shares(node.reuse))
        depth[min(node.loop_depth, MAX_DEPTH)] += share
        total = sum(count for _, count in node.opcodes)
        for name, count in node.opcodes:
            at = OPCODES.index(name) if name in OPCODES else len(OPCODES)
            opcodes[at] += share * count / total
    return np.concatenate([mix, reuse, depth, opcodes])


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def similarity(first: np.ndarray, second: np.ndarray) -> float:
    """Cosine similarity of two embeddings, in [0, 1] (1 for equal graphs)."""
    value = float(np.dot(_unit(first), _unit(second)))
    return min(1.0, max(0.0, value))
