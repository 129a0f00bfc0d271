import pytest

from perfcast.core.errors import InputError
from perfcast.core.points import parse_point

NOT_A_NUMBER = "not a number (ASCII decimal or scientific notation expected)"


def test_parse_point_reads_names_and_numbers_in_order():
    point = parse_point(" p = 4096 , n=1e6")
    assert point == {"p": 4096.0, "n": 1e6}
    assert list(point) == ["p", "n"]


@pytest.mark.parametrize(
    "text, problem",
    [
        ("p", "'p' is not NAME=VALUE"),
        ("=3", "'=3' is not NAME=VALUE"),
        ("p=1,", "'' is not NAME=VALUE"),
        ("", "no NAME=VALUE item"),
        ("p=1,p=2", "'p' is given twice"),
        ("p=abc", "'abc' for 'p' is not a number (ASCII decimal or scientific notation expected)"),
        ("p=8_1", "'8_1' for 'p' is not a number (ASCII decimal or scientific notation expected)"),
        (
            "p=\uff18",
            "'\uff18' for 'p' is not a number (ASCII decimal or scientific notation expected)",
        ),
        ("p=1e400", "'1e400' for 'p' is too large for a double-precision number"),
        ("p=inf", "'inf' for 'p' is not a finite number"),
        ("p=nan", "'nan' for 'p' is not a finite number"),
        ("p=0", "p must be a positive finite number, not 0"),
        ("p=-2", "p must be a positive finite number, not -2"),
    ],
)
def test_parse_point_rejects_naming_the_text(text, problem):
    with pytest.raises(InputError) as caught:
        parse_point(text)
    error = caught.value
    assert str(error) == f"point '{text}': {problem}"
    assert error.reason == "bad-point"
    assert error.value == text


def test_parse_point_checks_names_against_the_parameters():
    assert parse_point("n=8", ["p", "n"]) == {"n": 8.0}
    with pytest.raises(InputError, match=r"'q' is not a parameter \(parameters: p, n\)"):
        parse_point("q=3", ["p", "n"])


def test_parse_point_names_where_the_text_came_from():
    with pytest.raises(InputError) as caught:
        parse_point("p=x", source="settings.toml")
    assert caught.value.source == "settings.toml"
    assert str(caught.value).startswith("settings.toml: point 'p=x': ")
