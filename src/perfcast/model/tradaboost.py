"""Two-stage TrAdaBoost.R2: instance transfer for regression (Pardoe and Stone, ICML 2010).

A few runs of a program on a new platform (the target) and many on another (the source) are
pooled; each source run gets a weight, and the weights of the source runs the pooled model
predicts worst shrink step by step, until in the last step the source weighs nothing and the
model is learned from the target runs alone. Which step to keep is decided by cross-validation
over the target runs (the source runs are always trained on), so the method falls back to no
transfer when the source does not help.

Stage 1, step ``k`` of ``steps`` (weights ``w``, uniform at first):

1. cross-validate AdaBoost.R2' (below) under ``w`` over folds of the target runs: the step's
   error;
2. fit one learner under ``w`` and take every run's error ``|y - h(x)|``, divided by the
   largest;
3. multiply each source weight by ``beta ** error``, ``beta`` found by bisection so the target
   runs then hold ``m/(n+m) + (k+1)/(steps-1) * (1 - m/(n+m))`` of the total weight.

Stage 2 is AdaBoost.R2' (Drucker's AdaBoost.R2 with the source weights frozen): ``rounds``
learners, each fitted under the current weights; its weighted linear loss ``eps`` over the
target runs sets ``beta = eps / (1 - eps)``, the target runs it predicts well lose weight by
``beta ** (1 - loss)``, and the prediction is the median of the learners weighted by
``log(1 / beta)``.

The learners are anything with ``fit(x, y, sample_weight=...)`` and ``predict(x)``; they must
not reproduce their training runs exactly (a fully grown forest does), or every error is zero
and no weight can change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


class WeightedRegressor(Protocol):
    """A regressor that takes sample weights (scikit-learn's convention)."""

    def fit(self, x: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> Any:
        """Learn ``y`` from ``x`` under the weights."""

    def predict(self, x: np.ndarray) -> np.ndarray:
        """One prediction per row of ``x``."""


@dataclass
class WeightedMedianEnsemble:
    """Learners whose prediction is their median weighted by ``weights`` (AdaBoost.R2)."""

    learners: list[Any]
    weights: np.ndarray

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The weighted median of the learners' predictions, per row of ``x``."""
        predictions = np.stack([learner.predict(x) for learner in self.learners])
        order = np.argsort(predictions, axis=0)
        ranked = np.take_along_axis(predictions, order, axis=0)
        cumulative = np.cumsum(self.weights[order], axis=0)
        first = np.argmax(cumulative >= 0.5 * cumulative[-1], axis=0)
        return np.asarray(ranked[first, np.arange(predictions.shape[1])])


@dataclass
class TrAdaBoostResult:
    """What :func:`two_stage_tradaboost_r2` learned.

    Attributes
    ----------
    ensemble : WeightedMedianEnsemble
        AdaBoost.R2' under the weights of the chosen step, fitted on all runs.
    step : int
        The chosen step (0-based); the last one gives the source no weight.
    errors : list of float
        Cross-validated mean absolute error over the target runs of each step.
    oof : ndarray
        Out-of-fold predictions of the target runs at the chosen step.
    source_share : float
        The source runs' share of the total weight at the chosen step.
    """

    ensemble: WeightedMedianEnsemble
    step: int
    errors: list[float]
    oof: np.ndarray
    source_share: float


def two_stage_tradaboost_r2(
    make_learner: Callable[[], WeightedRegressor],
    source: tuple[np.ndarray, np.ndarray],
    target: tuple[np.ndarray, np.ndarray],
    *,
    steps: int = 10,
    rounds: int = 3,
    folds: int = 5,
    seed: int = 0,
) -> TrAdaBoostResult:
    """Learn from the target runs with the source runs re-weighted (two-stage TrAdaBoost.R2).

    Parameters
    ----------
    make_learner : callable
        Returns a fresh, unfitted learner.
    source, target : (ndarray, ndarray)
        Features (rows) and values of the source runs and of the target runs, in the space
        errors are measured in (e.g. the logarithm of run times).
    steps : int
        Steps of stage 1 (at least 2: the last gives the source no weight).
    rounds : int
        Learners of each AdaBoost.R2' (stage 2).
    folds : int
        Folds over the target runs (at most one per target run, at least 2).
    seed : int
        Seed of the folds.

    Returns
    -------
    TrAdaBoostResult
    """
    xs, ys = source
    xt, yt = target
    n, m = len(ys), len(yt)
    if steps < 2 or rounds < 1 or m < 2:
        raise ValueError("two-stage TrAdaBoost.R2 needs 2 steps, 1 round and 2 target runs")
    x, y = np.vstack([xs, xt]), np.concatenate([ys, yt])
    is_source = np.arange(n + m) < n
    folds = max(2, min(folds, m))
    held_out = np.array_split(np.random.default_rng(seed).permutation(m), folds)
    weights = np.full(n + m, 1.0 / (n + m))
    start_share = m / (n + m)
    errors: list[float] = []
    best: tuple[float, int, np.ndarray, np.ndarray] | None = None
    for step in range(steps):
        oof = np.empty(m)
        for held in held_out:
            train = np.setdiff1d(np.arange(n + m), n + held)
            ensemble = _adaboost_r2_prime(
                make_learner, x[train], y[train], weights[train], is_source[train], rounds
            )
            oof[held] = ensemble.predict(xt[held])
        error = float(np.mean(np.abs(oof - yt)))
        errors.append(error)
        if best is None or error < best[0]:
            best = (error, step, weights.copy(), oof)
        if step == steps - 1:
            break
        learner = make_learner()
        learner.fit(x, y, sample_weight=weights * (n + m))
        residual = np.abs(y - learner.predict(x))
        share = start_share + (step + 1) / (steps - 1) * (1.0 - start_share)
        weights = _shift_to_target(weights, residual, is_source, share)
    assert best is not None
    _, step, chosen, oof = best
    ensemble = _adaboost_r2_prime(make_learner, x, y, chosen, is_source, rounds)
    return TrAdaBoostResult(ensemble, step, errors, oof, float(chosen[is_source].sum()))


def _shift_to_target(
    weights: np.ndarray, residual: np.ndarray, is_source: np.ndarray, share: float
) -> np.ndarray:
    """Source weights times ``beta ** (residual / max residual)``, ``beta`` in (0, 1] chosen by
    bisection so the target holds ``share`` of the total; then the source rescaled to hit the
    share exactly (when runs the learner reproduces exactly keep more weight than allowed)."""
    largest = float(residual.max())
    loss = residual / largest if largest > 0 else np.zeros_like(residual)
    target_total = float(weights[~is_source].sum())
    wanted = target_total * (1.0 - share) / share if share < 1.0 else 0.0
    source = weights[is_source]
    low, high = -60.0, 0.0  # log(beta)
    for _ in range(60):
        middle = 0.5 * (low + high)
        if float((source * np.exp(middle * loss[is_source])).sum()) > wanted:
            high = middle
        else:
            low = middle
    shifted = source * np.exp(low * loss[is_source])
    total = float(shifted.sum())
    shifted = shifted * (wanted / total) if total > 0 else shifted
    out = weights.copy()
    out[is_source] = shifted
    return out / out.sum()


def _adaboost_r2_prime(
    make_learner: Callable[[], WeightedRegressor],
    x: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    is_source: np.ndarray,
    rounds: int,
) -> WeightedMedianEnsemble:
    """AdaBoost.R2 with linear loss, re-weighting only the target runs (the source frozen)."""
    weights = weights / weights.sum()
    target = ~is_source
    target_total = float(weights[target].sum())
    learners: list[Any] = []
    votes: list[float] = []
    for _ in range(rounds):
        learner = make_learner()
        learner.fit(x, y, sample_weight=weights * len(y))
        residual = np.abs(y[target] - learner.predict(x[target]))
        largest = float(residual.max())
        loss = residual / largest if largest > 0 else np.zeros_like(residual)
        local = weights[target] / weights[target].sum()
        eps = float(loss @ local)
        if learners and eps >= 0.5:
            break
        learners.append(learner)
        if eps <= 1e-12 or eps >= 0.5:
            votes.append(1.0)
            break
        beta = eps / (1.0 - eps)
        votes.append(float(np.log(1.0 / beta)))
        updated = weights[target] * beta ** (1.0 - loss)
        weights = weights.copy()
        weights[target] = updated / updated.sum() * target_total
    return WeightedMedianEnsemble(learners, np.asarray(votes))
