"""The command line's dispatch: every command listed, only the chosen one imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from perfcast import cli


def test_top_level_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--help"])
    assert stop.value.code == 0
    listed = capsys.readouterr().out
    for module in cli.COMMANDS:
        assert module.rstrip("_") in listed


@pytest.mark.parametrize(
    ("argv", "module"),
    [
        (["model", "exp.json"], "model"),
        (["import", "cali"], "import_"),
        (["static", "--help"], "static"),
        (["--version"], None),
        (["bogus", "x"], None),
        ([], None),
    ],
)
def test_chosen_command_is_the_first_word(argv, module):
    assert cli.chosen_command(argv) == module


def test_unknown_command_is_a_usage_error_naming_the_choices(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["bogus"])
    assert stop.value.code == 2
    message = capsys.readouterr().err
    assert "invalid choice: 'bogus'" in message and "predict" in message


def test_a_command_does_not_import_the_other_commands_or_their_dependencies():
    script = (
        "import sys\n"
        "from perfcast import cli\n"
        "try:\n"
        "    cli.main(['model', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = [m for m in ('perfcast.commands.static', 'perfcast.commands.report', 'sympy',\n"
        "                      'scipy.stats') if m in sys.modules]\n"
        "print(','.join(loaded) or 'none')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "--modeler" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "none"
