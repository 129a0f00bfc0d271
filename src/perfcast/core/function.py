"""Scaling models: a constant plus a sum of terms over any number of parameters.

A term is a coefficient times, for each parameter in it, ``x^i * log2(x)^j`` with a rational
(possibly negative) exponent ``i`` and an integer ``j >= 0``. Models evaluate vectorized, print as
text, Python, LaTeX and Extra-P notation, convert to sympy and serialize to the JSON of DESIGN.md.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from perfcast.core.errors import InputError

if TYPE_CHECKING:
    import sympy


@dataclass(frozen=True, order=True)
class Factor:
    """``parameter^exponent * log2(parameter)^log_exponent``.

    Parameters
    ----------
    parameter : str
        Parameter name.
    exponent : Fraction
        Polynomial exponent, rational and possibly negative.
    log_exponent : int
        Power of ``log2(parameter)``, at least 0.
    """

    parameter: str
    exponent: Fraction = Fraction(0)
    log_exponent: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "exponent", Fraction(self.exponent).limit_denominator(1000))
        if self.log_exponent < 0 or int(self.log_exponent) != self.log_exponent:
            raise ValueError(f"log exponent must be a whole number >= 0, not {self.log_exponent}")
        object.__setattr__(self, "log_exponent", int(self.log_exponent))

    @property
    def order(self) -> tuple[Fraction, int]:
        """Growth order ``(exponent, log_exponent)``; larger tuples grow faster."""
        return (self.exponent, self.log_exponent)

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """Evaluate at the parameter values ``x`` (vectorized)."""
        x = np.asarray(x, dtype=float)
        result = np.ones_like(x)
        if self.exponent != 0:
            result = result * np.power(x, float(self.exponent))
        if self.log_exponent:
            result = result * np.power(np.log2(x), self.log_exponent)
        return result

    def text(self, power: str = "^", log: str = "log2") -> str:
        """Render as ``n^2*log2(n)`` (``power`` and ``log`` select the notation)."""
        parts = []
        if self.exponent != 0:
            parts.append(self.parameter + _power(self.exponent, power))
        if self.log_exponent:
            parts.append(f"{log}({self.parameter})" + _power(Fraction(self.log_exponent), power))
        return "*".join(parts)


def _power(exponent: Fraction, symbol: str) -> str:
    if exponent == 1:
        return ""
    if exponent.denominator == 1 and exponent > 0:
        return f"{symbol}{exponent.numerator}"
    return f"{symbol}({exponent})"


@dataclass(frozen=True)
class Term:
    """A coefficient times a product of :class:`Factor` objects over distinct parameters."""

    coefficient: float
    factors: tuple[Factor, ...]

    def __post_init__(self) -> None:
        factors = tuple(sorted(f for f in self.factors if f.exponent != 0 or f.log_exponent))
        names = [f.parameter for f in factors]
        if len(set(names)) != len(names):
            raise ValueError(f"a term has two factors over the same parameter: {names}")
        object.__setattr__(self, "factors", factors)
        object.__setattr__(self, "coefficient", float(self.coefficient))

    @property
    def parameters(self) -> tuple[str, ...]:
        """The parameters this term depends on."""
        return tuple(f.parameter for f in self.factors)

    def basis(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """Evaluate the term without its coefficient at the given parameter columns."""
        result: np.ndarray | float = 1.0
        for factor in self.factors:
            result = result * factor.evaluate(columns[factor.parameter])
        return np.broadcast_to(result, np.shape(next(iter(columns.values())))).astype(float)

    def shape_text(self, power: str = "^", log: str = "log2") -> str:
        """The term without its coefficient, e.g. ``n^2*log2(p)``."""
        return "*".join(f.text(power, log) for f in self.factors)


@dataclass(frozen=True)
class Quality:
    """How well a model fits its data (None where a figure is not defined).

    Attributes
    ----------
    rss : float
        Residual sum of squares against the mean of each point's repetitions.
    smape : float
        Symmetric mean absolute percentage error, in percent.
    adj_r2 : float
        Adjusted coefficient of determination.
    cv_smape : float or None
        Leave-one-point-out cross-validated SMAPE, in percent.
    lof_p : float or None
        p-value of the lack-of-fit F-test (needs repetitions); small means the form is wrong.
    """

    rss: float
    smape: float
    adj_r2: float | None
    cv_smape: float | None = None
    lof_p: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        """Plain dictionary for JSON."""
        return {
            "rss": self.rss,
            "smape": self.smape,
            "adj_r2": self.adj_r2,
            "cv_smape": self.cv_smape,
            "lof_p": self.lof_p,
        }


@dataclass(frozen=True)
class _GrowthBeyondData:
    """A relative variance that grows with the squared log distance beyond ``largest`` along
    ``parameter`` (the fields and JSON form :class:`Backtest` and :class:`SelectionSpread`
    share)."""

    parameter: str
    largest: float
    rate_variance: float

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON."""
        return {
            "parameter": self.parameter,
            "largest": float(self.largest),
            "rate_variance": float(self.rate_variance),
        }


