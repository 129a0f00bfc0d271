"""From chosen hypotheses to :class:`~perfcast.core.function.Model` objects, and the check every
modeler makes of a series' points before it searches (kernels that fail it are skipped).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from perfcast.core.errors import InputError
from perfcast.core.experiment import Series
from perfcast.core.function import Factor, Model, Quality, Term, Uncertainty
from perfcast.model.fitting.blocks import evaluate_blocks
from perfcast.model.fitting.candidates import SlotShapes, marginal_means
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.decisions import series_wide
from perfcast.model.fitting.quality import assess
from perfcast.model.fitting.selection import Choice

MIN_VALUES_PER_PARAMETER = 3
RESIDUE = 1e-9
"""Terms contributing less than this fraction of a kernel's largest value are dropped."""


@dataclass(frozen=True)
class Skip:
    """A kernel a modeler left out, and why (its data admits no model).

    Attributes
    ----------
    kernel, metric : str
        The kernel and the metric it was not modeled for.
    reason : str
        What is wrong with its data, in words.
    """

    kernel: str
    metric: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        """``{"kernel", "metric", "reason"}``, the entry of a model document's ``skipped``."""
        return {"kernel": self.kernel, "metric": self.metric, "reason": self.reason}

    def error(self, source: str | None) -> InputError:
        """The skip as an error, for callers that want every kernel modeled or none."""
        return InputError(
            f"kernel '{self.kernel}' ({self.metric}) cannot be modeled: {self.reason}",
            source,
            reason="unmodelable-kernel",
            value=self.kernel,
        )


def unmodelable_reason(series: Series) -> str | None:
    """Why no PMNF model can be fitted to the kernels of ``series``; None when one can.

    The checks concern the measured points, which all kernels of a series share: either every
    kernel of the series can be modeled or none.
    """
    for j, name in enumerate(series.parameters):
        values = series.points[:, j]
        if np.any(values <= 0):
            return (
                f"parameter '{name}' has the value {values[values <= 0][0]:g}; PMNF terms "
                "(powers and log2) need positive parameter values"
            )
        distinct = len(np.unique(values))
        if distinct < MIN_VALUES_PER_PARAMETER:
            return (
                f"measured at {distinct} value(s) of '{name}'; a model needs at least "
                f"{MIN_VALUES_PER_PARAMETER} (5 recommended)"
            )
        if len(series.parameters) > 1:
            xs, _, _ = marginal_means(series.points, np.zeros((1, len(series.points))), j)
            if len(xs) < MIN_VALUES_PER_PARAMETER:
                return (
                    f"no {MIN_VALUES_PER_PARAMETER} measurements differ in '{name}' alone (the "
                    "other parameters fixed), so its effect cannot be told apart from theirs; "
                    f"measure at least {MIN_VALUES_PER_PARAMETER} values of '{name}' with the "
                    "others held constant"
                )
    return None


def skips_of(series: Series) -> list[Skip]:
    """One :class:`Skip` per kernel of ``series`` when its points admit no model, else none."""
    reason = unmodelable_reason(series)
    if reason is None:
        return []
    return [Skip(kernel, series.metric, reason) for kernel in series.kernels]


def require_models(models: Sequence[Model], skipped: Sequence[Skip], source: str | None) -> None:
    """Raise the first skip as an :class:`InputError` when no kernel at all was modeled."""
    if not models and skipped:
        raise skipped[0].error(source)


def build_models(
    data: FitData,
    choice: Choice,
    pool: np.ndarray,
    shapes: Sequence[Sequence[tuple[Factor, ...]]] | SlotShapes,
) -> list[Model]:
    """Turn the chosen hypotheses into :class:`Model` objects with quality and uncertainty.

    Terms and constants that are numerical residue (see :func:`residue_free`) are dropped, and
    the values of kernels :class:`FitData` rescaled are multiplied back into coefficients,
    residual sums of squares and covariances.
    """
    terms, constants, term_coefficients = residue_free(data, choice, pool)
    # One design width for the whole series: the padding changes the rounding of the inverse.
    width = series_wide(1 + max((len(t) for t in terms), default=0))
    columns = [pool[k, chosen] for k, chosen in enumerate(terms)]
    term_shapes = [[shapes[k][t] for t in chosen] for k, chosen in enumerate(terms)]
    return _assembled(data, columns, constants, term_coefficients, term_shapes, width)


def reassembled(models: Sequence[Model], data: FitData, width: int) -> list[Model] | None:
    """The models :func:`build_models` gives for the terms and coefficients of ``models``
    (of the kernels of ``data``, in its order) with designs ``width`` columns wide: their
    quality and uncertainty computed again, without searching again.

    A chunk that made every series-wide choice of its series but the design width (the last
    choice, :mod:`perfcast.model.fitting.decisions`) searched as the whole series does; only
    this assembly differs. The terms' values at the points are evaluated as the search's pool
    holds them (:func:`~perfcast.model.fitting.blocks.evaluate_blocks`, factors multiplied in
    their order onto ones), the coefficients scaled back where :class:`FitData` rescaled the
    kernel (exact: powers of two).

    Returns
    -------
    list of Model or None
        None when a coefficient cannot be scaled back exactly (beyond a double's normal range),
        or the models are not those of ``data``'s kernels: the chunk is then modeled again.
    """
    series = data.series
    if [m.kernel for m in models] != list(series.kernels):
        return None
    exponents = data.exponents if len(data.exponents) else np.zeros(len(models), dtype=int)
    constants = np.array([m.constant for m in models], dtype=float)
    stored = [np.array([t.coefficient for t in m.terms], dtype=float) for m in models]
    if not all(_exactly_scalable(c) for c in [constants, *stored]):
        return None
    columns = []
    for model in models:
        values = np.ones((len(model.terms), len(series.points)))
        for i, term in enumerate(model.terms):
            for factor in term.factors:
                j = series.parameters.index(factor.parameter)
                block = ((factor.exponent, factor.log_exponent),)
                values[i] *= evaluate_blocks(block, series.points[:, j])[0]
        columns.append(values)
    return _assembled(
        data,
        columns,
        np.ldexp(constants, -exponents),
        [np.ldexp(c, -int(e)) for c, e in zip(stored, exponents, strict=True)],
        [[t.factors for t in m.terms] for m in models],
        width,
    )


