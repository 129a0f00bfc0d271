"""Probe this machine: a MultiMAPS-style bandwidth surface, floating-point rates, caches.

The probes are C (``measure/c/perfcast_probe.c``), compiled here at run time with the system's C
compiler. The memory probe measures bandwidth (8-byte accesses) over working sets from well
inside the first-level cache to beyond the last-level cache (as far as the size limit allows),
for stride-1, stride-8 (one access per 64-byte line) and random access, loads and stores; the
floating-point probe measures add, multiply, divide and fused multiply-add throughput for single
and double precision, scalar and 16-byte vectors; the core probes measure the integer
instruction throughput (independent adds) and the cost of a mispredicted branch (a branch on
random bits, half of them mispredicted, against the same loop always taking it). Times are the
probe's CPU time (a probe preempted by other load is not charged for the wait); every figure is
the fastest of its repetitions (the machine's capability; other load only slows a run down), and
the spread ``(slowest - fastest) / fastest`` is kept.

Each surface point gets the cumulative hit rates the probe's access pattern has at its working
set under the machine's cache geometry (a model: warm caches hold working sets that fit;
stride-1 misses once per 64-byte line, stride-8 on every access; random access hits in a level
with the probability that the level holds the line). The level bandwidths of the profile come
from the surface's plateaus: ``l1`` from stride-1 loads/stores inside half the first-level
cache, ``ll`` from stride-8 between twice the first-level and half the last-level cache size,
and ``memory`` from stride-8 beyond twice the last-level cache (or the largest working set
measured, with a note, when the size limit stops short of it); the ``stream`` bandwidths from
the stride-1 points of the same two ranges.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from perfcast.core.errors import InputError, WorkError
from perfcast.io.machine_profile import MachineProfile

PATTERNS = ("stride1", "stride8", "random")
FP_KINDS = [
    (op, precision, shape)
    for op in ("add", "mul", "div", "fma")  # FP_OPERATIONS of static.signature but 'other'
    for precision in ("f64", "f32")
    for shape in ("scalar", "vector")
]
SMALLEST_WORKING_SET = 4096
_FLAGS = ["-O2", "-fno-tree-vectorize", "-ffp-contract=off"]
_SYSFS = Path("/sys/devices/system/cpu/cpu0/cache")
_FALLBACK_CACHE = {
    "D1": {"size": 32768, "associativity": 8, "line": 64},
    "LL": {"size": 8388608, "associativity": 16, "line": 64},
}


def cache_geometry(root: Path = _SYSFS) -> tuple[dict[str, dict[str, int]], list[str]]:
    """First-level data and last-level cache of CPU 0 from sysfs (with notes on fallbacks)."""
    levels: list[tuple[int, str, dict[str, int]]] = []
    for index in sorted(root.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size_text = (index / "size").read_text().strip()
            ways = int((index / "ways_of_associativity").read_text())
            line = int((index / "coherency_line_size").read_text())
        except (OSError, ValueError):
            continue
        factor = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(size_text[-1:], 1)
        size = int(size_text.rstrip("KMG")) * factor
        levels.append((level, kind, {"size": size, "associativity": ways, "line": line}))
    data = [g for level, kind, g in levels if level == 1 and kind == "Data"]
    last = [g for level, kind, g in sorted(levels, key=lambda x: x[0]) if kind != "Instruction"]
    if not data or not last:
        return dict(_FALLBACK_CACHE), ["no cache geometry in sysfs: assumed 32 KiB L1, 8 MiB LL"]
    return {"D1": data[0], "LL": last[-1]}, []


def compile_probe(directory: Path) -> Path:
    """Compile the probe program into ``directory``.

    Raises
    ------
    WorkError
        When there is no C compiler or compiling fails.
    """
    compiler = os.environ.get("CC", "cc")
    if shutil.which(compiler) is None:
        raise WorkError(f"probing needs a C compiler; '{compiler}' is not installed")
    source = Path(str(resources.files("perfcast.measure") / "c" / "perfcast_probe.c"))
    program = directory / "perfcast_probe"
    flags = [*_FLAGS, "-march=native"]
    for attempt in (flags, _FLAGS):  # -march=native is not known to every compiler
        done = subprocess.run(
            [compiler, *attempt, "-o", str(program), str(source), "-lm"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0:
            return program
    raise WorkError(f"compiling the probes failed: {done.stderr.strip()[-500:]}")


def _measure(program: Path, words: list[str]) -> tuple[float, float]:
    """Best rate (units per second) of the repetitions and their spread."""
    done = subprocess.run([str(program), *words], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise WorkError(f"probe {' '.join(words)} failed: {done.stderr.strip()[-300:]}")
    rates = []
    for line in done.stdout.split("\n"):
        if line.strip():
            amount, seconds = (float(x) for x in line.split())
            rates.append(amount / seconds)
    if not rates:
        raise WorkError(f"probe {' '.join(words)} printed nothing")
    best, worst = max(rates), min(rates)
    return best, (best - worst) / best


def probe_hit_rates(
    pattern: str, working_set: int, cache: dict[str, dict[str, int]]
) -> tuple[float, float]:
    """Modeled first-level and cumulative last-level hit rates of a probe point (the share of
    accesses served at or above each level; see the module doc)."""
    l1, ll = cache["D1"]["size"], cache["LL"]["size"]
    line = cache["D1"]["line"]
    if pattern == "random":
        return min(1.0, l1 / working_set), min(1.0, ll / working_set)
    miss_share = 8 / line if pattern == "stride1" else 1.0
    l1_hit = 1.0 if working_set <= l1 else 1.0 - miss_share
    ll_hit = 1.0 if working_set <= ll else l1_hit
    return l1_hit, ll_hit


def _physical_memory() -> int | None:
    """Bytes of main memory, or None where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _working_sets(largest: int) -> list[int]:
    sizes = []
    size = SMALLEST_WORKING_SET
    while size <= largest:
        sizes.append(size)
        size *= 2
    return sizes


