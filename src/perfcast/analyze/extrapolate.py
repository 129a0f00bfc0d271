"""Signature extrapolation (PMaC): every element of every feature vector fitted on its own.

A signature at a few small core counts (three in the paper; more are used when given) is turned
into the signature at a larger count by fitting each (kernel, feature) series separately and
evaluating the chosen fit at the target.

Canonical forms (``forms="pmac"``), each fitted by least squares in the space where it is linear:

``constant``     ``a``
``linear``       ``a + b*p``
``logarithmic``  ``a + b*log2(p)``
``exponential``  ``a * exp(b*p)``        (positive series only; fitted to ``log y``)
``inverse``      ``a + b/p``             (work divided among ranks: strong scaling)
``power``        ``a * p^b``             (positive series only; ``p^-1``, ``p^-0.5``, ...)

The first four are the paper's; ``inverse`` and ``power`` are added because under strong
scaling the per-rank work falls with ``p``, which none of the four can follow beyond the
measured range. The form is chosen by how well it predicts the largest measured point from
the smaller ones (forward validation: the question extrapolation asks); ties go to the form
with fewer coefficients, then to the earlier form in the list above. The chosen form is then
refitted on all points.

The cache miss counts (``l1.misses``, ``ll.misses``) may also take the ``exchange`` form
``a + b*(p-1)/p^2`` (:data:`MISS_FORMS`): the data a rank receives in an all-to-all
redistribution of a fixed problem, whose first touch misses the caches (a sort's exchanged
keys). It competes only on series without a 0 (a step from 0 fits it through one point).

``forms="pmnf"`` fits perfcast's PMNF search (:mod:`perfcast.model.pmnf`) to each series;
``forms="both"`` fits both and, per element, keeps the one with the smaller forward-validation
error (PMNF needs three points besides the largest one for that; with fewer, the canonical form
is kept and the PMNF prediction only reported beside it).

Counts never fall below zero and rates (hit rates) stay in [0, 1]: a prediction outside is
clamped and the element says so.

Hit rates are derived, not fitted, where the signature holds the miss counts they come from:
``l1.misses`` and ``ll.misses`` are extrapolated as counts like every other, and the rates at
the target are ``1 - misses / (loads + stores)`` of the extrapolated counts (form ``derived``),
with the misses bounded by the accesses and the last level's by the first level's. A rate
computed from a handful of misses swings between core counts in ways no form follows, while the
counts of misses (mostly ``a + b/p`` under strong scaling) extrapolate as well as the other
counts; the derived rates also stay consistent with the accesses and with each other
(``l1.hit_rate <= ll.cumulative_hit_rate``). Signatures of earlier versions (no miss counts,
``ll.hit_rate`` as the share of first-level misses) are made cumulative first
(:func:`perfcast.static.signature.cumulative_hit_rates`) and their rates fitted directly.

A block, line or function that ran at some of the core counts only (rank 0's reduction loop
from ``p = 2`` on, a branch taken at ``p = 1`` only) is absent from the other signatures: its
counts there are 0, and are fitted as such
(:func:`perfcast.static.signature.fill_unexecuted`), so the element is extrapolated from every
point rather than left out for lack of points. A count that is 0 at the smallest core counts
only is fitted from the first count where it is not, when that leaves three points or more
(:func:`running_regime`). When it leaves two (0 at 1, running at 2 and 4), a *step* competes
with the forms fitted through the zeros: the constant of the two running points, checked by
predicting the second from the first (a reduction that starts at ``p = 2`` and then stays,
``(0, 16384, 16384)``, is a step; no form through the 0 predicts it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfcast.analyze.extrapolate_interval import (
    ambiguities,
    element_interval,
    horizon,
    influential_kernels,
    intervals_metadata,
    is_plausible,
    largest_point_blocks,
)
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.static.signature import (
    BOUNDED_FEATURES,
    RATE_MISSES,
    SIGNATURE_PREFIXES,
    cumulative_hit_rates,
    fill_unexecuted,
    is_count_feature,
)

FORM_SETS = ("pmac", "pmnf", "both")
MIN_POINTS = 3
_TIE = 1e-9
_RELATIVE_FLOOR = 1e-6
_NO_PMNF = "PMNF fitted no model"
_ACCESSES = ("loads", "stores")
_MISPREDICTIONS = "branch.mispredictions"


@dataclass(frozen=True)
class CanonicalForm:
    """A two-coefficient (or constant) scaling form fitted by linear least squares.

    Attributes
    ----------
    name : str
        The form's name.
    basis : callable
        ``p -> x`` such that the (transformed) value is ``a + b*x`` (None for the constant).
    log_values : bool
        Fit ``log(y)`` (the form is multiplicative and needs positive values).
    text : str
        The formula, with ``{a}`` and ``{b}`` for the coefficients.
    """

    name: str
    basis: Callable[[np.ndarray], np.ndarray] | None
    log_values: bool
    text: str

    @property
    def size(self) -> int:
        """Number of coefficients."""
        return 1 if self.basis is None else 2

    def fit(
        self, p: np.ndarray, y: np.ndarray, *, relative: bool = False
    ) -> tuple[float, float] | None:
        """Least-squares coefficients ``(a, b)``, or None when the form cannot fit ``y``.

        ``relative`` minimises relative rather than absolute residuals (each point weighted by
        ``1 / y**2``, values near 0 bounded by a millionth of the largest): every core count then
        counts alike, where absolute residuals let the largest values (under strong scaling
        those of the smallest counts, furthest from the target) dominate. The multiplicative
        forms are fitted to ``log y``, whose residuals are relative already.
        """
        if self.log_values:
            if np.any(y <= 0):
                return None
            target = np.log(y)
            weights = np.ones_like(target)
        else:
            target = y
            weights = _relative_weights(y) if relative else np.ones_like(y)
        if self.basis is None:
            with np.errstate(over="ignore"):  # values near the largest double: an inf mean
                return float(np.average(target, weights=weights)), 0.0
        x = self.basis(p)
        root = np.sqrt(weights)
        design = np.column_stack([np.ones_like(x), x]) * root[:, None]
        coefficients, *_ = np.linalg.lstsq(design, target * root, rcond=None)
        a, b = (float(c) for c in coefficients)
        # exp of an intercept beyond a double's range is inf, as the callers expect of a form
        # that does not fit (math.exp raised OverflowError there)
        with np.errstate(over="ignore"):
            return (float(np.exp(a)) if self.log_values else a), b

    def evaluate(self, coefficients: tuple[float, float], p: np.ndarray) -> np.ndarray:
        """The form's values at ``p``."""
        a, b = coefficients
        if self.basis is None:
            return np.full_like(p, a, dtype=float)
        x = self.basis(p)
        with np.errstate(over="ignore", invalid="ignore"):
            return a * np.exp(b * x) if self.log_values else a + b * x

    def formula(self, coefficients: tuple[float, float], parameter: str) -> str:
        """The fitted formula as text."""
        a, b = coefficients
        return self.text.format(a=f"{a:.6g}", b=f"{b:.6g}", p=parameter)


