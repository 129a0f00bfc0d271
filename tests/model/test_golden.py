"""Results do not move: the models of real files equal, bit for bit, the committed golden models.

The golden files in ``tests/data/golden`` were written by ``perfcast model FILE --format json``
with the code before the layer refactor (commit 0840b52); ``tests/data/SOURCES.md`` says which
shared file each one models and how to regenerate them. Only the ``models`` list is compared,
so top-level keys added to the model document (modeler, settings, format version) do not matter.
Models are matched by kernel and metric, not by list position: with ``--metric all`` the code of
0840b52 listed them metric by metric, the ModelSet lists them kernel by kernel.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from perfcast import cli

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"


@dataclass(frozen=True)
class GoldenCase:
    """One ``perfcast model`` run: its input under shared/testdata, modeler and extra options."""

    name: str
    modeler: str
    source: str
    options: tuple[str, ...] = ()

    @property
    def golden(self) -> Path:
        return GOLDEN / f"{self.name}.{self.modeler}.json"


CASES = [
    GoldenCase("one_parameter_6", "pmnf", "extrap/text/one_parameter_6.txt"),
    GoldenCase(
        "strong_scaling_one_parameter_1", "pmnf", "extrap/text/strong_scaling/one_parameter_1.txt"
    ),
    GoldenCase("two_parameter_1", "pmnf", "extrap/text/two_parameter_1.txt"),
    GoldenCase("two_parameter_1", "sparse", "extrap/text/two_parameter_1.txt"),
    GoldenCase("three_parameter_1", "pmnf", "extrap/text/three_parameter_1.txt"),
    GoldenCase("three_parameter_1", "sparse", "extrap/text/three_parameter_1.txt"),
    GoldenCase("json_input_1", "pmnf", "extrap/json/input_1.JSON"),
    GoldenCase("cubeset_single_parameter", "pmnf", "extrap/cubeset/single_parameter"),
    GoldenCase("mpi_scaling_cali", "pmnf", "caliper/mpi_scaling_cali", ("--metric", "all")),
]


def by_kernel_and_metric(models: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The model entries keyed ``kernel / metric`` (each pair must occur once)."""
    keyed = {f"{model['kernel']} / {model['metric']}": model for model in models}
    assert len(keyed) == len(models), "two models of one kernel and metric"
    return keyed


def differences(golden: Any, actual: Any, where: str = "") -> Iterator[str]:
    """Every place where ``actual`` differs from ``golden``: keys, lengths, types or values.

    Numbers are equal only when they have the same type and compare ``==`` (no tolerance);
    NaN equals NaN.
    """
    if type(golden) is not type(actual):
        yield f"{where}: {golden!r} ({type(golden).__name__}) became {actual!r}"
        return
    if isinstance(golden, dict):
        for key in sorted(golden.keys() | actual.keys()):
            if key not in actual:
                yield f"{where}.{key}: missing"
            elif key not in golden:
                yield f"{where}.{key}: new field {actual[key]!r}"
            else:
                yield from differences(golden[key], actual[key], f"{where}.{key}")
    elif isinstance(golden, list):
        if len(golden) != len(actual):
            yield f"{where}: {len(golden)} entries became {len(actual)}"
        for index, (old, new) in enumerate(zip(golden, actual, strict=False)):
            yield from differences(old, new, f"{where}[{index}]")
    elif isinstance(golden, float) and math.isnan(golden):
        if not math.isnan(actual):
            yield f"{where}: nan became {actual!r}"
    elif golden != actual:
        yield f"{where}: {golden!r} became {actual!r}"


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case.name}.{case.modeler}")
def test_models_equal_the_golden_models_exactly(case, testdata, tmp_path, capsys):
    assert case.golden.is_file(), f"golden file missing: {case.golden} (see tests/data/SOURCES.md)"
    golden = by_kernel_and_metric(json.loads(case.golden.read_text())["models"])
    out = tmp_path / "models.json"
    argv = ["model", str(testdata / case.source), "--modeler", case.modeler, *case.options]
    status = cli.main([*argv, "--format", "json", "--out", str(out)])
    assert status == 0, capsys.readouterr().err
    actual = by_kernel_and_metric(json.loads(out.read_text())["models"])
    moved = list(differences(golden, actual, "models"))
    assert not moved, f"{len(moved)} results moved:\n" + "\n".join(moved[:40])


def test_every_golden_file_has_a_case():
    assert sorted(GOLDEN.glob("*.json")) == sorted(case.golden for case in CASES)


def test_differences_catch_one_ulp_a_type_change_and_a_lost_field():
    golden = [{"kernel": "k", "constant": 1.5, "terms": [{"exponent": 1}], "lof_p": None}]
    assert list(differences(golden, json.loads(json.dumps(golden)))) == []
    one_ulp = [{**golden[0], "constant": math.nextafter(1.5, 2.0)}]
    as_float = [{**golden[0], "terms": [{"exponent": 1.0}]}]
    lost = [{key: value for key, value in golden[0].items() if key != "lof_p"}]
    assert list(differences(golden, one_ulp)) == ["[0].constant: 1.5 became 1.5000000000000002"]
    assert list(differences(golden, as_float)) == ["[0].terms[0].exponent: 1 (int) became 1.0"]
    assert list(differences(golden, lost)) == ["[0].lof_p: missing"]
    assert list(differences(golden, golden + golden)) == [": 1 entries became 2"]
    nan = [{"rss": float("nan")}]
    assert list(differences(nan, [{"rss": float("nan")}])) == []
