"""JSON nested deeper than Python's decoder can follow (``[[[[...``) is malformed input with a
line and column, in every reader: it raised RecursionError, a traceback, from each of them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast.api import ModelSet
from perfcast.core.errors import InputError
from perfcast.core.jsonin import parse_json
from perfcast.io.machine_profile import read_machine

ROOT = Path(__file__).resolve().parents[2]
DEEP_ARRAY = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a": ' * 100_000 + "1" + "}" * 100_000


@pytest.mark.parametrize("text", [DEEP_ARRAY, DEEP_OBJECT], ids=["arrays", "objects"])
def test_too_deep_json_is_a_decode_error_at_the_bracket_that_goes_too_deep(text: str) -> None:
    prefix = '{\n  "name": "[[[{{ in a string",\n  "x": '
    with pytest.raises(json.JSONDecodeError, match="nested more than 499 levels") as caught:
        parse_json(prefix + text + "\n}")
    # the outer object is level 1; the 500th opening bracket is the 499th of ``text``
    assert caught.value.lineno == 3
    opened = 0
    for column, char in enumerate(text, start=len('  "x": ') + 1):
        opened += char in "[{"
        if opened == 499:
            assert caught.value.colno == column
            break


def test_nesting_the_decoder_can_follow_still_parses() -> None:
    assert parse_json("[" * 300 + "]" * 300) == json.loads("[" * 300 + "]" * 300)
    value = parse_json('{"a": ' * 300 + "1" + "}" * 300)
    for _ in range(300):
        value = value["a"]
    assert value == 1


def test_model_and_machine_readers_refuse_it_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(DEEP_OBJECT)
    with pytest.raises(InputError, match="nested more than") as models:
        ModelSet.load(path)
    assert models.value.source == str(path)
    with pytest.raises(InputError, match="nested more than") as machine:
        read_machine(path)
    assert machine.value.source == str(path) and machine.value.line == 1


@pytest.mark.parametrize("text", [DEEP_ARRAY, DEEP_OBJECT], ids=["arrays", "objects"])
def test_perfcast_model_exits_2_without_a_traceback(tmp_path: Path, text: str) -> None:
    # Format detection's campaign sniffer parsed the first line with json.loads itself.
    path = tmp_path / "deep.json"
    path.write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "perfcast.cli", "model", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and str(path) in result.stderr
