"""Time ``perfcast.model.fit`` on 10,000 one-parameter kernels, three fits in one process.

``--whole`` times ``perfcast.fit`` instead: the same search plus what every user-facing fit adds
(the quality gates and the backtests that widen intervals beyond the data).

Run from a checkout (``.venv/bin/python -m benchmarks.fit_time``) or against another one's
sources (``PYTHONPATH=OTHER/src .venv/bin/python -m benchmarks.fit_time``) to compare two
versions of the modeling code back to back, without the Extra-P side of ``benchmarks.speed``.
The data are built with pandas and ``Experiment.from_frame``, which every version has.
"""

from __future__ import annotations

import argparse
import importlib
import time

import numpy as np
import pandas as pd

import perfcast
from perfcast.model import fit


def _experiment_class() -> type:
    """``Experiment`` wherever this version of perfcast keeps it."""
    for module in ("perfcast.core.experiment", "perfcast.experiment"):
        try:
            return importlib.import_module(module).Experiment  # type: ignore[no-any-return]
        except ImportError:
            continue
    raise ImportError("no perfcast Experiment found")


def synthetic_frame(kernels: int, seed: int) -> pd.DataFrame:
    """``a + b*p*log2(p)`` per kernel at six values of ``p``, five repetitions, ±5 % noise."""
    rng = np.random.default_rng(seed)
    ps = np.array([2, 4, 8, 16, 32, 64])
    kernel = np.repeat(np.arange(kernels), len(ps) * 5)
    p = np.tile(np.repeat(ps, 5), kernels)
    a, b = rng.uniform(0.1, 10, kernels)[kernel], rng.uniform(0.1, 10, kernels)[kernel]
    value = (a + b * p * np.log2(p)) * rng.uniform(0.95, 1.05, len(kernel))
    names = np.array([f"k{k}" for k in range(kernels)])[kernel]
    return pd.DataFrame({"kernel": names, "metric": "time", "p": p, "value": value})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=10_000)
    parser.add_argument("--fits", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--whole", action="store_true", help="time perfcast.fit")
    args = parser.parse_args()
    experiment = _experiment_class().from_frame(synthetic_frame(args.kernels, args.seed))
    name, function = ("perfcast.fit", perfcast.fit) if args.whole else ("fit", fit)
    for _ in range(args.fits):
        start = time.perf_counter()
        function(experiment)
        print(f"{name} of {args.kernels} kernels: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
