"""The model store of online modeling: models and their evidence that outlive runs.

A store holds, per application, kernel and metric: the current model (model JSON), the count,
mean and M2 of every configuration measured, the back-off state, the counts of measurements
taken and skipped and of model updates, the history of batch judgements (PARS, lack-of-fit
p-value, hit or miss) and the performance exceptions. The next run of the application starts
from there.

Two back ends share one schema: SQLite (a file; the default, nothing to set up) and PostgreSQL
(a ``postgresql://`` URL; needs the ``psycopg`` package, the ``online`` extra). The schema is
versioned: :data:`MIGRATIONS` lists the statements that bring a store from one version to the
next, applied in order when a store is opened, under a lock so that concurrent openers apply
each once; a store of a newer version than this perfcast knows is refused.

Concurrent writers (several ranks or runs at once) never lose data: a write is one transaction
that *adds* what a writer learnt since its last write. Counts add; configuration statistics
merge with the pairwise update of Chan et al. inside the database, whatever other writers
added meanwhile; judgements and exceptions are appended. The model and the back-off state are
the latest writer's. A writer killed mid-write leaves the store as it was before the
transaction began.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfcast.core.errors import InputError, WorkError
from perfcast.core.jsonout import plain

#: Statements that bring the schema from version ``i`` to ``i + 1`` (index ``i``). ``{id}``
#: and ``{real}`` stand for the dialect's auto-numbered key and double-precision type.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE online_kernels (
            id {id},
            application TEXT NOT NULL,
            kernel TEXT NOT NULL,
            metric TEXT NOT NULL,
            parameters TEXT NOT NULL,
            model TEXT,
            state TEXT NOT NULL,
            measured BIGINT NOT NULL DEFAULT 0,
            skipped BIGINT NOT NULL DEFAULT 0,
            updates BIGINT NOT NULL DEFAULT 0,
            UNIQUE (application, kernel, metric))""",
        """CREATE TABLE online_configurations (
            kernel_id BIGINT NOT NULL REFERENCES online_kernels (id),
            configuration TEXT NOT NULL,
            count {real} NOT NULL,
            mean {real} NOT NULL,
            m2 {real} NOT NULL,
            PRIMARY KEY (kernel_id, configuration))""",
        """CREATE TABLE online_judgements (
            id {id},
            kernel_id BIGINT NOT NULL REFERENCES online_kernels (id),
            judgement TEXT NOT NULL)""",
        """CREATE TABLE online_exceptions (
            id {id},
            kernel_id BIGINT NOT NULL REFERENCES online_kernels (id),
            exception TEXT NOT NULL)""",
    ),
)
#: The schema version this perfcast writes.
SCHEMA_VERSION = len(MIGRATIONS)

_DIALECTS = {
    "sqlite": {"id": "INTEGER PRIMARY KEY AUTOINCREMENT", "real": "REAL"},
    "postgresql": {"id": "BIGSERIAL PRIMARY KEY", "real": "DOUBLE PRECISION"},
}

_UPSERT_KERNEL = """
INSERT INTO online_kernels (application, kernel, metric, parameters, model, state,
                            measured, skipped, updates)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (application, kernel, metric) DO UPDATE SET
    model = COALESCE(excluded.model, online_kernels.model),
    state = excluded.state,
    measured = online_kernels.measured + excluded.measured,
    skipped = online_kernels.skipped + excluded.skipped,
    updates = online_kernels.updates + excluded.updates
RETURNING id"""

# Chan et al.'s merge of (count, mean, M2) with the row as it is now, in one statement.
_MERGE_CONFIGURATION = """
INSERT INTO online_configurations (kernel_id, configuration, count, mean, m2)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (kernel_id, configuration) DO UPDATE SET
    count = online_configurations.count + excluded.count,
    mean = online_configurations.mean + (excluded.mean - online_configurations.mean)
        * excluded.count / (online_configurations.count + excluded.count),
    m2 = online_configurations.m2 + excluded.m2
        + (excluded.mean - online_configurations.mean)
        * (excluded.mean - online_configurations.mean)
        * online_configurations.count * excluded.count
        / (online_configurations.count + excluded.count)"""


@dataclass
class StoredKernel:
    """What the store keeps of one application, kernel and metric (plain data).

    Written, the counts and the statistics are what was learnt since the last write (they are
    added); read, they are the totals.

    Attributes
    ----------
    kernel, metric : str
    parameters : tuple of str
        The order of the values in each configuration.
    model : dict or None
        The model JSON (``Model.to_dict``), None while there is none.
    state : dict
        Back-off and PARS running state (replaced on write).
    configurations : list of (tuple of float, count, mean, M2)
    measured, skipped, updates : int
    judgements, exceptions : list of dict
        Appended on write; read, the latest ones (all, or as many as asked).
    """

    kernel: str
    metric: str
    parameters: tuple[str, ...]
    model: dict[str, Any] | None = None
    state: dict[str, Any] = field(default_factory=dict)
    configurations: list[tuple[tuple[float, ...], float, float, float]] = field(
        default_factory=list
    )
    measured: int = 0
    skipped: int = 0
    updates: int = 0
    judgements: list[dict[str, Any]] = field(default_factory=list)
    exceptions: list[dict[str, Any]] = field(default_factory=list)


