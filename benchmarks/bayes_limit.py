"""The best lead-order rate any tool can reach on the one-parameter accuracy set.

The Bayes-optimal classifier knows everything about how the data were made: the truth is
``c0 + c1*f(p)`` with ``f`` one of the 42 building blocks (each equally often), ``c0`` and ``c1``
independent and log-uniform in [1e-2, 1e2] conditioned on the term's 5 % share at the largest
point, and every repetition is ``value * (1 + u)`` with ``u ~ U(-e, e)`` and ``e`` known. It
picks the block of highest posterior probability, so no rule can have a higher expected share of
right lead orders on these data. Comparing perfcast with it separates what a better tool could
still gain from what the data do not tell.

The posterior of a block is its evidence: the likelihood integrated over the prior of
``(c0, c1)``. Under uniform noise the likelihood is ``prod (2 e f_i)^-R`` where every repetition
lies within ``f_i (1 +- e)`` and zero elsewhere, and those conditions, like the prior's range and
share, are half-planes in ``(c0, c1)``: the integral runs over a small convex polygon. It is
computed exactly up to Monte Carlo error by sampling uniformly inside that polygon.

Run from the repository root:
``python -m benchmarks.bayes_limit [--seeds 1,2,3] [--noise 0.01] [--no-extrap]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np

from benchmarks import report, synthetic
from benchmarks.evaluation import Fit, score
from benchmarks.tools import ToolUnavailable, extrap_runner, perfcast_runner
from perfcast.core.function import Factor, Model, Term
from perfcast.model.fitting.blocks import evaluate_blocks

#: Monte Carlo samples per block and kernel.
SAMPLES = 20_000


def block_basis(points: np.ndarray) -> np.ndarray:
    """Every building block at ``points`` (increasing), shape (42, n_points)."""
    return evaluate_blocks(synthetic.BUILDING_BLOCKS, points)


def prior_areas(largest: np.ndarray, grid_size: int = 4001) -> np.ndarray:
    """Area, in ``(log10 c0, log10 c1)``, of the prior's support for each block.

    The support is the square of :data:`synthetic.INDEPENDENT_RANGE` cut by the 5 % share
    condition ``c1 f(P) >= MIN_SHARE (c0 + c1 f(P))``. ``largest`` holds each block's value at the
    largest point.
    """
    low, high = synthetic.INDEPENDENT_RANGE
    u = np.linspace(low, high, grid_size)
    # c1 >= c0 * share / ((1 - share) f(P))  <=>  log10 c1 >= log10 c0 + offset
    offset = np.log10(synthetic.MIN_SHARE / ((1.0 - synthetic.MIN_SHARE) * largest))
    lengths = np.clip(high - np.maximum(low, u[None, :] + offset[:, None]), 0.0, high - low)
    return np.trapezoid(lengths, u, axis=1)


def clip(polygon: np.ndarray, normal: np.ndarray, bound: float) -> np.ndarray:
    """The part of a convex polygon (vertices in order, (V, 2)) where ``normal . x <= bound``."""
    if len(polygon) == 0:
        return polygon
    side = polygon @ normal - bound
    kept = []
    for i in range(len(polygon)):
        j = (i + 1) % len(polygon)
        if side[i] <= 0:
            kept.append(polygon[i])
        if (side[i] < 0 < side[j]) or (side[j] < 0 < side[i]):
            t = side[i] / (side[i] - side[j])
            kept.append(polygon[i] + t * (polygon[j] - polygon[i]))
    return np.array(kept).reshape(-1, 2)


def feasible_polygon(lower: np.ndarray, upper: np.ndarray, block: np.ndarray) -> np.ndarray:
    """The ``(c0, c1)`` where the likelihood and the prior are both positive.

    Every repetition within ``f_i (1 +- e)`` means ``lower_i <= c0 + c1 f(p_i) <= upper_i``; the
    prior asks for both coefficients in their range and the 5 % share. All are half-planes.
    """
    low, high = 10.0 ** np.array(synthetic.INDEPENDENT_RANGE)
    polygon = np.array([[low, low], [high, low], [high, high], [low, high]])
    share = synthetic.MIN_SHARE
    polygon = clip(polygon, np.array([share, -(1.0 - share) * block[-1]]), 0.0)
    for value, below, above in zip(block, lower, upper, strict=True):
        polygon = clip(polygon, np.array([1.0, value]), above)
        polygon = clip(polygon, np.array([-1.0, -value]), -below)
    return polygon


def sample_polygon(
    polygon: np.ndarray, samples: int, rng: np.random.Generator
) -> tuple[np.ndarray, float]:
    """Uniform points in a convex polygon (a fan of triangles) and the polygon's area.

    A polygon without area (a segment or a point) gives no points.
    """
    first, second, third = polygon[0], polygon[1:-1], polygon[2:]
    edges_a, edges_b = second - first, third - first
    areas = 0.5 * np.abs(edges_a[:, 0] * edges_b[:, 1] - edges_a[:, 1] * edges_b[:, 0])
    total = float(areas.sum())
    if total <= 0.0:
        return np.empty((0, 2)), 0.0
    triangle = rng.choice(len(areas), size=samples, p=areas / total)
    u, v = rng.random((2, samples))
    folded = u + v > 1.0
    u, v = np.where(folded, 1.0 - u, u), np.where(folded, 1.0 - v, v)
    points = first + u[:, None] * edges_a[triangle] + v[:, None] * edges_b[triangle]
    return points, total


def log_evidence(
    values: np.ndarray,
    basis: np.ndarray,
    noise: float,
    areas: np.ndarray,
    rng: np.random.Generator,
    samples: int = SAMPLES,
) -> np.ndarray:
    """Log evidence of every block for one kernel (``-inf`` where the data rule it out).

    Parameters
    ----------
    values : ndarray, shape (n_points, n_repetitions)
        The kernel's measurements.
    basis : ndarray, shape (n_blocks, n_points)
        :func:`block_basis` at the measured points.
    noise : float
        The half-width ``e`` of the uniform relative noise (> 0).
    areas : ndarray, shape (n_blocks,)
        :func:`prior_areas` of the blocks.
    rng : numpy.random.Generator
        Source of the Monte Carlo samples.
    samples : int
        Monte Carlo samples per block, drawn inside its :func:`feasible_polygon`.

    Returns
    -------
    ndarray, shape (n_blocks,)
    """
    repetitions = values.shape[1]
    lower = values.max(axis=1) / (1.0 + noise)
    upper = values.min(axis=1) / (1.0 - noise)
    evidence = np.full(len(basis), -np.inf)
    for index, block in enumerate(basis):
        polygon = feasible_polygon(lower, upper, block)
        if len(polygon) < 3:
            continue
        points, area = sample_polygon(polygon, samples, rng)
        if area <= 0.0:  # a segment or a point: no mass
            continue
        constant, slope = points.T
        fitted = constant[:, None] + slope[:, None] * block[None, :]
        log_weight = -repetitions * np.log(2.0 * noise * fitted).sum(axis=1)
        log_weight -= np.log(constant * slope * np.log(10.0) ** 2)
        peak = log_weight.max()
        evidence[index] = peak + np.log(np.exp(log_weight - peak).mean() * area / areas[index])
    return evidence


def bayes_fits(kernel_set: synthetic.KernelSet, seed: int = 0) -> dict[str, Fit]:
    """The most probable block of every kernel, as fits for :func:`evaluation.score`.

    Parameters
    ----------
    kernel_set : KernelSet
        A one-parameter set of :mod:`benchmarks.synthetic` with uniform noise above 0 and the
        default coefficient draw (the posterior assumes both).
    seed : int
        Seed of the Monte Carlo samples.

    Returns
    -------
    dict of str to Fit
        By kernel. The prediction is the chosen block's, with least-squares coefficients on the
        means (only the lead order is of interest here).
    """
    if kernel_set.parameters != ("p",) or kernel_set.noise <= 0:
        raise ValueError("the Bayes limit is defined for the one-parameter set with noise > 0")
    points = kernel_set.points[:, 0]
    basis = block_basis(points)
    areas = prior_areas(basis[:, -1])
    rng = np.random.default_rng(seed)
    extrapolate = synthetic.extrapolation_point(kernel_set.parameters)
    fits = {}
    for truth, values in zip(kernel_set.truths, kernel_set.values, strict=True):
        evidence = log_evidence(values, basis, kernel_set.noise, areas, rng)
        exponent, log_exponent = synthetic.BUILDING_BLOCKS[int(np.argmax(evidence))]
        term = Term(1.0, (Factor("p", exponent, log_exponent),))
        design = np.column_stack([np.ones_like(points), term.basis({"p": points})])
        (c0, c1), *_ = np.linalg.lstsq(design, values.mean(axis=1), rcond=None)
        model = Model(truth.kernel, "time", ("p",), float(c0), (Term(float(c1), term.factors),))
        fits[truth.kernel] = Fit.from_model(model, extrapolate)
    return fits


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seeds", default="1,2,3,4,5,6,7,8,9,10", help="comma-separated benchmark seeds"
    )
    parser.add_argument(
        "--noise", default="0.01,0.05,0.1", help="comma-separated noise half-widths"
    )
    parser.add_argument(
        "--no-extrap", action="store_true", help="leave Extra-P out (it needs its 650 MB venv)"
    )
    args = parser.parse_args(argv)
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.noise = [float(e) for e in args.noise.split(",")]
    allowed = [e for e in synthetic.NOISE_LEVELS if e > 0]
    if not set(args.noise) <= set(allowed):
        parser.error(f"--noise: choose among the accuracy benchmark's levels {allowed}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tools = {"perfcast": perfcast_runner()}
    if not args.no_extrap:
        tools["Extra-P"] = extrap_runner()
    shares: dict[float, list[list[float]]] = {noise: [] for noise in args.noise}
    rows = []
    for seed in args.seeds:
        rng = synthetic.function_rng(seed, 1)
        functions = synthetic.draw_functions(rng, 1, 10 * len(synthetic.BUILDING_BLOCKS))
        # all of the accuracy benchmark's levels, so that each level gets the very same noise
        sets = synthetic.kernel_sets(functions, "1 parameter", synthetic.NOISE_LEVELS, seed, 1)
        for kernel_set in (s for s in sets if s.noise in args.noise):
            point = synthetic.extrapolation_point(kernel_set.parameters)
            fits = [bayes_fits(kernel_set)]
            try:
                fits += [run(kernel_set).fits for run in tools.values()]
            except ToolUnavailable as error:
                print(f"error: {error}", file=sys.stderr)
                return 2
            lead = [score(kernel_set.truths, f, point).lead_order for f in fits]
            shares[kernel_set.noise].append(lead)
            label = f"±{100 * kernel_set.noise:g} %"
            rows.append([str(seed), label, *(report.percent(x) for x in lead)])
            print(f"done: seed {seed} at {label}", file=sys.stderr)
    for noise, lead in shares.items():
        mean = np.mean(lead, axis=0)
        rows.append(["mean", f"±{100 * noise:g} %", *(f"**{report.percent(x)}**" for x in mean)])
    print("## Bayes limit, one parameter\n")
    print(report.preamble("benchmarks.bayes_limit", args.seeds[0], argv) + "\n")
    header = ["seed", "noise", "Bayes-optimal", *tools]
    print(f"Lead order right, {len(functions)} kernels per row.\n")
    print(report.table(header, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
