import pytest

from perfcast.core.errors import InputError
from perfcast.core.function import Factor, Model, Term
from perfcast.model.predict import extrapolation_warnings, predict


def test_predictions_ranked_by_cost_and_checked():
    cheap = Model("cheap", "time", ("p",), 1.0, (Term(1.0, (Factor("p", 0, 1),)),))
    costly = Model("costly", "time", ("p",), 0.0, (Term(2.0, (Factor("p", 1),)),))
    ranked = predict([cheap, costly], {"p": 1024.0})
    assert [r.kernel for r in ranked] == ["costly", "cheap"]
    assert ranked[0].value == pytest.approx(2048.0)
    assert ranked[1].value == pytest.approx(11.0)
    with pytest.raises(InputError, match="missing p"):
        predict([cheap], {"n": 3.0, "q": 1.0})
    with pytest.raises(InputError, match="positive"):
        predict([cheap], {"p": 0.0})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("inf"), "positive finite"),
        (float("nan"), "positive finite"),
        (-2, "positive finite"),
        ("4096", "must be a number"),
        (True, "must be a number"),
    ],
)
def test_a_point_must_be_positive_finite_numbers(value, message):
    model = Model("k", "time", ("p",), 1.0, (Term(1.0, (Factor("p", 1),)),))
    with pytest.raises(InputError, match=message):
        predict([model], {"p": value})


def test_an_interval_far_wider_than_the_prediction_is_said_as_a_factor():
    (warning,) = extrapolation_warnings({"p": 64.0}, {"p": (1.0, 4.0)}, 2.0, 1e-210, 1e208, 0.95)
    assert "spans 1e-210 to 1e+208 (-100.00%, +5e+207x)" in warning.message
    (narrow,) = extrapolation_warnings({"p": 64.0}, {"p": (1.0, 4.0)}, 2.0, 1.0, 4.0, 0.95)
    assert "(-50.00%, +100.00%)" in narrow.message
