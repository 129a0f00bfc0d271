"""The calibration benchmark counts coverage as documented."""

from __future__ import annotations

import numpy as np

from benchmarks.calibration import Coverage


def test_a_case_counts_the_share_of_its_points_and_warned_misses_apart() -> None:
    coverage = Coverage("group")
    coverage.add(np.array([True, True, False, False]), np.array([0.1, 0.2]), True, False)
    coverage.add(np.array([False]), np.array([0.3]), False, True)
    assert coverage.cases == 2
    assert coverage.share == 0.25
    assert coverage.warned == 0.5
    assert coverage.few_points == 1.0
    assert coverage.row() == "| group | 2 | 0.5 | 25.0 % | 50.0 % | 100.0 % | 22.5 % |"
