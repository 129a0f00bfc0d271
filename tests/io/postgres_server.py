"""A real PostgreSQL server for tests: a fresh cluster (initdb) in a temporary directory,
listening on a free loopback port, stopped and removed afterwards.

The server binaries come from Debian's ``postgresql`` package (``scripts/setup`` installs it).
PostgreSQL refuses to run as root, so under root the cluster belongs to the ``postgres``
account the package creates.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def server_binaries() -> Path | None:
    """The directory of ``initdb`` and ``pg_ctl``, None when PostgreSQL is not installed."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server; yields its ``postgresql://`` URL (database ``postgres``, no password)."""
    binaries = server_binaries()
    if binaries is None:
        raise RuntimeError("PostgreSQL is not installed (scripts/setup installs postgresql)")
    root = Path(tempfile.mkdtemp(prefix="perfcast-pg-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    prefix: list[str] = []
    user = pwd.getpwuid(os.geteuid()).pw_name
    if os.geteuid() == 0:
        user = "postgres"
        account = pwd.getpwnam(user)
        for path in (root, sockets):
            os.chown(path, account.pw_uid, account.pw_gid)
        prefix = ["runuser", "-u", user, "--"]
    port = _free_port()
    run = dict(check=True, capture_output=True, text=True, timeout=120)
    subprocess.run(
        [*prefix, str(binaries / "initdb"), "-D", str(data), "-U", user, "-A", "trust",
         "--no-sync"],
        **run,
    )  # fmt: skip
    options = f"-h 127.0.0.1 -p {port} -k {sockets} -c fsync=off"
    subprocess.run(
        [*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-w",
         "-l", str(root / "log"), "start"],
        **run,
    )  # fmt: skip
    try:
        yield f"postgresql://{user}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(root, ignore_errors=True)
