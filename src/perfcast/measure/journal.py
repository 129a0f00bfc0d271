"""Writer of the append-only results journal of a campaign (``<name>.results.jsonl``).

Each line is written with one ``write``, flushed and fsync'ed before the next run starts, so a
crash or ``kill -9`` loses at most the run in progress; a torn last line is cut off before
anything new is appended. :mod:`perfcast.io.campaign_results` reads the journal and defines its
lines.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import IO, Any

from perfcast.core.errors import InputError
from perfcast.io.campaign_results import Journal, read_journal


class JournalWriter:
    """Appends lines to a journal durably, holding an exclusive lock on the file.

    Use as a context manager: entering locks the file, reads it into :attr:`journal` and cuts
    off a torn last line.

    Parameters
    ----------
    path : str or Path
        The journal file (created when absent).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.journal = Journal(self.path)
        self._handle: IO[bytes] | None = None

    def __enter__(self) -> JournalWriter:
        created = not self.path.exists()
        handle = self.path.open("ab")
        if created:  # make the new file's directory entry durable too
            directory = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise InputError("another perfcast run is writing these results", self.path) from None
        try:
            self.journal = read_journal(self.path)
        except BaseException:
            handle.close()
            raise
        if handle.tell() > self.journal.complete_bytes:
            handle.truncate(self.journal.complete_bytes)
        self._handle = handle
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def append(self, line: dict[str, Any]) -> None:
        """Write one line and make it durable before returning."""
        if self._handle is None:
            raise RuntimeError("JournalWriter used outside its with-block")
        text = json.dumps(line, separators=(",", ":"), allow_nan=False) + "\n"
        self._handle.write(text.encode())
        self._handle.flush()
        os.fsync(self._handle.fileno())
