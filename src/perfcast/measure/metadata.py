"""Machine and software facts recorded with every campaign session.

Each probe is best effort: a tool that is missing or fails leaves its entry ``None``.
"""

from __future__ import annotations

import datetime
import os
import platform
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from perfcast.core.version import __version__

PROBE_TIMEOUT_SECONDS = 10


def _first_line(argv: list[str], cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    return lines[0] if lines else None


def cpu_model() -> str | None:
    """The CPU model name from ``/proc/cpuinfo`` (Linux), else what :mod:`platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model"):
                return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def git_revision(directory: Path) -> dict[str, Any] | None:
    """Commit and dirtiness of the git work tree containing ``directory``, if any."""
    commit = _first_line(["git", "-C", str(directory), "rev-parse", "HEAD"])
    if commit is None:
        return None
    try:
        status = subprocess.run(
            ["git", "-C", str(directory), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        status = ""
    return {"commit": commit, "dirty": bool(status.strip())}


def collect_metadata(program_dir: Path, use_valgrind: bool = False) -> dict[str, Any]:
    """Facts about this machine and the software a campaign runs with.

    Parameters
    ----------
    program_dir : Path
        Directory of the measured program, for its git revision.
    use_valgrind : bool
        Whether to record the valgrind version too.

    Returns
    -------
    dict
        ``date`` (UTC, ISO 8601), ``hostname``, ``os``, ``cpu_model``, ``cores``, ``python``,
        ``perfcast``, ``compilers`` (first line of ``mpicc --version`` and ``cc --version``),
        ``mpi`` (first line of ``mpirun --version``), ``git`` (commit and dirty flag of the
        program's repository), ``user_is_root`` and, when used, ``valgrind``.
    """
    metadata: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "hostname": socket.gethostname(),
        "os": platform.platform(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "perfcast": __version__,
        "compilers": {
            "mpicc": _first_line(["mpicc", "--version"]),
            "cc": _first_line(["cc", "--version"]),
        },
        "mpi": _first_line(["mpirun", "--version"]),
        "git": git_revision(program_dir),
        "user_is_root": hasattr(os, "geteuid") and os.geteuid() == 0,
    }
    if use_valgrind:
        metadata["valgrind"] = _first_line(["valgrind", "--version"])
    return metadata
