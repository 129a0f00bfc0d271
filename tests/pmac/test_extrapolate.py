"""Signature extrapolation: each canonical form recovers its generating function."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perfcast.analyze.extrapolate import CANONICAL_FORMS, choose_form, extrapolate
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment

GENERATORS = {
    "constant": lambda p: 7.0 + 0 * p,
    "linear": lambda p: 3.0 + 2.0 * p,
    "logarithmic": lambda p: 3.0 + 2.0 * np.log2(p),
    "exponential": lambda p: 2.0 * np.exp(0.3 * p),
    "inverse": lambda p: 10.0 + 100.0 / p,
    "power": lambda p: 100.0 * p**-0.5,
}


def _signature(series: dict[tuple[str, str], list[float]], ps: list[float]) -> Experiment:
    kernels, metrics, points, values = [], [], [], []
    for (kernel, metric), ys in series.items():
        for p, y in zip(ps, ys, strict=True):
            kernels.append(kernel)
            metrics.append(metric)
            points.append(p)
            values.append(y)
    return Experiment.from_columns(kernels, metrics, {"p": points}, values, source="sig.json")


@pytest.mark.parametrize("name", list(GENERATORS))
@pytest.mark.parametrize("ps", [[1.0, 2.0, 4.0], [2.0, 4.0, 8.0, 16.0]])
def test_each_canonical_form_recovers_its_generating_function(name, ps):
    function = GENERATORS[name]
    p = np.array(ps)
    form, coefficients, validation = choose_form(p, function(p))
    target = np.array([64.0])
    assert form.evaluate(coefficients, target)[0] == pytest.approx(function(target)[0], rel=1e-9)
    assert validation < 1e-9
    # forms that coincide on such data (1/p is both inverse and power) may win a tie, but only
    # a form with no more coefficients than the generator
    assert form.size <= next(f for f in CANONICAL_FORMS if f.name == name).size
    if name not in ("inverse", "power"):
        assert form.name == name


def test_strong_scaling_work_extrapolates_with_a_decreasing_form():
    ps = [1.0, 2.0, 4.0]
    work = [1e9 / p + 5e6 for p in ps]
    result = extrapolate(_signature({("bb:solve+0x10", "loads"): work}, ps), {"p": 16})
    element = result.elements[0]
    assert element.form in ("inverse", "power")
    assert element.value == pytest.approx(1e9 / 16 + 5e6, rel=1e-9)
    assert result.signature.points()[0, 0] == 16


def test_bounded_features_are_clamped_and_say_so():
    ps = [1.0, 2.0, 4.0]
    series = {
        ("bb:a+0x0", "l1.hit_rate"): [0.6, 0.8, 1.0],  # linear, would be 4.0 at p=16
        ("bb:a+0x0", "loads"): [300.0, 200.0, 0.0],  # falls below zero
    }
    result = extrapolate(_signature(series, ps), {"p": 16})
    values = {e.feature: e for e in result.elements}
    assert values["l1.hit_rate"].value == 1.0 and values["l1.hit_rate"].clamped
    assert values["loads"].value == 0.0 and values["loads"].clamped
    assert any("clamped" in w for w in result.warnings)


def test_both_form_sets_report_the_alternative():
    ps = [1.0, 2.0, 4.0, 8.0, 16.0]
    series = {("bb:a+0x0", "loads"): [1e6 / p for p in ps]}
    result = extrapolate(_signature(series, ps), {"p": 128}, forms="both")
    element = result.elements[0]
    assert element.value == pytest.approx(1e6 / 128, rel=1e-6)
    assert element.alternative is not None
    assert element.alternative["form"] in ("pmnf", "inverse", "power")
    assert math.isfinite(element.alternative["value"])


def test_fewer_than_three_points_is_refused():
    with pytest.raises(InputError, match="3 or more values of 'p'") as caught:
        extrapolate(_signature({("k", "loads"): [2.0, 1.0]}, [1.0, 2.0]), {"p": 16})
    assert caught.value.source == "sig.json"


@pytest.mark.parametrize("first", [0.0, -1.0])
def test_signatures_at_a_point_that_is_not_positive_are_refused(first):
    # log2(0) and 1/0 in the canonical forms' bases made the fit raise LinAlgError.
    sig = _signature({("k", "loads"): [9.0, 3.0, 2.0, 1.0]}, [first, 1.0, 2.0, 4.0])
    with pytest.raises(InputError, match=f"positive values of 'p'.*p={first:g}") as caught:
        extrapolate(sig, {"p": 16})
    assert caught.value.source == "sig.json"


def test_target_must_name_the_signature_parameter():
    sig = _signature({("k", "loads"): [3.0, 2.0, 1.0]}, [1.0, 2.0, 4.0])
    with pytest.raises(InputError, match="parameter 'p'"):
        extrapolate(sig, {"n": 16})


def test_elements_missing_at_a_point_are_skipped_and_listed():
    sig = Experiment.from_columns(
        ["k", "k", "k", "j", "j"],
        ["loads"] * 5,
        {"p": [1, 2, 4, 1, 2]},
        [4.0, 2.0, 1.0, 5.0, 6.0],
    )
    result = extrapolate(sig, {"p": 8})
    assert [e.kernel for e in result.elements] == ["k"]
    assert result.skipped[0]["kernel"] == "j"
    assert "1 element(s) measured at fewer than 3 points were left out" in result.warnings


def test_an_element_missing_at_one_of_four_points_is_kept_and_not_called_left_out():
    # The warning said "not measured at every point were left out", while such elements with
    # three or more points are kept: only those with fewer are left out.
    sig = Experiment.from_columns(
        ["k"] * 4 + ["j"] * 3 + ["i"] * 2,
        ["loads"] * 9,
        {"p": [1, 2, 4, 8, 2, 4, 8, 4, 8]},
        [8.0, 4.0, 2.0, 1.0, 4.0, 2.0, 1.0, 2.0, 1.0],
    )
    result = extrapolate(sig, {"p": 16})
    assert sorted(e.kernel for e in result.elements) == ["j", "k"]
    assert [s["kernel"] for s in result.skipped] == ["i"]
    assert "1 element(s) measured at fewer than 3 points were left out" in result.warnings


def test_pmnf_at_three_points_passes_on_its_quality_warnings():
    sig = _signature({("k", "loads"): [1e6, 5e5, 2.5e5]}, [1.0, 2.0, 4.0])
    result = extrapolate(sig, {"p": 8}, forms="pmnf")
    assert result.elements[0].form == "pmnf"
    assert any("few-points" in w for w in result.warnings)


def test_hit_rates_are_derived_from_the_extrapolated_miss_counts():
    ps = [1.0, 2.0, 4.0]
    loads = [4000.0 / p + 100.0 for p in ps]
    l1_misses = [400.0 / p + 4.0 for p in ps]
    ll_misses = [0.0, 1.0, 0.0]  # a handful of misses: the rate would swing
    series = {
        ("bb:a+0x0", "loads"): loads,
        ("bb:a+0x0", "l1.misses"): l1_misses,
        ("bb:a+0x0", "ll.misses"): ll_misses,
        ("bb:a+0x0", "l1.hit_rate"): [1 - m / a for m, a in zip(l1_misses, loads, strict=True)],
        ("bb:a+0x0", "ll.cumulative_hit_rate"): [1.0, 1 - 1 / 1100, 1.0],
    }
    result = extrapolate(_signature(series, ps), {"p": 16})
    values = {e.feature: e for e in result.elements}
    accesses = 4000.0 / 16 + 100.0
    assert values["loads"].value == pytest.approx(accesses, rel=1e-9)
    assert values["l1.hit_rate"].form == "derived"
    assert values["l1.hit_rate"].value == pytest.approx(1 - (400 / 16 + 4) / accesses, rel=1e-9)
    rate = values["ll.cumulative_hit_rate"]
    assert rate.form == "derived"
    assert rate.value == pytest.approx(1 - values["ll.misses"].value / accesses, rel=1e-12)
    assert rate.value >= values["l1.hit_rate"].value


def test_derived_last_level_misses_are_bounded_by_the_first_level_ones():
    ps = [1.0, 2.0, 4.0]
    series = {
        ("bb:a+0x0", "stores"): [100.0, 100.0, 100.0],
        ("bb:a+0x0", "l1.misses"): [30.0, 20.0, 10.0],  # 0 from p = 8 on (clamped)
        ("bb:a+0x0", "ll.misses"): [5.0, 5.0, 5.0],
    }
    result = extrapolate(_signature(series, ps), {"p": 16})
    values = {e.feature: e for e in result.elements}
    assert values["l1.hit_rate"].value == 1.0
    assert values["ll.cumulative_hit_rate"].value == 1.0
    assert values["ll.cumulative_hit_rate"].clamped


def test_an_earlier_signature_format_is_made_cumulative_and_says_so():
    ps = [1.0, 2.0, 4.0]
    series = {
        ("bb:a+0x0", "loads"): [100.0, 50.0, 25.0],
        ("bb:a+0x0", "l1.hit_rate"): [0.5, 0.5, 0.5],
        ("bb:a+0x0", "ll.hit_rate"): [0.5, 0.5, 0.5],  # half of the misses: 0.75 cumulative
    }
    result = extrapolate(_signature(series, ps), {"p": 16})
    values = {e.feature: e for e in result.elements}
    assert "ll.hit_rate" not in values
    assert values["ll.cumulative_hit_rate"].value == pytest.approx(0.75)
    assert values["ll.cumulative_hit_rate"].form == "constant"
    assert any("3 last-level hit rate(s) of an earlier" in w for w in result.warnings)


def test_a_series_that_reaches_zero_at_its_largest_point_is_fitted():
    # exponential fits 64, 8, 1 (all positive) best but cannot fit 64, 8, 1, 0: choosing it
    # failed an assertion once the series ended at 0
    p = np.array([1.0, 2.0, 4.0, 8.0])
    form, coefficients, _ = choose_form(p, np.array([64.0, 8.0, 1.0, 0.0]))
    assert not form.log_values
    assert math.isfinite(form.evaluate(coefficients, np.array([16.0]))[0])
