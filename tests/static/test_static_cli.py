"""``perfcast static``: --param NAME=VALUE fixes a value, unknown names are errors, and
--format json with --binary is one document."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast import cli

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR  # noqa: E402

SOURCE = PROGRAMS_DIR / "stream_runtime.c"


def _json(capsys, argv):
    assert cli.main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_a_parameter_with_a_value_is_fixed_there(capsys):
    data = _json(
        capsys, ["static", str(SOURCE), "--param", "n=5", "--param", "ntimes", "--format", "json"]
    )
    assert data["parameters"] == ["ntimes"]
    loops = {k["name"]: k for k in data["kernels"]}
    assert loops["kernels:loop@10"]["expression"] == "5*ntimes"
    assert loops["main:loop@29"]["expression"] == "5"
    assert all("n" not in k["parameters"] for k in data["kernels"])


def test_the_free_parameter_stays_symbolic(capsys):
    data = _json(
        capsys, ["static", str(SOURCE), "--param", "n", "--param", "ntimes", "--format", "json"]
    )
    loops = {k["name"]: k for k in data["kernels"]}
    assert loops["kernels:loop@10"]["expression"] == "n*ntimes"


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("nn", "parameter 'nn' occurs in none of the sources"),
        ("n=abc", "not a number"),
        ("n=0", "n"),
        ("3n", "must be a C identifier"),
        ("=5", "must be a C identifier"),
    ],
)
def test_bad_parameters_exit_2_with_one_message(capsys, argument, message):
    assert cli.main(["static", str(SOURCE), "--param", argument]) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_an_unknown_parameter_lists_the_closest_names(capsys):
    assert cli.main(["static", str(SOURCE), "--param", "ntime"]) == 2
    error = capsys.readouterr().err
    assert "names like it: ntimes" in error
    assert str(SOURCE) in error


def test_a_name_given_twice_is_an_error(capsys):
    assert cli.main(["static", str(SOURCE), "--param", "n", "--param", "n=4"]) == 2
    assert "given twice" in capsys.readouterr().err


def test_help_says_what_name_value_does(capsys):
    with pytest.raises(SystemExit):
        cli.main(["static", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "NAME=VALUE fixes it at VALUE" in text
    assert "is an error" in text


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_json_with_a_binary_is_one_document_of_counts_and_mix(tmp_path, capsys):
    binary = tmp_path / "stream"
    subprocess.run(["gcc", "-g", "-O1", "-o", str(binary), str(SOURCE)], check=True)
    data = _json(
        capsys,
        [
            "static",
            str(SOURCE),
            "--param",
            "n",
            "--param",
            "ntimes=3",
            "--binary",
            str(binary),
            "--format",
            "json",
        ],
    )
    assert set(data) == {"static", "mix"}
    assert data["static"]["parameters"] == ["n"]
    assert data["mix"]["parameters"] == ["n"]
    assert "kernels" in [f["function"] for f in data["mix"]["functions"]]
    assert "ntimes" not in json.dumps(data["mix"])
