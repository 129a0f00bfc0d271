"""Quality gates: warnings on models that should not be trusted, silence on clean data."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import perfcast
from perfcast import cli
from perfcast.core.experiment import Experiment, Parameter
from perfcast.core.function import Model, ModelWarning
from perfcast.measure.journal import JournalWriter
from perfcast.measure.spec import campaign_from_mapping
from perfcast.model.gates import gate_models
from tests.conftest import synthetic_experiment

TEXT = Path(__file__).resolve().parents[1] / "data" / "extrap" / "text"
SEGMENTED = TEXT / "one_parameter_segmented_2.txt"

CLEAN_FUNCTIONS = {
    "linear": lambda p: 2.0 + 0.5 * p,
    "p_log_p": lambda p: 1.0 + 0.01 * p * np.log2(p),
    "sqrt": lambda p: 5 + 3 * np.sqrt(p),
    "quadratic": lambda p: 0.1 + 1e-3 * p**2,
    "inverse": lambda p: 1 + 100 / p,
    "logarithm": lambda p: 3 + 2 * np.log2(p),
    "constant": lambda p: 7 + 0 * p,
}


def codes(model: Model) -> list[str]:
    return [w.code for w in model.warnings]


def test_segmented_2_warns_of_a_poor_fit_and_two_regimes_with_the_breakpoint() -> None:
    (model,) = perfcast.fit(perfcast.load(SEGMENTED)).models
    assert model.terms == ()  # the constant 2.88 of the issue: the model does not change
    assert codes(model) == ["poor-fit", "two-regimes"]
    two_regimes = model.warnings[1].message
    assert "up to p=20 and another from p=24" in two_regimes
    assert "segmented modeling" in two_regimes


@pytest.mark.parametrize("noise", [0.01, 0.05, 0.1])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clean_synthetic_data_gets_no_warning(noise: float, seed: int) -> None:
    experiment = synthetic_experiment(
        CLEAN_FUNCTIONS, {"p": [4, 8, 16, 32, 64]}, noise=noise, seed=seed
    )
    models = perfcast.fit(experiment)
    assert len(models.models) == len(CLEAN_FUNCTIONS)
    assert {m.kernel: m.warnings for m in models.models if m.warnings} == {}


def test_clean_two_parameter_data_gets_no_warning() -> None:
    functions = {
        "product": lambda p, n: 2.0 + 0.5 * p * n,
        "n_log_p": lambda p, n: 1.0 + 0.01 * n * np.log2(p),
        "strong": lambda p, n: 0.1 + 1e-3 * n**2 / p,
    }
    grid = {"p": [4, 8, 16, 32, 64], "n": [10, 20, 30, 40, 50]}
    models = perfcast.fit(synthetic_experiment(functions, grid, noise=0.05))
    assert {m.kernel: m.warnings for m in models.models if m.warnings} == {}


@pytest.mark.parametrize(
    "name", ["one_parameter_1.txt", "one_parameter_6.txt", "two_parameter_3.txt"]
)
def test_clean_extrap_files_get_no_warning(name: str) -> None:
    models = perfcast.fit(perfcast.load(TEXT / name))
    assert {m.kernel: m.warnings for m in models.models if m.warnings} == {}


def test_strong_scaling_one_parameter_1_is_warned_of_terms_that_cancel() -> None:
    # The data grows as 0.2*x^2; the selected model is about -12760 + 1968*x^(1/4)
    # + 9659*x^(-1/2)*log2(x), whose terms of ±2.6e4 cancel to 82..735. At x=120 it is
    # negative where the data's trend gives 2880: the warning is deserved.
    (model,) = perfcast.fit(perfcast.load(TEXT / "strong_scaling" / "one_parameter_1.txt")).models
    assert codes(model) == ["cancelling-terms"]
    assert model.evaluate(np.array([[120.0]]))[0] < 0


def test_too_few_values_of_a_parameter_warn() -> None:
    experiment = synthetic_experiment({"k": lambda p: 1 + p}, {"p": [2, 4, 8, 16]}, noise=0.01)
    (model,) = perfcast.fit(experiment).models
    assert codes(model) == ["few-points"]
    assert "'p' was measured at 4 values" in model.warnings[0].message


def write_oversubscribed_journal(path: Path, cores: int) -> None:
    """The journal of a campaign launching p ranks, measured on a machine with ``cores``
    cores, written by the real journal writer in the format a campaign writes."""
    campaign = campaign_from_mapping(
        {
            "command": f"{sys.executable} -c pass {{n}}",
            "launcher": "env RANKS={p}",
            "repetitions": 2,
            "parameters": {"p": [1, 2, 4, 8, 16], "n": [128, 192, 256, 320, 384]},
        }
    )
    rng = np.random.default_rng(0)
    with JournalWriter(path) as writer:
        writer.append(
            {
                "type": "session",
                "fingerprint": campaign.fingerprint,
                "seed": 1,
                "campaign": campaign.to_dict(),
                "program_kernel": "program",
                "metadata": {"cores": cores, "hostname": "laptop"},
            }
        )
        for p in (1, 2, 4, 8, 16):
            for n in (128, 192, 256, 320, 384):
                for repetition in range(2):
                    value = (1e-6 * n**2 / p) * max(1.0, p / cores) * rng.uniform(0.98, 1.02)
                    writer.append(
                        {
                            "type": "run",
                            "fingerprint": campaign.fingerprint,
                            "point": {"p": p, "n": n},
                            "repetition": repetition,
                            "mode": "time",
                            "status": "ok",
                            "records": [{"kernel": "program", "metric": "time", "value": value}],
                        }
                    )


def test_a_campaign_with_more_ranks_than_cores_warns_naming_the_points(tmp_path: Path) -> None:
    journal = tmp_path / "cg.results.jsonl"
    write_oversubscribed_journal(journal, cores=4)
    (model,) = perfcast.fit(perfcast.load(journal)).models
    (warning,) = [w for w in model.warnings if w.code == "oversubscribed"]
    assert "than the machine's 4 cores at p=8,n=128; p=8,n=192; p=8,n=256; p=8,n=320" in (
        warning.message
    )
    assert "and 6 more" in warning.message


def test_a_campaign_within_its_cores_is_not_oversubscribed(tmp_path: Path) -> None:
    journal = tmp_path / "cg.results.jsonl"
    write_oversubscribed_journal(journal, cores=16)
    (model,) = perfcast.fit(perfcast.load(journal)).models
    assert "oversubscribed" not in codes(model)


def test_gates_do_not_change_the_models() -> None:
    experiment = perfcast.load(SEGMENTED)
    fitted = perfcast.fit(experiment).models
    bare = [Model(m.kernel, m.metric, m.parameters, m.constant, m.terms, m.quality) for m in fitted]
    gated = gate_models(bare, experiment, "runtime")
    assert [m.to_dict(with_quality=False) for m in gated] == [
        m.to_dict(with_quality=False) for m in fitted
    ]
    assert [m.warnings for m in gated] == [m.warnings for m in fitted]


def test_warnings_round_trip_through_the_model_json_and_are_optional_on_read() -> None:
    models = perfcast.fit(perfcast.load(SEGMENTED))
    document = json.loads(models.to_json())
    assert [w["code"] for w in document["models"][0]["warnings"]] == ["poor-fit", "two-regimes"]
    again = perfcast.ModelSet.from_json(document)
    assert again.models[0].warnings == models.models[0].warnings
    del document["models"][0]["warnings"]
    assert perfcast.ModelSet.from_json(document).models[0].warnings == ()


def test_a_prediction_64x_beyond_the_data_warns_with_the_interval_width() -> None:
    models = perfcast.fit(perfcast.load(TEXT / "one_parameter_6.txt"))
    near, far = (perfcast.predict(models, {"p": p}) for p in (32000.0, 1024000.0))
    assert all(p.warnings == () for p in near)
    for prediction in far:
        (warning,) = prediction.warnings
        assert warning.code == "extrapolation"
        assert "p=1.024e+06 is 64x the largest measured p (16000)" in warning.message
        assert f"spans {prediction.lower:.4g} to {prediction.upper:.4g}" in warning.message


def test_model_command_prints_warnings_under_the_table_quiet_hides_strict_fails(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["model", str(SEGMENTED)]) == 0
    out = capsys.readouterr().out
    table, _, warnings = out.partition("\nwarnings:\n")
    assert "2.88135" in table
    lines = warnings.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("main: the model misses the measured means by 113 %")
    assert lines[1].startswith("main: the measurements follow two trends along 'p'")
    assert cli.main(["model", str(SEGMENTED), "--quiet"]) == 0
    assert "warnings" not in capsys.readouterr().out
    assert cli.main(["model", str(SEGMENTED), "--strict"]) == 2
    captured = capsys.readouterr()
    assert "2.88135" in captured.out
    assert "2 warning(s); --strict makes any warning fatal" in captured.err
    assert cli.main(["model", str(TEXT / "one_parameter_6.txt"), "--strict"]) == 0


def test_predict_command_shows_extrapolation_in_text_and_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = str(TEXT / "one_parameter_6.txt")
    assert cli.main(["predict", source, "--at", "p=1024000"]) == 0
    warnings = capsys.readouterr().out.partition("\nwarnings:\n")[2].splitlines()
    assert len(warnings) == 4
    assert all("far extrapolation: p=1.024e+06 is 64x" in line for line in warnings)
    assert cli.main(["predict", source, "--at", "p=1024000", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert all(
        [w["code"] for w in p["warnings"]] == ["extrapolation"] for p in document["predictions"]
    )
    assert cli.main(["predict", source, "--at", "p=20000", "--strict"]) == 0


def test_model_warning_json_form() -> None:
    assert ModelWarning("poor-fit", "off").to_dict() == {"code": "poor-fit", "message": "off"}


def test_experiment_metadata_cores_at_the_top_level_counts_for_imported_data() -> None:
    experiment = synthetic_experiment({"k": lambda p: 1 + p}, {"p": [1, 2, 4, 8, 16]})
    roles = Experiment.from_frame(
        experiment.frame,
        [Parameter("p", "processes")],
        metadata={"cores": 8},
    )
    (model,) = perfcast.fit(roles).models
    assert codes(model) == ["oversubscribed"]
    assert "at p=16:" in model.warnings[0].message


def test_a_warning_every_kernel_shares_is_printed_once() -> None:
    shared = ModelWarning("few-points", "'p' was measured at 4 values")
    own = ModelWarning("poor-fit", "off by 30 %")
    models = [
        Model("a", "time", ("p",), 1.0, warnings=(shared, own)),
        Model("b", "time", ("p",), 2.0, warnings=(shared,)),
    ]
    assert perfcast.api.render_warnings(perfcast.ModelSet(models)) == (
        "all kernels: 'p' was measured at 4 values\na: off by 30 %\n"
    )
    assert perfcast.api.render_warnings(perfcast.ModelSet(models[:1])) == (
        "a: 'p' was measured at 4 values\na: off by 30 %\n"
    )
