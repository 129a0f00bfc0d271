"""The tuning database: kernels keyed by their code-graph embedding, and every evaluation.

An SQLite file (one per user or project, ``tuning.sqlite`` by default) with three tables:

``meta``
    ``format`` (``perfcast-tuning``) and ``version`` (an integer; a reader refuses a newer one).
``kernels``
    one row per tuned kernel: ``file``, ``function``, ``scope``, ``line``, and its embedding
    (float64 little-endian bytes) with its length; ``(file, function)`` is unique.
``evaluations``
    one row per measured configuration of a kernel: the search ``session`` and the position
    (``step``) in it, the configuration (JSON object, sorted keys), the ``objective`` name and
    ``value``, both measurements (``instructions``, ``seconds``), ``scope`` of the instruction
    count (``function`` or ``program``), ``origin`` (``warm`` for configurations taken from similar
    kernels, else the search strategy) and ``error`` (empty when the run succeeded).

Every write is one transaction: a failed search leaves what was stored before intact. The
embedding is stored with the kernel so that a later search can find the most similar tuned
kernels without compiling them again.
"""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.core.errors import InputError, WorkError
from perfcast.core.jsonin import parse_json

FORMAT = "perfcast-tuning"
VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kernels (
    id INTEGER PRIMARY KEY,
    file TEXT NOT NULL,
    function TEXT NOT NULL,
    scope TEXT NOT NULL,
    line INTEGER,
    embedding BLOB NOT NULL,
    embedding_size INTEGER NOT NULL,
    UNIQUE (file, function)
);
CREATE TABLE IF NOT EXISTS evaluations (
    id INTEGER PRIMARY KEY,
    kernel INTEGER NOT NULL REFERENCES kernels(id),
    session TEXT NOT NULL,
    step INTEGER NOT NULL,
    config TEXT NOT NULL,
    objective TEXT NOT NULL,
    value REAL,
    instructions INTEGER,
    seconds REAL,
    scope TEXT NOT NULL,
    origin TEXT NOT NULL,
    error TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS evaluations_kernel ON evaluations(kernel);
"""
_TABLES = {"meta", "kernels", "evaluations"}


@dataclass(frozen=True)
class StoredKernel:
    """A kernel of the database with its embedding."""

    id: int
    file: str
    function: str
    scope: str
    line: int | None
    embedding: np.ndarray


@dataclass(frozen=True)
class Evaluation:
    """One stored evaluation."""

    step: int
    config: dict[str, Any]
    objective: str
    value: float | None
    instructions: int | None
    seconds: float | None
    scope: str
    origin: str
    error: str


class TuningDatabase:
    """An open tuning database (use as a context manager, or call :meth:`close`).

    Parameters
    ----------
    path : str or Path
        The SQLite file; created with the schema when it does not exist.

    Raises
    ------
    InputError
        When the file is not a perfcast tuning database or has a newer version.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.is_dir() or not self.path.parent.is_dir():
            problem = "is a directory" if self.path.is_dir() else "its directory does not exist"
            raise InputError(
                f"cannot open the tuning database: {problem}", self.path, reason="bad-database"
            )
        try:
            self._db = sqlite3.connect(self.path)
            # Look before writing: the schema must not be added to another program's database.
            tables = {
                row[0]
                for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            found = (
                dict(self._db.execute("SELECT key, value FROM meta").fetchall())
                if "meta" in tables
                else {}
            )
            ours = tables <= _TABLES and not found  # created, then stopped before the meta
            if tables and found.get("format") != FORMAT and not ours:
                self._db.close()
                shown = (
                    f"format {found['format']!r}"
                    if "format" in found
                    else "tables " + ", ".join(sorted(tables))
                )
                raise InputError(
                    f"not a perfcast tuning database ({shown})", self.path, reason="bad-database"
                )
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as error:
            raise InputError(
                f"not a perfcast tuning database ({error})", self.path, reason="bad-database"
            ) from error
        if not found:
            with self._db:
                self._db.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [("format", FORMAT), ("version", str(VERSION))],
                )
        elif not found.get("version", "").isdigit():
            raise InputError(
                f"tuning database version {found.get('version')!r} is not a whole number",
                self.path,
                reason="bad-database",
            )
        elif int(found["version"]) > VERSION:
            raise InputError(
                f"tuning database version {found['version']} is newer than this perfcast "
                f"reads ({VERSION})",
                self.path,
                reason="newer-version",
            )

    def __enter__(self) -> TuningDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file."""
        self._db.close()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as error:  # locked, read-only, disk full
            raise WorkError(f"{self.path}: cannot write the tuning database: {error}") from None

    def add_kernel(
        self, file: str, function: str, scope: str, line: int | None, embedding: np.ndarray
    ) -> int:
        """Store (or update the embedding of) a kernel; returns its id."""
        blob = np.asarray(embedding, dtype="<f8").tobytes()
        with self._writing(), self._db:
            self._db.execute(
                "INSERT INTO kernels (file, function, scope, line, embedding, embedding_size) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (file, function) DO UPDATE SET "
                "scope = excluded.scope, line = excluded.line, embedding = excluded.embedding, "
                "embedding_size = excluded.embedding_size",
                (file, function, scope, line, blob, len(embedding)),
            )
        row = self._db.execute(
            "SELECT id FROM kernels WHERE file = ? AND function = ?", (file, function)
        ).fetchone()
        return int(row[0])

    def kernels(self) -> list[StoredKernel]:
        """Every kernel, in insertion order."""
        rows = self._db.execute(
            "SELECT id, file, function, scope, line, embedding FROM kernels ORDER BY id"
        ).fetchall()
        return [
            StoredKernel(r[0], r[1], r[2], r[3], r[4], self._embedding(r[0], r[5])) for r in rows
        ]

    def add_evaluations(self, kernel: int, session: str, evaluations: Sequence[Evaluation]) -> None:
        """Store the evaluations of one search session, in one transaction.

        Raises
        ------
        WorkError
            When SQLite cannot write (the file is locked by another search, read-only, ...).
        """
        with self._writing(), self._db:
            self._db.executemany(
                "INSERT INTO evaluations (kernel, session, step, config, objective, value, "
                "instructions, seconds, scope, origin, error) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        kernel,
                        session,
                        e.step,
                        json.dumps(e.config, sort_keys=True),
                        e.objective,
                        e.value,
                        e.instructions,
                        e.seconds,
                        e.scope,
                        e.origin,
                        e.error,
                    )
                    for e in evaluations
                ],
            )

    def evaluations(self, kernel: int) -> list[Evaluation]:
        """All evaluations of a kernel, oldest first."""
        rows = self._db.execute(
            "SELECT id, step, config, objective, value, instructions, seconds, scope, origin, "
            "error FROM evaluations WHERE kernel = ? ORDER BY id",
            (kernel,),
        ).fetchall()
        return [self._evaluation(row) for row in rows]

    def _evaluation(self, row: Sequence[Any]) -> Evaluation:
        """An evaluation from its stored row (the id first).

        Raises
        ------
        InputError
            Naming the database and the evaluation when a field holds a value of another type
            (SQLite keeps what a hand edit or another program wrote: text in ``value``, ...).
        """
        identifier, step, config, objective, value, instructions, seconds, *texts = row
        numbers = (value, instructions, seconds)
        if not (
            isinstance(step, int)
            and all(isinstance(t, str) for t in (objective, *texts))
            and isinstance(instructions, int | None)
            and all(n is None or (isinstance(n, int | float) and math.isfinite(n)) for n in numbers)
        ):
            raise InputError(
                f"evaluation {identifier}: a stored field has the wrong type or is not finite "
                f"(step {step!r}, objective {objective!r}, value {value!r}, instructions "
                f"{instructions!r}, seconds {seconds!r})",
                self.path,
                reason="bad-database",
            )
        return Evaluation(
            step, self._config(identifier, config), objective, value, instructions, seconds, *texts
        )

    def _config(self, evaluation: int, text: Any) -> dict[str, Any]:
        """The stored configuration of an evaluation (a JSON object of names to values).

        Raises
        ------
        InputError
            Naming the database and the evaluation when the text is not such an object (a
            damaged file, or one edited by hand).
        """
        try:
            config = parse_json(text) if isinstance(text, str | bytes) else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            config = None
        if not isinstance(config, dict):
            raise InputError(
                f"evaluation {evaluation}: the stored config is not a JSON object: {text!r:.80}",
                self.path,
                reason="bad-database",
            )
        return config

    def _embedding(self, kernel: int, blob: Any) -> np.ndarray:
        """A stored kernel's embedding (little-endian doubles).

        Raises
        ------
        InputError
            Naming the database and the kernel when the blob is not a whole number of finite
            doubles.
        """
        if not isinstance(blob, bytes) or len(blob) % 8:
            raise InputError(
                f"kernel {kernel}: the stored embedding is not a list of 8-byte numbers",
                self.path,
                reason="bad-database",
            )
        embedding = np.frombuffer(blob, dtype="<f8")
        if not np.isfinite(embedding).all():
            raise InputError(
                f"kernel {kernel}: the stored embedding holds a value that is not finite",
                self.path,
                reason="bad-database",
            )
        return embedding

    def best(self, kernel: int, objective: str) -> Evaluation | None:
        """The successful evaluation with the lowest value of ``objective``, if any."""
        done = [
            e
            for e in self.evaluations(kernel)
            if e.objective == objective and not e.error and e.value is not None
        ]
        return min(done, key=lambda e: e.value or 0.0) if done else None

    def nearest(
        self, embedding: np.ndarray, count: int, exclude: Mapping[str, str] | None = None
    ) -> list[tuple[StoredKernel, float]]:
        """The ``count`` stored kernels most similar to ``embedding`` (cosine), with similarity.

        ``exclude`` (``{"file": ..., "function": ...}``) leaves the kernel itself out.
        """
        rows = self._db.execute(
            "SELECT id, file, function, scope, line, embedding FROM kernels "
            "WHERE embedding_size = ? ORDER BY id",
            (len(embedding),),
        ).fetchall()
        if exclude is not None:
            rows = [
                r
                for r in rows
                if not (r[1] == exclude.get("file") and r[2] == exclude.get("function"))
            ]
        if not rows:
            return []
        embeddings = [self._embedding(r[0], r[5]) for r in rows]
        if any(len(e) != len(embedding) for e in embeddings):
            raise InputError(
                "a stored embedding's length differs from its recorded embedding_size",
                self.path,
                reason="bad-database",
            )
        matrix = np.array(embeddings).reshape(len(rows), len(embedding))
        norms = np.linalg.norm(matrix, axis=1) * max(float(np.linalg.norm(embedding)), 1e-300)
        scores = np.clip(matrix @ embedding / np.where(norms > 0, norms, 1.0), 0.0, 1.0)
        order = np.argsort(-scores, kind="stable")[:count]
        return [
            (
                StoredKernel(
                    rows[i][0],
                    rows[i][1],
                    rows[i][2],
                    rows[i][3],
                    rows[i][4],
                    embeddings[i],
                ),
                float(scores[i]),
            )
            for i in order
        ]
