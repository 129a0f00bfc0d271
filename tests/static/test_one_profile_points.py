"""A model from one profiled run at other parameter values (issue 20, J4 of the fifth round):
a measured loop whose count per entry the source shows constant carries to other values as
its count per entry times its static entries; one whose count per entry may depend on a
parameter or on data stays the run's constant, with a warning naming the run's values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast import api, cli
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import NEEDS_TOOLS, PROGRAMS_DIR, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "per_entry.c"
PARAMETERS = ("rpt", "n")
PROFILED = {"rpt": 2, "n": 7}
OTHER = {"rpt": 5, "n": 11}
pytestmark = NEEDS_TOOLS


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The gcc -O0 binary, callgrind of it at the profiled and at the other values."""
    directory = tmp_path_factory.mktemp("per_entry")
    binary = directory / "per_entry"
    subprocess.run(["gcc", "-g", "-O0", "-o", str(binary), str(SOURCE)], check=True)
    profiled = run_callgrind(binary, tuple(PROFILED.values()), directory)
    other = run_callgrind(binary, tuple(OTHER.values()), directory)
    executable = read_binary(binary)
    truth = measured_mix(executable, read_callgrind(other))
    at_profile = measured_mix(executable, read_callgrind(profiled))
    return binary, profiled, truth, at_profile


@pytest.fixture(scope="module")
def mix(runs):
    binary, profiled, _, _ = runs
    report = api.analyze_source([SOURCE], PARAMETERS)
    return api.instruction_mix(binary, report, PARAMETERS, profiles=[(PROFILED, profiled)])


def test_constant_count_per_entry_carries_to_other_values(runs, mix):
    _, _, truth, _ = runs
    function = mix.functions["fixed_nest"]
    predicted = function.evaluate(OTHER)["total"]
    assert predicted == pytest.approx(truth["fixed_nest"]["total"], rel=0.01)
    assert not any(note.startswith("warning") for note in function.notes)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("sized_nest", "per entry that depends on n"),
        ("data_bound", "data-dependent value"),
    ],
)
def test_count_per_entry_that_may_vary_is_held_with_a_warning(runs, mix, name, why):
    _, _, truth, at_profile = runs
    function = mix.functions[name]
    warnings = [note for note in function.notes if note.startswith("warning")]
    if name == "sized_nest" and not warnings:
        # since static31 (verify20e J3) gcc -O0's register counters give one iteration per
        # pass: the count is static, and exact at other values
        assert function.evaluate(OTHER)["total"] == truth[name]["total"], function.notes
        return
    assert len(warnings) == 1
    assert "measured at n = 7, rpt = 2 only" in warnings[0] and why in warnings[0]
    predicted = function.evaluate(PROFILED)["total"]
    assert predicted == pytest.approx(at_profile[name]["total"], rel=0.01)


def test_the_warning_is_in_text_and_json(runs, capsys):
    binary, profiled, _, _ = runs
    argv = ["static", str(SOURCE), "--param", "rpt", "--param", "n", "--binary", str(binary)]
    argv += ["--profile", f"{profiled}@rpt=2,n=7", "--no-cache"]
    assert cli.main([*argv, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    functions = {f["function"]: f for f in data["mix"]["functions"]}
    assert any("measured at n = 7, rpt = 2 only" in n for n in functions["data_bound"]["notes"])
    assert not any(note.startswith("warning") for note in functions["fixed_nest"]["notes"])
    assert cli.main(argv) == 0
    assert "measured at n = 7, rpt = 2 only; the model holds" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("point", "message"),
    [
        ("", "gives no value for rpt, n"),
        ("@rpt=2", "gives no value for n"),
        ("@rpt=2,n=7,m=3", "m is no --param"),
        ("@rpt=3,n=7", "rpt=3 differs from --param rpt=2"),
    ],
)
def test_a_profile_point_must_give_the_runs_values(runs, capsys, point, message):
    binary, profiled, _, _ = runs
    fixed = "rpt=2" if "differs" in message else "rpt"
    argv = ["static", str(SOURCE), "--param", fixed, "--param", "n", "--binary", str(binary)]
    assert cli.main([*argv, "--profile", f"{profiled}{point}", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert message in err and str(profiled) in err and "Traceback" not in err


def test_a_point_may_repeat_a_fixed_value(runs, capsys):
    binary, profiled, _, _ = runs
    argv = ["static", str(SOURCE), "--param", "rpt=2", "--param", "n", "--binary", str(binary)]
    argv += ["--profile", f"{profiled}@rpt=2,n=7", "--no-cache", "--format", "json"]
    assert cli.main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert {f["function"] for f in data["mix"]["functions"]} >= {"fixed_nest", "main"}


def test_a_profile_of_another_binary_names_the_profile(runs, tmp_path, capsys):
    _, profiled, _, _ = runs
    other = tmp_path / "other_binary"
    subprocess.run(["gcc", "-g", "-O1", "-o", str(other), str(SOURCE)], check=True)
    argv = ["static", str(SOURCE), "--param", "rpt", "--param", "n", "--binary", str(other)]
    assert cli.main([*argv, "--profile", f"{profiled}@rpt=2,n=7", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert f"profile {profiled} is not a run of {other}" in err and "Traceback" not in err


def test_names_like_an_unknown_parameter_come_from_code_not_comments(capsys):
    # per_entry.c's comments say "Usage", "measures", "constant"; its code has none of them
    assert cli.main(["static", str(SOURCE), "--param", "measure", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "measures" not in err and "occurs in none of the sources" in err
