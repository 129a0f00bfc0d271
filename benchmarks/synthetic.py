"""Synthetic kernels built from Extra-P's 42 single-parameter building blocks.

Each kernel is a known :class:`~perfcast.core.function.Model` (the truth), measured on a full
grid of 5 values per parameter with 5 repetitions and uniform multiplicative noise
``value * (1 + u)``, ``u ~ U(-e, e)``. Every term contributes at least 5 % of the function's value
at the largest measured point, so every term is visible in the data (``anchor="smallest"`` checks
this at the smallest point instead, where growing terms are smallest: an easier data set).

Two ways to give the terms coefficients (``coefficients=``):

- ``"independent"`` (default): the constant and every coefficient drawn log-uniformly in
  [1e-2, 1e2], independently, redrawn until every term has its 5 %. Fast-growing terms then
  usually dominate, as the coefficients of real codes do not know how large a term gets. Under
  this draw Extra-P reproduces the figures quoted for it in the issue (93 % lead order at 1 %
  noise); when 1,000 draws cannot give every term its 5 % (e.g. ``p^3*log2(p) + log2(n)``), the
  function falls back to the ``"shares"`` draw.
- ``"shares"``: every component (constant included) gets a share of the value at the anchor
  point, ``0.05 + (1 - 0.05 m) * Dirichlet(1, ..., 1)``, times a total drawn log-uniformly in
  1e-3..1e3. The term's share is then uniform in [5 %, 95 %]: a much harder data set, on which
  no selection rule can tell neighbouring building blocks apart at small shares.

Noise shapes (``shape=`` of :func:`measure`): ``uniform`` (default, the issue's), ``gaussian``
(normal with the standard deviation of the uniform of the same half-width, ``e / sqrt(3)``) and
``spikes`` (OS-jitter-like: Gaussian ``e / 3`` plus, for one repetition in ten, an exponential
delay of mean ``2 e``; right-skewed and heavy-tailed).

Draws are reproducible from one seed.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction as F

import numpy as np
import pandas as pd

from perfcast.core.function import Factor, Model, Term

# (exponent, log exponent) of Extra-P's single-parameter search space, in its order.
BUILDING_BLOCKS: tuple[tuple[F, int], ...] = tuple(
    (F(e), j)
    for e, j in [
        (0, 1), (0, 2), (F(1, 4), 0), (F(1, 3), 0), (F(1, 4), 1), (F(1, 3), 1), (F(1, 4), 2),
        (F(1, 3), 2), (F(1, 2), 0), (F(1, 2), 1), (F(1, 2), 2), (F(2, 3), 0), (F(3, 4), 0),
        (F(2, 3), 1), (F(3, 4), 1), (F(4, 5), 0), (F(2, 3), 2), (F(3, 4), 2), (1, 0), (1, 1),
        (1, 2), (F(5, 4), 0), (F(5, 4), 1), (F(4, 3), 0), (F(4, 3), 1), (F(3, 2), 0),
        (F(3, 2), 1), (F(3, 2), 2), (F(5, 3), 0), (F(7, 4), 0), (2, 0), (2, 1), (2, 2),
        (F(9, 4), 0), (F(7, 3), 0), (F(5, 2), 0), (F(5, 2), 1), (F(5, 2), 2), (F(8, 3), 0),
        (F(11, 4), 0), (3, 0), (3, 1),
    ]
)  # fmt: skip

PARAMETER_VALUES: dict[str, tuple[float, ...]] = {
    "p": (4.0, 8.0, 16.0, 32.0, 64.0),
    "n": (10.0, 20.0, 30.0, 40.0, 50.0),
    "q": (2.0, 4.0, 6.0, 8.0, 10.0),
}
PARAMETER_ORDER = ("p", "n", "q")
NOISE_LEVELS: tuple[float, ...] = (0.0, 0.01, 0.05, 0.10, 0.20)
REPETITIONS = 5
MIN_SHARE = 0.05
EXTRAPOLATION_FACTOR = 4.0
#: Where the shares of the components are fixed: the largest or the smallest measured point.
ANCHORS = {"largest": max, "smallest": min}
COEFFICIENT_DRAWS = ("independent", "shares")
INDEPENDENT_RANGE = (-2.0, 2.0)  # log10 of the coefficients of the "independent" draw
INDEPENDENT_TRIES = 1000

# Strong scaling: a decreasing term p^(-a) plus a slowly growing building block.
STRONG_SCALING_DECAYS: tuple[F, ...] = (F(1), F(1, 2), F(1, 3), F(2, 3))
STRONG_SCALING_GROWTHS: tuple[tuple[F, int], ...] = (
    (F(0), 1),
    (F(0), 2),
    (F(1, 4), 0),
    (F(1, 3), 0),
    (F(1, 2), 0),
)

# How the terms of a multi-parameter function combine: each inner tuple is one term, naming the
# parameters (by position) whose factors it multiplies.
COMBINATIONS: dict[int, tuple[tuple[tuple[int, ...], ...], ...]] = {
    1: (((0,),),),
    2: (((0, 1),), ((0,), (1,))),
    3: (((0, 1, 2),), ((0,), (1,), (2,)), ((0, 1), (2,))),
}


@dataclass(frozen=True)
class KernelSet:
    """A group of synthetic kernels measured at the same points with the same noise level.

    Attributes
    ----------
    name : str
        Group label, e.g. ``"1 parameter"`` or ``"strong scaling"``.
    parameters : tuple of str
        Parameter names, the columns of ``points``.
    noise : float
        Half-width ``e`` of the uniform relative noise.
    truths : list of Model
        The true functions; ``truths[k].kernel`` names kernel ``k``.
    points : ndarray, shape (n_points, n_parameters)
        The measured grid.
    values : ndarray, shape (n_kernels, n_points, n_repetitions)
        Noisy measurements.
    """

    name: str
    parameters: tuple[str, ...]
    noise: float
    truths: list[Model]
    points: np.ndarray
    values: np.ndarray

    @property
    def kernels(self) -> list[str]:
        """Kernel names, in the order of ``values``."""
        return [truth.kernel for truth in self.truths]

    def to_frame(self) -> pd.DataFrame:
        """The long table ``kernel, metric, <parameters...>, repetition, value``."""
        n_kernels, n_points, n_reps = self.values.shape
        index = np.indices((n_kernels, n_points, n_reps)).reshape(3, -1)
        frame = pd.DataFrame({"kernel": np.asarray(self.kernels, dtype=object)[index[0]]})
        frame["metric"] = "time"
        for column, name in enumerate(self.parameters):
            frame[name] = self.points[index[1], column]
        frame["repetition"] = index[2]
        frame["value"] = self.values.reshape(-1)
        return frame


def grid(parameters: Sequence[str]) -> np.ndarray:
    """Full grid of the benchmark's values of ``parameters``, shape (5**d, d)."""
    return np.array(list(itertools.product(*(PARAMETER_VALUES[name] for name in parameters))))


