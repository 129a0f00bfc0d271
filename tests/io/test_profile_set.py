"""Joining runs into an experiment: parameter detection, constants, repetitions."""

from __future__ import annotations

import pandas as pd
import pytest

from perfcast.core.errors import InputError
from perfcast.io.profile_set import Run, build_experiment, detect_parameter_keys


def run(name: str, value: float = 1.0, **metadata) -> Run:
    rows = pd.DataFrame({"kernel": ["main"], "metric": ["time"], "value": [value]})
    return Run(f"/runs/{name}.cali", rows, metadata)


def test_detection_prefers_conventional_keys_and_skips_dependent_ones():
    runs = [
        run("a", **{"zeta": 5, "jobsize": 8, "mpi.world.size": 8, "problem_size": 10,
                    "launchdate": 100, "iterations": "40", "label": "x"}),
        run("b", **{"zeta": 6, "jobsize": 8, "mpi.world.size": 8, "problem_size": 20,
                    "launchdate": 200, "iterations": "40", "label": "y"}),
        run("c", **{"zeta": 7, "jobsize": 16, "mpi.world.size": 16, "problem_size": 10,
                    "launchdate": 300, "iterations": "40", "label": "z"}),
        run("d", **{"zeta": 9, "jobsize": 16, "mpi.world.size": 16, "problem_size": 20,
                    "launchdate": 400, "iterations": "40", "label": "w"}),
    ]  # fmt: skip
    keys, dependent = detect_parameter_keys(runs, "/runs")
    # mpi.world.size and problem_size together determine every run, so zeta follows from them.
    assert keys == {"mpi.world.size": "p", "problem_size": "n"}
    assert dependent == {"jobsize": ["mpi.world.size"], "zeta": ["mpi.world.size", "problem_size"]}
    experiment = build_experiment(runs, {}, where="/runs")
    assert [(p.name, p.role) for p in experiment.parameters] == [
        ("p", "processes"),
        ("n", "problem_size"),
    ]
    assert experiment.metadata["profile_metadata"]["iterations"] == "40"


def test_repetitions_are_numbered_per_point_in_run_order():
    runs = [run(n, v, p=p) for n, v, p in (("a", 1, 2), ("b", 2, 4), ("c", 3, 2), ("d", 4, 2))]
    experiment = build_experiment(runs, {}, where="/runs", keys={"p": "p"})
    table = experiment.frame.sort_values(["p", "repetition"])
    assert table[["p", "repetition", "value"]].values.tolist() == [
        [2, 0, 1], [2, 1, 3], [2, 2, 4], [4, 0, 2]
    ]  # fmt: skip


def test_a_repetition_given_for_some_runs_only_is_rejected():
    runs = [Run("/s/a.x1.r1/f", run("a").rows, {}, "/s/a.x1.r1"), Run("/s/a.x2/f", run("b").rows,
                                                                        {}, "/s/a.x2")]  # fmt: skip
    with pytest.raises(InputError, match="this profile has no repetition number") as error:
        build_experiment(runs, {}, where="/s", default="names")
    assert error.value.source == "/s/a.x2/f"


def test_fractional_repetition_and_no_profiles():
    with pytest.raises(InputError, match="repetition 1.5 is not a whole number"):
        build_experiment([run("a", p=1, r="1.5")], {}, where="/r", keys={"p": "p", "r": "rep"})
    with pytest.raises(InputError, match="no profiles found") as error:
        build_experiment([], {}, where="/empty")
    assert error.value.source == "/empty"