@dataclass(frozen=True)
class Backtest(_GrowthBeyondData):
    """How far off a model's search gets beyond the measurements along one parameter.

    Measured by a backtest (:mod:`perfcast.model.backtest`): the same search on the data
    without each kernel's largest value of the parameter predicts that value; ``rate_variance``
    is the mean square of the log error there per squared log distance of the step,
    ``mean(log(predicted / measured)^2) / log(largest / next largest)^2``. A model whose
    exponent is off by ``d`` misses by ``d * log(x / largest)`` at ``x``, so the interval adds
    ``rate_variance * log(x / largest)^2`` to its relative variance beyond ``largest``.

    Attributes
    ----------
    parameter : str
    largest : float
        The largest measured value of the parameter.
    rate_variance : float
    """


@dataclass(frozen=True)
class SelectionSpread(_GrowthBeyondData):
    """How far apart the forms that fit the data extrapolate along one parameter.

    Measured by :mod:`perfcast.model.rivals`: every PMNF hypothesis of up to two building blocks
    is fitted to the data along the parameter and weighed by its Akaike weight;
    ``rate_variance`` is the weighted mean square relative distance of their predictions from
    the chosen model's one log step beyond ``largest``, per squared log step. Beyond ``largest``
    the interval's relative variance grows by ``rate_variance * log(x / largest)^2`` or by the
    :class:`Backtest`'s, whichever is larger: both estimate the error of the chosen form there.

    Attributes
    ----------
    parameter : str
    largest : float
        The largest measured value of the parameter.
    rate_variance : float
    """


