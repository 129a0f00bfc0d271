"""Segmented models: one model per range of a parameter, breakpoints with intervals, predictions
by the right segment, JSON and command line."""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import numpy as np
import pytest

from perfcast.api import ModelSet, fit, load, predict, render
from perfcast.cli import main
from perfcast.core.errors import InputError
from perfcast.model.registry import make_modeler
from tests.conftest import TESTDATA, synthetic_experiment

SEGMENTED = TESTDATA / "extrap" / "text"


def test_extrap_segmented_input_gets_two_segments_with_the_break_inside_its_interval():
    models = fit(load(SEGMENTED / "one_parameter_segmented_1.txt"), modeler="segmented")
    (model,) = models.models
    first, last = model.segments
    assert first.model.lead_order("p") == (Fraction(2), 0)
    assert last.model.lead_order("p") == (Fraction(1), 0)
    assert first.breakpoint is not None and last.breakpoint is None
    assert first.breakpoint.lower <= 6 <= first.breakpoint.upper
    assert first.breakpoint.lower <= first.breakpoint.value <= first.breakpoint.upper
    assert (first.start, last.end) == (1.0, 10.0)
    # Each point by its own segment; beyond the measurements by the last one.
    np.testing.assert_allclose(model.evaluate({"p": np.array([3.0, 8.0, 100.0])}), [9, 38, 130])
    # The top-level terms are the last segment's, for readers that know no segments.
    assert model.terms == last.model.terms and model.constant == last.model.constant
    assert [w.code for w in model.warnings] == []  # the gate no longer sees two regimes


def test_the_same_file_modeled_as_one_piece_warns_two_regimes():
    (model,) = fit(load(SEGMENTED / "one_parameter_segmented_1.txt")).models
    assert "two-regimes" in [w.code for w in model.warnings]
    assert model.segments == ()


def test_several_kernels_segment_only_where_the_trend_changes():
    models = fit(load(SEGMENTED / "one_parameter_segmented_5.txt"), modeler="segmented")
    by_kernel = {m.kernel: m for m in models.models}
    assert by_kernel["met1"].segments == () and by_kernel["met2"].segments == ()
    breakpoint = by_kernel["met1+2"].segments[0].breakpoint
    assert breakpoint is not None and 4000 <= breakpoint.value <= 5000


def test_a_single_noisy_trend_is_not_split():
    experiment = synthetic_experiment(
        {"a": lambda p: 2 + 0.1 * p * np.log2(p), "b": lambda p: 5 + 3e-3 * p**2},
        {"p": [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]},
        noise=0.05,
        seed=3,
    )
    models = fit(experiment, modeler="segmented")
    assert [m.segments for m in models.models] == [(), ()]


def test_a_noisy_break_is_found_and_predictions_use_the_last_segment():
    grid = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
    experiment = synthetic_experiment(
        {"k": lambda p: np.where(p < 100, 10 + 0.5 * p, -4090 + 0.01 * p**2)},
        {"p": grid},
        noise=0.03,
        seed=1,
    )
    (model,) = fit(experiment, modeler="segmented").models
    assert len(model.segments) == 2
    breakpoint = model.segments[0].breakpoint
    assert breakpoint is not None and breakpoint.lower >= 64 and breakpoint.upper <= 128
    assert model.lead_order("p") == (Fraction(2), 0)
    (far,) = predict(fit(experiment, modeler="segmented"), {"p": 8192})
    assert far.value == pytest.approx(-4090 + 0.01 * 8192**2, rel=0.1)
    assert far.lower < far.value < far.upper


def test_a_fixed_number_of_segments_is_fitted_where_possible():
    experiment = synthetic_experiment(
        {"k": lambda p: 3 + p}, {"p": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}, noise=0.02
    )
    (two,) = fit(experiment, modeler="segmented", segments=2).models
    assert len(two.segments) == 2
    (one,) = fit(experiment, modeler="segmented", segments=3).models  # needs 12 values
    assert one.segments == ()


