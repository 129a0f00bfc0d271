"""The command line's dispatch: every command listed, only the chosen one imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from perfcast import cli
from perfcast.core.experiment import Metric
from perfcast.io import read_experiment, write_experiment


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
        (["--help", "model", "exp.json"], None),
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


def loaded_heavy_packages(argv: list[str]) -> list[str]:
    """Which of sympy, pandas, pyarrow, matplotlib and clang ``perfcast ARGV`` leaves imported
    at exit."""
    script = (
        "import sys\n"
        "from perfcast import cli\n"
        "try:\n"
        f"    status = cli.main({argv!r})\n"
        "except SystemExit as stop:\n"
        "    status = stop.code\n"
        "assert status == 0, status\n"
        "packages = {name.split('.')[0] for name in sys.modules}\n"
        "heavy = {'sympy', 'pandas', 'pyarrow', 'matplotlib', 'clang'}\n"
        "print('loaded:', *sorted(packages & heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    last = result.stdout.splitlines()[-1]
    assert last.startswith("loaded:"), result.stdout
    return last.split()[1:]


def test_top_level_help_imports_no_heavy_package():
    assert loaded_heavy_packages(["--help"]) == []


def test_the_static_command_does_not_load_the_modeling_layers():
    script = (
        "import sys\n"
        "from perfcast import cli\n"
        "try:\n"
        "    cli.main(['static', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = [m for m in ('perfcast.api.modeling', 'perfcast.model', 'scipy', 'pandas')\n"
        "          if m in sys.modules]\n"
        "print(','.join(loaded) or 'none')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "none"


SMALL_EXTRAP_TEXT = (
    "PARAMETER p\nPOINTS 4 8 16 32 64\nREGION solve\nMETRIC time\n"
    "DATA 2.0 2.1\nDATA 4.1 4.0\nDATA 8.0 8.2\nDATA 16.1 15.9\nDATA 32.0 32.3\n"
)


@pytest.mark.parametrize("name", ["small.txt", "small.csv", "small.perfcast.json"])
def test_model_on_a_small_file_imports_no_heavy_package(tmp_path, name):
    text = tmp_path / "small.txt"
    text.write_text(SMALL_EXTRAP_TEXT)
    small = tmp_path / name
    if name != text.name:
        experiment = read_experiment(text)
        experiment.metrics["time"] = Metric("time", "s")  # so that a CSV has its header line
        write_experiment(experiment, small)
    assert loaded_heavy_packages(["model", str(small)]) == []


def test_a_reader_that_leaves_early_ends_the_command_quietly(tmp_path):
    # `perfcast model big.csv --format json | head -1`: the rest of the output has nowhere to go
    rows = ["kernel,metric,p,repetition,value"] + [
        f"k{k},time,{p},{r},{(k + 1) * p * (1 + 0.01 * r)}"
        for k in range(2000)
        for p in (2, 4, 8, 16)
        for r in (0, 1)
    ]
    table = tmp_path / "big.csv"
    table.write_text("\n".join(rows) + "\n")
    command = [sys.executable, "-m", "perfcast.cli", "model", str(table), "--format", "json"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().strip() == b"{"
    process.stdout.close()
    error = process.stderr.read().decode()
    assert process.wait(timeout=120) == cli.EXIT_BROKEN_PIPE
    assert error == ""
