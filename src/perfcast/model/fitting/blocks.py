"""The hypothesis space: PMNF building blocks ``x^i * log2(x)^j``."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np

Block = tuple[F, int]

# Extra-P's 42 default single-parameter building blocks (exponent, log exponent).
EXTRAP_BUILDING_BLOCKS: tuple[Block, ...] = tuple(
    (F(n, d), j)
    for n, d, j in [
        (0, 1, 1), (0, 1, 2), (1, 4, 0), (1, 3, 0), (1, 4, 1), (1, 3, 1), (1, 4, 2), (1, 3, 2),
        (1, 2, 0), (1, 2, 1), (1, 2, 2), (2, 3, 0), (3, 4, 0), (2, 3, 1), (3, 4, 1), (4, 5, 0),
        (2, 3, 2), (3, 4, 2), (1, 1, 0), (1, 1, 1), (1, 1, 2), (5, 4, 0), (5, 4, 1), (4, 3, 0),
        (4, 3, 1), (3, 2, 0), (3, 2, 1), (3, 2, 2), (5, 3, 0), (7, 4, 0), (2, 1, 0), (2, 1, 1),
        (2, 1, 2), (9, 4, 0), (7, 3, 0), (5, 2, 0), (5, 2, 1), (5, 2, 2), (8, 3, 0), (11, 4, 0),
        (3, 1, 0), (3, 1, 1),
    ]
)  # fmt: skip

# Decreasing blocks for strong scaling: x^-i and x^-i * log2(x).
NEGATIVE_BUILDING_BLOCKS: tuple[Block, ...] = tuple(
    (-F(e), j) for e in ("1/4", "1/3", "1/2", "2/3", "3/4", "1", "4/3", "3/2", "2") for j in (0, 1)
)


def building_blocks(negative: bool) -> tuple[Block, ...]:
    """The default blocks, plus the decreasing ones when ``negative`` is true."""
    return EXTRAP_BUILDING_BLOCKS + (NEGATIVE_BUILDING_BLOCKS if negative else ())


def evaluate_blocks(blocks: tuple[Block, ...], x: np.ndarray) -> np.ndarray:
    """Every block at the values ``x``: shape (len(blocks), len(x)). ``x`` must be positive."""
    x = np.asarray(x, dtype=float)
    exponents = np.array([float(e) for e, _ in blocks])[:, None]
    logs = np.array([j for _, j in blocks])[:, None]
    return np.power(x[None, :], exponents) * np.power(np.log2(x)[None, :], logs)
