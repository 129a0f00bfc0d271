"""Signature series across core counts: blocks that run at some counts only, forms judged as
clamped, rolling-origin validation and relative residuals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from perfcast import cli
from perfcast.analyze.extrapolate import (
    CANONICAL_FORMS,
    choose_form,
    extrapolate,
    running_regime,
)
from perfcast.api import save
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.static.signature import fill_unexecuted, is_count_feature


def _rows(rows: list[tuple[str, str, float, float]]) -> Experiment:
    kernels, metrics, points, values = zip(*rows, strict=True)
    return Experiment.from_columns(
        list(kernels), list(metrics), {"p": list(points)}, list(values), source="sig.json"
    )


def test_counts_are_features_rates_and_spreads_are_not():
    assert is_count_feature("loads")
    assert is_count_feature("branch.mispredictions")
    assert is_count_feature("fp.add.f64.scalar")
    assert not is_count_feature("l1.hit_rate")
    assert not is_count_feature("ll.cumulative_hit_rate")
    assert not is_count_feature("ll.hit_rate")
    assert not is_count_feature("instructions.rank_spread")


def test_a_block_absent_at_a_core_count_ran_zero_times_there():
    sig = _rows(
        [
            ("bb:solve+0x0", "loads", 1, 8.0),
            ("bb:solve+0x0", "loads", 2, 4.0),
            ("bb:solve+0x0", "loads", 4, 2.0),
            ("bb:solve+0x0", "l1.hit_rate", 1, 0.5),
            ("bb:reduce+0x0", "loads", 2, 10.0),
            ("bb:reduce+0x0", "loads", 4, 30.0),
            ("bb:reduce+0x0", "l1.hit_rate", 2, 0.9),
            ("plain", "loads", 1, 3.0),
        ]
    )
    filled, added = fill_unexecuted(sig)
    frame = filled.frame
    assert added == 1
    zero = frame[(frame["kernel"] == "bb:reduce+0x0") & (frame["p"] == 1)]
    assert zero["metric"].tolist() == ["loads"]
    assert zero["value"].tolist() == [0.0]
    # rates have no value where nothing ran; kernels that are not signature elements keep
    # their gaps
    assert not ((frame["kernel"] == "bb:solve+0x0") & (frame["metric"] == "l1.hit_rate")).sum() > 1
    assert (frame["kernel"] == "plain").sum() == 1


def test_a_feature_not_recorded_at_a_point_is_not_filled():
    # the signature at p=1 was taken without branch simulation: no branch zeros there
    sig = _rows(
        [
            ("bb:a+0x0", "loads", 1, 4.0),
            ("bb:a+0x0", "loads", 2, 2.0),
            ("bb:a+0x0", "branches", 2, 5.0),
            ("bb:a+0x0", "loads", 4, 1.0),
            ("bb:a+0x0", "branches", 4, 3.0),
        ]
    )
    assert fill_unexecuted(sig) == (sig, 0)


def test_the_reduction_of_rank_zero_that_starts_at_two_ranks_is_extrapolated():
    # rank 0 receives p - 1 histograms: nothing at p = 1, then linear in p
    rows = []
    for p in (1, 2, 4):
        rows.append(("bb:local+0x0", "loads", p, 1e6 / p))
        if p > 1:
            rows.append(("bb:reduce+0x10", "loads", p, 4096.0 * (p - 1)))
    result = extrapolate(_rows(rows), {"p": 16})
    values = {(e.kernel, e.feature): e for e in result.elements}
    reduce = values[("bb:reduce+0x10", "loads")]
    assert reduce.form == "linear"
    assert reduce.value == pytest.approx(4096.0 * 15)
    assert not result.skipped


def test_a_block_that_stops_running_is_predicted_not_to_run():
    # a set-up branch taken at p = 1 only: its counts are 8000, 0, 0; the constant form (the
    # mean) predicted a third of the first count at every larger p
    rows = [("bb:setup+0xc0", "loads", p, v) for p, v in ((1, 8000.0), (2, 0.0), (4, 0.0))]
    rows += [("bb:work+0x0", "loads", p, 1e6 / p) for p in (1, 2, 4)]
    result = extrapolate(_rows(rows), {"p": 16})
    setup = next(e for e in result.elements if e.kernel == "bb:setup+0xc0")
    assert setup.value == 0.0
    assert setup.validation_error == 0.0


def test_a_prediction_is_validated_as_clamped():
    p = np.array([1.0, 2.0, 4.0])
    y = np.array([8000.0, 0.0, 0.0])
    form, _, error = choose_form(p, y, bounds=(0.0, np.inf))
    assert form.name == "linear"
    assert error == 0.0
    unbounded_form, _, unbounded_error = choose_form(p, y)
    assert unbounded_form.name == "constant"
    assert unbounded_error > 1  # 4000 (the mean) against 0


def test_rolling_validation_takes_the_worst_holdout():
    p = np.array([1.0, 2.0, 4.0, 8.0])
    y = np.array([10.0, 10.0, 13.0, 10.0])  # a bump at p = 4
    form, _, last_only = choose_form(p, y, holdouts=1)
    assert form.name == "constant"
    assert last_only == pytest.approx(1.0 / 10.0)  # mean 11 of the first three against 10
    form, _, worst = choose_form(p, y, holdouts=2)
    assert form.name == "constant"
    assert worst == pytest.approx(3.0 / 13.0)  # mean 10 of the first two against 13


def test_relative_residuals_weigh_every_core_count_alike():
    linear = next(f for f in CANONICAL_FORMS if f.name == "linear")
    p = np.array([1.0, 2.0, 4.0])
    y = np.array([1000.0, 10.0, 12.0])
    a_abs, b_abs = linear.fit(p, y)
    a_rel, b_rel = linear.fit(p, y, relative=True)
    absolute = linear.evaluate((a_abs, b_abs), p)
    relative = linear.evaluate((a_rel, b_rel), p)
    # the relative fit stays closer to the small values, the absolute one to the large value
    assert abs(relative[1] - 10.0) / 10.0 < abs(absolute[1] - 10.0) / 10.0
    assert abs(absolute[0] - 1000.0) < abs(relative[0] - 1000.0)


def test_relative_residuals_recover_an_exact_form():
    p = np.array([1.0, 2.0, 4.0, 8.0])
    y = 5.0 + 300.0 / p
    form, coefficients, _ = choose_form(p, y, relative=True, holdouts=2)
    assert form.evaluate(coefficients, np.array([64.0]))[0] == pytest.approx(5.0 + 300.0 / 64)


def test_holdouts_below_one_are_refused():
    rows = [("bb:a+0x0", "loads", p, 8.0 / p) for p in (1, 2, 4)]
    with pytest.raises(InputError, match="holdouts must be at least 1"):
        extrapolate(_rows(rows), {"p": 8}, holdouts=0)


def _signature_files(tmp_path) -> list[str]:
    paths = []
    for p in (1, 2, 4, 8):
        rows = [("bb:solve+0x0", "loads", p, 5.0 + 300.0 / p)]
        if p > 1:
            rows.append(("bb:reduce+0x0", "loads", p, 64.0 * (p - 1)))
        path = tmp_path / f"p{p}.json"
        save(_rows(rows), path)
        paths.append(str(path))
    return paths


def test_extrapolate_command_takes_holdouts_and_residuals(tmp_path, capsys):
    out = tmp_path / "at64.json"
    status = cli.main(
        ["extrapolate", *_signature_files(tmp_path), "--to", "p=64", "--holdouts", "2",
         "--residuals", "relative", "-o", str(out), "--format", "json"]
    )  # fmt: skip
    assert status == 0
    report = json.loads(capsys.readouterr().out)
    values = {e["kernel"]: e["value"] for e in report["elements"]}
    assert values["bb:solve+0x0"] == pytest.approx(5.0 + 300.0 / 64)
    assert values["bb:reduce+0x0"] == pytest.approx(64.0 * 63)
    assert out.exists()


@pytest.mark.parametrize("holdouts", ["0", "two", "-1"])
def test_extrapolate_command_refuses_bad_holdouts(tmp_path, capsys, holdouts):
    with pytest.raises(SystemExit) as exit_:
        cli.main(
            ["extrapolate", *_signature_files(tmp_path), "--to", "p=64", "--holdouts", holdouts]
        )
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert "--holdouts" in error
    assert "Traceback" not in error


def test_a_count_that_starts_at_two_ranks_is_fitted_from_there():
    # last-level misses of rank 0's reduction: none at p = 1 (it does not run), then the
    # same 16384 at every p; through the zero no form fits the step
    rows = [("bb:reduce+0xa0", "ll.misses", 1, 0.0)]
    rows += [("bb:reduce+0xa0", "ll.misses", p, 16384.0) for p in (2, 4, 8, 16)]
    result = extrapolate(_rows(rows), {"p": 32})
    element = result.elements[0]
    assert element.form == "constant"
    assert element.value == 16384.0


def test_the_running_regime_needs_three_points_and_a_signature_count():
    p = np.array([1.0, 2.0, 4.0, 8.0])
    y = np.array([0.0, 5.0, 5.0, 5.0])
    kept_p, kept_y = running_regime("bb:f+0x0", "ll.misses", p, y)
    assert kept_p.tolist() == [2.0, 4.0, 8.0]
    assert kept_y.tolist() == [5.0, 5.0, 5.0]
    for kernel, feature, series in (
        ("bb:f+0x0", "ll.misses", np.array([0.0, 0.0, 5.0, 5.0])),  # two points left
        ("bb:f+0x0", "l1.hit_rate", y),  # a rate
        ("plain", "loads", y),  # not a signature element
        ("bb:f+0x0", "loads", np.array([5.0, 0.0, 5.0, 5.0])),  # no leading zero
    ):
        assert running_regime(kernel, feature, p, series)[1].tolist() == series.tolist()
