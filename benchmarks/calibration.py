"""Calibration of the 95 % prediction intervals: how often they hold a held-out measurement.

Two kinds of data:

- Synthetic, with known truth (``benchmarks/synthetic.py``): one-parameter functions
  ``c0 + c1*f(p)`` over all 42 building blocks and strong-scaling functions
  ``c0 + c1*p^(-a) + c2*g(p)``, measured with 5 repetitions at p = 4, 8, 16, 32, 64 and at the
  held-out sixth point p = 128, under uniform noise of 1, 2, 5 and 10 %.
- The shared Extra-P files in ``tests/data/extrap`` (text, JSON, JSON lines): for every file and
  every parameter with at least 5 measured values, the points at that parameter's largest value
  are held out, the rest fitted. Files whose repetitions differ (noisy) are counted apart from
  those with identical repetitions or one measurement per point (deterministic), where an
  interval has almost no width and holds only if the model's form is exact.

A case is one kernel and its held-out points (one point on synthetic data; on the Extra-P files
every point at the held-out value, e.g. 125 for a four-parameter file): it counts as the share of
those points where the model's 95 % interval (:meth:`perfcast.core.function.Model.predict_interval`)
contains the mean of the held-out repetitions, so that a file with many points weighs as much as
one kernel. Points whose held-out mean is 0 and kernels the fit left out are not counted. The
column "covered or warned" also counts a miss whose model carries a quality-gate warning
(:mod:`perfcast.model.gates`) other than ``few-points`` (which holding out one of five values
causes): there the user was told not to trust the model; "also few-points" counts that warning
too. The interval width is relative to the held-out mean (median over cases).

Run from the repository root: ``python -m benchmarks.calibration [--seed 1]``; about a minute.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import perfcast
from benchmarks import synthetic
from perfcast.core.experiment import Experiment

ROOT = Path(__file__).resolve().parents[1]
EXTRAP = ROOT / "tests" / "data" / "extrap"
NOISE_LEVELS = (0.01, 0.02, 0.05, 0.10)
TRAINING = (4.0, 8.0, 16.0, 32.0, 64.0)
HELD_OUT = 128.0
LEVEL = 0.95
#: Functions per synthetic group: each building block twice; strong scaling 4 decays x 5 growths
#: x 4 draws.
ONE_PARAMETER_COUNT = 84
STRONG_SCALING_DRAWS = 4


@dataclass
class Coverage:
    """Held-out cases of one group and how many the interval held."""

    group: str
    cases: int = 0
    covered: float = 0.0
    warned: float = 0.0
    few_points: float = 0.0
    widths: list[float] | None = None

    def add(
        self, inside: np.ndarray, relative_width: np.ndarray, warned: bool, few_points: bool
    ) -> None:
        self.cases += 1
        self.covered += float(np.mean(inside))
        self.warned += float(np.mean(~inside)) if warned else 0.0
        self.few_points += float(np.mean(~inside)) if few_points and not warned else 0.0
        self.widths = (self.widths or []) + [float(np.median(relative_width))]

    @property
    def share(self) -> float:
        return self.covered / self.cases if self.cases else float("nan")

    def row(self) -> str:
        median = float(np.median(self.widths)) if self.widths else float("nan")
        either = (self.covered + self.warned) / self.cases if self.cases else float("nan")
        any_warning = either + (self.few_points / self.cases if self.cases else float("nan"))
        return (
            f"| {self.group} | {self.cases} | {self.covered:.1f} | {100 * self.share:.1f} % "
            f"| {100 * either:.1f} % | {100 * any_warning:.1f} % | {100 * median:.1f} % |"
        )


def check(models: perfcast.ModelSet, held_out: Experiment, coverage: Coverage) -> None:
    """Add to ``coverage`` every kernel and point of ``held_out`` that ``models`` modeled."""
    for series in held_out.series():
        means = series.means
        for row, kernel in enumerate(series.kernels):
            model = models.get(kernel, {}).get(series.metric)
            if model is None:
                continue
            target = means[row]
            _, lower, upper = model.predict_interval(series.points, LEVEL)
            usable = (target != 0) & np.isfinite(target)
            if not usable.any():
                continue
            inside = (lower[usable] <= target[usable]) & (target[usable] <= upper[usable])
            width = (upper[usable] - lower[usable]) / np.abs(target[usable])
            warned = any(w.code != "few-points" for w in model.warnings)
            few_points = any(w.code == "few-points" for w in model.warnings)
            coverage.add(inside, width, warned, few_points)


def synthetic_groups(seed: int) -> Iterator[tuple[str, list[perfcast.core.function.Model]]]:
    rng = synthetic.function_rng(seed, 11)
    yield "1 parameter", synthetic.draw_functions(rng, 1, ONE_PARAMETER_COUNT)
    rng = synthetic.function_rng(seed, 12)
    yield "strong scaling", synthetic.draw_strong_scaling(rng, STRONG_SCALING_DRAWS)


def synthetic_coverage(seed: int) -> list[Coverage]:
    rows = []
    for name, truths in synthetic_groups(seed):
        points = np.array([[p] for p in (*TRAINING, HELD_OUT)])
        for index, noise in enumerate(NOISE_LEVELS):
            rng = np.random.default_rng([seed, 13, index])
            values = synthetic.measure(rng, truths, points, noise)
            data = synthetic.KernelSet(name, ("p",), noise, truths, points, values)
            frame = data.to_frame()
            training = frame[frame["p"] < HELD_OUT]
            held = frame[frame["p"] == HELD_OUT]
            fitted = perfcast.fit(Experiment.from_frame(training, parameters=["p"]))
            coverage = Coverage(f"{name}, noise {100 * noise:g} %")
            check(fitted, Experiment.from_frame(held, parameters=["p"]), coverage)
            rows.append(coverage)
    return rows


def extrap_files() -> list[Path]:
    patterns = ("text/**/*.txt", "json/*.JSON", "jsonlines/*.jsonl")
    return sorted(path for pattern in patterns for path in EXTRAP.glob(pattern))


def extrap_coverage() -> tuple[Coverage, Coverage, list[str]]:
    """Coverage on the noisy files and on the deterministic ones, and the cases used."""
    noisy = Coverage("shared Extra-P files, noisy repetitions")
    deterministic = Coverage("shared Extra-P files, deterministic")
    used = []
    for path in extrap_files():
        try:
            experiment = perfcast.load(path)
        except perfcast.InputError:
            continue
        frame = experiment.frame
        spread = any(np.any(np.nanstd(s.values, axis=2) > 0) for s in experiment.series())
        coverage = noisy if spread else deterministic
        for name in experiment.parameter_names:
            values = np.unique(frame[name])
            if len(values) < 5:
                continue
            training = frame[frame[name] < values[-1]]
            held = frame[frame[name] == values[-1]]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fitted = perfcast.fit(
                        Experiment.from_frame(training, experiment.parameters, source=str(path))
                    )
            except perfcast.InputError:
                continue
            before = coverage.cases
            check(fitted, Experiment.from_frame(held, experiment.parameters), coverage)
            if coverage.cases > before:
                used.append(f"{path.relative_to(EXTRAP)} ({name})")
    return noisy, deterministic, used


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1, help="seed of functions and noise")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = synthetic_coverage(args.seed)
    noisy, deterministic, used = extrap_coverage()
    total = Coverage("all synthetic")
    total.cases = sum(r.cases for r in rows)
    total.covered = sum(r.covered for r in rows)
    total.warned = sum(r.warned for r in rows)
    total.few_points = sum(r.few_points for r in rows)
    total.widths = [w for r in rows for w in r.widths or []]
    print(
        "| data | cases | covered | coverage | covered or warned | also few-points "
        "| median interval width |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in [*rows, total, noisy, deterministic]:
        print(row.row())
    print(f"\nExtra-P files and held-out parameters ({len(used)}): {', '.join(used)}")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
