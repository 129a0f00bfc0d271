"""Kernel matching (Meliora): rank code graphs of a corpus by similarity to a query graph.

A query names a C file and optionally a function and the line of one of its outermost loops
(``file.c``, ``file.c:func``, ``file.c:func:line``). It selects one hCFG: the loop's graph, or
the function's graph. Candidates are the graphs of the same scope (loops with loops, functions
with functions) of every corpus file; ``main`` is left out of the candidates unless the query is
``main`` itself, since in a kernel file it is only the driver. Similarity is the cosine of the
embeddings (:mod:`perfcast.static.embedding`), in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.core.errors import InputError
from perfcast.static.embedding import embed
from perfcast.static.hcfg import CodeGraph, build_graphs


@dataclass(frozen=True)
class Query:
    """A parsed query: file, function (or None) and loop line (or None)."""

    file: str
    function: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class Match:
    """One ranked candidate."""

    file: str
    function: str
    line: int | None
    scope: str
    similarity: float

    def to_dict(self) -> dict[str, Any]:
        """``{"file", "function", "line", "scope", "similarity"}``."""
        return {
            "file": self.file,
            "function": self.function,
            "line": self.line,
            "scope": self.scope,
            "similarity": self.similarity,
        }


@dataclass(frozen=True)
class Matches:
    """The query's graph and the candidates ranked by similarity, most similar first."""

    query: CodeGraph
    matches: tuple[Match, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{"query": {...}, "matches": [...], "notes": [...]}``."""
        return {
            "query": {
                "file": self.query.file,
                "function": self.query.function,
                "line": self.query.line,
                "scope": self.query.scope,
            },
            "matches": [match.to_dict() for match in self.matches],
            "notes": list(self.notes),
        }


def parse_query(text: str) -> Query:
    """Split ``file.c[:function[:line]]``; a file name holding ``:`` is taken whole if it exists."""
    if Path(text).exists():
        return Query(text)
    parts = text.split(":")
    if len(parts) >= 3 and parts[-1].strip().isdigit():
        return Query(":".join(parts[:-2]), parts[-2] or None, int(parts[-1]))
    if len(parts) >= 3 and Path(":".join(parts[:-2])).exists():
        raise InputError(
            f"the loop's line must be a whole number, not '{parts[-1]}'",
            ":".join(parts[:-2]),
            reason="bad-query",
            value=text,
        )
    if len(parts) >= 2:
        return Query(":".join(parts[:-1]), parts[-1] or None)
    return Query(text)


def query_graph(query: Query, flags: Sequence[str] = ()) -> CodeGraph:
    """The one graph a query names.

    Without a function, the file must define exactly one function besides ``main``.
    """
    if query.line is not None:
        return build_graphs(query.file, function=query.function, loop=query.line, flags=flags)[0]
    graphs = build_graphs(query.file, function=query.function, scope="function", flags=flags)
    if query.function is None:
        graphs = [g for g in graphs if g.function != "main"] or graphs
        if not graphs:
            raise InputError("defines no function to match", query.file, reason="no-function")
        if len(graphs) != 1:
            names = ", ".join(g.function for g in graphs)
            raise InputError(
                f"name the function to match (defined: {names})",
                query.file,
                reason="ambiguous-function",
            )
    return graphs[0]


def rank(
    query: CodeGraph,
    candidates: Sequence[CodeGraph],
    top: int = 5,
    vectors: np.ndarray | None = None,
) -> tuple[Match, ...]:
    """The ``top`` candidates most similar to ``query``, most similar first.

    Parameters
    ----------
    query : CodeGraph
        The graph to match.
    candidates : sequence of CodeGraph
        The graphs to rank.
    top : int
        How many to return (at least 1).
    vectors : numpy.ndarray, optional
        The candidates' embeddings, one row each, when already computed.

    Returns
    -------
    tuple of Match
    """
    if top < 1:
        raise ValueError(f"top: must be at least 1, not {top}")
    if not candidates:
        return ()
    matrix = vectors if vectors is not None else np.array([embed(g) for g in candidates])
    scores = np.clip(matrix @ embed(query), 0.0, 1.0)
    order = np.argsort(-scores, kind="stable")[:top]
    return tuple(
        Match(
            candidates[i].file,
            candidates[i].function,
            candidates[i].line,
            candidates[i].scope,
            float(scores[i]),
        )
        for i in order
    )


def similar(
    query: str,
    corpus: Sequence[str | Path],
    *,
    top: int = 5,
    flags: Sequence[str] = (),
) -> Matches:
    """Rank the loops (or functions) of corpus files by similarity to the query's graph.

    Parameters
    ----------
    query : str
        ``file.c``, ``file.c:function`` or ``file.c:function:line``.
    corpus : sequence of str or Path
        C files to search.
    top : int
        How many matches to return.
    flags : sequence of str
        Further clang flags for every file.

    Returns
    -------
    Matches
    """
    parsed = parse_query(query)
    graph = query_graph(parsed, flags)
    candidates: list[CodeGraph] = []
    for source in corpus:
        for candidate in build_graphs(source, flags=flags, scope=graph.scope):
            if candidate.function == "main" and graph.function != "main":
                continue
            candidates.append(candidate)
    matches = rank(graph, candidates, top)
    return Matches(graph, matches, match_notes(matches))


WEAK_MATCH = 0.8
"""Below this similarity a match is reported as weak: its tuning may not carry over."""


def match_notes(matches: Sequence[Match]) -> tuple[str, ...]:
    """Warnings about a ranking: no candidate, or only weak ones."""
    if not matches:
        return ("no candidate of the same scope in the corpus",)
    if matches[0].similarity < WEAK_MATCH:
        return (
            f"the closest match has similarity {matches[0].similarity:.2f} (below "
            f"{WEAK_MATCH}): no corpus kernel is much like the query, and what was learned "
            "about the match may not carry over",
        )
    return ()
