"""The distributed-modeling benchmark's synthetic kernel sets have the documented shape."""

import numpy as np

from benchmarks.distributed import ONE_PARAMETER, TWO_PARAMETERS, synthetic, synthetic_by_rows


def test_kernel_sets_have_their_grid_and_repetitions():
    one = synthetic(7, ONE_PARAMETER, seed=3)
    assert (len(one.kernels), list(one.parameter_names)) == (7, ["p"])
    (series,) = one.series("time")
    assert series.values.shape == (7, 6, 5)
    two = synthetic(3, TWO_PARAMETERS, seed=3)
    assert two.series("time")[0].values.shape == (3, 25, 5)
    assert (two.frame.value > 0).all()


def test_kernel_sets_built_from_codes_are_those_built_row_by_row():
    """The benchmark hands its columns over as codes; the experiment is the checked one."""
    for grid in (ONE_PARAMETER, TWO_PARAMETERS):
        fast, checked = synthetic(40, grid, seed=5), synthetic_by_rows(40, grid, seed=5)
        assert fast.frame.equals(checked.frame)
        assert (fast.kernels, fast.metric_names) == (checked.kernels, checked.metric_names)
        (mine,), (theirs,) = fast.series("time"), checked.series("time")
        assert np.array_equal(mine.values, theirs.values)
        assert np.array_equal(mine.points, theirs.points)