def probe_machine(
    *,
    quick: bool = False,
    largest_working_set: int | None = None,
    name: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> MachineProfile:
    """Measure this machine and return its profile.

    Parameters
    ----------
    quick : bool
        Fewer repetitions, shorter measurements and working sets up to 64 MiB (under a
        minute); otherwise up to 512 MiB.
    largest_working_set : int, optional
        Bytes of the largest working set measured (a power of two is best).
    name : str, optional
        The machine's name (the host name by default).
    progress : callable, optional
        Called with a short text before each probe group.

    Raises
    ------
    InputError
        When ``largest_working_set`` is below four first-level caches (too small to find the
        last-level plateau) or above half of the machine's memory.
    WorkError
        When the probes cannot be compiled or fail.
    """
    cache, notes = cache_geometry()
    # The last-level plateau is read between two and four first-level caches.
    smallest_largest = 4 * cache["D1"]["size"]
    if largest_working_set is not None and largest_working_set < smallest_largest:
        raise InputError(
            f"the largest working set must be at least 4 first-level caches "
            f"({smallest_largest} bytes here), not {largest_working_set}",
            value=largest_working_set,
        )
    installed = _physical_memory()
    if largest_working_set is not None and installed and largest_working_set > installed // 2:
        raise InputError(
            f"the largest working set must fit in half of this machine's memory "
            f"({installed // 2} bytes), not {largest_working_set}",
            value=largest_working_set,
        )
    largest = largest_working_set or (64 if quick else 512) * 1024**2
    seconds, repetitions = ("0.004", "3") if quick else ("0.02", "5")
    started = time.perf_counter()
    surface: list[dict[str, Any]] = []
    fp: dict[str, float] = {}
    fp_spread: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="perfcast-probe-") as scratch:
        program = compile_probe(Path(scratch))
        for pattern in PATTERNS:
            if progress:
                progress(f"memory {pattern}")
            for access in ("load", "store"):
                for size in _working_sets(largest):
                    words = ["memory", pattern, access, str(size), seconds, repetitions]
                    rate, spread = _measure(program, words)
                    l1_hit, ll_hit = probe_hit_rates(pattern, size, cache)
                    surface.append(
                        {"pattern": pattern, "access": access, "working_set": size,
                         "bandwidth": rate / 1e9, "spread": spread,
                         "l1_hit_rate": l1_hit, "ll_cumulative_hit_rate": ll_hit}
                    )  # fmt: skip
        if progress:
            progress("floating point")
        for op, precision, shape in FP_KINDS:
            rate, spread = _measure(program, ["fp", op, precision, shape, seconds, repetitions])
            fp[f"{op}.{precision}.{shape}"] = rate / 1e9
            fp_spread[f"{op}.{precision}.{shape}"] = spread
        if progress:
            progress("core")
        core, core_spread = core_rates(program, seconds, repetitions)
    for precision in ("f64", "f32"):  # comparisons, conversions, logic: issued like an add
        for shape in ("scalar", "vector"):
            fp[f"other.{precision}.{shape}"] = fp[f"add.{precision}.{shape}"]
    memory, level_notes = level_bandwidths(surface, cache)
    stream, _ = level_bandwidths(surface, cache, pattern="stride1")
    return MachineProfile(
        name=name or os.uname().nodename,
        memory=memory,
        fp=fp,
        cache=cache,
        surface=surface,
        stream={access: {k: v[k] for k in ("ll", "memory")} for access, v in stream.items()},
        core=core,
        extra={
            "probe": {
                "quick": quick,
                "seconds": time.perf_counter() - started,
                "largest_working_set": largest,
                "fp_spread": fp_spread,
                "core_spread": core_spread,
                "notes": [
                    *notes,
                    *level_notes,
                    "fp 'other' kinds (comparisons, conversions, min/max, logic, square roots) "
                    "are given the add rate",
                ],
            }
        },
    )


