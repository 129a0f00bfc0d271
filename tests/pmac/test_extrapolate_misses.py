"""Cache miss counts of data exchanged all-to-all: the ``exchange`` form."""

from __future__ import annotations

import numpy as np
import pytest

from perfcast.analyze.extrapolate import extrapolate
from perfcast.core.experiment import Experiment


def _series(features: dict[str, list[float]], ps: tuple[int, ...]) -> Experiment:
    kernels, metrics, points, values = [], [], [], []
    for feature, ys in features.items():
        for p, y in zip(ps, ys, strict=True):
            kernels.append("bb:sort+0x0")
            metrics.append(feature)
            points.append(p)
            values.append(y)
    return Experiment.from_columns(kernels, metrics, {"p": points}, values)


def _received(p: float, n: float = 62500.0) -> float:
    return n * (p - 1) / p**2  # lines a rank receives from the other p - 1 ranks


def test_misses_of_exchanged_data_are_recovered_from_three_counts():
    ps = (2, 4, 8)
    features = {
        "loads": [4e6 / p for p in ps],
        "l1.misses": [1e5 / p + _received(p) for p in ps],
        "ll.misses": [_received(p) for p in ps],
    }
    result = extrapolate(_series(features, ps), {"p": 16})
    by_feature = {e.feature: e for e in result.elements}
    assert by_feature["ll.misses"].form == "exchange"
    assert by_feature["ll.misses"].value == pytest.approx(_received(16), rel=1e-9)
    # the same shape in another count is not taken for an exchange
    instructions = extrapolate(_series({"instructions": [_received(p) for p in ps]}, ps), {"p": 16})
    assert instructions.elements[0].form != "exchange"


def test_a_miss_count_that_steps_from_zero_is_not_fitted_as_an_exchange():
    # a reduction's misses from p = 2 on, constant: (0, 16384, 16384) fits the exchange form
    # through its value at p = 1 alone, and would predict 4766 at 16
    ps = (1, 2, 4)
    features = {"loads": [1e6, 1e6, 1e6], "ll.misses": [0.0, 16384.0, 16384.0]}
    result = extrapolate(_series(features, ps), {"p": 16})
    misses = next(e for e in result.elements if e.feature == "ll.misses")
    assert misses.form != "exchange"
    assert np.isfinite(misses.value)


def test_a_count_that_starts_at_two_ranks_and_stays_is_a_step():
    # rank 0's reduction: 0 at p = 1, the same count from p = 2 on; measured at 1, 2, 4 the
    # forms through the 0 predict 2/3 of it (the constant) or less
    ps = (1, 2, 4)
    features = {"loads": [1e6, 1e6, 1e6], "ll.misses": [0.0, 16384.0, 16384.0]}
    result = extrapolate(_series(features, ps), {"p": 16})
    misses = next(e for e in result.elements if e.feature == "ll.misses")
    assert misses.value == pytest.approx(16384.0)
    assert misses.validation_error == pytest.approx(0.0, abs=1e-12)


def test_a_late_count_that_falls_is_not_taken_for_a_step():
    # 0, then 16000 and 10000: the step (their mean, 13000) predicts 16000 where 10000 ran,
    # 60 % off; the mean of all three predicts 8000 there, 20 % off, and wins
    ps = (1, 2, 4)
    features = {"loads": [1e6, 1e6, 1e6], "instructions": [0.0, 16000.0, 10000.0]}
    result = extrapolate(_series(features, ps), {"p": 16})
    element = next(e for e in result.elements if e.feature == "instructions")
    assert element.validation_error == pytest.approx(0.2)
    assert element.value != pytest.approx(13000.0)
