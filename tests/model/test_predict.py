import pytest

from perfcast.core.errors import InputError
from perfcast.core.function import Factor, Model, Term
from perfcast.model.predict import parse_point, predict


def test_parse_point():
    assert parse_point("p=4096,n=1e6") == {"p": 4096.0, "n": 1e6}


@pytest.mark.parametrize(
    "text, message",
    [("p", "name=value"), ("p=1,p=2", "twice"), ("p=abc", "not a number"), ("p=inf", "finite"),
     ("=3", "name=value")],
)  # fmt: skip
def test_parse_point_rejects(text, message):
    with pytest.raises(InputError, match=message):
        parse_point(text)


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