@dataclass(frozen=True)
class Uncertainty:
    """What a prediction interval needs: the fit's coefficient covariance and noise.

    Attributes
    ----------
    covariance : ndarray, shape (k, k)
        Covariance of ``(constant, term coefficients...)``.
    noise_variance : float
        Variance of one new observation at relative scale 1 (relative when ``relative``).
    dof : int
        Residual degrees of freedom of the fit (for the t quantile).
    relative : bool
        True when the noise is multiplicative: the variance at a point is
        ``noise_variance * prediction**2``.
    loo_variance : float
        Mean square of the leave-one-point-out prediction errors (relative when ``relative``):
        how far the model's form misses points it did not see. The interval's variance is at
        least this, so that a model whose form is off gets a wider interval than its noise
        alone would give.
    extrapolation : tuple of Backtest
        Per parameter, the backtested error of the search beyond the largest measured value;
        empty where no backtest was possible.
    selection : tuple of SelectionSpread
        Per parameter, the spread of the forms that fit the data as well, beyond the largest
        measured value (model-selection uncertainty); empty in model files written before it
        existed.
    """

    covariance: np.ndarray
    noise_variance: float
    dof: int
    relative: bool = True
    loo_variance: float = 0.0
    extrapolation: tuple[Backtest, ...] = ()
    selection: tuple[SelectionSpread, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON (the ``uncertainty`` of a model)."""
        return {
            "covariance": [[float(v) for v in row] for row in np.asarray(self.covariance)],
            "noise_variance": float(self.noise_variance),
            "dof": int(self.dof),
            "relative": bool(self.relative),
            "loo_variance": float(self.loo_variance),
            "extrapolation": [e.to_dict() for e in self.extrapolation],
            "selection": [e.to_dict() for e in self.selection],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], size: int) -> Uncertainty:
        """Rebuild from :meth:`to_dict`'s form for a model of ``size`` coefficients
        (constant included).

        Raises
        ------
        ValueError
            When a value is missing, not a finite number, or the covariance is not
            ``size x size``.
        """
        rows = data["covariance"]
        if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
            raise ValueError("uncertainty: the covariance must be a list of rows of numbers")
        covariance = np.array(
            [[_read_number(v, "uncertainty: covariance") for v in row] for row in rows], dtype=float
        ).reshape(len(rows), -1)
        if covariance.shape != (size, size):
            raise ValueError(
                f"uncertainty: the covariance must be {size} x {size} for "
                f"{size} coefficients, not {'x'.join(map(str, covariance.shape))}"
            )
        numbers = [
            _read_number(data[key], f"uncertainty: {key}")
            for key in ("noise_variance", "loo_variance")
        ]
        if min(numbers) < 0:
            raise ValueError("uncertainty: noise_variance and loo_variance must be >= 0")
        dof = data["dof"]
        if isinstance(dof, bool) or not isinstance(dof, int) or not 1 <= dof <= _LARGEST_DOF:
            raise ValueError(
                f"uncertainty: dof must be a positive integer (at most 2**53), not {dof!r:.40}"
            )
        relative = data.get("relative", True)
        if not isinstance(relative, bool):
            raise ValueError(f"uncertainty: relative must be true or false, not {relative!r}")
        extrapolation = tuple(
            Backtest(*_rate_entry(e, "extrapolation"))
            for e in _rate_list(data.get("extrapolation"), "extrapolation")
        )
        selection = tuple(
            SelectionSpread(*_rate_entry(e, "selection"))
            for e in _rate_list(data.get("selection"), "selection")
        )
        return cls(covariance, numbers[0], dof, relative, numbers[1], extrapolation, selection)


@dataclass(frozen=True)
class ModelWarning:
    """Why a model or a prediction should not be trusted as it stands.

    Attributes
    ----------
    code : str
        Short machine-readable kind, e.g. ``poor-fit``, ``two-regimes``, ``cancelling-terms``,
        ``few-points``, ``oversubscribed`` or ``extrapolation``.
    message : str
        One line for people, naming the figures that triggered it.
    """

    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        """``{"code": ..., "message": ...}`` for JSON."""
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class Model:
    """A scaling model ``constant + sum(terms)`` of one kernel and metric.

    Attributes
    ----------
    kernel : str
        Call path or region the model describes.
    metric : str
        Metric it predicts.
    parameters : tuple of str
        All parameters of the experiment, in order (a model need not use every one).
    constant : float
        The constant term.
    terms : tuple of Term
        The non-constant terms.
    quality : Quality, optional
        Fit statistics.
    uncertainty : Uncertainty, optional
        Present on fitted models; enables :meth:`predict_interval`.
    warnings : tuple of ModelWarning
        What the quality gates found doubtful (:mod:`perfcast.model.gates`); empty when none.
    segments : tuple of Segment
        A segmented model's pieces along one parameter, in increasing order (empty for an
        ordinary model). Each point is evaluated by the piece whose side of the breakpoints it
        lies on; beyond the last measured point, by the last piece, whose terms, constant and
        uncertainty are also this model's own (so that readers unaware of segments extrapolate
        as a segmented reader does).
    """

    kernel: str
    metric: str
    parameters: tuple[str, ...]
    constant: float
    terms: tuple[Term, ...] = ()
    quality: Quality | None = None
    uncertainty: Uncertainty | None = field(default=None, compare=False, repr=False)
    warnings: tuple[ModelWarning, ...] = ()
    segments: tuple[Segment, ...] = ()

    def _columns(self, points: np.ndarray | Mapping[str, Any]) -> dict[str, np.ndarray]:
        if isinstance(points, Mapping):
            return {name: np.asarray(points[name], dtype=float) for name in self.parameters}
        array = np.atleast_2d(np.asarray(points, dtype=float))
        if array.shape[-1] != len(self.parameters):
            raise InputError(
                f"points have {array.shape[-1]} columns, the model has "
                f"{len(self.parameters)} parameters ({', '.join(self.parameters)})"
            )
        return {name: array[..., i] for i, name in enumerate(self.parameters)}

    def design(self, points: np.ndarray | Mapping[str, Any]) -> np.ndarray:
        """Design matrix ``[1, term_1, ..., term_k]`` at the points, shape (n_points, k + 1)."""
        columns = self._columns(points)
        n = len(next(iter(columns.values())))
        return np.column_stack([np.ones(n)] + [t.basis(columns) for t in self.terms])

    def evaluate(self, points: np.ndarray | Mapping[str, Any]) -> np.ndarray:
        """Evaluate the model.

        Parameters
        ----------
        points : ndarray of shape (n_points, n_parameters), or mapping of name to values

        Returns
        -------
        ndarray of shape (n_points,)
            Infinite where the prediction exceeds the range of a double.
        """
        if self.segments:
            return self._by_segment(points, lambda model, part: model.evaluate(part))[0]
        coefficients = np.array([self.constant] + [t.coefficient for t in self.terms])
        with np.errstate(over="ignore"):  # far extrapolations may exceed a double: inf
            values: np.ndarray = self.design(points) @ coefficients
        return values

    def predict_interval(
        self, points: np.ndarray | Mapping[str, Any], level: float = 0.95
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Prediction and the interval a new measurement falls into with probability ``level``.

        The interval's variance is that of a new measurement (noise) plus that of the fitted
        curve, at least
        :attr:`Uncertainty.loo_variance`, plus beyond the largest measured value of a parameter
        per parameter the larger of the backtested error of the search there
        (:attr:`Uncertainty.extrapolation`) and the spread of the forms that fit the data as
        well (:attr:`Uncertainty.selection`);
        ``benchmarks/RESULTS.md``, "Calibration", measures how often it holds held-out
        measurements.

        Returns
        -------
        prediction, lower, upper : ndarray
            Each of shape (n_points,). Without fit uncertainty the bounds equal the prediction.
            Where a point lies so far out that the model or its variance exceeds the range of
            a double, the prediction is infinite and a bound infinite or NaN (no bound), without
            NumPy's overflow warnings.
        """
        with np.errstate(over="ignore", invalid="ignore"):
            return self._interval(points, level)

    def _interval(
        self, points: np.ndarray | Mapping[str, Any], level: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`predict_interval`'s computation."""
        from scipy import special

        if self.segments:
            value, lower, upper = self._by_segment(
                points, lambda model, part: model.predict_interval(part, level)
            )
            return value, lower, upper
        design = self.design(points)
        prediction = self.evaluate(points)
        if self.uncertainty is None:
            return prediction, prediction.copy(), prediction.copy()
        u = self.uncertainty
        fit_variance = np.maximum(np.einsum("ij,jk,ik->i", design, u.covariance, design), 0.0)
        quantile = special.stdtrit(max(u.dof, 1), 0.5 + level / 2)
        beyond = self._extrapolation_variance(points)
        if not u.relative:
            variance = np.maximum(fit_variance + u.noise_variance, u.loo_variance)
            spread = quantile * np.sqrt(variance + beyond * prediction**2)
            return prediction, prediction - spread, prediction + spread
        # Multiplicative noise: the interval is symmetric in log space, so it stays positive.
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            relative = np.sqrt(
                np.maximum(fit_variance / prediction**2 + u.noise_variance, u.loo_variance) + beyond
            )
            factor = np.exp(quantile * relative)
            # Ordered, so that a negative prediction's bounds are not reversed.
            lower = np.minimum(prediction / factor, prediction * factor)
            upper = np.maximum(prediction / factor, prediction * factor)
        # Where the prediction is 0 a relative spread means nothing: the fitted curve's own
        # spread is the interval there (none for a model that is 0 throughout).
        zero = prediction == 0
        if zero.any():
            spread = quantile * np.sqrt(fit_variance[zero])
            lower[zero], upper[zero] = -spread, spread
        return prediction, lower, upper

    def _extrapolation_variance(self, points: np.ndarray | Mapping[str, Any]) -> np.ndarray:
        """Relative variance added at ``points`` beyond the measured values: per parameter the
        larger of its backtest's and its model-selection spread's, summed over parameters."""
        assert self.uncertainty is not None
        columns = self._columns(points)
        size = len(next(iter(columns.values()))) if columns else 1
        # Per parameter, the backtest and the spread both estimate the error of the chosen
        # form along it: the larger one counts.
        along: dict[str, np.ndarray] = {}
        for e in self.uncertainty.extrapolation + self.uncertainty.selection:
            if e.parameter in columns and e.largest > 0:
                with np.errstate(divide="ignore", invalid="ignore"):
                    distance = np.log(columns[e.parameter] / e.largest)
                added = e.rate_variance * np.where(distance > 0, distance, 0.0) ** 2
                along[e.parameter] = np.maximum(along.get(e.parameter, 0.0), added)
        return sum(along.values(), np.zeros(size))

    def segment_index(self, points: np.ndarray | Mapping[str, Any]) -> np.ndarray:
        """Which of :attr:`segments` evaluates each point (0 for an ordinary model).

        A point belongs to the first segment whose breakpoint lies above its value of the
        segment parameter; points at or above the last breakpoint belong to the last segment.

        Returns
        -------
        ndarray of int, shape (n_points,)
        """
        table = self._table(points)
        if not self.segments:
            return np.zeros(len(table), dtype=np.intp)
        column = table[:, self.parameters.index(self.segments[0].parameter)]
        limits = [s.breakpoint.value for s in self.segments[:-1] if s.breakpoint is not None]
        index: np.ndarray = np.searchsorted(np.asarray(limits, dtype=float), column, side="right")
        return index

    def segment_conditions(self, digits: int | None = 6) -> list[str]:
        """Where each of :attr:`segments` applies, e.g. ``["n < 40", "n >= 40"]`` (empty for an
        ordinary model); ``digits`` significant digits of the breakpoints."""
        if not self.segments:
            return []
        name = self.segments[0].parameter
        limits = [
            _number(s.breakpoint.value, digits) for s in self.segments if s.breakpoint is not None
        ]
        conditions = [f"{name} < {limits[0]}"] if limits else []
        conditions += [f"{low} <= {name} < {high}" for low, high in itertools.pairwise(limits)]
        return [*conditions, f"{name} >= {limits[-1]}"] if limits else ["all"]

    def _table(self, points: np.ndarray | Mapping[str, Any]) -> np.ndarray:
        """The points as a 2-D array, one column per parameter in order."""
        columns = self._columns(points)
        return np.column_stack(np.broadcast_arrays(*(np.ravel(c) for c in columns.values())))

    def _by_segment(
        self,
        points: np.ndarray | Mapping[str, Any],
        compute: Callable[[Model, np.ndarray], np.ndarray | tuple[np.ndarray, ...]],
    ) -> tuple[np.ndarray, ...]:
        """``compute(segment model, its points)`` for every segment, the results put back in
        the order of ``points`` (each a tuple of arrays of shape (n_points,))."""
        table = self._table(points)
        index = self.segment_index(table)
        results: list[np.ndarray] = []
        for i, segment in enumerate(self.segments):
            rows = np.flatnonzero(index == i)
            if not len(rows):
                continue
            found = compute(segment.model, table[rows])
            parts = found if isinstance(found, tuple) else (found,)
            if not results:
                results = [np.full(len(table), np.nan) for _ in parts]
            for result, part in zip(results, parts, strict=True):
                result[rows] = part
        return tuple(results) if results else (np.zeros(0),) * 3

    def lead_order(self, parameter: str) -> tuple[Fraction, int]:
        """Fastest-growing ``(exponent, log_exponent)`` of ``parameter`` over all terms.

        Returns ``(0, 0)`` when no term depends on the parameter.
        """
        orders = [f.order for t in self.terms for f in t.factors if f.parameter == parameter]
        return max(orders) if orders else (Fraction(0), 0)

    def lead_term(self, parameter: str) -> str:
        """The lead-order factor of ``parameter`` as text (``"1"`` when constant in it)."""
        exponent, log_exponent = self.lead_order(parameter)
        text = Factor(parameter, exponent, log_exponent).text()
        return text or "1"

    def expression(self, power: str = "^", log: str = "log2", digits: int | None = 6) -> str:
        """Human-readable formula such as ``0.3 + 2.1e-06*n^2*log2(p)``.

        ``digits`` significant digits per coefficient; None prints them exactly (round trip).
        A segmented model lists its pieces with their ranges, e.g.
        ``1 + 2*n^2 for n < 40; 3 + 0.5*n^3 for n >= 40``.
        """
        if self.segments:
            return "; ".join(
                f"{s.model.expression(power, log, digits)} for {condition}"
                for s, condition in zip(self.segments, self.segment_conditions(digits), strict=True)
            )
        text = _number(self.constant, digits)
        for term in self.terms:
            sign = " - " if term.coefficient < 0 else " + "
            body = term.shape_text(power, log)
            text += f"{sign}{_number(abs(term.coefficient), digits)}*{body}"
        return text

    def to_extrap(self) -> str:
        """Extra-P notation, e.g. ``0.3 + 2.1e-06 * n^(2) * log2(p)^(1)``.

        Raises
        ------
        ValueError
            For a segmented model: the notation has no pieces.
        """
        if self.segments:
            raise ValueError(f"model of '{self.kernel}': Extra-P notation has no segments")
        text = repr(float(self.constant))
        for term in self.terms:
            parts = [repr(float(term.coefficient))]
            for f in term.factors:
                if f.exponent != 0:
                    parts.append(f"{f.parameter}^({f.exponent})")
                if f.log_exponent:
                    parts.append(f"log2({f.parameter})^({f.log_exponent})")
            text += " + " + " * ".join(parts)
        return text

    def to_sympy(self) -> sympy.Expr:
        """The model as a sympy expression (``log2(x)`` is ``log(x, 2)``)."""
        import sympy

        if self.segments:
            parameter = sympy.Symbol(self.segments[0].parameter, positive=True)
            pieces = [
                (s.model.to_sympy(), parameter < s.breakpoint.value)
                for s in self.segments[:-1]
                if s.breakpoint is not None
            ]
            return sympy.Piecewise(*pieces, (self.segments[-1].model.to_sympy(), True))
        symbols = {name: sympy.Symbol(name, positive=True) for name in self.parameters}
        expr: sympy.Expr = sympy.Float(self.constant)
        for term in self.terms:
            product: sympy.Expr = sympy.Float(term.coefficient)
            for f in term.factors:
                x = symbols[f.parameter]
                exponent = sympy.Rational(f.exponent.numerator, f.exponent.denominator)
                product *= x**exponent * sympy.log(x, 2) ** f.log_exponent
            expr += product
        return expr

    def to_latex(self) -> str:
        """LaTeX source of the formula, e.g. ``0.3 + 2.1 \\cdot 10^{-6} n^{2} \\log_2 p``; a
        segmented model's is a ``cases`` environment."""
        if self.segments:
            rows = " \\\\ ".join(
                s.model.to_latex() + " & " + condition.replace(">=", "\\geq")
                for s, condition in zip(self.segments, self.segment_conditions(4), strict=True)
            )
            return f"\\begin{{cases}} {rows} \\end{{cases}}"
        text = _latex_number(self.constant)
        for term in self.terms:
            sign = " - " if term.coefficient < 0 else " + "
            parts = [_latex_number(abs(term.coefficient))]
            for f in term.factors:
                if f.exponent != 0:
                    parts.append(f.parameter + ("" if f.exponent == 1 else f"^{{{f.exponent}}}"))
                if f.log_exponent:
                    power = "" if f.log_exponent == 1 else f"^{{{f.log_exponent}}}"
                    parts.append(f"\\log_2{power} {f.parameter}")
            text += sign + " \\cdot ".join(parts)
        return text

    def to_python(self, name: str = "model") -> str:
        """Source of an importable, vectorized Python function of the parameters."""
        body = self._python_body()
        args = ", ".join(self.parameters)
        return (
            "import numpy as np\n\n\n"
            f"def {name}({args}):\n"
            f'    """{self.metric} of {self.kernel}."""\n'
            f"    return {body}\n"
        )

    def _python_body(self) -> str:
        """The returned expression of :meth:`to_python` (``np.where`` over segments)."""
        body = self.expression(power="**", log="np.log2", digits=None)
        if not self.segments:
            return body
        body = self.segments[-1].model._python_body()
        for segment in reversed(self.segments[:-1]):
            assert segment.breakpoint is not None, "every segment but the last has one"
            body = (
                f"np.where({segment.parameter} < {segment.breakpoint.value!r}, "
                f"{segment.model._python_body()}, {body})"
            )
        return body

    def to_dict(self, with_quality: bool = True) -> dict[str, Any]:
        """The JSON form of DESIGN.md; ``with_quality`` adds ``quality``, ``warnings`` (a list
        of ``{"code", "message"}``) and, for a fitted model, ``uncertainty`` (what
        :meth:`predict_interval` needs); both are optional for readers: absent means no
        warnings, and a model without uncertainty has no interval."""
        data: dict[str, Any] = {
            "kernel": self.kernel,
            "metric": self.metric,
            "parameters": list(self.parameters),
            "constant": float(self.constant),
            "terms": [
                {
                    "coefficient": float(t.coefficient),
                    "factors": [
                        {
                            "parameter": f.parameter,
                            "exponent": _json_number(f.exponent),
                            "log_exponent": f.log_exponent,
                        }
                        for f in t.factors
                    ],
                }
                for t in self.terms
            ],
            "expression": self.expression(),
        }
        if with_quality:
            data["quality"] = None if self.quality is None else self.quality.to_dict()
            data["warnings"] = [w.to_dict() for w in self.warnings]
            if self.uncertainty is not None:
                data["uncertainty"] = self.uncertainty.to_dict()
        if self.segments:
            data["segments"] = [s.to_dict(with_quality) for s in self.segments]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str | None = None) -> Model:
        """Rebuild a model from its JSON form.

        Raises
        ------
        InputError
            When a required key is missing or malformed.
        """
        try:
            terms = tuple(
                Term(
                    _read_number(t["coefficient"], "coefficient"),
                    tuple(
                        Factor(
                            str(f["parameter"]),
                            _read_exponent(f["exponent"]),
                            _read_log_exponent(f.get("log_exponent", 0)),
                        )
                        for f in t["factors"]
                    ),
                )
                for t in data.get("terms", [])
            )
            quality = data.get("quality")
            uncertainty = data.get("uncertainty")
            parameters = tuple(str(p) for p in data["parameters"])
            constant = _read_number(data.get("constant", 0.0), "constant")
            strangers = sorted({f.parameter for t in terms for f in t.factors} - set(parameters))
            if strangers:
                raise ValueError(f"terms of unknown parameter(s) {strangers}")
            model = cls(
                kernel=str(data["kernel"]),
                metric=str(data.get("metric", "time")),
                parameters=parameters,
                constant=constant,
                terms=terms,
                quality=_checked_quality(quality) if quality else None,
                uncertainty=(
                    Uncertainty.from_dict(uncertainty, len(terms) + 1) if uncertainty else None
                ),
                warnings=tuple(
                    ModelWarning(str(w["code"]), str(w["message"]))
                    for w in data.get("warnings") or ()
                ),
                segments=_checked_segments(
                    tuple(Segment.from_dict(s, source) for s in data.get("segments") or ()),
                    parameters,
                ),
            )
            for name in ("extrapolation", "selection"):
                unknown = sorted(
                    {e.parameter for e in getattr(model.uncertainty, name)} - set(parameters)
                    if model.uncertainty is not None
                    else ()
                )
                if unknown:
                    raise ValueError(f"uncertainty: {name} of unknown parameter(s) {unknown}")
            return model
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise InputError(f"malformed model: {error}", source) from error


