"""The PMaC benchmark's judging: influential blocks and element errors."""

import math

import pytest

from benchmarks.pmac import element_errors, influential
from perfcast.core.experiment import Experiment


def _signature(blocks: dict[str, dict[str, float]]) -> Experiment:
    rows = [(k, m, v) for k, features in blocks.items() for m, v in features.items()]
    kernels, metrics, values = zip(*rows, strict=True)
    return Experiment.from_columns(kernels, metrics, {"p": [8] * len(rows)}, values)


def test_influence_is_a_share_of_memory_operations_else_of_flops():
    blocks = {
        "bb:a+0x0": {"loads": 9990.0, "stores": 0.0},
        "bb:b+0x0": {"loads": 5.0, "stores": 5.0},  # exactly 0.1 %: not over it
        "bb:c+0x0": {"loads": 11.0},
        "bb:d+0x0": {"fp.add.f64.scalar": 100.0},  # no memory operations: judged by flops
        "bb:e+0x0": {"fp.add.f64.scalar": 0.01},
    }
    assert influential(blocks) == ["bb:a+0x0", "bb:c+0x0", "bb:d+0x0"]


def test_element_errors_are_relative_for_counts_and_keep_the_absolute_error():
    truth = _signature({"bb:a+0x0": {"loads": 100.0, "l1.hit_rate": 0.0, "stores": 10.0}})
    guess = _signature({"bb:a+0x0": {"loads": 90.0, "l1.hit_rate": 0.01}})
    errors = {feature: (rel, ab) for feature, rel, ab in element_errors(guess, truth)}
    assert errors["loads"] == (0.1, 10.0)
    assert math.isinf(errors["l1.hit_rate"][0]) and errors["l1.hit_rate"][1] == 0.01
    assert math.isinf(errors["stores"][0])  # missing from the extrapolation


def test_a_kept_signature_is_reused_not_collected(tmp_path):
    from benchmarks.pmac import collected_signature
    from perfcast.api import save

    kept = _signature({"bb:a+0x0": {"loads": 100.0}})
    save(kept, tmp_path / "cg_256_20_p8.json")
    # no valgrind run: the program does not even exist
    signature, reused = collected_signature(["/absent/cg", "256", "20"], 8, None, tmp_path)
    assert reused
    assert signature.frame["value"].tolist() == [100.0]


def test_mispredictions_are_judged_as_counts_and_as_prediction_rates():
    truth = _signature(
        {"bb:a+0x0": {"loads": 100.0, "branches": 1000.0, "branch.mispredictions": 4.0}}
    )
    guess = _signature(
        {"bb:a+0x0": {"loads": 100.0, "branches": 1000.0, "branch.mispredictions": 3.0}}
    )
    errors = {feature: (rel, ab) for feature, rel, ab in element_errors(guess, truth)}
    assert errors["branch.mispredictions"] == (0.25, 1.0)  # a 25 % count error of one event
    rate_error, rate_absolute = errors["branch.prediction_rate"]
    assert rate_absolute == pytest.approx(0.001)  # 0.997 against 0.996
    assert rate_error == pytest.approx(0.001 / 0.996)


def test_a_count_the_collected_signature_lacks_is_zero_there():
    # the block ran at the target without a misprediction: one predicted is judged, not skipped
    truth = _signature({"bb:a+0x0": {"loads": 100.0, "branches": 50.0}})
    guess = _signature(
        {"bb:a+0x0": {"loads": 100.0, "branches": 50.0, "branch.mispredictions": 2.0}}
    )
    errors = {feature: (rel, ab) for feature, rel, ab in element_errors(guess, truth)}
    assert math.isinf(errors["branch.mispredictions"][0])
    assert errors["branch.mispredictions"][1] == 2.0
    # and a block predicted without mispredictions where it had some: predicted 0
    errors = {feature: (rel, ab) for feature, rel, ab in element_errors(truth, guess)}
    assert errors["branch.mispredictions"] == (1.0, 2.0)


def test_element_coverage_counts_the_papers_elements_inside_their_interval():
    from benchmarks.pmac import element_coverage

    truth = _signature(
        {"bb:a+0x0": {"loads": 100.0, "l1.hit_rate": 0.9, "l1.misses": 10.0,
                      "branch.mispredictions": 3.0, "stores": 1310720.0}}
    )  # fmt: skip
    intervals = {
        ("bb:a+0x0", "loads"): (90.0, 110.0),  # inside
        ("bb:a+0x0", "l1.hit_rate"): (0.95, 0.99),  # outside
        ("bb:a+0x0", "stores"): (1310720.0000000012, 1310720.0000000047),  # rounding: inside
    }
    # miss counts and mispredictions are not the paper's elements
    assert element_coverage(intervals, truth) == (2, 3)
    assert element_coverage({}, truth) == (0, 3)  # no interval: outside
