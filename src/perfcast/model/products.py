"""Learners whose models multiply features: a product of powers, and a sum of pairwise products.

A linear sum over a run's counts cannot form a product, yet costs often are one: a whole run's
instructions are its step count times the counts of one step, a solver's time the iterations
times the grid size. Two estimators of the learned models (:mod:`perfcast.model.learned`) form
products, both choosing a few terms by greedy forward selection on the leave-one-out error (the
closed form through the hat matrix, so every candidate is scored on runs it was not fitted to):

* :class:`PowerProduct` (method ``log-linear``): ``log y = c + sum a_j log x_j``, that is
  ``y = e^c * prod x_j^a_j``, the product of powers of PMNF over any numeric feature. A feature
  with zeros enters as two columns, ``log x`` where ``x > 0`` (0 elsewhere) and the indicator
  ``x > 0``: a factor present only in the runs where the feature counted anything. A feature
  with negative values enters as it is (a factor ``e^(a x)``); constant ones not at all.
* :class:`CountProducts` (method ``products``): ``y = c0 + sum b_k u_k`` with ``b_k >= 0``, each
  ``u_k`` a feature or the product of two, fitted on the relative residuals ``(y - f) / y``.
  For counts: a count is a sum over code blocks of how often each ran times its size, and how
  often a block ran can be the product of two counted things (steps times the bodies of a step).
  Only features without negative values take part; the product candidates are built from the
  ``PRODUCT_FEATURES`` features that correlate most with the target.

Both learn ``t = log y`` like the other estimators of a log target (``fit(x, t)``,
``predict(x)`` gives ``t``).
"""

from __future__ import annotations

import math

import numpy as np

#: Terms a forward selection adds at most (besides the constant).
MAX_TERMS = 10
#: A term is added only when it lowers the leave-one-out error by this share at least.
MIN_GAIN = 0.01
#: Features whose pairwise products are candidates of :class:`CountProducts` (most correlated).
PRODUCT_FEATURES = 100
#: Leverage above this makes a candidate's leave-one-out error undefined: it is skipped.
MAX_LEVERAGE = 1.0 - 1e-8