class ModelStore:
    """A model store at ``url``: a SQLite file path (or ``sqlite:///path``) or a
    ``postgresql://`` URL; a SQLite file is created when missing, unless not ``create``.

    Raises
    ------
    InputError
        When the store cannot be opened, is not a perfcast store or is of a newer schema
        (reason ``bad-store``), or PostgreSQL is asked for without psycopg installed.
    """

    def __init__(self, url: str | Path, *, create: bool = True) -> None:
        self.url = str(url)
        if self.url.startswith(("postgresql://", "postgres://")):
            self.dialect = "postgresql"
            self._connection: Any = _connect_postgresql(self.url)
        else:
            self.dialect = "sqlite"
            path = self.url.removeprefix("sqlite://")
            if not create and not Path(path).is_file():
                raise InputError("there is no store here", self.url, reason="bad-store")
            self._connection = _connect_sqlite(path, self.url)
        self._migrate()

    # -- plumbing ---------------------------------------------------------------------------

    def _sql(self, statement: str) -> str:
        if self.dialect == "postgresql":
            statement = statement.replace("?", "%s")
        return statement.format(**_DIALECTS[self.dialect])

    @contextmanager
    def _transaction(self) -> Iterator[Callable[..., Any]]:
        """A transaction holding the write lock; yields ``execute(sql, params)``."""
        if self.dialect == "sqlite":
            connection = self._connection
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield lambda sql, params=(): connection.execute(self._sql(sql), params)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        else:
            with self._connection.transaction(), self._connection.cursor() as cursor:

                def execute(sql: str, params: Sequence[Any] = ()) -> Any:
                    return cursor.execute(self._sql(sql), params)

                yield execute

    def _retrying(self, work: Callable[[Callable[..., Any]], Any]) -> Any:
        """Run ``work(execute)`` in a transaction, again after a deadlock or a busy database."""
        for attempt in range(8):
            try:
                with self._transaction() as execute:
                    return work(execute)
            except Exception as error:  # noqa: BLE001 - only the transient kinds are retried
                if attempt == 7 or not _transient(error):
                    raise
                time.sleep(0.05 * 2**attempt)
        return None  # unreachable: the last attempt raises

    def _migrate(self) -> None:
        def migrate(execute: Callable[..., Any]) -> None:
            if self.dialect == "postgresql":
                execute("SELECT pg_advisory_xact_lock(7203915)")
            execute("CREATE TABLE IF NOT EXISTS perfcast_schema (version INTEGER NOT NULL)")
            row = execute("SELECT version FROM perfcast_schema").fetchone()
            version = 0 if row is None else int(row[0])
            if version > SCHEMA_VERSION:
                raise InputError(
                    f"the store has schema version {version}; this perfcast knows up to "
                    f"{SCHEMA_VERSION}",
                    self.url,
                    reason="bad-store",
                )
            for statements in MIGRATIONS[version:]:
                for statement in statements:
                    execute(statement)
            if row is None:
                execute("INSERT INTO perfcast_schema (version) VALUES (?)", (SCHEMA_VERSION,))
            elif version < SCHEMA_VERSION:
                execute("UPDATE perfcast_schema SET version = ?", (SCHEMA_VERSION,))

        try:
            self._retrying(migrate)
        except sqlite3.DatabaseError as error:
            raise InputError(
                f"not a perfcast store ({error})", self.url, reason="bad-store"
            ) from None

    # -- the interface ----------------------------------------------------------------------

    def write(self, application: str, kernels: Sequence[StoredKernel]) -> None:
        """Add what ``kernels`` learnt since their last write, in one transaction."""

        def work(execute: Callable[..., Any]) -> None:
            for item in sorted(kernels, key=lambda k: (k.kernel, k.metric)):
                row = execute(
                    _UPSERT_KERNEL,
                    (
                        application,
                        item.kernel,
                        item.metric,
                        json.dumps(list(item.parameters)),
                        None if item.model is None else _json(item.model),
                        _json(item.state),
                        item.measured,
                        item.skipped,
                        item.updates,
                    ),
                ).fetchone()
                kernel_id = row[0]
                for key, count, mean, m2 in sorted(item.configurations):
                    execute(_MERGE_CONFIGURATION, (kernel_id, json.dumps(key), count, mean, m2))
                for judgement in item.judgements:
                    execute(
                        "INSERT INTO online_judgements (kernel_id, judgement) VALUES (?, ?)",
                        (kernel_id, _json(judgement)),
                    )
                for exception in item.exceptions:
                    execute(
                        "INSERT INTO online_exceptions (kernel_id, exception) VALUES (?, ?)",
                        (kernel_id, _json(exception)),
                    )

        if kernels:
            self._retrying(work)

    def applications(self) -> list[str]:
        """The applications the store knows, sorted."""

        def work(execute: Callable[..., Any]) -> list[str]:
            rows = execute("SELECT DISTINCT application FROM online_kernels").fetchall()
            return sorted(r[0] for r in rows)

        result: list[str] = self._retrying(work)
        return result

    def read(self, application: str, *, history: int | None = None) -> list[StoredKernel]:
        """Everything stored of ``application``, kernels in name order; of the judgements and
        exceptions the latest ``history`` (all when None)."""

        def work(execute: Callable[..., Any]) -> list[StoredKernel]:
            rows = execute(
                "SELECT id, kernel, metric, parameters, model, state, measured, skipped, updates "
                "FROM online_kernels WHERE application = ? ORDER BY kernel, metric",
                (application,),
            ).fetchall()
            result = []
            for kernel_id, kernel, metric, parameters, model, state, *counts in rows:
                try:
                    item = StoredKernel(
                        kernel,
                        metric,
                        tuple(_decoded(parameters, list)),
                        None if model is None else _decoded(model, dict),
                        _decoded(state, dict),
                        measured=int(counts[0]),
                        skipped=int(counts[1]),
                        updates=int(counts[2]),
                    )
                    for key, count, mean, m2 in execute(
                        "SELECT configuration, count, mean, m2 FROM online_configurations "
                        "WHERE kernel_id = ?",
                        (kernel_id,),
                    ).fetchall():
                        item.configurations.append(
                            (tuple(_decoded(key, list)), float(count), float(mean), float(m2))
                        )
                    item.judgements = self._latest(execute, "judgement", kernel_id, history)
                    item.exceptions = self._latest(execute, "exception", kernel_id, history)
                except (TypeError, ValueError) as error:
                    raise InputError(
                        f"the store is damaged: kernel '{kernel}' ({metric}): {error}",
                        self.url,
                        reason="bad-store",
                        value=kernel,
                    ) from None
                result.append(item)
            return result

        try:
            stored: list[StoredKernel] = self._retrying(work)
        except sqlite3.DatabaseError as error:
            raise InputError(
                f"the store is damaged ({error})", self.url, reason="bad-store"
            ) from None
        return stored

    @staticmethod
    def _latest(
        execute: Callable[..., Any], what: str, kernel_id: int, limit: int | None
    ) -> list[dict[str, Any]]:
        table = f"online_{what}s"
        sql = f"SELECT {what} FROM {table} WHERE kernel_id = ? ORDER BY id DESC"  # noqa: S608
        params: tuple[Any, ...] = (kernel_id,)
        if limit is not None:
            sql += " LIMIT ?"
            params += (limit,)
        return [_decoded(r[0], dict) for r in reversed(execute(sql, params).fetchall())]

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()

    def __enter__(self) -> ModelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Seconds a process waits for other processes' locks on a SQLite store.
