"""``perfcast static`` run as the program exempts what is alive at its end from the exit
collector (issue 20, speed): its output is complete, ``atexit`` functions still run, and an
in-process call of ``cli.main(argv)`` leaves the collector as it was."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from perfcast import cli

SOURCE = Path(__file__).parent / "programs" / "dgemm.c"
SRC = Path(cli.__file__).resolve().parents[1]

PROGRAM = """
import atexit, gc, sys
from perfcast import cli
atexit.register(lambda: print("atexit ran, frozen", gc.get_freeze_count() > 0, file=sys.stderr))
sys.argv = ["perfcast", "static", sys.argv[1], "--param", "n", "--no-cache", "--format", "json"]
sys.exit(cli.main())
"""


def test_the_program_flushes_its_output_and_runs_atexit():
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(SOURCE)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # the whole document arrived
    assert "main:loop@22" in [kernel["name"] for kernel in report["kernels"]]
    assert "atexit ran, frozen True" in done.stderr


def test_main_called_with_arguments_freezes_nothing(capsys):
    before = gc.get_freeze_count()
    status = cli.main(["static", str(SOURCE), "--param", "n", "--no-cache"])
    assert status == 0
    assert "main:loop@22" in capsys.readouterr().out
    assert gc.get_freeze_count() == before
    assert gc.isenabled()