def _exactly_scalable(values: np.ndarray) -> bool:
    """True when every value is 0 or a finite normal double (scaling by a power of two within
    the range is exact)."""
    magnitude = np.abs(values)
    return bool(np.all((magnitude == 0) | (np.isfinite(magnitude) & (magnitude >= _TINY))))


_TINY = np.finfo(float).tiny


def _assembled(
    data: FitData,
    columns: Sequence[np.ndarray],
    constants: np.ndarray,
    term_coefficients: Sequence[np.ndarray],
    term_shapes: Sequence[Sequence[tuple[Factor, ...]]],
    width: int,
) -> list[Model]:
    """Models with quality and uncertainty from each kernel's term values at the points
    (``columns[k]``, shape (terms, P)), its constant, term coefficients and term factors, the
    designs ``width`` columns wide."""
    series = data.series
    n_kernels, n_points = data.means.shape
    designs = np.zeros((n_kernels, n_points, width))
    designs[:, :, 0] = 1.0
    coefficients = np.zeros((n_kernels, width))
    coefficients[:, 0] = constants
    for k, values in enumerate(columns):
        designs[k, :, 1 : 1 + len(values)] = values.T
        coefficients[k, 1 : 1 + len(values)] = term_coefficients[k]
    sizes = np.array([1 + len(c) for c in term_coefficients])
    assessment = assess(designs, coefficients, sizes, data)
    models = []
    for k, kernel in enumerate(series.kernels):
        exponent = int(data.exponents[k]) if len(data.exponents) else 0
        quality, uncertainty = assessment.qualities[k], assessment.uncertainties[k]
        if exponent:
            quality, uncertainty = _unscaled(quality, uncertainty, exponent)
        factors = np.ldexp(term_coefficients[k], exponent)
        models.append(
            Model(
                kernel=kernel,
                metric=series.metric,
                parameters=series.parameters,
                constant=float(np.ldexp(constants[k], exponent)),
                terms=tuple(
                    Term(float(c), shape) for shape, c in zip(term_shapes[k], factors, strict=True)
                ),
                quality=quality,
                uncertainty=uncertainty,
            )
        )
    return models


def residue_free(
    data: FitData, choice: Choice, pool: np.ndarray
) -> tuple[list[np.ndarray], np.ndarray, list[np.ndarray]]:
    """The chosen terms, constants and term coefficients without numerical residue.

    A term is residue when its contribution stays below :data:`RESIDUE` times the kernel's
    largest absolute point value at every measured point, a constant when it is below that
    itself: least squares leaves such values (1e-17 coefficients on counters with zeros,
    constants of 1e-11 on integer counts) where the exact answer is 0. A kernel whose values are
    all 0 gets the exact constant 0.

    Returns
    -------
    terms : list of ndarray of int
        Per kernel, the pool indices of the terms kept.
    constants : ndarray, shape (K,)
    coefficients : list of ndarray
        Per kernel, the coefficients of the terms kept.
    """
    threshold = RESIDUE * np.max(np.abs(data.means), axis=1)
    constants = np.where(np.abs(choice.constants) > threshold, choice.constants, 0.0)
    terms, coefficients = [], []
    for k, chosen in enumerate(choice.terms):
        contributions = np.abs(choice.coefficients[k][:, None] * pool[k, chosen])
        keep = np.max(contributions, axis=1, initial=0.0) > threshold[k]
        terms.append(chosen[keep])
        coefficients.append(choice.coefficients[k][keep])
    return terms, constants, coefficients


def _unscaled(
    quality: Quality, uncertainty: Uncertainty | None, exponent: int
) -> tuple[Quality, Uncertainty | None]:
    """Quality and uncertainty of values ``2**exponent`` times those fitted.

    Relative figures stay; the residual sum of squares and the covariance scale by
    ``4**exponent`` (a residual sum beyond a double's range becomes infinity, written as null in
    JSON; an uncertainty beyond it is dropped).
    """
    with np.errstate(over="ignore"):
        rss = float(np.ldexp(quality.rss, 2 * exponent))
        if uncertainty is not None:
            covariance = np.ldexp(uncertainty.covariance, 2 * exponent)
            finite = bool(np.all(np.isfinite(covariance)))
            uncertainty = (
                dataclasses.replace(uncertainty, covariance=covariance) if finite else None
            )
    return dataclasses.replace(quality, rss=rss), uncertainty