CANONICAL_FORMS: tuple[CanonicalForm, ...] = (
    CanonicalForm("constant", None, False, "{a}"),
    CanonicalForm("linear", lambda p: p, False, "{a} + {b}*{p}"),
    CanonicalForm("logarithmic", np.log2, False, "{a} + {b}*log2({p})"),
    CanonicalForm("exponential", lambda p: p, True, "{a}*exp({b}*{p})"),
    CanonicalForm("inverse", lambda p: 1.0 / p, False, "{a} + {b}/{p}"),
    CanonicalForm("power", np.log, True, "{a}*{p}^{b}"),
)

#: Forms for the cache miss counts (``l1.misses``, ``ll.misses``) besides the canonical ones.
#: ``exchange``: what a rank receives when a fixed problem block-distributed over ``p`` ranks
#: is redistributed all-to-all, ``(p - 1) / p`` of its ``n / p`` elements; data landing in
#: memory the rank has not touched yet misses the caches once per line.
MISS_FORMS: tuple[CanonicalForm, ...] = (
    CanonicalForm("exchange", lambda p: (p - 1.0) / p**2, False, "{a} + {b}*({p}-1)/{p}^2"),
)


@dataclass
class ElementFit:
    """How one (kernel, feature) element was extrapolated.

    Attributes
    ----------
    kernel, feature : str
        The element.
    form : str
        The chosen form (a canonical form's name or ``pmnf``).
    formula : str
        The fitted formula.
    value : float
        The extrapolated value (after clamping).
    fit_error : float
        Root-mean-square relative residual of the chosen fit over the measured points.
    validation_error : float or None
        Relative error predicting the largest measured point from the smaller ones (None when
        there were too few points for it).
    clamped : bool
        The raw prediction lay outside the feature's range and was clamped.
    alternative : dict or None
        With ``both``: the other family's form, value and validation error.
    low, high : float or None
        The interval the value may lie in (:mod:`perfcast.analyze.extrapolate_interval`);
        None when nothing estimates it (a PMNF fit that could not be checked).
    ambiguous : list of str
        Why the extrapolation is ambiguous (empty when it is not).
    """

    kernel: str
    feature: str
    form: str
    formula: str
    value: float
    fit_error: float
    validation_error: float | None
    clamped: bool = False
    alternative: dict[str, Any] | None = None
    low: float | None = None
    high: float | None = None
    ambiguous: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kernel": self.kernel,
            "feature": self.feature,
            "form": self.form,
            "formula": self.formula,
            "value": self.value,
            "fit_error": self.fit_error,
            "validation_error": self.validation_error,
            "clamped": self.clamped,
            "alternative": self.alternative,
            "interval": None if self.low is None else [self.low, self.high],
            "ambiguous": self.ambiguous,
        }


