"""``perfcast convert`` and the exit status of bad input, through the real command line."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from perfcast import cli
from perfcast.io import read_experiment

EXTRAP_DATA = Path(__file__).resolve().parents[1] / "data" / "extrap"
ONE_PARAMETER = EXTRAP_DATA / "text" / "one_parameter_1.txt"


@pytest.fixture
def run_cli(monkeypatch):
    """``perfcast.cli.main`` with the sub-commands whose modules exist on this branch."""
    present = tuple(
        name
        for name in cli.COMMANDS
        if importlib.util.find_spec(f"perfcast.commands.{name}") is not None
    )
    monkeypatch.setattr(cli, "COMMANDS", present)
    return cli.main


def test_convert_text_to_perfcast_json(run_cli, tmp_path, capsys):
    out = tmp_path / "one.json"
    assert run_cli(["convert", str(ONE_PARAMETER), str(out)]) == 0
    assert "wrote 30 values of 1 kernels" in capsys.readouterr().err
    document = json.loads(out.read_text())
    assert document["format"] == "perfcast-experiment"
    back = read_experiment(out)
    pd.testing.assert_frame_equal(back.frame, read_experiment(ONE_PARAMETER).frame)


@pytest.mark.parametrize(
    ("suffix", "expected"),
    [(".csv", "kernel,metric"), (".jsonl", '{"params"'), (".txt", "PARAMETER x")],
)
def test_convert_picks_the_writer_by_suffix(run_cli, tmp_path, suffix, expected):
    out = tmp_path / f"one{suffix}"
    assert run_cli(["convert", str(ONE_PARAMETER), str(out)]) == 0
    assert out.read_text().startswith(expected)


def test_convert_with_forced_formats(run_cli, tmp_path):
    source = tmp_path / "data.dat"
    source.write_text(ONE_PARAMETER.read_text())
    out = tmp_path / "data.out"
    argv = ["convert", str(source), str(out), "--input-format", "extrap-text"]
    assert run_cli([*argv, "--output-format", "extrap-jsonlines"]) == 0
    assert len(out.read_text().splitlines()) == 30
    assert len(read_experiment(out, "extrap-jsonlines").frame) == 30


def test_bad_line_exits_2_with_one_message(run_cli, tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("PARAMETER p\nPOINTS ( 2 ) ( 4 )\nREGION r\nDATA 1\nDATA inf\n")
    assert run_cli(["convert", str(bad), str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err
    assert err == f"perfcast: error: {bad}:5: value is 'inf', not a finite number\n"
    assert not (tmp_path / "out.csv").exists()


def test_missing_file_exits_2(run_cli, tmp_path, capsys):
    assert run_cli(["convert", str(tmp_path / "none.txt"), str(tmp_path / "o.csv")]) == 2
    assert capsys.readouterr().err.endswith("none.txt: no such file or directory\n")


def test_unknown_input_format_exits_2(run_cli, tmp_path, capsys):
    with pytest.raises(SystemExit) as caught:
        run_cli(["convert", str(ONE_PARAMETER), str(tmp_path / "o.csv"), "--input-format", "xls"])
    assert caught.value.code == 2
    assert "invalid choice: 'xls'" in capsys.readouterr().err


def test_unknown_output_suffix_exits_2(run_cli, tmp_path, capsys):
    assert run_cli(["convert", str(ONE_PARAMETER), str(tmp_path / "o.xlsx")]) == 2
    assert "cannot tell the output format" in capsys.readouterr().err


def test_subprocess_exit_status_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2, "n": 1}, "value": 2}\n')
    arguments = ["convert", str(bad), str(tmp_path / "out.csv")]
    if all(importlib.util.find_spec(f"perfcast.commands.{n}") for n in cli.COMMANDS):
        command = [sys.executable, "-m", "perfcast.cli", *arguments]
    else:  # before the other sub-commands are merged: the same entry point, convert only
        code = "import sys, perfcast.cli as c; c.COMMANDS = ('convert',); sys.exit(c.main())"
        command = [sys.executable, "-c", code, *arguments]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert done.stderr == (
        f"perfcast: error: {bad}:2: inconsistent parameters: this record has p, n, "
        "the first record has p\n"
    )
