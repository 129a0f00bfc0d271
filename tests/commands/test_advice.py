"""Only the command line turns library errors into advice about its flags (exit status 2)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from perfcast.cli import main
from perfcast.commands.advice import ADVICE, with_advice
from perfcast.core.errors import InputError

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


@pytest.mark.parametrize("reason", ADVICE)
def test_every_piece_of_advice_names_a_flag(reason):
    assert FLAG.search(ADVICE[reason])


def test_advice_follows_the_message_of_a_known_reason():
    error = InputError("no parameter is the scale", "e.csv", reason="no-scale-parameter")
    assert with_advice(error) == "e.csv: no parameter is the scale; name it with --scale"
    assert with_advice(InputError("bad", "e.csv", 2, reason="unheard-of")) == "e.csv:2: bad"
    assert with_advice(InputError("bad")) == "bad"


def test_advice_naming_a_flag_the_command_lacks_is_left_out():
    error = InputError("no parameter is the scale", "e.csv", reason="no-scale-parameter")
    assert with_advice(error, {"--scale", "-o"}).endswith("; name it with --scale")
    assert with_advice(error, {"--metric", "-o"}) == "e.csv: no parameter is the scale"


def test_a_command_without_output_format_is_not_told_to_use_it(tmp_path, capsys):
    out = tmp_path / "signature.xyz"
    assert main(["signature", "-o", str(out), "--", "true"]) == 2
    printed = capsys.readouterr().err.strip()
    assert printed.startswith(f"perfcast: error: {out}: cannot tell the output format")
    assert "--output-format" not in printed


@pytest.fixture
def experiment_files(tmp_path):
    frame = pd.DataFrame(
        {"kernel": ["a"] * 6, "metric": ["flops"] * 3 + ["bytes"] * 3, "p": [1, 2, 4] * 2,
         "value": [1.0, 2.0, 4.0, 3.0, 6.0, 12.0]}
    )  # fmt: skip
    two_metrics = tmp_path / "two.csv"
    frame.to_csv(two_metrics, index=False)
    notes = tmp_path / "notes.md"
    notes.write_text("# Results\nall fine\n")
    return two_metrics, notes


@pytest.mark.parametrize(
    "argv, message, advice",
    [
        (["model", "{notes}"], "{notes}: cannot tell the format of this file; it is none of ",
         "; name it with --input-format"),
        (["model", "{two}"], "{two}: the experiment has several metrics (flops, bytes) and none "
         "is 'time'; choose one", "; name one with --metric (perfcast model --metric all models "
         "them all)"),
        (["convert", "{two}", "{two}.xlsx"], "{two}.xlsx: cannot tell the output format from the "
         "file name (writers take .csv, ", "; name it with --output-format"),
    ],
)  # fmt: skip
def test_the_command_line_prints_the_advice(experiment_files, capsys, argv, message, advice):
    two, notes = experiment_files
    assert main([a.format(two=two, notes=notes) for a in argv]) == 2
    printed = capsys.readouterr().err.strip()
    assert printed.startswith("perfcast: error: " + message.format(two=two, notes=notes))
    assert printed.endswith(advice)