@dataclass
class Extrapolation:
    """An extrapolated signature and how each element got there.

    Attributes
    ----------
    signature : Experiment
        The signature at the target point (one repetition per element).
    elements : list of ElementFit
    skipped : list of dict
        Elements left out (``kernel``, ``feature``, ``reason``), e.g. measured at too few points.
    warnings : list of str
    """

    signature: Experiment
    elements: list[ElementFit]
    skipped: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the signature itself is written separately)."""
        return {
            "elements": [e.to_dict() for e in self.elements],
            "skipped": self.skipped,
            "warnings": self.warnings,
        }


def _relative(predicted: float, actual: float, scale: float) -> float:
    return abs(predicted - actual) / max(abs(actual), scale * 1e-12, 1e-300)


def _fit_error(values: np.ndarray, fitted: np.ndarray) -> float:
    scale = max(float(np.max(np.abs(values))), 1e-300)
    denominators = np.maximum(np.abs(values), scale * 1e-12)
    with np.errstate(invalid="ignore", over="ignore"):
        error = float(np.sqrt(np.mean(((fitted - values) / denominators) ** 2)))
    return error if math.isfinite(error) else math.inf


def _relative_weights(y: np.ndarray) -> np.ndarray:
    scale = float(np.max(np.abs(y))) if len(y) else 0.0
    if scale == 0 or not math.isfinite(scale):
        return np.ones_like(y)
    return (scale / np.maximum(np.abs(y), scale * _RELATIVE_FLOOR)) ** 2


def choose_form(
    p: np.ndarray,
    y: np.ndarray,
    *,
    bounds: tuple[float, float] = (-math.inf, math.inf),
    holdouts: int = 1,
    relative: bool = False,
) -> tuple[CanonicalForm, tuple[float, float], float]:
    """The canonical form that best predicts the largest points from the smaller ones.

    Parameters
    ----------
    p, y : numpy.ndarray
        The series (any order).
    bounds : (float, float)
        The feature's range: predictions are judged as clamped to it, as they are used (a form
        that falls below 0 where the counts stop predicts 0, which is right).
    holdouts : int
        How many of the largest points are each predicted from the points below them
        (rolling-origin validation); the form's error is the largest of these. 1 is the
        largest point alone; a holdout needs at least as many points below it as the form has
        coefficients.
    relative : bool
        Fit relative rather than absolute residuals (:meth:`CanonicalForm.fit`).

    Returns
    -------
    (CanonicalForm, coefficients, validation error)
        The coefficients are refitted on all points.
    """
    ranked = _ranked_forms(
        p, y, CANONICAL_FORMS, bounds=bounds, holdouts=holdouts, relative=relative
    )
    error, form, coefficients = _best(ranked)
    return form, coefficients, error


_Ranked = tuple[float, int, int, CanonicalForm, tuple[float, float]]


def _ranked_forms(
    p: np.ndarray,
    y: np.ndarray,
    forms: tuple[CanonicalForm, ...],
    *,
    bounds: tuple[float, float],
    holdouts: int,
    relative: bool,
) -> list[_Ranked]:
    """Every canonical form that fits: (validation error, size, position, form, coefficients
    refitted on all points)."""
    order = np.argsort(p)
    p, y = p[order], y[order]
    scale = float(np.max(np.abs(y))) if len(y) else 0.0
    low, high = bounds
    ranked: list[_Ranked] = []
    for position, form in enumerate(forms):
        if len(p) - 1 < form.size:
            continue
        # a multiplicative form fits positive values only: the largest point may be 0 (a count
        # of misses that vanishes) although the smaller ones are not
        refitted = form.fit(p, y, relative=relative)
        if refitted is None:
            continue
        ends = list(range(len(p) - 1, form.size - 1, -1))[: max(holdouts, 1)]
        errors = []
        for end in ends:
            early = form.fit(p[:end], y[:end], relative=relative)
            if early is None:
                break
            predicted = float(form.evaluate(early, p[end : end + 1])[0])
            if not math.isfinite(predicted):
                errors.append(math.inf)
                continue
            predicted = min(max(predicted, low), high)
            errors.append(_relative(predicted, float(y[end]), scale))
        if len(errors) < len(ends):
            continue
        ranked.append((max(errors), form.size, position, form, refitted))
    return ranked


def _best(ranked: list[_Ranked]) -> tuple[float, CanonicalForm, tuple[float, float]]:
    """The smallest validation error; ties to fewer coefficients, then the earlier form."""
    best_error = min(r[0] for r in ranked)
    tolerance = _TIE * max(1.0, best_error)
    tied = [r for r in ranked if r[0] <= best_error + tolerance]
    error, _size, _position, form, coefficients = min(tied, key=lambda r: (r[1], r[2]))
    return error, form, coefficients


def _bounds(feature: str) -> tuple[float, float]:
    return 0.0, 1.0 if feature in BOUNDED_FEATURES else math.inf


def _clamp(feature: str, value: float) -> tuple[float, bool]:
    if not math.isfinite(value):
        return value, False
    low, high = _bounds(feature)
    clamped = min(max(value, low), high)
    return clamped, clamped != value


def _series(
    signature: Experiment,
) -> tuple[str, dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]]:
    if len(signature.parameters) != 1:
        names = ", ".join(signature.parameter_names) or "none"
        raise InputError(
            f"a signature series varies one parameter (the core count), this one has: {names}",
            signature.source,
            reason="signature-parameters",
        )
    parameter = signature.parameters[0].name
    frame = signature.frame
    means = frame.groupby(["kernel", "metric", parameter], sort=False)["value"].mean()
    series: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    for (kernel, metric, at), value in zip(means.index.tolist(), means.tolist(), strict=True):
        ps, ys = series.setdefault((str(kernel), str(metric)), ([], []))
        ps.append(float(at))
        ys.append(float(value))
    return parameter, {key: (np.array(ps), np.array(ys)) for key, (ps, ys) in series.items()}


def _pmnf_predictions(
    signature: Experiment,
    parameter: str,
    target: float,
    below: float | None,
    warnings: dict[str, int] | None = None,
) -> dict[tuple[str, str], tuple[float, str]]:
    """PMNF prediction and formula per element, fitted on the points below ``below``; the
    quality gates' warning codes are counted into ``warnings``."""
    from perfcast.model.gates import gate_models
    from perfcast.model.registry import make_modeler

    data = signature
    if below is not None:
        frame = signature.frame
        data = Experiment.from_frame(
            frame[frame[parameter] < below],
            parameters=signature.parameters,
            source=signature.source,
        )
    out: dict[tuple[str, str], tuple[float, str]] = {}
    point = np.array([[target]])
    for metric in data.metric_names:
        modeler = make_modeler("pmnf")
        modeler.fit(data, metric)
        if warnings is not None:
            for gated in gate_models(modeler.models_, data, metric):
                for warning in gated.warnings:
                    warnings[warning.code] = warnings.get(warning.code, 0) + 1
        for model in modeler.models_:
            value = float(model.evaluate(point)[0])
            out[(model.kernel, metric)] = (value, model.expression())
    return out