@dataclass(frozen=True)
class Breakpoint:
    """Where one segment of a segmented model ends and the next begins.

    Attributes
    ----------
    value : float
        The estimated breakpoint: points below it belong to the lower segment.
    lower, upper : float
        The interval the breakpoint lies in: from the last measured value of the lower
        segment's earliest plausible end to the first measured value of the upper segment's
        latest plausible start.
    """

    value: float
    lower: float
    upper: float

    def to_dict(self) -> dict[str, float]:
        """``{"value", "lower", "upper"}`` for JSON."""
        return {"value": self.value, "lower": self.lower, "upper": self.upper}


@dataclass(frozen=True)
class Segment:
    """One piece of a segmented :class:`Model`: the model of the measurements along
    ``parameter`` from ``start`` to ``end``.

    Attributes
    ----------
    parameter : str
        The parameter along which the model is segmented.
    start, end : float or None
        The segment's smallest and largest measured value of ``parameter`` (None: open).
    model : Model
        The model fitted to the segment's measurements alone.
    breakpoint : Breakpoint or None
        The break to the next segment; None for the last segment.
    """

    parameter: str
    start: float | None
    end: float | None
    model: Model
    breakpoint: Breakpoint | None = None

    def to_dict(self, with_quality: bool = True) -> dict[str, Any]:
        """``{"parameter", "from", "to", "model", "breakpoint"}`` for JSON."""
        return {
            "parameter": self.parameter,
            "from": self.start,
            "to": self.end,
            "model": self.model.to_dict(with_quality),
            "breakpoint": None if self.breakpoint is None else self.breakpoint.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str | None = None) -> Segment:
        """Rebuild from :meth:`to_dict`'s form.

        Raises
        ------
        InputError
            When a required key is missing or malformed.
        """
        if not isinstance(data, Mapping) or not isinstance(data.get("model"), Mapping):
            raise ValueError("segments: each must be an object with a 'model' object")
        bounds = [data.get(key) for key in ("from", "to")]
        point = data.get("breakpoint")
        return cls(
            parameter=str(data["parameter"]),
            start=None if bounds[0] is None else _read_number(bounds[0], "segments: from"),
            end=None if bounds[1] is None else _read_number(bounds[1], "segments: to"),
            model=Model.from_dict(data["model"], source),
            breakpoint=(
                None
                if point is None
                else Breakpoint(
                    *(
                        _read_number(point[key], f"segments: breakpoint {key}")
                        for key in _BREAKPOINT_KEYS
                    )
                )
            ),
        )


