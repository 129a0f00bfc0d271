"""Peak memory of ``perfcast model`` on a Parquet input read whole against read in blocks of
kernels (``--stream-kernels``), each in a fresh process.

The input: ``--kernels`` synthetic one-parameter kernels (six values of ``p``, five
repetitions, the kernel set of :mod:`benchmarks.distributed`) in a Parquet long table with row
groups of 100,000 rows. The table gives the input's size on disk and in memory (the long
table's columns), each run's peak resident memory, CPU seconds and wall seconds (with the load
average), and the number of models written.

    .venv/bin/python -m benchmarks.stream_memory --kernels 200000 --block 10000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.distributed import ONE_PARAMETER, synthetic

#: Runs ``perfcast`` with the arguments given and prints its peak memory (MiB), CPU seconds
#: and exit status.
PEAK_SCRIPT = """
import resource, sys
from perfcast import cli
status = cli.main(sys.argv[1:])
usage = resource.getrusage(resource.RUSAGE_SELF)
print(usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, status)
"""


def write_input(path: Path, kernels: int) -> float:
    """Write the input table; returns its in-memory size (MiB) as numpy columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = synthetic(kernels, ONE_PARAMETER, seed=1).frame
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=100_000)
    return float(frame.memory_usage(deep=True).sum()) / 2**20


def run(*argv: str) -> dict:
    """``perfcast`` with ``argv`` in a fresh process: its peak memory, CPU and wall time."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PEAK_SCRIPT, *argv], capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - start
    peak, cpu, status = done.stdout.split()[-3:]
    if status != "0":
        raise SystemExit(f"perfcast {' '.join(argv)} failed:\n{done.stderr}")
    return {"peak": float(peak), "cpu": float(cpu), "wall": seconds, "load": load}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=200_000)
    parser.add_argument("--block", type=int, default=10_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="perfcast-stream-") as folder:
        table, out = Path(folder) / "runs.parquet", Path(folder) / "models.json"
        in_memory = write_input(table, args.kernels)
        on_disk = table.stat().st_size / 2**20
        print(f"input: {args.kernels:,} kernels, {on_disk:.0f} MiB Parquet, {in_memory:.0f} MiB")
        print("| read | peak MiB | CPU s | wall s (load) | models |")
        print("|---|---|---|---|---|")
        for label, extra in (
            ("whole", []),
            (f"blocks of {args.block:,} kernels", ["--stream-kernels", str(args.block)]),
        ):
            figures = run("model", str(table), "--format", "json", "--out", str(out), *extra)
            models = len(json.loads(out.read_text())["models"])
            print(
                f"| {label} | {figures['peak']:.0f} | {figures['cpu']:.1f} "
                f"| {figures['wall']:.1f} ({figures['load']:.1f}) | {models:,} |",
                flush=True,
            )
    peak_here = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"(this process, which built the input: {peak_here:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
