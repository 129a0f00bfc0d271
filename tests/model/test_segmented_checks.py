"""Segmented models on the Extra-P test files: what ``auto`` says where the values are too few
to test for segments."""

from __future__ import annotations

import json

from perfcast.api import fit, load
from perfcast.cli import main
from tests.conftest import TESTDATA

TEXT = TESTDATA / "extrap" / "text"


def test_auto_on_too_few_values_invents_no_segments_and_says_why():
    # Before: one piece and not a word, as if the test for segments had found none.
    models = fit(load(TESTDATA / "extrap" / "json" / "input_1.JSON"), modeler="segmented")
    assert [m.segments for m in models.models] == [()]
    (note,) = [n for n in models.notes if "segments" in n]
    assert "too few measured values to test for segments" in note
    assert "two need 8 values of one parameter, 4 each" in note


def test_auto_along_a_parameter_with_too_few_values_says_why(capsys):
    path = str(TEXT / "two_parameter_segmented_1.txt")  # 10 values of x, 6 of y
    assert main(["model", path, "--segments", "auto", "--segment-parameter", "y"]) == 0
    assert "'reg') have too few measured values to test for segments" in capsys.readouterr().err
    assert main(["model", path, "--segments", "auto", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert not any("too few" in note for note in document["notes"])
    assert {s["parameter"] for s in document["models"][0]["segments"]} == {"x"}


def test_auto_that_could_split_in_two_but_not_three_says_nothing_of_it():
    models = fit(load(TEXT / "one_parameter_segmented_1.txt"), modeler="segmented")
    assert len(models.models[0].segments) == 2
    assert not any("too few" in note for note in models.notes)
