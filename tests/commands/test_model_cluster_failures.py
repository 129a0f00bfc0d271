"""``perfcast model --scheduler``: a server that is no Dask scheduler, and a scheduler that
dies while the kernels are being modeled (real ``dask scheduler`` and ``dask worker``
processes started here)."""

from __future__ import annotations

import contextlib
import os
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from perfcast import cli
from perfcast.core.errors import WorkError
from perfcast.model.distributed import DaskChunks

pytestmark = pytest.mark.slow
distributed = pytest.importorskip("distributed")


class _NotDask(socketserver.BaseRequestHandler):
    """Answers whatever arrives as a web server refusing it, then keeps the connection open
    (as a server that waits for more does)."""

    def handle(self) -> None:
        self.request.recv(4096)
        self.request.sendall(b"HTTP/1.0 400 Bad request\r\nContent-Length: 0\r\n\r\n")
        time.sleep(15)


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True


@pytest.fixture
def web_server() -> Iterator[str]:
    """The address of a loopback TCP server that is no Dask scheduler."""
    server = _Server(("127.0.0.1", 0), _NotDask)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def dask_processes(folder: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """A ``dask scheduler`` and a ``dask worker`` (one process, one thread) on loopback: the
    scheduler's address and process; both stopped on leaving."""
    address = f"tcp://127.0.0.1:{free_port()}"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    log = (folder / "dask.log").open("w")
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
        + ["--port", address.rsplit(":", 1)[1], "--no-dashboard"],
        stdout=log,
        stderr=log,
        env=environment,
    )
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", "1"]
        + ["--nthreads", "1", "--no-dashboard"],
        stdout=log,
        stderr=log,
        env=environment,
    )
    try:
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(1, timeout=60)
        yield address, scheduler
    finally:
        for process in (worker, scheduler):
            process.kill()
            process.wait(timeout=30)
        log.close()


def test_a_server_that_is_no_dask_scheduler_fails_with_one_line(tmp_path, web_server, capsys):
    # Before: distributed.Client waited for ever on the handshake (or, against a proxy that
    # answered at once, died in a MemoryError traceback reading 'HTTP/1.0' as a frame length).
    path = tmp_path / "runs.txt"
    path.write_text(
        "PARAMETER p\nPOINTS 2 4 8 16 32\nREGION k\nMETRIC time\n"
        + "".join(f"DATA {1 + 0.5 * p}\n" for p in (2, 4, 8, 16, 32))
    )
    started = time.monotonic()
    assert cli.main(["model", str(path), "--scheduler", web_server]) == 1
    assert time.monotonic() - started < 30
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(
        f"perfcast: failed: cannot reach the Dask scheduler at {web_server}"
    )
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err


def test_a_scheduler_that_dies_with_chunks_in_flight_is_a_work_error(tmp_path):
    # Whichever call meets the missing scheduler first (a gather, a scatter), the map ends in
    # a WorkError; the client gives up reconnecting after its timeout (3 s here).
    with dask_processes(tmp_path) as (address, scheduler):
        client = distributed.Client(address, timeout=3)
        try:
            results = DaskChunks(client).map(time.sleep, [0.0, 2.0, 2.0, 2.0])
            assert next(results) is None  # the second chunk is running now
            scheduler.kill()
            scheduler.wait(timeout=30)
            with pytest.raises(WorkError, match="the Dask cluster failed while modeling"):
                list(results)
        finally:
            client.close(timeout=5)


def long_table(path: Path, kernels: int) -> None:
    """A CSV long table of ``kernels`` noisy one-parameter kernels."""
    rng = np.random.default_rng(3)
    p = np.array([2.0, 4.0, 8.0, 16.0, 32.0, 64.0])
    values = rng.uniform(1, 5, (kernels, 1)) + rng.uniform(0.1, 2, (kernels, 1)) * p
    noisy = values[:, :, None] * (1 + rng.uniform(-0.05, 0.05, (kernels, len(p), 3)))
    with path.open("w") as out:
        out.write("kernel,metric,p,repetition,value\n")
        for k in range(kernels):
            for j, x in enumerate(p):
                for r in range(3):
                    out.write(f"k{k},time,{x:g},{r},{float(noisy[k, j, r])!r}\n")


def test_the_command_says_so_in_one_line_when_the_scheduler_dies(tmp_path):
    # Before: a traceback (FutureCancelledError, or an AttributeError inside Client.scatter)
    # after distributed's own logged tracebacks of its reconnection attempts.
    path, out = tmp_path / "runs.csv", tmp_path / "models.json"
    long_table(path, 20_000)
    out.write_text('{"earlier": true}')
    with dask_processes(tmp_path) as (address, scheduler):
        command = subprocess.Popen(
            [sys.executable, "-m", "perfcast.cli", "model", str(path), "--format", "json"]
            + ["--out", str(out), "--scheduler", address],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        with distributed.Client(address, timeout=30) as watcher:
            deadline = time.monotonic() + 120
            while not any(watcher.processing().values()) and time.monotonic() < deadline:
                assert command.poll() is None, command.communicate()
                time.sleep(0.05)
        scheduler.kill()
        stdout, stderr = command.communicate(timeout=120)
    assert command.returncode == 1, stderr
    assert stdout == ""
    assert stderr.startswith("perfcast: failed: the Dask cluster failed while modeling")
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert out.read_text() == '{"earlier": true}'
