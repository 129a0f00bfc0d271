"""Start-up time of the command line: ``perfcast --help`` and ``perfcast model`` on a small file.

Each command runs as a whole process (``python -m perfcast.cli ...``, the sources of this
checkout first on ``PYTHONPATH``), once to warm the file cache and then ``--runs`` times; the
table gives the wall seconds (min / median / max) and the median CPU seconds of the child.
One more run of each under ``python -X importtime`` is saved to ``--out``
(``importtime-help.txt``, ``importtime-model.txt``) and summarised: the packages that took the
most import time, and which of sympy, pandas, pyarrow, matplotlib and the clang bindings were
imported.

The small file is an Extra-P text file of two kernels over five points, three repetitions each,
written to ``--out`` (``startup-small.txt``).

Usage: .venv/bin/python -m benchmarks.startup [--runs N] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_HELP_SECONDS = 0.25
"""Issue 12's target for the wall time of ``perfcast --help``."""
HEAVY_PACKAGES = ("sympy", "pandas", "pyarrow", "matplotlib", "clang")
"""Packages neither command should import unless it needs them (issue 12)."""
SMALL_EXPERIMENT = """\
PARAMETER p

POINTS 4 8 16 32 64

REGION solve
METRIC time
DATA 2.01 2.03 1.99
DATA 4.02 3.98 4.05
DATA 8.10 7.95 8.02
DATA 16.1 15.9 16.0
DATA 32.2 31.8 32.1
REGION exchange
DATA 1.10 1.12 1.09
DATA 1.31 1.30 1.33
DATA 1.48 1.52 1.50
DATA 1.71 1.69 1.70
DATA 1.90 1.92 1.91
"""


def commands(small_file: Path) -> dict[str, tuple[str, list[str]]]:
    """The command lines timed: name -> (label of the importtime file, arguments after python)."""
    return {
        "perfcast --help": ("help", ["-m", "perfcast.cli", "--help"]),
        "perfcast model SMALL": ("model", ["-m", "perfcast.cli", "model", str(small_file)]),
    }


def environment() -> dict[str, str]:
    """This process's environment with this checkout's sources first on ``PYTHONPATH``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    return env


def time_runs(arguments: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) seconds of ``runs`` processes, after one warm-up run."""
    env = environment()
    command = [sys.executable, *arguments]
    subprocess.run(command, env=env, check=True, capture_output=True)
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return walls, cpus


def import_times(arguments: list[str], saved: Path) -> dict[str, int]:
    """Run once under ``-X importtime``, save its report, return microseconds per module.

    The value is each module's own import time (without the modules it imported).
    """
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *arguments],
        env=environment(),
        check=True,
        capture_output=True,
        text=True,
    )
    saved.write_text(done.stderr)
    own = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = line.removeprefix("import time:").split("|")
        own[name.strip()] = int(self_us)
    return own


def by_package(own: dict[str, int]) -> list[tuple[str, int]]:
    """Import microseconds summed over each top-level package, largest first."""
    totals: dict[str, int] = defaultdict(int)
    for module, microseconds in own.items():
        totals[module.split(".")[0]] += microseconds
    return sorted(totals.items(), key=lambda item: -item[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="timed runs per command")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    small_file = options.out / "startup-small.txt"
    small_file.write_text(SMALL_EXPERIMENT)

    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, {options.runs} runs each "
        "after one warm-up"
    )
    print()
    print("| command | wall min (s) | wall median (s) | wall max (s) | CPU median (s) |")
    print("|---|---|---|---|---|")
    summaries = []
    for name, (label, arguments) in commands(small_file).items():
        walls, cpus = time_runs(arguments, options.runs)
        print(
            f"| `{name}` | {min(walls):.3f} | {statistics.median(walls):.3f} | "
            f"{max(walls):.3f} | {statistics.median(cpus):.3f} |"
        )
        if name == "perfcast --help":
            verdict = "met" if statistics.median(walls) < TARGET_HELP_SECONDS else "missed"
            summaries.append(f"target: `{name}` under {TARGET_HELP_SECONDS} s median: {verdict}")
        saved = options.out / f"importtime-{label}.txt"
        own = import_times(arguments, saved)
        heavy = sorted({m.split(".")[0] for m in own} & set(HEAVY_PACKAGES))
        top = ", ".join(f"{package} {us / 1000:.0f}" for package, us in by_package(own)[:6])
        summaries.append(
            f"`{name}`: imports {', '.join(heavy) or 'none'} of {', '.join(HEAVY_PACKAGES)}; "
            f"import ms by package (one run, saved to {saved}): {top}"
        )
    print()
    for line in summaries:
        print(f"- {line}")
    print()
    print(f"Command: `.venv/bin/python -m benchmarks.startup --runs {options.runs}`")


if __name__ == "__main__":
    main()
