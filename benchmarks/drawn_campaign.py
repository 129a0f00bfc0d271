"""A drawn campaign collecting features, against launching the same runs by hand.

The conjugate-gradient solver of ``benchmarks/learned_apps`` is instrumented with
``perfcast features`` and built with ``mpicc -O2``. ``perfcast run`` then measures ``--runs``
points drawn from ranges (``runs = N``, ``metrics = ["time", "features"]``); in the same
session the same points are launched by a bare loop of ``mpirun`` calls that only sets
``PERFCAST_FEATURES_FILE`` (the reference). Reported: the total wall time of both (the
campaign's bookkeeping: journal, scratch directories, records, the run table), and the mean
relative error of ``perfcast learn`` (extra-trees, CPU seconds) on held-out rows of the
campaign's own run table, with the features and with the drawn parameters only.

Run from the repository root: ``.venv/bin/python -m benchmarks.drawn_campaign [--runs 60]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from perfcast.api import campaign_run_table, load_campaign, run_campaign
from perfcast.io.run_table import RunTable
from perfcast.model.learned import LearnedModel
from perfcast.static.features import instrument_features

ROOT = Path(__file__).resolve().parents[1]
SOLVER = ROOT / "benchmarks" / "learned_apps" / "solver.c"
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
LAUNCHER = ["mpirun", "--oversubscribe", "-np", "{p}"]
COMMAND = ["./solver", "{n}", "{tolerance}", "{rhs}", "{seed}"]
PARAMETERS = ["n", "tolerance", "rhs", "seed", "p"]


def _campaign_settings(runs: int, seed: int, folder: Path) -> dict[str, object]:
    return {
        "runs": runs,
        "seed": seed,
        "launcher": LAUNCHER,
        "command": COMMAND,
        "workdir": str(folder),
        "metrics": ["time", "features"],
        "output": str(folder / "solver.csv"),
        "parameters": {
            "n": {"min": 60, "max": 200, "log": True},
            "tolerance": {"min": 1e-9, "max": 1e-3, "log": True},
            "rhs": [0, 1],
            "seed": {"min": 0, "max": 999999},
            "p": [1, 2],
        },
    }


def _bare_loop(points: list[dict[str, object]], folder: Path) -> float:
    """Wall seconds of launching every point once by hand, records to one file."""
    env = {**os.environ, **MPI_ENV, "PERFCAST_FEATURES_FILE": str(folder / "bare.jsonl")}
    begin = time.perf_counter()
    for values in points:
        argv = [w.format(**values) for w in [*LAUNCHER, *COMMAND]]
        subprocess.run(argv, check=True, capture_output=True, env=env, cwd=folder)
    return time.perf_counter() - begin


def _error(table: RunTable, features: list[str] | None, trees: int) -> float:
    order = np.random.default_rng(11).permutation(table.rows)
    train, test = order[: table.rows // 2], order[table.rows // 2 :]
    model = LearnedModel("extra-trees", trees=trees).fit(
        table.take(train), "cpu", features=features
    )
    held = table.take(test)
    predicted = np.array([p.value for p in model.predict(held)])
    truth = held.numeric["cpu"]
    return float(np.mean(np.abs(predicted - truth) / truth))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60, help="drawn points")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        print("needs mpicc and mpirun", file=sys.stderr)
        return 1
    folder = Path(tempfile.mkdtemp(prefix="learn-drawn-"))
    try:
        instrument_features([SOLVER], folder / "src")
        build = ["mpicc", "-O2", "-o", str(folder / "solver"), str(folder / "src" / "solver.c")]
        subprocess.run([*build, "-lm"], check=True, capture_output=True)
        campaign = load_campaign(_campaign_settings(args.runs, args.seed, folder))
        points = [campaign.values_of(point) for point in campaign.points()]
        bare = _bare_loop(points, folder)
        begin = time.perf_counter()
        run_campaign(campaign)
        measured = time.perf_counter() - begin
        table = campaign_run_table(campaign.results_path)
        command = "python -m benchmarks.drawn_campaign " + " ".join(argv or sys.argv[1:])
        print(f"Reproduce: `{command.strip()}`\n")
        print("| runs | bare mpirun loop | perfcast run | ratio |")
        print("|---|---|---|---|")
        print(f"| {args.runs} | {bare:.1f} s | {measured:.1f} s | {measured / bare:.2f} |\n")
        features = _error(table, None, args.trees)
        parameters = _error(table, PARAMETERS, args.trees)
        print("| run table rows | features | extra-trees error, features | parameters only |")
        print("|---|---|---|---|")
        print(f"| {table.rows} | {len(table.costs)} | {features:.1%} | {parameters:.1%} |")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