_BREAKPOINT_KEYS = ("value", "lower", "upper")


def _checked_segments(
    segments: tuple[Segment, ...], parameters: tuple[str, ...]
) -> tuple[Segment, ...]:
    """``segments`` when they form a segmented model over ``parameters``.

    Raises
    ------
    ValueError
        When they lie along different or unknown parameters, a segment but the last has no
        breakpoint (or the last has one), or the breakpoints do not increase.
    """
    if not segments:
        return segments
    names = {s.parameter for s in segments}
    if len(names) != 1 or not names <= set(parameters):
        raise ValueError(f"segments: along one parameter of the model, not {sorted(names)}")
    for s in segments:
        if s.model.parameters != parameters:
            raise ValueError(
                f"segments: a segment's model has parameters {list(s.model.parameters)}, "
                f"not the model's {list(parameters)}"
            )
        if s.model.segments:
            raise ValueError("segments: a segment's model cannot itself have segments")
        bounds = [b for b in (s.start, s.end) if b is not None]
        point = s.breakpoint
        if point is not None:
            bounds += [point.lower, point.value, point.upper]
        if not all(math.isfinite(b) for b in bounds):
            raise ValueError("segments: bounds and breakpoints must be finite numbers")
        if s.start is not None and s.end is not None and s.start > s.end:
            raise ValueError(f"segments: 'from' {s.start:g} lies above 'to' {s.end:g}")
        if point is not None and not point.lower <= point.value <= point.upper:
            raise ValueError(
                f"segments: breakpoint {point.value!r} outside its interval "
                f"[{point.lower!r}, {point.upper!r}]"
            )
    limits = [s.breakpoint for s in segments[:-1]]
    if segments[-1].breakpoint is not None or any(b is None for b in limits):
        raise ValueError("segments: every segment but the last needs a breakpoint")
    values = [b.value for b in limits if b is not None]
    if len(segments) < 2 or any(a >= b for a, b in itertools.pairwise(values)):
        raise ValueError("segments: at least two, with increasing breakpoints")
    return segments