def extrapolation_point(parameters: Sequence[str]) -> np.ndarray:
    """The point at 4x the largest measured value of every parameter, shape (1, d)."""
    return np.array([[EXTRAPOLATION_FACTOR * max(PARAMETER_VALUES[name]) for name in parameters]])


def component_shares(rng: np.random.Generator, components: int) -> np.ndarray:
    """Shares of ``components`` parts of a total, each at least :data:`MIN_SHARE`, summing to 1."""
    return MIN_SHARE + (1.0 - MIN_SHARE * components) * rng.dirichlet(np.ones(components))


def build_function(
    rng: np.random.Generator,
    kernel: str,
    parameters: Sequence[str],
    term_shapes: Sequence[Sequence[Factor]],
    anchor: str = "largest",
    coefficients: str = "independent",
) -> Model:
    """Give the term shapes coefficients so every term has at least 5 % at the anchor point.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the shares and of the total scale (log-uniform in 1e-3..1e3).
    kernel : str
        Name of the resulting model.
    parameters : sequence of str
        All parameters of the function, in order.
    term_shapes : sequence of sequence of Factor
        The factors of each non-constant term.
    anchor : {"largest", "smallest"}
        The measured point (largest or smallest value of every parameter) where the shares hold.
    coefficients : {"independent", "shares"}
        How coefficients are drawn (see the module docstring).

    Returns
    -------
    Model
        ``c0 + sum(c_i * term_i)`` with positive coefficients.
    """
    pick = ANCHORS[anchor]
    at = {name: np.array([pick(PARAMETER_VALUES[name])]) for name in parameters}
    if coefficients == "independent":
        bases = np.array([float(Term(1.0, tuple(f)).basis(at)[0]) for f in term_shapes])
        for _ in range(INDEPENDENT_TRIES):
            drawn = 10.0 ** rng.uniform(*INDEPENDENT_RANGE, size=len(term_shapes) + 1)
            contributions = drawn[1:] * bases
            if np.all(contributions >= MIN_SHARE * (drawn[0] + contributions.sum())):
                terms = tuple(
                    Term(float(c), tuple(f)) for c, f in zip(drawn[1:], term_shapes, strict=True)
                )
                return Model(kernel, "time", tuple(parameters), float(drawn[0]), terms)
    shares = component_shares(rng, len(term_shapes) + 1)
    scale = 10.0 ** rng.uniform(-3.0, 3.0)
    terms = []
    for share, factors in zip(shares[1:], term_shapes, strict=True):
        shape = Term(1.0, tuple(factors))
        terms.append(Term(share * scale / float(shape.basis(at)[0]), shape.factors))
    return Model(kernel, "time", tuple(parameters), shares[0] * scale, tuple(terms))


