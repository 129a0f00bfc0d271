"""Rival model forms: neighbours of a fitted model that describe its measurements almost as well
but predict differently elsewhere (the model's form is ambiguous).

The covariance of a model's coefficients says how uncertain they are *given its terms*; it says
nothing about whether other terms would do as well. :func:`rival_models` builds the neighbours a
term search could have chosen instead: every factor moved to the next slower and faster building
block of Extra-P's list, a product of several parameters split into a sum of its factors (and
two single-parameter terms joined into one product), and a linear term added for a parameter the
model leaves out. Each rival's coefficients are refitted to the measured point values by least
squares on relative errors; a rival with a non-positive term coefficient is dropped. Its
*plausibility* is the likelihood ratio ``exp(-(rss_rival - rss_model) / (2 s^2))`` of the
relative residual sums of squares, ``s^2`` the relative noise variance of a point's value (1 when
the rival fits at least as well). Measurement-point advice (:mod:`perfcast.analyze.advice`) uses
the rivals to find points that tell them apart where their predictions at the target differ.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from perfcast.core.function import Factor, Model, Term
from perfcast.model.fitting.blocks import EXTRAP_BUILDING_BLOCKS

#: Rivals less plausible than this (likelihood ratio against the model) are left out.
MIN_PLAUSIBILITY = 1e-3
#: Most rivals kept per model (the most plausible).
MAX_RIVALS = 12
_ORDERED_BLOCKS = sorted(EXTRAP_BUILDING_BLOCKS)


@dataclass(frozen=True)
class Rival:
    """An alternative form of a model, refitted to the same measurements.

    Attributes
    ----------
    model : Model
    plausibility : float
        Likelihood ratio against the fitted model, at most 1.
    """

    model: Model
    plausibility: float


def rival_models(
    model: Model, points: np.ndarray, values: np.ndarray, noise_variance: float
) -> list[Rival]:
    """The plausible neighbours of ``model`` (see the module doc), most plausible first.

    Parameters
    ----------
    model : Model
        Fitted to ``values`` at ``points`` (no segments).
    points : ndarray, shape (n_points, n_parameters)
    values : ndarray, shape (n_points,)
        The measured point values (positive for a relative fit).
    noise_variance : float
        Relative variance of one point's value.
    """
    if np.any(values <= 0) or len(values) < 3 or not noise_variance > 0:
        return []
    own = _relative_rss(model, points, values)
    rivals = []
    seen = {_shape(model.terms)}
    for terms in _neighbour_shapes(model):
        key = _shape(terms)
        if key in seen or len(terms) + 1 >= len(values):
            continue
        seen.add(key)
        fitted = _refit(model, terms, points, values)
        if fitted is None:
            continue
        excess = (_relative_rss(fitted, points, values) - own) / (2 * noise_variance)
        plausibility = float(np.exp(-max(excess, 0.0)))
        if plausibility >= MIN_PLAUSIBILITY:
            rivals.append(Rival(fitted, plausibility))
    rivals.sort(key=lambda r: -r.plausibility)
    return rivals[:MAX_RIVALS]


def _shape(terms: tuple[Term, ...]) -> frozenset[tuple[Factor, ...]]:
    return frozenset(t.factors for t in terms)


def _neighbour_shapes(model: Model) -> list[tuple[Term, ...]]:
    """Term shapes (coefficients 1) one step away from the model's."""
    terms = model.terms
    shapes: list[tuple[Term, ...]] = []
    for i, term in enumerate(terms):
        for j, factor in enumerate(term.factors):
            for moved in _block_neighbours(factor):
                factors = term.factors[:j] + (moved,) + term.factors[j + 1 :]
                shapes.append(terms[:i] + (Term(1.0, factors),) + terms[i + 1 :])
        if len(term.factors) > 1:
            split = tuple(Term(1.0, (f,)) for f in term.factors)
            shapes.append(terms[:i] + split + terms[i + 1 :])
    for (i, a), (j, b) in itertools.combinations(enumerate(terms), 2):
        if len(a.factors) == 1 == len(b.factors) and a.parameters != b.parameters:
            rest = tuple(t for k, t in enumerate(terms) if k not in (i, j))
            shapes.append((*rest, Term(1.0, a.factors + b.factors)))
    used = {p for t in terms for p in t.parameters}
    for name in model.parameters:
        if name not in used:
            shapes.append((*terms, Term(1.0, (Factor(name, Fraction(1)),))))
    return shapes


def _block_neighbours(factor: Factor) -> list[Factor]:
    """The building blocks just below and above the factor's in growth order."""
    order = (factor.exponent, factor.log_exponent)
    below = [b for b in _ORDERED_BLOCKS if b < order]
    above = [b for b in _ORDERED_BLOCKS if b > order]
    picked = ([below[-1]] if below else []) + ([above[0]] if above else [])
    return [Factor(factor.parameter, e, j) for e, j in picked]


def _refit(
    model: Model, terms: tuple[Term, ...], points: np.ndarray, values: np.ndarray
) -> Model | None:
    """``model`` with ``terms`` and coefficients fitted to ``values`` (relative least squares);
    None when a term's coefficient is not positive or the fit is singular."""
    shaped = replace(model, terms=terms, uncertainty=None, quality=None, warnings=())
    design = shaped.design(points) / values[:, None]
    coefficients, _, rank, _ = np.linalg.lstsq(design, np.ones(len(values)), rcond=None)
    if rank < design.shape[1] or np.any(coefficients[1:] <= 0):
        return None
    fitted = tuple(Term(float(c), t.factors) for c, t in zip(coefficients[1:], terms, strict=True))
    return replace(shaped, constant=float(coefficients[0]), terms=fitted)


def _relative_rss(model: Model, points: np.ndarray, values: np.ndarray) -> float:
    with np.errstate(over="ignore", invalid="ignore"):
        relative = (model.evaluate(points) - values) / values
    return float(np.sum(relative**2)) if np.all(np.isfinite(relative)) else np.inf
