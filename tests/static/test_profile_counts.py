"""Measured counts where static ones stop: a CSR conjugate-gradient solver, whose inner loops
run between row pointers, gets a complete instruction model from callgrind runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast import api, cli
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "cg_csr.c"
pytestmark = [
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cg_csr")
    binary = directory / "cg_csr"
    subprocess.run(["gcc", "-g", "-O2", "-o", str(binary), str(SOURCE)], check=True)
    return directory, binary


def _coverage(mix, measured) -> float:
    """Instructions of the program's own functions that have a defined model, as a share."""
    own = sum(counts["total"] for counts in measured.values())
    defined = sum(measured[name]["total"] for name, f in mix.functions.items() if f.counts)
    return defined / own


def test_statically_the_csr_solver_is_mostly_undefined(built):
    directory, binary = built
    report = api.analyze_source([SOURCE], ["m", "iters"])
    assert report.kernel("matvec:loop@38").count is None
    mix = api.instruction_mix(binary, report, ("m", "iters"))
    measured = measured_mix(
        read_binary(binary), read_callgrind(run_callgrind(binary, (10, 3), directory))
    )
    assert _coverage(mix, measured) < 0.5


def test_one_profiled_run_completes_the_model(built):
    directory, binary = built
    profile = run_callgrind(binary, (10, 3), directory)
    report = api.analyze_source([SOURCE], ["m", "iters"])
    mix = api.instruction_mix(binary, report, ("m", "iters"), profiles=[({}, profile)])
    measured = measured_mix(read_binary(binary), read_callgrind(profile))
    assert _coverage(mix, measured) >= 0.95
    for name, function in mix.functions.items():
        if function.counts is None:
            continue
        predicted = function.evaluate({"m": 10, "iters": 3})["total"]
        truth = measured[name]["total"]
        assert abs(predicted - truth) <= 0.01 * max(truth, 100), name
    notes = " ".join(mix.functions["matvec"].notes)
    assert "block counts measured" in notes and "matvec:loop@36" in notes


@pytest.mark.slow
def test_runs_at_several_sizes_give_models_that_extrapolate(built):
    directory, binary = built
    profiles = [({"m": m}, run_callgrind(binary, (m, 4), directory)) for m in (8, 12, 16, 20, 24)]
    report = api.analyze_source([SOURCE], ["m"], values={"iters": 4})
    mix = api.instruction_mix(binary, report, ("m",), profiles=profiles)
    truth_run = run_callgrind(binary, (32, 4), directory)
    measured = measured_mix(read_binary(binary), read_callgrind(truth_run))
    assert _coverage(mix, measured) >= 0.95
    for name in ("matvec", "cg", "main"):
        predicted = mix.functions[name].evaluate({"m": 32})["total"]
        assert abs(predicted / measured[name]["total"] - 1) <= 0.01, name
    assert "m" in {s.name for s in mix.functions["matvec"].counts["total"].free_symbols}


def test_the_command_takes_profiles_with_their_points(built, capsys):
    directory, binary = built
    runs = [run_callgrind(binary, (6, iters), directory) for iters in (2, 3, 4)]
    argv = ["static", str(SOURCE), "--param", "m=6", "--param", "iters", "--binary", str(binary)]
    for iters, run in zip((2, 3, 4), runs, strict=True):
        argv += ["--profile", f"{run}@iters={iters}"]
    argv += ["--format", "json"]
    assert cli.main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    functions = {f["function"]: f for f in data["mix"]["functions"]}
    assert functions["matvec"]["undef_reason"] is None
    assert any("measured" in note for note in functions["matvec"]["notes"])
    assert "iters" in json.dumps(functions["matvec"]["counts"])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--profile", "nothing.out"], "needs --binary"),
        (["--binary", "BINARY", "--profile", "x@m=abc"], "not a number"),
        (["--binary", "BINARY", "--profile", "@m=3"], "no file before '@'"),
        (["--binary", "BINARY", "--profile", "missing.out"], "missing.out"),
    ],
)
def test_bad_profiles_exit_2(built, capsys, extra, message):
    _, binary = built
    argv = ["static", str(SOURCE), "--param", "m"] + [
        str(binary) if item == "BINARY" else item for item in extra
    ]
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err
