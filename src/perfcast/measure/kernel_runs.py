"""Build and measure one configuration of a C kernel program (for the autotuner).

A configuration is a set of compiler flags and ``-D`` macro definitions. The program (a C file
with ``main``) is compiled with them and run: ``repetitions`` times for wall time (the median is
kept; the whole program's run, start-up included), and once under valgrind's callgrind for the
instructions of the kernel function and everything it calls (deterministic, so one run is
enough; with ``simulate_cache`` also callgrind's cycle estimate under a fixed simulated cache).
When the function does not appear in the profile (the compiler inlined it into its
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
    cycles: float | None = None


def _compile(compiler: str, source: Path, flags: Sequence[str], binary: Path) -> str:
    command = [compiler, *flags, str(source), "-o", str(binary), "-lm"]
    done = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False)
    return "" if done.returncode == 0 else (done.stderr.strip() or f"status {done.returncode}")


CACHE_GEOMETRY: tuple[str, ...] = ("--I1=32768,8,64", "--D1=32768,8,64", "--LL=1048576,16,64")
"""Simulated caches of the ``cycles`` estimate (fixed, so results do not depend on the host)."""


def cycle_estimate(costs: dict[str, int]) -> float:
    """Callgrind's cycle estimate ``Ir + 10 L1 misses + 100 last-level misses``.

    Parameters
    ----------
    costs : dict
        Event name to count of a callgrind profile with cache simulation (``Ir``, ``I1mr``,
        ``D1mr``, ``D1mw``, ``ILmr``, ``DLmr``, ``DLmw``).
    """
    first = costs["I1mr"] + costs["D1mr"] + costs["D1mw"]
    last = costs["ILmr"] + costs["DLmr"] + costs["DLmw"]
    return float(costs["Ir"] + 10 * first + 100 * last)


def _instructions(
    binary: Path, function: str, arguments: Sequence[str], folder: Path, simulate_cache: bool
) -> tuple[int, str, float | None]:
    if shutil.which("valgrind") is None:
        raise WorkError("valgrind is not installed: it counts the instructions of each variant")
    profile_path = folder / "callgrind.out"
    cache = ["--cache-sim=yes", *CACHE_GEOMETRY] if simulate_cache else []
    command = [
        "valgrind",
        "--tool=callgrind",
        *cache,
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
    inclusive = [costs for f, costs in profile.inclusive.items() if f.name == function]
    if inclusive and max(c[column] for c in inclusive) > 0:
        chosen, scope = max(inclusive, key=lambda c: c[column]), "function"
    else:
        chosen = [
            sum(column_costs) for column_costs in zip(*profile.exclusive.values(), strict=True)
        ]
        scope = "program"
    cycles = cycle_estimate(dict(zip(profile.events, chosen, strict=True))) if cache else None
    return chosen[column], scope, cycles


def measure_configuration(
    source: str | Path,
    function: str,
    flags: Sequence[str],
    *,
    compiler: str = "clang-16",
    arguments: Sequence[str] = (),
    repetitions: int = 3,
    count_instructions: bool = True,
    simulate_cache: bool = False,
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
    simulate_cache : bool
        Run callgrind with cache simulation (:data:`CACHE_GEOMETRY`) and report the kernel's
        :func:`cycle_estimate` as ``cycles``.

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
        instructions, scope, cycles = None, "function", None
        if count_instructions or simulate_cache:
            try:
                instructions, scope, cycles = _instructions(
                    binary, function, arguments, folder, simulate_cache
                )
            except (RuntimeError, subprocess.TimeoutExpired) as failure:
                return KernelRun(None, None, error=f"valgrind failed: {failure}")
        return KernelRun(
            instructions,
            statistics.median(times),
            tuple(times),
            scope,
            output=output[-1000:],
            cycles=cycles,
        )