def forward_selection(base: np.ndarray, candidates: np.ndarray, target: np.ndarray) -> list[int]:
    """Greedy forward selection of columns by the leave-one-out (PRESS) error of least squares.

    Parameters
    ----------
    base : ndarray, shape (rows, b)
        Columns always in the fit (the constant).
    candidates : ndarray, shape (rows, m)
        Columns to choose from.
    target : ndarray, shape (rows,)

    Returns
    -------
    list of int
        The chosen candidates, in the order chosen: at most ``MAX_TERMS`` and at most half of
        the runs beyond two, each lowering the leave-one-out error by ``MIN_GAIN`` at least,
        none once the fit is exact.
    """
    rows = len(target)
    basis, _ = np.linalg.qr(base)
    residual = target - basis @ (basis.T @ target)
    leverage = np.sum(basis**2, axis=1)
    if np.any(leverage > MAX_LEVERAGE):
        return []
    press = float(np.sum((residual / (1.0 - leverage)) ** 2))
    exact = 1e-20 * float(target @ target)
    size = np.sum(candidates**2, axis=0)
    chosen: list[int] = []
    for _ in range(min(MAX_TERMS, max(0, (rows - 2) // 2))):
        if press <= exact:  # fitted exactly: anything more fits rounding errors
            break
        rest = candidates - basis @ (basis.T @ candidates)
        norms = np.sum(rest**2, axis=0)
        usable = norms > 1e-10 * np.maximum(size, 1e-300)
        usable[chosen] = False
        if not np.any(usable):
            break
        columns = np.flatnonzero(usable)
        part = rest[:, columns]
        squared = norms[columns]
        fitted = residual[:, None] - part * ((part.T @ residual) / squared)
        lever = leverage[:, None] + part**2 / squared
        undefined = np.max(lever, axis=0) > MAX_LEVERAGE
        left = np.where(lever > MAX_LEVERAGE, 1.0, 1.0 - lever)  # those columns score inf
        scores = np.sum((fitted / left) ** 2, axis=0)
        scores[undefined] = math.inf
        best = int(np.argmin(scores))
        if not scores[best] < (1.0 - MIN_GAIN) * press:
            break
        column = int(columns[best])
        chosen.append(column)
        unit = rest[:, column] / math.sqrt(norms[column])
        basis = np.column_stack([basis, unit])
        residual = fitted[:, best]
        leverage = lever[:, best]
        press = float(scores[best])
    return chosen


class PowerProduct:
    """``y = e^c * prod x_j^a_j``: least squares on the logarithms, terms chosen by
    :func:`forward_selection` (see the module's docstring for zeros and negatives).

    Parameters
    ----------
    names : list of str, optional
        The names of the feature columns, for :meth:`expression`.
    """

    def __init__(self, names: list[str] | None = None) -> None:
        self.names = names

    def fit(
        self, x: np.ndarray, t: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> PowerProduct:
        """Fit ``t = log y`` from the features ``x``; returns self."""
        self.columns_: list[tuple[int, str]] = []
        self.floors_: dict[int, float] = {}
        for j in range(x.shape[1]):
            values = x[:, j]
            if np.ptp(values) == 0:
                continue
            if values.min() > 0:
                self.columns_.append((j, "log"))
                self.floors_[j] = float(values.min())
            elif values.min() == 0:
                self.floors_[j] = float(values[values > 0].min())
                self.columns_.append((j, "log where positive"))
                self.columns_.append((j, "present"))
            else:
                self.columns_.append((j, "as is"))
        candidates = self._design(x)
        root = np.ones(len(t)) if sample_weight is None else np.sqrt(sample_weight)
        chosen = forward_selection(root[:, None], candidates * root[:, None], t * root)
        self.terms_ = [self.columns_[k] for k in chosen]
        design = np.column_stack([np.ones(len(t)), candidates[:, chosen]])
        self.coefficients_, *_ = np.linalg.lstsq(design * root[:, None], t * root, rcond=None)
        return self

    def _design(self, x: np.ndarray, terms: list[tuple[int, str]] | None = None) -> np.ndarray:
        columns = []
        for j, kind in self.columns_ if terms is None else terms:
            values = x[:, j]
            if kind == "log":
                columns.append(np.log(np.maximum(values, self.floors_[j])))
            elif kind == "log where positive":
                positive = values > 0
                safe = np.where(positive, values, 1.0)
                columns.append(np.where(positive, np.log(np.maximum(safe, 1e-300)), 0.0))
            elif kind == "present":
                columns.append((values > 0).astype(float))
            else:
                columns.append(values.astype(float))
        return np.column_stack(columns) if columns else np.empty((len(x), 0))

    def predict(self, x: np.ndarray) -> np.ndarray:
        """``t = log y`` of the rows of ``x`` (a feature at or below 0 where the training runs
        had only positive values is taken at its smallest training value)."""
        design = np.column_stack([np.ones(len(x)), self._design(x, self.terms_)])
        return np.asarray(design @ self.coefficients_)

    def expression(self) -> str:
        """The fitted product as text."""
        factors = [f"{math.exp(self.coefficients_[0]):.4g}"]
        for (j, kind), power in zip(self.terms_, self.coefficients_[1:], strict=True):
            name = self.names[j] if self.names else f"x{j}"
            if kind == "present":
                factors.append(f"{math.exp(power):.4g}^[{name} > 0]")
            elif kind == "as is":
                factors.append(f"exp({power:.4g} * {name})")
            else:
                factors.append(f"{name}^{power:.4g}")
        return " * ".join(factors)


class CountProducts:
    """``y = c0 + sum b_k u_k``, ``b_k >= 0``, each ``u_k`` a feature or a product of two, the
    terms chosen by :func:`forward_selection` on the relative residuals and then fitted by
    non-negative least squares (see the module's docstring).

    Parameters
    ----------
    names : list of str, optional
        The names of the feature columns, for :meth:`expression`.
    """

    def __init__(self, names: list[str] | None = None) -> None:
        self.names = names

    def fit(
        self, x: np.ndarray, t: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> CountProducts:
        """Fit ``t = log y`` from the features ``x``; returns self."""
        from scipy.optimize import nnls

        y = np.exp(t)
        usable = [j for j in range(x.shape[1]) if np.ptp(x[:, j]) > 0 and x[:, j].min() >= 0]
        self.scale_ = np.ones(x.shape[1])
        for j in usable:
            self.scale_[j] = float(np.max(x[:, j]))
        scaled = x / self.scale_
        correlation = [abs(_correlation(scaled[:, j], y)) for j in usable]
        ranked = [usable[k] for k in np.argsort(correlation)[::-1][:PRODUCT_FEATURES]]
        pairs = [(a, b) for i, a in enumerate(ranked) for b in ranked[i:]]
        self.candidates_: list[tuple[int, ...]] = [(j,) for j in usable] + [
            (min(a, b), max(a, b)) for a, b in pairs
        ]
        root = np.ones(len(y)) if sample_weight is None else np.sqrt(sample_weight)
        rows = (root / y)[:, None]
        design = self._design(scaled, self.candidates_)
        chosen = forward_selection(rows, design * rows, root)
        self.terms_ = [self.candidates_[k] for k in chosen]
        full = np.column_stack([np.ones(len(y)), design[:, chosen]])
        self.coefficients_, _ = nnls(full * rows, root, maxiter=50 * full.shape[1])
        self.floor_ = 1e-6 * float(np.min(y))
        return self

    @staticmethod
    def _design(scaled: np.ndarray, terms: list[tuple[int, ...]]) -> np.ndarray:
        if not terms:
            return np.empty((len(scaled), 0))
        return np.column_stack([np.prod(scaled[:, list(term)], axis=1) for term in terms])

    def predict(self, x: np.ndarray) -> np.ndarray:
        """``t = log y`` of the rows of ``x`` (the sum kept above a millionth of the smallest
        training value)."""
        design = np.column_stack([np.ones(len(x)), self._design(x / self.scale_, self.terms_)])
        return np.asarray(np.log(np.maximum(design @ self.coefficients_, self.floor_)))

    def expression(self) -> str:
        """The fitted sum as text, in the features' own units."""
        parts = [f"{self.coefficients_[0]:.4g}"]
        for term, coefficient in zip(self.terms_, self.coefficients_[1:], strict=True):
            if coefficient == 0:
                continue
            factor = coefficient / float(np.prod(self.scale_[list(term)]))
            names = [self.names[j] if self.names else f"x{j}" for j in term]
            parts.append(f"{factor:.4g} * " + " * ".join(names))
        return " + ".join(parts)


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])
