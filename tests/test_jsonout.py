import json
from fractions import Fraction

import numpy as np

from perfcast.analyze.diagnosis import diagnose
from perfcast.core.jsonout import dumps, plain
from tests.analyze.test_bugs import MODELS, buggy_experiment


def _reject(constant):
    raise AssertionError(f"non-standard JSON constant {constant}")


def test_plain_values():
    data = {
        "a": np.float64(np.inf),
        "b": [np.int64(3), Fraction(1, 2)],
        "c": np.array([1.5, np.nan]),
    }
    assert plain(data) == {"a": None, "b": [3, 0.5], "c": [1.5, None]}
    assert plain({"flag": np.bool_(True)}) == {"flag": True}


def test_diagnosis_json_is_strict_and_complete():
    result = diagnose(buggy_experiment(), MODELS, at={"p": 4096})
    data = json.loads(dumps(result.to_dict()), parse_constant=_reject)
    assert set(data) >= {
        "ranking",
        "scalability_bugs",
        "crossovers",
        "scaling_error",
        "hotspot_shift",
    }
    errors = data["scaling_error"]["measured"][0]["errors"]
    assert len(errors) == 6 * 5 // 2  # every pair of the 6 measured scales
    assert data["scalability_bugs"][0]["kernel"] == "main->gather_on_root"


def test_the_api_writes_every_commands_json_strictly():
    from perfcast.api import json_text

    assert json.loads(json_text({"a": float("nan"), "b": [float("inf"), 1.5]})) == {
        "a": None,
        "b": [None, 1.5],
    }
