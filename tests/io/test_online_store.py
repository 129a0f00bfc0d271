"""The online model store on SQLite and a real PostgreSQL server: exact merging of statistics,
concurrent writers, a writer killed mid-write, schema versions, resuming a modeler."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from perfcast.core.errors import InputError
from perfcast.io.online_store import SCHEMA_VERSION, ModelStore, StoredKernel
from perfcast.model.online import Measurement, OnlineModeler, state_of
from tests.io.postgres_server import postgres_server, server_binaries

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    if server_binaries() is None:
        pytest.fail("PostgreSQL is not installed: scripts/setup installs the postgresql package")
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    url: str = request.getfixturevalue("postgres_url")
    # a fresh schema per test: drop what an earlier test left
    with ModelStore(url) as store, store._transaction() as execute:
        for table in ("online_exceptions", "online_judgements", "online_configurations",
                      "online_kernels", "perfcast_schema"):  # fmt: skip
            execute(f"DROP TABLE IF EXISTS {table}")
    return url


def _item(values: np.ndarray, key: tuple[float, ...] = (4.0,)) -> StoredKernel:
    mean = float(values.mean())
    m2 = float(((values - mean) ** 2).sum())
    return StoredKernel(
        "solve", "time", ("n",), None, {"hit_count": 1},
        [(key, float(len(values)), mean, m2)], measured=len(values),
        judgements=[{"number": 1}],
    )  # fmt: skip


def test_writes_merge_statistics_exactly(store_url: str) -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(5.0, 0.3, 300)
    with ModelStore(store_url) as store:
        for chunk in np.array_split(values, 9):
            store.write("app", [_item(chunk)])
        (item,) = store.read("app")
    (key, count, mean, m2) = item.configurations[0]
    assert key == (4.0,) and count == 300 and item.measured == 300
    assert mean == pytest.approx(values.mean(), rel=1e-12)
    assert m2 == pytest.approx(((values - values.mean()) ** 2).sum(), rel=1e-9)
    assert len(item.judgements) == 9 and item.state == {"hit_count": 1}


def test_a_modeler_resumes_where_the_store_left_it(store_url: str) -> None:
    rng = np.random.default_rng(1)
    grid = [(n, p) for n in (8, 16, 32, 64, 128) for p in (1, 2, 4, 8, 16)]

    def run(seed: int) -> list[Measurement]:
        pick = np.random.default_rng(seed).integers(len(grid), size=1500)
        noise = 1 + 0.02 * rng.standard_normal(len(pick))
        return [
            Measurement("k", "time", {"n": n, "p": p}, n / p * noise[i], i)
            for i, (n, p) in enumerate(grid[j] for j in pick)
        ]

    first = OnlineModeler(batch=100, seed=0).partial_fit(run(1)).finish()
    with ModelStore(store_url) as store:
        store.write("app", first.drain())
        stored = store.read("app", history=0)
    state = state_of(stored[0])
    before = first.states_[("k", "time")]
    assert state.model == before.model and state.hit_count == before.hit_count
    assert before.fitted_judged > 0  # the usual outside share carries over too
    assert (state.fitted_judged, state.fitted_outside) == (
        before.fitted_judged, before.fitted_outside,
    )  # fmt: skip
    assert state.table.rows.keys() == before.table.rows.keys()
    for key, row in before.table.rows.items():
        assert np.allclose(state.table.rows[key], row, rtol=1e-12)
    assert (state.measured, state.skipped, state.batches) == (
        before.measured, before.skipped, before.batches,
    )  # fmt: skip
    owed = state.skip_left  # the back-off delay carries over into the next run
    second = OnlineModeler(batch=100, seed=1)
    second.resume(state)
    second.partial_fit(run(2))
    after = second.states_[("k", "time")]
    assert after.measured + after.skipped == 3000
    assert after.skipped - before.skipped >= min(owed, 1500)
    state.skip_left = 0
    third = OnlineModeler(batch=100, seed=1)
    third.resume(state)
    third.partial_fit(run(3))
    assert state.judgements[0].hit is True  # judged at once: the model came from the store


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    ModelStore(path).close()
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE perfcast_schema SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(InputError, match="schema version"):
        ModelStore(path)
    (tmp_path / "junk.db").write_text("not a database at all " * 100)
    with pytest.raises(InputError) as caught:
        ModelStore(tmp_path / "junk.db")
    assert caught.value.reason == "bad-store"


WRITER = textwrap.dedent(
    """
    import sys, numpy as np
    from perfcast.io.online_store import ModelStore, StoredKernel
    url, seed, batches = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = np.random.default_rng(seed)
    store = ModelStore(url)
    print("ready", flush=True)
    for batch in range(batches):
        items = []
        for key in range(4):
            values = rng.normal(10 + key, 1, 16)
            mean = float(values.mean())
            items.append(StoredKernel(
                f"k{key}", "time", ("n",), None, {"writer": seed},
                [((float(key),), 16.0, mean, float(((values - mean) ** 2).sum()))],
                measured=16, judgements=[{"writer": seed, "batch": batch}]))
        store.write("app", items)
    store.close()
    """
)


def _writer(url: str, seed: int, batches: int) -> subprocess.Popen[str]:
    environment = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, url, str(seed), str(batches)],
        env=environment,
        stdout=subprocess.PIPE,
        text=True,
    )


def _check_consistent(store: ModelStore) -> int:
    """Every kernel's configuration counts add up to its measured count and its judgements:
    no write was half applied. Returns the batches stored."""
    items = store.read("app")
    batches = {len(item.judgements) for item in items}
    assert len(batches) == 1  # each write covers all four kernels or none
    for item in items:
        (_, count, _, m2) = item.configurations[0]
        assert count == item.measured == 16 * len(item.judgements)
        assert m2 > 0
    return batches.pop()


def test_four_concurrent_writers_lose_nothing(store_url: str) -> None:
    writers = [_writer(store_url, seed, 25) for seed in range(4)]
    for writer in writers:
        assert writer.wait(timeout=300) == 0
    with ModelStore(store_url) as store:
        assert _check_consistent(store) == 100
        counts = {item.kernel: item.configurations[0][2] for item in store.read("app")}
    # the merged means equal those of the writers' values, recomputed here
    for key in range(4):
        expected = []
        for seed in range(4):
            rng = np.random.default_rng(seed)
            for _ in range(25):
                for k in range(4):
                    values = rng.normal(10 + k, 1, 16)
                    if k == key:
                        expected.extend(values)
        assert counts[f"k{key}"] == pytest.approx(np.mean(expected), rel=1e-12)


def test_a_writer_killed_mid_write_leaves_the_store_consistent(store_url: str) -> None:
    writer = _writer(store_url, 7, 100000)
    assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=60)
    if store_url.endswith(".db"):
        with sqlite3.connect(store_url) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with ModelStore(store_url) as store:
        stored = _check_consistent(store)
        assert stored > 0  # the writes before the kill are kept
        store.write("app", [_item(np.array([1.0, 2.0]))])  # and the store still takes writes


def test_processes_opening_a_new_sqlite_store_at_once_all_get_in(tmp_path: Path) -> None:
    # Switching a new store to WAL answered "database is locked" at once to some of several
    # processes opening it together (2 of 80 here before the switch was retried).
    for trial in range(4):
        path = tmp_path / f"store{trial}.db"
        start = time.time() + 1.0
        opener = (
            "import time\n"
            "from perfcast.io.online_store import ModelStore\n"
            f"while time.time() < {start}:\n"
            "    pass\n"
            f"ModelStore({str(path)!r}).close()\n"
        )
        openers = [
            subprocess.Popen(
                [sys.executable, "-c", opener],
                env={**os.environ, "PYTHONPATH": SRC},
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(8)
        ]
        results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in openers]
        assert [code for code, _ in results] == [0] * 8, [e for c, e in results if c]