def test_two_parameters_segment_along_the_parameter_that_breaks():
    models = fit(load(SEGMENTED / "two_parameter_segmented_1.txt"), modeler="segmented")
    (model,) = models.models
    assert {s.parameter for s in model.segments} == {"x"}
    breakpoint = model.segments[0].breakpoint
    assert breakpoint is not None and 50 <= breakpoint.value <= 60
    x = np.array([20.0, 80.0])
    y = np.array([4.0, 4.0])
    np.testing.assert_allclose(
        model.evaluate({"x": x, "y": y}), [0.4 * 400 * 4, 1400 + 3200], rtol=0.05
    )


def test_json_round_trip_keeps_segments_and_predictions(tmp_path):
    models = fit(load(SEGMENTED / "one_parameter_segmented_2.txt"), modeler="segmented")
    document = json.loads(models.to_json())
    (entry,) = document["models"]
    segments = entry["segments"]
    assert [s["parameter"] for s in segments] == ["p", "p"]
    assert (segments[0]["from"], segments[0]["to"], segments[1]["from"]) == (4, 20, 24)
    assert segments[1]["breakpoint"] is None
    assert set(segments[0]["breakpoint"]) == {"value", "lower", "upper"}
    assert entry["terms"] == segments[1]["model"]["terms"]
    reread = ModelSet.from_json(models.to_json())
    points = {"p": np.array([4.0, 10.0, 30.0, 400.0])}
    np.testing.assert_allclose(
        reread.models[0].evaluate(points), models.models[0].evaluate(points), rtol=1e-12
    )
    assert render(reread, "text").count(" for p ") == 2


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s[0].update(parameter="q"),
        lambda s: s[0].update(breakpoint=None),
        lambda s: s[1].update(breakpoint={"value": 3, "lower": 2, "upper": 4}),
        lambda s: s.pop(),
        lambda s: s[0].update({"from": "8"}),
        lambda s: s[0]["breakpoint"].update(value=True),
    ],
)
def test_malformed_segments_are_input_errors(change):
    models = fit(load(SEGMENTED / "one_parameter_segmented_1.txt"), modeler="segmented")
    document = json.loads(models.to_json())
    change(document["models"][0]["segments"])
    with pytest.raises(InputError, match="segments"):
        ModelSet.from_json(json.dumps(document), source="bad.json")


@pytest.mark.parametrize(
    "settings", [{"segments": 4}, {"segments": True}, {"base": "hybrid"}, {"max_terms": 9}]
)
def test_settings_are_checked(settings):
    with pytest.raises(ValueError, match=next(iter(settings))):
        make_modeler("segmented", **settings)


