"""Scoring fitted models against the true synthetic functions, identically for every tool.

Three figures per group of kernels:

- lead order: share of kernels whose lead-order ``(exponent, log_exponent)`` is right for every
  parameter (the largest order among the terms containing the parameter; ``(0, 0)`` if none),
  attained by a term with a positive coefficient: every true term adds cost, and a model such as
  ``38 - 2.2*log2(p)`` says the cost falls, not that it grows like ``log2(p)``;
- structure: share with exactly the true set of terms (each term's factors equal, every
  coefficient positive; the constant is ignored);
- extrapolation error: median and 90th percentile of ``|prediction - truth| / truth`` at 4x the
  largest measured value of every parameter at once, truth being the noiseless function.

Every tool's output is first reduced to a :class:`Fit` (term shapes plus its own prediction), so
the scoring cannot differ between tools. A kernel without a fit counts as wrong with an infinite
error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from perfcast.core.function import Model

#: One factor of a term: ``(parameter, exponent, log_exponent)``.
FactorShape = tuple[str, Fraction, Fraction]
#: A term without its coefficient: the set of its factors.
TermShape = frozenset[FactorShape]


@dataclass(frozen=True)
class Fit:
    """What the benchmark needs from one fitted model.

    Attributes
    ----------
    kernel : str
        The kernel the model describes.
    terms : frozenset of TermShape
        The non-constant terms, each the set of its factors. Log exponents are kept as fractions
        so that shapes perfcast cannot represent (Extra-P's ``1/log2(p)``) still compare.
    prediction : float
        The tool's prediction at the extrapolation point.
    text : str
        The model as the tool prints it (for reports and debugging).
    falling : frozenset of TermShape
        The terms whose coefficient is not positive.
    """

    kernel: str
    terms: frozenset[TermShape]
    prediction: float
    text: str = ""
    falling: frozenset[TermShape] = frozenset()

    def lead_order(self, parameter: str) -> tuple[Fraction, Fraction]:
        """Fastest-growing ``(exponent, log_exponent)`` of ``parameter``; ``(0, 0)`` if absent."""
        orders = [(e, j) for term in self.terms for (name, e, j) in term if name == parameter]
        return max(orders) if orders else (Fraction(0), Fraction(0))

    def lead_adds_cost(self, parameter: str) -> bool:
        """A term with a positive coefficient attains ``parameter``'s lead order (or none has
        the parameter)."""
        lead = self.lead_order(parameter)
        growing = self.terms - self.falling
        return lead == (0, 0) or any(
            (e, j) == lead for term in growing for (name, e, j) in term if name == parameter
        )

    @classmethod
    def from_model(cls, model: Model, extrapolation_point: np.ndarray) -> Fit:
        """Reduce a perfcast :class:`Model`, predicting with :meth:`Model.evaluate`."""
        factors = [
            [(f.parameter, f.exponent, f.log_exponent) for f in term.factors]
            for term in model.terms
        ]
        return cls(
            kernel=model.kernel,
            terms=term_shapes(factors),
            prediction=float(model.evaluate(extrapolation_point)[0]),
            text=model.expression(),
            falling=term_shapes(
                shape for shape, t in zip(factors, model.terms, strict=True) if t.coefficient <= 0
            ),
        )


def term_shapes(terms: Iterable[Iterable[tuple[str, object, object]]]) -> frozenset[TermShape]:
    """Normalise terms given as ``(parameter, exponent, log_exponent)`` triples.

    Factors that are identically 1 (both exponents 0) are dropped; terms left without a factor
    are constants and are dropped too.
    """
    shapes = set()
    for term in terms:
        factors = frozenset(
            (str(name), Fraction(str(e)), Fraction(str(j)))
            for name, e, j in term
            if Fraction(str(e)) != 0 or Fraction(str(j)) != 0
        )
        if factors:
            shapes.add(factors)
    return frozenset(shapes)


@dataclass(frozen=True)
class Score:
    """The benchmark figures of one tool on one group of kernels.

    Attributes
    ----------
    kernels : int
        Number of kernels scored.
    missing : int
        Kernels for which the tool returned no model.
    lead_order : float
        Share (0..1) with every parameter's lead order right.
    structure : float
        Share (0..1) with exactly the true terms.
    median_error, p90_error : float
        Median and 90th percentile of the relative extrapolation error.
    """

    kernels: int
    missing: int
    lead_order: float
    structure: float
    median_error: float
    p90_error: float


def relative_error(prediction: float, truth: float) -> float:
    """``|prediction - truth| / |truth|``; infinite when the prediction is not finite."""
    if not np.isfinite(prediction):
        return float("inf")
    return abs(prediction - truth) / abs(truth)


def score(
    truths: Sequence[Model], fits: Mapping[str, Fit], extrapolation_point: np.ndarray
) -> Score:
    """Score a tool's fits against the true functions.

    Parameters
    ----------
    truths : sequence of Model
        The true functions; each one's ``kernel`` keys ``fits``.
    fits : mapping of str to Fit
        The tool's fits by kernel name (missing kernels count as failures).
    extrapolation_point : ndarray, shape (1, n_parameters)
        Where the prediction error is measured (the fits' predictions must be for this point).

    Returns
    -------
    Score
    """
    if not truths:
        raise ValueError("no kernels to score")
    lead_right = structure_right = missing = 0
    errors = []
    for truth in truths:
        fit = fits.get(truth.kernel)
        if fit is None:
            missing += 1
            errors.append(np.inf)
            continue
        true_fit = Fit.from_model(truth, extrapolation_point)
        lead_right += all(
            fit.lead_order(name) == true_fit.lead_order(name) and fit.lead_adds_cost(name)
            for name in truth.parameters
        )
        structure_right += fit.terms == true_fit.terms and not fit.falling
        errors.append(relative_error(fit.prediction, true_fit.prediction))
    count = len(truths)
    return Score(
        kernels=count,
        missing=missing,
        lead_order=lead_right / count,
        structure=structure_right / count,
        median_error=percentile(errors, 50),
        p90_error=percentile(errors, 90),
    )


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile with linear interpolation between ranks; infinite errors rank last.

    (numpy's own interpolation turns ``inf * 0`` into NaN next to infinite values.)
    """
    ordered = np.sort(np.asarray(values, dtype=float))
    rank = q / 100 * (len(ordered) - 1)
    low, high = int(np.floor(rank)), int(np.ceil(rank))
    if low == high or ordered[low] == ordered[high]:
        return float(ordered[low])
    return float(ordered[low] + (ordered[high] - ordered[low]) * (rank - low))
