"""Starting one run of a program: wall time, timeout, exit status, tail of stderr.

The program runs in its own process group (session) so a timeout or an interrupt can end it
together with everything it started (``mpirun`` and its ranks).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

STDERR_TAIL_LINES = 20
STDERR_TAIL_CHARS = 2000
TERMINATE_GRACE_SECONDS = 2.0


@dataclass(frozen=True)
class ProcessOutcome:
    """How one process ended.

    Attributes
    ----------
    returncode : int or None
        Exit status; negative for a signal (as :mod:`subprocess` reports it); None after a
        timeout.
    wall_time : float
        Seconds from start to exit (``time.perf_counter``).
    timed_out : bool
        Whether the process was killed for exceeding the timeout.
    stderr_tail : str
        The last lines of its standard error.
    """

    returncode: int | None
    wall_time: float
    timed_out: bool
    stderr_tail: str


def _exited_unreaped(pid: int) -> bool:
    """Whether ``pid`` has exited, leaving it a zombie so its process-group id stays ours."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is not None


def _wait_exit(process: subprocess.Popen[bytes], timeout: float | None) -> bool:
    """Wait until the process exits (True) or ``timeout`` seconds pass (False), not reaping it.

    Uses a pidfd where the system has one, so the exit is seen at once; ``Popen.wait`` with a
    timeout polls with sleeps of up to 50 ms, which would blur the measured wall time.
    """
    if timeout is None:
        os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
        return True
    try:
        descriptor = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(descriptor, select.POLLIN)
        return bool(poller.poll(timeout * 1000))
    finally:
        os.close(descriptor)


def _end_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, SIGKILL it after a grace period, then reap the leader.

    The leader is reaped only after the last signal, so the group id cannot have been reused
    by an unrelated process when it is signalled.
    """
    if process.returncode is not None:  # already reaped: its group id is no longer ours
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + TERMINATE_GRACE_SECONDS
        while time.monotonic() < deadline and not _exited_unreaped(process.pid):
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)  # ranks or children that outlived SIGTERM
    except ProcessLookupError:
        pass
    process.wait()


def _tail(path: Path) -> str:
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 8 * STDERR_TAIL_CHARS))
        text = handle.read().decode("utf-8", errors="replace")
    lines = text.rstrip("\n").splitlines()[-STDERR_TAIL_LINES:]
    return "\n".join(lines)[-STDERR_TAIL_CHARS:]


def run_process(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float | None
) -> ProcessOutcome:
    """Run ``argv`` to completion (or timeout) and report how it ended.

    Standard output is discarded; standard error is kept only as a tail for failure reports.

    Parameters
    ----------
    argv : list of str
        Program and arguments.
    cwd : Path
        Working directory.
    env : dict
        The complete environment.
    timeout : float or None
        Seconds before the process group is terminated.
    """
    with tempfile.TemporaryDirectory(prefix="perfcast-run-") as scratch:
        stderr_path = Path(scratch) / "stderr"
        with stderr_path.open("wb") as stderr:
            start = time.perf_counter()
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
            )
            try:
                exited = _wait_exit(process, timeout)
                wall_time = time.perf_counter() - start
                if exited:
                    process.wait()
                else:
                    _end_group(process)
            except BaseException:
                _end_group(process)
                raise
        return ProcessOutcome(
            returncode=process.returncode if exited else None,
            wall_time=wall_time,
            timed_out=not exited,
            stderr_tail=_tail(stderr_path),
        )
