"""``perfcast model`` and ``perfcast predict`` through the real command line."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest

from perfcast.cli import main
from perfcast.core.experiment import Experiment
from perfcast.io import write_experiment
from tests.conftest import synthetic_experiment


@pytest.fixture
def experiment_file(tmp_path):
    experiment = synthetic_experiment(
        {
            "main->solve": lambda p, n: 0.3 + 2e-3 * n**2 * np.log2(p),
            "main->init": lambda p, n: 1.0 + 0 * p,
        },
        {"p": [4, 8, 16, 32, 64], "n": [10, 20, 30, 40, 50]},
        noise=0.01,
    )
    path = tmp_path / "exp.csv"
    write_experiment(experiment, path)
    return path


def test_json_output_has_exactly_the_design_schema(experiment_file, capsys):
    assert main(["model", str(experiment_file), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document) == [
        "format", "version", "modeler", "source", "ranges", "notes", "models", "skipped"
    ]  # fmt: skip
    assert (document["format"], document["version"]) == ("perfcast-models", 1)
    assert document["modeler"]["name"] == "pmnf"
    assert document["modeler"]["settings"]["alpha"] == 0.05
    assert document["ranges"] == {"p": [4.0, 64.0], "n": [10.0, 50.0]}
    keys = {"kernel", "metric", "parameters", "constant", "terms", "expression", "quality"}
    keys |= {"warnings", "uncertainty"}
    for model in document["models"]:
        assert set(model) == keys
        assert set(model["quality"]) == {"rss", "smape", "adj_r2", "cv_smape", "lof_p"}
        assert set(model["uncertainty"]) == {
            "covariance", "noise_variance", "dof", "relative", "loo_variance",
            "extrapolation", "selection",
        }  # fmt: skip
        size = len(model["terms"]) + 1
        assert [len(row) for row in model["uncertainty"]["covariance"]] == [size] * size
        for term in model["terms"]:
            assert set(term) == {"coefficient", "factors"}
            for factor in term["factors"]:
                assert set(factor) == {"parameter", "exponent", "log_exponent"}
    solve = next(m for m in document["models"] if m["kernel"] == "main->solve")
    factors = {
        f["parameter"]: (f["exponent"], f["log_exponent"]) for f in solve["terms"][0]["factors"]
    }
    assert factors == {"n": (2, 0), "p": (0, 1)}
    init = next(m for m in document["models"] if m["kernel"] == "main->init")
    assert init["terms"] == []


def test_text_markdown_and_csv_outputs(experiment_file, capsys):
    assert main(["model", str(experiment_file)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].split()[:3] == ["kernel", "metric", "model"]
    assert "n^2*log2(p)" in text
    assert main(["model", str(experiment_file), "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("| kernel | metric | model |")
    assert main(["model", str(experiment_file), "--format", "csv", "--kernel", "main->solve"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 1
    assert rows[0]["lead_n"] == "n^2" and rows[0]["lead_p"] == "log2(p)"


def test_out_file(experiment_file, tmp_path, capsys):
    out = tmp_path / "models.json"
    assert main(["model", str(experiment_file), "--format", "json", "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert len(json.loads(out.read_text())["models"]) == 2


def test_predict_ranks_by_cost_with_interval(experiment_file, capsys):
    assert main(["predict", str(experiment_file), "--at", "p=4096,n=1e3", "--format", "json"]) == 0
    predictions = json.loads(capsys.readouterr().out)["predictions"]
    assert [p["kernel"] for p in predictions] == ["main->solve", "main->init"]
    solve = predictions[0]
    truth = 0.3 + 2e-3 * 1e6 * 12
    assert solve["prediction"] == pytest.approx(truth, rel=0.05)
    assert solve["lower"] < solve["prediction"] < solve["upper"]
    assert solve["lower"] > 0


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["predict", "{file}", "--at", "p=4096"], "missing n"),
        (["predict", "{file}", "--at", "p=4096,n=x"], "not a number"),
        (["predict", "{file}", "--at", "p=0,n=5"], "positive"),
        (["model", "{file}", "--metric", "flops"], "no metric 'flops' (have time)"),
        (["predict", "{file}", "--at", "p=8,n=8", "--metric", "all"], "one metric"),
        (["model", "{file}", "--kernel", "nothing*"], "no kernel matches"),
        (["model", "{missing}"], "no such file"),
    ],
)
def test_bad_requests_exit_2_with_one_message(
    experiment_file, tmp_path, capsys, arguments, message
):
    filled = [a.format(file=experiment_file, missing=tmp_path / "none.csv") for a in arguments]
    assert main(filled) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_metric_all_models_every_metric_on_its_own(tmp_path, capsys):
    grid = {"p": [4, 8, 16, 32, 64], "n": [10, 20, 30, 40, 50]}
    frames = [
        synthetic_experiment({"solve": f}, grid, noise=0.01, metric=metric).to_frame()
        for metric, f in [
            ("time", lambda p, n: 0.3 + 2e-3 * n**2 * np.log2(p)),
            ("bytes", lambda p, n: 64.0 * n * p),
        ]
    ]
    path = tmp_path / "two.csv"
    write_experiment(Experiment.from_frame(pd.concat(frames, ignore_index=True)), path)
    assert main(["model", str(path), "--metric", "all", "--format", "json"]) == 0
    models = {m["metric"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    assert set(models) == {"time", "bytes"}
    (term,) = models["bytes"]["terms"]
    assert sorted(f["parameter"] for f in term["factors"]) == ["n", "p"]
    assert models["bytes"]["expression"].endswith("*n*p")
    assert main(["model", str(path), "--format", "json"]) == 0  # the default stays time
    assert [m["metric"] for m in json.loads(capsys.readouterr().out)["models"]] == ["time"]
