"""The distributed-modeling benchmark's synthetic kernel sets have the documented shape."""

from benchmarks.distributed import ONE_PARAMETER, TWO_PARAMETERS, synthetic


def test_kernel_sets_have_their_grid_and_repetitions():
    one = synthetic(7, ONE_PARAMETER, seed=3)
    assert (len(one.kernels), list(one.parameter_names)) == (7, ["p"])
    (series,) = one.series("time")
    assert series.values.shape == (7, 6, 5)
    two = synthetic(3, TWO_PARAMETERS, seed=3)
    assert two.series("time")[0].values.shape == (3, 25, 5)
    assert (two.frame.value > 0).all()