def core_rates(
    program: Path, seconds: str, repetitions: str
) -> tuple[dict[str, float], dict[str, float]]:
    """Integer instruction throughput (Gop/s) and the misprediction penalty (ns), with the
    spread of each probe's repetitions.

    The penalty is the extra time per branch of the random loop over the predictable one,
    divided by the share of random branches mispredicted (one half); it is at least 0.
    """
    issue, issue_spread = _measure(program, ["issue", seconds, repetitions])
    unpredictable, random_spread = _measure(program, ["branch", "random", seconds, repetitions])
    steady, steady_spread = _measure(program, ["branch", "predictable", seconds, repetitions])
    penalty = max(0.0, (1.0 / unpredictable - 1.0 / steady) / 0.5)
    rates = {"instructions": issue / 1e9, "misprediction_penalty": penalty * 1e9}
    spread = {
        "instructions": issue_spread,
        "misprediction_penalty": max(random_spread, steady_spread),
    }
    return rates, spread


def level_bandwidths(
    surface: list[dict[str, Any]], cache: dict[str, dict[str, int]], pattern: str = "stride8"
) -> tuple[dict[str, dict[str, float]], list[str]]:
    """GB/s per access and level from the surface's plateaus (see the module docstring);
    ``pattern`` is the access pattern the ``ll`` and ``memory`` plateaus are read from."""
    l1, ll = cache["D1"]["size"], cache["LL"]["size"]
    notes: list[str] = []
    memory: dict[str, dict[str, float]] = {}
    for access in ("load", "store"):

        def plateau(pattern: str, low: float, high: float, access: str = access) -> list[float]:
            return [
                point["bandwidth"]
                for point in surface
                if point["pattern"] == pattern
                and point["access"] == access
                and low <= point["working_set"] <= high
            ]

        sizes = sorted(p["working_set"] for p in surface)
        inside = plateau("stride1", 0, l1 / 2) or plateau("stride1", 0, sizes[0])
        middle = plateau(pattern, 2 * l1, ll / 2) or plateau(pattern, 2 * l1, 4 * l1)
        beyond = plateau(pattern, 2 * ll, float("inf"))
        if not beyond:
            beyond = plateau(pattern, sizes[-1], sizes[-1])
            if access == "load":
                notes.append(
                    f"the largest working set ({sizes[-1]} bytes) does not exceed twice the "
                    f"last-level cache ({ll} bytes): 'memory' is the bandwidth at that size"
                )
        memory[access] = {
            "l1": statistics.median(inside),
            "ll": statistics.median(middle),
            "memory": statistics.median(beyond),
        }
    return memory, notes
