"""``perfcast model`` on numeric edge cases: exit 0 with valid JSON and finite coefficients, or
exit 2 with one line naming the file and line; stderr holds only perfcast's own lines.

numpy and scipy warnings are handled where they arise, so none may reach the user: each case
runs with every warning recorded and fails on any RuntimeWarning.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from perfcast import cli

POINTS = "PARAMETER p\nPOINTS 1 2 4 8 16\n"


def _block(kernel: str, rows: list[str]) -> str:
    return f"REGION {kernel}\nMETRIC time\n" + "".join(f"DATA {row}\n" for row in rows)


def _scaled(factor: str) -> list[str]:
    return [f"{v}{factor} {v * 1.01:.4g}{factor}" for v in (1, 2, 4, 8, 16)]


MODELED = {
    "huge-values": POINTS + _block("a", _scaled("e300")) + _block("b", ["1e308"] * 5),
    "tiny-values": POINTS + _block("a", _scaled("e-300")),
    "zeros-in-a-counter": POINTS + _block("a", ["0 0", "2 2", "4 4", "6 6", "8 8"]),
    "all-zero-metric": POINTS + _block("a", ["0 0"] * 5) + _block("b", ["0"] * 5),
    "single-kernel": POINTS + _block("a", ["1", "2", "4", "8", "16"]),
}

REJECTED = {
    "one-point-with-repetitions": ("PARAMETER p\nPOINTS 4\nREGION a\nDATA 1 2 3\n", None),
    "nan-value": (POINTS + _block("a", ["1", "2", "nan", "8", "16"]), 7),
    "empty-value": (POINTS + _block("a", ["1", "", "4", "8", "16"]), 6),
    "overflow": (POINTS + _block("a", ["1", "2", "1e400", "8", "16"]), 7),
    "underflow": (POINTS + _block("a", ["1", "2", "1e-400", "8", "16"]), 7),
    "underscore": (POINTS + _block("a", ["1", "8_1", "4", "8", "16"]), 6),
    "full-width-digits": (POINTS + _block("a", ["1", "２", "4", "8", "16"]), 6),
}


def _no_constants(name: str) -> float:
    raise ValueError(f"JSON output holds {name}")


def _model(tmp_path: Path, capsys, text: str) -> tuple[int, str, str]:
    source = tmp_path / "data.txt"
    source.write_text(text, encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = cli.main(["model", str(source), "--format", "json"])
    assert [w for w in caught if issubclass(w.category, RuntimeWarning)] == []
    out, err = capsys.readouterr()
    assert "Warning" not in err and "Traceback" not in err
    return status, out, err


@pytest.mark.parametrize("case", sorted(MODELED))
def test_edge_data_gives_finite_models_in_valid_json(tmp_path, capsys, case):
    status, out, err = _model(tmp_path, capsys, MODELED[case])
    assert status == 0, err
    document = json.loads(out, parse_constant=_no_constants)
    assert document["models"]
    for model in document["models"]:
        numbers = [model["constant"], *(t["coefficient"] for t in model["terms"])]
        assert all(isinstance(n, int | float) and math.isfinite(n) for n in numbers), model
    for line in err.splitlines():  # only perfcast's own notes
        assert "beyond the range of a double-precision number" in line


def test_all_zero_metric_is_the_exact_constant_0(tmp_path, capsys):
    _, out, _ = _model(tmp_path, capsys, MODELED["all-zero-metric"])
    models = json.loads(out)["models"]
    assert [(m["constant"], m["terms"]) for m in models] == [(0.0, [])] * 2


def test_exact_counts_keep_no_residue(tmp_path, capsys):
    _, out, _ = _model(tmp_path, capsys, MODELED["zeros-in-a-counter"])
    (model,) = json.loads(out)["models"]
    assert model["constant"] == 0.0
    assert [t["coefficient"] for t in model["terms"]] == [2.0]


def test_huge_values_keep_their_scale(tmp_path, capsys):
    _, out, _ = _model(tmp_path, capsys, MODELED["huge-values"])
    by_kernel = {m["kernel"]: m for m in json.loads(out)["models"]}
    (term,) = by_kernel["a"]["terms"]
    assert term["coefficient"] == pytest.approx(1.005e300, rel=0.01)
    assert by_kernel["b"]["constant"] == 1e308
    assert by_kernel["a"]["quality"]["rss"] is None  # beyond a double, written as null


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_bad_numbers_exit_2_naming_file_and_line(tmp_path, capsys, case):
    text, line = REJECTED[case]
    status, out, err = _model(tmp_path, capsys, text)
    assert status == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    where = f"{tmp_path / 'data.txt'}" + ("" if line is None else f":{line}:")
    assert err.startswith(f"perfcast: error: {where}")


def test_stderr_of_a_real_process_holds_no_warning(tmp_path):
    source = tmp_path / "data.txt"
    source.write_text(MODELED["huge-values"] + _block("z", ["0"] * 5), encoding="utf-8")
    code = "import sys; from perfcast.cli import main; sys.exit(main(sys.argv[1:]))"
    result = subprocess.run(
        [sys.executable, "-c", code, "model", str(source), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    json.loads(result.stdout, parse_constant=_no_constants)
    assert "Warning" not in result.stderr
    assert all("double-precision" in line for line in result.stderr.splitlines())
