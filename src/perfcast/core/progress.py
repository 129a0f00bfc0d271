"""A one-line progress bar with ETA, drawn only on a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from perfcast.core.terminal import visible

BAR_WIDTH = 24


def format_duration(seconds: float) -> str:
    """``1:02:03`` / ``2:03`` style duration."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


#: Seconds of work before the progress bars of the API's long operations (fits, reports, static
#: analyses) show.
API_DELAY = 1.0


class ProgressBar:
    """Progress of ``total`` steps on ``stream``; silent unless the stream is a terminal.

    The ETA is the mean duration of the steps finished so far times the steps left.

    Parameters
    ----------
    total : int
        Number of steps.
    stream : file, optional
        Defaults to standard error.
    unit : str
        What a step is, e.g. ``"runs"`` or ``"kernels"``.
    delay : float
        Seconds the work runs before the bar shows: work done sooner leaves the terminal
        untouched.
    """

    def __init__(
        self, total: int, stream: TextIO | None = None, unit: str = "runs", delay: float = 0.0
    ):
        self.total = total
        self.delay = delay
        self._shown = False
        self.unit = unit
        shown_on = sys.stderr if stream is None else stream
        # The bar's own control sequences go to the terminal itself, its label escaped.
        self.stream = getattr(shown_on, "terminal", shown_on)
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)()) and total > 0
        self.done = 0
        self.failed = 0
        self._start = time.monotonic()

    def line(self, label: str = "") -> str:
        """The text of the bar in its current state."""
        filled = BAR_WIDTH * self.done // self.total if self.total else BAR_WIDTH
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        elapsed = time.monotonic() - self._start
        remaining = self.total - self.done
        eta = format_duration(elapsed / self.done * remaining) if self.done else "?"
        failed = f", {self.failed} failed" if self.failed else ""
        text = f"[{bar}] {self.done}/{self.total} {self.unit}{failed}  ETA {eta}"
        return f"{text}  {visible(label)}" if label else text

    def start(self, label: str) -> None:
        """Show the run about to start."""
        self._draw(label)

    def advance(self, ok: bool = True, steps: int = 1) -> None:
        """Count ``steps`` finished steps (``ok`` false counts them as failed)."""
        self.done += steps
        self.failed += 0 if ok else steps
        self._draw("")

    def close(self) -> None:
        """End the bar's line (if it was shown)."""
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()

    def _draw(self, label: str) -> None:
        if self.enabled and time.monotonic() - self._start >= self.delay:
            self.stream.write("\r\x1b[K" + self.line(label))
            self.stream.flush()
            self._shown = True