def extrapolate(
    signature: Experiment,
    target: Mapping[str, float],
    forms: str = "pmac",
    *,
    holdouts: int = 1,
    relative: bool = False,
) -> Extrapolation:
    """Extrapolate a signature series to a larger core count, element by element.

    Parameters
    ----------
    signature : Experiment
        Signatures at three or more values of one parameter (as collected by ``perfcast
        signature`` at several ``p``, then merged).
    target : mapping of str to float
        The point to extrapolate to, e.g. ``{"p": 8192}``.
    forms : {"pmac", "pmnf", "both"}
        Canonical forms, perfcast's PMNF search, or the better of the two per element.
    holdouts : int
        Canonical forms are chosen by how well they predict each of this many largest points
        from the points below it (the worst of these errors; :func:`choose_form`).
    relative : bool
        Fit the canonical forms to relative rather than absolute residuals.

    Returns
    -------
    Extrapolation

    Raises
    ------
    InputError
        When the signature does not vary exactly one parameter, holds a value of it that is not
        positive, no element is measured at three or more points, or ``target`` names another
        parameter.
    """
    if forms not in FORM_SETS:
        raise InputError(f"unknown form set '{forms}' (known: {', '.join(FORM_SETS)})", value=forms)
    if holdouts < 1:
        raise InputError(f"holdouts must be at least 1, not {holdouts}", value=holdouts)
    signature, converted = cumulative_hit_rates(signature)
    signature = fill_unexecuted(signature)[0]
    parameter, series = _series(signature)
    if set(target) != {parameter}:
        raise InputError(
            f"the target must give the signature's parameter '{parameter}' only",
            reason="target-parameter",
            value=dict(target),
        )
    at = float(target[parameter])
    if at <= 0:
        raise InputError(f"the target {parameter}={at:g} must be positive", value=at)
    distinct = sorted({float(v) for ps, _ in series.values() for v in ps})
    if distinct and distinct[0] <= 0:
        # log2(p), 1/p and log(p) of the canonical forms are undefined there.
        raise InputError(
            f"signatures are taken at positive values of '{parameter}', this one holds "
            f"{parameter}={distinct[0]:g}",
            signature.source,
            reason="signature-parameters",
            value=distinct[0],
        )
    if len(distinct) < MIN_POINTS:
        raise InputError(
            f"extrapolation needs signatures at {MIN_POINTS} or more values of '{parameter}', "
            f"this one has {len(distinct)}",
            signature.source,
            reason="too-few-points",
        )
    pmnf: dict[tuple[str, str], tuple[float, str]] = {}
    pmnf_early: dict[tuple[str, str], tuple[float, str]] = {}
    pmnf_warnings: dict[str, int] = {}
    if forms != "pmac":
        pmnf = _pmnf_predictions(signature, parameter, at, None, pmnf_warnings)
        if len(distinct) - 1 >= MIN_POINTS:
            pmnf_early = _pmnf_predictions(signature, parameter, distinct[-1], distinct[-1])
    elements: list[ElementFit] = []
    skipped: list[dict[str, str]] = []
    for (kernel, feature), (p, y) in series.items():
        if len(p) < MIN_POINTS:
            reason = f"measured at {len(p)} of the {len(distinct)} points"
            skipped.append({"kernel": kernel, "feature": feature, "reason": reason})
            continue
        element = _element(
            kernel, feature, p, y, at, parameter, forms, pmnf, pmnf_early, holdouts, relative
        )
        if element is None:
            skipped.append({"kernel": kernel, "feature": feature, "reason": _NO_PMNF})
            continue
        elements.append(element)
    if not elements:
        raise InputError(
            "no element of the signature is measured at enough points", signature.source
        )
    elements = derive_hit_rates(elements)
    warnings = []
    if converted:
        warnings.append(
            f"{converted} last-level hit rate(s) of an earlier signature format (share of "
            "first-level misses) were made cumulative; without miss counts the rates are "
            "fitted, not derived: re-collect the signatures for derived rates"
        )
    largest = distinct[-1]
    if at > 4 * largest:
        warnings.append(
            f"{parameter}={at:g} is {at / largest:.0f}x the largest measured "
            f"{parameter}={largest:g}: far extrapolation, check the forms chosen"
        )
    if pmnf_warnings:
        codes = ", ".join(f"{code} {n}" for code, n in sorted(pmnf_warnings.items()))
        warnings.append(f"PMNF models carry quality warnings ({codes}); see perfcast model")
    clamped = sum(e.clamped for e in elements)
    if clamped:
        warnings.append(f"{clamped} element(s) predicted outside their range were clamped")
    overflowed = sum(not math.isfinite(e.value) for e in elements)
    if overflowed:
        warnings.append(f"{overflowed} element(s) overflowed at the target and were left out")
    unfitted = sum(s["reason"] == _NO_PMNF for s in skipped)
    if len(skipped) > unfitted:
        warnings.append(
            f"{len(skipped) - unfitted} element(s) measured at fewer than {MIN_POINTS} points "
            "were left out"
        )
    if unfitted:
        warnings.append(f"{unfitted} element(s) PMNF fitted no model to were left out")
    warnings += _trust_warnings(elements, largest_point_blocks(series))
    return Extrapolation(
        _as_signature(signature, elements, parameter, at), elements, skipped, warnings
    )


