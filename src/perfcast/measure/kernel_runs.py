"""Build and measure one configuration of a C kernel program (for the autotuner).

A configuration is a set of compiler flags and ``-D`` macro definitions. The program (a C file
with ``main``) is compiled with them and run: ``repetitions`` times for wall time (the median is
kept; the whole program's run, start-up included), and once under valgrind's callgrind for the
instructions of the kernel function and everything it calls (deterministic, so one run is
enough). When the function does not appear in the profile (the compiler inlined it into its
caller), the whole program's instructions are used instead and the result says so.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from perfcast.core.errors import WorkError
from perfcast.measure.valgrind import parse_profile

RUN_TIMEOUT = 300.0
"""Seconds one run of a variant may take before it counts as failed."""


@dataclass(frozen=True)
class KernelRun:
    """The measurements of one configuration (``error`` set when it failed to build or run)."""

    instructions: int | None
    seconds: float | None
    seconds_all: tuple[float, ...] = ()
    scope: str = "function"
    error: str = ""
    output: str = ""


def _compile(compiler: str, source: Path, flags: Sequence[str], binary: Path) -> str:
    command = [compiler, *flags, str(source), "-o", str(binary), "-lm"]
    done = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False)
    return "" if done.returncode == 0 else (done.stderr.strip() or f"status {done.returncode}")


def _instructions(
    binary: Path, function: str, arguments: Sequence[str], folder: Path
) -> tuple[int, str]:
    if shutil.which("valgrind") is None:
        raise WorkError("valgrind is not installed: it counts the instructions of each variant")
    profile_path = folder / "callgrind.out"
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={profile_path}",
        str(binary),
        *arguments,
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, errors="replace", check=False, timeout=RUN_TIMEOUT
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip()[-2000:] or f"status {done.returncode}")
    profile = parse_profile(profile_path)
    column = profile.events.index("Ir")
    inclusive = [costs[column] for f, costs in profile.inclusive.items() if f.name == function]
    if inclusive and max(inclusive) > 0:
        return max(inclusive), "function"
    whole = sum(costs[column] for costs in profile.exclusive.values())
    return whole, "program"


def measure_configuration(
    source: str | Path,
    function: str,
    flags: Sequence[str],
    *,
    compiler: str = "clang-16",
    arguments: Sequence[str] = (),
    repetitions: int = 3,
    count_instructions: bool = True,
) -> KernelRun:
    """Compile ``source`` with ``flags`` and measure the program's time and kernel instructions.

    Parameters
    ----------
    source : str or Path
        C program with ``main`` calling the kernel.
    function : str
        The kernel function whose instructions (with its callees) are counted.
    flags : sequence of str
        Compiler flags and ``-D`` definitions of this configuration.
    compiler : str
        The C compiler.
    arguments : sequence of str
        Program arguments.
    repetitions : int
        Timed runs; the median is reported.
    count_instructions : bool
        Also run once under callgrind.

    Returns
    -------
    KernelRun
        With ``error`` set (and no measurements) when the variant fails to build or run.
    """
    if shutil.which(compiler) is None:
        raise WorkError(f"compiler {compiler!r} not found")
    with tempfile.TemporaryDirectory(prefix="perfcast-tune-") as name:
        folder = Path(name)
        binary = folder / "variant"
        error = _compile(compiler, Path(source), flags, binary)
        if error:
            return KernelRun(None, None, error=f"does not compile: {error}")
        times = []
        output = ""
        for _ in range(max(1, repetitions)):
            start = time.perf_counter()
            try:
                done = subprocess.run(
                    [str(binary), *arguments],
                    capture_output=True,
                    text=True,
                    errors="replace",  # a program may print any bytes
                    check=False,
                    timeout=RUN_TIMEOUT,
                )
            except subprocess.TimeoutExpired:
                return KernelRun(None, None, error=f"ran longer than {RUN_TIMEOUT:.0f} s")
            times.append(time.perf_counter() - start)
            if done.returncode != 0:
                return KernelRun(None, None, error=f"exited with status {done.returncode}")
            output = done.stdout
        instructions, scope = None, "function"
        if count_instructions:
            try:
                instructions, scope = _instructions(binary, function, arguments, folder)
            except (RuntimeError, subprocess.TimeoutExpired) as failure:
                return KernelRun(None, None, error=f"valgrind failed: {failure}")
        return KernelRun(
            instructions,
            statistics.median(times),
            tuple(times),
            scope,
            output=output[-1000:],
        )
