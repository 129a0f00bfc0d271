"""Readable output of ``perfcast model`` and ``perfcast predict``: order by cost, call trees,
terminal width, kernel selection and integer parameters."""

from __future__ import annotations

import csv
import io
import json
import sys

import numpy as np
import pandas as pd
import pytest

from perfcast.api import fit, load, predict, render
from perfcast.cli import main
from perfcast.core.experiment import Experiment
from perfcast.io import write_experiment
from tests.conftest import synthetic_experiment

GRID = {"p": [4, 8, 16, 32, 64]}
#: Exclusive times of a call tree and the inclusive ones they add up to.
EXCLUSIVE = {
    "main": lambda p: 0.5 + 0 * p,
    "main->init": lambda p: 3.0 + 0 * p,
    "main->solve": lambda p: 1e-2 * p,
    "main->solve->spmv_of_the_distributed_sparse_matrix": lambda p: 2e-2 * p * np.log2(p),
}
INCLUSIVE = {
    "main": lambda p: 3.5 + 1e-2 * p + 2e-2 * p * np.log2(p),
    "main->init": EXCLUSIVE["main->init"],
    "main->solve": lambda p: 1e-2 * p + 2e-2 * p * np.log2(p),
    "main->solve->spmv_of_the_distributed_sparse_matrix": EXCLUSIVE[
        "main->solve->spmv_of_the_distributed_sparse_matrix"
    ],
}


@pytest.fixture
def call_tree_file(tmp_path):
    frames = [
        synthetic_experiment(truth, GRID, noise=0.01, metric=metric).to_frame()
        for metric, truth in (("time", EXCLUSIVE), ("time_inclusive", INCLUSIVE))
    ]
    path = tmp_path / "tree.csv"
    write_experiment(Experiment.from_frame(pd.concat(frames, ignore_index=True)), path)
    return path


def _table_kernels(text: str) -> list[str]:
    return [line.split()[0] for line in text.splitlines()[1:] if line.strip()]


