"""The spool directory between instrumented programs and ``perfcast online serve``.

A program hands over each full batch of a kernel's measurements as one file, written under a
temporary name and renamed into place (the collector never reads half a file; the program
never waits for the collector): the C library as a binary batch file (``*.pcob``,
:mod:`perfcast.io.online_batch`), the Python regions as JSON Lines (``*.jsonl``, the stream
format of :mod:`perfcast.io.online_stream`). The collector models the batches in name order
(the names start with the time in nanoseconds), deletes each file once its results are in the
store, and answers with one *control file* per kernel and metric,
``control/<FNV-1a 64 of "kernel\\0metric" in hex>``, holding two whole numbers: the batches of
the kernel judged so far and the measurements to skip after the latest one (the back-off delay
``q``; 0 after a miss). A program reads its kernel's control file when it hands over a batch
and skips ``q`` measurements once per new judgement, so back-off lags one batch behind the
collector. The C library (``perfcast_online.c``) follows the same protocol. Standard library
only: the Python region imports nothing heavy.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

#: Suffix of the batch files the Python regions hand over (JSON Lines).
BATCH_SUFFIX = ".jsonl"
#: Suffixes of every batch file the collector reads: JSON Lines and the C library's binary
#: batch files (``perfcast.io.online_batch.SUFFIX``; this module imports nothing of perfcast).
BATCH_SUFFIXES = (BATCH_SUFFIX, ".pcob")
#: Sub-directory of the control files.
CONTROL = "control"

_FNV_OFFSET, _FNV_PRIME, _MASK = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1
_sequence = itertools.count()


def fnv1a(data: bytes) -> int:
    """The 64-bit FNV-1a hash of ``data``."""
    value = _FNV_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV_PRIME) & _MASK
    return value


def control_path(spool: str | Path, kernel: str, metric: str) -> Path:
    """The control file of ``kernel`` and ``metric`` in ``spool``."""
    digest = fnv1a(kernel.encode() + b"\0" + metric.encode())
    return Path(spool) / CONTROL / f"{digest:016x}"


def write_control(spool: str | Path, kernel: str, metric: str, batches: int, skip: int) -> None:
    """Publish the latest judgement of a kernel (atomically: write, then rename)."""
    path = control_path(spool, kernel, metric)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(f"{batches} {skip}\n")
    os.replace(temporary, path)


def read_control(spool: str | Path, kernel: str, metric: str) -> tuple[int, int] | None:
    """``(batches judged, skip)`` of a kernel, None when the collector has not answered."""
    try:
        batches, skip = control_path(spool, kernel, metric).read_text().split()
        return int(batches), int(skip)
    except (OSError, ValueError):
        return None


def hand_over(spool: str | Path, lines: list[str]) -> Path:
    """Write one batch file into ``spool`` atomically; returns its path."""
    directory = Path(spool)
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{time.time_ns():020d}-{os.getpid()}-{next(_sequence):06d}"
    temporary = directory / f".{name}.tmp"
    temporary.write_text("".join(line + "\n" for line in lines))
    final = directory / f"{name}{BATCH_SUFFIX}"
    os.replace(temporary, final)
    return final


def pending_batches(spool: str | Path) -> list[Path]:
    """Batch files waiting in ``spool``, oldest first."""
    directory = Path(spool)
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.name.endswith(BATCH_SUFFIXES))
