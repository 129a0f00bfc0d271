"""Strict JSON input: a repeated key is an error at the line of its object."""

from __future__ import annotations

import json

import pytest

from perfcast.core.jsonin import DuplicateKeyError, parse_json
from perfcast.core.numbers import OutOfRange, json_float


def test_valid_json_parses_like_the_standard_library():
    text = '{"a": [1, 2.5, {"b": null}], "c": "d", "e": {"a": true}}'
    assert parse_json(text) == json.loads(text)


def test_repeated_key_names_the_key_and_the_line_of_its_object():
    text = '{\n "outer": 1,\n "list": [\n  {"x": 1,\n   "x": 2}\n ]\n}'
    with pytest.raises(DuplicateKeyError) as caught:
        parse_json(text)
    assert caught.value.msg == "the key 'x' appears twice in one object"
    assert caught.value.lineno == 4


def test_repeated_key_in_the_outer_object():
    with pytest.raises(DuplicateKeyError) as caught:
        parse_json('{"a": 1,\n "b": {"a": 2},\n "a": 3}')
    assert "'a'" in caught.value.msg
    assert caught.value.lineno == 1


def test_the_same_key_in_different_objects_is_fine():
    assert parse_json('[{"a": 1}, {"a": 2}]') == [{"a": 1}, {"a": 2}]


def test_options_and_bytes_are_passed_through():
    value = parse_json(b'{"big": 1e400, "small": 0.5}', parse_float=json_float)
    assert isinstance(value["big"], OutOfRange)
    assert value["small"] == 0.5


def test_malformed_json_is_still_a_decode_error():
    with pytest.raises(json.JSONDecodeError) as caught:
        parse_json('{"a": 1,\n "b": }')
    assert not isinstance(caught.value, DuplicateKeyError)
    assert caught.value.lineno == 2