def test_tables_rank_by_cost_at_the_largest_point_or_at(call_tree_file, capsys):
    assert main(["model", str(call_tree_file)]) == 0
    # at p=64: spmv 7.7, init 3, solve 0.64, main 0.5
    assert _table_kernels(capsys.readouterr().out) == [
        "main->solve->spmv_of_the_distributed_sparse_matrix",
        "main->init",
        "main->solve",
        "main",
    ]
    assert main(["model", str(call_tree_file), "--format", "csv", "--at", "p=2"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    # at p=2: init 3, main 0.5, spmv 0.04, solve 0.02
    assert [r["kernel"] for r in rows] == [
        "main->init",
        "main",
        "main->solve->spmv_of_the_distributed_sparse_matrix",
        "main->solve",
    ]
    assert main(["model", str(call_tree_file), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [m["kernel"] for m in document["models"]] == list(EXCLUSIVE)  # as fitted
    assert document["ranges"] == {"p": [4, 64]}
    assert all(isinstance(v, int) for v in document["ranges"]["p"])


def test_markdown_ranks_every_metric_on_its_own(call_tree_file, capsys):
    assert main(["model", str(call_tree_file), "--metric", "all", "--format", "markdown"]) == 0
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines()[2:]]
    assert [r[1] for r in rows] == ["time"] * 4 + ["time_inclusive"] * 4
    assert [r[0].lstrip("| ") for r in rows[4:]] == [
        "main",
        "main->solve",
        "main->solve->spmv_of_the_distributed_sparse_matrix",
        "main->init",
    ]


def test_call_tree_keeps_exclusive_and_inclusive_apart(call_tree_file, capsys):
    assert (
        main(["model", str(call_tree_file), "--metric", "all", "--tree", "--format", "json"]) == 0
    )
    tree = json.loads(capsys.readouterr().out)
    assert tree["metrics"] == {"exclusive": "time", "inclusive": "time_inclusive"}
    assert tree["total_from"] == "exclusive"
    assert tree["at"] == {"p": 64}
    nodes = {n["kernel"]: n for n in tree["nodes"]}
    assert [n["kernel"] for n in tree["nodes"]] == [
        "main",
        "main->solve",
        "main->solve->spmv_of_the_distributed_sparse_matrix",
        "main->init",
    ]  # children under their caller, most expensive (inclusive) first
    assert [n["depth"] for n in tree["nodes"]] == [0, 1, 2, 1]
    exclusive_total = sum(f(64.0) for f in EXCLUSIVE.values())
    assert tree["total"] == pytest.approx(exclusive_total, rel=0.02)  # not the inclusive sum
    assert sum(n["exclusive"]["share"] for n in tree["nodes"]) == pytest.approx(1.0)
    assert nodes["main"]["inclusive"]["value"] == pytest.approx(INCLUSIVE["main"](64.0), rel=0.02)
    assert nodes["main"]["exclusive"]["value"] == pytest.approx(0.5, rel=0.02)

    assert main(["model", str(call_tree_file), "--tree"]) == 0  # time and its inclusive twin
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["call", "path"] and "time (excl)" in lines[0]
    assert "time_inclusive (incl)" in lines[0]
    assert lines[3].startswith("    spmv_of_the_distributed_sparse_matrix ")
    assert lines[-1].startswith("total (exclusive values) at p=64: ")


def test_call_tree_of_only_inclusive_values_is_refused(call_tree_file, capsys):
    arguments = ["model", str(call_tree_file), "--metric", "time_inclusive", "--tree"]
    assert main(arguments) == 2
    err = capsys.readouterr().err
    assert "every metric is inclusive" in err and err.count("\n") == 1


def test_text_tables_fit_a_width_wrapping_models_and_cutting_kernels(call_tree_file):
    experiment = load(call_tree_file, metric="time")
    models = fit(experiment)
    full = render(models)
    assert max(len(line) for line in full.splitlines()) > 80 and "..." not in full
    fitted = render(models, width=80)
    header, *lines = fitted.splitlines()
    assert max(len(line) for line in fitted.splitlines()) <= 80
    assert "...solve->spmv_of_the_distributed_sparse_matrix" not in fitted
    kernels = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert kernels[0].startswith("...") and kernels[0].endswith("sparse_matrix")  # path's end kept
    # every model is whole: its cell continues on the next lines
    start, end = header.index("model"), header.index("SMAPE %")
    cells: list[str] = []
    for line in lines:
        piece = line[start:end].replace(" ", "")
        if line.startswith(" "):
            cells[-1] += piece
        else:
            cells.append(piece)
    assert cells == [m.expression().replace(" ", "") for m in models.ranked()]
    assert len(lines) > len(models.models)  # some model did wrap
    predictions = predict(models, "p=1024")
    table = render(predictions, width=100)
    assert (
        max(len(line) for line in table.splitlines())
        <= 100
        < len(render(predictions).splitlines()[1])
    )


def test_kernel_is_repeatable_and_exclude_drops(call_tree_file, capsys):
    base = ["model", str(call_tree_file), "--format", "csv"]
    assert main([*base, "--kernel", "main->init", "--kernel", "*spmv*"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert sorted(r["kernel"] for r in rows) == [
        "main->init",
        "main->solve->spmv_of_the_distributed_sparse_matrix",
    ]
    assert main([*base, "--kernel", "main->*", "--exclude", "*spmv*", "--exclude", "*init"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["kernel"] for r in rows] == ["main->solve"]
    assert main([*base, "--kernel", "main", "--kernel", "nothing*"]) == 2
    assert "no kernel matches 'nothing*'" in capsys.readouterr().err
    assert main([*base, "--exclude", "*"]) == 2
    assert "no kernel is left" in capsys.readouterr().err


def test_predictions_write_integer_parameters_as_integers(call_tree_file, capsys):
    base = ["predict", str(call_tree_file), "--metric", "time", "--at", "p=1048576"]
    assert main([*base, "--format", "json"]) == 0
    predictions = json.loads(capsys.readouterr().out)["predictions"]
    assert all(p["at"] == {"p": 1048576} for p in predictions)
    assert main(base) == 0
    assert "p=1048576 " in capsys.readouterr().out  # not p=1.04858e+06
    assert main([*base[:-1], "p=1.5e3", "--format", "csv"]) == 0
    assert {r["at"] for r in csv.DictReader(io.StringIO(capsys.readouterr().out))} == {"p=1500"}


def test_model_fits_the_terminal_and_writes_full_rows_to_a_pipe(
    call_tree_file, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "80")  # shutil.get_terminal_size reads it first
    assert main(["model", str(call_tree_file)]) == 0  # captured: not a terminal
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) > 80
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["model", str(call_tree_file)]) == 0
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) <= 80


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_model_shows_progress_on_a_terminal_once_the_work_passes_the_delay(
    call_tree_file, capsys, monkeypatch
):
    import perfcast.core.progress

    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["model", str(call_tree_file), "--metric", "all"]) == 0
    assert terminal.getvalue() == ""  # done within the delay: no bar
    monkeypatch.setattr(perfcast.core.progress, "API_DELAY", 0.0)
    assert main(["model", str(call_tree_file), "--metric", "all"]) == 0
    drawn = terminal.getvalue()
    assert "8/8 kernels modeled" in drawn and drawn.endswith("\n")  # 4 kernels x 2 metrics
    assert "main->init" in capsys.readouterr().out


def test_progress_counts_every_kernel_once_across_search_chunks(monkeypatch):
    from perfcast.model.fitting import candidates, selection
    from perfcast.model.pmnf import PMNFModeler

    truth = {f"k{i}": (lambda p, c=i: (1 + c) * p) for i in range(9)}
    experiment = synthetic_experiment(truth, GRID, noise=0.01)

    def in_chunks_of_four(*args, **kwargs):
        return selection.search(*args, **{**kwargs, "chunk": 4})

    monkeypatch.setattr(candidates, "search", in_chunks_of_four)
    modeler = PMNFModeler()
    reports: list[int] = []
    modeler.progress = reports.append
    modeler.fit(experiment)
    assert reports == [4, 4, 1]
    assert len(modeler.models_) == 9


def test_a_bad_cost_point_is_one_message(call_tree_file, capsys):
    assert main(["model", str(call_tree_file), "--at", "q=4"]) == 2
    err = capsys.readouterr().err
    assert "--at" in err and "'q' is not a parameter" in err and err.count("\n") == 1
    models = fit(load(call_tree_file, metric="time"))
    by_text = render(models, "csv", at="p=2")
    assert by_text == render(models, "csv", at={"p": 2.0}) != render(models, "csv")


def test_report_shows_progress_of_the_plots_on_a_terminal(call_tree_file, tmp_path, monkeypatch):
    import perfcast.core.progress

    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    out = tmp_path / "report.html"
    assert main(["report", str(call_tree_file), "-o", str(out)]) == 0
    assert terminal.getvalue() == ""  # done within the delay: no bar
    monkeypatch.setattr(perfcast.core.progress, "API_DELAY", 0.0)
    assert main(["report", str(call_tree_file), "-o", str(out)]) == 0
    drawn = terminal.getvalue()
    assert "4/4 kernel plots" in drawn and drawn.endswith("\n")


def test_static_shows_progress_of_the_counting_on_a_terminal(tmp_path, monkeypatch, capsys):
    import perfcast.core.progress

    source = tmp_path / "nest.c"
    source.write_text(
        "void f(int n) { for (int i = 0; i < n; i++) for (int j = 0; j < i; j++) ; }\n"
        "int main(void) { f(10); return 0; }\n"
    )
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(perfcast.core.progress, "API_DELAY", 0.0)
    assert main(["static", str(source), "--param", "n"]) == 0
    drawn = terminal.getvalue()
    assert "4/4 loops and functions" in drawn and drawn.endswith("\n")  # f, main, two loops
    assert "f:loop@1" in capsys.readouterr().out
