"""A minimal progress bar with ETA on stderr, silent when stderr is not a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Report progress of ``total`` steps as ``label [#####-----] 50% 3/6 ETA 0:12``.

    Parameters
    ----------
    total : int
        Number of steps.
    label : str
        Shown before the bar.
    stream : file, optional
        Defaults to ``sys.stderr``; nothing is written unless it is a terminal.
    """

    def __init__(self, total: int, label: str = "", stream: TextIO | None = None):
        self.total = max(total, 0)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = 0
        self._start = time.monotonic()
        self._last_draw = 0.0

    def advance(self, steps: int = 1) -> None:
        """Mark ``steps`` more steps done and redraw (at most ten times a second)."""
        self.done = min(self.total, self.done + steps)
        now = time.monotonic()
        if self.enabled and (now - self._last_draw > 0.1 or self.done == self.total):
            self._last_draw = now
            self.stream.write("\r" + self.line(now - self._start))
            self.stream.flush()

    def line(self, elapsed: float) -> str:
        """The text of the bar after ``elapsed`` seconds."""
        fraction = self.done / self.total if self.total else 1.0
        filled = int(round(30 * fraction))
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        minutes, seconds = divmod(int(eta), 60)
        bar = "#" * filled + "-" * (30 - filled)
        return (
            f"{self.label} [{bar}] {100 * fraction:3.0f}% {self.done}/{self.total} "
            f"ETA {minutes}:{seconds:02d}"
        )

    def close(self) -> None:
        """End the bar's line."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
