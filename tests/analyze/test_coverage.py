"""Coverage novelty: nothing left open at a measured point, everything far from all of them, and
less near a point once it is counted as measured."""

from __future__ import annotations

import numpy as np
import pytest

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


TARGET = np.array([1024.0, 40.0])


def test_candidates_near_the_target_tell_most_about_it_and_a_counted_point_less_about_it():
    coverage = Coverage(MEASURED, CANDIDATES)
    variance, reductions = coverage.target_information(TARGET)
    assert 0.99 < variance <= 1.0
    assert np.all((reductions >= 0) & (reductions <= variance))
    # 4096 lies as far from the target (2 doublings) as 256 would; 64 lies 4 doublings away.
    assert reductions[row([4096.0, 40.0])] > reductions[row([64.0, 40.0])]
    assert reductions[row([64.0, 40.0])] > reductions[row([32.0, 40.0])]
    assert reductions[row([4.0, 10.0])] < 1e-6
    coverage.add(np.array([4096.0, 40.0]))
    after, again = coverage.target_information(TARGET)
    assert after == pytest.approx(variance - reductions[row([4096.0, 40.0])], rel=0.05)
    assert again[row([4096.0, 40.0])] < 1e-6  # measuring it twice tells nothing more
    assert again[row([4096.0, 20.0])] < reductions[row([4096.0, 20.0])]  # nor its neighbour


def test_smooth_values_give_longer_length_scales_than_the_steps():
    # A smooth curve in log-log coordinates: the process fitted by marginal likelihood is
    # correlated over several steps, so far candidates tell more about the target.
    # The usual sparse start: a line along each parameter and one point off them.
    measured = np.array(
        [[p, 10.0] for p in (4.0, 8.0, 16.0, 32.0, 64.0)]
        + [[4.0, n] for n in (20.0, 30.0, 40.0, 50.0)]
        + [[8.0, 20.0]]
    )
    candidates = np.array([[p, n] for p in (4.0, 64.0, 256.0) for n in (10.0, 40.0)])
    values = 3.0 + 0.01 * measured[:, 0] ** 1.5 * np.log2(measured[:, 0]) + 0.5 * measured[:, 1]
    steps = Coverage(measured, candidates)
    fitted = Coverage(measured, candidates, values)
    assert np.all(fitted.length_scales >= steps.length_scales - 1e-12)
    assert fitted.length_scales[0] > 1.5 * steps.length_scales[0]
    _, from_steps = steps.target_information(TARGET)
    _, from_fitted = fitted.target_information(TARGET)
    assert from_fitted[-1] > 5 * from_steps[-1]  # p=256, n=40


def test_values_that_allow_no_fit_keep_the_steps():
    steps = Coverage(MEASURED, CANDIDATES).length_scales
    for values in (np.full(len(MEASURED), 2.0), -np.ones(len(MEASURED)), np.ones(3)):
        assert np.allclose(Coverage(MEASURED, CANDIDATES, values).length_scales, steps)
