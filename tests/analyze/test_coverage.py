"""Coverage novelty: nothing left open at a measured point, everything far from all of them, and
less near a point once it is counted as measured."""

from __future__ import annotations

import numpy as np

from perfcast.analyze.coverage import Coverage

MEASURED = np.array([[p, n] for p in (4.0, 8.0, 16.0, 32.0) for n in (10.0, 20.0)])
CANDIDATES = np.array(
    [[p, n] for p in (4.0, 8.0, 16.0, 32.0, 64.0, 4096.0) for n in (10.0, 20.0, 40.0)]
)


def row(point):
    return int(np.flatnonzero(np.all(np.isclose(CANDIDATES, point), axis=1))[0])


def test_novelty_is_zero_at_measured_points_and_one_far_from_them():
    novelty = Coverage(MEASURED, CANDIDATES).novelty()
    assert novelty.shape == (len(CANDIDATES),)
    assert all(novelty[row(p)] < 1e-3 for p in MEASURED)
    assert novelty[row([4096.0, 40.0])] > 0.999
    # One step beyond the measurements is more open than a measured point, less than far away.
    assert 0.1 < novelty[row([64.0, 20.0])] < novelty[row([4096.0, 20.0])]


def test_a_point_counted_as_measured_closes_its_neighbourhood():
    coverage = Coverage(MEASURED, CANDIDATES)
    before = coverage.novelty()
    coverage.add(np.array([64.0, 40.0]))
    coverage.add(np.array([64.0, 40.0]))  # counted once
    after = coverage.novelty()
    assert after[row([64.0, 40.0])] < 1e-3
    assert after[row([64.0, 20.0])] < before[row([64.0, 20.0])]
    assert np.all(after <= before + 1e-9)
    assert after[row([4096.0, 10.0])] > 0.999


def test_a_parameter_with_one_value_does_not_break_the_scale():
    measured = np.array([[2.0, 5.0], [4.0, 5.0]])
    candidates = np.array([[2.0, 5.0], [8.0, 5.0], [1024.0, 5.0]])
    novelty = Coverage(measured, candidates).novelty()
    assert novelty[0] < 1e-3 < novelty[1] < novelty[2]


def test_a_parameter_with_zero_among_its_values_is_rated_on_its_values():
    measured = np.array([[0.0, 4.0], [1.0, 4.0], [2.0, 8.0]])
    candidates = np.array([[0.0, 4.0], [3.0, 8.0], [50.0, 64.0]])
    coverage = Coverage(measured, candidates)
    novelty = coverage.novelty()
    assert np.all(np.isfinite(novelty))
    assert novelty[0] < 1e-3 < novelty[1] < novelty[2]
    coverage.add(np.array([3.0, 8.0]))
    assert coverage.novelty()[1] < 1e-3
