"""Peak memory and wall time of ``perfcast model`` on many one-parameter kernels.

Writes a CSV of ``--kernels`` kernels (default 200,000) x 5 values of ``p`` x 3 repetitions
(``kernel,metric,p,repetition,value``; each kernel ``c0 + c1 * p^e`` with a seeded random
exponent and 2 % uniform noise) to ``--out``, then runs
``python -m perfcast.cli model FILE --format json --out /dev/null`` as a whole process, the
sources of this checkout first on ``PYTHONPATH``, and reports the child's peak resident set
size (``ru_maxrss``) and wall time. Issue 13's target: under 1 GB for 200,000 kernels.

Usage: .venv/bin/python -m benchmarks.memory [--kernels N] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TARGET_BYTES = 1 << 30
"""Issue 13's target for the peak memory of modeling 200,000 one-parameter kernels."""
POINTS = (4, 8, 16, 32, 64)
REPETITIONS = 3
EXPONENTS = (0.5, 1.0, 1.5, 2.0, 3.0)


def write_experiment(path: Path, kernels: int, seed: int = 1) -> None:
    """Write the benchmark's CSV: every kernel at every point, ``REPETITIONS`` times."""
    rng = np.random.default_rng(seed)
    constants = rng.uniform(1.0, 10.0, kernels)
    slopes = rng.uniform(0.1, 1.0, kernels)
    exponents = rng.choice(EXPONENTS, kernels)
    with path.open("w", encoding="utf-8") as out:
        out.write("kernel,metric,p,repetition,value\n")
        for start in range(0, kernels, 10_000):
            stop = min(start + 10_000, kernels)
            block = np.arange(start, stop)
            lines = []
            for p in POINTS:
                truth = constants[block] + slopes[block] * float(p) ** exponents[block]
                for repetition in range(REPETITIONS):
                    noisy = truth * (1.0 + rng.uniform(-0.02, 0.02, len(block)))
                    lines.extend(
                        f"k{k},time,{p},{repetition},{v:.6g}\n"
                        for k, v in zip(block, noisy, strict=True)
                    )
            out.writelines(lines)


def run_model(path: Path) -> tuple[float, int, int]:
    """Run ``perfcast model`` on ``path``; returns wall seconds, peak RSS in bytes, exit status."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "perfcast.cli", "model", str(path)]
    command += ["--format", "json", "--out", os.devnull]
    start = time.perf_counter()
    status = subprocess.run(command, env=env, check=False).returncode
    wall = time.perf_counter() - start
    # ru_maxrss of the children is in kilobytes on Linux: the largest of any child so far.
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return wall, peak, status


def main(argv: list[str] | None = None) -> int:
    """Generate the data, run the command once, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=200_000)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    data = args.out / f"memory-{args.kernels}.csv"
    if not data.exists():
        write_experiment(data, args.kernels)
    wall, peak, status = run_model(data)
    print(
        f"perfcast model, {args.kernels} one-parameter kernels x {len(POINTS)} points x "
        f"{REPETITIONS} repetitions ({data.stat().st_size / 1e6:.0f} MB CSV)"
    )
    print(f"machine: {platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"exit status {status}, wall {wall:.1f} s, peak RSS {peak / 2**20:.0f} MiB")
    if status != 0:
        print("the run failed: no figure for the target")
    elif args.kernels == 200_000:
        verdict = "met" if peak < TARGET_BYTES else "missed"
        print(f"target: under {TARGET_BYTES / 2**30:.0f} GiB for 200,000 kernels: {verdict}")
    return status


if __name__ == "__main__":
    sys.exit(main())
