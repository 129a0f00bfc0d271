"""Synthetic experiments and hand-built models for the analysis tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from perfcast.core.experiment import Experiment, Parameter
from perfcast.core.function import Factor, Model, Term


def experiment(
    kernels: Mapping[str, Callable[..., np.ndarray]],
    grid: Mapping[str, Sequence[float]],
    repetitions: int = 5,
    noise: float = 0.0,
    seed: int = 0,
    roles: Mapping[str, str] | None = None,
    metadata: Mapping[str, str] | None = None,
) -> Experiment:
    """Measurements ``f(**point) * lognormal(noise)`` of every kernel on the full grid."""
    rng = np.random.default_rng(seed)
    names = list(grid)
    mesh = np.meshgrid(*[np.asarray(grid[n], dtype=float) for n in names], indexing="ij")
    points = {n: m.ravel() for n, m in zip(names, mesh, strict=True)}
    size = len(mesh[0].ravel())
    names_column, reps, values = [], [], []
    for kernel, function in kernels.items():
        truth = np.broadcast_to(function(**points), (size,))
        for r in range(repetitions):
            factor = np.exp(rng.normal(0.0, noise, size)) if noise else 1.0
            names_column.append(np.full(size, kernel, dtype=object))
            reps.append(np.full(size, r))
            values.append(truth * factor)
    count = len(values)
    frame = pd.DataFrame(
        {
            "kernel": np.concatenate(names_column),
            "metric": "time",
            **{n: np.tile(v, count) for n, v in points.items()},
            "repetition": np.concatenate(reps),
            "value": np.concatenate(values),
        }
    )
    roles = roles or {}
    parameters = [Parameter(n, roles.get(n)) for n in names]
    return Experiment.from_frame(frame, parameters, metadata=metadata, source="synthetic")


def model(kernel: str, parameters: Sequence[str], constant: float, *terms) -> Model:
    """``Model`` from terms given as ``(coefficient, {param: (exponent, log_exponent)})``."""
    built = tuple(
        Term(c, tuple(Factor(p, Fraction(e), lg) for p, (e, lg) in factors.items()))
        for c, factors in terms
    )
    return Model(kernel, "time", tuple(parameters), constant, built)
