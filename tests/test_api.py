"""The public API: load, fit, ModelSet, the modeler registry and model JSON."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import pydoc
from dataclasses import replace
from pathlib import Path

import matplotlib
import numpy as np
import pytest

import perfcast
from perfcast.core.errors import InputError
from perfcast.io import write_experiment
from perfcast.model.modelset import FORMAT_VERSION, ModelSet
from perfcast.model.registry import REGISTRY, make_modeler, modeler_names
from tests.analyze.synthetic import experiment

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "data"
P = [2, 4, 8, 16, 32, 64]
TRUTH = {
    "main->compute": lambda p: 100.0 / p,
    "main->allreduce": lambda p: 0.02 * np.log2(p),
    "main->gather": lambda p: 0.01 * p,
}


@pytest.fixture(scope="module")
def measured():
    return experiment(TRUTH, {"p": P}, repetitions=5, noise=0.02, seed=3)


@pytest.fixture(scope="module")
def models(measured):
    return perfcast.fit(measured)


def test_help_shows_the_documented_api():
    text = pydoc.render_doc(perfcast.fit, renderer=pydoc.plaintext)
    assert "Fit a scaling model to every kernel" in text
    assert "ModelSet" in text
    for name in ("load", "fit", "predict", "diagnose", "compare", "optimize", "report"):
        assert callable(getattr(perfcast, name)), name
        assert getattr(perfcast, name).__doc__


def test_load_reads_any_format_and_selects(tmp_path, measured):
    path = tmp_path / "exp.csv"
    write_experiment(measured, path)
    loaded = perfcast.load(path, kernels="main->c*")
    assert loaded.kernels == ["main->compute"]
    assert repr(loaded).startswith(f"<Experiment '{path}': 1 kernels, metrics time")
    assert "p[6], 6 points, 5 repetitions" in repr(loaded)
    with pytest.raises(InputError, match="no metric 'flops' \\(have time\\)"):
        perfcast.load(path, metric="flops")


def test_fit_returns_a_model_set_ranked_by_cost(models):
    assert isinstance(models, ModelSet)
    assert set(models) == set(TRUTH)
    assert models.point == {"p": 64.0}
    # at p = 64: compute 1.56, gather 0.64, allreduce 0.12
    assert list(models) == ["main->compute", "main->gather", "main->allreduce"]
    assert [m.kernel for m in models.ranked(at={"p": 2})][0] == "main->compute"
    assert [m.kernel for m in models.ranked(at={"p": 1e5})][0] == "main->gather"
    assert models["main->gather"]["time"].lead_term("p") == "p"
    assert repr(models) == (
        "<ModelSet 'synthetic': 3 kernels, metrics time, parameters p, modeler pmnf>"
    )


def test_predict_gives_intervals_most_expensive_first(models):
    predictions = perfcast.predict(models, {"p": 1024})
    assert [p.kernel for p in predictions][0] == "main->gather"
    gather = predictions[0]
    assert gather.lower < gather.value < gather.upper
    assert gather.value == pytest.approx(10.24, rel=0.05)
    with pytest.raises(InputError, match="missing p"):
        models.predict({"n": 3})


def test_json_round_trip_records_the_modeler(models):
    document = json.loads(models.to_json())
    assert document["format"] == "perfcast-models"
    assert document["version"] == FORMAT_VERSION
    assert document["modeler"]["name"] == "pmnf"
    assert document["modeler"]["settings"] == make_modeler("pmnf").get_params()
    again = ModelSet.from_json(models.to_json())
    assert again.models == models.models
    assert again.modeler == "pmnf" and again.ranges == models.ranges
    assert list(again) == list(models)


def test_json_of_a_newer_version_is_refused(models):
    document = json.loads(models.to_json())
    document["version"] = FORMAT_VERSION + 1
    with pytest.raises(InputError, match="written by a newer perfcast"):
        ModelSet.from_json(json.dumps(document), source="new.json")
    with pytest.raises(InputError, match="new.json: not JSON"):
        ModelSet.from_json("{", source="new.json")
    document["version"] = FORMAT_VERSION
    document["models"][1]["terms"] = "x"
    with pytest.raises(InputError, match="new.json: model 2: malformed model"):
        ModelSet.from_json(json.dumps(document), source="new.json")


def test_unversioned_documents_of_perfcast_0_1_are_read(models):
    legacy = json.dumps({"models": [m.to_dict() for m in models.models]})
    assert ModelSet.from_json(legacy).models == models.models


def test_to_frame_and_plot(models, measured):
    frame = models.to_frame()
    assert list(frame["kernel"]) == [m.kernel for m in models.models]
    assert {"expression", "terms", "cost_at_point", "smape", "adj_r2"} <= set(frame.columns)
    matplotlib.use("Agg")
    ax = models.plot("main->gather", experiment=measured)
    lines = ax.get_lines()
    assert len(lines) == 2  # the model and the measured means
    assert ax.get_xlabel() == "p" and ax.get_title() == "main->gather"
    assert np.allclose(lines[1].get_xdata(), P)
    with pytest.raises(InputError, match="no model of kernel 'nope'"):
        models.plot("nope")


def test_fit_every_metric_by_default(measured):
    frame = measured.frame.copy()
    counts = frame.assign(metric="visits", value=frame["value"].round() + 1)
    both = perfcast.Experiment.from_frame(
        __import__("pandas").concat([frame, counts]), ["p"], source="two"
    )
    models = perfcast.fit(both)
    assert models.metrics == ["time", "visits"]
    assert set(models["main->gather"]) == {"time", "visits"}
    assert models.cost_metric() == "time"
    only = perfcast.fit(both, metric="visits")
    assert only.metrics == ["visits"]


@pytest.mark.parametrize(
    ("modeler", "settings", "message"),
    [
        ("pmnf", {"candidates": -1}, "candidates: must be an integer from 1 to 42 or None, not -1"),
        ("pmnf", {"alpha": 1.5}, "alpha: must be a number strictly between 0 and 1, not 1.5"),
        ("pmnf", {"max_terms": 2.5}, "max_terms: must be an integer from 1 to 4 or None"),
        ("pmnf", {"location": "mode"}, "location: must be one of 'adaptive', 'mean'"),
        ("pmnf", {"positive_terms": "yes"}, "positive_terms: must be True or False"),
        ("sparse", {"max_interaction": 5}, "max_interaction: must be an integer from 2 to 4"),
        ("sparse", {"screened": 0}, "screened: must be an integer from 1 to 16"),
        ("hybrid", {"report": None}, "report: must be a StaticReport"),
        ("nope", {}, "modeler: unknown name 'nope'; registered: pmnf, sparse, hybrid"),
    ],
)
def test_settings_are_validated(measured, modeler, settings, message):
    with pytest.raises(ValueError, match=message.replace("(", "\\(").replace(")", "\\)")):
        perfcast.fit(measured, modeler=modeler, **settings)


def test_unknown_settings_are_refused():
    with pytest.raises(TypeError, match="candidate"):
        make_modeler("pmnf", candidate=3)


def test_the_registry_is_what_the_cli_offers():
    from perfcast.cli import build_parser

    assert modeler_names() == tuple(REGISTRY) == perfcast.modelers()
    parser = build_parser("model")
    action = next(
        a
        for sub in parser._subparsers._group_actions  # noqa: SLF001 - argparse has no public API
        for a in sub.choices["model"]._actions
        if a.dest == "modeler"
    )
    assert tuple(action.choices) == modeler_names(standalone=True)
    assert make_modeler("sparse", max_terms=2).get_params()["max_terms"] == 2


def test_analyses_accept_model_sets(measured, models):
    diagnosis = perfcast.diagnose(measured, models, at={"p": 512})
    assert diagnosis.scale == "p"
    html = perfcast.report(measured, models, at={"p": 512})
    assert html.lstrip().lower().startswith("<!doctype html")
    assert "<th>models</th><td>pmnf: search of the performance model normal form" in html
    comparison = perfcast.compare(measured, measured, with_models=False)
    assert comparison.to_dict()["metric"] == "time"


def test_save_and_load_round_trip(tmp_path, measured):
    path = tmp_path / "exp.perfcast.json"
    perfcast.save(measured, path)
    again = perfcast.load(path)
    assert again.kernels == measured.kernels
    assert np.array_equal(again.frame["value"].to_numpy(), measured.frame["value"].to_numpy())
    with pytest.raises(InputError, match="output format"):
        perfcast.save(measured, tmp_path / "exp.unknown")


def test_import_profiles_reads_a_caliper_directory():
    imported = perfcast.import_profiles([EXAMPLES / "mpi_scaling_cali"])
    assert imported.parameter_names == ("p",)
    assert sorted(set(imported.points()[:, 0])) == [27.0, 64.0, 125.0, 216.0, 343.0]


def test_a_campaign_from_a_mapping_runs(tmp_path):
    campaign = perfcast.load_campaign(
        {
            "command": "true {n}",
            "parameters": {"n": [1, 2, 3]},
            "repetitions": 2,
            "output": str(tmp_path / "runs.csv"),
            "seed": 4,
        }
    )
    result = perfcast.run_campaign(campaign)
    assert (result.executed, result.skipped, result.failures) == (6, 0, [])
    assert result.experiment.kernels == ["true"]
    again = perfcast.run_campaign(campaign)
    assert (again.executed, again.skipped) == (0, 6)


def test_analyses_refuse_models_that_miss_a_kernel(measured, models):
    partial = ModelSet([m for m in models.models if m.kernel != "main->gather"], source="m.json")
    with pytest.raises(InputError, match="m.json: no time model for kernel 'main->gather'"):
        perfcast.diagnose(measured, partial)


def test_a_model_set_is_a_read_only_mapping_of_every_kernel(models):
    extra = ModelSet([*models.models, replace(models.models[0], kernel="only_visits", metric="v")])
    assert len(list(extra)) == len(extra) == 4
    assert list(extra)[-1] == "only_visits"
    with pytest.raises(TypeError):
        extra["main->gather"]["time"] = models.models[0]  # type: ignore[index]


def test_ranking_needs_every_parameter(models):
    with pytest.raises(InputError, match="has no value of p"):
        models.ranked(at={"n": 4})


def test_every_name_the_package_exports_resolves():
    for name in perfcast.__all__:
        assert getattr(perfcast, name) is not None, name
    assert {"render", "instruction_mix", "load_static_report", "parse_point"} <= set(dir(perfcast))
    eager = {"InputError", "PerfcastError", "WorkError", "__version__"}
    assert set(perfcast.__all__) == eager | set(perfcast._LAZY)  # one list of lazy names


def test_no_subpackage_shadows_an_exported_name():
    # Importing a subpackage sets it as an attribute of perfcast, which would hide an API
    # function of the same name (``perfcast.render`` once was both).
    for module in pkgutil.walk_packages(perfcast.__path__, "perfcast."):
        if module.name.count(".") == 1:
            importlib.import_module(module.name)
    api = importlib.import_module("perfcast.api")
    for name in perfcast._API:
        assert getattr(perfcast, name) is getattr(api, name), name


def test_the_api_package_exports_each_name_from_the_module_of_its_job():
    api = importlib.import_module("perfcast.api")
    assert set(api.__all__) == set(api._ON_FIRST_USE)  # one list of lazily loaded names
    for name, (module, attribute) in api._ON_FIRST_USE.items():
        assert getattr(api, name) is getattr(importlib.import_module(module), attribute), name
    modules = {info.name for info in pkgutil.iter_modules(api.__path__)}
    assert not modules & set(api.__all__)  # a submodule would hide an exported name
    with pytest.raises(AttributeError, match="no attribute 'fitt'"):
        api.fitt  # noqa: B018 - the attribute access is the test


def test_type_checkers_see_every_lazily_loaded_name_with_its_module():
    # The names load through __getattr__ at run time; mypy sees them only through the
    # TYPE_CHECKING imports, and a name missing there would be Any to it without a word.
    api = importlib.import_module("perfcast.api")
    tree = ast.parse(Path(api.__file__).read_text(encoding="utf-8"))
    seen: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    for alias in statement.names:
                        seen[alias.asname or alias.name] = (statement.module, alias.name)
    assert {name: seen.get(name) for name in api._ON_FIRST_USE} == api._ON_FIRST_USE
