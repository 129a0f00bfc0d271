"""The append-only results journal of a campaign (``<name>.results.jsonl``).

One JSON object per line. A ``session`` line opens every invocation of ``perfcast run`` (campaign,
seed, machine and software metadata); a ``run`` line follows every finished run (point,
repetition, metric mode, status, wall time, records). Each line is written with one ``write``,
flushed and fsync'ed before the next run starts, so a crash or ``kill -9`` loses at most the run
in progress. A torn last line (no newline at the end) is reported and ignored, and cut off
before anything new is appended; a malformed line anywhere else is an error.
"""

from __future__ import annotations

import fcntl
import json
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from perfcast.errors import InputError
from perfcast.measure.schedule import RunKey

RUN_STATUSES = ("ok", "failed", "timeout")
_RUN_FIELDS = ("fingerprint", "point", "repetition", "mode", "status", "records")


class JournalWarning(UserWarning):
    """Something in a results journal was skipped (a torn last line)."""


@dataclass
class Journal:
    """What a results journal holds.

    Attributes
    ----------
    path : Path
    sessions : list of dict
        The ``session`` lines in file order; ``runs_recorded`` counts the run lines after each.
    runs : dict of RunKey to dict
        The latest ``run`` line of every run (a failed run retried later is replaced).
    complete_bytes : int
        Length of the file up to the end of its last complete line.
    """

    path: Path
    sessions: list[dict[str, Any]] = field(default_factory=list)
    runs: dict[RunKey, dict[str, Any]] = field(default_factory=dict)
    complete_bytes: int = 0

    @property
    def parameter_names(self) -> list[str]:
        """Parameter names of the campaign, from the latest session."""
        if not self.sessions:
            return []
        return list(self.sessions[-1]["campaign"]["parameters"])


def run_key(line: dict[str, Any], names: list[str]) -> RunKey:
    """The :class:`RunKey` of a ``run`` line, with the point ordered as ``names``."""
    point = line["point"]
    return RunKey(tuple(point[n] for n in names), int(line["repetition"]), str(line["mode"]))


def read_journal(path: str | Path) -> Journal:
    """Read a results journal (an absent file is an empty journal).

    Raises
    ------
    InputError
        Naming the file and line of a malformed line that is not a torn last line.
    """
    path = Path(path)
    journal = Journal(path)
    if not path.exists():
        return journal
    data = path.read_bytes()
    offset = 0
    lines: list[tuple[int, dict[str, Any]]] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        end = offset + len(raw) + 1
        if end > len(data):  # the part after the last newline
            if raw.strip():
                warnings.warn(
                    f"{path}:{number}: ignoring an incomplete last line (a run interrupted "
                    "while its result was written)",
                    JournalWarning,
                    stacklevel=2,
                )
            break
        offset = end
        journal.complete_bytes = end
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise InputError("corrupt results line (not JSON)", path, number) from None
        if not isinstance(line, dict) or line.get("type") not in ("session", "run"):
            raise InputError("corrupt results line (neither a session nor a run)", path, number)
        lines.append((number, line))
    for number, line in lines:
        if line["type"] == "session":
            if not isinstance(line.get("campaign"), dict) or "fingerprint" not in line:
                raise InputError("corrupt session line (no campaign)", path, number)
            journal.sessions.append(line)
            continue
        if not journal.sessions:
            raise InputError("run line before any session line", path, number)
        missing = [f for f in _RUN_FIELDS if f not in line]
        if missing or line["status"] not in RUN_STATUSES:
            raise InputError(f"corrupt run line (missing {', '.join(missing)})", path, number)
        try:
            key = run_key(line, journal.parameter_names)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError(
                "run line whose point does not match the campaign's parameters", path, number
            ) from None
        journal.runs[key] = line
        journal.sessions[-1]["runs_recorded"] = journal.sessions[-1].get("runs_recorded", 0) + 1
    return journal


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