NOISE_SHAPES = ("uniform", "gaussian", "spikes")
SPIKE_PROBABILITY = 0.1


def relative_noise(
    rng: np.random.Generator, noise: float, size: tuple[int, ...], shape: str = "uniform"
) -> np.ndarray:
    """Relative errors ``u`` of level ``noise`` and the given shape (see the module docstring)."""
    if shape == "uniform":
        return rng.uniform(-noise, noise, size)
    if shape == "gaussian":
        return rng.normal(0.0, noise / np.sqrt(3.0), size)
    if shape == "spikes":
        jitter = rng.normal(0.0, noise / 3.0, size)
        return jitter + (rng.random(size) < SPIKE_PROBABILITY) * rng.exponential(2 * noise, size)
    raise ValueError(f"unknown noise shape {shape!r}; choose one of {NOISE_SHAPES}")


def measure(
    rng: np.random.Generator,
    truths: Sequence[Model],
    points: np.ndarray,
    noise: float,
    shape: str = "uniform",
) -> np.ndarray:
    """Noisy repetitions of every function at every point, shape (K, P, REPETITIONS)."""
    exact = np.stack([truth.evaluate(points) for truth in truths])
    errors = relative_noise(rng, noise, (*exact.shape, REPETITIONS), shape)
    return exact[:, :, None] * (1.0 + errors)


def _random_block(rng: np.random.Generator) -> tuple[F, int]:
    return BUILDING_BLOCKS[rng.integers(len(BUILDING_BLOCKS))]


def draw_functions(
    rng: np.random.Generator,
    n_parameters: int,
    count: int,
    anchor: str = "largest",
    coefficients: str = "independent",
) -> list[Model]:
    """Random functions of ``n_parameters`` parameters.

    One parameter: ``count`` functions ``c0 + c1*f(p)`` cycling through every building block (so
    ``count = 42*k`` uses each block ``k`` times). Two and three parameters: a building block per
    parameter, combined with equal probability as one product term, a sum of one term per
    parameter, or (three parameters) ``f*g + h``.
    """
    parameters = PARAMETER_ORDER[:n_parameters]
    functions = []
    for index in range(count):
        if n_parameters == 1:
            blocks = [BUILDING_BLOCKS[index % len(BUILDING_BLOCKS)]]
        else:
            blocks = [_random_block(rng) for _ in parameters]
        combinations = COMBINATIONS[n_parameters]
        combination = combinations[rng.integers(len(combinations))]
        shapes = [
            [Factor(parameters[i], *blocks[i]) for i in term_parameters]
            for term_parameters in combination
        ]
        name = f"f{n_parameters}d_{index:05d}"
        functions.append(build_function(rng, name, parameters, shapes, anchor, coefficients))
    return functions


def draw_strong_scaling(
    rng: np.random.Generator,
    draws: int,
    anchor: str = "largest",
    coefficients: str = "independent",
    work: bool = False,
) -> list[Model]:
    """Functions ``c0 + c1*p^(-a) + c2*g(p)``: every decay ``a`` with every growth ``g``, ``draws``
    times each.

    With ``work``, the decaying term also carries a building block of ``n`` drawn uniformly (the
    work divided over the ranks): ``c0 + c1*f(n)*p^(-a) + c2*g(p)``.
    """
    parameters = ("p", "n") if work else ("p",)
    functions = []
    cases = itertools.product(range(draws), STRONG_SCALING_DECAYS, STRONG_SCALING_GROWTHS)
    for index, (_, decay, growth) in enumerate(cases):
        decaying = [Factor("p", -decay, 0)]
        if work:
            decaying.append(Factor("n", *_random_block(rng)))
        shapes = [decaying, [Factor("p", *growth)]]
        name = f"strong{'_work' if work else ''}_{index:05d}"
        functions.append(build_function(rng, name, parameters, shapes, anchor, coefficients))
    return functions


def kernel_sets(
    functions: Sequence[Model],
    name: str,
    noise_levels: Sequence[float],
    seed: int,
    stream: int,
    shape: str = "uniform",
) -> list[KernelSet]:
    """Measure the same functions once per noise level (independent noise per level).

    ``seed`` and ``stream`` (one per benchmark group) select the noise draws, ``shape`` their
    distribution.
    """
    parameters = functions[0].parameters
    points = grid(parameters)
    sets = []
    for level_index, noise in enumerate(noise_levels):
        rng = np.random.default_rng([seed, stream, level_index, 1])
        values = measure(rng, functions, points, noise, shape)
        sets.append(KernelSet(name, parameters, noise, list(functions), points, values))
    return sets


def function_rng(seed: int, stream: int) -> np.random.Generator:
    """The random generator that draws the functions of one benchmark group."""
    return np.random.default_rng([seed, stream, 0])
