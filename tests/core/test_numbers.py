"""The strict number parser every reader uses, and the readers that use it."""

from __future__ import annotations

import json

import pytest

from perfcast.core.errors import InputError
from perfcast.core.numbers import BAD_NUMBER, json_float, parse_number, parse_numbers
from perfcast.io import read_experiment
from perfcast.measure.records import RecordError, parse_record

GOOD = {
    "42": 42.0,
    "-1.5e-3": -1.5e-3,
    "+3": 3.0,
    ".5": 0.5,
    "5.": 5.0,
    "2E+6": 2e6,
    " 7\t": 7.0,
    "0": 0.0,
    "0e-999": 0.0,
    "1.7976931348623157e308": 1.7976931348623157e308,
    "2.2250738585072014e-308": 2.2250738585072014e-308,
}
BAD = [
    "8_1",
    "１２",
    "١٢",
    "nan",
    "-inf",
    "Infinity",
    "1e400",
    "1e-400",
    "1e-310",
    "0x10",
    "",
    "1,5",
]


@pytest.mark.parametrize("text", sorted(GOOD))
def test_ascii_decimal_and_scientific_notation_are_read(text):
    assert parse_number(text, "value", "f.txt", 3) == GOOD[text]


@pytest.mark.parametrize("text", BAD)
def test_anything_else_is_a_bad_number_naming_file_line_and_text(text):
    with pytest.raises(InputError) as caught:
        parse_number(text, "value", "f.txt", 3)
    error = caught.value
    assert (error.source, error.line, error.reason, error.value) == ("f.txt", 3, BAD_NUMBER, text)
    assert str(error).startswith(f"f.txt:3: value is {text!r}, ")


def test_many_texts_name_the_first_bad_one():
    numbers, bad = parse_numbers(["1", "2.5", "0"])
    assert bad is None and numbers.tolist() == [1.0, 2.5, 0.0]
    assert parse_numbers(["1", "0", "1e-400", "8_1"])[1] == 2


@pytest.mark.parametrize("text", ["1e400", "-1e400", "1e-400", "5e-324"])
def test_json_numbers_out_of_range_are_rejected_where_they_are_used(text):
    value = json.loads(f"[{text}]", parse_float=json_float)[0]
    with pytest.raises(InputError, match="out of the range of a double") as caught:
        parse_number(value, "value", "f.json", None)
    assert caught.value.value == text


def test_json_numbers_in_range_stay_plain_floats():
    value = json.loads("1.5e-300", parse_float=json_float)
    assert type(value) is float and value == 1.5e-300


def test_integers_beyond_a_double_are_rejected():
    with pytest.raises(InputError, match="too large"):
        parse_number(10**400, "value", None, 1)


READERS = {
    "data.txt": "PARAMETER p\nPOINTS 1 2 4\nREGION r\nMETRIC t\nDATA 1\nDATA {bad}\nDATA 3\n",
    "data.jsonl": (
        '{{"params": {{"p": 1}}, "value": 1}}\n{{"params": {{"p": 2}}, "value": {bad}}}\n'
    ),
    "plain.csv": "kernel,metric,p,value\nr,t,1,1\nr,t,2,{bad}\n",
    "other.csv": 'kernel,metric,p,value\nr,t,1,1\nr,t,2,{bad}\nr,t,4,"3"\n',
}
BAD_IN_FILES = {"data.txt": 6, "data.jsonl": 2, "plain.csv": 3, "other.csv": 3}


@pytest.mark.parametrize("bad", ["1e400", "1e-400"])
@pytest.mark.parametrize("name", sorted(READERS))
def test_readers_reject_numbers_out_of_range(tmp_path, name, bad):
    path = tmp_path / name
    path.write_text(READERS[name].format(bad=bad), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_experiment(path)
    assert (caught.value.line, caught.value.reason) == (BAD_IN_FILES[name], BAD_NUMBER)


@pytest.mark.parametrize("bad", ["8_1", "１２"])
def test_text_readers_reject_other_digits(tmp_path, bad):
    path = tmp_path / "data.txt"
    path.write_text(READERS["data.txt"].format(bad=bad), encoding="utf-8")
    with pytest.raises(InputError, match="not a number") as caught:
        read_experiment(path)
    assert caught.value.line == 6


def test_campaign_records_reject_values_out_of_range():
    with pytest.raises(RecordError, match="line 4: 'value' is 1e-400"):
        parse_record('{"kernel": "k", "metric": "m", "value": 1e-400}', 4)
    assert parse_record('{"kernel": "k", "metric": "m", "value": 7}', 1)["value"] == 7
