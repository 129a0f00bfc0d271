import numpy as np
import pytest

from perfcast.analyze.optimize import configuration_grid, optimize_configuration, parse_constraint
from perfcast.core.errors import InputError
from tests.analyze.synthetic import experiment, model

GRID = {"p": [2, 4, 8, 16], "t": [1, 2, 4, 8], "opt": [1, 2, 3]}
MODELS = [
    model("work", ["p", "t", "opt"], 0.0, (100.0, {"p": (-1, 0), "t": (-1, 0)})),
    model("spawn", ["p", "t", "opt"], 0.0, (0.5, {"t": (1, 0)})),
    model("flags", ["p", "t", "opt"], 0.3, (-0.05, {"opt": (1, 0)})),
]


def truth_experiment():
    kernels = {
        "work": lambda p, t, opt: 100.0 / (p * t),
        "spawn": lambda p, t, opt: 0.5 * t,
        "flags": lambda p, t, opt: 0.3 - 0.05 * opt,
    }
    return experiment(kernels, GRID, repetitions=2, roles={"t": "threads", "opt": "configuration"})


def test_time_optimum_and_importance():
    result = optimize_configuration(truth_experiment(), MODELS, ["t", "opt"], fix={"p": 16})
    # 100/(16 t) + 0.5 t is smallest at t = sqrt(12.5) = 3.5: t = 4 beats 3 on the whole-number grid
    assert result.configuration == {"t": 4.0, "opt": 3.0}
    assert result.value == pytest.approx(100 / 64 + 2.0 + 0.3 - 0.15)
    assert result.evaluated == 8 * 3 and result.feasible == 24
    importance = {i.parameter: i for i in result.importance}
    assert result.importance[0].parameter == "t"
    assert importance["opt"].range == pytest.approx(0.1)
    # t alone over 1..8 at p = 16: 6.25/t + 0.5 t runs from 6.75 (t = 1) down to 3.5625 (t = 4)
    assert importance["t"].range == pytest.approx(6.75 - 3.5625)
    assert (importance["t"].best, importance["t"].worst) == (4.0, 1.0)
    assert importance["t"].variance_share > 0.9 > importance["opt"].variance_share


def test_constraints_restrict_the_search():
    constraint = parse_constraint("p*t <= 48", ["p", "t", "opt"])
    result = optimize_configuration(
        truth_experiment(), MODELS, ["t", "opt"], fix={"p": 16}, constraints=[constraint]
    )
    assert result.configuration["t"] == 3.0
    assert result.feasible == 3 * 3
    listed = parse_constraint("opt in (1, 2) and t >= 2", ["p", "t", "opt"])
    result = optimize_configuration(
        truth_experiment(), MODELS, ["t", "opt"], fix={"p": 16}, constraints=[listed]
    )
    assert result.configuration == {"t": 4.0, "opt": 2.0}


def test_divergence_objective_prefers_the_configuration_that_scales():
    kernels = {
        "compute": lambda p, ppn: 100.0 / (p * ppn),
        "comm": lambda p, ppn: 0.001 * ppn * p,
    }
    exp = experiment(kernels, {"p": [2, 4, 8, 16, 32, 64], "ppn": [1, 2, 4, 8]}, repetitions=1)
    models = [
        model("compute", ["p", "ppn"], 0.0, (100.0, {"p": (-1, 0), "ppn": (-1, 0)})),
        model("comm", ["p", "ppn"], 0.0, (0.001, {"p": (1, 0), "ppn": (1, 0)})),
    ]
    fastest = optimize_configuration(exp, models, ["ppn"], "time", scale="p")
    scaling = optimize_configuration(exp, models, ["ppn"], "divergence", scale="p")
    assert fastest.configuration == {"ppn": 5.0}  # 100/(64 ppn) + 0.064 ppn is least at ppn = 4.9
    assert scaling.configuration == {"ppn": 1.0}
    assert scaling.paper_divergence is not None


def test_configuration_grid():
    assert configuration_grid([1, 4, 8]).tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert len(configuration_grid([1, 1024])) == 16
    assert configuration_grid([0.5, 1.0]).tolist() == pytest.approx(np.linspace(0.5, 1.0, 16))


def test_bad_requests_are_input_errors():
    exp = truth_experiment()
    with pytest.raises(InputError, match="not a parameter"):
        parse_constraint("q < 3", ["p", "t"])
    with pytest.raises(InputError, match="condition"):
        parse_constraint("p * t", ["p", "t"])
    with pytest.raises(InputError, match="only numbers"):
        parse_constraint("p.real == 1", ["p"])
    with pytest.raises(InputError, match="no configuration satisfies"):
        optimize_configuration(
            exp, MODELS, ["t"], constraints=[parse_constraint("t > 100", ["p", "t", "opt"])]
        )
    with pytest.raises(InputError, match="no configuration parameters") as caught:
        optimize_configuration(exp, MODELS, [])
    assert caught.value.reason == "no-configuration-parameters"


def test_weak_divergence_grows_the_problem_size_with_the_scale():
    kernels = {
        "compute": lambda p, n, ppn: 1e-3 * n / p + 0 * ppn,
        "comm": lambda p, n, ppn: 1e-3 * ppn * p + 0 * n,
    }
    grid = {"p": [2, 4, 8, 16, 32, 64], "n": [2000, 64000], "ppn": [1, 2]}
    exp = experiment(kernels, grid, repetitions=1)
    models = [
        model("compute", ["p", "n", "ppn"], 0.0, (1e-3, {"p": (-1, 0), "n": (1, 0)})),
        model("comm", ["p", "n", "ppn"], 0.0, (1e-3, {"p": (1, 0), "ppn": (1, 0)})),
    ]
    result = optimize_configuration(
        exp,
        models,
        ["ppn"],
        "divergence",
        fix={"p": 64, "n": 64000},
        scale="p",
        mode="weak",
        size="n",
    )
    assert result.configuration == {"ppn": 1.0}
    # along the path n = 1000 p, so compute stays at 1.0 and beta(2, n2) = 1 - T(2) / T(n2)
    n2 = np.array([4, 8, 16, 32, 64])
    expected = np.mean(1 - (1.0 + 0.002) / (1.0 + 0.001 * n2))
    assert result.value == pytest.approx(expected)