def test_command_line_segments(tmp_path, capsys):
    source = str(SEGMENTED / "one_parameter_segmented_6.txt")
    assert main(["model", source, "--segments", "auto", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["modeler"]["name"] == "segmented"
    assert all(len(m["segments"]) == 2 for m in document["models"])
    assert main(["model", source, "--modeler", "sparse", "--segments", "2"]) == 0
    assert "for p >= " in capsys.readouterr().out
    assert main(["model", source, "--segments", "2", "--segment-parameter", "q"]) == 2
    assert "--segment-parameter q" in capsys.readouterr().err
    assert main(["model", source, "--segments", "2", "--static", "x.c"]) == 2
    assert "--static" in capsys.readouterr().err


def test_html_report_lists_segments_and_marks_the_break():
    from perfcast.api import report

    experiment = load(SEGMENTED / "one_parameter_segmented_4.txt")
    html = report(experiment, fit(experiment, modeler="segmented"))
    assert html.count("segments along p:") == 2
    assert "p &lt; 6.014" in html and "p &gt;= 6.014" in html
    assert html.count("break p=6.01") == 2


def _saved_segmented(tmp_path, change):
    """A segmented model document, changed by ``change(model_dict)``, written to a file."""
    models = fit(load(SEGMENTED / "one_parameter_segmented_1.txt"), modeler="segmented")
    data = json.loads(models.to_json())
    change(data["models"][0])
    path = tmp_path / "models.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m["segments"][0]["breakpoint"].update(value=float("nan")), "finite"),
        (lambda m: m["segments"][0]["breakpoint"].update(value=float("inf")), "finite"),
        (lambda m: m["segments"][0]["breakpoint"].update(lower=100, upper=1), "outside"),
        (lambda m: m["segments"][0]["model"].update(parameters=["q"]), "unknown parameter"),
        (lambda m: m["segments"][0]["model"].update(constant=float("nan")), "finite"),
        (lambda m: m.update(segments={"a": 1}), "object"),
        (lambda m: m.update(segments=["x", "y"]), "object"),
        (lambda m: m["segments"][0].update(model=None), "object"),
        (
            lambda m: m["segments"][0]["model"].update(segments=copy.deepcopy(m["segments"])),
            "itself",
        ),
    ],
)
def test_a_malformed_saved_segment_is_one_input_error(tmp_path, change, message):
    # Before: NaN/inf breakpoints were read and moved the predictions silently; a segment
    # that is not an object, or a segment model over other parameters, gave a traceback.
    path = _saved_segmented(tmp_path, change)
    with pytest.raises(InputError, match=message):
        ModelSet.load(path)
    status = main(
        ["advise", str(SEGMENTED / "one_parameter_segmented_1.txt"), "--at", "p=100"]
        + ["--models", str(path)]
    )
    assert status == 2


def test_a_segment_model_over_other_parameters_is_rejected(tmp_path):
    def change(model):
        segment = model["segments"][0]["model"]
        segment["parameters"] = ["q"]
        for term in segment["terms"]:
            for factor in term["factors"]:
                factor["parameter"] = "q"

    with pytest.raises(InputError, match="segment's model has parameters"):
        ModelSet.load(_saved_segmented(tmp_path, change))


def test_asking_for_more_segments_than_the_values_allow_says_so():
    # Before: --segments 3 on 10 values (3 x 4 needed 12) silently gave one piece.
    models = fit(load(SEGMENTED / "one_parameter_segmented_1.txt"), modeler="segmented", segments=3)
    assert models.models[0].segments == ()
    assert any("too few measured values for 3 segments" in note for note in models.notes)
    auto = fit(load(SEGMENTED / "one_parameter_segmented_1.txt"), modeler="segmented")
    assert not any("too few" in note for note in auto.notes)


def test_an_interval_that_overflows_far_away_is_not_written_as_nan():
    # Before: at p=1e300 the warning said "the 95% interval there spans nan to nan".
    models = fit(load(SEGMENTED / "one_parameter_segmented_1.txt"), modeler="segmented")
    (far,) = predict(models, {"p": 1e300})
    (warning,) = [w for w in far.warnings if w.code == "extrapolation"]
    assert "nan" not in warning.message and "too wide to compute" in warning.message


def test_segments_with_open_ends_are_reported(tmp_path):
    # Before: "from"/"to" null (documented as an open end) crashed the HTML report with a
    # TypeError; a reversed range ("from" above "to") was read without complaint.
    from perfcast.api import report

    def open_ends(model):
        for segment in model["segments"]:
            segment["from"] = segment["to"] = None

    experiment = load(SEGMENTED / "one_parameter_segmented_1.txt")
    models = ModelSet.load(_saved_segmented(tmp_path, open_ends))
    html = report(experiment, models)
    assert html.count("segments along p:") == 1 and "measured p=..)" in html
    reversed_range = _saved_segmented(tmp_path, lambda m: m["segments"][0].update({"from": 50}))
    with pytest.raises(InputError, match="lies above"):
        ModelSet.load(reversed_range)
