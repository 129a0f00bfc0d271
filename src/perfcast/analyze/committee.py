"""A committee of plausible models of one kernel: how much measuring a candidate point would
narrow their spread at a target configuration.

A fitted model's covariance says what new points teach *if its form is right*; it cannot show
that another form fits the measurements about as well and predicts differently at the target.
A committee can: the ``pmnf`` term search refitted to bootstrap resamples of the measurements
(each point's repetitions drawn again with replacement, so the search may choose other terms),
each member weighted alike. Their logarithmic predictions at the target ``T`` and at every
candidate ``Y_x`` give an empirical joint covariance (logarithms: one member far off does not
swamp the rest, and the spread is relative, like the noise). Measuring ``r`` repetitions at ``x``
(relative noise variance ``s_x^2`` per repetition) leaves at the target, for a Gaussian
committee, the variance ``Var(T) - Cov(T, Y_x)^2 / (Var(Y_x) + s_x^2 / r)``: a candidate counts
where the members that disagree at the target also disagree, which is where a measurement tells
their forms apart (often a point off the lines measured, where the parameters combine). After
a point is chosen the joint covariance is conditioned on it (its Schur complement), so that a
batch holds no redundant points. The covariance is kept in the members' span: with ``m``
members and weighted anomalies ``A`` (members x points), ``C = A' K A`` with an ``m x m``
matrix ``K`` (the identity at first) that each conditioning updates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfcast.core.experiment import Experiment
from perfcast.core.function import Model
from perfcast.model.pmnf import PMNFModeler

#: Bootstrap resamples refitted per kernel.
MEMBERS = 24
#: Seed of the resampling: the same measurements give the same advice every time.
SEED = 20261125


class Committee:
    """The joint spread of a committee's logarithmic predictions at a target and at candidates.

    Parameters
    ----------
    at_target : ndarray, shape (members,)
        Each member's prediction at the target, logarithmic.
    at_candidates : ndarray, shape (members, candidates)
        Each member's prediction at every candidate, logarithmic.
    noise : ndarray, shape (candidates,)
        Relative noise variance of one measurement at every candidate (``inf`` where a
        measurement tells the committee nothing).
    scale : float
        Factor from a logarithmic variance at the target to the variance reported (the
        prediction at the target squared gives an absolute variance).
    """

    def __init__(
        self, at_target: np.ndarray, at_candidates: np.ndarray, noise: np.ndarray, scale: float
    ) -> None:
        members = len(at_target)
        self._target = (at_target - at_target.mean()) / np.sqrt(members)
        self._candidates = (at_candidates - at_candidates.mean(axis=0)) / np.sqrt(members)
        self._noise = noise
        self._scale = scale
        self._inner = np.eye(members)

    def variance(self) -> float:
        """The committee's variance at the target now (times ``scale``)."""
        return float(max(self._target @ self._inner @ self._target, 0.0)) * self._scale

    def gains(self, repetitions: int) -> np.ndarray:
        """The reduction of :meth:`variance` by measuring each candidate ``repetitions`` times."""
        shared = self._target @ self._inner @ self._candidates
        own = np.einsum("ij,ij->j", self._candidates, self._inner @ self._candidates)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            gain = shared**2 / (np.maximum(own, 0.0) + self._noise / repetitions) * self._scale
        return np.where(np.isfinite(gain), np.minimum(gain, self.variance()), 0.0)

    def add(self, candidate: int, repetitions: int) -> None:
        """Condition the committee on a measurement of ``candidate`` (``repetitions`` runs)."""
        column = self._inner @ self._candidates[:, candidate]
        noise = self._noise[candidate] / repetitions
        denominator = self._candidates[:, candidate] @ column + noise
        if np.isfinite(denominator) and denominator > 0:
            self._inner = self._inner - np.outer(column, column) / denominator


def bootstrap_models(
    parameters: list[str], points: np.ndarray, values: np.ndarray, members: int = MEMBERS
) -> list[Model]:
    """The ``pmnf`` models of ``members`` bootstrap resamples of one kernel's measurements.

    Parameters
    ----------
    parameters : list of str
    points : ndarray, shape (n_points, n_parameters)
    values : ndarray, shape (n_points, n_repetitions)
        Every repetition (NaN pads points with fewer).
    members : int

    Returns
    -------
    list of Model
        One per resample the term search could model.
    """
    rng = np.random.default_rng(SEED)
    rows = []
    for member in range(members):
        for point, repetitions in zip(points, values, strict=True):
            taken = repetitions[np.isfinite(repetitions)]
            if not len(taken):
                continue
            coordinates = dict(zip(parameters, (float(v) for v in point), strict=True))
            rows += [
                {"kernel": f"m{member}", "metric": "value", **coordinates, "value": float(v)}
                for v in rng.choice(taken, size=len(taken), replace=True)
            ]
    experiment = Experiment.from_frame(pd.DataFrame(rows), parameters=parameters)
    return list(PMNFModeler().fit(experiment, "value").models_)