_OPEN_SECONDS = 60.0


def _connect_sqlite(path: str, url: str) -> sqlite3.Connection:
    if not path:
        raise InputError("the store names no file", url, reason="bad-store")
    # Switching a new store to WAL takes an exclusive lock, and SQLite answers "database is
    # locked" at once, without its busy handler, while another process opens the same new
    # store: the switch is tried again, as transactions are (:meth:`ModelStore._retrying`).
    deadline = time.monotonic() + _OPEN_SECONDS
    attempt = 0
    while True:
        connection = None
        try:
            connection = sqlite3.connect(path, timeout=_OPEN_SECONDS, isolation_level=None)
            connection.execute(f"PRAGMA busy_timeout = {int(_OPEN_SECONDS * 1000)}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            return connection
        except sqlite3.DatabaseError as error:
            if not _transient(error) or time.monotonic() > deadline:
                raise InputError(
                    f"cannot open the store ({error})", url, reason="bad-store"
                ) from None
            if connection is not None:
                connection.close()
            time.sleep(min(0.01 * 2**attempt, 1.0))
            attempt += 1


def _connect_postgresql(url: str) -> Any:
    try:
        import psycopg
    except ImportError:
        raise InputError(
            "a PostgreSQL store needs the psycopg package (pip install 'perfcast[online]')",
            reason="missing-dependency",
        ) from None
    try:
        return psycopg.connect(url, autocommit=True)
    except psycopg.Error as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error)
        raise WorkError(f"cannot connect to the store: {message}") from None


def _decoded(text: str, kind: type) -> Any:
    """The JSON ``text`` of a store column, which must decode to a ``kind``.

    Raises
    ------
    ValueError
        When it is no JSON or of another type (the store was damaged).
    """
    value = json.loads(text)
    if not isinstance(value, kind):
        raise ValueError(f"{text[:40]!r} where a JSON {kind.__name__} belongs")
    return value


def _json(value: Any) -> str:
    """Compact strict JSON (non-finite numbers as null)."""
    return json.dumps(plain(value), allow_nan=False, separators=(",", ":"))


def _transient(error: Exception) -> bool:
    """True for errors that a retry of the transaction may not meet again."""
    if isinstance(error, sqlite3.OperationalError):
        return "locked" in str(error) or "busy" in str(error)
    return type(error).__name__ in {"DeadlockDetected", "SerializationFailure", "UniqueViolation"}
