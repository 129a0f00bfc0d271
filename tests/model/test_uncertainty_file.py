"""Model files with damaged or hostile ``uncertainty`` values (selection and backtest records,
covariance, noise, degrees of freedom) are refused naming the file; huge but valid values give
an interval that says it is unbounded, and JSON output never holds NaN."""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from perfcast.api import ModelSet
from perfcast.core.errors import InputError
from perfcast.core.jsonout import dumps
from perfcast.model.predict import predict

ROOT = Path(__file__).resolve().parents[2]
MEASUREMENTS = ROOT / "tests" / "data" / "extrap" / "text" / "one_parameter_1.txt"

DOCUMENT: dict[str, Any] = {
    "models": [
        {
            "kernel": "compute",
            "metric": "time",
            "parameters": ["x"],
            "constant": 1.5,
            "terms": [
                {"coefficient": 0.2, "factors": [{"parameter": "x", "exponent": 2}]},
            ],
            "uncertainty": {
                "covariance": [[0.37, -0.0004], [-0.0004, 6e-7]],
                "noise_variance": 0.0002,
                "dof": 28,
                "relative": True,
                "loo_variance": 0.0006,
                "extrapolation": [{"parameter": "x", "largest": 60.0, "rate_variance": 0.0024}],
                "selection": [{"parameter": "x", "largest": 60.0, "rate_variance": 0.0049}],
            },
        }
    ]
}


def _entry(uncertainty: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = uncertainty["selection"][0]
    return entry


HOSTILE = {
    "rate as text": lambda u: _entry(u).update(rate_variance="0.5"),
    "rate as boolean": lambda u: _entry(u).update(rate_variance=True),
    "rate as list": lambda u: _entry(u).update(rate_variance=[1]),
    "negative rate": lambda u: _entry(u).update(rate_variance=-1.0),
    "largest zero": lambda u: _entry(u).update(largest=0),
    "largest as text": lambda u: _entry(u).update(largest="60"),
    "parameter a number": lambda u: _entry(u).update(parameter=1),
    "unknown parameter": lambda u: _entry(u).update(parameter="y"),
    "parameter twice": lambda u: u["selection"].append(dict(_entry(u), rate_variance=5.0)),
    "backtest twice": lambda u: u["extrapolation"].append(dict(u["extrapolation"][0])),
    "selection an object": lambda u: u.update(selection={"x": 1}),
    "selection entry null": lambda u: u.update(selection=[None]),
    "selection entry a list": lambda u: u.update(selection=[[1, 2]]),
    "covariance as text": lambda u: u.update(covariance=[["0.37", "0"], ["0", "1e-6"]]),
    "covariance ragged": lambda u: u.update(covariance=[[1.0, 0.0], [0.0]]),
    "noise as boolean": lambda u: u.update(noise_variance=False),
    "dof beyond a double": lambda u: u.update(dof=10**400),
    "dof a float": lambda u: u.update(dof=3.0),
}


def _write(tmp_path: Path, change: Any) -> Path:
    document = copy.deepcopy(DOCUMENT)
    change(document["models"][0]["uncertainty"])
    path = tmp_path / "models.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_uncertainty_is_refused_naming_the_file(tmp_path: Path, case: str) -> None:
    path = _write(tmp_path, HOSTILE[case])
    with pytest.raises(InputError) as refused:
        ModelSet.load(path)
    assert str(path) in str(refused.value)
    assert "model 1" in str(refused.value)


def test_the_valid_document_reads_and_keeps_its_records(tmp_path: Path) -> None:
    models = ModelSet.load(_write(tmp_path, lambda u: None))
    (model,) = models.models
    assert model.uncertainty is not None
    assert [s.rate_variance for s in model.uncertainty.selection] == [0.0049]
    assert model.uncertainty.dof == 28


def test_cli_refuses_a_hostile_selection_with_exit_2_and_no_traceback(tmp_path: Path) -> None:
    path = _write(tmp_path, HOSTILE["parameter twice"])
    result = subprocess.run(
        [sys.executable, "-m", "perfcast.cli", "diagnose", str(MEASUREMENTS)]
        + ["--models", str(path), "--at", "x=1000"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert str(path) in result.stderr and "more than once" in result.stderr


@pytest.mark.parametrize(
    "change",
    [
        lambda u: _entry(u).update(rate_variance=1e300),
        lambda u: u.update(noise_variance=1e300),
        lambda u: u.update(covariance=[[1e300, 0.0], [0.0, 1e300]]),
    ],
    ids=["huge selection rate", "huge noise", "huge covariance"],
)
def test_an_overflowing_interval_is_flagged_unbounded_and_json_has_no_nan(
    tmp_path: Path, change: Any
) -> None:
    models = ModelSet.load(_write(tmp_path, change))
    (prediction,) = predict(models.models, {"x": 1e6})
    assert math.isfinite(prediction.value)
    assert prediction.lower <= prediction.value
    assert math.isinf(prediction.upper)
    assert "unbounded-interval" in [w.code for w in prediction.warnings]
    document = json.loads(dumps(prediction.to_dict()))
    assert document["upper"] is None
    assert any(w["code"] == "unbounded-interval" for w in document["warnings"])


def test_an_ordinary_interval_has_no_unbounded_warning(tmp_path: Path) -> None:
    models = ModelSet.load(_write(tmp_path, lambda u: None))
    (prediction,) = predict(models.models, {"x": 1e6})
    assert prediction.lower < prediction.value < prediction.upper < math.inf
    assert "unbounded-interval" not in [w.code for w in prediction.warnings]