def _checked_quality(data: Mapping[str, Any]) -> Quality:
    """A model's ``quality`` from JSON, each figure a number or null.

    Raises
    ------
    ValueError
        When a figure is of another type, or a key is unknown or missing.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"quality: must be an object, not {data!r}")
    for key, value in data.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValueError(f"quality: {key} must be a number or null, not {value!r}")
    return Quality(**data)


#: The largest exponent (of the parameter or of its logarithm) a model file may give: PMNF
#: searches use exponents up to 3 or so; a far larger one only overflows every prediction, and
#: a written one like ``1e100000000`` made reading the file compute a number of 100 million
#: digits (perfcast hung).
_LARGEST_EXPONENT = 64
_EXPONENT_TEXT = re.compile(r"\s*[-+]?\d{1,30}(\.\d{1,30})?(/\d{1,30})?\s*")


def _read_exponent(raw: Any) -> Fraction:
    """A term's exponent from a model file: a number, or text such as ``"1/3"`` or ``"0.5"``.

    Raises
    ------
    ValueError
        When it is of another type, not finite, has a zero denominator, is written with more
        digits or a scientific exponent as text, or exceeds :data:`_LARGEST_EXPONENT`.
    """
    if isinstance(raw, str) and _EXPONENT_TEXT.fullmatch(raw):
        if "/" in raw and int(raw.partition("/")[2]) == 0:
            raise ValueError(f"exponent {raw!r} divides by zero")
        exponent = Fraction(raw.strip())
    elif isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw):
        if abs(raw) > _LARGEST_EXPONENT:
            raise ValueError(f"exponent {raw!r} is beyond +-{_LARGEST_EXPONENT}")
        exponent = Fraction(str(raw))
    else:
        raise ValueError(f"an exponent must be a number or a fraction like '1/3', not {raw!r:.40}")
    if abs(exponent) > _LARGEST_EXPONENT:
        raise ValueError(f"exponent {raw!r} is beyond +-{_LARGEST_EXPONENT}")
    return exponent


def _read_log_exponent(raw: Any) -> int:
    """A term's exponent of the logarithm from a model file: a whole number.

    Raises
    ------
    ValueError
        When it is not an integer or exceeds :data:`_LARGEST_EXPONENT`.
    """
    if isinstance(raw, bool) or not isinstance(raw, int) or abs(raw) > _LARGEST_EXPONENT:
        raise ValueError(
            f"log_exponent must be a whole number up to {_LARGEST_EXPONENT}, not {raw!r:.40}"
        )
    return raw


#: The largest residual degrees of freedom a model file may claim (integers up to it are
#: exact doubles; the t quantile is the normal one long before).
_LARGEST_DOF = 2**53


def _read_number(value: Any, what: str) -> float:
    """``value`` from a model file as a finite float: a JSON number, not a string or boolean.

    Raises
    ------
    ValueError
        Naming ``what`` when ``value`` is of another type or not finite.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what} must be a number, not {value!r:.40}")
    if (isinstance(value, int) and abs(value) >= 2**1000) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, not {value!r:.40}")
    return float(value)


