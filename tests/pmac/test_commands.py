"""The trace-extrapolation commands end to end on files, and their bad input (exit 2)."""

from __future__ import annotations

import json

import pytest

from perfcast import cli
from perfcast.api import save
from perfcast.core.experiment import Experiment

from .test_convolve import MACHINE


def _series(tmp_path, ps):
    kernels, metrics, points, values = [], [], [], []
    for p in ps:
        for metric, value in {
            "bytes.loaded": 8e9 / p,
            "bytes.stored": 1e9 / p,
            "l1.hit_rate": 0.9,
            "ll.cumulative_hit_rate": 0.95,
            "fp.add.f64.scalar": 4e9 / p,
        }.items():
            kernels.append("bb:solve+0x10")
            metrics.append(metric)
            points.append(p)
            values.append(value)
    path = tmp_path / "series.json"
    save(Experiment.from_columns(kernels, metrics, {"p": points}, values), path)
    return path


@pytest.fixture
def machine(tmp_path):
    path = tmp_path / "machine.json"
    path.write_text(json.dumps(MACHINE))
    return path


def test_extrapolate_then_convolve_equals_predict(tmp_path, machine, capsys):
    series = _series(tmp_path, [1, 2, 4])
    out = tmp_path / "at16.json"
    report = tmp_path / "report.json"
    argv = ["extrapolate", str(series), "--to", "p=16", "-o", str(out), "--format", "json"]
    assert cli.main([*argv, "--report", str(report)]) == 0
    elements = json.loads(report.read_text())["elements"]
    assert {e["form"] for e in elements if e["feature"] == "bytes.loaded"} <= {"inverse", "power"}
    assert cli.main(["convolve", str(out), "--machine", str(machine), "--format", "json"]) == 0
    convolved = json.loads(capsys.readouterr().out)
    argv = ["predict", "--signature", str(series), "--machine", str(machine), "--at", "p=16",
            "--format", "json"]  # fmt: skip
    assert cli.main(argv) == 0
    predicted = json.loads(capsys.readouterr().out)
    assert predicted["total_seconds"] == pytest.approx(convolved["total_seconds"], rel=1e-12)
    cost = 0.9 / 100e9 + 0.05 / 20e9 + 0.05 / 5e9
    store = 0.9 / 50e9 + 0.05 / 10e9 + 0.05 / 2.5e9
    expected = max(8e9 * cost + 1e9 * store, 4e9 / 2e9) / 16  # fp and memory overlap
    assert predicted["total_seconds"] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(
    "argv_of",
    [
        lambda s, m: ["extrapolate", str(s), "--to", "p=16"],  # two points only
        lambda s, m: ["convolve", str(s), "--machine", str(m)],  # several points
        lambda s, m: ["predict", "--signature", str(s)],  # no machine
        lambda s, m: ["convolve", str(s), "--machine", str(s)],  # not a machine file
    ],
)
def test_bad_input_exits_2_naming_the_file(tmp_path, machine, capsys, argv_of):
    series = _series(tmp_path, [1, 2])
    status = cli.main(argv_of(series, machine))
    err = capsys.readouterr().err
    assert status == 2
    assert "Traceback" not in err
    assert err.count("\n") == 1


def test_machine_without_needed_entry_names_file_and_field(tmp_path, capsys):
    data = json.loads(json.dumps(MACHINE))
    del data["memory"]["load"]["memory"]
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(data))
    series = _series(tmp_path, [4])
    assert cli.main(["convolve", str(series), "--machine", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "memory.load.memory" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--format", "csv"], "prints text or json, not csv"),
        (["--runs", "table.csv"], "--runs does not apply"),
        (["--level", "0.5"], "--level does not apply"),
        (["--metric", "time"], "--metric does not apply"),
    ],
)
def test_predict_options_a_signature_prediction_ignores_are_refused(
    tmp_path, machine, capsys, extra, message
):
    # These printed the text prediction as if the option had been applied.
    series = _series(tmp_path, [1, 2, 4])
    argv = ["predict", "--signature", str(series), "--machine", str(machine), "--at", "p=16"]
    assert cli.main([*argv, *extra]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err
    assert captured.out == ""
    assert cli.main(argv) == 0


def test_extrapolate_refuses_one_file_for_signature_and_report(tmp_path, capsys):
    # The report was written over the extrapolated signature just saved there.
    series = _series(tmp_path, [1, 2, 4])
    out = tmp_path / "out.json"
    argv = ["extrapolate", str(series), "--to", "p=16", "-o", str(out), "--report", str(out)]
    assert cli.main(argv) == 2
    assert "name the same file" in capsys.readouterr().err
    assert not out.exists()


def test_forms_without_a_signature_is_refused(tmp_path, capsys):
    # 'predict FILE --at p=16 --forms pmnf' ignored --forms.
    series = _series(tmp_path, [1, 2, 4])
    argv = ["predict", str(series), "--metric", "bytes.loaded", "--at", "p=16"]
    assert cli.main([*argv, "--forms", "pmnf"]) == 2
    assert "--forms is for signature predictions" in capsys.readouterr().err
    assert cli.main(argv) == 0
