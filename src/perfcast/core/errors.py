"""Errors perfcast reports to users.

Every problem with user input is an :class:`InputError` that names where it was found, so the
command line can print one clear message and exit with status 2 instead of a traceback.
"""

from __future__ import annotations

from pathlib import Path


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
    """

    def __init__(self, message: str, source: str | Path | None = None, line: int | None = None):
        self.message = message
        self.source = str(source) if source is not None else None
        self.line = line
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
