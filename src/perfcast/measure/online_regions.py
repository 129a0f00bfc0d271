"""Self-modeling regions for Python programs: ``perfcast.online_region(name, n=..., p=...)``.

::

    for step in range(steps):
        with perfcast.online_region("solve", n=n, p=size):
            solve()

Each region is a kernel of online modeling, its keyword arguments its predictor values. When the
environment variable ``PERFCAST_ONLINE_SPOOL`` names a directory, a region's wall time is
recorded unless back-off says to skip it, ``PERFCAST_ONLINE_BATCH`` (default 512) records of a
kernel are handed over at once to ``perfcast online serve`` through the spool
(:mod:`perfcast.measure.online_spool`), and partial batches are handed over at exit. Without the
variable a region only runs its body. The decision to measure is a counter decrement: nothing is
timed, formatted or written for a skipped execution.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from time import perf_counter_ns

from perfcast.measure.online_spool import hand_over, read_control


class _Kernel:
    __slots__ = ("lines", "skip_left", "skipped", "judged")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.skip_left = 0
        self.skipped = 0
        self.judged = 0


class OnlineRecorder:
    """Buffers measurements per kernel and applies the collector's back-off delays.

    Parameters
    ----------
    spool : str
        The spool directory ``perfcast online serve`` reads.
    batch : int
        Records per kernel handed over at once (use the collector's batch size).
    metric : str
        The metric recorded (wall time in seconds).
    """

    def __init__(self, spool: str, batch: int = 512, metric: str = "time") -> None:
        if batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        self.spool = spool
        self.batch = batch
        self.metric = metric
        self._kernels: dict[str, _Kernel] = {}
        self._lock = threading.Lock()

    def should_measure(self, name: str) -> bool:
        """Whether to time this execution of ``name`` (False counts it as skipped)."""
        with self._lock:
            kernel = self._kernels.setdefault(name, _Kernel())
            if kernel.skip_left > 0:
                kernel.skip_left -= 1
                kernel.skipped += 1
                return False
            return True

    def record(self, name: str, params: dict[str, float], seconds: float) -> None:
        """Add one measurement; hands the batch over when it is full."""
        line = json.dumps(
            {"kernel": name, "params": params, "metric": self.metric, "value": seconds}
        )
        with self._lock:
            kernel = self._kernels.setdefault(name, _Kernel())
            if kernel.skipped:
                line = line[:-1] + f', "skipped": {kernel.skipped}}}'
                kernel.skipped = 0
            kernel.lines.append(line)
            if len(kernel.lines) >= self.batch:
                self._hand_over(name, kernel)

    def _hand_over(self, name: str, kernel: _Kernel) -> None:
        hand_over(self.spool, kernel.lines)
        kernel.lines = []
        answer = read_control(self.spool, name, self.metric)
        if answer is not None and answer[0] > kernel.judged:
            kernel.judged, kernel.skip_left = answer

    def flush(self) -> None:
        """Hand over every partly filled batch and the skips after the last measurement (at
        exit)."""
        with self._lock:
            for name, kernel in self._kernels.items():
                if kernel.skipped:
                    kernel.lines.append(
                        json.dumps(
                            {"kernel": name, "metric": self.metric, "skipped": kernel.skipped}
                        )
                    )
                    kernel.skipped = 0
                if kernel.lines:
                    self._hand_over(name, kernel)

    @contextmanager
    def region(self, name: str, **params: float) -> Iterator[None]:
        """Time the body as one measurement of ``name`` at ``params``, unless skipped."""
        if not self.should_measure(name):
            yield
            return
        start = perf_counter_ns()
        yield
        self.record(name, params, (perf_counter_ns() - start) * 1e-9)


_recorder: OnlineRecorder | None = None
_configured = False


def _default_recorder() -> OnlineRecorder | None:
    global _recorder, _configured
    if not _configured:
        _configured = True
        spool = os.environ.get("PERFCAST_ONLINE_SPOOL")
        if spool:
            _recorder = OnlineRecorder(spool, int(os.environ.get("PERFCAST_ONLINE_BATCH", "512")))
            atexit.register(_recorder.flush)
    return _recorder


@contextmanager
def online_region(name: str, **params: float) -> Iterator[None]:
    """A self-modeling region of the program (see the module notes).

    Parameters
    ----------
    name : str
        The kernel's name.
    **params : float
        Its predictor values at this execution, e.g. ``n=4096, p=64``.
    """
    recorder = _default_recorder()
    if recorder is None:
        yield
        return
    with recorder.region(name, **params):
        yield
