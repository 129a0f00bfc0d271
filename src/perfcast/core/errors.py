"""Errors perfcast reports to users.

Every problem with user input is an :class:`InputError` that says what went wrong, where it was
found and, when there is one, the offending value. Its messages speak about the library's own
inputs, never about command-line flags: a machine-readable ``reason`` code lets the command line
add advice about its flags, print one clear message and exit with status 2 instead of a
traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class PerfcastError(Exception):
    """Base class of all errors perfcast raises on purpose."""


class InputError(PerfcastError):
    """Bad user input: a malformed file, an impossible request, data a model cannot use.

    Parameters
    ----------
    message : str
        What is wrong, in words a user understands.
    source : str or Path, optional
        The file (or other named input) the problem was found in.
    line : int, optional
        The 1-based line (or record) number inside ``source``.
    reason : str, optional
        Machine-readable code of the problem, a short kebab-case string such as
        ``"ambiguous-metric"``, stable across releases so that callers can act on it.
    value : object, optional
        The offending value (the text, name or setting that was rejected).
    """

    def __init__(
        self,
        message: str,
        source: str | Path | None = None,
        line: int | None = None,
        *,
        reason: str | None = None,
        value: Any = None,
    ):
        self.message = message
        self.source = str(source) if source is not None else None
        self.line = line
        self.reason = reason
        self.value = value
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.source is not None:
            where = self.source if self.line is None else f"{self.source}:{self.line}"
            where += ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        return f"{where}{self.message}"


class WorkError(PerfcastError):
    """The requested work itself failed (exit status 1), e.g. a campaign whose runs all failed."""
