"""The committee of bootstrap refits behind the advice: its conditioning is the Gaussian one of
its empirical covariance, and its members are the term search's models of resampled data."""

from __future__ import annotations

import numpy as np
import pytest

from perfcast.analyze.committee import MEMBERS, Committee, bootstrap_models


def _conditioned(covariance: np.ndarray, index: int, noise: float) -> np.ndarray:
    """The covariance after one noisy observation of coordinate ``index`` (Schur complement)."""
    column = covariance[:, index]
    return covariance - np.outer(column, column) / (covariance[index, index] + noise)


def test_gains_and_updates_are_the_gaussian_conditioning_of_the_members_covariance():
    rng = np.random.default_rng(3)
    members, candidates = 9, 5
    at_target = rng.normal(size=members)
    at_candidates = rng.normal(size=(members, candidates)) + 0.8 * at_target[:, None]
    noise = rng.uniform(0.05, 0.3, candidates)
    committee = Committee(at_target, at_candidates, noise, scale=4.0)
    joint = np.cov(np.column_stack([at_target, at_candidates]).T, bias=True)
    assert committee.variance() == pytest.approx(4.0 * joint[0, 0])
    repetitions = 3
    expected = [
        4.0 * joint[0, 1 + x] ** 2 / (joint[1 + x, 1 + x] + noise[x] / repetitions)
        for x in range(candidates)
    ]
    np.testing.assert_allclose(committee.gains(repetitions), expected, rtol=1e-10)
    for x in (2, 4, 2):  # the same point again still teaches, but less
        before = committee.gains(repetitions)[x]
        committee.add(x, repetitions)
        joint = _conditioned(joint, 1 + x, noise[x] / repetitions)
        assert committee.variance() == pytest.approx(4.0 * joint[0, 0])
        assert committee.gains(repetitions)[x] < before
    np.testing.assert_allclose(
        committee.gains(repetitions),
        [
            4.0 * joint[0, 1 + x] ** 2 / (joint[1 + x, 1 + x] + noise[x] / repetitions)
            for x in range(candidates)
        ],
        rtol=1e-8,
    )


def test_points_where_the_members_agree_or_that_cannot_be_measured_gain_nothing():
    at_target = np.array([0.0, 1.0, 2.0, 3.0])
    at_candidates = np.column_stack([np.full(4, 5.0), at_target, at_target])
    committee = Committee(at_target, at_candidates, np.array([0.1, 0.1, np.inf]), scale=1.0)
    gains = committee.gains(1)
    assert gains[0] == 0.0 and gains[2] == 0.0
    assert 0 < gains[1] <= committee.variance()


def test_bootstrap_refits_are_reproducible_and_follow_well_measured_data():
    rng = np.random.default_rng(0)
    points = np.array([(p, n) for p in (2.0, 4.0, 8.0, 16.0, 32.0) for n in (10.0, 20.0, 40.0)])
    truth = 5.0 + 0.5 * points[:, 0] * points[:, 1]
    values = truth[:, None] * (1 + rng.uniform(-0.02, 0.02, (len(points), 4)))
    values[0, 3] = np.nan  # a point with fewer repetitions
    first = bootstrap_models(["p", "n"], points, values)
    again = bootstrap_models(["p", "n"], points, values)
    assert len(first) == MEMBERS
    target = np.array([[64.0, 80.0]])
    predictions = [float(m.evaluate(target)[0]) for m in first]
    assert predictions == [float(m.evaluate(target)[0]) for m in again]
    exact = 5.0 + 0.5 * 64 * 80
    assert np.median(np.abs(np.array(predictions) / exact - 1)) < 0.05
