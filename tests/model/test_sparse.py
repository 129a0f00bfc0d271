import numpy as np
import pytest

from perfcast.model import fit
from perfcast.model.sparse import SparseModeler
from tests.conftest import synthetic_experiment

GRID3 = {"x": [2, 4, 8, 16, 32], "y": [2, 4, 8, 16, 32], "z": [2, 4, 8, 16, 32]}


def test_three_way_interaction_recovered():
    experiment = synthetic_experiment({"k": lambda x, y, z: 3.0 + 0.01 * x * y * z}, GRID3)
    (model,) = fit(experiment, modeler="sparse")
    assert len(model.terms) == 1
    assert {f.parameter: f.order for f in model.terms[0].factors} == {
        "x": (1, 0), "y": (1, 0), "z": (1, 0)
    }  # fmt: skip
    assert model.constant == pytest.approx(3.0, rel=1e-6)


def test_interaction_plus_single_terms_with_noise():
    experiment = synthetic_experiment(
        {"k": lambda x, y, z: 1.0 + 0.5 * x * y + 0.2 * z**2},
        GRID3,
        noise=0.01,
        seed=7,
    )
    (model,) = fit(experiment, modeler="sparse")
    assert model.lead_order("x") == (1, 0)
    assert model.lead_order("y") == (1, 0)
    assert model.lead_order("z") == (2, 0)
    truth = 1.0 + 0.5 * 64 * 64 + 0.2 * 64**2
    assert model.evaluate({"x": [64.0], "y": [64.0], "z": [64.0]})[0] == pytest.approx(
        truth, rel=0.05
    )


def test_estimator_contract():
    modeler = SparseModeler(max_terms=2)
    experiment = synthetic_experiment({"k": lambda n: 1.0 + n**2}, {"n": [2, 4, 8, 16, 32]})
    assert modeler.fit(experiment) is modeler
    assert len(modeler.models_) == 1
    assert modeler.predictors_ >= 42
    np.testing.assert_allclose(modeler.predict(np.array([[64.0]]))[0], [1.0 + 64.0**2], rtol=1e-6)
