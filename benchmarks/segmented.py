"""Segmented models: perfcast's ``segmented`` modeler and Extra-P's segmented modeler side by side.

Data: one parameter ``p`` at 12 values 4, 8, ..., 8192, 5 repetitions, uniform multiplicative
noise of a level drawn per kernel from 1 to 10 %. A *broken* kernel follows ``a0 + a1*f(p)`` up
to a breakpoint and ``b0 + b1*g(p)`` beyond it: ``f`` and ``g`` two different building blocks of
Extra-P's 42, the breakpoint between two measured values (at least 4 on either side, position
drawn uniformly), ``a0``, ``a1`` log-uniform in 1e-2..1e2 with the term at least 5 % of the
value at the break, and the second piece starting at 1 to 2 times the first's value there and
growing by 1 to 10 times that value up to the largest ``p``. A *plain* kernel is ``a0 + a1*f(p)``
alone (the control: it must stay in one piece).

Figures per tool: share of kernels with the right number of segments (broken: 2, plain: 1), of
broken kernels whose breakpoint lies within one measured step of the true one (the last
measured value of the first segment at most one position off), of broken kernels whose last
segment has the true lead order of ``g``, and the modeling time.

Run from the repository root:
``python -m benchmarks.segmented [--quick] [--tools perfcast,extrap]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.extrap_env import DEFAULT_VENV, run_driver
from benchmarks.synthetic import BUILDING_BLOCKS
from perfcast.api import fit
from perfcast.core.experiment import Experiment

P_VALUES = 4.0 * 2.0 ** np.arange(12)
REPETITIONS = 5
MIN_SIDE = 4
DRIVER = Path(__file__).resolve().parent / "extrap_segmented_driver.py"


@dataclass(frozen=True)
class Truth:
    """What a kernel really is: its last measured index of the first piece (None: plain) and the
    lead order of its last piece."""

    last_of_first: int | None
    lead: tuple[Fraction, int]


@dataclass(frozen=True)
class Found:
    """What a tool says: segments, last measured index of the first segment, last lead order."""

    segments: int
    last_of_first: int | None
    lead: tuple[Fraction, int]


def block(index: int, x: np.ndarray) -> np.ndarray:
    exponent, log_exponent = BUILDING_BLOCKS[index]
    return x ** float(exponent) * np.log2(x) ** log_exponent


def draw(rng: np.random.Generator, broken: int, plain: int) -> tuple[np.ndarray, list[Truth]]:
    """Values (kernels, points, repetitions) and truths: ``broken`` kernels, then ``plain``."""
    values, truths = [], []
    for kernel in range(broken + plain):
        f = int(rng.integers(len(BUILDING_BLOCKS)))
        a0 = 10 ** rng.uniform(-2, 2)
        a1 = 10 ** rng.uniform(-2, 2)
        last = int(rng.integers(MIN_SIDE - 1, len(P_VALUES) - MIN_SIDE))
        anchor = P_VALUES[last] if kernel < broken else P_VALUES[-1]
        a1 = max(a1, 0.05 / 0.95 * a0 / block(f, np.array([anchor]))[0])
        exact = a0 + a1 * block(f, P_VALUES)
        if kernel < broken:
            g = int(rng.choice([i for i in range(len(BUILDING_BLOCKS)) if i != f]))
            start = exact[last] * rng.uniform(1.0, 2.0)
            rise = exact[last] * 10 ** rng.uniform(0, 1)
            span = block(g, P_VALUES[-1:])[0] - block(g, P_VALUES[last + 1 : last + 2])[0]
            b1 = rise / span
            b0 = start - b1 * block(g, P_VALUES[last + 1 : last + 2])[0]
            exact = np.where(np.arange(len(P_VALUES)) <= last, exact, b0 + b1 * block(g, P_VALUES))
            truths.append(Truth(last, (BUILDING_BLOCKS[g][0], BUILDING_BLOCKS[g][1])))
        else:
            truths.append(Truth(None, (BUILDING_BLOCKS[f][0], BUILDING_BLOCKS[f][1])))
        noise = rng.uniform(0.01, 0.10)
        values.append(
            exact[:, None] * (1 + rng.uniform(-noise, noise, (len(P_VALUES), REPETITIONS)))
        )
    return np.array(values), truths


def experiment_of(values: np.ndarray) -> Experiment:
    kernels, points, repetitions = np.meshgrid(
        np.arange(values.shape[0]), np.arange(values.shape[1]), np.arange(values.shape[2]),
        indexing="ij",
    )  # fmt: skip
    frame = pd.DataFrame(
        {
            "kernel": [f"k{k:04d}" for k in kernels.ravel()],
            "metric": "time",
            "p": P_VALUES[points.ravel()],
            "repetition": repetitions.ravel(),
            "value": values.ravel(),
        }
    )
    return Experiment.from_frame(frame)


def run_perfcast(values: np.ndarray) -> tuple[list[Found], float]:
    experiment = experiment_of(values)
    start = time.perf_counter()
    models = fit(experiment, modeler="segmented")
    seconds = time.perf_counter() - start
    by_kernel = {m.kernel: m for m in models.models}
    found = []
    for k in range(values.shape[0]):
        model = by_kernel[f"k{k:04d}"]
        last = None
        if model.segments:
            value = model.segments[0].breakpoint.value
            last = int(np.searchsorted(P_VALUES, value, side="left")) - 1
        exponent, log_exponent = model.lead_order("p")
        found.append(Found(max(len(model.segments), 1), last, (exponent, log_exponent)))
    return found, seconds


def run_extrap(values: np.ndarray, venv: Path) -> tuple[list[Found], float]:
    kernels = [f"k{k:04d}" for k in range(values.shape[0])]
    arrays = {
        "parameters": np.array(["p"]),
        "kernels": np.array(kernels),
        "points": P_VALUES[:, None],
        "values": values,
        "eval_points": P_VALUES[-1:, None],
    }
    document = run_driver(venv, DRIVER, arrays, prefix="perfcast-segmented-")
    found = []
    for name in kernels:
        entry = document["models"][name]
        last = None
        if entry["segments"] == 2:
            last = int(np.argmin(np.abs(P_VALUES - entry["change_points"][0])))
        lead = (Fraction(entry["lead"][0]), int(Fraction(entry["lead"][1])))
        found.append(Found(entry["segments"], last, lead))
    return found, float(document["seconds"])


def scores(found: Sequence[Found], truths: Sequence[Truth]) -> dict[str, float]:
    broken = [(f, t) for f, t in zip(found, truths, strict=True) if t.last_of_first is not None]
    plain = [(f, t) for f, t in zip(found, truths, strict=True) if t.last_of_first is None]
    return {
        "broken: 2 segments": np.mean([f.segments == 2 for f, _ in broken]),
        "plain: 1 segment": np.mean([f.segments == 1 for f, _ in plain]) if plain else np.nan,
        "breakpoint within one step": np.mean(
            [
                f.last_of_first is not None and abs(f.last_of_first - t.last_of_first) <= 1
                for f, t in broken
            ]
        ),  # fmt: skip
        "last segment's lead order": np.mean([f.lead == t.lead for f, t in broken]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 kernels instead of 300")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tools", default="perfcast,extrap")
    parser.add_argument("--extrap-venv", type=Path, default=DEFAULT_VENV)
    args = parser.parse_args(argv)
    broken, plain = (40, 20) if args.quick else (200, 100)
    values, truths = draw(np.random.default_rng(args.seed), broken, plain)
    rows = {}
    for tool in args.tools.split(","):
        if tool == "perfcast":
            found, seconds = run_perfcast(values)
        elif tool == "extrap":
            found, seconds = run_extrap(values, args.extrap_venv)
        else:
            parser.error(f"unknown tool {tool!r}")
        rows[tool] = {**scores(found, truths), "seconds": seconds}
    command = "python -m benchmarks.segmented " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    print(f"{broken} broken + {plain} plain kernels, seed {args.seed}: `{command.strip()}`\n")
    names = list(next(iter(rows.values())))
    print("| tool | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for tool, row in rows.items():
        cells = [f"{row[n]:.1f}" if n == "seconds" else f"{100 * row[n]:.0f} %" for n in names]
        print(f"| {tool} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
