"""``perfcast diagnose / optimize / compare / report`` through the real command line."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from perfcast import cli
from perfcast.model.modelset import ModelSet
from tests.analyze.synthetic import experiment, model

pytest.importorskip(
    "perfcast.io.perfcast_json", reason="the experiment readers come with the core branch"
)
from perfcast.io import write_experiment  # noqa: E402

P = [2, 4, 8, 16, 32, 64]
TRUTH = {
    "main->compute": lambda p: 100.0 / p,
    "main->MPI_Allreduce": lambda p: 0.02 * np.log2(p),
    "main->gather_on_root": lambda p: 0.01 * p,
}
MODELS = [
    model("main->compute", ["p"], 0.0, (100.0, {"p": (-1, 0)})),
    model("main->MPI_Allreduce", ["p"], 0.0, (0.02, {"p": (0, 1)})),
    model("main->gather_on_root", ["p"], 0.0, (0.01, {"p": (1, 0)})),
]


@pytest.fixture
def run_cli(monkeypatch):
    """``perfcast.cli.main`` with the sub-commands whose modules exist on this branch."""
    present = tuple(
        name for name in cli.COMMANDS if importlib.util.find_spec(f"perfcast.commands.{name}")
    )
    monkeypatch.setattr(cli, "COMMANDS", present)
    return cli.main


@pytest.fixture
def files(tmp_path):
    exp = experiment(TRUTH, {"p": P}, repetitions=5, noise=0.03, seed=1)
    path = tmp_path / "exp.json"
    write_experiment(exp, path)
    models = tmp_path / "models.json"
    models.write_text(ModelSet(MODELS).to_json())
    return path, models


def test_diagnose_text_and_json(run_cli, files, capsys):
    path, models = files
    assert run_cli(["diagnose", str(path), "--models", str(models), "--at", "p=4096"]) == 0
    text = capsys.readouterr().out
    assert "! main->gather_on_root: grows like p, expected at most p^(-1)" in text
    assert "main->gather_on_root overtakes main->compute at p=100" in text
    assert run_cli(["diagnose", str(path), "--models", str(models), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [b["kernel"] for b in data["scalability_bugs"]] == ["main->gather_on_root"]
    assert data["target"] == {"p": 512.0}  # default: 8x the largest measured p
    assert data["scaling_mode"]["mode"] == "strong"
    assert data["hotspot_shift"]["steps"]


def test_diagnose_with_an_expectation_and_bad_input(run_cli, files, capsys):
    path, models = files
    args = ["diagnose", str(path), "--models", str(models), "--expect", "*gather*:p=p"]
    assert run_cli(args) == 0
    assert "% of the total at the target):\n  none" in capsys.readouterr().out
    assert run_cli(["diagnose", str(path), "--models", str(models), "--at", "q=3"]) == 2
    assert "--at: point 'q=3': 'q' is not a parameter" in capsys.readouterr().err
    assert run_cli(["diagnose", str(path), "--models", str(models), "--expect", "p"]) == 2
    assert "KERNELGLOB:PARAM=GROWTH, e.g. '*MPI_*:p=log'; check --expect" in capsys.readouterr().err
    missing = path.parent / "few.json"
    missing.write_text(ModelSet(MODELS[:1]).to_json())
    assert run_cli(["diagnose", str(path), "--models", str(missing)]) == 2
    assert "no time model for kernel 'main->MPI_Allreduce'" in capsys.readouterr().err


def test_diagnose_fits_models_when_none_are_given(run_cli, files, capsys):
    pytest.importorskip("perfcast.model.pmnf", reason="the PMNF modeler comes with the core branch")
    path, _ = files
    assert run_cli(["diagnose", str(path), "--at", "p=4096", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [b["kernel"] for b in data["scalability_bugs"]] == ["main->gather_on_root"]


def test_compare_finds_the_injected_regression(run_cli, tmp_path, capsys):
    worse = dict(TRUTH)
    worse["main->MPI_Allreduce"] = lambda p: 0.02 * np.log2(p) * np.where(p >= 16, 1.15, 1.0)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_experiment(experiment(TRUTH, {"p": P}, repetitions=5, noise=0.04, seed=1), a)
    write_experiment(experiment(worse, {"p": P}, repetitions=5, noise=0.04, seed=2), b)
    assert run_cli(["compare", str(a), str(b), "--no-models", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["regressions"] == ["main->MPI_Allreduce"]
    assert run_cli(["compare", str(a), str(b), "--no-models"]) == 0
    assert "main->MPI_Allreduce got slower" in capsys.readouterr().out


def test_optimize_picks_threads(run_cli, tmp_path, capsys):
    truth = {
        "work": lambda p, threads: 100.0 / (p * threads),
        "spawn": lambda p, threads: 0.5 * threads,
    }
    path = tmp_path / "cfg.json"
    write_experiment(experiment(truth, {"p": [2, 4, 8, 16], "threads": [1, 2, 4, 8]}, 2), path)
    models = tmp_path / "models.json"
    fitted = [
        model("work", ["p", "threads"], 0.0, (100.0, {"p": (-1, 0), "threads": (-1, 0)})),
        model("spawn", ["p", "threads"], 0.0, (0.5, {"threads": (1, 0)})),
    ]
    models.write_text(ModelSet(fitted).to_json())
    args = ["optimize", str(path), "--models", str(models), "--fix", "p=16", "--format", "json"]
    assert run_cli([*args, "--constraint", "p*threads<=48"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["configuration"] == {"threads": 3.0}
    assert data["importance"][0]["parameter"] == "threads"
    assert run_cli(["optimize", str(path), "--models", str(models), "--config-params", "x"]) == 2
    assert "'x' is not a parameter" in capsys.readouterr().err


def test_report_writes_one_html_file(run_cli, files, tmp_path):
    path, models = files
    out = tmp_path / "r.html"
    assert run_cli(["report", str(path), "--models", str(models), "-o", str(out)]) == 0
    html = out.read_text()
    assert html.count("<svg") >= 5 and "main-&gt;gather_on_root" in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html


def test_report_png(run_cli, files, tmp_path):
    pytest.importorskip("matplotlib", reason="--png needs the report extra (matplotlib)")
    path, models = files
    pngs = tmp_path / "png"
    args = ["report", str(path), "--models", str(models), "-o", str(tmp_path / "r.html")]
    assert run_cli([*args, "--png", str(pngs)]) == 0
    names = sorted(p.name for p in pngs.iterdir())
    assert "main-_gather_on_root.png" in names or "main_gather_on_root.png" in names
    assert {"scaling_error.png", "hotspot_shift.png"} <= set(names)
    assert all((pngs / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in names)


def test_bad_requests_exit_2_with_one_message(run_cli, files, tmp_path, capsys):
    path, models = files
    cases = [
        (["report", str(path), "--models", str(models), "-o", str(tmp_path / "no" / "r.html")],
         "cannot write"),
        (["compare", str(path), str(tmp_path / "missing.json"), "--no-models"], "missing.json"),
        (["optimize", str(path), "--models", str(models)],
         "no configuration parameters (threads, ranks per node, ...) and none were named; "
         "name them with --config-params"),
        (["diagnose", str(path), "--models", str(tmp_path)], "Is a directory"),
        (["diagnose", str(path), "--models", str(models), "--metric", "bytes"],
         "no metric 'bytes'"),
    ]  # fmt: skip
    for args, message in cases:
        assert run_cli(args) == 2, args
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (args, err)


def test_diagnose_the_bug_example_with_roles_scale_n_and_a_lone_n(run_cli, tmp_path, capsys):
    from tests.analyze.bug_example import PLANTED, bug_experiment, lone_n_experiment

    path = tmp_path / "bug.json"
    write_experiment(bug_experiment(roles={}), path)
    for extra in ([], ["--scale", "n"], ["--role", "p=processes", "--role", "n=size"]):
        assert run_cli(["diagnose", str(path), "--format", "json", *extra]) == 0
        data = json.loads(capsys.readouterr().out)
        assert {b["kernel"] for b in data["scalability_bugs"]} == {PLANTED}
        assert data["parameters"]["n"]["scaling"] == "problem-size sweep"
        assert data["parameters"]["p"]["scaling"] == "strong"
    assert data["parameters"]["p"]["role_source"] == "given"
    assert run_cli(["diagnose", str(path), "--scale", "n"]) == 0
    text = capsys.readouterr().out
    assert "along n: problem-size sweep" in text and "weak" not in text
    assert run_cli(["diagnose", str(path), "--format", "json", "--flag-runtime"]) == 0
    flagged = {b["kernel"] for b in json.loads(capsys.readouterr().out)["scalability_bugs"]}
    assert "_dl_relocate_object" in flagged
    lone = tmp_path / "lone.json"
    write_experiment(lone_n_experiment(), lone)
    assert run_cli(["diagnose", str(lone), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [b["kernel"] for b in data["scalability_bugs"]] == [PLANTED]
    assert data["scaling_mode"]["mode"] == "problem-size sweep"
    assert run_cli(["diagnose", str(path), "--role", "p=cores"]) == 2
    err = capsys.readouterr().err
    assert "'cores' is not a role" in err and "check --role" in err
