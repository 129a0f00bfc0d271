"""Control characters from input cannot drive the user's terminal; files get the exact text."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from perfcast.core.terminal import visible

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = "\x1b]0;owned\x07\x1b[2Jmain\u202etxt.exe"


def test_visible_escapes_controls_and_direction_overrides_only():
    assert visible(HOSTILE) == "\\x1b]0;owned\\x07\\x1b[2Jmain\\u202etxt.exe"
    assert visible("p^(1/2) · log2(p)\tα\n") == "p^(1/2) · log2(p)\tα\n"
    assert visible("\x9b31m\x7f\r") == "\\x9b31m\\x7f\\x0d"


def _experiment(tmp_path: Path) -> Path:
    rows = ["kernel,metric,p,value"]
    rows += [f"{HOSTILE},time,{p},{0.5 * p}" for p in (2, 4, 8, 16, 32)]
    path = tmp_path / "hostile.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _run_on_terminal(arguments: list[str]) -> tuple[int, bytes]:
    """Run the CLI with its standard output and error on a pseudo-terminal."""
    leader, follower = pty.openpty()
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    process = subprocess.Popen(
        [sys.executable, "-m", "perfcast.cli", *arguments],
        stdout=follower,
        stderr=follower,
        env=environment,
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: the program ended
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return process.wait(timeout=60), shown


def test_kernel_names_are_escaped_on_a_terminal(tmp_path):
    status, shown = _run_on_terminal(["model", str(_experiment(tmp_path))])
    assert status == 0, shown.decode(errors="replace")
    assert b"\\x1b]0;owned\\x07\\x1b[2Jmain\\u202etxt.exe" in shown
    assert b"\x1b]0;" not in shown and b"\x07" not in shown and "\u202e".encode() not in shown


def test_error_messages_are_escaped_on_a_terminal(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(f"kernel,metric,p,value\n{HOSTILE},time,2,x\n", encoding="utf-8")
    status, shown = _run_on_terminal(["model", str(bad)])
    assert status == 2
    assert b"perfcast: error:" in shown and b"\x1b[2J" not in shown


def _piped(arguments: list[str]) -> str:
    return subprocess.run(
        [sys.executable, "-m", "perfcast.cli", *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=True,
    ).stdout


def test_pipes_get_the_exact_names(tmp_path):
    experiment = str(_experiment(tmp_path))
    assert HOSTILE in _piped(["model", experiment, "--format", "csv"])
    document = json.loads(_piped(["model", experiment, "--format", "json"]))
    assert [model["kernel"] for model in document["models"]] == [HOSTILE]


def test_argument_errors_are_escaped_on_a_terminal(tmp_path):
    # argparse repeats unrecognized arguments (``perfcast model *.csv`` among hostile file
    # names); it printed them raw because the streams were wrapped only after parsing.
    status, shown = _run_on_terminal(["model", str(_experiment(tmp_path)), HOSTILE])
    assert status == 2
    assert b"unrecognized arguments: \\x1b]0;owned\\x07\\x1b[2Jmain\\u202etxt.exe" in shown
    assert b"\x1b]0;" not in shown and b"\x07" not in shown and "\u202e".encode() not in shown