def _trust_warnings(
    elements: list[ElementFit], blocks: Mapping[str, Mapping[str, float]]
) -> list[str]:
    """Warnings on the ambiguous extrapolations of influential blocks, and on elements that
    have no interval."""
    warnings = []
    influential = influential_kernels(blocks)
    flagged = [
        e
        for e in elements
        if e.ambiguous and e.kernel in influential and not e.feature.endswith("_spread")
    ]  # a spread over the ranks describes the ranks, not the work
    # mispredictions are not in PMaC's vector (tens of events a block): counted apart
    ambiguous = [e for e in flagged if e.feature != _MISPREDICTIONS]
    ambiguous.sort(key=lambda e: -len(e.ambiguous))  # the most reasons first
    mispredicted = len(flagged) - len(ambiguous)
    if ambiguous:
        shown = "; ".join(
            f"'{e.kernel}' {e.feature}: {', '.join(e.ambiguous)}" for e in ambiguous[:3]
        )
        more = f" and {len(ambiguous) - 3} more" if len(ambiguous) > 3 else ""
        warnings.append(
            f"{len(ambiguous)} element(s) of influential blocks have an ambiguous "
            f"extrapolation ({shown}{more}): their intervals, and the time's, are the guide"
        )
    if mispredicted:
        warnings.append(
            f"{mispredicted} branch misprediction count(s) of influential blocks have an "
            "ambiguous extrapolation (see each element's 'ambiguous')"
        )
    unbounded = sum(e.low is None for e in elements if math.isfinite(e.value))
    if unbounded:
        warnings.append(
            f"{unbounded} element(s) have no uncertainty estimate (a fit that could not be "
            "checked against a left-out core count)"
        )
    return warnings


