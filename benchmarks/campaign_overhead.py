"""Cost of the campaign runner per run, and the floor of its wall-time measurement.

Runs an empty C program (``int main(void) { return 0; }``) N times three ways and prints, per run:

* ``bare``: ``subprocess.run`` alone (what starting a process costs here);
* ``measured``: the wall time the runner records for the empty program (the floor of metric
  ``time``: process start and exit, included in every measured wall time);
* ``campaign``: the runner's whole cost per run (temporary files, environment, journal line with
  fsync, progress), i.e. elapsed campaign time / N;
* ``sleep excess``: measured wall time minus 100 ms for ``sleep 0.1``, with and without a
  timeout (with one, the exit is seen through a pidfd; ``Popen.wait(timeout)`` would poll
  every <= 50 ms); the two should agree.

Usage: .venv/bin/python benchmarks/campaign_overhead.py [N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perfcast.measure.campaign import run_campaign
from perfcast.measure.process import run_process
from perfcast.measure.spec import load_campaign

SLEEP_SECONDS = 0.1


def main(runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="perfcast-bench-") as scratch:
        directory = Path(scratch)
        (directory / "empty.c").write_text("int main(void) { return 0; }\n")
        subprocess.run(
            ["cc", "-O2", "-o", str(directory / "empty"), str(directory / "empty.c")], check=True
        )
        start = time.perf_counter()
        for _ in range(runs):
            subprocess.run([str(directory / "empty")], check=True)
        bare = (time.perf_counter() - start) / runs

        campaign_path = directory / "empty.toml"
        campaign_path.write_text(
            f'command = "./empty {{i}}"\nseed = 1\n[parameters]\ni = "1..{runs}"\n'
        )
        campaign = load_campaign(campaign_path)
        start = time.perf_counter()
        result = run_campaign(campaign)
        per_run = (time.perf_counter() - start) / runs
        frame = result.experiment.frame
        measured = frame[frame.metric == "time"].value
        sleeper = ["sleep", str(SLEEP_SECONDS)]
        excess = {
            timeout: [
                run_process(sleeper, directory, {}, timeout).wall_time - SLEEP_SECONDS
                for _ in range(20)
            ]
            for timeout in (60, None)
        }

    print(f"runs: {runs}")
    print(f"bare subprocess.run:          {bare * 1e3:.2f} ms per run")
    print(f"measured wall time (median):  {statistics.median(measured) * 1e3:.2f} ms")
    print(f"campaign runner, total:       {per_run * 1e3:.2f} ms per run")
    for timeout, values in excess.items():
        label = f"sleep excess, timeout={timeout}:"
        print(f"{label:30s}{statistics.median(values) * 1e3:.2f} ms (median of 20)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
