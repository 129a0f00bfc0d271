"""Results do not move: the models of real files equal the committed golden models.

The golden files in ``tests/data/golden`` were written by ``perfcast model FILE --format json``
with the code before the layer refactor (commit 0840b52) from the real files copied into
``tests/data``; ``tests/data/SOURCES.md`` says where each came from and how to regenerate the
golden files. Only the ``models`` list is compared, entry by entry in order,
so top-level keys added to the model document (modeler, settings, format version) do not matter.
Each model's ``warnings`` (the quality gates) and ``uncertainty`` (what its prediction interval
needs), both added after the golden files and optional in the format, are left out of the
comparison: they describe the model, they are not part of it.

Structure, kernels, exponents and types must match exactly; floating-point numbers to a relative
:data:`RELATIVE_TOLERANCE`. Bit-for-bit equality held on one machine but not across them: the
linear algebra under numpy (OpenBLAS picks its kernels by processor, and releases change them)
rounds differently, and an ill-conditioned fit (two nearly collinear terms) passes that rounding
on to its ninth significant digit. A change of the method moves results far more than that.
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

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden"
#: Keys of a model that came after the golden files and are not compared.
UNCOMPARED_KEYS = ("warnings", "uncertainty")
#: Relative difference allowed between a golden and a new floating-point number (see above);
#: numbers within :data:`ABSOLUTE_TOLERANCE` of each other (near zero) are equal too.
RELATIVE_TOLERANCE = 1e-6
ABSOLUTE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class GoldenCase:
    """One ``perfcast model`` run: its input (relative to the repository), modeler and extra
    options."""

    name: str
    modeler: str
    source: str
    options: tuple[str, ...] = ()

    @property
    def golden(self) -> Path:
        return GOLDEN / f"{self.name}.{self.modeler}.json"


CASES = [
    GoldenCase("one_parameter_6", "pmnf", "tests/data/extrap/text/one_parameter_6.txt"),
    GoldenCase(
        "strong_scaling_one_parameter_1",
        "pmnf",
        "tests/data/extrap/text/strong_scaling/one_parameter_1.txt",
    ),
    GoldenCase("two_parameter_1", "pmnf", "tests/data/extrap/text/two_parameter_1.txt"),
    GoldenCase("two_parameter_1", "sparse", "tests/data/extrap/text/two_parameter_1.txt"),
    GoldenCase("three_parameter_1", "pmnf", "tests/data/extrap/text/three_parameter_1.txt"),
    GoldenCase("three_parameter_1", "sparse", "tests/data/extrap/text/three_parameter_1.txt"),
    GoldenCase("json_input_1", "pmnf", "tests/data/extrap/json/input_1.JSON"),
    GoldenCase("cubeset_single_parameter", "pmnf", "tests/data/extrap/cubeset/single_parameter"),
    GoldenCase(
        "mpi_scaling_cali", "pmnf", "tests/data/caliper/mpi_scaling_cali", ("--metric", "all")
    ),
]


def differences(golden: Any, actual: Any, where: str = "") -> Iterator[str]:
    """Every place where ``actual`` differs from ``golden``: keys, lengths, types or values.

    Numbers are equal only when they have the same type; integers compare ``==``, floats within
    :data:`RELATIVE_TOLERANCE` (or :data:`ABSOLUTE_TOLERANCE` near zero); NaN equals NaN.
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
    elif isinstance(golden, float):
        if not math.isclose(golden, actual, rel_tol=RELATIVE_TOLERANCE, abs_tol=ABSOLUTE_TOLERANCE):
            yield f"{where}: {golden!r} became {actual!r}"
    elif golden != actual:
        yield f"{where}: {golden!r} became {actual!r}"


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case.name}.{case.modeler}")
def test_models_equal_the_golden_models(case, tmp_path, capsys):
    assert case.golden.is_file(), f"golden file missing: {case.golden} (see tests/data/SOURCES.md)"
    golden = json.loads(case.golden.read_text())["models"]
    out = tmp_path / "models.json"
    argv = ["model", str(ROOT / case.source), "--modeler", case.modeler, *case.options]
    status = cli.main([*argv, "--format", "json", "--out", str(out)])
    assert status == 0, capsys.readouterr().err
    actual = [
        {key: value for key, value in model.items() if key not in UNCOMPARED_KEYS}
        for model in json.loads(out.read_text())["models"]
    ]
    moved = list(differences(golden, actual, "models"))
    assert not moved, f"{len(moved)} results moved:\n" + "\n".join(moved[:40])


def test_every_golden_file_has_a_case():
    assert sorted(GOLDEN.glob("*.json")) == sorted(case.golden for case in CASES)


def test_differences_catch_a_moved_number_a_type_change_and_a_lost_field():
    golden = [{"kernel": "k", "constant": 1.5, "terms": [{"exponent": 1}], "lof_p": None}]
    assert list(differences(golden, json.loads(json.dumps(golden)))) == []
    rounded = [{**golden[0], "constant": 1.5 * (1 + RELATIVE_TOLERANCE / 2)}]
    moved = [{**golden[0], "constant": 1.5 * (1 + 2 * RELATIVE_TOLERANCE)}]
    as_float = [{**golden[0], "terms": [{"exponent": 1.0}]}]
    lost = [{key: value for key, value in golden[0].items() if key != "lof_p"}]
    assert list(differences(golden, rounded)) == []
    assert list(differences(golden, moved)) == ["[0].constant: 1.5 became 1.500003"]
    assert list(differences(golden, as_float)) == ["[0].terms[0].exponent: 1 (int) became 1.0"]
    assert list(differences(golden, lost)) == ["[0].lof_p: missing"]
    assert list(differences(golden, golden + golden)) == [": 1 entries became 2"]
    nan = [{"rss": float("nan")}]
    assert list(differences(nan, [{"rss": float("nan")}])) == []