def running_regime(
    kernel: str, feature: str, p: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The points of a signature count from the first core count at which it is not 0.

    A count of a signature element that is 0 at the smallest core counts and not at a larger
    one (rank 0's reduction from ``p = 2`` on; last-level misses that appear once the data is
    exchanged) follows its own law from there: a step from 0 to a constant fits no form through
    the zeros. Those points are used when they are :data:`MIN_POINTS` or more; otherwise (and
    for rates, other kernels, or counts that are 0 at no leading point) the series is returned
    as it is.

    Parameters
    ----------
    kernel, feature : str
        The element.
    p, y : numpy.ndarray
        Its series, sorted by ``p``.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The points to fit.
    """
    if not kernel.startswith(SIGNATURE_PREFIXES) or not is_count_feature(feature):
        return p, y
    running = np.flatnonzero(y)
    if not len(running) or running[0] == 0 or len(p) - running[0] < MIN_POINTS:
        return p, y
    return p[running[0] :], y[running[0] :]


def _element(
    kernel: str,
    feature: str,
    p: np.ndarray,
    y: np.ndarray,
    at: float,
    parameter: str,
    forms: str,
    pmnf: Mapping[tuple[str, str], tuple[float, str]],
    pmnf_early: Mapping[tuple[str, str], tuple[float, str]],
    holdouts: int,
    relative: bool,
) -> ElementFit | None:
    key = (kernel, feature)
    order = np.argsort(p)
    p, y = p[order], y[order]
    canonical: ElementFit | None = None
    bounds = _bounds(feature)
    p_run, y_run = running_regime(kernel, feature, p, y)
    spread = 0.0
    if forms != "pmnf":
        late = _late_start(kernel, feature, y_run)
        ranked = _ranked_forms(
            p_run, y_run, _forms_for(feature, y_run), bounds=bounds, holdouts=holdouts,
            relative=relative,
        )  # fmt: skip
        if late:
            ranked.append(_step(p_run, y_run, len(ranked)))
        validation, form, coefficients = _best(ranked)
        raw = float(form.evaluate(coefficients, np.array([at]))[0])
        fitted = form.evaluate(coefficients, p_run)
        canonical = ElementFit(
            kernel, feature, form.name, form.formula(coefficients, parameter), raw,
            _fit_error(y_run, fitted), validation,
        )  # fmt: skip
        value = _clamp(feature, raw)[0]
        plausible = [value] + [
            _clamp(feature, float(r[3].evaluate(r[4], np.array([at]))[0]))[0]
            for r in ranked
            if is_plausible(r[0], validation)
        ]
        interval = element_interval(value, validation, horizon(p_run, at), plausible, bounds)
        if interval is not None:
            canonical.low, canonical.high = interval
            spread = (max(plausible) - min(plausible)) / max(
                abs(value), float(np.max(np.abs(y))) * 1e-12, 1e-300
            )
    searched: ElementFit | None = None
    if forms != "pmac" and key in pmnf:
        raw, formula = pmnf[key]
        early = pmnf_early.get(key)
        scale = float(np.max(np.abs(y)))
        checked = _relative(early[0], float(y[-1]), scale) if early else None
        searched = ElementFit(kernel, feature, "pmnf", formula, raw, math.nan, checked)
        interval = element_interval(_clamp(feature, raw)[0], checked, horizon(p, at), (), bounds)
        if interval is not None:
            searched.low, searched.high = interval
    chosen = _pick(canonical, searched)
    if chosen is None:
        return None
    chosen.value, chosen.clamped = _clamp(feature, chosen.value)
    fitted_from = float(p_run[0]) if chosen is canonical else float(p[0])
    chosen.ambiguous = ambiguities(
        feature, p, y, fitted_from, spread if chosen is canonical else 0.0
    )
    other = searched if chosen is canonical else canonical
    if forms == "both" and other is not None:
        chosen.alternative = {
            "form": other.form,
            "formula": other.formula,
            "value": _clamp(feature, other.value)[0],
            "validation_error": other.validation_error,
        }
    return chosen


def _forms_for(feature: str, y: np.ndarray) -> tuple[CanonicalForm, ...]:
    """The canonical forms, and for a cache miss count that is not 0 at any point fitted the
    :data:`MISS_FORMS` too (a step from 0 to a constant fits the exchange form through its value
    at ``p = 1`` alone)."""
    if feature in RATE_MISSES.values() and not np.any(y == 0):
        return CANONICAL_FORMS + MISS_FORMS
    return CANONICAL_FORMS


def _late_start(kernel: str, feature: str, y: np.ndarray) -> bool:
    """A signature count that is 0 at its smallest core counts and runs at the last two only
    (a block that starts at ``p = 2`` measured at 1, 2, 4): too few points for
    :func:`running_regime`, one to check a step against."""
    if not kernel.startswith(SIGNATURE_PREFIXES) or not is_count_feature(feature):
        return False
    running = np.flatnonzero(y)
    return len(running) == MIN_POINTS - 1 and running[0] == len(y) - (MIN_POINTS - 1)


def _step(p: np.ndarray, y: np.ndarray, position: int) -> _Ranked:
    """The step candidate of a late start: the constant of the points where the count runs,
    checked by the last of them predicted from the one before."""
    constant = CANONICAL_FORMS[0]
    error = _relative(float(y[-2]), float(y[-1]), float(np.max(np.abs(y))))
    return error, constant.size, position, constant, (float(np.mean(y[-2:])), 0.0)


def derive_hit_rates(elements: list[ElementFit]) -> list[ElementFit]:
    """Replace fitted hit rates by those of the extrapolated miss and access counts.

    For every kernel with extrapolated ``l1.misses``, ``ll.misses`` and accesses (``loads``
    and/or ``stores``): ``l1.hit_rate = 1 - l1.misses / accesses`` and
    ``ll.cumulative_hit_rate = 1 - ll.misses / accesses``, with the first level's misses bounded
    by the accesses and the last level's by the first level's (a bound that binds marks the
    rate clamped). The fit error of a derived rate is the largest of the counts' it comes from
    (NaN when none of them has one, as for PMNF fits); its interval is the miss count's (more
    misses, a lower rate), the last level's misses bounded by the first level's.

    Parameters
    ----------
    elements : list of ElementFit
        The extrapolated elements (counts and fitted rates).

    Returns
    -------
    list of ElementFit
        The same elements, each kernel's rates derived where its counts allow.
    """
    by_kernel: dict[str, dict[str, ElementFit]] = {}
    for element in elements:
        by_kernel.setdefault(element.kernel, {})[element.feature] = element
    derived: dict[tuple[str, str], ElementFit] = {}
    for kernel, features in by_kernel.items():
        counts = [features.get(name) for name in (*_ACCESSES, *RATE_MISSES.values())]
        present = [c for c in counts if c is not None]
        if any(features.get(m) is None for m in RATE_MISSES.values()) or len(present) < 3:
            continue
        if not all(math.isfinite(c.value) for c in present):
            continue
        accesses = sum(features[name].value for name in _ACCESSES if name in features)
        if accesses <= 0:
            continue
        bound = low_bound = high_bound = accesses
        errors = [c.fit_error for c in present if math.isfinite(c.fit_error)]
        fit_error = max(errors) if errors else math.nan  # PMNF fits report none
        for rate, misses_name in RATE_MISSES.items():
            counted = features[misses_name]
            misses = counted.value
            bounded = min(misses, bound)
            bound = bounded  # the next level misses no more than this one
            rate_fit = ElementFit(
                kernel, rate, "derived",
                f"1 - {misses_name}/({' + '.join(n for n in _ACCESSES if n in features)})",
                1.0 - bounded / accesses, fit_error, None, clamped=bounded != misses,
            )  # fmt: skip
            if counted.low is not None and counted.high is not None:
                # more misses, a lower rate: the rate's interval from the count's
                low_bound = min(counted.high, low_bound)
                high_bound = min(counted.low, high_bound)
                rate_fit.low = min(1.0 - low_bound / accesses, rate_fit.value)
                rate_fit.high = max(1.0 - high_bound / accesses, rate_fit.value)
            derived[(kernel, rate)] = rate_fit
    kept = [e for e in elements if (e.kernel, e.feature) not in derived]
    return kept + list(derived.values())


def _pick(canonical: ElementFit | None, searched: ElementFit | None) -> ElementFit | None:
    if canonical is None or searched is None:
        return canonical or searched
    if searched.validation_error is None or canonical.validation_error is None:
        return canonical
    return searched if searched.validation_error < canonical.validation_error else canonical


def _as_signature(
    signature: Experiment, elements: list[ElementFit], parameter: str, at: float
) -> Experiment:
    kept = [e for e in elements if math.isfinite(e.value)]
    if not kept:
        raise InputError("every extrapolated value overflowed", signature.source)
    metadata = dict(signature.metadata)
    metadata["extrapolated"] = {
        "from": sorted({float(v) for v in signature.points()[:, 0]}),
        "to": {parameter: at},
        "intervals": intervals_metadata(
            (e.kernel, e.feature, e.low, e.high)
            for e in kept
            if e.low is not None and e.high is not None
        ),
        "without_interval": sum(e.low is None or e.high is None for e in kept),
    }
    return Experiment.from_columns(
        [e.kernel for e in kept],
        [e.feature for e in kept],
        {parameter: [at] * len(kept)},
        [e.value for e in kept],
        parameters=signature.parameters,
        metrics=signature.metrics,
        metadata=metadata,
        source=f"{signature.source} extrapolated to {parameter}={at:g}",
    )
