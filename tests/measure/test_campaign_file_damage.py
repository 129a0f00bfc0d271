"""Campaign files that are not UTF-8 or nest TOML arrays too deeply are refused naming the
file (they raised UnicodeDecodeError and RecursionError tracebacks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfcast.cli import main
from perfcast.core.errors import InputError
from perfcast.measure.spec import load_campaign


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[parameters]\np = [1, 2]\n\xff\xfe\n", "not UTF-8 text"),
        (b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
    ],
    ids=["binary", "deep"],
)
def test_a_damaged_campaign_file_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    path = tmp_path / "campaign.toml"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as refused:
        load_campaign(path)
    assert refused.value.source == str(path)
    assert main(["run", str(path)]) == 2
    error = capsys.readouterr().err
    assert str(path) in error and message in error and "Traceback" not in error