def _rate_list(entries: Any, name: str) -> list[Any]:
    """The ``extrapolation`` or ``selection`` list of a model file (absent: empty).

    Raises
    ------
    ValueError
        When it is not a list, or names a parameter twice (which entry counts would be a guess).
    """
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ValueError(f"uncertainty: {name} must be a list, not {entries!r}")
    names = [e.get("parameter") for e in entries if isinstance(e, Mapping)]
    twice = sorted({str(n) for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"uncertainty: {name} names parameter(s) {twice} more than once")
    return entries


def _rate_entry(entry: Any, name: str) -> tuple[str, float, float]:
    """``(parameter, largest, rate_variance)`` of one ``extrapolation`` or ``selection`` entry.

    Raises
    ------
    ValueError
        When the entry is not an object, its parameter not a string, ``largest`` not a positive
        finite number or ``rate_variance`` not a finite number >= 0.
    """
    if not isinstance(entry, Mapping):
        raise ValueError(f"uncertainty: each {name} entry must be an object, not {entry!r}")
    parameter = entry["parameter"]
    if not isinstance(parameter, str):
        raise ValueError(f"uncertainty: {name} parameter must be a string, not {parameter!r}")
    largest = _read_number(entry["largest"], f"uncertainty: {name} largest")
    rate = _read_number(entry["rate_variance"], f"uncertainty: {name} rate_variance")
    if largest <= 0 or rate < 0:
        raise ValueError(f"uncertainty: {name} values must be finite, largest > 0, variances >= 0")
    return parameter, largest, rate


def _number(value: float, digits: int | None) -> str:
    return repr(float(value)) if digits is None else format(float(value), f".{digits}g")


def _latex_number(value: float) -> str:
    mantissa, _, exponent = format(float(value), ".4g").partition("e")
    return mantissa if not exponent else f"{mantissa} \\cdot 10^{{{int(exponent)}}}"


def _json_number(exponent: Fraction) -> int | float:
    return exponent.numerator if exponent.denominator == 1 else float(exponent)
